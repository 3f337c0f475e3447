// bad: static mutable global
static int counter = 0;
int f() { return ++counter; }
