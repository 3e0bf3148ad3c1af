/* A static shim for tests/outcome.rs: the process of launcher rank
 * $SHIM_VICTIM kills itself with SIGKILL before any library is loaded (a
 * static executable loads none, LD_PRELOAD's libredio.so included); every
 * other process runs `argv[1] argv[2]...` in its place.
 *
 * Compiled with `cc -static`, not mpicc.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int launcher_rank(void) {
    const char *r = getenv("PMI_RANK");
    if (!r) r = getenv("OMPI_COMM_WORLD_RANK");
    return r ? atoi(r) : -1;
}

int main(int argc, char **argv) {
    const char *victim = getenv("SHIM_VICTIM");
    if (argc < 2 || !victim) {
        fprintf(stderr, "usage: SHIM_VICTIM=RANK static_kill PROGRAM [ARGS...]\n");
        return 2;
    }
    if (launcher_rank() == atoi(victim)) raise(SIGKILL);
    execv(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
