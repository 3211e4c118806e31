/* Thread-local data (a reviewer's link): nm gives an STT_TLS symbol its
   offset in the thread's block, the map its address. */
__thread int tvar = 5;
__thread int tzero;
int gdata = 7;
int main(void) { return gdata; }
