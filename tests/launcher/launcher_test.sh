#!/bin/sh
# launcher_test.sh CASE — one launcher test case, run by CTest with real processes.
# Environment: MPIEXEC (the launcher), PROG (launcher_rank, an MPI program), CONFIG_VARS (path of
# src/core/config_vars.def). Exit 0 = pass; any failure prints what was expected and what came.
set -u
case_name=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mf-launcher.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
err=$tmp/err

fail() {
    echo "FAIL [$case_name]: $*" >&2
    echo "--- stdout (head) ---" >&2; head -n 20 "$out" >&2 2>/dev/null
    echo "--- stderr (head) ---" >&2; head -n 20 "$err" >&2 2>/dev/null
    exit 1
}

# run ARGS...: runs mpiexec, records status in $rc and wall seconds in $secs.
run() {
    start=$(date +%s)
    "$MPIEXEC" "$@" >"$out" 2>"$err" </dev/null
    rc=$?
    secs=$(( $(date +%s) - start ))
}

expect_rc() { [ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"; }
expect_err() { grep -q -e "$1" "$err" || fail "stderr lacks '$1'"; }
expect_out() { grep -q -e "$1" "$out" || fail "stdout lacks '$1'"; }
expect_fast() { [ "$secs" -le "$1" ] || fail "took ${secs}s, expected at most $1s"; }
# Exactly one verdict line from mpiexec.
expect_one_verdict() {
    n=$(grep -c '^mpiexec: ' "$err")
    [ "$n" -eq 1 ] || fail "expected one 'mpiexec:' line on stderr, got $n"
}

case $case_name in
hello)
    run -n 4 "$PROG" hello
    expect_rc 0
    for r in 0 1 2 3; do
        [ "$(grep -c "^hello $r of 4 on " "$out")" -eq 1 ] || fail "rank $r did not say hello once"
    done
    expect_out '^job ok$'
    [ ! -s "$err" ] || fail "unexpected stderr"
    # Addresses exchanged through our PMI server: shm with 4 ranks, tcp with 2 (a 3+ rank tcp
    # ring hung in the fabric when this was written, under Hydra too; p2p tests own that).
    run --timeout 20 -n 4 "$PROG" ring
    expect_rc 0
    expect_out '^ring ok 4$'
    MANIFOLD_SHM=0 run --timeout 20 -n 2 "$PROG" ring
    expect_rc 0
    expect_out '^ring ok 2$'
    # mpirun is the same program
    "$(dirname "$MPIEXEC")/mpirun" -np 2 "$PROG" hello >"$out" 2>"$err" || fail "mpirun failed"
    expect_out '^hello 1 of 2 on '
    ;;
exitcode)
    run -n 3 "$PROG" exit 2 3
    expect_rc 3
    expect_err '^mpiexec: rank 2 (host .*, pid [0-9]*) exited with code 3$'
    expect_one_verdict
    expect_fast 10
    ;;
segv)
    # In a sanitizer build, ASan would catch the signal and exit 1: let it through.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" run -n 3 "$PROG" signal 1 11
    expect_rc 139
    expect_err '^mpiexec: rank 1 (host .*, pid [0-9]*) killed by signal 11 (Segmentation fault)$'
    expect_one_verdict
    expect_fast 10
    # Before it died, the rank said so with its stack (core/crash.h), down to the program.
    expect_err '^manifold\[1\]: pid [0-9]* got SIGSEGV (signal 11); stack of the thread that got it:$'
    expect_err 'launcher_rank(.*)\[0x[0-9a-f]*\]$'
    ;;
backtrace)
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_abort=0"
    # A real fault names its address; the verdict is the signal's, as without the handler.
    run -n 2 "$PROG" fault 0
    expect_rc 139
    expect_err '^manifold\[0\]: pid [0-9]* got SIGSEGV (signal 11) at address 0x8; stack'
    expect_err '^mpiexec: rank 0 (host .*) killed by signal 11 (Segmentation fault)$'
    expect_one_verdict
    # An abort (glibc's heap checks, assert) is reported the same way.
    run -n 2 "$PROG" signal 1 6
    expect_rc 134
    expect_err '^manifold\[1\]: pid [0-9]* got SIGABRT (signal 6); stack'
    expect_err '^mpiexec: rank 1 (host .*) killed by signal 6 (Aborted)$'
    # MANIFOLD_BACKTRACE=0: no handler, the same verdict.
    MANIFOLD_BACKTRACE=0 run -n 2 "$PROG" fault 1
    expect_rc 139
    expect_err '^mpiexec: rank 1 (host .*) killed by signal 11 (Segmentation fault)$'
    ! grep -q 'got SIGSEGV' "$err" || fail "a stack with MANIFOLD_BACKTRACE=0"
    # The program's own handler, installed before MPI_Init, stays in charge.
    run -n 2 "$PROG" ownsegv 1
    expect_rc 7
    expect_err '^own handler$'
    ! grep -q 'got SIGSEGV' "$err" || fail "the library replaced the program's handler"
    expect_fast 20
    ;;
sigkill)
    run -n 2 "$PROG" signal 0 9
    expect_rc 137
    expect_err '^mpiexec: rank 0 (host .*) killed by signal 9 '
    expect_fast 10
    ;;
abort)
    run -n 3 "$PROG" abort 1 7
    expect_rc 7
    expect_err '^mpiexec: rank 1 (host .*) called MPI_Abort with exit code 7'
    expect_one_verdict
    expect_fast 10
    ;;
nofinalize)
    run -n 3 "$PROG" nofinalize 2
    expect_rc 1
    expect_err '^mpiexec: rank 2 .* exited with code 0 after MPI_Init but without MPI_Finalize$'
    expect_fast 10
    ;;
timeout)
    run --timeout 1 -n 2 "$PROG" pids
    expect_rc 124
    expect_err '^mpiexec: job timed out after 1 seconds'
    expect_one_verdict
    expect_fast 6
    MPIEXEC_TIMEOUT=1 run -n 2 "$PROG" pids
    expect_rc 124
    expect_err 'timed out after 1 seconds'
    ;;
stacks)
    # --get-stack-traces: before the timeout's kill, each rank's threads, with the MPI call it
    # hangs in; then the verdict, last.
    stacks_expect() {
        expect_rc 124
        expect_err '^mpiexec: job timed out after 2 seconds; the stacks of its '"$1"' processes follow'
        for r in $(seq 0 $(($1 - 1))); do
            expect_err "^mpiexec: rank $r (host [^,]*, pid [0-9]*), stack of each thread:\$"
        done
        expect_err '^  #[0-9][0-9]* .* in PMPI_Barrier '
        expect_err '^  #[0-9][0-9]* .* in PMPI_Recv '
        [ "$(grep '^mpiexec: ' "$err" | tail -n 1)" = \
            "mpiexec: job timed out after 2 seconds (--timeout / MPIEXEC_TIMEOUT); killing its $1 processes" ] ||
            fail "the verdict is not mpiexec's last line"
        ! grep -q '^  \[\|^  warning:' "$err" || fail "gdb's chatter was passed on"
    }
    run --timeout 2 --get-stack-traces -n 3 "$PROG" stuck
    stacks_expect 3
    # The progress thread is a second thread in every rank.
    MANIFOLD_ASYNC_PROGRESS=1 run --timeout 2 --get-stack-traces -n 2 "$PROG" stuck
    stacks_expect 2
    [ "$(grep -c '^  Thread 2 ' "$err")" -eq 2 ] || fail "expected a second thread in each rank"
    # Ranks on other hosts: each proxy reads its own ranks' stacks (they follow the verdict).
    run --host localhost,127.0.0.1 --timeout 2 --get-stack-traces "$PROG" stuck
    expect_rc 124
    expect_err '^mpiexec: rank 1 (host 127.0.0.1, pid [0-9]*), stack of each thread:$'
    expect_err '^  #[0-9][0-9]* .* in PMPI_Recv '
    expect_err '^  #[0-9][0-9]* .* in PMPI_Barrier '
    # Without gdb: one line says so, and the job still ends as a timeout.
    mkdir "$tmp/nogdb"
    PATH="$tmp/nogdb" run --timeout 2 --get-stack-traces -n 2 "$PROG" stuck
    expect_rc 124
    expect_err '^mpiexec: --get-stack-traces: gdb is not in PATH; no stacks'
    # Without the option, a timeout prints no stack.
    run --timeout 2 -n 2 "$PROG" stuck
    expect_rc 124
    ! grep -q 'stack of each thread' "$err" || fail "stacks without --get-stack-traces"
    ;;
tagged)
    n=10000
    run -l -n 4 "$PROG" lines $n
    expect_rc 0
    # Every stdout line whole, tagged with its own rank, each (rank, i) exactly once; the last
    # line of each rank had no newline and must still be there.
    awk -v n=$n '
        { if ($0 !~ /^\[[0-9]+\] rank [0-9]+ line [0-9]+ of [0-9]+ x+$/) { print "bad line: " $0; bad = 1; exit 1 }
          tag = substr($1, 2, length($1) - 2)
          if (tag != $3) { print "tag " tag " on a line of rank " $3; bad = 1; exit 1 }
          if (seen[$3 " " $5]++) { print "duplicate: " $0; bad = 1; exit 1 }
          if ($5 != next_i[$3] + 0) { print "out of order: " $0; bad = 1; exit 1 }
          next_i[$3] = $5 + 1 }
        END { if (bad) exit 1
              for (r = 0; r < 4; r++) if (next_i[r] != n) { print "rank " r " has " next_i[r] " lines"; exit 1 } }
    ' "$out" >"$tmp/why" || fail "tagged stdout broken: $(cat "$tmp/why")"
    lines=$(grep -c -E '^\[[0-3]\] rank [0-3] err [0-9]+$' "$err")
    [ "$lines" -eq $((4 * n / 10)) ] || fail "stderr has $lines whole tagged lines, want $((4 * n / 10))"
    [ "$(wc -l <"$err")" -eq $((4 * n / 10)) ] || fail "stderr has stray lines"
    ;;
untagged)
    n=20000
    run -n 4 "$PROG" lines $n
    expect_rc 0
    # Untagged: a rank's last (newline-less) line may be followed directly by another rank's line;
    # apart from that, every line is whole.
    awk -v n=$n '
        { line = $0
          while (match(line, /^rank [0-9]+ line [0-9]+ of [0-9]+ x+rank /)) {
              part = substr(line, 1, RLENGTH - 5); split(part, f, " ")
              if (f[4] != n - 1) { print "cut line: " $0; exit 1 }
              cnt[f[2]]++; line = substr(line, RLENGTH - 4) }
          if (line !~ /^rank [0-9]+ line [0-9]+ of [0-9]+ x+$/) { print "bad line: " $0; exit 1 }
          split(line, f, " "); cnt[f[2]]++ }
        END { for (r = 0; r < 4; r++) if (cnt[r] != n) { print "rank " r ": " cnt[r] " lines"; exit 1 } }
    ' "$out" >"$tmp/why" || fail "untagged stdout broken: $(cat "$tmp/why")"
    ;;
stdin)
    head -c 300000 /dev/urandom >"$tmp/in"
    "$PROG" stdin <"$tmp/in" >"$tmp/expect" 2>"$err" || fail "singleton run failed"
    grep -q '^stdin bytes 300000 ' "$tmp/expect" || fail "singleton read $(cat "$tmp/expect")"
    "$MPIEXEC" -n 3 "$PROG" stdin <"$tmp/in" >"$out" 2>"$err"
    rc=$?
    expect_rc 0
    grep -qxF "$(cat "$tmp/expect")" "$out" || fail "rank 0 did not get the same stdin"
    expect_out '^rank 1 stdin eof$'
    expect_out '^rank 2 stdin eof$'
    ;;
env)
    cores=$(nproc)
    over=$((cores + 1))
    FOO_PLAIN=plain FOO_FWD=fwd PMI_PORT=stale:1 "$MPIEXEC" -n $over -x FOO_X=ex -genv FOO_G "g v" -x FOO_FWD \
        "$PROG" env FOO_PLAIN FOO_FWD FOO_X FOO_G PMI_PORT MANIFOLD_LOCAL_RANK MANIFOLD_LOCAL_SIZE \
        MANIFOLD_JOB_SECRET MANIFOLD_OVERSUBSCRIBED >"$out" 2>"$err"
    rc=$?
    expect_rc 0
    for r in 0 $((over - 1)); do
        expect_out "^$r FOO_PLAIN=plain$"
        expect_out "^$r FOO_FWD=fwd$"
        expect_out "^$r FOO_X=ex$"
        expect_out "^$r FOO_G=g v$"
        expect_out "^$r PMI_PORT=(unset)$"
        expect_out "^$r MANIFOLD_LOCAL_RANK=$r$"
        expect_out "^$r MANIFOLD_LOCAL_SIZE=$over$"
        expect_out "^$r MANIFOLD_OVERSUBSCRIBED=1$"
        expect_out "^$r MANIFOLD_JOB_SECRET=[0-9a-f]\{64\}$"
    done
    [ "$(grep MANIFOLD_JOB_SECRET "$out" | cut -d= -f2 | sort -u | wc -l)" -eq 1 ] ||
        fail "ranks got different job secrets"
    first=$(grep '^0 MANIFOLD_JOB_SECRET' "$out")
    run -n 1 "$PROG" env MANIFOLD_JOB_SECRET MANIFOLD_OVERSUBSCRIBED
    grep -qxF "$first" "$out" && fail "two jobs got the same secret"
    expect_out '^0 MANIFOLD_OVERSUBSCRIBED=(unset)$'
    run -n 1 -x MF_SURELY_UNSET_VAR "$PROG" env
    expect_rc 2
    expect_err 'MF_SURELY_UNSET_VAR'
    ;;
impostor)
    # A stranger against a live two-host job's proxy listener (impostor.py): garbage, a replay of
    # a recorded genuine handshake, proofs without the secret, an idle connection, a flood, and
    # a real proxy with a wrong secret. The job must finish with the right output; the stranger
    # must get nothing but fresh challenges.
    head -c 100000 /dev/urandom >"$tmp/in"
    "$PROG" stdin <"$tmp/in" >"$tmp/expect" 2>/dev/null
    mkfifo "$tmp/fifo"
    "$MPIEXEC" --timeout 60 --host a:2,b:2 --launcher "python3 $IMPOSTOR relay $tmp {host}" \
        "$PROG" stdin <"$tmp/fifo" >"$out" 2>"$err" &
    mpid=$!
    exec 3>"$tmp/fifo" # rank 0 reads until this closes: the job lives through the attack
    for t in $(seq 200); do [ "$(grep -c 'stdin eof$' "$out")" = 3 ] && break; sleep 0.05; done
    [ "$(grep -c 'stdin eof$' "$out")" = 3 ] || fail "ranks did not start"
    python3 "$IMPOSTOR" attack "$tmp" >"$tmp/attack" 2>&1 || {
        exec 3>&-; wait $mpid; fail "impostor: $(cat "$tmp/attack")"; }
    cat "$tmp/attack"
    read -r ip port <"$tmp/addr"
    printf '%064d\n' 7 | "$MPIEXEC" --proxy "$ip" "$port" 1 b >/dev/null 2>"$tmp/wrong"
    [ $? -ne 0 ] || fail "a proxy with a wrong secret was accepted"
    grep -q 'closed the connection' "$tmp/wrong" || fail "wrong secret: $(cat "$tmp/wrong")"
    cat "$tmp/in" >&3
    exec 3>&-
    wait $mpid
    rc=$?
    expect_rc 0
    grep -qxF "$(cat "$tmp/expect")" "$out" || fail "rank 0 did not get its stdin"
    [ "$(grep -c 'stdin eof$' "$out")" = 3 ] || fail "ranks 1-3 missing"
    expect_err '^mpiexec: warning: refused a connection from '
    # rate-limited: a handful of reports for well over 100 refused connections
    [ "$(grep -c 'refused a connection' "$err")" -le 4 ] || fail "refusals not rate-limited"
    ;;
flood)
    # Out of descriptors (a low ulimit), a flood of connections to the proxy listener must not
    # make mpiexec spin on accept (it pauses the listener), and the job must finish normally.
    mkfifo "$tmp/fifo"
    (ulimit -n 24 && exec "$MPIEXEC" --timeout 60 --host a,b \
        --launcher "python3 $IMPOSTOR relay $tmp {host}" "$PROG" stdin <"$tmp/fifo" >"$out" 2>"$err") &
    mpid=$!
    exec 3>"$tmp/fifo"
    for t in $(seq 200); do [ "$(grep -c 'stdin eof$' "$out")" = 1 ] && break; sleep 0.05; done
    [ "$(grep -c 'stdin eof$' "$out")" = 1 ] || { exec 3>&-; wait $mpid; fail "ranks did not start"; }
    python3 "$IMPOSTOR" flood "$tmp" $mpid 100 3 >"$tmp/flood" 2>&1 ||
        { exec 3>&-; wait $mpid; fail "$(cat "$tmp/flood")"; }
    cat "$tmp/flood"
    echo hello >&3
    exec 3>&-
    wait $mpid
    rc=$?
    expect_rc 0
    expect_out '^stdin bytes 6 '
    expect_err '^mpiexec: warning: cannot accept a connection: Too many open files'
    [ "$(grep -c 'cannot accept' "$err")" -le 2 ] || fail "accept failures not rate-limited"
    ;;
localhost)
    # This machine by any of its names runs without ssh: an ssh that fails and leaves a mark is
    # first in PATH. Three names of this machine are three "hosts" (three proxies).
    mkdir "$tmp/bin"
    printf '#!/bin/sh\necho "$*" >>"%s/ssh-called"\nexit 255\n' "$tmp" >"$tmp/bin/ssh"
    chmod +x "$tmp/bin/ssh"
    PATH="$tmp/bin:$PATH" run --host "localhost:2,$(hostname),127.0.0.1" "$PROG" ring
    expect_rc 0
    expect_out '^ring ok 4$'
    [ ! -e "$tmp/ssh-called" ] || fail "ssh was run: $(cat "$tmp/ssh-called")"
    # Another host still goes through ssh (the fake one fails: the host is lost).
    PATH="$tmp/bin:$PATH" run --host "localhost,surely-not-this-host" "$PROG" hello
    expect_rc 1
    expect_err '^mpiexec: lost host surely-not-this-host (its proxy could not be started'
    grep -q 'surely-not-this-host' "$tmp/ssh-called" || fail "ssh was not run for the other host"
    ;;
blame)
    # Exact blame, 50 of 50: a rank dies (signal, exit code, exit 0 without MPI_Finalize) while
    # the others wait for a message from it, so on tcp they see the connection break and abort
    # too. mpiexec must name the rank that died, with its cause, and exit with the status that
    # follows from it. 25 jobs per fabric, the two fabrics side by side.
    blame_series() { # FABRIC_SHM_VALUE LOG
        for i in $(seq 0 24); do
            r=$((i % 3))
            case $((i % 4)) in
            0) how=9; want="killed by signal 9 (Killed)"; code=137 ;;
            1) how=6; want="killed by signal 6 (Aborted)"; code=134 ;;
            2) how=-3; want="exited with code 3"; code=3 ;;
            3) how=0; want="exited with code 0 after MPI_Init but without MPI_Finalize"; code=1 ;;
            esac
            MANIFOLD_SHM=$1 "$MPIEXEC" --timeout 20 -n 3 "$PROG" peerdie $r $how \
                >"$2.out" 2>"$2.err" </dev/null
            got=$?
            verdicts=$(grep -c '^mpiexec: ' "$2.err")
            if [ $got -ne $code ] || [ "$verdicts" -ne 1 ] ||
                ! grep -q "^mpiexec: rank $r (host [^,]*, pid [0-9]*) $want\$" "$2.err"; then
                echo "MANIFOLD_SHM=$1 peerdie $r $how: exit $got (want $code), $verdicts verdicts:"
                grep '^mpiexec: ' "$2.err"
            fi
        done >"$2"
    }
    # ASan would turn the SIGABRT into its own report and exit 1: let the signal through.
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_abort=0"
    start=$(date +%s)
    blame_series 1 "$tmp/shm" &
    blame_series 0 "$tmp/tcp"
    wait
    secs=$(( $(date +%s) - start ))
    cat "$tmp/shm" "$tmp/tcp" >"$err"
    [ ! -s "$err" ] || fail "$(grep -c '^MANIFOLD_SHM' "$err") of 50 jobs blamed wrongly"
    expect_fast 40
    ;;
sigterm|sigkill-launcher)
    # Ranks must all die when mpiexec is told to stop (SIGTERM: forwarded) or is killed outright
    # (SIGKILL: the ranks' parent-death signal); nothing may be orphaned.
    # Empty the output first: the loop below must not read pids left by an earlier case before
    # the background mpiexec has truncated the file.
    : >"$out"
    "$MPIEXEC" -n 3 "$PROG" pids >"$out" 2>"$err" &
    mpid=$!
    i=0
    while [ "$(grep -c '^pid ' "$out")" -lt 3 ]; do
        i=$((i + 1)); [ $i -lt 300 ] || fail "ranks did not start"
        sleep 0.05
    done
    pids=$(awk '/^pid /{print $3}' "$out")
    if [ "$case_name" = sigterm ]; then kill -TERM $mpid; else kill -KILL $mpid; fi
    wait $mpid
    rc=$?
    if [ "$case_name" = sigterm ]; then
        expect_rc 143
        expect_err '^mpiexec: received signal 15'
    fi
    i=0
    for p in $pids; do
        while kill -0 "$p" 2>/dev/null && [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ]; do
            i=$((i + 1)); [ $i -lt 100 ] || fail "rank pid $p still alive after mpiexec ended"
            sleep 0.05
        done
    done
    ;;
descendants)
    # A rank's own children (here a background sleep holding stdout open) do not outlive the job,
    # and do not keep mpiexec waiting for end of output.
    run -n 2 sh -c 'sleep 30 & echo "bg $!"'
    expect_rc 0
    expect_fast 5
    for p in $(awk '/^bg /{print $2}' "$out"); do
        i=0
        while kill -0 "$p" 2>/dev/null && [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ]; do
            i=$((i + 1)); [ $i -lt 40 ] || fail "descendant pid $p outlived mpiexec"
            sleep 0.05
        done
    done
    [ "$(grep -c '^bg ' "$out")" -eq 2 ] || fail "expected two background pids"
    # Closed stdio does not confuse mpiexec (fds 0-2 would otherwise be reused for pipes).
    "$MPIEXEC" -n 2 "$PROG" hello <&- >"$out" 2>"$err"
    rc=$?
    expect_rc 0
    expect_out '^hello 1 of 2 '
    ;;
sessions)
    # Where the host has a usable core for each rank, every rank leads a session of its own (the
    # autogroup scheduler then weighs it like other sessions' processes); with more ranks than
    # cores they share one process group in mpiexec's session (a yielding rank must step aside
    # for its peers). Children of ranks die with the job either way (see descendants).
    cores=$(nproc)
    ids='echo "ids $(ps -o sid=,pgid= -p $$) $$"; sleep 30 & echo "bg $!"'
    run -n "$cores" sh -c "$ids"
    expect_rc 0
    [ "$(grep -c '^ids ' "$out")" -eq "$cores" ] || fail "expected $cores lines of ids"
    awk '/^ids /{ if ($2 != $4 || $3 != $4) bad = 1 } END { exit bad }' "$out" ||
        fail "with $cores ranks on $cores cores, a rank does not lead its own session"
    bg=$(awk '/^bg /{print $2}' "$out")
    run -n $((cores + 1)) sh -c "$ids"
    expect_rc 0
    [ "$(grep -c '^ids ' "$out")" -eq $((cores + 1)) ] || fail "expected $((cores + 1)) lines"
    mysid=$(ps -o sid= -p $$ | tr -d ' ')
    awk -v sid="$mysid" '/^ids /{ if ($2 != sid) bad = 1; g[$3] = 1 } END {
        n = 0; for (k in g) n++; exit bad || n != 1 }' "$out" ||
        fail "oversubscribed ranks are not one process group in mpiexec's session (sid $mysid)"
    for p in $bg $(awk '/^bg /{print $2}' "$out"); do
        i=0
        while kill -0 "$p" 2>/dev/null && [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ]; do
            i=$((i + 1)); [ $i -lt 40 ] || fail "descendant pid $p outlived mpiexec"
            sleep 0.05
        done
    done
    ;;
notfound)
    run -n 2 /nonexistent/program
    expect_rc 127
    expect_err "^mpiexec: cannot run '/nonexistent/program': No such file or directory$"
    run -n 2 "$tmp"   # a directory: found but not executable
    expect_rc 126
    expect_err "^mpiexec: cannot run '.*': Permission denied$"
    ;;
usage)
    run; expect_rc 2; expect_err 'no program'
    run -n 0 "$PROG"; expect_rc 2; expect_err "bad number of processes '0'"
    run -n; expect_rc 2
    run --timeout -5 "$PROG"; expect_rc 2; expect_err "bad timeout"
    run --bogus "$PROG"; expect_rc 2; expect_err "unknown option '--bogus'"
    MPIEXEC_TIMEOUT=abc run "$PROG"; expect_rc 2; expect_err 'MPIEXEC_TIMEOUT'
    run --oversubscribe -n 1 "$PROG" hello; expect_rc 0
    run --help; expect_rc 0; expect_out '^Usage: mpiexec'
    for opt in -n -x -genv --tag-output --timeout --oversubscribe --info --version; do
        grep -q -e " $opt" "$out" || fail "--help does not document $opt"
    done
    run --version; expect_rc 0; expect_out '^mpiexec (Manifold) [0-9]'
    run --info; expect_rc 0; expect_out '^fabrics built in: '
    for v in $(sed -n 's/^MF_CONFIG_VAR(\([A-Z_0-9]*\),.*/\1/p' "$CONFIG_VARS"); do
        grep -q "^  $v " "$out" || fail "--info does not list $v"
    done
    MANIFOLD_VERBOSE=2 run --info
    expect_out '^  MANIFOLD_VERBOSE *"2"'
    ;;
singleton)
    "$PROG" hello >"$out" 2>"$err"
    rc=$?
    expect_rc 0
    expect_out '^hello 0 of 1 on '
    expect_out '^job ok$'
    ;;
*)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
exit 0
