int table[100] = {1, 2, 3};
__attribute__((section(".fastcode"))) int fast_mul(int a, int b) { return a * b + table[a & 7]; }
int buffer[1000];
void Reset_Handler(void) {
  for (;;) buffer[table[0]] = fast_mul(table[1], table[2]);
}
