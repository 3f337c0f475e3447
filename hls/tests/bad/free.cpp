// bad: free
void f(void* p) { free(p); }
