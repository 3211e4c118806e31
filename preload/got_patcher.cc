#include "got_patcher.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "module_map.h"

namespace edgemem::preload {
namespace {

#if defined(__x86_64__)
constexpr unsigned kJumpSlot = R_X86_64_JUMP_SLOT, kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr unsigned kJumpSlot = R_AARCH64_JUMP_SLOT, kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "attach (GOT patching) supports x86_64 and aarch64"
#endif

const char* const kIntercepted[] = {
    "malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc", "memalign", "valloc",
    "pvalloc", "mmap", "mmap64", "munmap", "mremap", "mprotect", "pkey_mprotect", "dlopen", "dlclose", "prctl", "pthread_setname_np",
    "_Znwm", "_Znam", "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t", "_ZdlPv", "_ZdaPv", "_ZdlPvm",
    "_ZdaPvm", "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
    "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t", "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
    // The markers' weak references, bound to nothing at start-up. Last, so a
    // program that sees them bound has its allocation functions patched.
    "edgemem_inference_begin", "edgemem_inference_end"};
constexpr size_t kCount = sizeof kIntercepted / sizeof kIntercepted[0];
constexpr size_t kMarkersAt = kCount - 2;
void* ours[kCount];

constexpr size_t kMaxPatched = 512;
uintptr_t patched[kMaxPatched];
size_t patched_count = 0;

// ld.so rewrites most dynamic entries to absolute addresses; the vDSO's and
// some architectures' stay relative to the load base.
uintptr_t absolute(uintptr_t value, uintptr_t base) { return value < base ? value + base : value; }

// Points the table's entries for kIntercepted[from, to) at ours.
void patch_table(uintptr_t base, const ElfW(Rela)* rela, size_t bytes, const ElfW(Sym)* symbols, const char* names,
                 size_t from, size_t to) {
  long page = sysconf(_SC_PAGESIZE);
  for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
    unsigned type = ELF64_R_TYPE(rela[i].r_info);
    if (type != kJumpSlot && type != kGlobDat) continue;
    const char* name = names + symbols[ELF64_R_SYM(rela[i].r_info)].st_name;
    for (size_t k = from; k < to; ++k) {
      if (!ours[k] || strcmp(name, kIntercepted[k]) != 0) continue;
      auto* slot = reinterpret_cast<void**>(base + rela[i].r_offset);
      // RELRO made the GOT read-only after start-up.
      auto start = reinterpret_cast<uintptr_t>(slot) & ~static_cast<uintptr_t>(page - 1);
      mprotect(reinterpret_cast<void*>(start), static_cast<size_t>(page), PROT_READ | PROT_WRITE);
      *slot = ours[k];
      break;
    }
  }
}

int patch_object(dl_phdr_info* info, size_t, void*) {
  uintptr_t base = info->dlpi_addr;
  if (in_this_library(reinterpret_cast<uintptr_t>(info->dlpi_phdr)) || !info->dlpi_name) return 0;
  for (size_t i = 0; i < patched_count; ++i)
    if (patched[i] == base) return 0;
  if (strncmp(info->dlpi_name, "linux-vdso", 10) == 0) return 0;
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(base + info->dlpi_phdr[i].p_vaddr);
  if (!dynamic) return 0;
  const ElfW(Rela)* jmprel = nullptr;
  const ElfW(Rela)* rela = nullptr;
  size_t jmprel_bytes = 0, rela_bytes = 0;
  const ElfW(Sym)* symbols = nullptr;
  const char* names = nullptr;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_JMPREL: jmprel = reinterpret_cast<const ElfW(Rela)*>(absolute(d->d_un.d_ptr, base)); break;
      case DT_PLTRELSZ: jmprel_bytes = d->d_un.d_val; break;
      case DT_RELA: rela = reinterpret_cast<const ElfW(Rela)*>(absolute(d->d_un.d_ptr, base)); break;
      case DT_RELASZ: rela_bytes = d->d_un.d_val; break;
      case DT_SYMTAB: symbols = reinterpret_cast<const ElfW(Sym)*>(absolute(d->d_un.d_ptr, base)); break;
      case DT_STRTAB: names = reinterpret_cast<const char*>(absolute(d->d_un.d_ptr, base)); break;
      default: break;
    }
  }
  if (!symbols || !names) return 0;
  for (auto [from, to] : {std::pair{size_t{0}, kMarkersAt}, std::pair{kMarkersAt, kCount}}) {
    if (jmprel) patch_table(base, jmprel, jmprel_bytes, symbols, names, from, to);
    if (rela) patch_table(base, rela, rela_bytes, symbols, names, from, to);
  }
  if (patched_count < kMaxPatched) patched[patched_count++] = base;
  return 0;
}

}  // namespace

bool attached() {
  const char* v = getenv("EDGEMEM_ATTACH");
  return v && *v == '1';
}

void patch_loaded_objects() {
  if (!ours[0]) {
    // Our own definitions, by address: dlsym would find libc's first.
    Dl_info self{};
    dladdr(reinterpret_cast<void*>(&patch_loaded_objects), &self);
    void* handle = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    for (size_t k = 0; k < kCount; ++k) ours[k] = handle ? dlsym(handle, kIntercepted[k]) : nullptr;
  }
  dl_iterate_phdr(patch_object, nullptr);
}

}  // namespace edgemem::preload
