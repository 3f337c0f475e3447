// bad: map
int f(std::map<int, int>& m) { return m[0]; }
