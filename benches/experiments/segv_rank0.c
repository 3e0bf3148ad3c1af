/* World rank 0 (PMI_RANK, or OMPI_COMM_WORLD_RANK) dereferences a null
 * pointer after the first barrier; the others meet in barriers for 1.2 s
 * more. Used by core_dump.sh. */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *world = getenv("PMI_RANK");
  if (!world)
    world = getenv("OMPI_COMM_WORLD_RANK");
  MPI_Barrier(MPI_COMM_WORLD);
  if (world && atoi(world) == 0) {
    volatile int *nowhere = NULL;
    *nowhere = 1;
  }
  for (int i = 0; i < 4; i++) {
    usleep(300000);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
