/* Runs with record_constructor_registry linked: main frees blocks the
 * library's constructor made before main (and before the recorder's own
 * constructor). */
void registry_release(void);

int main(void) {
  registry_release();
  return 0;
}
