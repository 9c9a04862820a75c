/* Fixture: does not compile (undeclared identifier, missing semicolon). */
int broken(int x)
{
    return x + undeclared_thing
}
