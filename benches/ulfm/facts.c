/* What survivors see under Open MPI 5 + ULFM when one process dies
 * (docs/fault-tolerance.md, "Open MPI 5 / ULFM facts"; run by facts.sh).
 *
 * facts VICTIM HOW TEST END
 *   HOW:  kill (SIGKILL to itself) | segv | exit (_exit(1)) | exit0 (_exit(0)) | cexit (exit(1))
 *   TEST: irecv (pending Irecv + Test on a dup with MPI_ERRORS_RETURN)
 *         | coll (Barrier on the dup) | fatal (Barrier on MPI_COMM_WORLD, default errhandler)
 *   END:  finalize | exit0 (rank VICTIM+1 leaves with _exit(0), the others
 *         finalize 2 s later) | leave1 (return from main without finalize)
 * Rank 0 also prints whether MPI_Comm_dup/split children inherit the
 * parent's MPI_ERRORS_RETURN. */
#include <mpi.h>
#include <mpi-ext.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static const char *cls(int rc) {
  int c; if (rc == MPI_SUCCESS) return "SUCCESS";
  MPI_Error_class(rc, &c);
  if (c == MPIX_ERR_PROC_FAILED) return "PROC_FAILED";
  if (c == MPIX_ERR_PROC_FAILED_PENDING) return "PROC_FAILED_PENDING";
  if (c == MPIX_ERR_REVOKED) return "REVOKED";
  static char b[32]; snprintf(b, sizeof b, "class%d", c); return b;
}
int main(int argc, char **argv) {
  int victim = atoi(argv[1]); const char *how = argv[2], *test = argv[3], *end = argv[4];
  MPI_Init(&argc, &argv);
  int rank, size; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (strcmp(test, "fatal")) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm dup, split; MPI_Comm_dup(MPI_COMM_WORLD, &dup); MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &split);
  MPI_Errhandler e1, e2; MPI_Comm_get_errhandler(dup, &e1); MPI_Comm_get_errhandler(split, &e2);
  if (rank == 0) printf("inherit dup=%d split=%d\n", e1 == MPI_ERRORS_RETURN, e2 == MPI_ERRORS_RETURN);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (rank == victim) { usleep(500000); if (!strcmp(how, "kill")) kill(getpid(), SIGKILL); else if (!strcmp(how, "segv")) raise(SIGSEGV); else if (!strcmp(how, "cexit")) exit(1); else if (!strcmp(how, "exit0")) _exit(0); else _exit(1); }
  int rc;
  if (!strcmp(test, "irecv")) {
    int x, flag = 0; MPI_Request r; MPI_Irecv(&x, 1, MPI_INT, victim, 7, dup, &r);
    do { rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE); if (!flag && rc == MPI_SUCCESS) usleep(1000); } while (!flag && rc == MPI_SUCCESS && MPI_Wtime() - t0 < 30);
  } else if (!strcmp(test, "coll")) { rc = MPI_Barrier(dup);
  } else { rc = MPI_Barrier(MPI_COMM_WORLD); }
  printf("rank %d: %s after %.3f s\n", rank, cls(rc), MPI_Wtime() - t0 - 0.5); fflush(stdout);
  if (!strcmp(end, "exit0")) { if (rank == (victim + 1) % size) _exit(0); sleep(2); printf("rank %d alive after peer exit0\n", rank); fflush(stdout); MPI_Finalize(); }
  else if (!strcmp(end, "finalize")) { rc = MPI_Finalize(); printf("rank %d finalize %d\n", rank, rc); }
  else { sleep(1); }
  fflush(stdout); return 0;
}
