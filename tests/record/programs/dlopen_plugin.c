/* Loads argv[1] with dlopen after start-up, calls its plugin_allocate,
 * unloads it. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* plugin = dlopen(argv[1], RTLD_NOW);
  if (!plugin) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  void (*allocate)(void) = (void (*)(void))dlsym(plugin, "plugin_allocate");
  if (!allocate) return 1;
  allocate();
  dlclose(plugin);
  return 0;
}
