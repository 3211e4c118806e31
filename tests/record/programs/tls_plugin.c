/* A library with thread-local storage, loaded by c_runtime with dlopen:
 * each thread that touches its TLS gets a block the loader allocates for
 * it (dynamic TLS), which the C runtime keeps, not the program. */
__thread char plugin_tls[2000];

char* plugin_tls_block(void) { return plugin_tls; }
