/* oracle_trace.c - the vprof side of the gdb oracle for vprof-meta.
 *
 *   oracle_trace META PCLIST PROG [ARGS...]
 *
 * Runs PROG under ptrace with ASLR off (as gdb does), stops at the first
 * execution of every link-time PC listed in PCLIST (hex, one per line), and
 * at each stop prints, for every metadata entry covering that PC, the value
 * the runtime's reader (libvprof/value_read.c, linked, not copied) gets:
 *
 *   PC<TAB>FUNCTION<TAB>NAME<TAB>LINE<TAB>VALUE<TAB>ADDRESS[<TAB>expr]
 *
 * VALUE is "ERR n" when the reader failed; ADDRESS is the run-time address
 * the entry puts the variable at (before any dereference), "-" for
 * registers, constants and computed values; "expr" marks an EXPR entry
 * (a value the runtime's evaluator computed).
 *
 * Registers come from PTRACE_GETREGS/GETFPREGS, memory from
 * process_vm_readv on the child, exactly the interfaces the runtime's reader
 * abstracts. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "vprof_format.h"
#include "value_read.h"

struct bp { uint64_t pc; long orig; int armed; };

static int rd_child(void *ctx, uint64_t addr, void *dst, size_t n)
{
    pid_t pid = *(pid_t *)ctx;
    struct iovec l = { dst, n }, r = { (void *)(uintptr_t)addr, n };
    return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* Load bias: start of the lowest mapping of the executable. */
static uint64_t find_bias(pid_t pid, const char *prog)
{
    char path[64], line[PATH_MAX + 128], real[PATH_MAX];
    uint64_t best = UINT64_MAX;
    if (!realpath(prog, real))
        return 0;
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off;
        char perm[8], file[PATH_MAX] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi, perm,
                   &off, file) >= 4 && !strcmp(file, real) && lo < best)
            best = lo;
    }
    fclose(f);
    return best == UINT64_MAX ? 0 : best;
}

static void fill_regs(pid_t pid, struct vprof_regs *r, unsigned char *xmm)
{
    struct user_regs_struct u;
    struct user_fpregs_struct fp;
    memset(r, 0, sizeof *r);
    if (ptrace(PTRACE_GETREGS, pid, 0, &u) != 0)
        return;
    uint64_t v[17] = { u.rax, u.rdx, u.rcx, u.rbx, u.rsi, u.rdi, u.rbp,
                       u.rsp, u.r8, u.r9, u.r10, u.r11, u.r12, u.r13, u.r14,
                       u.r15, u.rip };
    memcpy(r->r, v, sizeof v);
    r->valid = (1u << 17) - 1;
    if (ptrace(PTRACE_GETFPREGS, pid, 0, &fp) == 0) {
        memcpy(xmm, fp.xmm_space, 256);
        r->xmm = xmm;
    }
}

static void print_value(const struct vpf_meta *m, uint32_t ei, uint64_t pc,
                        const struct vprof_regs *regs, uint64_t bias,
                        pid_t pid)
{
    const struct vpf_loc_entry *e = &m->entries[ei];
    const struct vpf_var_desc *d = &m->vars[e->var];
    uint64_t val = 0;
    int rc = vprof_read_value(e, d, vpf_meta_expr(m, e), regs, bias, rd_child, &pid, &val);
    printf("%" PRIx64 "\t%s\t%s\t%u\t", pc, vpf_meta_str(m, d->function),
           vpf_meta_str(m, d->name), d->line);
    /* Where the entry says the variable lives in memory, for the oracle's
     * address check (the value itself comes from the runtime's reader
     * above; this only repeats the address rule of docs/FORMATS.md §2). */
    char where[32] = "-";
    uint64_t base = 0;
    if (e->loc == VPF_LOC_ADDR)
        base = (uint64_t)e->offset + bias;
    else if ((e->loc == VPF_LOC_BREG || e->loc == VPF_LOC_FBREG) &&
             e->reg <= VPF_RIP)
        base = regs->r[e->reg] + (uint64_t)e->offset +
               (e->loc == VPF_LOC_FBREG ? (uint64_t)e->fb_offset : 0);
    if (base)
        snprintf(where, sizeof where, "%" PRIx64, base);
    /* a computed value (EXPR) is marked, so that compare.py can count
     * what the evaluator read */
    const char *kind = e->loc == VPF_LOC_EXPR ? "\texpr" : "";
    if (rc != VPROF_READ_OK) {
        printf("ERR %d\t%s%s\n", rc, where, kind);
        return;
    }
    if ((e->flags & VPF_LF_FLOAT) || d->kind == VPF_KIND_FLOAT) {
        double x;
        memcpy(&x, &val, 8);
        printf("%.17g", x);
    } else if ((e->flags & VPF_LF_SIGNED) || d->kind == VPF_KIND_SINT) {
        printf("%" PRId64, (int64_t)val);
    } else {
        printf("%" PRIu64, val);
    }
    printf("\t%s%s\n", where, kind);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: oracle_trace META PCLIST PROG [ARGS...]\n");
        return 2;
    }
    struct vpf_meta m;
    vpf_err err;
    if (vpf_meta_load(argv[1], &m, &err) != 0) {
        fprintf(stderr, "oracle_trace: %s\n", err.msg);
        return 1;
    }
    FILE *pl = fopen(argv[2], "r");
    if (!pl) {
        perror(argv[2]);
        return 1;
    }
    struct bp *bps = NULL;
    size_t nbp = 0, cap = 0;
    char line[128];
    while (fgets(line, sizeof line, pl)) {
        uint64_t pc;
        if (sscanf(line, "%" SCNx64, &pc) != 1)
            continue;
        if (nbp == cap) {
            cap = cap ? cap * 2 : 256;
            bps = realloc(bps, cap * sizeof *bps);
            if (!bps)
                return 1;
        }
        bps[nbp].pc = pc;
        bps[nbp].armed = 0;
        nbp++;
    }
    fclose(pl);

    pid_t pid = fork();
    if (pid == 0) {
        personality(ADDR_NO_RANDOMIZE);
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        int devnull = open("/dev/null", 1);
        if (devnull >= 0)
            dup2(devnull, 1);   /* keep the program's output out of ours */
        /* the shell's "$_" names whoever started us; gdb_oracle.py drops
         * it too, so both runs have the same environment and stack */
        unsetenv("_");
        /* argv[0] absolute, as gdb passes it: same stack layout */
        static char real[PATH_MAX];
        if (realpath(argv[3], real))
            argv[3] = real;
        execv(argv[3], argv + 3);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
        fprintf(stderr, "oracle_trace: %s did not start\n", argv[3]);
        return 1;
    }
    uint64_t bias = (m.hdr.flags & VPF_META_F_RELATIVE)
                  ? find_bias(pid, argv[3]) : 0;
    for (size_t i = 0; i < nbp; i++) {
        uint64_t a = bps[i].pc + bias;
        errno = 0;
        long w = ptrace(PTRACE_PEEKTEXT, pid, (void *)a, 0);
        if (errno)
            continue;
        bps[i].orig = w;
        if (ptrace(PTRACE_POKETEXT, pid, (void *)a,
                   (void *)((w & ~0xffL) | 0xcc)) == 0)
            bps[i].armed = 1;
    }
    int sig = 0;
    unsigned char xmm[256];
    for (;;) {
        if (ptrace(PTRACE_CONT, pid, 0, (void *)(long)sig) != 0)
            break;
        if (waitpid(pid, &st, 0) != pid || WIFEXITED(st) || WIFSIGNALED(st))
            break;
        sig = WSTOPSIG(st);
        if (sig != SIGTRAP)
            continue;
        sig = 0;
        struct user_regs_struct u;
        ptrace(PTRACE_GETREGS, pid, 0, &u);
        uint64_t at = u.rip - 1;
        size_t i;
        for (i = 0; i < nbp; i++)
            if (bps[i].armed && bps[i].pc + bias == at)
                break;
        if (i == nbp)
            continue;
        /* first hit only: restore the instruction byte for good (only the
         * byte: the word may hold other breakpoints' int3) */
        long cur = ptrace(PTRACE_PEEKTEXT, pid, (void *)at, 0);
        ptrace(PTRACE_POKETEXT, pid, (void *)at,
               (void *)((cur & ~0xffL) | (bps[i].orig & 0xff)));
        bps[i].armed = 0;
        u.rip = at;
        ptrace(PTRACE_SETREGS, pid, 0, &u);
        struct vprof_regs regs;
        fill_regs(pid, &regs, xmm);
        uint64_t pc = bps[i].pc;
        for (uint32_t e = 0; e < m.hdr.n_entries; e++)
            if (m.entries[e].pc_start <= pc && pc < m.entries[e].pc_end)
                print_value(&m, e, pc, &regs, bias, pid);
    }
    vpf_meta_free(&m);
    free(bps);
    return 0;
}
