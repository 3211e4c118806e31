extern volatile int sink;
__attribute__((noipa)) static int clamp(volatile char *p, int n) { return p[0] < n ? p[0] : n; }
__attribute__((noipa)) static int wrap(volatile char *p, int n) { return p[1] % n; }
