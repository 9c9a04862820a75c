int counter_limit = 5;
int count_up(int start)
{
    int n = start;
    while (n < counter_limit)
        n++;
    return n;
}
