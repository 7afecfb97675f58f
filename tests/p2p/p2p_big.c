/* A message above 2 GiB (MPI_Send_c / MPI_Recv_c with a count beyond INT_MAX) between ranks 0
 * and 1, checked at sampled offsets and at both ends. */
#include <stdlib.h>
#include <string.h>

#include "mftest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Count n = ((MPI_Count)1 << 31) + 4099;
    if (size >= 2 && rank < 2) {
        unsigned char *b = malloc((size_t)n);
        MF_CHECK(b != NULL, "no memory for %ld bytes", (long)n);
        if (b && rank == 0) {
            for (MPI_Count i = 0; i < n; i += 4096)
                b[i] = (unsigned char)(i / 4096 * 13);
            b[n - 1] = 0xAB;
            MF_CHECK_MPI(MPI_Send_c(b, n, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
        } else if (b) {
            memset(b, 0, (size_t)n);
            MPI_Status st;
            MF_CHECK_MPI(MPI_Recv_c(b, n, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
            MPI_Count c;
            MPI_Get_count_c(&st, MPI_BYTE, &c);
            MF_CHECK(c == n, "count %ld != %ld", (long)c, (long)n);
            for (MPI_Count i = 0; i < n; i += 4096)
                if (b[i] != (unsigned char)(i / 4096 * 13)) {
                    MF_CHECK(0, "byte %ld wrong", (long)i);
                    break;
                }
            MF_CHECK(b[n - 1] == 0xAB, "last byte wrong");
        }
        free(b);
    }
    return mftest_finish();
}
