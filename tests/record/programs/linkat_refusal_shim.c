/* Preloaded into edgemem record: linkat() through /proc/self/fd and with
 * AT_EMPTY_PATH both fail with ENOENT, as for a user without
 * CAP_DAC_READ_SEARCH on a kernel before 6.10 with no /proc mounted. The
 * packing (an O_TMPFILE) must then still get its name. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int linkat(int old_dir, const char* old_path, int new_dir, const char* new_path, int flags) {
  static int (*real)(int, const char*, int, const char*, int);
  if ((flags & AT_EMPTY_PATH) || strncmp(old_path, "/proc/", 6) == 0) {
    errno = ENOENT;
    return -1;
  }
  if (!real) real = (int (*)(int, const char*, int, const char*, int))dlsym(RTLD_NEXT, "linkat");
  return real(old_dir, old_path, new_dir, new_path, flags);
}
