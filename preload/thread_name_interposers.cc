// Thread renames, so a recording names a thread by what it is called last,
// not by what it inherited at its first allocation (a worker named after it
// started would otherwise carry its creator's name). The kernel holds the
// name; the renamed thread reads it back and records it (thread_recorder.h).
// A name written straight to /proc/self/task/TID/comm is not seen.
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/prctl.h>

#include "real_functions.h"
#include "thread_recorder.h"

using namespace edgemem::preload;

extern "C" {

int pthread_setname_np(pthread_t thread, const char* name) noexcept {
  if (!real.pthread_setname_np) resolve_real_functions();
  if (!real.pthread_setname_np) return ENOSYS;
  int result = real.pthread_setname_np(thread, name);
  if (result == 0) note_thread_renamed(pthread_equal(thread, pthread_self()));
  return result;
}

// prctl's arguments after the option are unsigned longs, as the kernel takes them.
int prctl(int option, ...) noexcept {
  va_list args;
  va_start(args, option);
  unsigned long a2 = va_arg(args, unsigned long), a3 = va_arg(args, unsigned long),
                a4 = va_arg(args, unsigned long), a5 = va_arg(args, unsigned long);
  va_end(args);
  if (!real.prctl) resolve_real_functions();
  if (!real.prctl) return -1;
  int result = real.prctl(option, a2, a3, a4, a5);
  if (result == 0 && option == PR_SET_NAME) note_thread_renamed(true);
  return result;
}

}  // extern "C"
