/* The copy floor of a 2-member redundancy set (benches/redset/compare.py):
 * the data movement that any MPI tool protecting two ranks' files with
 * XOR (2 members) or PARTNER(1) must do, and nothing else. With two
 * members each rank's redundancy is its partner's data, so:
 *
 *   copy_floor apply   DATA_TEMPLATE COPY_TEMPLATE [mmap]
 *     every rank reads its data file DATA in 1 MiB pieces (pread into
 *     page-aligned buffers), sends each piece to the other rank (MPI_Isend,
 *     double-buffered), receives the other's pieces and writes them to COPY
 *     (pwrite, starting the write-back every 8 MiB), then fsyncs and
 *     closes COPY.
 *     "mmap": send straight from a read-only mapping of DATA (MAP_POPULATE)
 *     instead of reading it: one copy per byte fewer, a design whose cost
 *     this measures (a mapped file truncated under the sender raises
 *     SIGBUS, where pread returns short).
 *   copy_floor rebuild LOST DATA_TEMPLATE COPY_TEMPLATE
 *     rank LOST (0 or 1) has lost DATA and COPY; the survivor reads its COPY
 *     (the lost rank's data) and its DATA and sends both; the lost rank
 *     writes them to its DATA and COPY, fsyncs and closes them.
 *   copy_floor noop
 *
 * No checksums, headers, temporary files or renames: a floor, not a tool.
 * Templates have "{rank}" replaced by the MPI rank. All ranks start
 * together (a barrier); each times its own work with MPI_Wtime; rank 0
 * prints one line:
 *
 *   copy-floor op=apply ranks=2 bytes=B seconds=MAX rc=0
 *
 * Exit status 0 only if every rank moved every byte. Needs exactly 2 ranks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PIECE (1 << 20)
#define PAGE 4096
/* Write-back is started every this many bytes, as redio does: with one
 * fsync at the end, a disk would write everything then. */
#define WRITEBACK_EVERY (8 << 20)

static int rank;

static char *expand(const char *template) {
  const char *at = strstr(template, "{rank}");
  char *out = malloc(strlen(template) + 32);
  if (!out) return NULL;
  if (!at) return strcpy(out, template);
  sprintf(out, "%.*s%d%s", (int)(at - template), template, rank, at + 6);
  return out;
}

static void fail(const char *what, const char *path) {
  fprintf(stderr, "copy_floor rank %d: %s %s: %s\n", rank, what, path, strerror(errno));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *aligned_piece(void) {
  void *p = NULL;
  if (posix_memalign(&p, PAGE, PIECE) != 0) fail("allocating", "a piece");
  return p;
}

/* MPI_Waitall of two, without GCC's false -Wstringop-overflow on
 * MPI_STATUSES_IGNORE. */
static void wait_both(MPI_Request req[2]) {
  MPI_Wait(&req[0], MPI_STATUS_IGNORE);
  MPI_Wait(&req[1], MPI_STATUS_IGNORE);
}

/* The length of the piece at `off` of `size` bytes. */
static int piece_len(off_t size, off_t off) {
  return size - off < PIECE ? (int)(size - off) : PIECE;
}

/* Posts the send of piece `i` (at `off`) of `fd` to `peer`, double-buffered:
 * read into buffer i % 2 (or taken from `map`, when not NULL) once the send
 * from that buffer two pieces before has completed. */
static void send_piece(int fd, const char *map, char *buf[2], MPI_Request req[2], off_t i,
                       off_t off, int len, int peer, const char *path) {
  int slot = (int)(i & 1);
  MPI_Wait(&req[slot], MPI_STATUS_IGNORE);
  if (!map && pread(fd, buf[slot], len, off) != len) fail("reading", path);
  MPI_Isend(map ? map + off : buf[slot], len, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[slot]);
}

/* Sends `size` bytes of `fd` to `peer`, reading a piece while the one
 * before is on its way. */
static void send_file(int fd, off_t size, int peer, const char *path) {
  char *buf[2] = {aligned_piece(), aligned_piece()};
  MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  for (off_t off = 0, i = 0; off < size; off += PIECE, i++)
    send_piece(fd, NULL, buf, req, i, off, piece_len(size, off), peer, path);
  wait_both(req);
  free(buf[0]);
  free(buf[1]);
}

/* Writes a piece at `off`, starting the write-back of what came before
 * every WRITEBACK_EVERY bytes (the fsync at the end waits for the tail). */
static void write_piece(int fd, const char *buf, int len, off_t off, const char *path) {
  if (pwrite(fd, buf, len, off) != len) fail("writing", path);
  off_t end = off + len;
  if (end % WRITEBACK_EVERY < (off_t)len)
    sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

/* Receives `size` bytes from `peer` into `fd`, then fsyncs it. */
static void recv_file(int fd, off_t size, int peer, const char *path) {
  char *buf = aligned_piece();
  for (off_t off = 0; off < size; off += PIECE) {
    int len = piece_len(size, off);
    MPI_Recv(buf, len, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    write_piece(fd, buf, len, off, path);
  }
  if (fsync(fd) != 0) fail("fsync of", path);
  free(buf);
}

static off_t size_of(int fd, const char *path) {
  struct stat st;
  if (fstat(fd, &st) != 0) fail("stat of", path);
  return st.st_size;
}

static int open_or_fail(const char *path, int flags) {
  int fd = open(path, flags, 0644);
  if (fd < 0) fail("opening", path);
  return fd;
}

/* Each rank sends its DATA to the other and writes the other's to COPY. */
static double apply(const char *data, const char *copy, int use_mmap, double *bytes) {
  int peer = 1 - rank;
  int in = open_or_fail(data, O_RDONLY);
  off_t mine = size_of(in, data), theirs;
  MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, peer, 1, &theirs, sizeof theirs, MPI_BYTE, peer, 1,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  *bytes = (double)mine;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  int out = open_or_fail(copy, O_WRONLY | O_CREAT | O_TRUNC);
  char *map = NULL;
  if (use_mmap && mine > 0) {
    map = mmap(NULL, mine, PROT_READ, MAP_SHARED | MAP_POPULATE, in, 0);
    if (map == MAP_FAILED) fail("mapping", data);
  }
  /* Per piece: post the send of ours (nonblocking, double-buffered), then
   * receive theirs and write it, so both streams flow at once. */
  char *buf = aligned_piece(), *sbuf[2] = {aligned_piece(), aligned_piece()};
  MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  off_t most = mine > theirs ? mine : theirs;
  for (off_t off = 0, i = 0; off < most; off += PIECE, i++) {
    if (off < mine) send_piece(in, map, sbuf, req, i, off, piece_len(mine, off), peer, data);
    if (off < theirs) {
      int len = piece_len(theirs, off);
      MPI_Recv(buf, len, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      write_piece(out, buf, len, off, copy);
    }
  }
  wait_both(req);
  if (fsync(out) != 0) fail("fsync of", copy);
  close(out);
  double t = MPI_Wtime() - t0;
  if (map) munmap(map, mine);
  close(in);
  free(buf);
  free(sbuf[0]);
  free(sbuf[1]);
  return t;
}

/* The survivor sends its COPY then its DATA; the lost rank writes them. */
static double rebuild(int lost, const char *data, const char *copy, double *bytes) {
  int peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  const char *paths[2] = {data, copy};
  if (rank == lost) {
    /* The survivor's COPY is this rank's DATA, and the other way round. */
    for (int f = 0; f < 2; f++) {
      off_t size;
      MPI_Recv(&size, sizeof size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      int fd = open_or_fail(paths[f], O_WRONLY | O_CREAT | O_TRUNC);
      recv_file(fd, size, peer, paths[f]);
      close(fd);
      *bytes += (double)size;
    }
  } else {
    const char *order[2] = {copy, data};
    for (int f = 0; f < 2; f++) {
      int fd = open_or_fail(order[f], O_RDONLY);
      off_t size = size_of(fd, order[f]);
      MPI_Send(&size, sizeof size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      send_file(fd, size, peer, order[f]);
      close(fd);
    }
  }
  return MPI_Wtime() - t0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const char *op = argc > 1 ? argv[1] : "";
  if (strcmp(op, "noop") == 0) {
    MPI_Finalize();
    return 0;
  }
  int is_apply = strcmp(op, "apply") == 0 && (argc == 4 || (argc == 5 && !strcmp(argv[4], "mmap")));
  int is_rebuild = strcmp(op, "rebuild") == 0 && argc == 5 && (!strcmp(argv[2], "0") || !strcmp(argv[2], "1"));
  if (ranks != 2 || !(is_apply || is_rebuild)) {
    if (rank == 0)
      fprintf(stderr, "usage (2 ranks): copy_floor apply DATA_TEMPLATE COPY_TEMPLATE [mmap]\n"
                      "                 copy_floor rebuild LOST DATA_TEMPLATE COPY_TEMPLATE\n"
                      "                 copy_floor noop\n");
    MPI_Finalize();
    return 2;
  }
  double mine_bytes = 0, mine, slowest, bytes;
  if (is_apply) {
    char *data = expand(argv[2]), *copy = expand(argv[3]);
    mine = apply(data, copy, argc == 5, &mine_bytes);
    free(data);
    free(copy);
  } else {
    char *data = expand(argv[3]), *copy = expand(argv[4]);
    mine = rebuild(atoi(argv[2]), data, copy, &mine_bytes);
    free(data);
    free(copy);
  }
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&mine_bytes, &bytes, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("copy-floor op=%s ranks=2 bytes=%.0f seconds=%.6f rc=0\n", op, bytes, slowest);
  MPI_Finalize();
  return 0;
}
