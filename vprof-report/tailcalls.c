/* tailcalls.c - calls gmon attributes to the wrong caller (symbols.h,
 * vpr_sym_tail_caller).
 *
 * mcount learns its caller from the return address. When g ends in a
 * sibling call (`jmp h`: gcc and clang at -O2, also with -pg), h's mcount
 * sees the return address g was called with, in g's caller f: gmon then
 * holds an arc f -> h that no instruction of f makes, and none g -> h.
 * redis' `_dictRehashStep` is this shape: its `dictRehash` calls are
 * recorded as calls by `dictFind`, `dictAddRaw` and the others, so a
 * rehash step that stopped looked like a change in those callers. The
 * instruction before a return address names the function that was really
 * called; only direct calls and jumps are read (an indirect call names no
 * target, and is left as gmon has it). */
#include "symbols.h"

#include <stdint.h>
#include <string.h>

/* A budget of code bytes read per arc: depth 3 with 16 jumps followed per
 * function could otherwise read hundreds of large functions for one arc of
 * a big program; past it the arc stays as gmon has it. */
enum { JUMP_DEPTH = 3, JUMPS_PER_FUNC = 16, SCAN_BUDGET = 1 << 20 };

static int32_t rel32(const unsigned char *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The function whose direct jump reaches address target: g itself, or a
 * function g jumps to (depth levels); -1 when none. A byte scan, not a
 * disassembly: a jump is taken for one only when its displacement lands
 * exactly on target or on another function's first byte, which data or
 * the middle of another instruction hardly ever does. */
static long jumper(const struct vpr_symtab *t, long g, uint64_t target, int depth,
                   size_t *budget)
{
    const struct vpr_sym *s = &t->syms[g];
    if (s->hi <= s->lo) return -1;
    size_t n = (size_t)(s->hi - s->lo);
    if (n > *budget) return -1;
    *budget -= n;
    const unsigned char *b = vpr_sym_code(t, s->lo, n);
    if (!b) return -1;
    int followed = 0;
    for (size_t i = 0; i + 5 <= n; i++) {
        uint64_t dest;
        if (b[i] == 0xe9)                                       /* jmp rel32 */
            dest = s->lo + i + 5 + (uint64_t)(int64_t)rel32(b + i + 1);
        else if (b[i] == 0x0f && i + 6 <= n && b[i + 1] >= 0x80 && b[i + 1] <= 0x8f)
            dest = s->lo + i + 6 + (uint64_t)(int64_t)rel32(b + i + 2);   /* jcc rel32 */
        else
            continue;
        if (dest >= s->lo && dest < s->hi) continue;            /* a jump inside g */
        if (dest == target) return g;
        if (depth <= 1 || followed >= JUMPS_PER_FUNC) continue;
        long h = vpr_sym_find(t, dest);
        if (h < 0 || h == g || t->syms[h].lo != dest || t->syms[h].plt) continue;
        followed++;
        long j = jumper(t, h, target, depth - 1, budget);
        if (j >= 0) return j;
    }
    return -1;
}

long vpr_sym_call_in(const struct vpr_symtab *t, uint64_t lo, size_t len, long callee,
                     uint64_t *ret)
{
    if (callee < 0 || (size_t)callee >= t->n) return -1;
    long via = -1;
    size_t budget = SCAN_BUDGET;
    for (uint64_t r = lo; r < lo + len; r++) {
        const unsigned char *b = r >= 5 ? vpr_sym_code(t, r - 5, 5) : NULL;
        if (!b || b[0] != 0xe8) continue;                       /* call rel32 */
        uint64_t dest = r + (uint64_t)(int64_t)rel32(b + 1);
        long g = vpr_sym_find(t, dest);
        if (g < 0 || t->syms[g].lo != dest || t->syms[g].plt) continue;
        if (g == callee) { *ret = r; return callee; }           /* a direct call wins */
        long j = via < 0 ? jumper(t, g, t->syms[callee].lo, JUMP_DEPTH, &budget) : -1;
        if (j >= 0) { via = j; *ret = r; }
    }
    return via;
}
