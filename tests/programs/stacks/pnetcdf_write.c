/* PnetCDF (over MPI-IO) as climate codes use it: define a 3-D record
 * variable and a fixed one, write each rank's slab collectively, a
 * nonblocking put (iput + wait_all) for the second variable, then reopen
 * and read back.
 *
 * Usage: pnetcdf_write SHARED_DIR LOCAL_DIR
 *
 * Prints a deterministic log per rank. */
#include "io/io.h" /* first: it sets _GNU_SOURCE; crc(), say() */
#include <pnetcdf.h>

enum { NY = 64, NX = 256, STEPS = 3 };

#define CHECK(what, call)                                             \
    do {                                                              \
        int err_ = (call);                                            \
        say("%s: %s", what, err_ == NC_NOERR ? "ok" : ncmpi_strerror(err_)); \
    } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        fprintf(stderr, "usage: %s SHARED_DIR LOCAL_DIR\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/climate.nc", argv[1]);
    int ncid, dims[3], temp, height;
    CHECK("create", ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &ncid));
    CHECK("def time", ncmpi_def_dim(ncid, "time", NC_UNLIMITED, &dims[0]));
    CHECK("def y", ncmpi_def_dim(ncid, "y", (MPI_Offset)NY * size, &dims[1]));
    CHECK("def x", ncmpi_def_dim(ncid, "x", NX, &dims[2]));
    CHECK("def temp", ncmpi_def_var(ncid, "temperature", NC_FLOAT, 3, dims, &temp));
    CHECK("def height", ncmpi_def_var(ncid, "height", NC_DOUBLE, 2, dims + 1, &height));
    CHECK("put title", ncmpi_put_att_text(ncid, NC_GLOBAL, "title", 13, "redio example"));
    CHECK("enddef", ncmpi_enddef(ncid));

    float *slab = malloc(sizeof(float) * NY * NX);
    for (int step = 0; step < STEPS; step++) {
        for (int i = 0; i < NY * NX; i++) slab[i] = (float)(step * 1000 + rank * 100 + i % 97);
        MPI_Offset start[3] = {step, (MPI_Offset)NY * rank, 0}, count[3] = {1, NY, NX};
        CHECK("put temperature step", ncmpi_put_vara_float_all(ncid, temp, start, count, slab));
    }
    double *h = malloc(sizeof(double) * NY * NX);
    for (int i = 0; i < NY * NX; i++) h[i] = rank + i * 0.25;
    MPI_Offset hstart[2] = {(MPI_Offset)NY * rank, 0}, hcount[2] = {NY, NX};
    int request, status;
    CHECK("iput height", ncmpi_iput_vara_double(ncid, height, hstart, hcount, h, &request));
    CHECK("wait_all", ncmpi_wait_all(ncid, 1, &request, &status));
    say("iput status: %s", status == NC_NOERR ? "ok" : ncmpi_strerror(status));
    CHECK("close", ncmpi_close(ncid));

    CHECK("open", ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, MPI_INFO_NULL, &ncid));
    MPI_Offset records = -1;
    ncmpi_inq_dimlen(ncid, dims[0], &records);
    say("records: %lld", (long long)records);
    size_t all = (size_t)STEPS * NY * size * NX;
    float *back = calloc(all, sizeof(float));
    CHECK("get temperature", ncmpi_get_var_float_all(ncid, temp, back));
    say("temperature crc %08x", crc(back, all * sizeof(float)));
    double *hback = calloc((size_t)NY * NX, sizeof(double));
    CHECK("get height", ncmpi_get_vara_double_all(ncid, height, hstart, hcount, hback));
    say("height mine same %d", !memcmp(hback, h, sizeof(double) * NY * NX));
    CHECK("close", ncmpi_close(ncid));
    say("rank %d done", rank);
    free(slab);
    free(h);
    free(back);
    free(hback);
    MPI_Finalize();
    return 0;
}
