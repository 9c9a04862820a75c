/* vprof_format.h - the one reader/writer of every file vprof reads or writes.
 *
 * Specification: docs/FORMATS.md. The runtime (libvprof), vprof-meta,
 * vprof-report, the tests and the benchmarks all link this module; nobody
 * else parses these files.
 *
 * Error convention: functions return 0 on success and -1 on failure, filling
 * a vpf_err with "FILE: offset N: what is wrong" (or "FILE:LINE: ..." for text
 * formats). Nothing here prints or exits. */
#ifndef VPROF_FORMAT_H
#define VPROF_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vpf_err { char msg[768]; } vpf_err;
void vpf_set_err(vpf_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---------- shared constants ---------- */
#define VPF_META_MAGIC    "VPRFMETA"
#define VPF_VALUES_MAGIC  "VPRFVALS"
#define VPF_LATENCY_MAGIC "VPRFLATN"
#define VPF_STACKS_MAGIC  "VPRFSTKS"
#define VPF_META_VERSION    1
#define VPF_VALUES_VERSION  2   /* 2: global groups, frame records; 1 is still read */
#define VPF_LATENCY_VERSION 1
#define VPF_STACKS_VERSION  1
#define VPF_HEADER_SIZE     64

enum vpf_tag {                  /* vpf_var_desc.tags */
    VPF_TAG_LOOP = 1u << 0,
    VPF_TAG_COND = 1u << 1,
    VPF_TAG_ARGS = 1u << 2,
    VPF_TAG_GLOBAL = 1u << 3,
};

enum vpf_kind {                 /* vpf_var_desc.kind */
    VPF_KIND_SINT = 0,
    VPF_KIND_UINT = 1,
    VPF_KIND_FLOAT = 2,
    VPF_KIND_PTR_BASIC = 3,     /* value recorded is the pointee */
    VPF_KIND_PTR = 4,           /* value recorded is the address */
    VPF_KIND_BOOL = 5,
};

enum vpf_loc {                  /* vpf_loc_entry.loc */
    VPF_LOC_ADDR = 0,
    VPF_LOC_REG = 1,
    VPF_LOC_BREG = 2,
    VPF_LOC_FBREG = 3,
    VPF_LOC_CONST = 4,
    VPF_LOC_EXPR = 5,           /* value computed by a program (below) */
};

enum vpf_loc_flag {             /* vpf_loc_entry.flags */
    VPF_LF_DEREF = 1u << 0,
    VPF_LF_SIGNED = 1u << 1,
    VPF_LF_FLOAT = 1u << 2,
};

#define VPF_META_F_RELATIVE 1u  /* header flag: add the load bias */
#define VPF_REC_COMMITTED 0x80u /* record flags: set last */
#define VPF_WEIGHT_MASK 0x7fu   /* value record flags: timer periods of the tick */
#define VPF_WEIGHT_MAX 127u

/* Timer periods a value sample's tick stands for (0 from old writers = 1). */
static inline unsigned vpf_rec_weight(uint8_t flags)
{
    unsigned w = flags & VPF_WEIGHT_MASK;
    return w ? w : 1;
}

/* values.<id> version 2 (FORMATS.md §3): a tick's always-live globals are
 * written once, as its "global group" (depth bit 7 set), at the innermost
 * frame it samples; each further frame it samples gets a frame record (var
 * VPF_VAR_FRAME) that stands for the group's samples again at that frame.
 * Readers take the expanded samples from vpf_values_next. */
#define VPF_DEPTH_GROUP 0x80u   /* value record depth: one of its tick's global group */
#define VPF_DEPTH_MASK 0x7fu    /* value record depth: the frame's depth */
#define VPF_VAR_FRAME 0xffffffffu   /* value record var: a frame record */

/* DWARF x86-64 register numbers used in vpf_loc_entry.reg */
enum vpf_dwreg {
    VPF_RAX = 0, VPF_RDX, VPF_RCX, VPF_RBX, VPF_RSI, VPF_RDI, VPF_RBP, VPF_RSP,
    VPF_R8, VPF_R9, VPF_R10, VPF_R11, VPF_R12, VPF_R13, VPF_R14, VPF_R15,
    VPF_RIP = 16, VPF_XMM0 = 17, VPF_XMM15 = 32,
};

/* ---------- on-disk records (little-endian, x86-64 native) ---------- */
struct vpf_meta_header {
    char magic[8];
    uint16_t version, header_size;
    uint32_t flags;
    uint32_t n_vars, n_entries, strtab_size, build_id_len;
    uint8_t build_id[32];
};

struct vpf_var_desc {
    uint32_t file, function, name, type;   /* strtab offsets */
    uint32_t line;
    uint16_t tags;
    uint8_t kind, size;
    uint32_t schema_line;
    uint32_t reserved;
};

struct vpf_loc_entry {
    uint64_t pc_start, pc_end;
    uint32_t var;
    uint8_t loc, reg, size, flags;
    int64_t offset, fb_offset, deref_offset;
};

/* Common 40-byte prefix of the record-file headers (values, latency). */
struct vpf_rec_header {
    char magic[8];
    uint16_t version, header_size;
    uint32_t record_size;
    uint64_t n_reserved, capacity, dropped;
    uint64_t specific[3];       /* values: faults, start_ns, hz|flags<<32 */
};

struct vpf_values_header {
    char magic[8];
    uint16_t version, header_size;
    uint32_t record_size;
    uint64_t n_reserved, capacity, dropped;
    uint64_t faults, start_ns;
    uint32_t hz, flags;
};

struct vpf_value_rec {
    uint64_t value, pc, time_ns;
    uint32_t var, tid;
    uint8_t depth, flags;
    uint16_t tick;
    uint32_t entry;
};

struct vpf_latency_header {
    char magic[8];
    uint16_t version, header_size;
    uint32_t record_size;
    uint64_t n_reserved, capacity, dropped;
    uint64_t start_ns;
    uint32_t scan_ns, flags;
    uint64_t reserved;
};

enum vpf_lat_kind {
    VPF_LAT_CALL = 1, VPF_LAT_MUTEX_WAIT, VPF_LAT_MUTEX_HOLD, VPF_LAT_COND_WAIT,
    VPF_LAT_REQ_START, VPF_LAT_REQ_BLOCK, VPF_LAT_REQ_END, VPF_LAT_SYSCALL,
    /* wait and wake events (FORMATS.md §5.1); 17..19 reserved */
    VPF_LAT_WAKE = 9, VPF_LAT_FD_WAIT, VPF_LAT_SEM_WAIT, VPF_LAT_JOIN_WAIT,
    VPF_LAT_ANNOT_WAIT, VPF_LAT_THREAD_START, VPF_LAT_RWLOCK_WAIT, VPF_LAT_BARRIER_WAIT,
    /* request events of the variance analysis (FORMATS.md §5): 20..29 */
    VPF_LAT_REQ_WORK = 20,      /* duration_ns = work units, not a time */
    VPF_LAT_REQ_WAKE = 21,
};
/* Kinds 5-7 and 20-29: func is a request id. */
static inline int vpf_lat_is_request(unsigned kind)
{
    return (kind >= VPF_LAT_REQ_START && kind <= VPF_LAT_REQ_END) ||
           (kind >= 20 && kind <= 29);
}

#define VPF_LAT_FLAG_CLEAN 1u   /* header flags: closed cleanly */
#define VPF_LAT_FLAG_FUNCS 2u   /* call events limited by VPROF_LATENCY_FUNCS */

/* Wake events (kind 9): the object class in `generation`. */
enum vpf_wake_class {
    VPF_WAKE_MUTEX = 1, VPF_WAKE_COND, VPF_WAKE_SEM, VPF_WAKE_JOIN,
    VPF_WAKE_ANNOT, VPF_WAKE_PIPE, VPF_WAKE_RWLOCK, VPF_WAKE_BARRIER,
};
/* fd waits (kind 10): generation = syscall nr | class << 16. */
enum vpf_fd_class {
    VPF_FD_FILE = 1, VPF_FD_SOCKET, VPF_FD_PIPE, VPF_FD_SOCKPAIR, VPF_FD_OTHER,
};
#define VPF_FD_NR(gen)    ((gen) & 0xffffu)
#define VPF_FD_CLASS(gen) (((gen) >> 16) & 0xffu)

struct vpf_latency_rec {
    uint64_t start_ns, duration_ns, func, site;
    uint32_t tid, other_tid, generation;
    uint8_t kind, flags;
    uint16_t uncertainty_us;     /* polling granularity, saturating */
};

#define VPF_VALUES_FLAG_CLEAN 1u

/* Stack samples (FORMATS.md §7): one fixed-size record per tick holding up
 * to `frames` PCs, leaf first. */
struct vpf_stacks_header {
    char magic[8];
    uint16_t version, header_size;
    uint32_t record_size;       /* VPF_STACK_REC_SIZE(frames) */
    uint64_t n_reserved, capacity, dropped;
    uint64_t start_ns;
    uint32_t frames, reserved;
    uint32_t hz, flags;         /* flags: bit 0 closed cleanly */
};

struct vpf_stack_rec {
    uint64_t time_ns;
    uint32_t tid;
    uint8_t depth;              /* PCs stored in pc[] (1..frames) */
    uint8_t flags;              /* VPF_STK_* | VPF_REC_COMMITTED */
    uint8_t weight;             /* timer periods the tick stands for (0 = 1) */
    uint8_t reserved;
    /* then frames u64 PCs (vpf_stack_pcs): pc[0] the interrupted PC, pc[k]
     * the k-th caller's call site (return address - 1) */
};
static inline uint64_t *vpf_stack_pcs(struct vpf_stack_rec *r) { return (uint64_t *)(r + 1); }
static inline const uint64_t *vpf_stack_pcs_c(const struct vpf_stack_rec *r)
{
    return (const uint64_t *)(r + 1);
}

#define VPF_STACKS_FRAMES_MAX 128
#define VPF_STACK_REC_SIZE(frames) (16u + 8u * (uint32_t)(frames))
#define VPF_STACKS_FLAG_CLEAN 1u
#define VPF_STK_TRUNCATED 1u    /* record flags: the walk did not reach the stack's bottom */
#define VPF_STK_UNWOUND 2u      /* the unwinder walked (part of) it, not frame pointers */

/* ---------- expression programs (FORMATS.md §2.1) ----------
 *
 * An EXPR location entry's value is computed by a short program, stored as
 * a string in the metadata's string table (so it is NUL-free, deduplicated
 * with the strings and readable in dumps): tokens separated by one space,
 * evaluated on a stack of 64-bit words; the value is the top of the stack
 * at the end. vpf_expr_next decodes one token for every reader (the
 * checker, the runtime's decoding into instructions, the printers); it is
 * pure (no allocation, no libc), hence async-signal-safe. */
#define VPF_EXPR_MAX_LEN   255  /* program text, bytes (without the NUL) */
#define VPF_EXPR_MAX_OPS   32   /* tokens */
#define VPF_EXPR_MAX_STACK 8    /* stack words */

enum vpf_xop {
    VPF_X_CONST = 1,            /* #K      push K */
    VPF_X_REG,                  /* rN[+-K] push register N (0..16) + K */
    VPF_X_FB,                   /* f[+-K]  push frame base (entry reg + fb_offset) + K */
    VPF_X_ADDR,                 /* aK      push link-time address K + load bias */
    VPF_X_DEREF,                /* dN      pop A, push the N (1, 2, 4, 8) bytes at A, zero-extended */
    VPF_X_PICK,                 /* kN      push a copy of word N (0: the top) */
    /* words without operand: first the binary (pop B, pop A, push A op B) */
    VPF_X_ADD, VPF_X_SUB, VPF_X_MUL, VPF_X_DIV, VPF_X_UDIV, VPF_X_MOD, VPF_X_AND, VPF_X_OR,
    VPF_X_XOR, VPF_X_SHL, VPF_X_SHR, VPF_X_SHRA, VPF_X_EQ, VPF_X_NE, VPF_X_LT,
    VPF_X_GT, VPF_X_LE, VPF_X_GE,
    /* unary (pop A, push op A) */
    VPF_X_NEG, VPF_X_NOT, VPF_X_ABS,
    /* stack */
    VPF_X_DUP, VPF_X_DROP, VPF_X_SWAP, VPF_X_OVER, VPF_X_ROT,
    VPF_X_N
};

/* One decoded token: op, register (REG), operand k. */
struct vpf_xins { uint8_t op, reg; int64_t k; };

/* Decodes the token at s[*pos] into *in and advances *pos past it and its
 * separator. 1: a token; 0: the end of the program; -1: malformed
 * (unknown word, bad number or register, two spaces, a trailing space). */
int vpf_expr_next(const char *s, uint32_t *pos, struct vpf_xins *in);
/* Words popped and pushed by an instruction; 0, 0 for an unknown op. PICK
 * "pops" the words down to the one it copies (k + 1 must be present) and
 * puts them back with the copy. The evaluator checks every instruction
 * with it. */
void vpf_expr_effect(const struct vpf_xins *in, unsigned *pops, unsigned *pushes);
/* Checks a whole program: every token decodes, at most VPF_EXPR_MAX_OPS of
 * them and VPF_EXPR_MAX_LEN bytes, the stack never underflows nor exceeds
 * VPF_EXPR_MAX_STACK words, and at least one word is left.
 * Returns NULL when valid, else what is wrong (a static string). Pure. */
const char *vpf_expr_check(const char *s);
/* Writes the program readably, "rbp-80 deref8 rbp-192 deref8 2572 mul add"
 * for "r6-80 d8 r6-192 d8 #2572 mul add" (registers by name; "fb" the frame
 * base; "<malformed>" where decoding stops). Always NUL-terminated. */
void vpf_expr_format(const char *s, char *buf, size_t len);
/* x86-64 DWARF register name ("rax".."r15", "rip", "xmm0".."xmm15"); NULL
 * for other numbers. */
const char *vpf_reg_name(unsigned reg);

/* ---------- files ---------- */
/* Maps a regular file read-only (no stdio: safe at the runtime's start-up);
 * a file shorter than min_len (or empty) is an error naming the offset. */
void *vpf_map_file(const char *path, size_t min_len, size_t *len, vpf_err *e);
/* Reads a whole file into a malloc'd buffer. */
void *vpf_read_file(const char *path, size_t *len, vpf_err *e);
/* Is an absolute path one of the system's headers (/usr/include, gcc's C++
 * headers under /usr/lib, /usr/local/include), once `.` and `..` are
 * resolved? A library's code there is not the program's decision: the schema
 * pass counts no guarded call in it, vprof-report places no predicate or
 * producer of it. */
int vpf_system_path(const char *path);

/* ---------- growing arrays ---------- */
/* Room for at least need elements of elem bytes in the array *p whose
 * capacity is *cap: the capacity at least doubles (first 16), so filling it
 * one element at a time is amortised O(1) per element. 0, or -1 when memory
 * runs out or the size would overflow (*p and *cap unchanged). The format
 * module's one grow: it is part of libvprof.so, which must give up on what
 * it was doing rather than exit; the offline tools use vpf_grow
 * (vprof_xalloc.h), the same rule ending in "out of memory". */
int vpf_grow_try(void **p, size_t *cap, size_t need, size_t elem);

/* ---------- hashing ---------- */
#define VPF_FNV_BASIS 0xcbf29ce484222325ull
/* 64-bit FNV-1a of the n bytes at p, continuing from h (VPF_FNV_BASIS to
 * start). The one FNV of every tool and of the runtime. */
uint64_t vpf_hash_mem(uint64_t h, const void *p, size_t n);
/* The same over the string s (NULL: nothing). */
uint64_t vpf_hash_str(uint64_t h, const char *s);
/* qsort comparator of uint64_t values, ascending. */
int vpf_cmp_u64(const void *a, const void *b);
/* The hash of a variable key (file, function, name): FNV-1a over the three
 * strings one after the other. Every table keyed by variables uses it (the
 * schema reader, the schema pass, vprof-meta, vprof-report); vprof-report
 * also seeds a variable's reservoirs with it, so its value is part of the
 * report's output and must not change. Keys that differ only in where the
 * strings split hash alike; the tables compare the strings. */
uint64_t vpf_var_key_hash(const char *file, const char *function, const char *name);

/* ---------- tags ---------- */
uint16_t vpf_tags_parse(const char *s);            /* "loop|cond" -> bits */
void vpf_tags_format(uint16_t tags, char *buf, size_t len); /* "none" if 0 */
const char *vpf_kind_name(unsigned kind);

/* ---------- buffered text writer (common.c) ----------
 * For the text files the runtime writes (layout log, calls.<id>): formats
 * by hand and writes with write(2) only, so it may run in the exit and
 * termination paths; a line longer than the buffer goes out in pieces. */
struct vpf_textw { char b[8192]; size_t n; int fd, err; };
void vpf_tw_init(struct vpf_textw *w, int fd);
void vpf_tw_put(struct vpf_textw *w, const char *s, size_t n);
void vpf_tw_put_u(struct vpf_textw *w, uint64_t v);        /* decimal */
void vpf_tw_flush(struct vpf_textw *w);                    /* sets err on failure */
/* write(2) until all n bytes are out (EINTR retried): 0, or -1. */
int vpf_write_all(int fd, const void *p, size_t n);

/* ---------- calls.<id> (FORMATS.md §8) ---------- */
#define VPF_CALLS_MAGIC "vprof-calls 1\n"

/* ---------- percent-encoding for text formats ---------- */
/* Encodes ',', tab, '%', '\n', '\r' into dst (always NUL-terminated). */
void vpf_encode_field(const char *src, char *dst, size_t len);
/* Decodes in place; returns -1 on a malformed escape. */
int vpf_decode_field(char *s);

/* ---------- schema (text) ---------- */
struct vpf_schema_var {
    char *file, *function, *name, *type;
    uint32_t line;
    uint16_t tags;              /* VPF_TAG_GLOBAL set for #global */
    uint32_t src_line;          /* line in the schema text */
};

struct vpf_schema_block {
    char *file, *function, *kind;
    uint32_t id, line_start, line_end;
};

/* `@uses`: function references global variable (by source name). */
struct vpf_schema_use {
    char *file, *function, *variable;
};

/* `@field`: member variable `variable` of (file, function) is the struct
 * member `key` ("struct T.f"), at byte `offset` in the struct. */
struct vpf_schema_field {
    char *file, *function, *variable, *key;
    uint32_t offset;
};

/* `@writes`: `function` stores into `target` at file:line; target is `g`,
 * `g.f`, `g+N`, `struct T.f` or `struct T` (FORMATS.md §1). */
struct vpf_schema_write {
    char *file, *function, *target;
    uint32_t line;
};

/* `@from`: variable of function takes callee's return value at file:line.
 * `@guard` (guard = 1): function calls the function named `variable` at
 * file:line only when a branch on callee's return value goes that way. */
struct vpf_schema_from {
    char *file, *function, *variable, *callee;
    uint32_t line;
    int guard;          /* 0: `@from`, 1: `@guard`, 2: `@guardstate` (callee:
                           the state, a `@writes` target), 3: `@sizes`
                           (variable: `slot` or `index`; callee: the size,
                           a `@writes` target), 4: `@items` (variable:
                           `add` or `walk`; callee: the container, a
                           `@writes` target), 5: `@setfrom` (variable:
                           the state stored, a `@writes` target; callee:
                           the function whose answer is stored), 6:
                           `@addguard` (variable: the container added to,
                           a `@writes` target; callee: the predicate), 7:
                           `@bounds` (variable: `lo` or `hi`; callee: the
                           range's end, a `@writes` target), 8:
                           `@predicate` (function: a pure predicate;
                           variable `truth`, callee `pure`), 9: `@stops`
                           (variable `limit`; callee: the state a loop
                           stops at, a `@writes` target) */
};

struct vpf_schema {
    struct vpf_schema_var *vars;
    size_t n_vars;
    struct vpf_schema_block *blocks;
    size_t n_blocks;
    struct vpf_schema_use *uses;
    size_t n_uses;
    struct vpf_schema_field *fields;
    size_t n_fields;
    struct vpf_schema_write *writes;
    size_t n_writes;
    struct vpf_schema_from *froms;
    size_t n_froms;
};

/* Parses one or more concatenated schema texts; merges duplicate variables. */
int vpf_schema_parse(const char *text, size_t len, const char *name,
                     struct vpf_schema *s, vpf_err *e);
int vpf_schema_load(const char *path, struct vpf_schema *s, vpf_err *e);
void vpf_schema_free(struct vpf_schema *s);
void vpf_schema_write_header(FILE *f);
void vpf_schema_write_var(FILE *f, const char *file, const char *function,
                          unsigned line, const char *name, const char *type,
                          uint16_t tags);
void vpf_schema_write_block(FILE *f, const char *file, const char *function,
                            unsigned id, unsigned line_start,
                            unsigned line_end, const char *kind);
void vpf_schema_write_use(FILE *f, const char *file, const char *function,
                          const char *variable);
void vpf_schema_write_field(FILE *f, const char *file, const char *function,
                            const char *variable, const char *key,
                            unsigned offset);
void vpf_schema_write_writer(FILE *f, const char *file, const char *function,
                             unsigned line, const char *target);
void vpf_schema_write_from(FILE *f, const char *file, const char *function,
                           unsigned line, const char *variable, const char *callee,
                           int guard);

/* ---------- variable metadata (binary) ---------- */
struct vpf_meta {
    struct vpf_meta_header hdr;
    const struct vpf_var_desc *vars;
    const struct vpf_loc_entry *entries;
    const char *strtab;
    void *owned;                /* buffer to free, or NULL */
    size_t owned_len;
    int owned_is_map;
};

/* Validates everything (sizes, string offsets, var indices, loc kinds,
 * registers, sizes); the result points into buf. */
int vpf_meta_parse(const void *buf, size_t len, const char *name,
                   struct vpf_meta *m, vpf_err *e);
/* Maps the file read-only and parses it. Uses no stdio (safe at start-up). */
int vpf_meta_load(const char *path, struct vpf_meta *m, vpf_err *e);
void vpf_meta_free(struct vpf_meta *m);
const char *vpf_meta_str(const struct vpf_meta *m, uint32_t off);
/* The program text of an EXPR entry (NULL when its offset is outside the
 * string table, or the entry is not EXPR). */
const char *vpf_meta_expr(const struct vpf_meta *m, const struct vpf_loc_entry *e);
/* An EXPR entry's program checked (vpf_expr_check): NULL when it can be
 * run, else what is wrong. Pure: the runtime calls it when it loads. */
const char *vpf_expr_check_entry(const struct vpf_meta *m, const struct vpf_loc_entry *e);

struct vpf_meta_builder;
struct vpf_meta_builder *vpf_mb_new(void);
uint32_t vpf_mb_str(struct vpf_meta_builder *b, const char *s); /* dedups */
uint32_t vpf_mb_add_var(struct vpf_meta_builder *b, const struct vpf_var_desc *v);
void vpf_mb_add_entry(struct vpf_meta_builder *b, const struct vpf_loc_entry *en);
void vpf_mb_set_build_id(struct vpf_meta_builder *b, const uint8_t *id, size_t len);
void vpf_mb_set_flags(struct vpf_meta_builder *b, uint32_t flags);
size_t vpf_mb_n_vars(const struct vpf_meta_builder *b);
size_t vpf_mb_n_entries(const struct vpf_meta_builder *b);
/* Sorts entries by pc_start and writes; path "-" = stdout. */
int vpf_mb_write(struct vpf_meta_builder *b, const char *path, vpf_err *e);
void vpf_mb_free(struct vpf_meta_builder *b);

/* ---------- record files: values.<id>, latency.<id> ---------- */
struct vpf_recfile_w {          /* writer, used by the runtime */
    unsigned char *base;        /* mapping: header then records */
    size_t map_len;
    uint64_t capacity;
    uint32_t record_size;
    int fd;
    /* Bytes of the mapping populated ahead of the records (atomic; 0: not
     * done, or the kernel cannot: see vpf_recfile_populate), and the
     * record count at which the next chunk is due (atomic). */
    uint64_t populated, populate_at;
};

/* ftruncate(fd) to the full capacity (sparse), map it MAP_SHARED and write
 * the header. Async-signal-safe parts are claim/commit only. */
int vpf_recfile_create(int fd, const char *magic, uint16_t version,
                       uint32_t record_size, uint64_t capacity,
                       struct vpf_recfile_w *w, vpf_err *e);

/* Claims one record slot; NULL (and dropped++) when full. Lock-free,
 * async-signal-safe. The caller fills the record and sets the committed bit
 * (release store) last. */
static inline void *vpf_recfile_claim(struct vpf_recfile_w *w)
{
    struct vpf_rec_header *h = (struct vpf_rec_header *)w->base;
    uint64_t i = __atomic_fetch_add(&h->n_reserved, 1, __ATOMIC_RELAXED);
    if (i >= w->capacity) {
        __atomic_fetch_add(&h->dropped, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    return w->base + VPF_HEADER_SIZE + i * (uint64_t)w->record_size;
}

/* A page of a shared file mapping first written from a signal handler
 * costs that tick a page fault (ext4 allocates the block): 2-7 us of CPU on
 * the bench VM, on one tick in 6 for 16 value records a tick, one in 15 for
 * a stack record (bench/RESULTS.md). So a writer populates the file ahead
 * of its records (MADV_POPULATE_WRITE, Linux 5.14), a megabyte at a time,
 * which costs no more per page: vpf_recfile_populate once after creating
 * it (outside the handler), then each tick vpf_recfile_populate_check,
 * which populates the next chunk when the records come within half a chunk
 * of the populated end - one tick per megabyte pays for it, not every
 * sixth. Async-signal-safe (madvise), lock-free: one tick of one thread
 * does each chunk. */
#define VPF_POPULATE_CHUNK (1ull << 20)
void vpf_recfile_populate(struct vpf_recfile_w *w);
static inline void vpf_recfile_populate_check(struct vpf_recfile_w *w)
{
    const struct vpf_rec_header *h = (const struct vpf_rec_header *)w->base;
    if (__atomic_load_n(&h->n_reserved, __ATOMIC_RELAXED) >=
        __atomic_load_n(&w->populate_at, __ATOMIC_RELAXED))
        vpf_recfile_populate(w);
}

static inline void vpf_commit_flag(uint8_t *flags)
{
    __atomic_store_n(flags, (uint8_t)(*flags | VPF_REC_COMMITTED),
                     __ATOMIC_RELEASE);
}

/* Truncates to the used size, sets header flag bit 0 (clean) when asked,
 * unmaps and closes. Not async-signal-safe only in that it may be slow. */
void vpf_recfile_close(struct vpf_recfile_w *w, int clean);

struct vpf_recfile_r {          /* reader */
    const unsigned char *base;
    size_t map_len;
    uint64_t n;                 /* records present = min(n_reserved, capacity) */
    uint32_t record_size;
    const void *header;
    const void *recs;
};

int vpf_recfile_open(const char *path, const char *magic,
                     uint32_t record_size, struct vpf_recfile_r *r,
                     vpf_err *e);
void vpf_recfile_close_r(struct vpf_recfile_r *r);

static inline const struct vpf_values_header *
vpf_values_hdr(const struct vpf_recfile_r *r)
{
    return (const struct vpf_values_header *)r->header;
}
static inline const struct vpf_value_rec *
vpf_values_recs(const struct vpf_recfile_r *r)
{
    return (const struct vpf_value_rec *)r->recs;
}
static inline const struct vpf_latency_header *
vpf_latency_hdr(const struct vpf_recfile_r *r)
{
    return (const struct vpf_latency_header *)r->header;
}
static inline const struct vpf_latency_rec *
vpf_latency_recs(const struct vpf_recfile_r *r)
{
    return (const struct vpf_latency_rec *)r->recs;
}
int vpf_values_open(const char *path, struct vpf_recfile_r *r, vpf_err *e);

/* The one walk over a values file's samples (version 1 or 2): every
 * committed sample in file order, a version 2 file's frame records
 * expanded into the samples of their tick's global group at that frame
 * (where a version 1 writer wrote them), group records with the group bit
 * cleared - the records a version 1 writer would have written. In
 * libvprof-format.a only (it allocates: per thread, where its last group
 * lies). */
struct vpf_values_iter {
    const struct vpf_value_rec *recs;
    uint64_t n, i;              /* records, the next to look at */
    int version;
    uint64_t uncommitted;       /* records skipped as not committed */
    uint64_t frames;            /* frame records met */
    uint64_t orphans;           /* frame records without a group to expand */
    uint64_t last;              /* index + 1 of the last committed record, 0: none */
    /* per thread: its last global group [first, end) and tick */
    struct vpf_values_group { uint32_t tid; uint16_t tick; uint8_t used; uint64_t first, end; } *grp;
    size_t grp_cap, grp_n;
    /* a frame record being expanded: the group's next record, its end */
    const struct vpf_value_rec *frame;
    uint64_t rep, rep_end;
    struct vpf_value_rec out;   /* a rewritten sample */
};
void vpf_values_iter_init(struct vpf_values_iter *it, const struct vpf_recfile_r *r);
/* The next sample (valid until the next call), or NULL at the end. pos,
 * when not NULL, gets the index of the file record it came from. */
const struct vpf_value_rec *vpf_values_next(struct vpf_values_iter *it, uint64_t *pos);
void vpf_values_iter_free(struct vpf_values_iter *it);
int vpf_latency_open(const char *path, struct vpf_recfile_r *r, vpf_err *e);
/* stacks.<id>: the record size follows from the header's `frames`, which
 * is checked (1..VPF_STACKS_FRAMES_MAX). */
int vpf_stacks_open(const char *path, struct vpf_recfile_r *r, vpf_err *e);
static inline const struct vpf_stacks_header *
vpf_stacks_hdr(const struct vpf_recfile_r *r)
{
    return (const struct vpf_stacks_header *)r->header;
}
static inline const struct vpf_stack_rec *
vpf_stacks_rec(const struct vpf_recfile_r *r, uint64_t i)
{
    return (const struct vpf_stack_rec *)((const unsigned char *)r->recs + i * r->record_size);
}

/* ---------- layout log (text) ---------- */
struct vpf_layout_map { uint64_t lo, hi, off; char *path; };
struct vpf_layout_var {
    uint32_t id, line;
    char *file, *function, *name, *type;
    uint16_t tags;
    uint8_t kind, size;
};

struct vpf_layout {
    int pid, ppid;
    char *exe, *build_id, *meta_path, *meta_status;
    uint64_t load_bias, text_lo, text_hi, start_ns;
    uint32_t hz, unwind;
    char *timer;                /* "perf" or "posix"; NULL: not logged */
    /* What `unwind` counts: 0 the program's own frames (VPROF_UNWIND_COUNT
     * =program), 1 every frame (=all, and every log without the line). */
    int unwind_all, has_unwind_count;
    struct vpf_layout_map *maps;
    size_t n_maps;
    struct vpf_layout_var *vars;
    size_t n_vars;
    int has_end;
    uint64_t ticks, samples, dropped, faults, end_ns;
    /* The tick budget's line (written at exit before `end`): the limits
     * and how many ticks it cut short or skipped as overdue. */
    int has_budget;
    uint64_t tick_reads, tick_us, ticks_cut, ticks_overdue;
};

int vpf_layout_load(const char *path, struct vpf_layout *l, vpf_err *e);
void vpf_layout_free(struct vpf_layout *l);

/* Writer side: no stdio, no malloc (runtime uses it at start-up and exit).
 * Lines are formatted into a caller buffer and written with write(2). */
int vpf_layout_write_head(int fd, const struct vpf_layout *l);
int vpf_layout_write_map(int fd, uint64_t lo, uint64_t hi, uint64_t off,
                         const char *path);
int vpf_layout_write_var(int fd, uint32_t id, const char *file,
                         const char *function, uint32_t line,
                         const char *name, const char *type, uint16_t tags,
                         uint8_t kind, uint8_t size);
int vpf_layout_write_end(int fd, uint64_t ticks, uint64_t samples,
                         uint64_t dropped, uint64_t faults, uint64_t end_ns);
int vpf_layout_write_budget(int fd, uint64_t reads, uint64_t us, uint64_t cut,
                            uint64_t overdue);

/* ---------- calls.<id> (vprof-cc --calls; offline/calls.c) ---------- */
struct vpf_call_pair { uint64_t count; const char *caller, *callee; };   /* linkage names */
struct vpf_calls { struct vpf_call_pair *pairs; size_t n; char *text; };
int vpf_calls_load(const char *path, struct vpf_calls *c, vpf_err *e);
void vpf_calls_free(struct vpf_calls *c);

/* ---------- gmon.out (glibc format) ---------- */
struct vpf_gmon_arc { uint64_t from_pc, self_pc; uint32_t count; };

struct vpf_gmon {
    uint64_t lowpc, highpc;     /* histogram range (run-time addresses) */
    uint32_t hist_size, prof_rate;
    char dimen[16];
    char dimen_abbrev;
    uint32_t *hist;             /* summed over all histogram records */
    struct vpf_gmon_arc *arcs;  /* merged by (from, self) */
    size_t n_arcs;
    int has_hist;
};

int vpf_gmon_load(const char *path, struct vpf_gmon *g, vpf_err *e);
/* Adds another gmon file into g (same histogram range required). */
int vpf_gmon_merge(struct vpf_gmon *g, const char *path, vpf_err *e);
void vpf_gmon_free(struct vpf_gmon *g);

/* Writer: async-signal-safe (write(2) only, stack buffer). */
struct vpf_gmon_writer { int fd; int err; size_t n; unsigned char buf[4096]; };
void vpf_gmon_w_begin(struct vpf_gmon_writer *w, int fd); /* writes header */
void vpf_gmon_w_hist(struct vpf_gmon_writer *w, uint64_t lowpc,
                     uint64_t highpc, const uint16_t *bins, uint32_t nbins,
                     uint32_t prof_rate);
void vpf_gmon_w_arc(struct vpf_gmon_writer *w, uint64_t from_pc,
                    uint64_t self_pc, uint32_t count);
int vpf_gmon_w_end(struct vpf_gmon_writer *w);  /* flush; -1 on write error */

#ifdef __cplusplus
}
#endif
#endif
