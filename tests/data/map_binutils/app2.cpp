int big_unsigned(unsigned int n, const char* tag); int tiny(int); int after(int);
struct Filter { virtual int step(int); int acc; }; extern Filter g_filter; extern const int coeffs_before[4];
extern "C" int main() { Filter* f = &g_filter; return big_unsigned(10, "abcdefgh") + tiny(2) + after(3) + f->step(coeffs_before[1]); }
