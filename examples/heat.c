/* redio demo: 1-D heat diffusion on N ranks with halo exchange.
 *
 * Each rank owns a slice of a rod whose left end is held hot. After the
 * time steps, rank 0 gathers the profile and prints it with a checksum.
 * The program is deterministic, so every replica must print the same.
 * With OUTPUT, rank 0 also writes the whole temperature profile there,
 * half-way through the steps and again at the end. With CKPT_DIR, every
 * rank writes its slice half-way through into CKPT_DIR/rank<R>/heat.ckpt
 * (a checkpoint: the step, then the cells as doubles) and waits in
 * MPI_Barrier until every rank has written its own: the node-local files
 * redio's parity protects at that barrier in scripts/demo.sh.
 * Usage: heat [CELLS_PER_RANK] [STEPS] [OUTPUT] [CKPT_DIR] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Rank 0 writes the profile ROD of N cells to PATH, one "i T" line each. */
static void write_profile(const char *path, const double *rod, int n) {
    FILE *out = fopen(path, "w");
    if (!out) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < n; i++) fprintf(out, "%d %.9f\n", i, rod[i]);
    if (fclose(out) != 0) perror(path);
}

/* Every rank writes its CELLS cells of step STEP to DIR/rank<RANK>/heat.ckpt. */
static void write_checkpoint(const char *dir, int rank, int step, const double *u, int cells) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d", dir, rank);
    mkdir(dir, 0755);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/rank%d/heat.ckpt", dir, rank);
    FILE *out = fopen(path, "wb");
    if (!out || fwrite(&step, sizeof step, 1, out) != 1 ||
        fwrite(u, sizeof *u, cells, out) != (size_t)cells || fclose(out) != 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int cells = argc > 1 ? atoi(argv[1]) : 64;
    int steps = argc > 2 ? atoi(argv[2]) : 2000;

    double *u = calloc(cells + 2, sizeof(double)), *next = calloc(cells + 2, sizeof(double));
    double *rod = rank == 0 ? malloc(sizeof(double) * cells * size) : NULL;
    int left = rank - 1, right = rank + 1;
    for (int step = 0; step < steps; step++) {
        if (step == steps / 2 && step > 0) {
            if (argc > 4) {
                write_checkpoint(argv[4], rank, step, &u[1], cells);
                MPI_Barrier(MPI_COMM_WORLD); /* every rank's checkpoint is written */
            }
            if (argc > 3) {
                MPI_Gather(&u[1], cells, MPI_DOUBLE, rod, cells, MPI_DOUBLE, 0, MPI_COMM_WORLD);
                if (rank == 0) write_profile(argv[3], rod, cells * size);
            }
        }
        if (rank == 0) u[0] = 100.0;                       /* hot end */
        if (rank == size - 1) u[cells + 1] = u[cells];     /* insulated end */
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left >= 0 ? left : MPI_PROC_NULL, 0,
                     &u[cells + 1], 1, MPI_DOUBLE, right < size ? right : MPI_PROC_NULL, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[cells], 1, MPI_DOUBLE, right < size ? right : MPI_PROC_NULL, 1,
                     &u[0], 1, MPI_DOUBLE, left >= 0 ? left : MPI_PROC_NULL, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 0) u[0] = 100.0;
        for (int i = 1; i <= cells; i++) next[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
        double *t = u; u = next; next = t;
    }

    MPI_Gather(&u[1], cells, MPI_DOUBLE, rod, cells, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double local = 0.0, total = 0.0;
    for (int i = 1; i <= cells; i++) local += u[i];
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        unsigned long checksum = 0;
        printf("heat: %d ranks x %d cells, %d steps, total heat %.6f\n", size, cells, steps, total);
        for (int i = 0; i < cells * size; i += cells * size / 8) printf("  x=%4d  T=%8.4f\n", i, rod[i]);
        for (int i = 0; i < cells * size; i++) checksum = checksum * 31 + (unsigned long)(rod[i] * 1e6);
        printf("heat: checksum %016lx\n", checksum);
        if (argc > 3) write_profile(argv[3], rod, cells * size);
    }
    free(u); free(next); free(rod);
    MPI_Finalize();
    return 0;
}
