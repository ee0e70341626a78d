// perf bench mem memcpy reads a calloc()ed source it never wrote (the
// kernel's zero page); kbench's mem-bw cp reads a written one. Does that
// change memcpy's bandwidth? 64 MiB, 10 copies, 6 alternating tries.
// Build and run: gcc -O2 -o /tmp/memcpy-source bench/fidelity/memcpy-source.c && /tmp/memcpy-source
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static double run(int touch_src, size_t size, int loops){
  char *dst=calloc(1,size), *src=calloc(1,size);
  if(touch_src) memset(src,1,size);
  memcpy(dst,src,size); // prefault, as perf does
  double t0=now();
  for(int i=0;i<loops;i++){ memcpy(dst,src,size); __asm__ volatile("" ::: "memory"); }
  double t=now()-t0;
  free(dst);free(src);
  return size*(double)loops/t/1e6;
}
int main(int argc,char**argv){
  size_t size=64ul<<20; int loops=10;
  for(int r=0;r<6;r++){
    double a=run(0,size,loops), b=run(1,size,loops);
    printf("untouched src (perf): %8.0f MB/s   written src (kbench): %8.0f MB/s   ratio %.2f\n",a,b,b/a);
  }
}
