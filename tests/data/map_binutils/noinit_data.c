/* An initialised variable in a section named .no_init (a reviewer's link):
   its bytes are data, whatever the name says. */
int counter = 3;
int big[100];
__attribute__((section(".no_init"), used)) unsigned boot_magic = 0xDEADBEEF;
int main(void){ return counter + big[2]; }
