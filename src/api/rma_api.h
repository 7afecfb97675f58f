/*
 * rma_api.h — what the window entry points (win.c, rma.c) share.
 */
#ifndef MF_API_RMA_API_H
#define MF_API_RMA_API_H

#include "rma/rma.h"

/* Dispatches a non-success code to w's error handler (w NULL: MPI_COMM_WORLD's). */
int mf_err_win(mf_win *w, int code, const char *fn);
/* Resolves a window handle; MPI_ERR_WIN naming it if invalid (MPI_ERR_OTHER before init). */
int mf_check_win(MPI_Win h, mf_win **out, const char *fn);

#endif
