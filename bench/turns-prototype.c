// bench/turns-prototype.c: why the variants of a block take turns.
// N processes, started together, each take S samples of 20000 getppid
// calls (about 5 ms); with TURN=1 they pass a token round a ring of pipes,
// so only one runs at a time, sample after sample. PIN >= 0 pins them all
// to that CPU. Prints "process sample start_ns ns_per_call" per sample.
// Usage: turns-prototype N S PIN TURN (bench/turns-prototype.py runs it).
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s N S PIN TURN\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]), samples = atoi(argv[2]), pin = atoi(argv[3]), turn = atoi(argv[4]);
    int ring[16][2];
    if (n < 1 || n > 16) return 2;
    for (int i = 0; i < n; i++)
        if (pipe(ring[i]) != 0) return 1;
    for (int i = 0; i < n; i++) {
        if (fork() != 0) continue;
        if (pin >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(pin, &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        char token;
        const long calls = 20000;
        for (int k = 0; k < samples; k++) {
            if (turn && read(ring[i][0], &token, 1) != 1) _exit(1);
            double start = now_ns();
            for (long j = 0; j < calls; j++) syscall(SYS_getppid);
            double end = now_ns();
            printf("%d %d %.0f %.2f\n", i, k, start, (end - start) / calls);
            fflush(stdout);
            if (turn && write(ring[(i + 1) % n][1], &token, 1) != 1) _exit(1);
        }
        _exit(0);
    }
    char token = 'g';
    if (write(ring[0][1], &token, 1) != 1) return 1;
    for (int i = 0; i < n; i++) wait(NULL);
    return 0;
}
