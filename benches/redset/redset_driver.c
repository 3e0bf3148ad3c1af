/* A timing driver for redset (ECP-VeloC's redundancy library), written for
 * redio's side-by-side comparison (benches/redset/compare.py). Built by
 * that script against an installed redset (REDSET_PREFIX); it uses only
 * redset's public API (redset.h).
 *
 *   redset_driver apply   SCHEME SET_SIZE NAME_TEMPLATE FILE_TEMPLATE...
 *   redset_driver recover NAME_TEMPLATE
 *   redset_driver noop
 *
 * SCHEME: xor | rs:K | partner:C | single. Templates have "{rank}"
 * replaced by the MPI rank: NAME_TEMPLATE is the prefix of the rank's
 * redset files (a directory ending in '/' puts them there), FILE_TEMPLATE
 * the rank's data file(s). Failure group of rank r: "node<r>" (one node
 * per rank, as redio's --groups 'node{rank}').
 *
 * All ranks start each step together (a barrier); each times its own call
 * with MPI_Wtime; rank 0 prints one line:
 *
 *   redset-driver op=apply ranks=N bytes=B seconds=MAX min_seconds=MIN create_seconds=C rc=0
 *
 * seconds is the slowest rank's redset_apply (or redset_recover), i.e. how
 * long the collective operation took; create_seconds the slowest rank's
 * redset_create_* before it (an application creates its descriptor once
 * and may apply it at every checkpoint); bytes the data of all ranks
 * (apply) or 0 (recover). "noop" measures MPI start-up alone (wall time of the
 * mpiexec around it). Exit status 0 only if redset succeeded on every rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "redset.h"

static char *expand(const char *template, int rank) {
  const char *key = "{rank}";
  size_t klen = strlen(key);
  char digits[32];
  snprintf(digits, sizeof digits, "%d", rank);
  size_t cap = strlen(template) + 1;
  for (const char *p = strstr(template, key); p; p = strstr(p + klen, key))
    cap += strlen(digits);
  char *out = malloc(cap), *o = out;
  if (!out) return NULL;
  for (const char *p = template; *p;) {
    if (strncmp(p, key, klen) == 0) {
      o += sprintf(o, "%s", digits);
      p += klen;
    } else {
      *o++ = *p++;
    }
  }
  *o = '\0';
  return out;
}

static int create(const char *scheme, int set_size, const char *group, redset *d) {
  int param = 0;
  if (strcmp(scheme, "xor") == 0)
    return redset_create_xor(MPI_COMM_WORLD, group, set_size, d);
  if (sscanf(scheme, "rs:%d", &param) == 1)
    return redset_create_rs(MPI_COMM_WORLD, group, set_size, param, d);
  if (sscanf(scheme, "partner:%d", &param) == 1)
    return redset_create_partner(MPI_COMM_WORLD, group, set_size, param, d);
  if (strcmp(scheme, "partner") == 0)
    return redset_create_partner(MPI_COMM_WORLD, group, set_size, 1, d);
  if (strcmp(scheme, "single") == 0)
    return redset_create_single(MPI_COMM_WORLD, group, d);
  return -1;
}

static void usage(void) {
  fprintf(stderr,
          "usage: redset_driver apply SCHEME SET_SIZE NAME_TEMPLATE FILE_TEMPLATE...\n"
          "       redset_driver recover NAME_TEMPLATE\n"
          "       redset_driver noop\n");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  const char *op = argc > 1 ? argv[1] : "";
  int apply = strcmp(op, "apply") == 0, recover = strcmp(op, "recover") == 0;
  if (strcmp(op, "noop") == 0) {
    MPI_Finalize();
    return 0;
  }
  if (!(apply && argc >= 6) && !(recover && argc == 3)) {
    if (rank == 0) usage();
    MPI_Finalize();
    return 2;
  }

  if (redset_init() != REDSET_SUCCESS) {
    fprintf(stderr, "rank %d: redset_init failed\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  char group[64];
  snprintf(group, sizeof group, "node%d", rank);
  char *name = expand(apply ? argv[4] : argv[2], rank);

  int nfiles = apply ? argc - 5 : 0;
  char **files = calloc(nfiles + 1, sizeof *files);
  double my_bytes = 0;
  for (int i = 0; i < nfiles; i++) {
    files[i] = expand(argv[5 + i], rank);
    struct stat st;
    if (stat(files[i], &st) != 0) {
      fprintf(stderr, "rank %d: %s: missing\n", rank, files[i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    my_bytes += (double)st.st_size;
  }

  redset d = NULL;
  int rc;
  double create_s = 0, t0, t1;
  if (apply) {
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    rc = create(argv[2], atoi(argv[3]), group, &d);
    create_s = MPI_Wtime() - t0;
    if (rc != REDSET_SUCCESS) {
      fprintf(stderr, "rank %d: redset_create failed for scheme %s\n", rank, argv[2]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    rc = redset_apply(nfiles, (const char **)files, name, d);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    rc = redset_recover(MPI_COMM_WORLD, name, &d);
  }
  t1 = MPI_Wtime();

  double mine = t1 - t0, slowest, fastest, bytes, create_max;
  int bad = rc != REDSET_SUCCESS, any_bad;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&mine, &fastest, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
  MPI_Reduce(&create_s, &create_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&my_bytes, &bytes, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("redset-driver op=%s ranks=%d bytes=%.0f seconds=%.6f min_seconds=%.6f "
           "create_seconds=%.6f rc=%d\n",
           op, ranks, bytes, slowest, fastest, create_max, any_bad);

  if (d) redset_delete(&d);
  redset_finalize();
  for (int i = 0; i < nfiles; i++) free(files[i]);
  free(files);
  free(name);
  MPI_Finalize();
  return any_bad ? 1 : 0;
}
