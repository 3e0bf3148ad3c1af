/* Threads and file I/O.
 *
 * Usage: io_threads SHARED_DIR LOCAL_DIR
 *
 * 1. Four threads write and read node-local files (POSIX and stdio) while
 *    the main thread writes a shared file: all of it works under redio.
 * 2. A thread other than the one that called MPI_Init touches shared files:
 *    redio refuses with ENOTSUP. Those result lines start with
 *    "[refusable]": in a plain run they report success, under redio they
 *    must end in "-1 ENOTSUP" (or "NULL ENOTSUP"). The test rewrites the
 *    plain lines accordingly before comparing. */
#include "io.h" /* first: it defines _GNU_SOURCE */
#include <pthread.h>
#include <stdarg.h>

#define THREADS 4
#define BLOCKS 16
#define BLOCK 4096

static int rank;
static const char *shared_dir, *local_dir;

struct local_job {
    int index;
    char log[1024];
};

static void logf_(char *log, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void logf_(char *log, const char *format, ...) {
    size_t used = strlen(log);
    va_list args;
    va_start(args, format);
    vsnprintf(log + used, 1024 - used, format, args);
    va_end(args);
}

static void *local_io(void *arg) {
    struct local_job *job = arg;
    char name[64], path[4096];
    unsigned seed = 100u + (unsigned)(rank * THREADS + job->index);
    static __thread unsigned char block[BLOCK * BLOCKS], back[BLOCK * BLOCKS];

    snprintf(name, sizeof name, "thread.%d.%d.dat", rank, job->index);
    join(path, local_dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    long written = 0;
    for (int b = 0; b < BLOCKS; b++) {
        fill(block, BLOCK, seed, (size_t)b * BLOCK);
        written += write(fd, block, BLOCK);
    }
    long n = pread(fd, back, sizeof back, 0);
    struct stat st = {0};
    fstat(fd, &st);
    logf_(job->log, "thread %d local posix: open %s wrote %ld read %ld crc %08x size %lld close %d\n", job->index,
          fd >= 0 ? "ok" : "failed", written, n, crc(back, n > 0 ? n : 0), (long long)st.st_size, close(fd));

    snprintf(name, sizeof name, "thread.%d.%d.txt", rank, job->index);
    join(path, local_dir, name);
    FILE *fp = fopen(path, "w");
    int printed = 0;
    for (int i = 0; fp && i < 200; i++) printed += fprintf(fp, "thread %d line %d of rank %d\n", job->index, i, rank);
    int closed = fp ? fclose(fp) : -2;
    fp = fopen(path, "r");
    char line[128];
    int lines = 0;
    uint32_t h = 0;
    while (fp && fgets(line, sizeof line, fp)) {
        lines++;
        h ^= crc(line, (long)strlen(line)) + (uint32_t)lines;
    }
    logf_(job->log, "thread %d local stdio: printed %d fclose %d lines %d crc %08x fclose %d\n", job->index, printed,
          closed, lines, h, fp ? fclose(fp) : -2);
    return NULL;
}

/* Runs in a thread that is not the MPI_Init thread. */
struct shared_job {
    int fd;          /* opened by the main thread */
    char log[1024];
};

static void result(char *log, const char *what, long rc, int e) {
    if (rc < 0)
        logf_(log, "[refusable] thread %s: %ld %s\n", what, rc, errname(e));
    else
        logf_(log, "[refusable] thread %s: %ld\n", what, rc);
}

static void *shared_io(void *arg) {
    struct shared_job *job = arg;
    char name[64], path[4096];
    unsigned char data[100];
    fill(data, sizeof data, 7u + (unsigned)rank, 0);

    snprintf(name, sizeof name, "thread-open.%d.dat", rank);
    join(path, shared_dir, name);
    errno = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = errno;
    if (fd >= 0) {
        logf_(job->log, "[refusable] thread open shared: ok\n");
        close(fd);
    } else {
        result(job->log, "open shared", fd, e);
    }

    snprintf(name, sizeof name, "thread-fopen.%d.txt", rank);
    join(path, shared_dir, name);
    errno = 0;
    FILE *fp = fopen(path, "w");
    e = errno;
    if (fp) {
        logf_(job->log, "[refusable] thread fopen shared: ok\n");
        fclose(fp);
    } else {
        logf_(job->log, "[refusable] thread fopen shared: NULL %s\n", errname(e));
    }

    errno = 0;
    long rc = write(job->fd, data, sizeof data);
    result(job->log, "write on shared fd", rc, errno);
    errno = 0;
    rc = pwrite(job->fd, data, 10, 200);
    result(job->log, "pwrite on shared fd", rc, errno);
    unsigned char back[100];
    errno = 0;
    rc = pread(job->fd, back, sizeof back, 0);
    result(job->log, "pread on shared fd", rc, errno);
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        fprintf(stderr, "usage: %s SHARED_DIR LOCAL_DIR\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    shared_dir = argv[1];
    local_dir = argv[2];
    say("io_threads rank %d", rank);

    /* 1. Node-local I/O in 4 threads, shared I/O in the main thread. */
    pthread_t threads[THREADS];
    struct local_job jobs[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t].index = t;
        jobs[t].log[0] = 0;
        pthread_create(&threads[t], NULL, local_io, &jobs[t]);
    }
    tag = "main";
    char name[64], path[4096];
    snprintf(name, sizeof name, "main.%d.dat", rank);
    join(path, shared_dir, name);
    static unsigned char block[BLOCK];
    int fd = FD("open shared", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    long written = 0;
    for (int b = 0; b < BLOCKS; b++) {
        fill(block, BLOCK, 55u + (unsigned)rank, (size_t)b * BLOCK);
        written += write(fd, block, BLOCK);
    }
    say("main wrote shared: %ld", written);
    READ("pread shared", pread(fd, block, BLOCK, 3 * BLOCK), block);
    DO("close shared", close(fd));
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        add("%s", jobs[t].log);
        line_buffer[--line_length] = 0; /* say() adds the last newline */
        end_line();
    }

    /* 2. Shared files from another thread. */
    snprintf(name, sizeof name, "refused.%d.dat", rank);
    join(path, shared_dir, name);
    struct shared_job job = {.fd = FD("open shared for the thread", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644))};
    job.log[0] = 0;
    pthread_t thread;
    pthread_create(&thread, NULL, shared_io, &job);
    pthread_join(thread, NULL);
    add("%s", job.log);
    line_buffer[--line_length] = 0;
    end_line();
    /* The main thread may still use the fd. */
    DO("write on shared fd from main", write(job.fd, "main\n", 5));
    DO("close shared fd", close(job.fd));

    say("io_threads rank %d done", rank);
    MPI_Finalize();
    return 0;
}
