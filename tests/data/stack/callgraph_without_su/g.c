int leaf(int x) { volatile int big[100]; big[x % 100] = x; return big[1]; }
static int mid(int x) { volatile int s[10]; s[x%10]=x; return leaf(x) + s[0]; }
int vTask(int x) { return mid(x) + 1; }
