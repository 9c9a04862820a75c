// C++ writers (t_writers.sh): members written through `this` in a class
// template and a namespace, read elsewhere through a pointer.
namespace store {
template <class T> struct Vec {
  T *data = nullptr;
  unsigned long len = 0, cap = 0;
  Vec() {}
  void grow(unsigned long want) {
    cap = want;                                            // w:cap
  }
  void push(T x) {
    if (len == cap) grow(cap ? cap * 2 : 4);
    data[len++] = x;                                       // w:len
  }
};
class Pool {
public:
  Pool() {}
  int nfree = 0;
  void give() { nfree++; }                                 // w:nfree
};
} // namespace store

int scan(store::Vec<int> *v, store::Pool *p) {
  int s = 0;
  for (unsigned long i = 0; i < v->len; i++)
    s += v->data[i];
  if (p->nfree > 3)
    s++;
  return s;
}

int run(int n) {
  store::Vec<int> v;
  store::Pool p;
  int buf[64];
  v.data = buf;                                            // w:data
  v.cap = 64;
  for (int i = 0; i < n && i < 64; i++) v.push(i);
  p.give();
  return scan(&v, &p);
}
