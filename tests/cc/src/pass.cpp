// Fixture for t_pass.sh (C++): members through `this`, namespaces.
namespace store {
int cache_hits = 0;                          // line 3: global
struct Pool {
    int nfree;
    int grab(int want) {                     // line 6
        while (this->nfree < want)           // this->nfree cond
            this->nfree += 4;
        return nfree - want;
    }
};
}
int run(int k)                               // line 13
{
    store::Pool pool{1};
    int got = 0;
    for (int j = 0; j < k; j++)              // line 17: j loop|cond
        got += pool.grab(j);
    return got + store::cache_hits;
}
int main() { return run(3) == 12345; }
