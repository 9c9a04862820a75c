int count_up(int start);
int main(void) { return count_up(1) == 5 ? 0 : 1; }
