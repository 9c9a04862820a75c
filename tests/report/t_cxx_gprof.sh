#!/bin/bash
# --gprof on a C++ program against binutils `gprof -b`, which demangles:
# the whole output byte for byte (names, call graph order and numbering,
# index), with g++ -pg at -O0 (hundreds of template instances, constructors,
# operators, an anonymous namespace) and -O2 (.cold pieces), over several
# runs since sampling differs; and --no-demangle as gprof --no-demangle.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
command -v gprof >/dev/null || skip "binutils gprof not installed"
command -v g++ >/dev/null || skip "g++ not installed"
cd "$TMP"
cat > shop.cc <<'CXX'
#include <map>
#include <string>
#include <vector>
namespace shop {
template <typename T> struct Basket {
    std::vector<T> items;
    void add(const T &x) { items.push_back(x); }
    T total() const { T s = 0; for (const T &x : items) s += x * 0.5; return s; }
    bool operator<(const Basket &o) const { return items.size() < o.items.size(); }
};
class Till {
public:
    double ring(int n);
private:
    std::map<std::string, double> prices_;
};
double Till::ring(int n)
{
    Basket<double> b, small;
    for (int i = 0; i < n; i++) b.add(i);
    double t = small < b ? 1 : 0;
    for (int k = 0; k < 150; k++) t += b.total();
    prices_["x"] += t;
    return t;
}
}
namespace {
volatile double sink;
void spin(long n) { for (long i = 0; i < n; i++) sink += i; }
}
int main()
{
    shop::Till till;
    for (int r = 0; r < 12; r++) { sink += till.ring(20000); spin(1500000); }
    return 0;
}
CXX
g++ -pg -g -O0 shop.cc -o shop0 && g++ -pg -g -O2 shop.cc -o shop2 ||
    { echo "not ok - g++ -pg builds the C++ program"; exit 1; }
for O in 0 2; do
    for i in 1 2 3; do
        ./shop$O && mv gmon.out g$O.$i.out
        "$R" --gprof ./shop$O g$O.$i.out > ours.txt 2>ours.err
        gprof -b ./shop$O g$O.$i.out > theirs.txt
        check "-O$O run $i: --gprof output identical to gprof -b" cmp -s ours.txt theirs.txt
        cmp -s ours.txt theirs.txt || diff ours.txt theirs.txt | head -20
    done
done
"$R" --gprof ./shop0 g0.1.out > c0.txt
check "the outputs are C++ names: a method with its parameters" \
    grep -q '^\[[0-9]*\] .* shop::Till::ring(int) \[[0-9]*\]$' c0.txt
check "...an anonymous namespace, as gprof writes it" grep -q '(anonymous namespace)::spin(long)' c0.txt
check "...an operator of a class template" grep -q 'shop::Basket<double>::operator<(shop::Basket<double> const&) const' c0.txt
check "...no mangled name left" bash -c "! grep -q '_Z' c0.txt"
"$R" --gprof ./shop0 g0.1.out g0.2.out > ours2.txt
gprof -b ./shop0 g0.1.out g0.2.out > theirs2.txt
check "two gmon files summed: identical to gprof -b" cmp -s ours2.txt theirs2.txt
"$R" --no-demangle --gprof ./shop0 g0.1.out > ours_m.txt
gprof -b --no-demangle ./shop0 g0.1.out > theirs_m.txt
check "--no-demangle: identical to gprof -b --no-demangle" cmp -s ours_m.txt theirs_m.txt
check "--no-demangle: linkage names" grep -q '_ZN4shop4Till4ringEi \[' ours_m.txt

# g++ -O2's clone names ("f.constprop.0", "f.isra.0") and binutils gprof's
# reading of them: a local name ending in ".constprop.N" is checked on into
# the next string of the string table, so "pick.constprop.0" followed by
# "tally.isra.0" is dropped like the clone after it, and the calls of both go
# to the symbol below them (frame_dummy, which has no line of its own: no
# file in the index). A cycle of three with equal calls and no time is
# listed in the order gprof's depth-first walk linked it, not by name.
cat > clones.cc <<'CXX'
#include <cstdio>
#include <cstdlib>
volatile long sink;
extern "C" {
__attribute__((noinline)) static long pick(long n) __asm__("pick.constprop.0");
__attribute__((noinline)) static long tally(long n) __asm__("tally.isra.0");
static long pick(long n) { for (long i = 0; i < n; i++) sink += i; return sink; }
static long tally(long n) { for (long i = 0; i < n; i++) sink -= i; return sink; }
}
namespace ring {
long zeta(long d);
long alpha(long d);
long mid(long d);
__attribute__((noinline)) long zeta(long d) { return d > 0 ? alpha(d - 1) + 1 : 0; }
__attribute__((noinline)) long alpha(long d) { return d > 0 ? mid(d - 1) + 1 : 0; }
__attribute__((noinline)) long mid(long d) { return d > 0 ? zeta(d - 1) + 1 : 0; }
}
__attribute__((noinline)) long work(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++) s += i ^ (s >> 3);
    return s;
}
volatile long size = 3000000, depth = 299;     // no constants to clone the functions for
int main()
{
    for (int r = 0; r < 30; r++) {
        sink += pick(size) + tally(size / 2) + work(size);
        sink += ring::zeta(depth);
    }
    std::printf("%ld\n", (long)sink & 1);
    return 0;
}
CXX
g++ -pg -g -O2 clones.cc -o clones || { echo "not ok - g++ -pg -O2 builds the clones program"; exit 1; }
check "fixture: pick.constprop.0 is followed by tally.isra.0 in the string table" \
    python3 -c "import sys; sys.exit(b'pick.constprop.0\\0tally.isra.0\\0' not in open('clones', 'rb').read())"
for i in 1 2 3; do
    ./clones > /dev/null && mv gmon.out gc.$i.out
    "$R" --gprof ./clones gc.$i.out > ours.txt 2>ours.err
    gprof -b ./clones gc.$i.out > theirs.txt
    check "clones run $i: --gprof output identical to gprof -b" cmp -s ours.txt theirs.txt
    cmp -s ours.txt theirs.txt || diff ours.txt theirs.txt | head -20
done
# (when a tick lands in the dropped clones, frame_dummy has all the time:
# "100.00" fills the column, no leading blank)
check "...gprof dropped pick.constprop.0: its 30 calls and tally's 30 are frame_dummy's" \
    grep -Eq '^ *[0-9.]+ +[0-9.]+ +[0-9.]+ +60 .* frame_dummy$' ours.txt
check "...frame_dummy has no file in the index" bash -c "grep -q '\] frame_dummy' ours.txt && ! grep -q 'frame_dummy (' ours.txt"
check "...the cycle's members in gprof's walk order, none by name" \
    bash -c "grep -A3 'cycle 1 as a whole' ours.txt | awk 'NR > 1 {print \$4}' | tr '\n' ' ' | grep -qx 'ring::zeta(long) ring::alpha(long) ring::mid(long) '"
finish
