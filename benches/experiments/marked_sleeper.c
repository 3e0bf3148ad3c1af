/* A replicated job's idle application: after MPI_Init it leaves the marker
 * file DIR/started.<pid> (so a script knows every process is past redio's
 * start-up), then meets the others in MPI_Barrier every 500 ms, 40 times,
 * and prints one line. Used by kill_supervisor.sh. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1) {
    char marker[4096];
    snprintf(marker, sizeof marker, "%s/started.%d", argv[1], (int)getpid());
    FILE *f = fopen(marker, "w");
    if (f) fclose(f);
  }
  for (int i = 0; i < 40; i++) {
    usleep(500000);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  printf("rank %d done\n", rank);
  MPI_Finalize();
  return 0;
}
