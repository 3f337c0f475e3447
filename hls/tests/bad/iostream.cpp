// bad: iostream
#include <iostream>
void f(int x) { (void)x; }
