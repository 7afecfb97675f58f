#!/bin/sh
# cpu_quota.sh — two ranks in a control group whose CPU limit is one core are oversubscribed,
# although the host has two cores to spare and the affinity mask shows them: mpiexec says so to
# its ranks (MANIFOLD_OVERSUBSCRIBED=1, one process group rather than a session each), and the
# library sees it by itself under another launcher (MPICH's Hydra, when installed), where nobody
# tells it. The same commands outside the group are the control: not oversubscribed.
# Makes a real group (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us), so it needs root, a cgroup file
# system with the cpu controller and a host with 2 or more usable cores; exits 77 (skipped)
# without them. Environment: MPIEXEC, PROG (tests/launcher/launcher_rank).
set -u
[ "$(nproc)" -ge 2 ] || { echo "fewer than 2 usable cores: skipped"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "not root: cannot make a control group: skipped"; exit 77; }

name=manifold-quota-$$
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    # v2: the cpu controller must be on for the root's children
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control ||
        echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    cg=/sys/fs/cgroup/$name
    mkdir "$cg" 2>/dev/null && echo "100000 100000" >"$cg/cpu.max" 2>/dev/null ||
        { rmdir "$cg" 2>/dev/null; echo "cannot make a v2 group with cpu.max: skipped"; exit 77; }
elif [ -d /sys/fs/cgroup/cpu ]; then
    cg=/sys/fs/cgroup/cpu/$name
    mkdir "$cg" 2>/dev/null && echo 100000 >"$cg/cpu.cfs_period_us" &&
        echo 100000 >"$cg/cpu.cfs_quota_us" ||
        { rmdir "$cg" 2>/dev/null; echo "cannot make a v1 group with a cfs quota: skipped"; exit 77; }
else
    echo "no cgroup cpu controller: skipped"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mf-quota.XXXXXX")
trap 'rmdir "$cg" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "group: $cg"

fail() {
    echo "FAIL: $*"
    echo "--- output ---"; head -n 20 "$tmp/out"
    exit 1
}
# in_group CMD...: runs CMD inside the group (its processes and all they start stay there)
in_group() { sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"; }

# mpiexec: the ranks are told
for where in outside inside; do
    run=
    [ $where = inside ] && run=in_group
    $run timeout 60 "$MPIEXEC" -n 2 "$PROG" env MANIFOLD_OVERSUBSCRIBED >"$tmp/out" 2>&1 ||
        fail "mpiexec $where the group: exit status $?"
    want='(unset)'
    [ $where = inside ] && want=1
    for r in 0 1; do
        grep -qx "$r MANIFOLD_OVERSUBSCRIBED=$want" "$tmp/out" ||
            fail "mpiexec $where the group: rank $r should have MANIFOLD_OVERSUBSCRIBED=$want"
    done
    echo "mpiexec $where the group: MANIFOLD_OVERSUBSCRIBED=$want"
done

# Hydra: the library judges by itself
HYDRA=$(command -v mpiexec.hydra) || { echo "mpiexec.hydra not installed: library side not run"; exit 0; }
line='CPU quota of 1 cores (cgroup): oversubscribed'
for where in outside inside; do
    run=
    [ $where = inside ] && run=in_group
    MANIFOLD_VERBOSE=1 $run timeout 60 "$HYDRA" -n 2 "$PROG" ring >"$tmp/out" 2>&1 ||
        fail "Hydra $where the group: exit status $?"
    grep -q '^ring ok 2$' "$tmp/out" || fail "Hydra $where the group: no 'ring ok 2'"
    n=$(grep -c "$line" "$tmp/out")
    if [ $where = inside ]; then
        [ "$n" -eq 2 ] || fail "Hydra inside the group: $n of 2 ranks said '$line'"
    else
        [ "$n" -eq 0 ] || fail "Hydra outside the group: a rank said '$line'"
    fi
    echo "Hydra $where the group: $n ranks found the quota"
done
echo "cpu quota ok"
