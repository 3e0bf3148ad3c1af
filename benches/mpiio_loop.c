/* MPI-IO collective write and read of one shared file, timed with
 * MPI_Wtime: every rank owns an interleaved set of BLOCK-sized stripes
 * (a vector file view, as HDF5 and PnetCDF build for a block-row
 * decomposition), written with MPI_File_write_all, synced, then read back
 * with MPI_File_read_all into a fresh buffer and checked.
 *
 * Usage: mpiio_loop FILE TOTAL_BYTES_PER_RANK BLOCK_BYTES write|read
 * "write" creates the file and times the collective write and sync; "read"
 * times the collective read of a file an earlier "write" made (so that the
 * page cache can be dropped in between) and checks every byte. Prints one
 * line from rank 0: "write|read SECONDS bytes N ok 0|1 cpu C", the slowest
 * rank's time (MPI_MAX) and the CPU-seconds all ranks used in the timed
 * part (user and system, every thread; MPI_SUM). benches/mpiio.py runs it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* User plus system CPU-seconds of this process so far, all threads. */
static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5 || (strcmp(argv[4], "write") && strcmp(argv[4], "read"))) {
        if (rank == 0) fprintf(stderr, "usage: %s FILE TOTAL_BYTES_PER_RANK BLOCK_BYTES write|read\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long long total = atoll(argv[2]), block = atoll(argv[3]);
    int blocks = (int)(total / block);
    char *data = NULL, *back = NULL;
    if (posix_memalign((void **)&data, 4096, total) || posix_memalign((void **)&back, 4096, total))
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (long long i = 0; i < total; i++) data[i] = (char)(rank * 31 + i * 7 + (i >> 12));
    MPI_Datatype stripe;
    MPI_Type_vector(blocks, (int)block, (int)block * size, MPI_BYTE, &stripe);
    MPI_Type_commit(&stripe);

    int writing = strcmp(argv[4], "write") == 0;
    MPI_File fh;
    int amode = writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    if (MPI_File_open(MPI_COMM_WORLD, argv[1], amode, MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 4);
    MPI_File_set_view(fh, (MPI_Offset)rank * block, MPI_BYTE, stripe, "native", MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime(), cpu_start = cpu_seconds();
    int ok = 1, all_ok;
    if (writing) {
        MPI_File_write_all(fh, data, (int)total, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_sync(fh);
    } else {
        MPI_File_read_all(fh, back, (int)total, MPI_BYTE, MPI_STATUS_IGNORE);
        ok = memcmp(data, back, total) == 0;
    }
    double seconds = MPI_Wtime() - start, slowest;
    double cpu = cpu_seconds() - cpu_start, cpu_sum;
    MPI_File_close(&fh);
    MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) printf("%s %.6f bytes %lld ok %d cpu %.3f\n", argv[4], slowest, total * size, all_ok, cpu_sum);
    MPI_Type_free(&stripe);
    free(data);
    free(back);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
