// bad: throw
int f(int x) { if (x) throw 1; return x; }
