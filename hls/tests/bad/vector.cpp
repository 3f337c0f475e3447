// bad: vector
int f(std::vector<int>& v) { return v[0]; }
