/* A program for the eBPF recorder's tests: calls infer_once() N times, each
 * call leaking one 128-byte block and using a 4 KiB scratch buffer it frees.
 *   leak_per_call N            run at once
 *   leak_per_call N GO_FILE    first allocate 10 blocks, then wait until GO_FILE
 *                              exists (a recorder attaches meanwhile), free the
 *                              10 blocks and make the N calls */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void* volatile kept;
static void* volatile seen; /* the scratch buffer escapes, so the compiler keeps it */

__attribute__((noinline)) void infer_once(int index) {
  char* scratch = malloc(4096);
  memset(scratch, index, 4096);
  unsigned char* descriptor = malloc(128); /* record-test: leak per call */
  descriptor[0] = scratch[0];
  kept = descriptor;
  seen = scratch;
  free(scratch);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s N [GO_FILE]\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[1]);
  void* early[10] = {0};
  if (argc > 2) {
    for (int i = 0; i < 10; ++i) early[i] = malloc(64);
    while (access(argv[2], F_OK) != 0) usleep(10 * 1000);
    for (int i = 0; i < 10; ++i) free(early[i]);
  }
  for (int i = 0; i < n; ++i) infer_once(i);
  printf("leak_per_call: %d calls\n", n);
  return 0;
}
