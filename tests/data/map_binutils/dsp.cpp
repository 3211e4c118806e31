#include <stdint.h>
struct Filter { virtual int step(int); int acc; };
int Filter::step(int x) { return acc += x; }     /* key function: vtable for Filter in .rodata of this TU */
int tiny(int x) { return x + 1; }
int big_unsigned(unsigned int n, const char* tag) {    /* demangled: big_unsigned(unsigned int, char const*) */
  volatile int acc = 0;
  for (unsigned i = 0; i < n; ++i) { acc += tag[i & 7] * (int)i; if (acc & 0x100) acc ^= 0x5a5a; acc += (acc << 3) - (acc >> 2); }
  for (unsigned i = 0; i < n; ++i) { acc += tag[(i+3) & 7] * (int)i; if (acc & 0x200) acc ^= 0x1234; acc += (acc << 5) - (acc >> 1); }
  for (unsigned i = 0; i < n; ++i) { acc ^= tag[(i+5) & 7] + (int)(i*i); acc += (acc << 2) ^ 0x77; }
  return acc;
}
int after(int x) { return x * 3; }
Filter g_filter;
extern const int32_t coeffs_before[4]; const int32_t coeffs_before[4] = {1,2,3,4};
