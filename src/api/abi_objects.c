/*
 * Data objects the MPICH ABI exports by name. Programs compiled against MPICH's mpi.h read these
 * symbols (MPI_UNWEIGHTED is `extern int *const` there, not a constant), so libmpi.so.12 must
 * define each one for such programs to link and run. Only their addresses or values matter: the
 * library recognises them by comparison, never through what they point at.
 */
#include <mpi.h>

/* Distinct static targets: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY must differ from each other and
 * from every user array. */
static int mf_abi_unweighted_obj;
static int mf_abi_weights_empty_obj;
int *const MPI_UNWEIGHTED = &mf_abi_unweighted_obj;
int *const MPI_WEIGHTS_EMPTY = &mf_abi_weights_empty_obj;

/* Fortran status-ignore sentinels, usable from C through MPI_Status_f2c and friends. */
static MPI_Fint mf_abi_f_status_ignore[MPI_F_STATUS_SIZE];
static MPI_Fint mf_abi_f_statuses_ignore[MPI_F_STATUS_SIZE];
static MPI_F08_status mf_abi_f08_status_ignore;
static MPI_F08_status mf_abi_f08_statuses_ignore[1];
MPI_Fint *MPI_F_STATUS_IGNORE = mf_abi_f_status_ignore;
MPI_Fint *MPI_F_STATUSES_IGNORE = mf_abi_f_statuses_ignore;
MPI_F08_status *MPI_F08_STATUS_IGNORE = &mf_abi_f08_status_ignore;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = mf_abi_f08_statuses_ignore;

/* MPI_T: the "all handles" pvar handle, a non-null address no real handle can have. */
static char mf_abi_pvar_all_handles_obj;
MPI_T_pvar_handle const MPI_T_PVAR_ALL_HANDLES = (MPI_T_pvar_handle)&mf_abi_pvar_all_handles_obj;

/* MPI_COMM_DUP_FN, MPI_TYPE_DUP_FN and MPI_WIN_DUP_FN all resolve to MPIR_Dup_fn: copy the
 * attribute value and keep it. Weak, so the attribute code may define its own without a clash. */
__attribute__((weak)) int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state,
                                      void *attribute_val_in, void *attribute_val_out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}
