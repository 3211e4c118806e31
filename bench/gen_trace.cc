// edgemem-gentrace: writes a benchmark trace, or a large linker map, to stdout.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "map_writer.h"
#include "trace_writer.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: edgemem-gentrace bench-bin EVENTS | bench-log LINES | report-log LINES | bench-map OBJECTS  > file\n");
    return 2;
  }
  std::string what = argv[1];
  static char buffer[1 << 20];
  std::setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
  if ((what == "bench-bin" || what == "bench-log") && argc >= 3) {
    edgemem::bench::write_bench(stdout, std::strtoull(argv[2], nullptr, 10), what == "bench-bin");
  } else if (what == "report-log" && argc >= 3) {
    edgemem::bench::write_report_trace(stdout, std::strtoull(argv[2], nullptr, 10));
  } else if (what == "bench-map" && argc >= 3) {
    edgemem::bench::write_gnu_map(stdout, std::strtoull(argv[2], nullptr, 10));
  } else {
    std::fprintf(stderr, "edgemem-gentrace: unknown scenario '%s'\n", what.c_str());
    return 2;
  }
  return 0;
}
