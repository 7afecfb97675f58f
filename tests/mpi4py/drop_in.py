"""The mpi4py wheel from PyPI (built against MPICH) on Manifold: a tour of what Python users do.

Every rank checks its own results and raises on a mismatch; rank 0 prints " No Errors".
"""
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
assert "Manifold" in MPI.Get_library_version()

# Python objects: pickled point-to-point and collectives.
assert comm.allreduce(rank, op=MPI.SUM) == size * (size - 1) // 2
assert comm.bcast({"root": 0} if rank == 0 else None, root=0) == {"root": 0}
assert comm.sendrecv(rank, dest=(rank + 1) % size, source=(rank - 1) % size) == (rank - 1) % size
gathered = comm.gather(rank * rank, root=0)
if rank == 0:
    assert gathered == [r * r for r in range(size)]

# Buffers: numpy arrays through the typed interface, nonblocking, large (rendezvous) sizes.
n = 1 << 18
send = np.arange(n, dtype="f8") + rank
recv = np.empty(n, dtype="f8")
req = [comm.Irecv(recv, source=(rank - 1) % size, tag=7), comm.Isend(send, dest=(rank + 1) % size, tag=7)]
MPI.Request.Waitall(req)
assert np.array_equal(recv, np.arange(n, dtype="f8") + (rank - 1) % size)

total = np.empty(4, dtype="i8")
comm.Allreduce(np.full(4, rank, dtype="i8"), total, op=MPI.SUM)
assert (total == size * (size - 1) // 2).all()

blocks = np.empty(size, dtype="i4")
comm.Alltoall(np.arange(size, dtype="i4") + 100 * rank, blocks)
assert (blocks == np.arange(size) * 100 + rank).all()

# A derived datatype: one column of a matrix.
m = np.arange(16, dtype="i4").reshape(4, 4) + 1000 * rank
col = MPI.INT.Create_vector(4, 1, 4).Commit()
got = np.empty(4, dtype="i4")
comm.Sendrecv([m, 1, col], dest=(rank + 1) % size, recvbuf=got, source=(rank - 1) % size)
assert (got == np.arange(0, 16, 4) + 1000 * ((rank - 1) % size)).all()
col.Free()

# Communicators, groups, topologies, errors.
sub = comm.Split(rank % 2, key=-rank)
assert sub.Get_size() == len(range(rank % 2, size, 2))
cart = comm.Create_cart(MPI.Compute_dims(size, 2), periods=[True, True])
assert cart.Get_topo()[0] == MPI.Compute_dims(size, 2)
comm.Set_errhandler(MPI.ERRORS_RETURN)
try:
    comm.Send(send[:1], dest=size + 5)
    raise AssertionError("a send to an invalid rank succeeded")
except MPI.Exception as e:
    assert e.Get_error_class() == MPI.ERR_RANK
sub.Free()
cart.Free()
comm.Barrier()
if rank == 0:
    print(" No Errors")
