/*
 * rma_api.h — what the window entry points (win.c, rma.c) share.
 */
#ifndef MF_API_RMA_API_H
#define MF_API_RMA_API_H

#include "core/state.h"
#include "rma/rma.h"

/* Dispatches a non-success code to w's error handler (w NULL: no object, mf_err_no_object). */
int mf_err_win(mf_win *w, int code, const char *fn);
/* Resolves a window handle; MPI_ERR_WIN naming it if invalid (MPI_ERR_OTHER before init).
 * Inline for the valid case, the error built by the _slow form. */
int mf_check_win_slow(MPI_Win h, mf_win **out, const char *fn);
static inline int mf_check_win(MPI_Win h, mf_win **out, const char *fn)
{
    if (mf_g.initialized && (*out = mf_win_get(h)) != NULL)
        return MPI_SUCCESS;
    return mf_check_win_slow(h, out, fn);
}

#endif
