/* Serial HDF5 per rank, on SHARED_DIR and then on LOCAL_DIR: every rank
 * creates its own file with H5Fcreate (default sec2 driver: the file is
 * locked with flock at create and open), writes a dataset, closes, opens
 * it again read-only (a shared lock), reads the dataset back and prints
 * its sum; then H5Fcreate with H5F_ACC_EXCL on the existing file fails.
 *
 * Usage: io_hdf5 SHARED_DIR LOCAL_DIR
 *
 * Compiled against the MPI flavour's HDF5 (tests/interposition/stacks.rs):
 * mpicc -I/usr/include/hdf5/<mpi> -L/usr/lib/x86_64-linux-gnu/hdf5/<mpi>
 * -lhdf5. Only serial HDF5 calls are made: MPI is there for redio. */
#include "io.h"
#include <hdf5.h>

#define N 1000

static int rank;

static void hdf5_file(const char *dir) {
    char path[4096], name[64];
    snprintf(name, sizeof name, "h5.%d.h5", rank);
    join(path, dir, name);
    int data[N], back[N];
    for (int i = 0; i < N; i++) data[i] = rank * 100000 + i * 7;

    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    say("%s H5Fcreate: %s", tag, file < 0 ? "failed" : "ok");
    if (file < 0) return;
    hsize_t dims[1] = {N};
    hid_t space = H5Screate_simple(1, dims, NULL);
    /* No modification times in the object header: replicas that cross a
     * second apart would write different bytes (a mismatch, corrected at
     * r=3), seen once on a loaded machine. */
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    hid_t set = H5Dcreate2(file, "/data", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    say("%s H5Dcreate2: %s", tag, set < 0 ? "failed" : "ok");
    say("%s H5Dwrite: %d", tag, (int)H5Dwrite(set, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
    H5Dclose(set);
    H5Sclose(space);
    say("%s H5Fclose: %d", tag, (int)H5Fclose(file));

    file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    say("%s H5Fopen rdonly: %s", tag, file < 0 ? "failed" : "ok");
    if (file < 0) return;
    set = H5Dopen2(file, "/data", H5P_DEFAULT);
    memset(back, 0, sizeof back);
    say("%s H5Dread: %d", tag, (int)H5Dread(set, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back));
    long long sum = 0;
    for (int i = 0; i < N; i++) sum += back[i];
    say("%s sum %lld, %s", tag, sum, memcmp(data, back, sizeof data) ? "differs" : "matches");
    H5Dclose(set);
    say("%s H5Fclose: %d", tag, (int)H5Fclose(file));

    /* H5F_ACC_EXCL on an existing file fails (quietly). */
    H5E_BEGIN_TRY {
        file = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    } H5E_END_TRY;
    say("%s H5Fcreate excl existing: %s", tag, file < 0 ? "failed" : "ok");
    if (file >= 0) H5Fclose(file);
}

int main(int argc, char **argv) {
    rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR");
    say("io_hdf5 rank %d", rank);
    const char *dirs[2] = {argv[1], argv[2]};
    const char *tags[2] = {"shared", "local"};
    for (int i = 0; i < 2; i++) {
        tag = tags[i];
        hdf5_file(dirs[i]);
    }
    say("io_hdf5 rank %d done", rank);
    MPI_Finalize();
    return 0;
}
