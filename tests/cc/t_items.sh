#!/bin/bash
# Container items (FORMATS.md §1 `@items`): the schema pass records, per
# function, the std:: containers held in a member or a global that it adds
# to (push_back, emplace_back, push, insert: `add`) or walks (size(),
# data(), begin(), end() in a function with a loop: `walk`). Not a string's
# characters, not a program's own method named insert() or size(), not a
# size() check in a function without a loop. The same lines at -O0 and
# -O2; no code change.
. tests/lib.sh
. tests/cc/lib_cc.sh
cd "$TMP"

cat > it.cc <<'CC'
#include <string>
#include <vector>
#include <queue>
struct Sub { unsigned session; unsigned char qos; };
struct Node { std::vector<Sub> subs; std::string name; };
struct Own { int n; void insert(int) { n++; } unsigned size() const { return n; } };
std::queue<int> g_work;
Own g_own;
void subscribe(Node *node, unsigned s)
{
    node->subs.push_back({s, 1});
}
unsigned offer_all(const Node *node)
{
    unsigned t = 0;
    for (const Sub &s : node->subs)
        t += s.session;
    return t;
}
unsigned name_len(const Node *node)
{
    unsigned t = 0;
    for (unsigned i = 0; i < node->name.size(); i++)
        t += node->name[i];
    return t;
}
bool has_subs(const Node *node)
{
    return node->subs.size() > 0;
}
void enqueue(int x)
{
    g_work.push(x);
    g_own.insert(x);
}
unsigned own_walk()
{
    unsigned t = 0;
    for (unsigned i = 0; i < g_own.size(); i++)
        t += i;
    return t;
}
CC
for O in -O0 -O2; do
    "$VCXX" $O -c it.cc -o it$O.o && dump_of it$O.o | grep '^items ' | sort > it$O.txt
done
check "@items: adds and walks of std:: containers held in members and globals" diff - it-O0.txt <<'IT'
items it.cc|_Z7enqueuei|33|add|g_work
items it.cc|_Z9offer_allPK4Node|16|walk|struct Node.subs
items it.cc|_Z9subscribeP4Nodej|11|add|struct Node.subs
IT
check "@items: the same lines at -O2" cmp -s it-O0.txt it-O2.txt
check "pass leaves code unchanged at -O2 (it.cc)" same_code -O2 it.cc clang++-14
finish
