// bad: malloc
#include <stdlib.h>
void* f() { return malloc(4); }
