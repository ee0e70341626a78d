// memset (glibc) against a loop of plain 8-byte stores, as kbench's mem-bw
// wr and lmbench's bw_mem wr write: 64 MiB, every page touched first, 10
// passes, 6 alternating tries.
// Build and run: gcc -O2 -o /tmp/memset-stores bench/fidelity/memset-stores.c && /tmp/memset-stores
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  size_t size=64ul<<20, n=size/8; int loops=10;
  uint64_t *p=malloc(size); memset(p,1,size);
  volatile uint64_t seed=7;
  for(int r=0;r<6;r++){
    double t0=now();
    for(int i=0;i<loops;i++){ memset(p,i,size); __asm__ volatile("" ::: "memory"); }
    double a=size*(double)loops/(now()-t0)/1e6;
    t0=now();
    for(int i=0;i<loops;i++){ uint64_t v=seed+i; for(size_t k=0;k<n;k++) p[k]=v; __asm__ volatile("" ::: "memory"); }
    double b=size*(double)loops/(now()-t0)/1e6;
    printf("memset %6.0f MB/s   store loop %6.0f MB/s   loop/memset %.2f\n",a,b,b/a);
  }
}
