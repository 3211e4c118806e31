/* The other object of relink_f.c's pair, of the same sizes. */
int g_count;
int g_step(int x) { g_count -= x; return g_count * 5; }
