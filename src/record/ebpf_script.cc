#include "record/ebpf_script.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

namespace edgemem {

namespace {

// Which function a thread is inside (@k[tid], a number per probe): glibc
// calls its own malloc from realloc(NULL, n) and free from realloc(p, 0),
// operator new calls malloc and new[] calls new, all through the probed
// addresses, so only the outermost call is recorded.
// bpftrace quotes a path or symbol holding characters outside its identifier set.
std::string probe_target(const std::string& path, const std::string& symbol) {
  auto plain = [](const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/' || c == '.' || c == '-'; });
  };
  std::string p = plain(path) ? path : "\"" + path + "\"";
  std::string s = plain(symbol) ? symbol : "\"" + symbol + "\"";
  return p + ":" + s;
}

}  // namespace

std::string bpftrace_script(const UprobeTargets& t) {
  auto ready = [&](int n) {
    return fmt::format("tracepoint:syscalls:sys_enter_getpgid /args->pid == {}/ {{ printf(\"READY {}\\n\"); }}\n",
                       t.ready_call, n);
  };
  std::string s = ready(1);
  const std::string only = fmt::format("pid == {}", t.pid);
  const std::string stack = fmt::format("ustack(perf, {})", kStackFrames);
  std::set<std::string> maps = {"@k", "@sp"};
  // Not inside another probed call of the thread: none is open, or the open
  // one is no longer on the stack (a call left by a signal handler's
  // longjmp never returns). A nested call's stack pointer is always below
  // its caller's.
  const std::string outermost = "(@k[tid] == 0 || reg(\"sp\") >= @sp[tid])";
  int k = 0;
  const bool has_new = std::any_of(t.allocators.begin(), t.allocators.end(),
                                   [](const UprobeTargets::Function& f) { return f.symbol.starts_with("_Zn"); });
  for (const UprobeTargets::Function& probe : t.allocators) {
    const std::string& f = probe.symbol;
    std::string at = probe_target(probe.path, f);
    ++k;
    if (f.starts_with("_Zn")) {
      // operator new: its entry only. A return probe replaces the return
      // address with the kernel's trampoline, which C++'s unwinder cannot
      // step through: a bad_alloc thrown out of new (or caught inside the
      // nothrow one) ended the program in std::terminate. The stack is taken
      // here; the allocator this new calls prints the record when it returns.
      // A new called from the pending one's code (new[] and the nothrow forms
      // call new) is that one's; any other begins anew, so nothing is left
      // pending by a new that threw (sizes and stack depths told it badly: a
      // later failure of the same size read as a retry and was lost).
      const std::string align = f.find("align_val_t") != std::string::npos ? "arg1" : "0";
      const uint64_t code = probe.size ? probe.size : 512;
      s += fmt::format(
          "uprobe:{} /{} && {}/ {{ $r = *(uint64 *)uptr(reg(\"sp\")); if (@nk[tid] && (($r >= @nip[tid] && $r < @nend[tid]) || "
          "($r >= @nip2[tid] && $r < @nend2[tid]))) {{ @nip2[tid] = reg(\"ip\"); @nend2[tid] = reg(\"ip\") + {}; }} else {{ "
          "@nk[tid] = 1; @nip[tid] = reg(\"ip\"); @nend[tid] = reg(\"ip\") + {}; @nip2[tid] = @nip[tid]; @nend2[tid] = "
          "@nend[tid]; @nsize[tid] = arg0; @nalign[tid] = {}; @nfail[tid] = 0; @nret[tid] = $r; @nstk[tid] = {}; }} }}\n",
          at, only, outermost, code, code, align, stack);
      maps.insert({"@nk", "@nip", "@nend", "@nip2", "@nend2", "@nsize", "@nalign", "@nfail", "@nret", "@nstk", "@fornew"});
      continue;
    }
    if (f == "free") {
      s += fmt::format("uprobe:{} /{} && {} && arg0 != 0/ {{ printf(\"F %d %llu %llu %d\\n\", tid, nsecs, arg0, cpu); }}\n", at,
                       only, outermost);
      continue;
    }
    std::string enter, leave;
    if (f == "malloc" || f == "valloc" || f == "pvalloc") {
      const long page = sysconf(_SC_PAGESIZE);
      enter = fmt::format("@size[tid] = arg0; @align[tid] = {};", f == "malloc" ? 0 : page);
      // pvalloc rounds the request up to whole pages, as the preload records
      // it (it read 100 B where the preload read 4,096); one within a page
      // of 2^64 fails and stays as asked.
      if (f == "pvalloc")
        enter += fmt::format(" if (arg0 == 0) {{ @size[tid] = {0}; }} else if (arg0 + {1} > arg0) {{ @size[tid] = "
                             "(arg0 + {1}) / {0} * {0}; }}",
                             page, page - 1);
      leave = fmt::format("printf(\"A %d %llu %llu %llu %llu %d\\n%s\\n\", tid, nsecs, @size[tid], @align[tid], retval, cpu, {});", stack);
      maps.insert({"@size", "@align"});
    } else if (f == "calloc") {
      // A count times size past 64 bits is refused by libc: recorded as the
      // failure it is at SIZE_MAX, as the preload does (it read a failed 4 B request).
      enter = "@size[tid] = arg0 * arg1; if (arg1 != 0 && @size[tid] / arg1 != arg0) { @size[tid] = -1; } @align[tid] = 0;";
      leave = fmt::format("printf(\"A %d %llu %llu %llu %llu %d\\n%s\\n\", tid, nsecs, @size[tid], @align[tid], retval, cpu, {});", stack);
      maps.insert({"@size", "@align"});
    } else if (f == "memalign" || f == "aligned_alloc") {
      enter = "@align[tid] = arg0; @size[tid] = arg1;";
      leave = fmt::format("printf(\"A %d %llu %llu %llu %llu %d\\n%s\\n\", tid, nsecs, @size[tid], @align[tid], retval, cpu, {});", stack);
      maps.insert({"@size", "@align"});
    } else if (f == "mmap") {
      // Only anonymous mappings (MAP_ANONYMOUS): a mapped file is not memory the program allocates.
      enter = "@size[tid] = arg1; @prot[tid] = (int32)arg2;";  // an int: the register's upper half is not its
      leave = fmt::format("printf(\"M %d %llu %llu %llu %d %d\\n%s\\n\", tid, nsecs, @size[tid], retval, @prot[tid], cpu, {});",
                          stack);
      maps.insert({"@size", "@prot"});
    } else if (f == "mprotect") {
      enter = "@old[tid] = arg0; @size[tid] = arg1; @prot[tid] = (int32)arg2;";
      leave = fmt::format("printf(\"V %d %llu %llu %llu %d %d %d\\n%s\\n\", tid, nsecs, @old[tid], @size[tid], @prot[tid], "
                          "(int32)retval, cpu, {});",
                          stack);
      maps.insert({"@size", "@old", "@prot"});
    } else if (f == "munmap") {
      enter = "@old[tid] = arg0; @size[tid] = arg1; @entered[tid] = nsecs;";
      leave = fmt::format("printf(\"U %d %llu %llu %llu %d %d\\n%s\\n\", tid, @entered[tid], @old[tid], @size[tid], (int32)retval, cpu, {});",
                          stack);
      maps.insert({"@size", "@old", "@entered"});
    } else if (f == "mremap") {
      enter = "@old[tid] = arg0; @oldsize[tid] = arg1; @size[tid] = arg2; @flags[tid] = arg3; @entered[tid] = nsecs;";
      leave = fmt::format(
          "printf(\"X %d %llu %llu %llu %llu %llu %llu %llu %d\\n%s\\n\", tid, @entered[tid], nsecs, @old[tid], "
          "@oldsize[tid], @size[tid], retval, @flags[tid], cpu, {});",
          stack);
      maps.insert({"@size", "@old", "@oldsize", "@flags", "@entered"});
    } else if (f == "posix_memalign") {
      enter = "@out[tid] = arg0; @align[tid] = arg1; @size[tid] = arg2;";
      leave = fmt::format(
          "printf(\"P %d %llu %llu %llu %d %llu %d\\n%s\\n\", tid, nsecs, @size[tid], @align[tid], (int32)retval, "
          "*(uint64 *)@out[tid], cpu, {});",
          stack);
      maps.insert({"@size", "@align", "@out"});
    } else if (f == "reallocarray") {  // realloc(p, count * size), refused without calling realloc on overflow
      enter = "@old[tid] = arg0; @size[tid] = arg1 * arg2; if (arg2 != 0 && @size[tid] / arg2 != arg1) { @size[tid] = -1; } "
              "@entered[tid] = nsecs;";
      leave = fmt::format(
          "printf(\"R %d %llu %llu %llu %llu %llu %d\\n%s\\n\", tid, @entered[tid], nsecs, @old[tid], @size[tid], retval, cpu, {});",
          stack);
      maps.insert({"@size", "@old", "@entered"});
    } else {  // realloc
      enter = "@old[tid] = arg0; @size[tid] = arg1; @entered[tid] = nsecs;";
      leave = fmt::format(
          "printf(\"R %d %llu %llu %llu %llu %llu %d\\n%s\\n\", tid, @entered[tid], nsecs, @old[tid], @size[tid], retval, cpu, {});",
          stack);
      maps.insert({"@size", "@old", "@entered"});
    }
    const std::string anonymous = f == "mmap" ? fmt::format(" && (arg3 & {:#x})", MAP_ANONYMOUS) : "";
    // What libstdc++'s new calls: malloc(size, 1 for 0), aligned_alloc(align,
    // size rounded up to align). A call from the pending new's own code with
    // its size serves it (again after a new_handler freed memory); a failure
    // is said once, a success ends it.
    std::string serves_new;
    if (f == "malloc") serves_new = "(arg0 == @nsize[tid] || (arg0 == 1 && @nsize[tid] == 0))";
    if (f == "memalign" || f == "aligned_alloc") serves_new = "(arg1 >= @nsize[tid] && arg1 <= @nsize[tid] + @nalign[tid])";
    if (has_new && !serves_new.empty()) {
      enter += fmt::format(
          " $r = *(uint64 *)uptr(reg(\"sp\")); if (@nk[tid] && $r >= @nip2[tid] && $r < @nend2[tid] && {}) {{ @fornew[tid] = 1; }}",
          serves_new);
      leave = fmt::format(
          "if (@fornew[tid]) {{ if (retval != 0 || @nfail[tid] == 0) {{ printf(\"N %d %llu %llu %llu %llu %llu %d\\n%s\\n\", "
          "tid, nsecs, @nsize[tid], @nalign[tid], retval, @nret[tid], cpu, @nstk[tid]); }} if (retval != 0) {{ "
          "delete(@nk[tid]); }} else {{ @nfail[tid] = 1; }} delete(@fornew[tid]); }} else {{ {} }}",
          leave);
    }
    s += fmt::format("uprobe:{} /{} && {}{}/ {{ @k[tid] = {}; @sp[tid] = reg(\"sp\"); {} }}\n", at, only, outermost, anonymous,
                     k, enter);
    s += fmt::format("uretprobe:{} /{} && @k[tid] == {}/ {{ {} delete(@k[tid]); }}\n", at, only, k, leave);
  }
  if (t.inference) {
    std::string at = probe_target(t.inference->path, t.inference->symbol);
    s += fmt::format("uprobe:{} /{}/ {{ printf(\"B %d %llu %d\\n\", tid, nsecs, cpu); }}\n", at, only);
    s += fmt::format("uretprobe:{} /{}/ {{ printf(\"E %d %llu %d\\n\", tid, nsecs, cpu); }}\n", at, only);
  }
  // Each CPU's clock in its own output buffer, ten times a second: the
  // recorder writes a record once every CPU's buffer has been read past it
  // (an idle CPU says so with these).
  s += "profile:hz:10 { printf(\"H %llu %d\\n\", nsecs, cpu); }\n";
  s += ready(2);
  // Per-thread scratch, not results: bpftrace would print what is left.
  s += "END {";
  for (const std::string& m : maps) s += fmt::format(" clear({});", m);
  s += " }\n";
  return s;
}

}  // namespace edgemem
