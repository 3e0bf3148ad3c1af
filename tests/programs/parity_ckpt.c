/* A checkpointing application for the lazy-parity tests: every rank writes
 * node-local files of unequal sizes (one empty on even ranks, one in a
 * subdirectory) under BASE/r<replica>/rank<rank>/, then either finishes
 * (parity.when: finalize) or, with "protect", calls redio_protect() on
 * them first ("protect-bad": rank 1 passes a relative path, which must
 * fail the call on every rank). With "barrier" (parity.when: close) it
 * calls MPI_Barrier after closing its files, prints how many redundancy
 * files its directory holds then ("after-barrier N"), writes its first
 * file again with new contents, and calls MPI_Barrier once more: the
 * redundancy must then match the new contents. With "bytes-name" every
 * rank also writes sub/name-\xff\xfe.bin, a file name that is not UTF-8
 * (Unix names are bytes; parity must protect it as it is). With
 * "stale-tmp" every rank leaves a file named like a redundancy file's
 * temporary in its directory, held by nobody: what a replica killed in
 * the protect step leaves (the protect step must remove it). With
 * "shared DIR" it then writes DIR/out.<rank> (a shared file: coordinated
 * operations, where REDIO_TEST_DIE can kill a replica) before
 * MPI_Finalize.
 *
 * usage: parity_ckpt BASE SIZE [protect|protect-bad|barrier|bytes-name|stale-tmp|shared DIR]
 * SIZE scales the files (bytes of the first file of rank 0). */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "redio.h"

#pragma weak redio_replica_info
#pragma weak redio_protect

static void write_file(const char *path, long size, int seed) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long i = 0; i < size; i++)
        fputc((int)((i * 131 + seed * 7 + i / 251) & 0xff), f);
    fclose(f);
}

/* Redundancy files (redio-parity.*.rdp) in DIR. */
static int redundancy_files(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, "redio-parity.", 13) == 0 && strstr(e->d_name, ".rdp"))
            n++;
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: parity_ckpt BASE SIZE [protect]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank = 0, replica = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (redio_replica_info)
        redio_replica_info(&replica, NULL, NULL);
    long size = atol(argv[2]);
    char dir[4096], sub[4200], a[4300], b[4300], c[4300];
    snprintf(dir, sizeof dir, "%s/r%d", argv[1], replica);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/r%d/rank%d", argv[1], replica, rank);
    mkdir(dir, 0755);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0755);
    snprintf(a, sizeof a, "%s/ckpt.dat", dir);
    snprintf(b, sizeof b, "%s/extra.dat", dir);
    snprintf(c, sizeof c, "%s/part.bin", sub);
    write_file(a, size + 7919L * rank, rank);
    write_file(b, rank % 2 ? size / 3 + rank : 0, rank + 100);
    write_file(c, 1 + 13L * rank, rank + 200);
    chmod(a, 0600 + rank);
    if (argc > 3 && strcmp(argv[3], "bytes-name") == 0) {
        char d[4400];
        snprintf(d, sizeof d, "%s/name-\xff\xfe.bin", sub);
        write_file(d, 5000 + 31L * rank, rank + 300);
    }
    if (argc > 3 && strcmp(argv[3], "stale-tmp") == 0) {
        char t[4400];
        snprintf(t, sizeof t, "%s/.redio-parity.s9.m%d.rdp.redio-tmp.4194303.0", dir, rank);
        write_file(t, 12345, rank);
    }
    int rc = 0;
    if (argc > 3 && strcmp(argv[3], "barrier") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        printf("after-barrier %d\n", redundancy_files(dir));
        write_file(a, size + 7919L * rank + 11, rank + 50);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (argc > 3 && strncmp(argv[3], "protect", 7) == 0) {
        const char *files[] = {a, b, c};
        if (strcmp(argv[3], "protect-bad") == 0 && rank == 1)
            files[1] = "relative.dat";
        rc = redio_protect ? redio_protect(files, 3) : -2;
        printf("protect %d\n", rc);
    }
    if (argc > 4 && strcmp(argv[3], "shared") == 0) {
        char out[4300], line[64];
        snprintf(out, sizeof out, "%s/out.%d", argv[4], rank);
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        for (int i = 0; fd >= 0 && i < 4; i++) {
            int n = snprintf(line, sizeof line, "rank %d line %d\n", rank, i);
            if (write(fd, line, n) != n)
                rc = 1;
        }
        if (fd < 0 || close(fd) != 0)
            rc = 1;
    }
    MPI_Finalize();
    return rc == 0 ? 0 : 1;
}
