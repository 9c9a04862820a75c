volatile long sink;
void alpha(int n) { for (int i = 0; i < n; i++) sink += i; }
void beta(int m) { for (int j = 0; j < m; j++) sink ^= j; }
int main(void) { alpha(10); beta(20); return 0; }
