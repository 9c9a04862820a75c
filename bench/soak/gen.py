#!/usr/bin/env python3
"""gen.py - deterministic generator of hostile variable metadata (bench/soak).

Case INDEX of SEED is a pure function of (SEED, INDEX, the program's
context): the same three always give the same file. Two families:

  mutations of a valid .vmeta (vprof-meta --all of the soak program):
      bit flips, truncation, appended bytes, header fields, counts, variable
      descriptors, location entries, entry order, string table, strings of
      up to 200,000 bytes, splices,
      random bytes, random but structurally valid files, several at once;
  structurally valid hostile metadata written as mkmeta text
  (tests/libvprof/mkmeta.c): wild addresses, pointer chains, every register
  and xmm register, extreme numbers, entries over the whole text, thousands
  of entries, chains of entries that span every table slot, overlapping
  ranges, other build-ids, odd variable descriptors, empty files, EXPR
  programs (valid ones reading wild memory, dividing by zero; invalid ones).

The binary layout is docs/FORMATS.md §2. Usage:
  gen.py context PROG BASE.vmeta -o CTX.json     what the generator needs
  gen.py make CTX.json SEED INDEX -o OUT.vmeta   one case (mkmeta via $MKMETA
                                                 or --mkmeta) and its class
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys

HDR = struct.Struct('<8sHHIIIII32s')        # 64 bytes
VAR = struct.Struct('<IIIIIHBBII')          # 32 bytes
ENT = struct.Struct('<QQIBBBBqqq')          # 48 bytes
assert (HDR.size, VAR.size, ENT.size) == (64, 32, 48)
U64 = (1 << 64) - 1
LOC = ['addr', 'reg', 'breg', 'fbreg', 'const']
KINDS = ['sint', 'uint', 'float', 'ptrb', 'ptr', 'bool']
N_REGS = 33                                 # DWARF 0..32: rax..r15, rip, xmm0..15
RSP, RBP = 7, 6


# ---------------------------------------------------------------- context

def make_context(prog, base):
    """Symbols, text range, build-id and the base metadata of PROG."""
    def out(*cmd):
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    secs = {}
    for line in out('readelf', '-SW', prog).splitlines():
        w = line.replace('[ ', '[').split()
        if len(w) > 5 and w[0].startswith('[') and w[1].startswith('.'):
            secs[w[1]] = (int(w[3], 16), int(w[5], 16))
    funcs, globs = [], []
    for line in out('nm', '-S', prog).splitlines():
        w = line.split()
        if len(w) != 4:
            continue
        addr, size, typ, name = int(w[0], 16), int(w[1], 16), w[2], w[3]
        if typ in 'Tt' and size:
            funcs.append([name, addr, size])
        elif typ in 'BbDd' and size:
            globs.append([name, addr, size])
    bid = ''
    for line in out('readelf', '-n', prog).splitlines():
        if 'Build ID:' in line:
            bid = line.split()[-1]
    pie = 'DYN' in out('readelf', '-h', prog)
    tlo, tsz = secs['.text']
    return {'prog': os.path.abspath(prog), 'pie': pie, 'text': [tlo, tlo + tsz],
            'data': [min(g[1] for g in globs), max(g[1] + g[2] for g in globs)],
            'funcs': sorted(funcs, key=lambda f: f[1]), 'globs': sorted(globs),
            'build_id': bid, 'base': open(base, 'rb').read().hex()}


class Ctx:
    def __init__(self, d):
        self.d = d
        self.pie = d['pie']
        self.text_lo, self.text_hi = d['text']
        self.data_lo, self.data_hi = d['data']
        self.funcs = d['funcs']
        self.globs = {g[0]: (g[1], g[2]) for g in d['globs']}
        self.build_id = d['build_id']
        self.base = bytes.fromhex(d['base'])
        # where the CPU time goes: entries here are read at most ticks
        self.hot = [f for f in self.funcs if f[0] in ('mix_round', 'run_rounds', 'spin_main')]
        self.hot = self.hot or self.funcs

    def glob(self, name):
        return self.globs.get(name, (self.data_lo, 8))[0]


def load_context(path):
    with open(path) as f:
        return Ctx(json.load(f))


# ---------------------------------------------------------------- numbers

def s64(v):
    v &= U64
    return v - (1 << 64) if v >> 63 else v


def wild_addr(r, c):
    """An address nobody should read, or one just beside what is mapped."""
    return r.choice([
        0, 8, 4095, 4096, 0x10000, 0xdead0000, 0x7ff000000000, 0x7fffffffffff,
        0x800000000000, 0xffff800000000000, 0xffffffffff600000, U64 - 7, U64,
        c.data_hi, c.data_hi + 4096, c.data_hi + (1 << 20), c.data_lo - 8,
        c.text_lo - 1, c.text_hi, c.glob('g_list') + 4096 * r.randint(-64, 64),
        r.getrandbits(47), r.getrandbits(64)])


def extreme64(r, c):
    return r.choice([0, 1, 7, 8, 4096, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 63) - 1,
                     1 << 63, U64, U64 - 7, -4096 & U64, -8 & U64, c.text_lo, c.text_hi,
                     c.glob('g_phase'), r.getrandbits(64), r.getrandbits(16)])


def extreme32(r, cur=0, n=0):
    return r.choice([0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 0xffff,
                     0x10000, cur + 1, max(cur - 1, 0), cur * 2, n, n // 48, n // 32,
                     r.getrandbits(32), r.getrandbits(8)]) & 0xffffffff


def pc_range(r, c):
    """A link-time PC range, mostly where the program runs."""
    lo, hi = c.text_lo, c.text_hi
    k = r.randrange(12)
    if k < 4:                               # a hot function, or part of it
        f = r.choice(c.hot)
        a, b = f[1], f[1] + f[2]
        if k >= 2:
            a = r.randrange(a, b)
            b = r.randrange(a + 1, b + 1)
        return a, b
    if k < 6:
        f = r.choice(c.funcs)
        return f[1], f[1] + f[2]
    if k == 6:
        return lo, hi                       # the whole text: always live
    if k == 7:
        return 0, U64                       # everything
    if k == 8:
        a = r.randrange(lo, hi)
        return a, a + 1                     # one byte
    if k == 9:
        return lo - r.randint(1, 4096), lo + r.randint(1, 64)     # straddles the start
    if k == 10:
        return hi - r.randint(1, 64), hi + r.randint(0, 1 << 20)  # straddles the end
    a = r.getrandbits(64)
    return a, min(a + r.getrandbits(r.randint(1, 40)) + 1, U64)   # anywhere


# ---------------------------------------------------------------- text (mkmeta) cases

class Text:
    def __init__(self, r, c, flags=None):
        self.r, self.c = r, c
        self.lines = []
        if flags is None:
            flags = int(c.pie) if r.random() < 0.85 else r.choice([0, 1, 2, 3, 0xffffffff])
        self.lines.append('flags %d' % flags)
        self.vars = []

    def var(self, name=None, fn=None, kind=None, size=None):
        r = self.r
        name = name or 'v%d' % len(self.vars)
        fn = fn or ('#global' if r.random() < 0.5 else r.choice(self.c.funcs)[0])
        kind = kind or r.choice(KINDS)
        size = size or (r.choice([4, 8]) if kind == 'float' else r.choice([1, 2, 4, 8]))
        self.lines.append('var %s %s %s %d' % (name, fn, kind, size))
        self.vars.append(name)
        return name

    def entry(self, var, lo, hi, loc, reg, size, flags, off, fb=0, deref=0):
        # (expr: off is the program, or @N)
        self.lines.append('entry %s %d %d %s %d %d %d %s %d %d' % (
            var, lo & U64, hi & U64, loc, reg, size, flags,
            off if isinstance(off, str) else s64(off), s64(fb), s64(deref)))

    def any_var(self):
        return self.r.choice(self.vars) if self.vars else self.var()

    def text(self):
        return '\n'.join(self.lines) + '\n'


def size_flags(r):
    size = r.choice([1, 2, 4, 8, 8])
    flags = r.choice([0, 0, 1, 2, 3, 4, 5, 6, 7, 0xf8, 0xff])
    return size, flags


def t_wild(r, c):
    t = Text(r, c)
    for _ in range(r.choice([1, 5, 50, 200])):
        v = t.any_var() if r.random() < 0.7 else t.var()
        size, flags = size_flags(r)
        lo, hi = pc_range(r, c)
        k = r.randrange(3)
        if k == 0:
            t.entry(v, lo, hi, 'addr', 0, size, flags, wild_addr(r, c))
        elif k == 1:
            t.entry(v, lo, hi, 'breg', r.randrange(17), size, flags, extreme64(r, c))
        else:
            t.entry(v, lo, hi, 'fbreg', r.randrange(17), size, flags,
                    extreme64(r, c), extreme64(r, c))
    return t.text()


def t_deref(r, c):
    """Pointers followed: the list, the heap table, the string, stack slots
    and registers taken as pointers, and pointer fields chained node by node."""
    t = Text(r, c)
    node = 32
    for _ in range(r.choice([1, 10, 60, 300])):
        v = t.any_var() if r.random() < 0.7 else t.var()
        size, flags = size_flags(r)
        flags |= 1
        lo, hi = pc_range(r, c)
        k = r.randrange(7)
        doff = r.choice([0, 8, 16, 24, node, node * r.randint(1, 70), -8, -4096,
                         8 * r.randint(0, 2048), extreme64(r, c)])
        if k == 0:
            t.entry(v, lo, hi, 'addr', 0, size, flags, c.glob('g_list'), 0, doff)
        elif k == 1:
            t.entry(v, lo, hi, 'addr', 0, size, flags, c.glob('g_table'), 0, doff)
        elif k == 2:
            t.entry(v, lo, hi, 'addr', 0, size, flags, c.glob('g_name'), 0, doff)
        elif k == 3:                        # node i's next pointer, followed
            base = c.glob('nodes') + node * r.randrange(70)
            t.entry(v, lo, hi, 'addr', 0, size, flags, base, 0, doff)
        elif k == 4:
            t.entry(v, lo, hi, 'breg', r.choice([RSP, RBP, r.randrange(17)]), size, flags,
                    8 * r.randint(-16, 64), 0, doff)
        elif k == 5:
            t.entry(v, lo, hi, 'reg', r.randrange(N_REGS), size, flags,
                    r.choice([0, 0, 8, 4, 12]), 0, doff)
        else:
            t.entry(v, lo, hi, 'fbreg', r.choice([RSP, RBP]), size, flags,
                    8 * r.randint(-8, 8), 8 * r.randint(-4, 4), doff)
    return t.text()


def t_regs(r, c, only_xmm=False):
    """Every register (or every xmm register) as value, base and frame base."""
    t = Text(r, c)
    regs = range(17, 33) if only_xmm else range(N_REGS)
    for reg in regs:
        for loc in ('reg', 'breg', 'fbreg'):
            for _ in range(r.choice([1, 1, 2, 4])):
                v = t.any_var() if r.random() < 0.6 else t.var(kind='float' if only_xmm else None)
                size, flags = size_flags(r)
                if only_xmm and r.random() < 0.5:
                    flags = 4
                lo, hi = pc_range(r, c)
                off = r.choice([0, 0, 4, 8, 12, 15, 16, 17, 255, -1]) if loc == 'reg' \
                    else r.choice([0, 8, -8, 8 * r.randint(-64, 64), extreme64(r, c)])
                t.entry(v, lo, hi, loc, reg, size, flags, off,
                        r.choice([0, 8, 16, extreme64(r, c)]))
    return t.text()


def t_xmm(r, c):
    return t_regs(r, c, only_xmm=True)


def t_huge(r, c):
    """Extreme numbers in every field that the reader accepts."""
    t = Text(r, c)
    for _ in range(r.choice([1, 20, 100])):
        v = t.any_var() if r.random() < 0.5 else t.var()
        lo = r.choice([0, 0, 1, c.text_lo, (1 << 63), U64 - 1, r.getrandbits(64) >> 1])
        hi = r.choice([U64, U64, lo + 1, c.text_hi, (1 << 63) + 1])
        if hi <= lo:
            hi = U64
        loc = r.choice(LOC)
        t.entry(v, lo, hi, loc, r.randrange(N_REGS), r.choice([1, 2, 4, 8]),
                r.choice([0, 1, 3, 4, 5, 7, 0xff]), extreme64(r, c), extreme64(r, c),
                extreme64(r, c))
    return t.text()


# EXPR programs (FORMATS.md §2.1), '_' for spaces (mkmeta): tokens that
# push (registers, the stack, the program's globals, wild addresses), read
# and compute, and whole programs that break a rule
def expr_push(r, c):
    k = r.randrange(6)
    if k == 0:
        return 'r%d%+d' % (r.randrange(17), r.choice([0, 0, -1, 8, -80, 1 << 20]))
    if k == 1:
        return 'f%+d' % (8 * r.randint(-16, 16))
    if k == 2:
        return 'a%d' % r.choice(list(c.globs.values()))[0]
    if k == 3:
        return '#%d' % s64(r.choice([0, 1, -1, 255, 1 << 63, wild_addr(r, c), extreme64(r, c)]))
    if k == 4:
        return 'r%d_d8' % r.choice([RSP, RBP])      # a pointer from the frame
    return 'a%d_d8' % c.glob('g_list')


EXPR_WORDS = ['add', 'sub', 'mul', 'div', 'mod', 'and', 'or', 'xor', 'shl', 'shr', 'shra',
              'eq', 'ne', 'lt', 'gt', 'le', 'ge']
EXPR_BAD = ['add', '#1_#0_div', '#1_#0_mod', 'r17', 'r6_d3', '#1__#2', '#1_', '_#1', 'k9',
            '#1_bogus', '#99999999999999999999', '_'.join(['#1'] * 9),
            '_'.join(['#1'] + ['#1_add'] * 16), 'r6-1_' + 'x' * 300, '#1_drop', 'd8']


def expr_prog(r, c):
    if r.random() < 0.25:
        return r.choice(EXPR_BAD)
    toks = [expr_push(r, c)]
    depth = 1
    for _ in range(r.choice([0, 1, 3, 8, 20])):
        k = r.randrange(5)
        if k == 0 or depth == 1:
            toks.append(expr_push(r, c))
            depth += 1
        elif k == 1:
            toks.append('d%d' % r.choice([1, 2, 4, 8]))
        elif k == 2:
            toks.append(r.choice(['neg', 'not', 'abs', 'dup', 'swap', 'over', 'rot', 'drop',
                                  'k%d' % r.randrange(8)]))
        else:
            toks.append(r.choice(EXPR_WORDS))
            depth -= 1
    return '_'.join(toks)


def t_expr(r, c):
    """Computed values: EXPR programs that read the stack, registers,
    globals and wild memory, divide by zero, break the limits; programs
    named by raw offsets into the string table."""
    t = Text(r, c)
    for _ in range(r.choice([1, 10, 100, 500])):
        v = t.any_var() if r.random() < 0.7 else t.var()
        size, flags = size_flags(r)
        lo, hi = pc_range(r, c) if r.random() < 0.8 else (c.text_lo, c.text_hi)
        prog = expr_prog(r, c) if r.random() < 0.9 else '@%d' % r.randrange(1, 64)
        t.entry(v, lo, hi, "expr", r.choice([RSP, RBP, r.randrange(17)]), size,
                flags & ~1 if r.random() < 0.9 else flags | 1,
                prog, r.choice([0, 8, 16, extreme64(r, c)]))
    return t.text()


def sane_entry(r, c, t, v, lo, hi):
    """An entry that reads something real (a global, a register, the stack)."""
    k = r.randrange(5)
    if k == 0:
        g = r.choice(list(c.globs.items()))
        t.entry(v, lo, hi, 'addr', 0, r.choice([1, 2, 4, 8]), 0, g[1][0])
    elif k == 1:
        t.entry(v, lo, hi, 'reg', r.randrange(17), 8, 0, 0)
    elif k == 2:
        t.entry(v, lo, hi, 'breg', RSP, 8, 0, 8 * r.randint(0, 16))
    elif k == 3:
        t.entry(v, lo, hi, 'const', 0, 8, 0, r.getrandbits(32))
    else:
        t.entry(v, lo, hi, 'addr', 0, 8, 0, wild_addr(r, c))


def t_alltext(r, c):
    t = Text(r, c)
    for _ in range(r.choice([1, 10, 100, 1000, 3000])):
        sane_entry(r, c, t, t.any_var() if r.random() < 0.9 else t.var(),
                   c.text_lo, c.text_hi)
    return t.text()


def t_many(r, c):
    """Thousands of entries: live everywhere, in the hot functions, one byte wide."""
    t = Text(r, c)
    n = r.choice([1000, 2000, 5000, 10000])
    for i in range(min(r.choice([1, 10, 1000, 4096]), n)):
        t.var('m%d' % i)
    far = r.random() < 0.4                  # the livelock shape of issue 14
    for _ in range(n):
        v = t.any_var()
        k = r.randrange(3)
        lo, hi = (c.text_lo, c.text_hi) if k == 0 else pc_range(r, c)
        if far:
            t.entry(v, lo, hi, 'addr', 0, 8, 0, 0x7ff000000000 + 8 * r.randrange(1 << 20))
        else:
            sane_entry(r, c, t, v, lo, hi)
    return t.text()


def t_chains(r, c):
    """Entries that cover the text but one byte: not always-live, so each one
    has an element in every table slot (VariableArray of n x slots)."""
    t = Text(r, c)
    n = r.choice([10, 100, 1000, 3000, 10000])
    for _ in range(n):
        lo, hi = (c.text_lo + 1, c.text_hi) if r.random() < 0.5 else (c.text_lo, c.text_hi - 1)
        sane_entry(r, c, t, t.any_var() if r.random() < 0.95 else t.var(), lo, hi)
    return t.text()


def t_overlap(r, c):
    t = Text(r, c)
    f = r.choice(c.hot)
    a, b = f[1], f[1] + f[2]
    for _ in range(r.choice([5, 50, 500])):
        v = t.any_var() if r.random() < 0.8 else t.var()
        k = r.randrange(6)
        if k == 0:
            lo, hi = a, b                               # identical
        elif k == 1:
            lo = r.randrange(a, b)
            hi = r.randrange(lo + 1, b + 1)             # nested
        elif k == 2:
            lo = r.randrange(a, b)
            hi = lo + r.randint(1, 4096)                # overlapping the next ones
        elif k == 3:
            lo, hi = c.text_lo - r.randint(0, 64), c.text_hi + r.randint(0, 64)
        elif k == 4:
            lo = r.randrange(c.text_lo, c.text_hi)
            hi = lo + 1
        else:
            lo, hi = pc_range(r, c)
        sane_entry(r, c, t, v, lo, hi)
    return t.text()


def t_buildid(r, c):
    t = Text(r, c)
    real = c.build_id
    k = r.randrange(6)
    if k == 0:
        bid = ''.join('%02x' % r.getrandbits(8) for _ in range(r.randint(1, 32)))
    elif k == 1:
        bid = real                                      # the right one: accepted
    elif k == 2 and len(real) > 2:
        bid = real[:-2]                                 # a prefix
    elif k == 3 and real:
        i = r.randrange(len(real))
        bid = real[:i] + ('0' if real[i] != '0' else '1') + real[i + 1:]
    elif k == 4:
        bid = (real * 2)[:64]                           # longer than the real one
    else:
        bid = '00'
    t.lines.append('buildid ' + bid)
    for _ in range(r.choice([1, 5, 20])):
        sane_entry(r, c, t, t.any_var() if r.random() < 0.7 else t.var(), *pc_range(r, c))
    return t.text()


def t_vars(r, c):
    """Odd descriptors: long and strange names, many variables, sizes that
    disagree with their entries, a size the reader rejects."""
    t = Text(r, c)
    for i in range(r.choice([1, 10, 500, 4096])):
        k = r.randrange(6)
        if k == 0:
            name = 'n%d_' % i + 'x' * r.randint(100, 240)
        elif k == 1:
            name = 'p%d%%25%%0a\x01\x7f\xff\xc3\x28' % i      # percent signs, bytes
        else:
            name = None
        size = r.choice([1, 2, 4, 8, 8, 8, 3, 16, 0]) if r.random() < 0.05 else None
        t.var(name=name, size=size, fn=r.choice(['#global', 'main', '%', 'x' * 200]))
    for _ in range(r.choice([0, 10, 200])):
        sane_entry(r, c, t, t.any_var(), *pc_range(r, c))
    return t.text()


def t_empty(r, c):
    t = Text(r, c)
    for _ in range(r.choice([0, 0, 1, 50])):
        t.var()
    return t.text()


# ---------------------------------------------------------------- binary mutations

class Bin:
    """The file being mutated and where its parts are, from its own header,
    clipped to what the buffer holds (an earlier mutation may have cut it)."""
    def __init__(self, data):
        self.b = bytearray(data)
        self.refresh()

    def refresh(self):
        n = len(self.b)
        h = HDR.unpack_from(self.b.ljust(64, b'\0'), 0)
        self.vars_off = min(64, n)
        self.n_vars = min(h[4], (n - self.vars_off) // 32)
        self.ents_off = self.vars_off + 32 * self.n_vars
        self.n_ents = min(h[5], (n - self.ents_off) // 48)
        self.str_off = self.ents_off + 48 * self.n_ents
        self.strtab = min(h[6], n - self.str_off)


def m_flip(r, c, m, lo=0, hi=None):
    hi = hi or len(m.b)
    for _ in range(r.choice([1, 1, 2, 4, 8, 32])):
        i = r.randrange(lo, hi)
        m.b[i] ^= 1 << r.randrange(8)


def m_flip_header(r, c, m):
    m_flip(r, c, m, 0, min(64, len(m.b)))


def m_truncate(r, c, m):
    n = len(m.b)
    cut = r.choice([0, 1, 8, 63, 64, m.ents_off, m.ents_off + 48 * r.randrange(max(m.n_ents, 1)),
                    m.str_off, m.str_off + 1, n - 1, r.randrange(n)])
    del m.b[min(cut, n - 1):]


def m_extend(r, c, m):
    k = r.choice([1, 7, 48, 4096])
    m.b += bytes(k) if r.random() < 0.5 else r.randbytes(k)


HDR_FIELDS = [(0, 8), (8, 2), (10, 2), (12, 4), (16, 4), (20, 4), (24, 4), (28, 4), (32, 32)]


def m_header_field(r, c, m):
    if len(m.b) < 64:
        return m_flip(r, c, m)
    off, size = r.choice(HDR_FIELDS)
    cur = int.from_bytes(m.b[off:off + size], 'little')
    if size == 2:
        v = r.choice([0, 1, 2, 8, 56, 63, 64, 65, 72, 128, 0xffff, cur + 8])
    elif size == 4:
        v = extreme32(r, cur, len(m.b))
    elif size == 8:
        v = int.from_bytes(r.choice([b'VPRFMETX', b'\0' * 8, b'VPRFVALS', r.randbytes(8)]), 'little')
    else:
        v = int.from_bytes(r.randbytes(32), 'little')
    m.b[off:off + size] = (v & ((1 << (8 * size)) - 1)).to_bytes(size, 'little')


def m_counts(r, c, m):
    """Counts that disagree with the file, or a consistent smaller file."""
    if len(m.b) < 64:
        return m_flip(r, c, m)
    k = r.randrange(4)
    if k == 0:                              # keep the first few entries: valid
        keep = r.randrange(m.n_ents + 1)
        body = m.b[m.ents_off:m.ents_off + 48 * keep] + m.b[m.str_off:]
        m.b[20:24] = keep.to_bytes(4, 'little')
        m.b[m.ents_off:] = body
    elif k == 1:                            # fewer variables: entries point past them
        m.b[16:20] = r.randrange(m.n_vars + 1).to_bytes(4, 'little')
    elif k == 2:                            # swap the two counts
        m.b[16:20], m.b[20:24] = m.b[20:24], m.b[16:20]
    else:
        off = r.choice([16, 20, 24])
        m.b[off:off + 4] = extreme32(r, int.from_bytes(m.b[off:off + 4], 'little'),
                                     len(m.b)).to_bytes(4, 'little')


def m_var_field(r, c, m):
    if not m.n_vars:
        return m_flip(r, c, m)
    for _ in range(r.choice([1, 1, 3, m.n_vars])):
        base = m.vars_off + 32 * r.randrange(m.n_vars)
        f = r.randrange(8)
        if f < 4:                           # string offsets
            v = r.choice([m.strtab - 1, m.strtab, m.strtab + 1, 0xffffffff, 0,
                          r.randrange(max(m.strtab, 1))])
            m.b[base + 4 * f:base + 4 * f + 4] = (v & 0xffffffff).to_bytes(4, 'little')
        elif f == 4:
            m.b[base + 16:base + 20] = extreme32(r).to_bytes(4, 'little')
        elif f == 5:
            m.b[base + 20:base + 22] = r.getrandbits(16).to_bytes(2, 'little')
        elif f == 6:
            m.b[base + 22] = r.choice([0, 1, 2, 3, 4, 5, 5, 6, 255])
        else:
            m.b[base + 23] = r.choice([1, 2, 4, 8, 8, 0, 3, 16, 255])


def m_entry_field(r, c, m):
    """Entry fields: mostly values the reader accepts (hostile, not invalid)."""
    if not m.n_ents:
        return m_flip(r, c, m)
    for _ in range(r.choice([1, 1, 4, m.n_ents])):
        i = r.randrange(m.n_ents)
        e = list(ENT.unpack_from(m.b, m.ents_off + 48 * i))
        bad = r.random() < 0.1
        f = r.randrange(10)
        if f < 2:
            e[0], e[1] = pc_range(r, c)
            if bad:
                e[0], e[1] = e[1], e[0]
        elif f == 2:
            e[2] = r.randrange(m.n_vars) if not bad else extreme32(r, e[2])
        elif f == 3:
            e[3] = r.randrange(6) if not bad else r.choice([6, 7, 255])
            if e[3] == 5 and not bad:       # EXPR: some string taken for a program
                e[4] = r.randrange(17)
                e[7] = r.randrange(1, max(m.strtab - 1, 2))
        elif f == 4:
            e[4] = r.randrange(N_REGS) if not bad else r.choice([33, 64, 255])
        elif f == 5:
            e[5] = r.choice([1, 2, 4, 8]) if not bad else r.choice([0, 3, 16, 255])
        elif f == 6:
            e[6] = r.getrandbits(8)
        else:                               # offset, fb_offset, deref_offset
            e[f] = s64(r.choice([extreme64(r, c), wild_addr(r, c), e[f] + 8 * r.randint(-8, 8)]))
        e[0] &= U64
        e[1] &= U64
        ENT.pack_into(m.b, m.ents_off + 48 * i, *e)


def m_entry_order(r, c, m):
    """Entries out of order, duplicated over each other."""
    ents = [bytes(m.b[m.ents_off + 48 * i:m.ents_off + 48 * (i + 1)]) for i in range(m.n_ents)]
    if not ents:
        return m_flip(r, c, m)
    k = r.randrange(3)
    if k == 0:
        r.shuffle(ents)
    elif k == 1:
        ents.reverse()
    else:
        one = r.choice(ents)
        ents = [one if r.random() < 0.5 else e for e in ents]
    m.b[m.ents_off:m.str_off] = b''.join(ents)


def m_strtab(r, c, m):
    if m.strtab < 2 or m.str_off >= len(m.b):
        return m_flip(r, c, m)
    k = r.randrange(4)
    if k == 0:
        m.b[-1] = r.choice([1, 0x41, 0xff])     # no final NUL
    elif k == 1:
        m.b[m.str_off] = 0x41                   # no leading NUL
    else:
        for _ in range(r.choice([1, 8, 64])):
            i = r.randrange(m.str_off, len(m.b) - 1)
            m.b[i] = r.choice([0, 9, 10, 13, 0x25, 0x7f, 0x80, 0xff, r.getrandbits(8)])


def m_longstr(r, c, m):
    """Strings far longer than any line buffer (C++ type names run to many
    KiB), full of bytes the layout log must escape, named by some variables."""
    if m.n_vars == 0 or len(m.b) < 64 or m.str_off + m.strtab != len(m.b):
        return m_flip(r, c, m)
    alphabet = b'ab,%\t\n\r<>:\x80\xff' + bytes(range(1, 32))
    off = m.strtab
    s = bytes(r.choice(alphabet) for _ in range(r.choice([1000, 9000, 40000, 200000])))
    m.b += s + b'\0'
    m.b[24:28] = (m.strtab + len(s) + 1).to_bytes(4, 'little')
    for _ in range(r.choice([1, 2, m.n_vars])):
        base = m.vars_off + 32 * r.randrange(m.n_vars)
        f = r.randrange(4)
        m.b[base + 4 * f:base + 4 * f + 4] = (off + r.randrange(8)).to_bytes(4, 'little')


def m_splice(r, c, m):
    n = len(m.b)
    k = r.choice([8, 32, 48, 64, 512])
    src, dst = r.randrange(n), r.randrange(n)
    chunk = m.b[src:src + k]
    m.b[dst:dst + len(chunk)] = chunk


def m_garbage(r, c, m):
    n = r.choice([0, 1, 63, 64, 100, 4096, 65536])
    b = bytearray(r.randbytes(n))
    if n >= 64 and r.random() < 0.7:
        b[0:12] = b'VPRFMETA' + struct.pack('<HH', 1, 64)
    m.b = b


def m_random_valid(r, c, m):
    """A random file that passes every check of the reader: random numbers in
    every field the reader does not check."""
    nv = r.choice([1, 3, 50, 500])
    ne = r.choice([0, 1, 10, 300, 3000])
    strtab = b'\0' + r.randbytes(r.choice([0, 10, 200])).replace(b'\0', b'a') + b'\0'
    vars_ = b''.join(VAR.pack(*(r.randrange(len(strtab)) for _ in range(4)), r.getrandbits(32),
                              r.getrandbits(16), r.randrange(6), r.choice([1, 2, 4, 8]),
                              r.getrandbits(32), r.getrandbits(32)) for _ in range(nv))
    ents = []
    for _ in range(ne):
        lo, hi = pc_range(r, c) if r.random() < 0.8 else (r.getrandbits(63), U64)
        loc = r.randrange(6)
        # EXPR (5): its program is some bytes of the string table
        off = r.randrange(1, len(strtab) - 1) if loc == 5 and len(strtab) > 2 \
            else r.getrandbits(64)
        ents.append(ENT.pack(lo & U64, hi & U64, r.randrange(nv), loc,
                             r.randrange(17 if loc == 5 else N_REGS),
                             r.choice([1, 2, 4, 8]), r.getrandbits(8), s64(off),
                             s64(r.getrandbits(64)), s64(r.getrandbits(64))))
    bid = bytes.fromhex(c.build_id) if r.random() < 0.5 else b''
    flags = int(c.pie) if r.random() < 0.8 else r.getrandbits(32)
    m.b = bytearray(HDR.pack(b'VPRFMETA', 1, 64, flags, nv, ne, len(strtab), len(bid),
                             bid.ljust(32, b'\0')) + vars_ + b''.join(ents) + strtab)


MUTATIONS = {
    'flip': m_flip, 'flip-header': m_flip_header, 'truncate': m_truncate,
    'extend': m_extend, 'header-field': m_header_field, 'counts': m_counts,
    'var-field': m_var_field, 'entry-field': m_entry_field, 'entry-order': m_entry_order,
    'strtab': m_strtab, 'longstr': m_longstr, 'splice': m_splice, 'garbage': m_garbage,
    'random-valid': m_random_valid,
}
TEXTS = {
    'wild': t_wild, 'deref': t_deref, 'regs': t_regs, 'xmm': t_xmm, 'huge': t_huge,
    'alltext': t_alltext, 'many': t_many, 'chains': t_chains, 'overlap': t_overlap,
    'buildid': t_buildid, 'vars': t_vars, 'empty': t_empty, 'expr': t_expr,
}
# relative weights: half mutations, half hostile-but-valid text
WEIGHTS = {
    'flip': 4, 'flip-header': 2, 'truncate': 3, 'extend': 1, 'header-field': 4, 'counts': 3,
    'var-field': 4, 'entry-field': 8, 'entry-order': 2, 'strtab': 2, 'longstr': 2, 'splice': 2,
    'garbage': 1, 'random-valid': 6, 'multi': 4,
    'wild': 5, 'deref': 6, 'regs': 5, 'xmm': 3, 'huge': 4, 'alltext': 4, 'many': 4,
    'chains': 2, 'overlap': 4, 'buildid': 3, 'vars': 3, 'empty': 1, 'expr': 6,
}
CLASSES = sorted(WEIGHTS)


def rng(seed, index):
    return random.Random('vprof-soak/%s/%d' % (seed, index))


def pick_class(r):
    return r.choices(CLASSES, [WEIGHTS[k] for k in CLASSES])[0]


def class_of(seed, index):
    return pick_class(rng(seed, index))


def generate(c, seed, index):
    """-> (class, 'bin', bytes) or (class, 'text', str): case INDEX of SEED."""
    r = rng(seed, index)
    cls = pick_class(r)
    if cls in TEXTS:
        return cls, 'text', TEXTS[cls](r, c)
    m = Bin(c.base)
    ops = [cls] if cls != 'multi' else r.choices(
        [k for k in MUTATIONS if k not in ('garbage', 'random-valid')], k=r.randint(2, 6))
    for op in ops:
        if len(m.b):
            MUTATIONS[op](r, c, m)
        m.refresh()
    return cls, 'bin', bytes(m.b)


def materialize(c, seed, index, out, mkmeta):
    """Writes case INDEX to OUT (.vmeta; text cases also OUT.txt); -> class."""
    cls, kind, data = generate(c, seed, index)
    if kind == 'bin':
        with open(out, 'wb') as f:
            f.write(data)
    else:
        with open(out + '.txt', 'wb') as f:
            f.write(data.encode('latin-1', 'replace'))
        p = subprocess.run([mkmeta, out + '.txt', out], capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError('mkmeta failed on case %s/%d (%s): %s'
                               % (seed, index, cls, p.stderr.strip()))
    return cls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    a = sub.add_parser('context')
    a.add_argument('prog')
    a.add_argument('base')
    a.add_argument('-o', required=True)
    a = sub.add_parser('make')
    a.add_argument('ctx')
    a.add_argument('seed')
    a.add_argument('index', type=int)
    a.add_argument('-o', required=True)
    a.add_argument('--mkmeta', default=os.environ.get('MKMETA', 'mkmeta'))
    args = ap.parse_args()
    if args.cmd == 'context':
        with open(args.o, 'w') as f:
            json.dump(make_context(args.prog, args.base), f)
    else:
        print(materialize(load_context(args.ctx), args.seed, args.index, args.o, args.mkmeta))


if __name__ == '__main__':
    sys.exit(main())
