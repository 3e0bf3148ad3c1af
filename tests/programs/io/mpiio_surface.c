/* MPI-IO as HDF5, PnetCDF and checkpoint libraries use it, on SHARED_DIR:
 * views over derived datatypes, explicit offsets, individual and shared
 * file pointers, collective, split-collective and nonblocking transfers,
 * size / preallocate / sync / atomicity, the open modes (CREATE, EXCL,
 * APPEND, DELETE_ON_CLOSE, RDONLY errors) and MPI_File_delete.
 *
 * Usage: mpiio_surface SHARED_DIR LOCAL_DIR
 *
 * Every rank prints a deterministic log of what MPI returned (counts, error
 * classes, sizes, positions, checksums of what it read), one line per call,
 * so a replicated run can be compared line by line with the plain run
 * (tests/io_stacks/). Files: mpiio.view.dat (every rank, a strided view),
 * mpiio.shared.dat (shared pointer, ordered), mpiio.nb.dat (nonblocking and
 * split collectives), mpiio.many.dat (nonblocking, 2100 pieces),
 * mpiio.append.dat, mpiio.size.dat; mpiio.gone.dat and mpiio.temp.dat are
 * deleted before the end. */
#include "io.h"

static int rank, size;

/* Prints "WHAT: ok" or "WHAT: error class N" and yields the MPI return code. */
static int mpi_show(const char *what, int rc) {
    if (rc == MPI_SUCCESS) {
        say("%s: ok", what);
    } else {
        int class;
        MPI_Error_class(rc, &class);
        say("%s: error class %d", what, class);
    }
    return rc;
}

/* Prints the element count a status holds, in DATATYPE units. */
static void show_count(const char *what, MPI_Status *status, MPI_Datatype datatype) {
    int count = -1;
    MPI_Get_count(status, datatype, &count);
    say("%s: count %d", what, count);
}

static void show_position(const char *what, MPI_File fh) {
    MPI_Offset at = -1, byte = -1;
    MPI_File_get_position(fh, &at);
    MPI_File_get_byte_offset(fh, at, &byte);
    say("%s: position %lld byte %lld", what, (long long)at, (long long)byte);
}

/* Collective: every rank's previous calls are done before the size is read,
 * and no rank changes it before every rank has read it. */
static void show_size(const char *what, MPI_File fh) {
    MPI_Offset bytes = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_get_size(fh, &bytes);
    say("%s: size %lld", what, (long long)bytes);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Opens DIR/NAME (create, read-write) with a strided view of ints: rank r
 * owns blocks r, r+size, r+2*size, ... (COUNT of them) of BLOCK ints each.
 * Prints "TAG open create|rdwr" and "TAG set_view"; yields 0 when the file
 * is open, with its FILETYPE to free after the close. */
static int open_strided(const char *tag, const char *dir, const char *name, int block, int count,
                        MPI_File *fh, MPI_Datatype *filetype) {
    char path[4096], what[64];
    join(path, dir, name);
    snprintf(what, sizeof what, "%s open create|rdwr", tag);
    if (mpi_show(what, MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, fh)))
        return 1;
    MPI_Type_vector(count, block, block * size, MPI_INT, filetype);
    MPI_Type_commit(filetype);
    snprintf(what, sizeof what, "%s set_view", tag);
    mpi_show(what, MPI_File_set_view(*fh, (MPI_Offset)rank * block * sizeof(int), MPI_INT, *filetype, "native",
                                     MPI_INFO_NULL));
    return 0;
}

enum { BLOCK = 1024, BLOCKS = 64 };

static void view_file(const char *dir) {
    MPI_File fh;
    MPI_Datatype filetype;
    if (open_strided("view", dir, "mpiio.view.dat", BLOCK, BLOCKS, &fh, &filetype)) return;

    int n = BLOCK * BLOCKS;
    int *data = malloc(n * sizeof(int)), *back = calloc(n, sizeof(int));
    for (int i = 0; i < n; i++) data[i] = rank * 1000003 + i;
    MPI_Status status;

    /* First half collective through the individual pointer, second half
     * independent at an explicit offset (in etypes of the view). */
    mpi_show("view write_all", MPI_File_write_all(fh, data, n / 2, MPI_INT, &status));
    show_count("view write_all", &status, MPI_INT);
    show_position("view after write_all", fh);
    mpi_show("view write_at", MPI_File_write_at(fh, n / 2, data + n / 2, n / 2, MPI_INT, &status));
    show_count("view write_at", &status, MPI_INT);
    mpi_show("view sync", MPI_File_sync(fh));
    show_size("view", fh);

    /* Read back: collective at offset 0, then independent through the
     * pointer after a seek, with a contiguous-in-memory vector type. */
    mpi_show("view read_at_all", MPI_File_read_at_all(fh, 0, back, n, MPI_INT, &status));
    show_count("view read_at_all", &status, MPI_INT);
    say("view read_at_all: crc %08x same %d", crc(back, n * sizeof(int)), !memcmp(back, data, n * sizeof(int)));
    mpi_show("view seek set", MPI_File_seek(fh, 100, MPI_SEEK_SET));
    memset(back, 0, n * sizeof(int));
    mpi_show("view read", MPI_File_read(fh, back, 500, MPI_INT, &status));
    show_count("view read", &status, MPI_INT);
    say("view read: same %d", !memcmp(back, data + 100, 500 * sizeof(int)));
    show_position("view after read", fh);
    mpi_show("view seek end", MPI_File_seek(fh, 0, MPI_SEEK_END));
    show_position("view at end", fh);
    /* Reading past the end: a count of 0. */
    mpi_show("view read past end", MPI_File_read(fh, back, 10, MPI_INT, &status));
    show_count("view read past end", &status, MPI_INT);

    int atomic = -1;
    mpi_show("view set_atomicity 1", MPI_File_set_atomicity(fh, 1));
    MPI_File_get_atomicity(fh, &atomic);
    say("view atomicity %d", atomic);
    mpi_show("view set_atomicity 0", MPI_File_set_atomicity(fh, 0));
    int amode = -1;
    MPI_File_get_amode(fh, &amode);
    say("view amode %d", amode);
    mpi_show("view close", MPI_File_close(&fh));
    MPI_Type_free(&filetype);
    free(data);
    free(back);
}

/* Shared file pointer: ordered writes (rank order), then ordered reads,
 * then write_shared by rank 0 only. */
static void shared_pointer_file(const char *dir) {
    char path[4096];
    join(path, dir, "mpiio.shared.dat");
    MPI_File fh;
    if (mpi_show("shared open create|rdwr",
                 MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh)))
        return;
    char line[200];
    int len = snprintf(line, sizeof line, "rank %d of %d writes this line in rank order\n", rank, size);
    MPI_Status status;
    mpi_show("shared write_ordered", MPI_File_write_ordered(fh, line, len, MPI_CHAR, &status));
    show_count("shared write_ordered", &status, MPI_CHAR);
    MPI_Offset at = -1;
    MPI_File_get_position_shared(fh, &at);
    say("shared position after write_ordered %lld", (long long)at);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        const char *tail = "rank 0 alone appends this through the shared pointer\n";
        mpi_show("shared write_shared", MPI_File_write_shared(fh, tail, (int)strlen(tail), MPI_CHAR, &status));
        show_count("shared write_shared", &status, MPI_CHAR);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mpi_show("shared seek_shared 0", MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    char back[200] = {0};
    mpi_show("shared read_ordered", MPI_File_read_ordered(fh, back, len, MPI_CHAR, &status));
    show_count("shared read_ordered", &status, MPI_CHAR);
    say("shared read_ordered: same %d", !memcmp(back, line, len));
    show_size("shared", fh);
    mpi_show("shared close", MPI_File_close(&fh));
}

/* Nonblocking and split-collective transfers, each rank in its own
 * contiguous region of 64 KiB. */
static void nonblocking_file(const char *dir) {
    char path[4096];
    join(path, dir, "mpiio.nb.dat");
    MPI_File fh;
    if (mpi_show("nb open create|wronly",
                 MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh)))
        return;
    enum { REGION = 65536 };
    unsigned char *data = malloc(REGION);
    fill(data, REGION, rank + 7, 0);
    MPI_Offset base = (MPI_Offset)rank * REGION;
    MPI_Request requests[3];
    MPI_Status statuses[3];
    mpi_show("nb iwrite_at", MPI_File_iwrite_at(fh, base, data, REGION / 4, MPI_BYTE, &requests[0]));
    mpi_show("nb seek", MPI_File_seek(fh, base + REGION / 4, MPI_SEEK_SET));
    mpi_show("nb iwrite", MPI_File_iwrite(fh, data + REGION / 4, REGION / 4, MPI_BYTE, &requests[1]));
    mpi_show("nb iwrite_at_all",
             MPI_File_iwrite_at_all(fh, base + REGION / 2, data + REGION / 2, REGION / 4, MPI_BYTE, &requests[2]));
    mpi_show("nb waitall", MPI_Waitall(3, requests, statuses));
    for (int i = 0; i < 3; i++) show_count("nb request", &statuses[i], MPI_BYTE);
    MPI_Status status;
    mpi_show("nb write_at_all_begin",
             MPI_File_write_at_all_begin(fh, base + 3 * REGION / 4, data + 3 * REGION / 4, REGION / 4, MPI_BYTE));
    mpi_show("nb write_at_all_end", MPI_File_write_at_all_end(fh, data + 3 * REGION / 4, &status));
    show_count("nb write_at_all_end", &status, MPI_BYTE);
    show_size("nb", fh);
    mpi_show("nb close", MPI_File_close(&fh));

    /* Read it back the same ways, through a read-only open. */
    if (mpi_show("nb open rdonly", MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh))) {
        free(data);
        return;
    }
    unsigned char *back = calloc(REGION, 1);
    MPI_Request request;
    mpi_show("nb iread_at", MPI_File_iread_at(fh, base, back, REGION / 2, MPI_BYTE, &request));
    int done = 0;
    while (!done) MPI_Test(&request, &done, &status);
    show_count("nb iread_at", &status, MPI_BYTE);
    mpi_show("nb read_at_all_begin", MPI_File_read_at_all_begin(fh, base + REGION / 2, back + REGION / 2, REGION / 2, MPI_BYTE));
    mpi_show("nb read_at_all_end", MPI_File_read_at_all_end(fh, back + REGION / 2, &status));
    show_count("nb read_at_all_end", &status, MPI_BYTE);
    say("nb read back: same %d", !memcmp(back, data, REGION));
    /* Writing through a read-only handle fails the same way everywhere. */
    mpi_show("nb write on rdonly", MPI_File_write_at(fh, base, data, 10, MPI_BYTE, &status));
    mpi_show("nb close", MPI_File_close(&fh));
    free(back);
    free(data);
}

/* A nonblocking write and read through a view of more pieces (2100) than
 * OMPIO hands to aio_* at once (2048): it posts the rest from inside its
 * progress engine, in MPI_Wait, and releases its region lock there too. */
static void many_pieces_file(const char *dir) {
    enum { PIECE = 16, PIECES = 2100 };
    MPI_File fh;
    MPI_Datatype filetype;
    if (open_strided("many", dir, "mpiio.many.dat", PIECE, PIECES, &fh, &filetype)) return;
    int n = PIECE * PIECES;
    int *data = malloc(n * sizeof(int)), *back = calloc(n, sizeof(int));
    for (int i = 0; i < n; i++) data[i] = rank * 7919 + i;
    MPI_Request request;
    MPI_Status status;
    mpi_show("many iwrite_at", MPI_File_iwrite_at(fh, 0, data, n, MPI_INT, &request));
    mpi_show("many wait", MPI_Wait(&request, &status));
    show_count("many iwrite_at", &status, MPI_INT);
    show_size("many", fh);
    mpi_show("many iread_at", MPI_File_iread_at(fh, 0, back, n, MPI_INT, &request));
    mpi_show("many wait", MPI_Wait(&request, &status));
    show_count("many iread_at", &status, MPI_INT);
    say("many read back: same %d", !memcmp(back, data, n * sizeof(int)));
    mpi_show("many close", MPI_File_close(&fh));
    MPI_Type_free(&filetype);
    free(data);
    free(back);
}

/* Size changes, append mode, exclusive create, delete-on-close, delete. */
static void modes_and_sizes(const char *dir) {
    char path[4096];
    MPI_File fh;
    MPI_Status status;

    join(path, dir, "mpiio.size.dat");
    if (!mpi_show("size open create|rdwr",
                  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh))) {
        mpi_show("size set_size 3000", MPI_File_set_size(fh, 3000));
        show_size("size after set_size", fh);
        /* Shrink before preallocating: Open MPI 4.1's OMPIO, plain, fails
         * a shrinking set_size after a preallocate with MPI_ERR_OTHER on
         * one rank, which then skips the barrier the other waits in (3 of
         * 12 plain runs hung on a loaded machine; 0 of 16 in this order). */
        mpi_show("size set_size 1000", MPI_File_set_size(fh, 1000));
        show_size("size after shrink", fh);
        mpi_show("size preallocate 5000", MPI_File_preallocate(fh, 5000));
        show_size("size after preallocate", fh);
        mpi_show("size close", MPI_File_close(&fh));
    }

    join(path, dir, "mpiio.append.dat");
    if (!mpi_show("append open create|wronly|append",
                  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_APPEND,
                                MPI_INFO_NULL, &fh))) {
        show_position("append at open", fh);
        char line[100];
        int len = snprintf(line, sizeof line, "append from rank %d\n", rank);
        mpi_show("append write_ordered", MPI_File_write_ordered(fh, line, len, MPI_CHAR, &status));
        mpi_show("append close", MPI_File_close(&fh));
    }

    /* EXCL on a file that exists: the same error class on every rank. */
    join(path, dir, "mpiio.append.dat");
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    mpi_show("excl open of an existing file", rc);
    if (rc == MPI_SUCCESS) MPI_File_close(&fh);

    /* A missing file opened read-only. */
    join(path, dir, "mpiio.missing.dat");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    mpi_show("rdonly open of a missing file", rc);
    if (rc == MPI_SUCCESS) MPI_File_close(&fh);

    /* DELETE_ON_CLOSE: gone after the close. */
    join(path, dir, "mpiio.temp.dat");
    if (!mpi_show("temp open create|rdwr|delete_on_close",
                  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh))) {
        mpi_show("temp write_at", MPI_File_write_at(fh, rank * 10, "0123456789", 10, MPI_CHAR, &status));
        mpi_show("temp close", MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    say("temp exists after close: %d", access(path, F_OK) == 0);

    /* MPI_File_delete by rank 0, then a second delete fails. */
    join(path, dir, "mpiio.gone.dat");
    if (!mpi_show("gone open create|wronly",
                  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh)))
        mpi_show("gone close", MPI_File_close(&fh));
    if (rank == 0) {
        mpi_show("gone delete", MPI_File_delete(path, MPI_INFO_NULL));
        mpi_show("gone delete again", MPI_File_delete(path, MPI_INFO_NULL));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    say("gone exists after delete: %d", access(path, F_OK) == 0);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        fprintf(stderr, "usage: %s SHARED_DIR LOCAL_DIR\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Errors are returned, not fatal, so that they can be compared. */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    tag = "shared";
    view_file(argv[1]);
    shared_pointer_file(argv[1]);
    nonblocking_file(argv[1]);
    many_pieces_file(argv[1]);
    modes_and_sizes(argv[1]);
    say("rank %d done", rank);
    MPI_Finalize();
    return 0;
}
