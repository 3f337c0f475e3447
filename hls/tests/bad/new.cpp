// bad: heap
int* f() { return new int[4]; }
