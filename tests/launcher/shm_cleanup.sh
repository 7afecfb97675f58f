#!/bin/bash
# Usage: shm_cleanup.sh MPIEXEC
# A rank killed during MPI_Init can leave its host's shared-memory segment in /dev/shm (the shm
# fabric unlinks it only once every local rank has mapped it). mpiexec removes the job's
# segments when the job ends. This test plays such a rank without MPI: it asks the PMI server for
# the job id, creates a file with the segment name the shm fabric would use
# (manifold-<uid>-<FNV-1a of the job id>-<node>) and one a communicator's shared segment would
# use (manifold-<uid>-<hash>-coll-<pid>-<seq>), then dies; the files must be gone afterwards.
set -u
mpiexec=$1
rank_script='
printf "cmd=init pmi_version=1 pmi_subversion=1\n" >&$PMI_FD; read -r -u $PMI_FD _
printf "cmd=get_my_kvsname\n" >&$PMI_FD; read -r -u $PMI_FD line
kvs=${line##*kvsname=}; kvs=${kvs%% *}
h=-3750763034362895579   # 0xcbf29ce484222325 as a signed 64-bit integer
for ((i = 0; i < ${#kvs}; i++)); do
    printf -v c "%d" "'\''${kvs:i:1}"
    h=$(( (h ^ c) * 1099511628211 ))
done
name=$(printf "/dev/shm/manifold-%u-%016x-%d" "$(id -u)" "$h" "$PMI_RANK")
touch "$name"; echo "$name"
# and the name of a communicator'"'"'s host segment this rank would have created (host_segment.c)
name=$(printf "/dev/shm/manifold-%u-%016x-coll-%d-0" "$(id -u)" "$h" $$)
touch "$name"; echo "$name"
# Rank 1 dies once all four files exist; mpiexec then kills rank 0.
if [ "$PMI_RANK" = 1 ]; then sleep 0.5; kill -KILL $$; else sleep 30; fi
'
out=$("$mpiexec" -n 2 bash -c "$rank_script" 2>&1)
echo "$out"
fail=0
files=$(echo "$out" | grep '^/dev/shm/manifold-')
[ "$(echo "$files" | grep -c .)" -eq 4 ] || { echo "FAIL: the ranks did not create their files"; fail=1; }
for f in $files; do
    [ ! -e "$f" ] || { echo "FAIL: $f is still there"; rm -f "$f"; fail=1; }
done
[ $fail -eq 0 ] && echo PASS
exit $fail
