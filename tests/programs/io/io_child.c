/* Processes that are not MPI ranks: a fork()ed child and a system() shell
 * write files on the shared directory themselves. Under redio they pass
 * through completely (under r replicas they run r times and write the same
 * bytes at the same place: no O_TRUNC, so the file is never seen short).
 * The parent's own shared I/O, before and after, stays coordinated.
 *
 * Usage: io_child SHARED_DIR LOCAL_DIR */
#include "io.h"
#include <sys/wait.h>

static int rank;

static void write_file(const char *dir, const char *name_format, const char *text) {
    char name[64], path[4096];
    snprintf(name, sizeof name, name_format, rank);
    join(path, dir, name);
    int fd = FD("open", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
    DO("write", write(fd, text, strlen(text)));
    DO("close", close(fd));
}

static void read_file(const char *dir, const char *name_format) {
    char name[64], path[4096];
    static char buffer[4096];
    snprintf(name, sizeof name, name_format, rank);
    join(path, dir, name);
    int fd = FD("open for read", open(path, O_RDONLY));
    READ("read", read(fd, buffer, sizeof buffer), buffer);
    DO("close", close(fd));
}

int main(int argc, char **argv) {
    rank = start(&argc, &argv, 2, "SHARED_DIR LOCAL_DIR");
    const char *shared = argv[1], *local = argv[2];
    say("io_child rank %d", rank);

    tag = "parent";
    write_file(shared, "parent-before.%d.txt", "parent before the child\n");
    write_file(local, "parent-local.%d.txt", "parent, node-local\n");

    /* A forked child: plain open/write/close, then _exit. */
    char text[128], name[64], path[4096];
    snprintf(text, sizeof text, "written by the forked child of rank %d\n", rank);
    snprintf(name, sizeof name, "child.%d.txt", rank);
    join(path, shared, name);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        int ok = fd >= 0 && pwrite(fd, text, strlen(text), 0) == (ssize_t)strlen(text);
        ok = close(fd) == 0 && ok;
        _exit(ok ? 0 : 1);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    say("fork: child exited %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);

    /* system(): a shell, with redirection that does not truncate. */
    char command[8192];
    snprintf(command, sizeof command, "printf 'written by system() for rank %d\\n' 1<>'%s/system.%d.txt'", rank,
             shared, rank);
    status = system(command);
    say("system: exited %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);

    /* The parent reads what they wrote (coordinated), and writes again. */
    read_file(shared, "child.%d.txt");
    read_file(shared, "system.%d.txt");
    write_file(shared, "parent-after.%d.txt", "parent after the child\n");
    read_file(local, "parent-local.%d.txt");

    say("io_child rank %d done", rank);
    MPI_Finalize();
    return 0;
}
