int counter = 5;
int zeros[4];
__attribute__((section(".mydata"))) int mydata[100] = {1,2,3};
__attribute__((section(".mybuf"))) int mybuf[1000];
__attribute__((section(".mybuf2"))) int mybuf2[200];
__attribute__((section(".myinit"))) int myinit[50] = {7};
void Reset_Handler(void){ for(;;) { counter += mydata[counter&7] + mybuf[counter&3] + myinit[1] + mybuf2[2] + zeros[counter&3]; } }
