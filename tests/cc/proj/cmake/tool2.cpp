extern "C" int count_up(int start);
struct Runner { int start; int go() { return count_up(start); } };
int main() { Runner r{2}; return r.go() == 5 ? 0 : 1; }
