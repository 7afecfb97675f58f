#!/bin/bash
# cluster_test.sh CASE ID — one multi-host launcher test on a fresh 4-host namespace cluster.
# Environment: MPIEXEC, TESTBIN (built test programs), NETNS_CLUSTER (scripts/netns-cluster).
# The cluster is named mc<ID>h1..mc<ID>h4 on subnets 10.201.ID.0/24 and 10.202.ID.0/24, so cases
# can run in parallel. Exit 0 pass, 77 skip, else fail with what was expected and what came.
set -u
case_name=$1
id=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cluster_up "mc${id}h" "$id" 4 cluster

H=${prefix}1:2,${prefix}2:2,${prefix}3:2,${prefix}4:2
P=$TESTBIN/launcher_rank
export MANIFOLD_IF=$R1.0/24 # mpiexec listens on rail 1 (the ranks' tcp too, unless a case says)

fail() {
    echo "FAIL [$case_name]: $*" >&2
    cluster_dump head 30
    exit 1
}
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
# No process of the job may be left in any host.
expect_clean() {
    for i in 1 2 3 4; do
        for t in $(seq 50); do [ -z "$(ip netns pids ${prefix}$i)" ] && break; sleep 0.1; done
        [ -z "$(ip netns pids ${prefix}$i)" ] || fail "processes left on ${prefix}$i"
    done
}
# pid of the proxy of host $1 (its only process that is mpiexec)
proxy_pid() {
    for p in $(ip netns pids "$1"); do
        [ "$(cat /proc/$p/comm 2>/dev/null)" = mpiexec ] && { echo "$p"; return; }
    done
}

case $case_name in
apps)
    # p2p, collectives and MPI-IO across 4 hosts x 2 ranks: shm inside a host, tcp across (the
    # hosts share /tmp as a cluster shares a file system; the shared file pointer lives at rank 0;
    # io_collective's aggregators exchange over both fabrics).
    for prog in p2p_basic p2p_stress coll_move coll_reduce io_basic io_collective; do
        MANIFOLD_VERBOSE=1 run --host "$H" --launcher "$L" --launch-fanout 2 --timeout 90 \
            "$TESTBIN/$prog"
        expect_rc 0
        expect_out ' No Errors'
        for i in 1 2 3 4; do
            expect_err "^manifold\[[0-9]*\]: .* via shm0; .* via tcp0 (host ${prefix}$i, 2 ranks here)"
        done
        [ "$(grep -c 'via shm' "$err")" -ge 8 ] || fail "$prog: not every rank reported its fabrics"
    done
    expect_clean
    ;;
ifsel)
    # By CIDR: rail 2 only (mpiexec still listens on rail 1: its own variable is read before the
    # job's environment is forwarded, so use -x for the ranks).
    MANIFOLD_VERBOSE=2 run --host "$H" --launcher "$L" -x MANIFOLD_IF=$R2.0/24 $P ring
    expect_rc 0
    expect_out "^ring ok 8$"
    grep -q "tcp[0-9]*: listening on $R2\.[0-9]*:[0-9]* (rail2)" "$err" || fail "no tcp listener on rail 2"
    grep -q "tcp[0-9]*: listening on $R1\." "$err" && fail "tcp listened on rail 1 with MANIFOLD_IF=rail 2"
    # By name, for mpiexec (its bridge) and the ranks (rail1), joined by '+' into one entry
    # (a comma would make each a rail, and the ranks' hosts have no bridge); then rail 1 down
    # everywhere and the job still runs on rail 2 chosen by CIDR.
    MANIFOLD_IF="rail1+$prefix-br1" MANIFOLD_VERBOSE=2 run --host "$H" --launcher "$L" $P ring
    expect_rc 0
    grep -q "tcp[0-9]*: listening on $R1\.[0-9]*:[0-9]* (rail1)" "$err" || fail "no tcp listener on rail1"
    grep -q "tcp[0-9]*: listening on $R2\." "$err" && fail "tcp listened on rail 2 with MANIFOLD_IF=rail1"
    for i in 1 2 3 4; do nc rail-down ${prefix}$i 1; done
    MANIFOLD_IF=$R2.0/24 run --host "$H" --launcher "$L" --timeout 30 $P ring
    expect_rc 0
    expect_out "^ring ok 8$"
    expect_clean
    ;;
lost)
    # A proxy killed mid-job: the job ends at once, naming the host.
    "$MPIEXEC" --host "$H" --launcher "$L" $P pids >"$out" 2>"$err" </dev/null &
    mpid=$!
    for t in $(seq 200); do [ "$(grep -c '^pid ' "$out" 2>/dev/null)" = 8 ] && break; sleep 0.05; done
    [ "$(grep -c '^pid ' "$out")" = 8 ] || fail "ranks did not start"
    start=$(date +%s)
    kill -KILL "$(proxy_pid ${prefix}3)"
    wait $mpid
    rc=$?
    secs=$(( $(date +%s) - start ))
    expect_rc 1
    expect_err "^mpiexec: lost host ${prefix}3 (the connection to its proxy closed); ending the job$"
    expect_fast 5
    expect_clean
    # Both rails of a host down: silence past MANIFOLD_HOST_TIMEOUT ends the job.
    MANIFOLD_HOST_TIMEOUT=3 "$MPIEXEC" --host "$H" --launcher "$L" $P pids >"$out" 2>"$err" </dev/null &
    mpid=$!
    for t in $(seq 200); do [ "$(grep -c '^pid ' "$out" 2>/dev/null)" = 8 ] && break; sleep 0.05; done
    start=$(date +%s)
    nc rail-down ${prefix}2 1
    nc rail-down ${prefix}2 2
    wait $mpid
    rc=$?
    secs=$(( $(date +%s) - start ))
    expect_rc 1
    expect_err "^mpiexec: lost host ${prefix}2 (nothing heard from it for 3 seconds"
    expect_fast 9
    expect_clean # the cut-off proxy ends its ranks itself after the same silence
    nc rail-up ${prefix}2 1
    nc rail-up ${prefix}2 2
    # A launcher that cannot start the proxy.
    run --host "$H,nosuch$id:1" --launcher "$L" $P hello
    expect_rc 1
    expect_err "^mpiexec: lost host nosuch$id (its proxy could not be started: the launcher command exited with status [0-9]*); ending the job$"
    expect_fast 10
    expect_clean
    ;;
stdio)
    run --host "$H" --launcher "$L" $P exit 5 3
    expect_rc 3
    expect_err "^mpiexec: rank 5 (host ${prefix}3, pid [0-9]*) exited with code 3$"
    # In a sanitizer build, ASan would catch the signal and exit 1: let it through.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" run --host "$H" --launcher "$L" $P signal 7 11
    expect_rc 139
    expect_err "^mpiexec: rank 7 (host ${prefix}4, pid [0-9]*) killed by signal 11"
    run --host "$H" --launcher "$L" $P abort 6 9
    expect_rc 9
    expect_err "^mpiexec: rank 6 (host ${prefix}4, pid [0-9]*) called MPI_Abort with exit code 9"
    run --host "$H" --launcher "$L" $P nofinalize 2
    expect_rc 1
    expect_err "^mpiexec: rank 2 (host ${prefix}2, .* without MPI_Finalize$"
    run --host "$H" --launcher "$L" /nonexistent/prog
    expect_rc 127
    expect_err "^mpiexec: cannot run '/nonexistent/prog' on host ${prefix}[1-4]: No such file"
    n=3000
    run -l --host "$H" --launcher "$L" $P lines $n
    expect_rc 0
    for r in 0 7; do
        [ "$(grep -c -E "^\[$r\] rank $r line [0-9]+ of $n x+$" "$out")" = $n ] ||
            fail "rank $r: not $n whole tagged lines"
    done
    [ "$(wc -l <"$out")" = $((8 * n)) ] || fail "stray or broken stdout lines"
    [ "$(grep -c -E '^\[[0-7]\] rank [0-7] err [0-9]+$' "$err")" = $((8 * n / 10)) ] ||
        fail "stderr lines broken"
    head -c 200000 /dev/urandom >"$tmp/in"
    "$P" stdin <"$tmp/in" >"$tmp/expect" 2>/dev/null
    "$MPIEXEC" --host "$H" --launcher "$L" $P stdin <"$tmp/in" >"$out" 2>"$err"
    rc=$?
    expect_rc 0
    grep -qxF "$(cat "$tmp/expect")" "$out" || fail "rank 0 did not get the same stdin"
    expect_out '^rank 7 stdin eof$'
    FOO_CL=fwd run --host "$H" --launcher "$L" -x BAR_CL=x $P env FOO_CL BAR_CL MANIFOLD_HOSTNAME \
        MANIFOLD_LOCAL_RANK MANIFOLD_LOCAL_SIZE
    expect_rc 0
    expect_out "^7 FOO_CL=fwd$"
    expect_out "^7 BAR_CL=x$"
    expect_out "^7 MANIFOLD_HOSTNAME=${prefix}4$"
    expect_out "^7 MANIFOLD_LOCAL_RANK=1$"
    expect_out "^7 MANIFOLD_LOCAL_SIZE=2$"
    expect_clean
    ;;
blame)
    # Exact blame across hosts: a rank dies while the others (on its host over shm, elsewhere
    # over tcp; with MANIFOLD_SHM=0 all over tcp) wait for a message from it. The verdict names
    # that rank and its host, and mpiexec's status follows its cause. 16 of 16 right.
    wrong=0
    for i in $(seq 0 15); do
        r=$(( (i * 3 + 1) % 8 ))
        case $((i % 4)) in
        0) how=9; want="killed by signal 9 (Killed)"; code=137 ;;
        1) how=6; want="killed by signal 6 (Aborted)"; code=134 ;;
        2) how=-3; want="exited with code 3"; code=3 ;;
        3) how=0; want="exited with code 0 after MPI_Init but without MPI_Finalize"; code=1 ;;
        esac
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_abort=0" MANIFOLD_SHM=$((i % 2)) \
            run --host "$H" --launcher "$L" --timeout 30 $P peerdie $r $how
        if [ $rc -ne $code ] || [ "$(grep -c '^mpiexec: ' "$err")" -ne 1 ] ||
            ! grep -q "^mpiexec: rank $r (host ${prefix}$((r / 2 + 1)), pid [0-9]*) $want\$" "$err"; then
            echo "MANIFOLD_SHM=$((i % 2)) peerdie $r $how: exit $rc (want $code):" >&2
            grep '^mpiexec: ' "$err" >&2
            wrong=$((wrong + 1))
        fi
    done
    [ $wrong -eq 0 ] || fail "$wrong of 16 jobs blamed wrongly"
    expect_clean
    ;;
impostor)
    # A stranger on another host of the cluster against mpiexec's proxy listener during a live
    # job (tests/launcher/impostor.py: garbage, replayed handshake, proofs without the secret,
    # idle and flooding connections; then a real proxy with a wrong secret). The job finishes
    # with the right output; the stranger gets nothing but fresh challenges.
    head -c 100000 /dev/urandom >"$tmp/in"
    "$P" stdin <"$tmp/in" >"$tmp/expect" 2>/dev/null
    mkfifo "$tmp/fifo"
    "$MPIEXEC" --timeout 60 --host "${prefix}1:2,${prefix}2:2" \
        --launcher "ip netns exec {host} python3 $IMPOSTOR relay $tmp {host}" \
        $P stdin <"$tmp/fifo" >"$out" 2>"$err" &
    mpid=$!
    exec 3>"$tmp/fifo"
    for t in $(seq 200); do [ "$(grep -c 'stdin eof$' "$out")" = 3 ] && break; sleep 0.05; done
    [ "$(grep -c 'stdin eof$' "$out")" = 3 ] || { exec 3>&-; wait $mpid; fail "ranks did not start"; }
    ip netns exec ${prefix}3 python3 "$IMPOSTOR" attack "$tmp" >"$tmp/attack" 2>&1 ||
        { exec 3>&-; wait $mpid; fail "impostor: $(cat "$tmp/attack")"; }
    read -r ip port <"$tmp/addr"
    printf '%064d\n' 7 | ip netns exec ${prefix}4 "$MPIEXEC" --proxy "$ip" "$port" 1 ${prefix}2 \
        >/dev/null 2>"$tmp/wrong" && fail "a proxy with a wrong secret was accepted"
    grep -q 'closed the connection' "$tmp/wrong" || fail "wrong secret: $(cat "$tmp/wrong")"
    cat "$tmp/in" >&3
    exec 3>&-
    wait $mpid
    rc=$?
    expect_rc 0
    grep -qxF "$(cat "$tmp/expect")" "$out" || fail "rank 0 did not get its stdin"
    expect_err "^mpiexec: warning: refused a connection from $R1\.3:"
    expect_clean
    ;;
hosts)
    printf '# test hosts\n%s1 slots=2\n%s2 slots=1 # one slot\n\n%s3\n' $prefix $prefix $prefix \
        >"$tmp/hostfile"
    run --hostfile "$tmp/hostfile" --launcher "$L" $P hello
    expect_rc 0
    [ "$(grep -c '^hello' "$out")" = 4 ] || fail "hostfile: expected 4 ranks (one per slot)"
    expect_out "^hello 1 of 4 on ${prefix}1$"
    expect_out "^hello 2 of 4 on ${prefix}2$"
    expect_out "^hello 3 of 4 on ${prefix}3$"
    run --host "$H" --launcher "$L" --map-by node -n 5 $P hello
    expect_rc 0
    expect_out "^hello 1 of 5 on ${prefix}2$"
    expect_out "^hello 4 of 5 on ${prefix}1$"
    run --host "$H" --launcher "$L" --map-by ppr:1:node $P hello
    expect_rc 0
    expect_out "^hello 3 of 4 on ${prefix}4$"
    run --host "$H" --launcher "$L" -n 2 $P hello : -n 2 $P hello
    expect_rc 0
    expect_out "^hello 3 of 4 on ${prefix}2$"
    run --host "$H" --launcher "$L" --bind-to core --report-bindings -n 4 $P hello
    expect_rc 0
    expect_err "^mpiexec: rank 3 (host ${prefix}2, local rank 1) bound to core "
    run --host "$H" --launcher "$L" --launch-fanout 1 $P ring # a chain: h1 starts h2 starts h3...
    expect_rc 0
    expect_out "^ring ok 8$"
    expect_clean
    ;;
*)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
exit 0
