#!/bin/sh
# The multirail wrapper (src/fabric/rail) on one host: two tcp rails, tcp0 over lo and tcp1 over
# 127.0.0.0/8, carrying rail_check's traffic (every byte checked, derived datatypes, MPI order).
#   stripe-np2, stripe-np4  both rails carry a large share of the bytes (--report-fabrics), and
#                           the report names the wrapper with its rails
#   break-RAIL-N            MANIFOLD_FAULT breaks RAIL's connection after N bytes mid-transfer:
#                           the job goes on over the other rail, loses nothing, and says so once
#   break-ms-np4            every connection of tcp1 breaks 300 ms in, 4 ranks
#   back-tcp1               a broken rail is connected again and taken back into use
#   last-rail               both rails break: an error naming the peer ends the job
#   no-rails                MANIFOLD_RAILS=0: no wrapper, each peer on one instance
#   break-three             four rails (tcp2, tcp3 over 127.0.0.1/32, 127.0.0.0/16), tcp1-tcp3
#                           broken at once: a RESYNC sent on another failing rail is lost with
#                           it and must be sent again (else the rail stays failed, or its chunks
#                           are never sent again: a hang, half the runs before the fix); four
#                           runs, each must pass and take every rail back
#   pvars                   the wrapper's MPI_T counters read by the program: all 0 on a clean
#                           run; after tcp1 breaks and comes back, every rank counts a failover
#                           and a revived rail, and chunks were sent again
#   idle-finalize           PROG (shm_hold) does nothing but MPI_Init and MPI_Finalize: six
#                           runs, and no MPI_Finalize may wait for sends (a heartbeat queued
#                           behind a connection to a peer already in the final fence stalled it
#                           10 s in about half the runs)
#   prog NP                 PROG (any MPI test program) on NP ranks over the two rails: exit 0
# Usage: rail_test.sh CASE (MPIEXEC, PROG in the environment).
set -u
case_=$1
PVARS=
[ "$case_" = pvars ] && PVARS=pvars
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL ($case_): $*"; cat "$out"; exit 1; }
# run NP SECONDS [VAR=VALUE...]
run() {
    np=$1 secs=$2
    shift 2
    env MANIFOLD_SHM=0 MANIFOLD_FABRIC=${FABRIC:-tcp:lo,tcp:127.0.0.0/8} "$@" \
        "$MPIEXEC" -n "$np" --timeout "${JOB_TIMEOUT:-60}" --report-fabrics "$PROG" "$secs" $PVARS >"$out" 2>&1
}
ok() { grep -q "^rail_check: .* every byte checked" "$out" || fail "no clean pass"; }
# Bytes rank 0's host sent over instance $1.
sent_bytes() { sed -n "s/^manifold\[0\]: fabrics: [^ ]* $1: sent [0-9]* frames, \([0-9]*\) bytes.*/\1/p" "$out"; }
# The failure of rail $1 was said at most once per rank, and at least once.
said_once() {
    n=$(grep -c "rail0: rail $1 to rank [0-9]* failed" "$out")
    [ "$n" -ge 1 ] || fail "the loss of $1 was not reported"
    for r in 0 1 2 3; do
        [ "$(grep -c "^manifold\[$r\]: warning: rail0: rail $1 to rank [0-9]* failed" "$out")" -le 1 ] ||
            fail "rank $r reported the loss of $1 more than once"
    done
}

case $case_ in
idle-finalize)
    for i in 1 2 3 4 5 6; do
        run 2 0 || fail "run $i: the job failed"
        ! grep -q "sends still pending" "$out" ||
            fail "run $i: MPI_Finalize waited for a rail that carried no message"
    done
    ;;
stripe-np2 | stripe-np4)
    run "${case_#stripe-np}" 0 || fail "the job failed"
    ok
    grep -q "^manifold\[0\]: fabrics: p2p .*: self0+rail0(tcp0/tcp1)\$" "$out" ||
        fail "the report does not show rail0 over tcp0 and tcp1"
    a=$(sent_bytes tcp0) b=$(sent_bytes tcp1)
    [ -n "$a" ] && [ -n "$b" ] || fail "no counts for the rails"
    # Striping: each rail carries at least a fifth of the bytes.
    [ $((a * 5)) -ge $((a + b)) ] && [ $((b * 5)) -ge $((a + b)) ] ||
        fail "the rails are not both used: tcp0 $a bytes, tcp1 $b bytes"
    ;;
break-tcp[01]-*)
    rail=${case_#break-}
    rail=${rail%%-*}
    n=${case_##*-}
    n=$(echo "$n" | sed 's/k$/000/; s/m$/000000/')
    # Long enough for the break point: a sanitizer build on a busy machine may get through one
    # round (about 5 MB each way on each rail) a second only
    secs=$((n / 2500000 + 1))
    run 2 "$secs" MANIFOLD_FAULT="$rail:break_after_bytes=$n" || fail "the job failed"
    ok
    grep -q "breaking the connection of $rail" "$out" || fail "the fault did not fire"
    said_once "$rail"
    ;;
back-tcp1)
    run 2 2 MANIFOLD_FAULT="tcp1:break_after_bytes=2000000" || fail "the job failed"
    ok
    said_once tcp1
    grep -q "^manifold\[0\]: warning: rail0: rail tcp1 to rank 1 is back in use" "$out" ||
        fail "tcp1 was not taken back"
    ;;
break-ms-np4)
    run 4 1.5 MANIFOLD_FAULT="tcp1:break_after_ms=300" || fail "the job failed"
    ok
    said_once tcp1
    ;;
last-rail)
    if run 2 2 MANIFOLD_FAULT="tcp0:break_after_bytes=2000000;tcp1:break_after_bytes=3000000"; then
        fail "the job survived the loss of every rail"
    fi
    grep -q "lost the last rail to rank [01] " "$out" || fail "no error naming the peer"
    ;;
prog)
    MANIFOLD_SHM=0 MANIFOLD_FABRIC=tcp:lo,tcp:127.0.0.0/8 "$MPIEXEC" -n "$2" --timeout 100 \
        "$PROG" >"$out" 2>&1 || fail "$(basename "$PROG") failed over two rails"
    ;;
break-three)
    for i in 1 2 3 4; do
        FABRIC=tcp:lo,tcp:127.0.0.0/8,tcp:127.0.0.1/32,tcp:127.0.0.0/16 JOB_TIMEOUT=20 run 2 2 \
            MANIFOLD_FAULT="tcp1:break_after_ms=300;tcp2:break_after_ms=300;tcp3:break_after_ms=300" ||
            fail "run $i: the job failed"
        ok
        for r in 0 1; do
            for rail in tcp1 tcp2 tcp3; do
                grep -q "^manifold\[$r\]: warning: rail0: rail $rail to rank [01] is back in use" "$out" ||
                    fail "run $i: rank $r did not take $rail back"
            done
        done
    done
    ;;
pvars)
    # pv NAME RANK: the value rail_check printed
    pv() { sed -n "s/^rail_check: rank $2 rail0_$1 \([0-9]*\)\$/\1/p" "$out"; }
    run 2 0 || fail "the job failed"
    ok
    # ev NAME RANK: how many times rail_check heard the MPI_T event
    ev() { sed -n "s/^rail_check: rank $2 event $1 \(-*[0-9]*\)\$/\1/p" "$out"; }
    for r in 0 1; do
        for v in rail_failovers chunks_resent rails_revived; do
            [ "$(pv $v $r)" = 0 ] || fail "rank $r: $v is '$(pv $v $r)' on a run without faults"
        done
        for e in rail_failover rail_revived; do
            [ "$(ev $e $r)" = 0 ] || fail "rank $r: event $e heard '$(ev $e $r)' times without faults"
        done
    done
    run 2 2 MANIFOLD_FAULT="tcp1:break_after_bytes=2000000" || fail "the job failed"
    ok
    said_once tcp1
    for r in 0 1; do
        [ "$(pv rail_failovers $r)" -ge 1 ] 2>/dev/null || fail "rank $r counted no failover"
        [ "$(pv rails_revived $r)" -ge 1 ] 2>/dev/null || fail "rank $r counted no rail revived"
        # Each failover and revival is one event, as the counters count them.
        [ "$(ev rail_failover $r)" = "$(pv rail_failovers $r)" ] ||
            fail "rank $r: event rail_failover heard '$(ev rail_failover $r)' times, counter $(pv rail_failovers $r)"
        [ "$(ev rail_revived $r)" = "$(pv rails_revived $r)" ] ||
            fail "rank $r: event rail_revived heard '$(ev rail_revived $r)' times, counter $(pv rails_revived $r)"
    done
    [ $(($(pv chunks_resent 0) + $(pv chunks_resent 1))) -ge 1 ] || fail "no chunk counted as resent"
    ;;
no-rails)
    run 3 0 MANIFOLD_RAILS=0 || fail "the job failed"
    ok
    grep -q "rail0" "$out" && fail "a multirail wrapper was made with MANIFOLD_RAILS=0"
    grep -q "^manifold\[0\]: fabrics: p2p .*: self0+tcp[01]+tcp[01]\$" "$out" ||
        fail "the peers are not shared between the instances"
    ;;
*)
    echo "unknown case $case_"
    exit 2
    ;;
esac
echo "PASS ($case_)"
