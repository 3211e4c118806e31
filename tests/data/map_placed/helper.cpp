#include <stdint.h>
template<typename T, int N> struct Ring { T buf[N]; int head; void push(T v){ buf[head++ % N] = v; } T sum() const { T s{}; for (int i=0;i<N;i++) s+=buf[i]; return s; } };
Ring<int, 64> r1;
Ring<short, 128> r2;
Ring<double, 16> r3;
struct Base { virtual int f(int x) { return x+1; } };
struct Der : Base { int f(int x) override { return x*2; } };
static Der d;
Base *pb = &d;
template<typename T> __attribute__((noinline)) T tmax(const T* a, int n) { T m=a[0]; for(int i=1;i<n;i++) if(a[i]>m) m=a[i]; return m; }
extern "C" int helper(int x) { r1.push(x); r2.push((short)x); r3.push(x); return pb->f(x) + r1.sum() + r2.sum() + (int)r3.sum() + tmax(r1.buf,64) + tmax(r2.buf,128) + (int)tmax(r3.buf,16); }
