/* redio.h: the C API of libredio.so.
 *
 * These functions exist only when the program runs under redio (the library
 * is loaded with LD_PRELOAD). A program that must also run without redio can
 * declare them weak and test them for NULL:
 *
 *     #pragma weak redio_replica_info
 *     if (redio_replica_info) ...
 */
#ifndef REDIO_H
#define REDIO_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* External mode: an outer redundancy layer tells redio which processes run
 * the same logical rank. `replica_set` holds exactly those processes; a
 * process's rank in it is its replica index. Collective over the real
 * MPI_COMM_WORLD, called once by every process after MPI_Init. Logical ranks
 * are numbered in the order of the lowest world rank of each set.
 * Returns 0 on success, -1 if the mapping is already set or inconsistent. */
int redio_set_replica_comm(MPI_Comm replica_set);

/* This process's replica index, logical rank and degree of redundancy.
 * Any pointer may be NULL. Returns 0, or -1 if the mapping is not known. */
int redio_replica_info(int *replica, int *rank, int *degree);

/* Lazy parity: computes redundancy data for this rank's `files` (`count`
 * absolute paths; 0 allowed) with the configured parity scheme, across the
 * ranks of the replica world, and writes this rank's redundancy file in the
 * files' common directory. Collective over the replica world (every rank
 * calls it). Returns 0, or -1 if it failed on any rank (nothing committed). */
int redio_protect(const char *const *files, int count);

#ifdef __cplusplus
}
#endif

#endif /* REDIO_H */
