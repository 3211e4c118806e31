struct Ring { int buf[32]; int head; Ring(); void push(int v); };
Ring::Ring() : head(0) { for (int i = 0; i < 32; i++) buf[i] = 0; }
void Ring::push(int v) { buf[head++ & 31] = v; }
void vSensorTask(void *) { Ring r; for (int i = 0; i < 100; i++) r.push(i); }
