/* Parallel HDF5 (the mpio driver, over MPI-IO) as simulation checkpoints
 * use it: every rank writes its block of rows of a 2-D dataset with a
 * collective hyperslab write, a second chunked dataset independently,
 * rank 0 an attribute; then the file is reopened and read back.
 *
 * Usage: h5_parallel SHARED_DIR LOCAL_DIR
 *
 * Object modification times are off (H5Pset_obj_track_times), so that the
 * file is byte-identical from run to run and can be compared with the
 * plain run's. Prints a deterministic log per rank. */
#include "io/io.h" /* first: it sets _GNU_SOURCE; crc(), say() */
#include <hdf5.h>

enum { ROWS = 64, COLS = 512 };

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
    snprintf(path, sizeof path, "%s/checkpoint.h5", argv[1]);

    double *rows = malloc(sizeof(double) * ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; i++) rows[i] = rank * 1e6 + i * 0.5;

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    say("create: %s", file >= 0 ? "ok" : "failed");

    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    hsize_t dims[2] = {(hsize_t)ROWS * size, COLS};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);

    hsize_t start[2] = {(hsize_t)ROWS * rank, 0}, count[2] = {ROWS, COLS};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t memspace = H5Screate_simple(2, count, NULL);
    hid_t collective = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(collective, H5FD_MPIO_COLLECTIVE);
    herr_t rc = H5Dwrite(dset, H5T_NATIVE_DOUBLE, memspace, space, collective, rows);
    say("collective write: %d", (int)rc);

    /* A chunked dataset of ints, written independently, one chunk per rank. */
    hid_t chunked_dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(chunked_dcpl, 0);
    hsize_t chunk[1] = {4096}, ints[1] = {4096 * (hsize_t)size};
    H5Pset_chunk(chunked_dcpl, 1, chunk);
    H5Pset_alloc_time(chunked_dcpl, H5D_ALLOC_TIME_EARLY);
    hid_t ispace = H5Screate_simple(1, ints, NULL);
    hid_t idset = H5Dcreate2(file, "steps", H5T_NATIVE_INT, ispace, H5P_DEFAULT, chunked_dcpl, H5P_DEFAULT);
    int *steps = malloc(sizeof(int) * 4096);
    for (int i = 0; i < 4096; i++) steps[i] = rank * 4096 + i;
    hsize_t istart[1] = {4096 * (hsize_t)rank}, icount[1] = {4096};
    H5Sselect_hyperslab(ispace, H5S_SELECT_SET, istart, NULL, icount, NULL);
    hid_t imem = H5Screate_simple(1, icount, NULL);
    rc = H5Dwrite(idset, H5T_NATIVE_INT, imem, ispace, H5P_DEFAULT, steps);
    say("independent write: %d", (int)rc);

    /* Attributes are written collectively (every rank the same value). */
    hid_t ascalar = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(dset, "ranks", H5T_NATIVE_INT, ascalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, H5T_NATIVE_INT, &size);
    H5Aclose(attr);
    H5Sclose(ascalar);

    H5Sclose(imem);
    H5Dclose(idset);
    H5Sclose(ispace);
    H5Pclose(chunked_dcpl);
    H5Pclose(collective);
    H5Sclose(memspace);
    H5Dclose(dset);
    H5Sclose(space);
    H5Pclose(dcpl);
    say("close: %d", (int)H5Fclose(file));

    /* Read back, collectively, every rank the whole field. */
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    say("reopen: %s", file >= 0 ? "ok" : "failed");
    dset = H5Dopen2(file, "field", H5P_DEFAULT);
    size_t all = (size_t)ROWS * size * COLS;
    double *back = calloc(all, sizeof(double));
    collective = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(collective, H5FD_MPIO_COLLECTIVE);
    rc = H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, collective, back);
    say("collective read: %d crc %08x mine same %d", (int)rc, crc(back, all * sizeof(double)),
        !memcmp(back + (size_t)ROWS * COLS * rank, rows, sizeof(double) * ROWS * COLS));
    int ranks = -1;
    attr = H5Aopen(dset, "ranks", H5P_DEFAULT);
    H5Aread(attr, H5T_NATIVE_INT, &ranks);
    H5Aclose(attr);
    say("attribute ranks: %d", ranks);
    idset = H5Dopen2(file, "steps", H5P_DEFAULT);
    int *isteps = calloc(4096 * (size_t)size, sizeof(int));
    rc = H5Dread(idset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, isteps);
    say("independent read: %d crc %08x", (int)rc, crc(isteps, 4096 * (size_t)size * sizeof(int)));
    H5Dclose(idset);
    H5Pclose(collective);
    H5Dclose(dset);
    say("close: %d", (int)H5Fclose(file));
    H5Pclose(fapl);
    say("rank %d done", rank);
    free(rows);
    free(back);
    free(steps);
    free(isteps);
    MPI_Finalize();
    return 0;
}
