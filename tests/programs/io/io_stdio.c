/* stdio file I/O, on SHARED_DIR and then on LOCAL_DIR: fopen, fopen64,
 * fdopen, freopen, freopen64, fclose, fileno, fflush, and through the
 * streams fprintf (__fprintf_chk when fortified), fscanf (__isoc99_fscanf),
 * fgets (__fgets_chk), getline, fread (__fread_chk), fwrite, fseek, ftell,
 * rewind.
 *
 * Usage: io_stdio SHARED_DIR LOCAL_DIR
 *
 * With -D_FILE_OFFSET_BITS=64, fopen and freopen become fopen64 and
 * freopen64. fopen64 and freopen64 are also called by name. */
#include "io.h"

static int rank;
static unsigned seed;

/* The line without its newline. */
static const char *chomp(char *line) {
    size_t n = strlen(line);
    if (n && line[n - 1] == '\n') line[n - 1] = 0;
    return line;
}

/* Prints how a stream call ended: result, and errno when it failed. */
static void show_int(const char *what, long rc, int failed, int e) {
    if (failed)
        say("%s %s: %ld %s", tag, what, rc, errname(e));
    else
        say("%s %s: %ld", tag, what, rc);
}
#define INT(what, expr, failure)                \
    ({                                          \
        errno = 0;                              \
        long rc_ = (long)(expr);                \
        int e_ = errno;                         \
        show_int(what, rc_, rc_ == (failure), e_); \
        rc_;                                    \
    })

/* A text file with numbers, and a binary block after it. */
static void write_and_read(const char *dir) {
    char name[64], path[4096];
    snprintf(name, sizeof name, "stdio.%d.txt", rank);
    join(path, dir, name);

    FILE *fp = STREAM("fopen w", fopen(path, "w"));
    if (!fp) return;
    for (int i = 0; i < 60; i++)
        INT("fprintf", fprintf(fp, "rank %d line %d value %.3f\n", rank, i, i * 0.25 + rank), -1L);
    static unsigned char block[5000], back[8192];
    fill(block, sizeof block, seed, 0);
    for (size_t i = 0; i < sizeof block; i++) block[i] = 'a' + block[i] % 26; /* text, no newline */
    INT("fwrite 5000", fwrite(block, 1, sizeof block, fp), 0L);
    INT("fputc newline", fputc('\n', fp), -1L);
    INT("ftell before flush", ftell(fp), -1L);
    INT("fflush", fflush(fp), -1L);
    INT("fprintf tail", fprintf(fp, "tail of rank %d\n", rank), -1L);
    INT("fclose", fclose(fp), -1L);

    fp = STREAM("fopen64 r", fopen64(path, "r"));
    if (!fp) return;
    char line[256];
    char *got = fgets(line, opaque_int(sizeof line), fp);
    say("%s fgets: %s", tag, got ? chomp(line) : "NULL");
    int r = -1, l = -1;
    double v = -1;
    INT("fscanf 3 fields", fscanf(fp, "rank %d line %d value %lf\n", &r, &l, &v), -1L);
    say("%s fscanf values: %d %d %.3f", tag, r, l, v);
    char *buffer = NULL;
    size_t capacity = 0;
    long n = getline(&buffer, &capacity, fp);
    say("%s getline: %ld crc %08x", tag, n, n > 0 ? crc(buffer, n) : 0);
    INT("ftell", ftell(fp), -1L);
    INT("fseek set 100", fseek(fp, 100, SEEK_SET), -1L);
    INT("ftell", ftell(fp), -1L);
    size_t k = fread(back, 1, opaque(300), fp);
    say("%s fread 300: %zu crc %08x", tag, k, crc(back, k));
    INT("fseek cur -50", fseek(fp, -50, SEEK_CUR), -1L);
    INT("ftell", ftell(fp), -1L);
    INT("fseek end -20", fseek(fp, -20, SEEK_END), -1L);
    got = fgets(line, opaque_int(sizeof line), fp);
    say("%s fgets at end: %s", tag, got ? chomp(line) : "NULL");
    rewind(fp);
    INT("ftell after rewind", ftell(fp), -1L);
    long total = 0;
    uint32_t h = 2166136261u;
    while ((k = fread(back, 1, opaque(1000), fp)) > 0) {
        for (size_t i = 0; i < k; i++) h = (h ^ back[i]) * 16777619u;
        total += (long)k;
    }
    say("%s fread all: %ld crc %08x eof %d error %d", tag, total, h, feof(fp) != 0, ferror(fp) != 0);
    INT("fgetc at eof", fgetc(fp), 0x7fffffffL);
    INT("fclose", fclose(fp), -1L);
    free(buffer);

    snprintf(name, sizeof name, "missing.%d.txt", rank);
    join(path, dir, name);
    STREAM("fopen missing", fopen(path, "r"));
    STREAM("fopen64 missing", fopen64(path, "r"));
}

/* fdopen over open, and fclose closing the fd; fileno; freopen; append.
 * (A stream that failed to open ends the function: its log line says why.) */
static void streams_and_fds(const char *dir, const char *local) {
    char name[64], path[4096], path2[4096];
    snprintf(name, sizeof name, "fdopen.%d.txt", rank);
    join(path, dir, name);

    int fd = FD("open for fdopen", open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    FILE *fp = STREAM("fdopen w", fdopen(fd, "w"));
    if (!fp) return;
    INT("fprintf", fprintf(fp, "through fdopen, rank %d\n", rank), -1L);
    INT("fileno is the fd", fileno(fp) == fd, -1L);
    INT("fclose", fclose(fp), -1L);
    DO("fcntl getfd after fclose", fcntl(fd, F_GETFD));
    /* The number is free again: a node-local file takes it (usually). */
    snprintf(name, sizeof name, "after-fdopen.%d.txt", rank);
    join(path2, local, name);
    int fd2 = FD("open local after fclose", open(path2, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    DO("write local", write(fd2, "written after fdopen+fclose\n", 28));
    DO("close local", close(fd2));

    /* fileno: the stream's bytes and the fd's bytes go to one file. */
    snprintf(name, sizeof name, "fileno.%d.txt", rank);
    join(path, dir, name);
    fp = STREAM("fopen w", fopen(path, "w"));
    if (!fp) return;
    fd = fileno(fp);
    say("%s fileno: %s", tag, fd >= 0 ? "ok" : "-1");
    INT("fprintf", fprintf(fp, "buffered line of rank %d\n", rank), -1L);
    INT("fflush", fflush(fp), -1L);
    DO("write on fileno", write(fd, "direct line\n", 12));
    struct stat st;
    STAT("fstat on fileno", fstat(fd, &st), &st);
    INT("fclose", fclose(fp), -1L);

    /* freopen: the same FILE on another file; freopen64 in append mode. */
    snprintf(name, sizeof name, "fdopen.%d.txt", rank);
    join(path2, dir, name);
    fp = STREAM("fopen r", fopen(path, "r"));
    if (!fp) return;
    fp = STREAM("freopen r other file", freopen(path2, "r", fp));
    if (!fp) return;
    char line[128];
    char *got = fgets(line, opaque_int(sizeof line), fp);
    say("%s fgets after freopen: %s", tag, got ? chomp(line) : "NULL");
    fp = STREAM("freopen64 a", freopen64(path, "a", fp));
    if (!fp) return;
    INT("fprintf appended", fprintf(fp, "appended by freopen64\n"), -1L);
    INT("ftell in append mode", ftell(fp), -1L);
    INT("fclose", fclose(fp), -1L);
    fp = STREAM("fopen a+", fopen(path, "a+"));
    if (!fp) return;
    INT("fputs appended", fputs("appended by a+\n", fp), -1L);
    rewind(fp);
    got = fgets(line, opaque_int(sizeof line), fp);
    say("%s fgets first after a+: %s", tag, got ? chomp(line) : "NULL");
    INT("fclose", fclose(fp), -1L);
    fp = STREAM("fopen r+", fopen(path, "r+"));
    if (!fp) return;
    INT("fseek set 4", fseek(fp, 4, SEEK_SET), -1L);
    INT("fwrite overwrite 4", fwrite("BUFF", 1, 4, fp), 0L);
    INT("fflush", fflush(fp), -1L);
    INT("fclose", fclose(fp), -1L);
    fp = fopen(path, "r");
    if (fp) STREAM("freopen missing", freopen("/nonexistent/redio/x", "r", fp));
}

int main(int argc, char **argv) {
    rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR");
    seed = 29u + (unsigned)rank;
    say("io_stdio rank %d", rank);
    const char *dirs[2] = {argv[1], argv[2]};
    const char *tags[2] = {"shared", "local"};
    for (int i = 0; i < 2; i++) {
        tag = tags[i];
        write_and_read(dirs[i]);
        streams_and_fds(dirs[i], argv[2]);
    }
    INT("fflush all", fflush(NULL), -1L);
    say("io_stdio rank %d done", rank);
    MPI_Finalize();
    return 0;
}
