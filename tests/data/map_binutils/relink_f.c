/* Two objects linked in either order: a rebuild whose sections keep their
   sizes while its functions and data move (edgemem's map --elf test). */
int f_count;
int f_step(int x) { f_count += x; return f_count * 3; }
