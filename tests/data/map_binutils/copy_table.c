int counter = 5;
__attribute__((section(".fastram"))) int table[12000] = {1,2,3};
struct ct { int *src, *dst; unsigned n; };
extern struct ct __copy_table_start__[], __copy_table_end__[];
void Reset_Handler(void){ for (struct ct *c=__copy_table_start__;c<__copy_table_end__;c++){ volatile int *s=c->src,*d=c->dst; for(unsigned i=0;i<c->n;i++) d[i]=s[i]; } for(;;) { counter += table[counter&7]; } }
