/* ARM semihosting (BKPT 0xAB): host files and a real exit code under QEMU. */
#ifndef SEMIHOST_H
#define SEMIHOST_H
#include <stdint.h>
int sh_open(const char *path, int mode); /* mode 4 = "wb" */
void sh_write(int fd, const void *data, uint32_t len);
void sh_seek_end(int fd); /* QEMU 7.2 opens mode 8 ("a") without O_APPEND */
void sh_close(int fd);
void sh_exit(int code) __attribute__((noreturn));
#endif
