/* Fixture: a small shared library. */
int lib_total;
int lib_add(int n)
{
    for (int i = 0; i < n; i++)
        lib_total += i;
    return lib_total;
}
