// bad: printf
void f(int x) { printf("%d", x); }
