// Baseline (b) for bench/compare.sh: the seed 000 parser as a C++ engineer
// would first write it - istream reads, std::unordered_map address -> size,
// live bytes and a peak, nothing else.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <unordered_map>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::ifstream in(argv[1], std::ios::binary);
  std::unordered_map<uint32_t, uint32_t> live;
  uint64_t events = 0, bytes = 0, peak = 0;
  auto be = [&](int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(in.get());
    return v;
  };
  for (int h; (h = in.get()) != EOF;) {
    switch (h) {
      case 0xA1: case 0xA2: {
        uint32_t size = be(h == 0xA1 ? 2 : 4), addr = be(4);
        live[addr] = size;
        bytes += size;
        if (bytes > peak) peak = bytes;
        ++events;
        break;
      }
      case 0xF1: {
        auto it = live.find(be(4));
        if (it != live.end()) {
          bytes -= it->second;
          live.erase(it);
        }
        ++events;
        break;
      }
      case 0xB1: case 0xB2: be(4); ++events; break;
      default: break;
    }
  }
  std::printf("%llu events, %zu live, peak %llu\n", static_cast<unsigned long long>(events), live.size(),
              static_cast<unsigned long long>(peak));
  return 0;
}
