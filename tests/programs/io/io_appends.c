/* Appends from every rank to one shared log (tests/interposition/appends.rs).
 *
 * Each rank appends LINES fixed-length lines to SHARED_DIR/appends.log
 * through an O_APPEND descriptor and LINES more to SHARED_DIR/appends.txt
 * through an fopen("a") stream flushed after each line, with no barrier in
 * between: the ranks' appends interleave. In a plain run the kernel places
 * every append at the end in one step, so no line is lost or overwritten,
 * and the descriptor's offset after each write is the end of that line.
 * After a barrier every rank checks that each of its lines sits where its
 * offset said, and rank 0 checks that each file holds every line of every
 * rank exactly once. The log is deterministic; the order of lines in the
 * files is not.
 *
 *   io_appends SHARED_DIR [LOCAL_DIR]    (LOCAL_DIR: ignored)
 */
#include "io.h"

#define LINES 150
#define LINE_LEN 24

static void line_of(char *out, int rank, int i) {
    snprintf(out, LINE_LEN + 1, "rank %04d line %06d..\n", rank, i);
}

/* Rank 0: does `path` hold LINES lines of each of `size` ranks, once? */
static void check_whole(const char *what, const char *path, int size) {
    FILE *fp = fopen(path, "r");
    if (!fp) {
        printf("%s: cannot open: %s\n", what, errname(errno));
        return;
    }
    static int seen[64][LINES];
    memset(seen, 0, sizeof seen);
    char buf[128];
    long lines = 0, bad = 0;
    while (fgets(buf, sizeof buf, fp)) {
        int r, i;
        lines++;
        if (strlen(buf) != LINE_LEN || sscanf(buf, "rank %d line %d", &r, &i) != 2 || r < 0 ||
            r >= size || r >= 64 || i < 0 || i >= LINES)
            bad++;
        else
            seen[r][i]++;
    }
    fclose(fp);
    long once = 0;
    for (int r = 0; r < size && r < 64; r++)
        for (int i = 0; i < LINES; i++)
            once += seen[r][i] == 1;
    printf("%s: %ld lines, %ld malformed, %ld of %d present exactly once\n", what, lines, bad,
           once, size * LINES);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 2) {
        fprintf(stderr, "usage: io_appends SHARED_DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tag = "shared";
    char log_path[4096], txt_path[4096], line[LINE_LEN + 1];
    join(log_path, argv[1], "appends.log");
    join(txt_path, argv[1], "appends.txt");
    static long ends[LINES];

    int fd = FD("open(O_APPEND) log", open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644));
    FILE *fp = STREAM("fopen(a) txt", fopen(txt_path, "a"));
    long wrong_count = 0, flush_errors = 0;
    for (int i = 0; i < LINES; i++) {
        line_of(line, rank, i);
        if (write(fd, line, LINE_LEN) != LINE_LEN)
            wrong_count++;
        ends[i] = lseek(fd, 0, SEEK_CUR);
        if (fputs(line, fp) < 0 || fflush(fp) != 0)
            flush_errors++;
    }
    printf("[shared] %d appends: %ld short, %ld stream errors\n", LINES, wrong_count, flush_errors);
    DO("close log", close(fd));
    DO("fclose txt", fclose(fp));
    MPI_Barrier(MPI_COMM_WORLD);

    /* Each of this rank's lines ends where the descriptor's offset said. */
    fd = FD("open log", open(log_path, O_RDONLY));
    long misplaced = 0;
    char back[LINE_LEN];
    for (int i = 0; i < LINES; i++) {
        line_of(line, rank, i);
        if (ends[i] < LINE_LEN ||
            pread(fd, back, LINE_LEN, ends[i] - LINE_LEN) != LINE_LEN ||
            memcmp(back, line, LINE_LEN) != 0)
            misplaced++;
    }
    printf("[shared] lines not at the offset the descriptor reported: %ld\n", misplaced);
    DO("close log", close(fd));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        check_whole("[shared] appends.log", log_path, size);
        check_whole("[shared] appends.txt", txt_path, size);
    }
    say("rank %d done", rank);
    MPI_Finalize();
    return 0;
}
