volatile int sink2;
int main(void) { volatile char work[200]; for (;;) { work[0]++; sink2 = work[0]; } }
