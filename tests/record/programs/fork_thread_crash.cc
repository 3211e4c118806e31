// Dies the way seed 004's processes die, after allocations the recording
// must keep: forks a child that allocates and exits, runs a thread that
// allocates, allocates on the main thread, prints what it did, then ends
// as argv[1] says: "exit" (normally), "kill" (SIGKILL, as the OOM killer)
// or "segv" (a crash). Nothing it allocates is freed, but for the child,
// which frees a block and unmaps a mapping it inherited from the parent.
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kMainAllocs = 1000, kThreadAllocs = 700, kChildAllocs = 500;
constexpr size_t kMainSize = 3003, kThreadSize = 3002, kChildSize = 3001, kLastSize = 3004, kInheritedSize = 3005;

void* volatile sink;  // keeps every block reachable, so none is optimised away

long tid() { return syscall(SYS_gettid); }

void* thread_main(void* out) {
  for (int i = 0; i < kThreadAllocs; ++i) sink = std::malloc(kThreadSize);
  *static_cast<long*>(out) = tid();
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "exit";
  void* inherited = std::malloc(kInheritedSize);
  sink = inherited;  // escapes, so the compiler keeps the allocation
  void* inherited_map = mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  pid_t child = fork();
  if (child == 0) {
    // The parent's: in the parent's recording, not the child's to free there.
    std::free(inherited);
    munmap(inherited_map, 1 << 16);
    for (int i = 0; i < kChildAllocs; ++i) sink = std::malloc(kChildSize);
    std::printf("child %d allocs %d size %zu\n", static_cast<int>(getpid()), kChildAllocs, kChildSize);
    std::fflush(stdout);
    _exit(0);
  }
  waitpid(child, nullptr, 0);
  // A second child only gives back what it inherited: it has nothing of its
  // own to record, so no file of its own.
  void* inherited_too = std::malloc(kInheritedSize);
  sink = inherited_too;
  pid_t quiet = fork();
  if (quiet == 0) {
    std::free(inherited_too);
    munmap(inherited_map, 1 << 16);
    _exit(0);
  }
  waitpid(quiet, nullptr, 0);
  std::printf("quiet child %d\n", static_cast<int>(quiet));
  pthread_t thread;
  long thread_tid = 0;
  pthread_create(&thread, nullptr, thread_main, &thread_tid);
  pthread_join(thread, nullptr);
  for (int i = 0; i < kMainAllocs; ++i) sink = std::malloc(kMainSize);
  std::printf("main %ld allocs %d size %zu\nthread %ld allocs %d size %zu\n", tid(), kMainAllocs, kMainSize, thread_tid,
              kThreadAllocs, kThreadSize);
  std::fflush(stdout);
  sink = std::malloc(kLastSize);  // the very last allocation before the end
  if (!std::strcmp(how, "kill")) raise(SIGKILL);
  if (!std::strcmp(how, "segv")) *static_cast<volatile int*>(nullptr) = 1;
  return 0;
}
