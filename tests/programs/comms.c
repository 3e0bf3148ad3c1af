/* Communicator management: Comm_split, Comm_dup, Comm_group, Group_incl,
 * Comm_create, Comm_compare, and world attributes. */
#include <mpi.h>
#include <stdio.h>
#include "line.h"

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm halves;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &halves);
    int hrank, hsize, hsum = 0;
    MPI_Comm_rank(halves, &hrank);
    MPI_Comm_size(halves, &hsize);
    MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, halves);
    say("split color %d: rank %d of %d, sum of world ranks %d", rank % 2, hrank, hsize, hsum);

    MPI_Comm dup;
    int cmp;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
    int drank, dsize;
    MPI_Comm_rank(dup, &drank);
    MPI_Comm_size(dup, &dsize);
    say("dup: rank %d of %d, congruent %d", drank, dsize, cmp == MPI_CONGRUENT);

    MPI_Group world_group, evens;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int gsize;
    MPI_Group_size(world_group, &gsize);
    int members[64], n = 0;
    for (int i = 0; i < size && n < 64; i += 2) members[n++] = i;
    MPI_Group_incl(world_group, n, members, &evens);
    MPI_Comm even_comm;
    MPI_Comm_create(MPI_COMM_WORLD, evens, &even_comm);
    int translated = -1, zero = 0;
    MPI_Group_translate_ranks(evens, 1, &zero, world_group, &translated);
    if (even_comm != MPI_COMM_NULL) {
        int erank, esize, emax = 0;
        MPI_Comm_rank(even_comm, &erank);
        MPI_Comm_size(even_comm, &esize);
        MPI_Allreduce(&rank, &emax, 1, MPI_INT, MPI_MAX, even_comm);
        add("group: world group %d, evens comm rank %d of %d, max %d, first is world %d",
               gsize, erank, esize, emax, translated); end_line();
        MPI_Comm_free(&even_comm);
    } else {
        say("group: world group %d, not in evens, first is world %d", gsize, translated);
    }

    int *tag_ub, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    say("tag_ub attribute present %d, at least 32767: %d", flag, flag && *tag_ub >= 32767);

    MPI_Group_free(&evens);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&halves);
    MPI_Finalize();
    return 0;
}
