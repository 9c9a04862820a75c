/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * tierjit - the execution engine of a scripted pricing service. Rules are
 * small stack-bytecode functions the host calls, one per request. A rule
 * starts in the interpreter (tagged ints or floats); when its call counter
 * reaches its tier-up point it is compiled (decoded once, constants folded,
 * value-numbered, int-only) behind an entry guard that its arguments are
 * ints. A float argument fails the guard: the code is thrown away (deopt)
 * and the call is interpreted. Like a tracing JIT's hot-count penalty, each
 * deopt doubles the wait before the next compile.
 *
 * The bug: schedule_tier_up() stores the wait as the tier-up point itself
 * instead of adding it to the calls already counted, so a rule that deopts
 * (long past that point) is compiled again on its next int call. Rare float
 * prices (normal: --float-pct 1) cost a few hundred compiles; half of them
 * floats (buggy: --float-pct 50) recompile after nearly every float.
 */
#include "../common/corpus.h"

#define MAX_FUNCS   256
#define MAX_CODE    2048        /* bytes of bytecode per function */
#define MAX_IR      1024
#define MAX_STACK   64
#define NARGS       3
#define BACKOFF_MAX 5           /* the wait stops doubling at 32x hot_calls, so
                                   a rule whose prices turn int again is retried */

/* Bytecode: one opcode byte, then its operand (ARG, SHR: 1 byte; CONST: 4). */
enum { OP_ARG, OP_CONST, OP_ADD, OP_SUB, OP_MUL, OP_XOR, OP_SHR, OP_DUP, OP_RET,
       /* compiled tier only: a binary op with a folded constant operand */
       OP_ADDK, OP_SUBK, OP_MULK, OP_XORK, OP_ZERO2, N_OPS };

typedef struct { int is_float; union { int64_t i; double d; } u; } value_t;

typedef struct { uint8_t op; int64_t k; } ir_t;                   /* decoded op */
typedef struct { int n, max_depth; ir_t *ops; } compiled_t;       /* tier 1 code */

typedef struct {
    int id, takes_price;        /* takes_price: argument 0 may be a float */
    uint8_t code[MAX_CODE];
    int len;
    uint64_t calls, tier_up_at;
    unsigned deopts;
    compiled_t *jit;
} func_t;

typedef struct {
    func_t funcs[MAX_FUNCS];
    int nfuncs;
    uint64_t hot_calls;
    uint64_t compiles, zeroed, deopts, interp_calls, jit_calls, ops_compiled;
} vm_t;

static void *xmalloc(size_t n)
{
    void *p = calloc(1, n);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

/* ------------------------------------------------------------ values */
static value_t int_val(int64_t i) { value_t v = {0, {.i = i}}; return v; }
static value_t float_val(double d) { value_t v = {1, {.d = d}}; return v; }

static double as_double(value_t v) { return v.is_float ? v.u.d : (double)v.u.i; }

/* Bitwise ops on a float truncate it; out of range (or NaN) gives 0 so that
 * the conversion is always defined. */
static int64_t as_int(value_t v)
{
    if (!v.is_float)
        return v.u.i;
    if (!(v.u.d > -1e15 && v.u.d < 1e15))
        return 0;
    return (int64_t)v.u.d;
}

/* Int arithmetic wraps (done in uint64_t), as the compiled tier's does. */
static int64_t int_binop(int op, int64_t a, int64_t b)
{
    uint64_t x = (uint64_t)a, y = (uint64_t)b;
    switch (op) {
    case OP_ADD: return (int64_t)(x + y);
    case OP_SUB: return (int64_t)(x - y);
    case OP_MUL: return (int64_t)(x * y);
    case OP_XOR: return (int64_t)(x ^ y);
    default:     return (int64_t)(x >> (y & 63));
    }
}

/* Tier 0's generic arithmetic: floats are contagious for + - *. */
static value_t value_binop(int op, value_t a, value_t b)
{
    if ((a.is_float || b.is_float) && op != OP_XOR && op != OP_SHR) {
        double x = as_double(a), y = as_double(b);
        return float_val(op == OP_ADD ? x + y : op == OP_SUB ? x - y : x * y);
    }
    return int_val(int_binop(op, as_int(a), as_int(b)));
}

/* ------------------------------------------------------ tier 0: interpreter */
static int32_t read_i32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

static value_t interp_run(const func_t *f, const value_t *args)
{
    value_t stack[MAX_STACK];
    int sp = 0;
    for (int pc = 0; pc < f->len;) {
        uint8_t op = f->code[pc++];
        switch (op) {
        case OP_ARG:   stack[sp++] = args[f->code[pc++]]; break;
        case OP_CONST: stack[sp++] = int_val(read_i32(f->code + pc)); pc += 4; break;
        case OP_DUP:   stack[sp] = stack[sp - 1]; sp++; break;
        case OP_SHR:   stack[sp - 1] = value_binop(OP_SHR, stack[sp - 1], int_val(f->code[pc++])); break;
        case OP_RET:   return stack[sp - 1];
        default:       sp--; stack[sp - 1] = value_binop(op, stack[sp - 1], stack[sp]); break;
        }
    }
    return stack[sp - 1];
}

/* ------------------------------------------------- tier 1: the compiler */
static int decode_bytecode(const func_t *f, ir_t *ir)
{
    int n = 0;
    for (int pc = 0; pc < f->len;) {
        ir[n].op = f->code[pc++];
        ir[n].k = 0;
        if (ir[n].op == OP_ARG || ir[n].op == OP_SHR)
            ir[n].k = f->code[pc++];
        else if (ir[n].op == OP_CONST)
            ir[n].k = read_i32(f->code + pc), pc += 4;
        n++;
    }
    return n;
}

static int is_plain_binop(int op) { return op >= OP_ADD && op <= OP_XOR; }

/* One peephole pass: CONST a, CONST b, op -> CONST (a op b); CONST k, op ->
 * opK k. Returns the new length; the caller repeats until nothing changes. */
static int fold_constants(ir_t *ir, int n)
{
    int out = 0;
    for (int i = 0; i < n; i++) {
        if (i + 2 < n && ir[i].op == OP_CONST && ir[i + 1].op == OP_CONST &&
            is_plain_binop(ir[i + 2].op)) {
            ir[out].op = OP_CONST;
            ir[out++].k = int_binop(ir[i + 2].op, ir[i].k, ir[i + 1].k);
            i += 2;
        } else if (i + 1 < n && ir[i].op == OP_CONST && is_plain_binop(ir[i + 1].op)) {
            ir[out].op = (uint8_t)(OP_ADDK + (ir[i + 1].op - OP_ADD));
            ir[out++].k = ir[i].k;
            i += 1;
        } else {
            ir[out++] = ir[i];
        }
    }
    return out;
}

/* Local value numbering: gives every stack value a number such that equal
 * numbers hold equal values (same op on the same operands), and rewrites
 * "x - x" and "x ^ x" into OP_ZERO2 (drop both, push 0). The table of
 * expressions seen so far is searched linearly: functions are short. */
typedef struct { uint8_t op; int a, b; int64_t k; } expr_t;

static int value_number(expr_t *tab, int *ntab, expr_t e)
{
    for (int i = 0; i < *ntab; i++)
        if (tab[i].op == e.op && tab[i].a == e.a && tab[i].b == e.b && tab[i].k == e.k)
            return i;
    tab[*ntab] = e;
    return (*ntab)++;
}

static int number_values(ir_t *ir, int n)
{
    expr_t tab[MAX_IR];
    int vn[MAX_STACK], sp = 0, ntab = 0, rewritten = 0;
    for (int i = 0; i < n; i++) {
        ir_t *o = &ir[i];
        expr_t e = {o->op, -1, -1, o->k};
        if (o->op == OP_RET)
            break;
        if (o->op == OP_DUP) {
            vn[sp] = vn[sp - 1], sp++;
        } else if (is_plain_binop(o->op)) {
            sp--;
            if ((o->op == OP_SUB || o->op == OP_XOR) && vn[sp - 1] == vn[sp])
                o->op = OP_ZERO2, e.op = OP_CONST, e.k = 0, rewritten++;
            else
                e.a = vn[sp - 1], e.b = vn[sp];
            vn[sp - 1] = value_number(tab, &ntab, e);
        } else if (o->op == OP_ARG || o->op == OP_CONST) {
            vn[sp++] = value_number(tab, &ntab, e);
        } else {                /* unary: SHR, xxxK */
            e.a = vn[sp - 1];
            vn[sp - 1] = value_number(tab, &ntab, e);
        }
    }
    return rewritten;
}

/* The compiled code keeps its stack in a fixed frame: find its depth, and
 * refuse code that would underflow (the bytecode is untrusted). */
static int max_stack_depth(const ir_t *ir, int n)
{
    int depth = 0, max = 0;
    for (int i = 0; i < n; i++) {
        int op = ir[i].op;
        depth += (op == OP_ARG || op == OP_CONST || op == OP_DUP) ? 1
               : (is_plain_binop(op) || op == OP_ZERO2) ? -1 : 0;
        if (depth < 1 || depth > MAX_STACK)
            return -1;
        if (depth > max)
            max = depth;
    }
    return max;
}

static void emit_op(compiled_t *c, const ir_t *op)
{
    c->ops[c->n++] = *op;
}

static compiled_t *compile_function(vm_t *vm, const func_t *f)
{
    ir_t ir[MAX_IR];
    int n = decode_bytecode(f, ir);
    for (int prev = -1; prev != n;)
        prev = n, n = fold_constants(ir, n);
    vm->zeroed += (uint64_t)number_values(ir, n);
    int depth = max_stack_depth(ir, n);
    if (depth < 0)
        return NULL;
    compiled_t *c = xmalloc(sizeof *c);
    c->ops = xmalloc((size_t)n * sizeof *c->ops);
    c->max_depth = depth;
    for (int i = 0; i < n; i++)
        emit_op(c, &ir[i]);
    vm->compiles++;
    vm->ops_compiled += (uint64_t)n;
    return c;
}

static void compiled_free(compiled_t *c)
{
    if (c) free(c->ops), free(c);
}

static int64_t run_compiled(const compiled_t *c, const int64_t *args)
{
    uint64_t st[MAX_STACK];
    int sp = 0;
    for (int i = 0; i < c->n; i++) {
        const ir_t *o = &c->ops[i];
        uint64_t k = (uint64_t)o->k;
        switch (o->op) {
        case OP_ARG:   st[sp++] = (uint64_t)args[k]; break;
        case OP_CONST: st[sp++] = k; break;
        case OP_DUP:   st[sp] = st[sp - 1]; sp++; break;
        case OP_ADD:   sp--; st[sp - 1] += st[sp]; break;
        case OP_SUB:   sp--; st[sp - 1] -= st[sp]; break;
        case OP_MUL:   sp--; st[sp - 1] *= st[sp]; break;
        case OP_XOR:   sp--; st[sp - 1] ^= st[sp]; break;
        case OP_SHR:   st[sp - 1] >>= (k & 63); break;
        case OP_ADDK:  st[sp - 1] += k; break;
        case OP_SUBK:  st[sp - 1] -= k; break;
        case OP_MULK:  st[sp - 1] *= k; break;
        case OP_XORK:  st[sp - 1] ^= k; break;
        case OP_ZERO2: sp--; st[sp - 1] = 0; break;
        case OP_RET:   return (int64_t)st[sp - 1];
        }
    }
    return (int64_t)st[sp - 1];
}

/* --------------------------------------------------------- tiering policy */
/* Sets the call count at which f is (re)compiled: hot_calls calls from now,
 * doubled for each deoptimization f has had (capped), so that a function
 * whose guard keeps failing waits longer and longer before the next try. */
static void schedule_tier_up(vm_t *vm, func_t *f)
{
    unsigned shift = f->deopts < BACKOFF_MAX ? f->deopts : BACKOFF_MAX;
    uint64_t wait = vm->hot_calls << shift;
#ifdef VPROF_CASE_FIX
    f->tier_up_at = f->calls + wait;
#else
    f->tier_up_at = wait; /* FIX: the wait counts from now: f->calls + wait */
#endif
}

static void deoptimize(vm_t *vm, func_t *f)
{
    compiled_free(f->jit);
    f->jit = NULL;
    f->deopts++;
    vm->deopts++;
    schedule_tier_up(vm, f);
}

static int args_all_int(const value_t *args)
{
    return !args[0].is_float && !args[1].is_float && !args[2].is_float;
}

static void maybe_tier_up(vm_t *vm, func_t *f)
{
    if (f->jit || f->calls < f->tier_up_at)
        return;
    f->jit = compile_function(vm, f);
    if (!f->jit)                /* not compilable: never try again */
        f->tier_up_at = UINT64_MAX;
}

static value_t call_function(vm_t *vm, func_t *f, const value_t *args)
{
    f->calls++;
    maybe_tier_up(vm, f);
    if (f->jit) {
        if (args_all_int(args)) {
            int64_t iargs[NARGS] = {args[0].u.i, args[1].u.i, args[2].u.i};
            vm->jit_calls++;
            return int_val(run_compiled(f->jit, iargs));
        }
        deoptimize(vm, f);      /* the entry guard failed */
    }
    vm->interp_calls++;
    return interp_run(f, args);
}

/* ------------------------------------------------- the script (generated) */
static void put_op(func_t *f, uint8_t op) { f->code[f->len++] = op; }

static void put_const(func_t *f, int32_t k)
{
    put_op(f, OP_CONST);
    for (int b = 0; b < 4; b++)
        f->code[f->len++] = (uint8_t)((uint32_t)k >> (8 * b));
}

/* A straight-line rule of nops ops: loads of arguments and constants mixed
 * with arithmetic, the stack kept between 1 and 8 deep. */
static void gen_function(rng_t *r, func_t *f, int id, int nops)
{
    static const uint8_t binops[] = {OP_ADD, OP_SUB, OP_MUL, OP_XOR};
    f->id = id;
    f->takes_price = (id % 4 == 0);
    put_op(f, OP_ARG), put_op(f, 0);
    int depth = 1;
    for (int i = 0; i < nops; i++) {
        uint64_t pick = rng_below(r, 10);
        if (depth < 8 && pick < 2)
            put_op(f, OP_ARG), put_op(f, (uint8_t)rng_below(r, NARGS)), depth++;
        else if (depth < 8 && pick < 5)
            put_const(f, (int32_t)rng_below(r, 2000) - 1000), depth++;
        else if (depth < 8 && pick == 5)
            put_op(f, OP_DUP), depth++;
        else if (pick == 6)
            put_op(f, OP_SHR), put_op(f, (uint8_t)(1 + rng_below(r, 7)));
        else if (depth > 1)
            put_op(f, binops[rng_below(r, 4)]), depth--;
    }
    while (depth-- > 1)
        put_op(f, OP_ADD);
    put_op(f, OP_RET);
}

static void vm_init(vm_t *vm, int nfuncs, uint64_t hot_calls, rng_t *r)
{
    memset(vm, 0, sizeof *vm);
    vm->nfuncs = nfuncs;
    vm->hot_calls = hot_calls;
    for (int i = 0; i < nfuncs; i++) {
        func_t *f = &vm->funcs[i];
        gen_function(r, f, i, 300 + (int)rng_below(r, 100));
        schedule_tier_up(vm, f);
    }
}

/* ------------------------------------------------------------ the host */
/* A request: a rule (skewed towards the first ones) and its arguments; the
 * rules that take a price get a float price in float_pct% of their calls. */
static func_t *make_request(vm_t *vm, rng_t *r, int float_pct, value_t *args)
{
    uint64_t a = rng_below(r, (uint64_t)vm->nfuncs), b = rng_below(r, (uint64_t)vm->nfuncs);
    func_t *f = &vm->funcs[a < b ? a : b];
    for (int i = 0; i < NARGS; i++)
        args[i] = int_val((int64_t)rng_below(r, 100000));
    if (f->takes_price && (int)rng_below(r, 100) < float_pct)
        args[0] = float_val((double)rng_below(r, 1000000) / 100.0);
    return f;
}

static uint64_t digest_value(uint64_t h, value_t v)
{
    uint64_t bits;
    if (v.is_float)
        memcpy(&bits, &v.u.d, sizeof bits);
    else
        bits = (uint64_t)v.u.i;
    h ^= bits + (uint64_t)v.is_float;
    return h * 0x100000001b3ULL;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"requests",  "rule calls to serve", 100000, 1, 100000000, 0},
        {"functions", "rules in the script", 64, 8, MAX_FUNCS, 0},
        {"hot-calls", "calls before a rule is compiled", 10, 1, 1000000, 0},
        {"float-pct", "% of price arguments that are floats", 0, 0, 100, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long requests = opt_get(opts, NOPTS(opts), "requests");
    int float_pct = (int)opt_get(opts, NOPTS(opts), "float-pct");

    static vm_t vm;
    rng_t r;
    rng_seed(&r, 0x71e7a11ULL);
    vm_init(&vm, (int)opt_get(opts, NOPTS(opts), "functions"),
            (uint64_t)opt_get(opts, NOPTS(opts), "hot-calls"), &r);

    uint64_t digest = 0xcbf29ce484222325ULL, float_results = 0;
    for (long q = 0; q < requests; q++) {
        value_t args[NARGS];
        func_t *f = make_request(&vm, &r, float_pct, args);
        value_t res = call_function(&vm, f, args);
        digest = digest_value(digest, res);
        float_results += (uint64_t)res.is_float;
        CASE_PROGRESS("request");
    }
    printf("requests=%ld float_results=%llu digest=%016llx\n", requests,
           (unsigned long long)float_results, (unsigned long long)digest);
    fprintf(stderr, "compiles=%llu zeroed=%llu deopts=%llu ops_compiled=%llu jit_calls=%llu interp_calls=%llu\n",
            (unsigned long long)vm.compiles, (unsigned long long)vm.zeroed,
            (unsigned long long)vm.deopts,
            (unsigned long long)vm.ops_compiled, (unsigned long long)vm.jit_calls,
            (unsigned long long)vm.interp_calls);
    for (int i = 0; i < vm.nfuncs; i++) compiled_free(vm.funcs[i].jit);
    return 0;
}
