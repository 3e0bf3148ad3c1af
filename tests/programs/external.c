/* External mode: MPI_COMM_WORLD is not translated; redio knows the mapping
 * from the environment (or from redio_set_replica_comm when argv[1] is
 * "api"). */
#include <mpi.h>
#include <redio.h>
#include <stdio.h>
#include "line.h"

/* Resolved from libredio.so at run time (see redio.h). */
#pragma weak redio_replica_info
#pragma weak redio_set_replica_comm
#include <string.h>

int main(int argc, char **argv) {
    int rank, size, replica = -1, logical = -1, degree = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!redio_replica_info || !redio_set_replica_comm) {
        say("not running under redio");
        MPI_Finalize();
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "api") == 0) {
        /* The "outer layer": replica sets are pairs of world ranks (2k, 2k+1). */
        MPI_Comm set;
        MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &set);
        int rc = redio_set_replica_comm(set);
        say("set_replica_comm returned %d", rc);
        MPI_Comm_free(&set);
    }
    int rc = redio_replica_info(&replica, &logical, &degree);
    add("world %d of %d: info rc %d replica %d rank %d degree %d", rank, size, rc, replica,
           logical, degree); end_line();
    MPI_Finalize();
    return 0;
}
