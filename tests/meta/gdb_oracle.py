# gdb_oracle.py - the gdb side of the vprof-meta oracle (run inside gdb).
#
#   ORACLE_SRC=basic.c ORACLE_PCS=pcs ORACLE_OUT=obs \
#     gdb -batch -nx -x gdb_oracle.py --args PROG [ARGS...]
#
# Stops at the first execution of every line-table address of the source
# file ORACLE_SRC and prints, for every variable of basic or pointer type
# visible in the innermost real frame (including the functions that
# inlined frames were inlined into, and the file's globals):
#   PC<TAB>FUNCTION<TAB>NAME<TAB>LINE<TAB>VALUE | <optimized out> | ERR
#   [<TAB>ADDRESS]   (run-time hex address when the variable is in memory)
# ORACLE_EXPRS="func:expr;func:expr" adds member expressions (s.f, p->f)
# evaluated in frames of func, keyed by the base variable's line.
# PCs are link-time (runtime minus the load bias, computed the same way as
# oracle_trace does). The PC list is written to ORACLE_PCS.
import gdb, os, re

src = os.environ["ORACLE_SRC"]
exprs = {}
for item in filter(None, os.environ.get("ORACLE_EXPRS", "").split(";")):
    fn, ex = item.split(":", 1)
    exprs.setdefault(fn, []).append(ex)
out = open(os.environ["ORACLE_OUT"], "w")

gdb.execute("set pagination off")
gdb.execute("set confirm off")
# same process image as oracle_trace: no shell, no extra environment, so
# that even uninitialised stack slots hold the same bytes in both runs
gdb.execute("set startup-with-shell off")
gdb.execute("unset environment LINES")
gdb.execute("unset environment COLUMNS")
for var in ("ORACLE_SRC", "ORACLE_PCS", "ORACLE_OUT", "ORACLE_EXPRS", "_"):
    gdb.execute("unset environment " + var)
gdb.execute("starti", to_string=True)
inf = gdb.selected_inferior()
prog = os.path.realpath(gdb.current_progspace().filename)
bias = None
with open("/proc/%d/maps" % inf.pid) as f:
    for line in f:
        parts = line.split()
        if len(parts) >= 6 and parts[5] == prog:
            lo = int(parts[0].split("-")[0], 16)
            bias = lo if bias is None or lo < bias else bias
# non-PIE executables are mapped at their link addresses
elf_type = open(prog, "rb").read(18)[16]
if elf_type != 3:
    bias = 0

symtab = None
sym = gdb.lookup_global_symbol("main")
if sym is not None and sym.symtab.filename.endswith(src):
    symtab = sym.symtab
else:                       # any other file of the program
    try:
        _, sals = gdb.decode_line(src + ":1")
        symtab = sals[0].symtab if sals else None
    except gdb.error:
        symtab = None
if symtab is None:
    raise SystemExit("gdb_oracle: no symtab for " + src)
# Function entry PCs are left out: before the prologue has run, a frame
# base such as rbp still belongs to the caller, and both gdb and vprof read
# whatever garbage the slot holds (gdb's own `break func` skips the prologue
# for this reason).
pcs = set()
for e in symtab.linetable():
    blk = gdb.block_for_pc(e.pc)
    while blk is not None and blk.function is None:
        blk = blk.superblock
    if blk is not None and blk.start == e.pc:
        continue
    pcs.add(e.pc)
pcs = sorted(pcs)
with open(os.environ["ORACLE_PCS"], "w") as f:
    for pc in pcs:
        f.write("%x\n" % (pc - bias))
for pc in pcs:
    gdb.Breakpoint("*0x%x" % pc, internal=True, temporary=True)

def plain(name):
    """C++: gdb prints "ns::f<int>(int)"; DWARF's DW_AT_name is "f<int>"."""
    if name is None:
        return name
    depth, cut = 0, len(name)
    for i, ch in enumerate(name):          # drop the parameter list
        if ch in "<":
            depth += 1
        elif ch in ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    name = name[:cut]
    depth, start = 0, 0
    for i, ch in enumerate(name):          # drop namespace/class qualifiers
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == ":" and depth == 0 and name[i + 1:i + 2] == ":":
            start = i + 2
    return name[start:]


BASIC = (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_CHAR, gdb.TYPE_CODE_BOOL,
         gdb.TYPE_CODE_ENUM)


def basic(t):
    t = t.strip_typedefs()
    if t.code in BASIC and t.sizeof in (1, 2, 4, 8):
        return True
    return t.code == gdb.TYPE_CODE_FLT and t.sizeof in (4, 8)


def fmt(v, t):
    t = t.strip_typedefs()
    if t.code == gdb.TYPE_CODE_FLT:
        return repr(float(v))
    return str(int(v))


def show(v):
    t = v.type.strip_typedefs()
    if v.is_optimized_out:
        return "<optimized out>"
    if t.code == gdb.TYPE_CODE_PTR:
        tt = t.target()
        if basic(tt):   # recorded as the pointee, like vprof-meta does
            return fmt(v.dereference(), tt)
        return str(int(v))
    return fmt(v, t)


def wanted(sym):
    t = sym.type.strip_typedefs() if sym.type is not None else None
    if t is None:
        return False
    if sym.is_constant:
        # variables with DW_AT_const_value are constants to gdb too; the
        # enumerators of an enum type are not variables
        if sym.addr_class not in (gdb.SYMBOL_LOC_CONST,
                                  gdb.SYMBOL_LOC_CONST_BYTES):
            return False
        if t.code == gdb.TYPE_CODE_ENUM and \
                any(f.name == sym.name for f in t.fields()):
            return False
    elif not (sym.is_variable or sym.is_argument):
        return False
    return basic(t) or t.code == gdb.TYPE_CODE_PTR


def where(sym, f):
    """Address of the variable when it lives in memory (an lvalue), as
    link-time-independent run-time hex; "-" for registers and constants."""
    try:
        v = sym.value(f)
        if v.is_optimized_out or v.address is None:
            return "-"
        return "%x" % int(v.address)
    except (gdb.error, gdb.MemoryError, RuntimeError):
        return "-"


def report(frame, pc):
    seen = set()
    f = frame
    while f is not None:
        try:
            block = f.block()
        except RuntimeError:
            return
        func_block = block
        while block is not None and not block.is_global and \
                not block.is_static:
            fname = block.function.name if block.function else None
            if fname is None:
                b = block
                while b is not None and b.function is None:
                    b = b.superblock
                fname = b.function.name if b is not None else "?"
            for sym in block:
                if sym.name in seen or not wanted(sym):
                    continue
                seen.add(sym.name)
                try:
                    val = show(sym.value(f))
                except (gdb.error, gdb.MemoryError, RuntimeError):
                    val = "ERR"
                out.write("%x\t%s\t%s\t%d\t%s\t%s\n" % (pc - bias,
                          plain(fname), sym.name, sym.line, val, where(sym, f)))
            if block.function is not None:
                break
            block = block.superblock
        b = func_block
        while b is not None and b.function is None:
            b = b.superblock
        if b is not None and b.function.name in exprs:
            f.select()
            for ex in exprs[b.function.name]:
                base = re.split(r"\.|->", ex)[0]
                bsym = gdb.lookup_symbol(base, func_block)[0]
                try:
                    val = show(gdb.parse_and_eval(ex))
                except (gdb.error, gdb.MemoryError, RuntimeError):
                    val = "ERR"
                out.write("%x\t%s\t%s\t%d\t%s\n" % (pc - bias,
                          plain(b.function.name), ex,
                          bsym.line if bsym else 0, val))
        if f.type() != gdb.INLINE_FRAME:
            static = func_block.static_block
            for blk in (static, func_block.global_block):
                for sym in blk:
                    if sym.symtab is None or \
                            not sym.symtab.filename.endswith(src):
                        continue
                    if sym.name in seen or not wanted(sym):
                        continue
                    seen.add(sym.name)
                    try:
                        val = show(sym.value(f))
                    except (gdb.error, gdb.MemoryError, RuntimeError):
                        val = "ERR"
                    out.write("%x\t#global\t%s\t%d\t%s\t%s\n" % (pc - bias,
                              plain(sym.name), sym.line, val, where(sym, f)))
            break
        f = f.older()       # the function this inlined frame lives in


while True:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    if not inf.pid or not inf.threads():
        break
    fr = gdb.selected_frame()
    report(fr, fr.pc())
out.close()
