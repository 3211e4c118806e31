#include "map_writer.h"

#include <fmt/format.h>

namespace edgemem::bench {

void write_gnu_map(std::FILE* out, uint64_t objects) {
  fmt::print(out, "Archive member included to satisfy reference by file (symbol)\n\n");
  fmt::print(out, "Discarded input sections\n\n");
  for (uint64_t i = 0; i < objects; ++i)
    fmt::print(out, " .text.unused_{}\n                0x0000000000000000       0x{:x} build/obj/mod{}.o\n", i,
               16 + i % 64, i);
  fmt::print(out, "\nMemory Configuration\n\nName             Origin             Length             Attributes\n");
  fmt::print(out, "FLASH            0x0000000008000000 0x0000000040000000 xr\n");
  fmt::print(out, "RAM              0x0000000020000000 0x0000000040000000 xrw\n");
  fmt::print(out, "*default*        0x0000000000000000 0xffffffffffffffff\n\nLinker script and memory map\n\n");
  struct Out {
    const char* name;
    uint64_t base;
    const char* prefix;
  } outs[] = {{".text", 0x08000000, ".text"},
              {".rodata", 0x08000000 + objects * 0x60, ".rodata"},
              {".bss", 0x20000000, ".bss"}};
  for (const Out& o : outs) {
    uint64_t size = objects * 0x60;
    fmt::print(out, "{}          0x{:016x}    0x{:x}\n", o.name, o.base, size);
    uint64_t at = o.base;
    for (uint64_t i = 0; i < objects; ++i) {
      uint64_t bytes = 0x40 + i % 0x20;
      const bool archive = i % 3 == 0;
      std::string object = archive ? fmt::format("/opt/toolchain/lib/libmodel.a(layer_{}.o)", i)
                                   : fmt::format("build/obj/mod{}.o", i);
      // Long names wrap: the numbers go on the next line.
      fmt::print(out, " {}.module_{}_function_with_a_long_name_{}\n                0x{:016x}     0x{:x} {}\n", o.prefix, i,
                 i * 7, at, bytes, object);
      fmt::print(out, "                0x{:016x}                sym_{}_{}\n", at, o.prefix + 1, i);
      at += bytes;
      if (bytes % 8) {
        fmt::print(out, " *fill*         0x{:016x}        0x{:x} \n", at, 8 - bytes % 8);
        at += 8 - bytes % 8;
      }
    }
    fmt::print(out, "\n");
  }
  fmt::print(out, ".debug_info     0x0000000000000000   0x{:x}\n OUTPUT(build/fw.elf elf32-littlearm)\n", objects * 100);
}

}  // namespace edgemem::bench
