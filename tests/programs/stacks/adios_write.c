/* ADIOS 1 (Debian's 1.13, no XML) as a simulation writes its checkpoint:
 * a group with scalars and a global array decomposed by rank, written with
 * the "MPI" method (ADIOS's MPI-IO transport) for two steps, the second
 * appended, then read back with the BP read API.
 *
 * Usage: adios_write SHARED_DIR LOCAL_DIR
 *
 * Prints a deterministic log per rank. */
#include "io/io.h" /* first: it sets _GNU_SOURCE; crc(), say() */
#include <adios.h>
#include <adios_error.h>
#include <adios_read.h>
#include <sys/time.h>

enum { NX = 512, STEPS = 2 };

/* ADIOS stamps rank 0's wall-clock second into the file (the attributes
 * create_time_epoch and update_time_epoch), so two plain runs differ in
 * those bytes. Linked with -Wl,--wrap=gettimeofday, ADIOS's own calls (it
 * is a static library) get this fixed clock; the MPI library and redio,
 * shared objects, keep the real one. */
int __wrap_gettimeofday(struct timeval *tv, void *tz);
int __wrap_gettimeofday(struct timeval *tv, void *tz) {
    (void)tz;
    tv->tv_sec = 1700000000;
    tv->tv_usec = 0;
    return 0;
}

/* Debian's libadios.a holds ADIOS's NetCDF-4 method, which needs a parallel
 * NetCDF that Debian builds only against Open MPI: linking it into an MPICH
 * program would load two MPI libraries. These stand in for the entry points
 * that method references; they are never called (this program selects
 * another method) and fail if they were. */
#define NC_UNUSED(name) \
    int name(void);     \
    int name(void) { return -1; }
NC_UNUSED(nc_close)
NC_UNUSED(nc_create_par)
NC_UNUSED(nc_def_dim)
NC_UNUSED(nc_def_var)
NC_UNUSED(nc_get_var)
NC_UNUSED(nc_get_vara)
NC_UNUSED(nc_inq_dimid)
NC_UNUSED(nc_inq_dimlen)
NC_UNUSED(nc_inq_varid)
NC_UNUSED(nc_open_par)
NC_UNUSED(nc_put_var)
NC_UNUSED(nc_put_vara)
NC_UNUSED(nc_sync)
NC_UNUSED(nc_var_par_access)

static void check(const char *what, int rc) {
    say("%s: %s", what, rc == 0 ? "ok" : adios_get_last_errmsg());
}

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
    snprintf(path, sizeof path, "%s/checkpoint.bp", argv[1]);

    check("init", adios_init_noxml(MPI_COMM_WORLD));
    adios_set_max_buffer_size(16);
    int64_t group;
    check("declare group", adios_declare_group(&group, "checkpoint", "", adios_stat_default));
    check("select method", adios_select_method(group, "MPI", "", ""));
    /* Dimensions named by scalars of the group, as applications do. */
    adios_define_var(group, "nx", "", adios_integer, "", "", "");
    adios_define_var(group, "gx", "", adios_integer, "", "", "");
    adios_define_var(group, "ox", "", adios_integer, "", "", "");
    adios_define_var(group, "step", "", adios_integer, "", "", "");
    adios_define_var(group, "time", "", adios_double, "", "", "");
    adios_define_var(group, "temperature", "", adios_double, "nx", "gx", "ox");
    adios_define_var(group, "cells", "", adios_integer, "nx", "gx", "ox");

    int nx = NX, gx = NX * size, ox = NX * rank;
    double *temperature = malloc(sizeof(double) * NX);
    int *cells = malloc(sizeof(int) * NX);
    for (int step = 0; step < STEPS; step++) {
        double time = 0.5 * step;
        for (int i = 0; i < NX; i++) {
            temperature[i] = step * 1000.0 + rank * 100.0 + i * 0.25;
            cells[i] = step * 7 + ox + i;
        }
        int64_t fd;
        check("open", adios_open(&fd, "checkpoint", path, step == 0 ? "w" : "a", MPI_COMM_WORLD));
        uint64_t total;
        uint64_t payload = 5 * sizeof(int) + sizeof(double) + NX * (sizeof(double) + sizeof(int));
        check("group size", adios_group_size(fd, payload, &total));
        adios_write(fd, "nx", &nx);
        adios_write(fd, "gx", &gx);
        adios_write(fd, "ox", &ox);
        adios_write(fd, "step", &step);
        adios_write(fd, "time", &time);
        adios_write(fd, "temperature", temperature);
        adios_write(fd, "cells", cells);
        check("close", adios_close(fd));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check("finalize", adios_finalize(rank));

    check("read init", adios_read_init_method(ADIOS_READ_METHOD_BP, MPI_COMM_WORLD, ""));
    ADIOS_FILE *f = adios_read_open_file(path, ADIOS_READ_METHOD_BP, MPI_COMM_WORLD);
    say("read open: %s", f ? "ok" : adios_get_last_errmsg());
    if (!f) MPI_Abort(MPI_COMM_WORLD, 1);
    say("variables %d steps %d..%d", f->nvars, f->current_step, f->last_step);
    ADIOS_VARINFO *info = adios_inq_var(f, "temperature");
    say("temperature: ndim %d dims %llu steps %d", info ? info->ndim : -1,
        info ? (unsigned long long)info->dims[0] : 0ULL, info ? info->nsteps : -1);
    adios_free_varinfo(info);

    /* Every rank reads the whole array of both steps, and its own slab. */
    size_t all = (size_t)STEPS * NX * size;
    double *back = calloc(all, sizeof(double));
    int *cells_back = calloc((size_t)NX, sizeof(int));
    int steps_back[STEPS] = {-1, -1};
    uint64_t start = 0, count = (uint64_t)NX * size;
    ADIOS_SELECTION *whole = adios_selection_boundingbox(1, &start, &count);
    uint64_t mine_start = (uint64_t)ox, mine_count = NX;
    ADIOS_SELECTION *mine = adios_selection_boundingbox(1, &mine_start, &mine_count);
    check("schedule temperature", adios_schedule_read(f, whole, "temperature", 0, STEPS, back));
    check("schedule cells", adios_schedule_read(f, mine, "cells", STEPS - 1, 1, cells_back));
    check("schedule step", adios_schedule_read(f, NULL, "step", 0, STEPS, steps_back));
    check("perform reads", adios_perform_reads(f, 1));
    say("temperature crc %08x", crc(back, all * sizeof(double)));
    say("last cells mine same %d", !memcmp(cells_back, cells, sizeof(int) * NX));
    say("steps %d %d", steps_back[0], steps_back[1]);
    adios_selection_delete(whole);
    adios_selection_delete(mine);
    check("read close", adios_read_close(f));
    check("read finalize", adios_read_finalize_method(ADIOS_READ_METHOD_BP));
    say("rank %d done", rank);
    free(temperature);
    free(cells);
    free(back);
    free(cells_back);
    MPI_Finalize();
    return 0;
}
