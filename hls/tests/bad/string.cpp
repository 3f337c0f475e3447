// bad: string
int f(const std::string& s) { return int(s.size()); }
