#!/bin/sh
# partner_death.sh PROGRAM — the two processes of a raw baseline (bench_raw.h) never outlive a
# failure of each other: with the second process killed mid-run, the first must end within 2 s
# with status 1 and say why; with the first killed, the second must be gone (dead or a zombie
# awaiting its reaper) within 2 s. Before bench_fork_pinned watched its partner, the first spun
# forever on a partner that was gone.
prog=$1
long="--iters 100000000 --reps 100 --sizes 8"

partner_of() { # the second process of lead $1 (waits up to 5 s for the fork)
    i=0
    while [ $i -lt 50 ]; do
        c=$(pgrep -P "$1" | head -n 1)
        [ -n "$c" ] && { echo "$c"; return 0; }
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
gone() { # true when pid $1 has exited (no process, or a zombie)
    [ ! -e "/proc/$1/stat" ] && return 0
    state=$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)
    [ "$state" = Z ] || [ "$state" = X ]
}
wait_gone() { # up to 2 s
    i=0
    while [ $i -lt 20 ]; do
        gone "$1" && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

err=$(mktemp)
trap 'rm -f "$err"' EXIT

# 1. The second process dies: the first ends with status 1 and a message.
"$prog" $long >/dev/null 2>"$err" &
lead=$!
child=$(partner_of $lead) || { echo "FAIL: no second process"; kill -9 $lead; exit 1; }
sleep 0.3
kill -9 "$child"
if ! wait_gone $lead; then
    echo "FAIL: the first process still runs 2 s after its partner was killed"
    kill -9 $lead
    exit 1
fi
wait $lead
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: the first process ended with status $rc, not 1"; exit 1; }
# (raw_tcp may read the partner's reset before its SIGCHLD handler runs: either names the cause)
grep -qE "second process failed|Connection reset by peer" "$err" ||
    { echo "FAIL: no message"; cat "$err"; exit 1; }

# 2. The first process dies: the second goes with it.
"$prog" $long >/dev/null 2>&1 &
lead=$!
child=$(partner_of $lead) || { echo "FAIL: no second process"; kill -9 $lead; exit 1; }
sleep 0.3
kill -9 $lead
wait $lead 2>/dev/null
if ! wait_gone "$child"; then
    echo "FAIL: the second process still runs 2 s after the first was killed"
    kill -9 "$child"
    exit 1
fi
echo "partner death ok: $prog"
