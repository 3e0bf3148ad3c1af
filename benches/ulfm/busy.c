/* Rank 0 computes 4 s without calling MPI, then everyone meets in a
 * barrier and finalizes: does the heartbeat detector declare it dead?
 * (docs/fault-tolerance.md; run by facts.sh) */
#include <mpi.h>
#include <unistd.h>
#include <stdio.h>
#include <time.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv); int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a); volatile double x = 0; do { for (int i = 0; i < 1000000; i++) x += i; clock_gettime(CLOCK_MONOTONIC, &b);} while (b.tv_sec - a.tv_sec < 4); }
  int rc = MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d barrier rc %d\n", rank, rc); fflush(stdout);
  double t = MPI_Wtime(); int frc = MPI_Finalize(); printf("rank %d finalized rc %d in %.2f s\n", rank, frc, MPI_Wtime() - t); fflush(stdout); if (argc > 1) _exit(0); return 0;
}
