#include "semihost.h"

static int call(int op, void *arg) {
  register int r0 __asm__("r0") = op;
  register void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

int sh_open(const char *path, int mode) {
  uint32_t len = 0;
  while (path[len]) ++len;
  uint32_t args[3] = {(uint32_t)path, (uint32_t)mode, len};
  return call(0x01, args);
}

void sh_write(int fd, const void *data, uint32_t len) {
  uint32_t args[3] = {(uint32_t)fd, (uint32_t)data, len};
  call(0x05, args);
}

void sh_seek_end(int fd) {
  uint32_t flen_args[1] = {(uint32_t)fd};
  uint32_t args[2] = {(uint32_t)fd, (uint32_t)call(0x0C, flen_args)}; /* SYS_FLEN, then SYS_SEEK */
  call(0x0A, args);
}

void sh_close(int fd) {
  uint32_t args[1] = {(uint32_t)fd};
  call(0x02, args);
}

void sh_exit(int code) {
  /* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit with a full exit code. */
  uint32_t args[2] = {0x20026, (uint32_t)code};
  call(0x20, args);
  for (;;) {
  }
}
