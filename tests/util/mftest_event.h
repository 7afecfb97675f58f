/*
 * mftest_event.h — listening to an MPI_T event as a tool would, for the tests that check an
 * event really happens (tests/fabric/fault.c, tests/fabric_rail/rail_check.c,
 * tests/security/victim.c, src/fabric/sctp/sctp_test.c). Header only: the unit tests beside the
 * code include it too, and they link the internal library, not the test library.
 */
#ifndef MFTEST_EVENT_H
#define MFTEST_EVENT_H

#include <mpi.h>

/* A registration of the event `name` whose callback `fn` (with `user_data`) is registered for
 * safety level `safety`; NULL if any step fails. MPI_T must be initialized by the caller. */
static inline MPI_T_event_registration
mftest_event_listen(const char *name, int safety, MPI_T_event_cb_function *fn, void *user_data)
{
    int idx;
    MPI_T_event_registration reg = NULL;
    if (MPI_T_event_get_index(name, &idx) != MPI_SUCCESS ||
        MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg) != MPI_SUCCESS)
        return NULL;
    if (MPI_T_event_register_callback(reg, safety, MPI_INFO_NULL, user_data, fn) != MPI_SUCCESS) {
        MPI_T_event_handle_free(reg, NULL, NULL);
        return NULL;
    }
    return reg;
}

#endif
