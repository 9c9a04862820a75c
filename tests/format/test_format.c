/* Round-trip and rejection tests of every reader/writer in libvprof/format. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vprof_format.h"

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - %s\n", name); \
    else { printf("not ok - %s (line %d)\n", name, __LINE__); fails++; } } while (0)

static char dir[256];

static char *path(const char *name)
{
    static char buf[8][512];
    static int i;
    i = (i + 1) % 8;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

static void write_file(const char *p, const void *data, size_t n)
{
    FILE *f = fopen(p, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

static void test_schema(void)
{
    const char *text =
        "# vprof-schema 1\n"
        "src/a.c, #global, 12, pool_free, unsigned long, none\n"
        "src/a.c, scan, 40, i, int, loop|cond\n"
        "\n# a comment\n"
        "@block, src/a.c, scan, 3, 41, 47, loop_body\n"
        "@uses, src/a.c, scan, pool_free\n"
        "# vprof-schema 1\n"                       /* second object's section */
        "src/a.c, scan, 40, i, int, args\n"        /* duplicate: tags merge */
        "src/b%2C.c, tmpl<int%2C int>, 7, s->len, size_t, cond\n";
    struct vpf_schema s;
    vpf_err e;
    int rc = vpf_schema_parse(text, strlen(text), "t.schema", &s, &e);
    CHECK("schema parses concatenated texts", rc == 0);
    if (rc)
        return;
    CHECK("schema merges duplicates", s.n_vars == 3);
    CHECK("schema global tag", s.vars[0].tags == VPF_TAG_GLOBAL);
    CHECK("schema merged tags", s.vars[1].tags == (VPF_TAG_LOOP | VPF_TAG_COND | VPF_TAG_ARGS));
    CHECK("schema decodes fields", !strcmp(s.vars[2].file, "src/b,.c") &&
                                       !strcmp(s.vars[2].function, "tmpl<int, int>") &&
                                       !strcmp(s.vars[2].name, "s->len"));
    CHECK("schema uses", s.n_uses == 1 && !strcmp(s.uses[0].function, "scan") &&
                             !strcmp(s.uses[0].variable, "pool_free"));
    CHECK("schema block", s.n_blocks == 1 && s.blocks[0].line_end == 47 &&
                              !strcmp(s.blocks[0].kind, "loop_body"));
    vpf_schema_free(&s);

    /* writer output parses back identically */
    FILE *f = fopen(path("w.schema"), "w");
    vpf_schema_write_header(f);
    vpf_schema_write_var(f, "x,y.c", "f", 3, "v", "int", VPF_TAG_COND | VPF_TAG_ARGS);
    vpf_schema_write_block(f, "x,y.c", "f", 0, 1, 2, "entry");
    vpf_schema_write_use(f, "x,y.c", "f", "g");
    fclose(f);
    rc = vpf_schema_load(path("w.schema"), &s, &e);
    CHECK("schema writer round-trip", rc == 0 && s.n_vars == 1 && !strcmp(s.vars[0].file, "x,y.c") &&
                                          s.vars[0].tags == (VPF_TAG_COND | VPF_TAG_ARGS) &&
                                          s.n_blocks == 1 && s.n_uses == 1 &&
                                          !strcmp(s.uses[0].variable, "g"));
    if (!rc)
        vpf_schema_free(&s);

    /* field and writer lines; a line kind of a later version is skipped */
    const char *fw =
        "# vprof-schema 1\n"
        "src/ht.c, lookup, 9, t->nbuckets, unsigned int, cond\n"
        "@field, src/ht.c, lookup, t->nbuckets, struct ht.nbuckets, 8\n"
        "@writes, src/ht.c, resize, 31, struct ht.nbuckets\n"
        "@writes, src/b%2C.c, init, 0, budget\n"
        "@from, src/sl.c, insert, 14, level, random_level\n"
        "@guard, src/w.c, append, 196, seal_block, needs_seal\n"
        "@guardstate, src/c.c, query, 24, rebuild, struct cache.valid\n"
        "@setfrom, src/gc.cc, collect, 231, class Heap.allowance_, next_allowance\n"
        "@someday, a, b, c\n"
        "@field, src/ht.c, #global, G.nbuckets, struct ns::V<a%2C b>.n, 0\n";
    rc = vpf_schema_parse(fw, strlen(fw), "fw.schema", &s, &e);
    CHECK("schema with @field/@writes/unknown @ kind parses", rc == 0);
    if (!rc) {
        CHECK("schema @field", s.n_fields == 2 && !strcmp(s.fields[0].variable, "t->nbuckets") &&
                                   !strcmp(s.fields[0].key, "struct ht.nbuckets") &&
                                   s.fields[0].offset == 8 &&
                                   !strcmp(s.fields[1].key, "struct ns::V<a, b>.n"));
        CHECK("schema @writes", s.n_writes == 2 && !strcmp(s.writes[0].function, "resize") &&
                                    s.writes[0].line == 31 &&
                                    !strcmp(s.writes[0].target, "struct ht.nbuckets") &&
                                    !strcmp(s.writes[1].file, "src/b,.c") &&
                                    !strcmp(s.writes[1].target, "budget"));
        CHECK("schema @setfrom", s.n_froms == 4 && s.froms[3].guard == 5 &&
                                     !strcmp(s.froms[3].function, "collect") &&
                                     s.froms[3].line == 231 &&
                                     !strcmp(s.froms[3].variable, "class Heap.allowance_") &&
                                     !strcmp(s.froms[3].callee, "next_allowance"));
        CHECK("schema @guardstate", s.n_froms == 4 && s.froms[2].guard == 2 &&
                                        !strcmp(s.froms[2].function, "query") &&
                                        s.froms[2].line == 24 &&
                                        !strcmp(s.froms[2].variable, "rebuild") &&
                                        !strcmp(s.froms[2].callee, "struct cache.valid"));
        CHECK("schema @from", s.n_froms == 4 && !strcmp(s.froms[0].function, "insert") &&
                                  s.froms[0].line == 14 && !strcmp(s.froms[0].variable, "level") &&
                                  !strcmp(s.froms[0].callee, "random_level") && !s.froms[0].guard);
        CHECK("schema @guard", s.froms[1].guard == 1 && !strcmp(s.froms[1].function, "append") &&
                                   s.froms[1].line == 196 &&
                                   !strcmp(s.froms[1].variable, "seal_block") &&
                                   !strcmp(s.froms[1].callee, "needs_seal"));
        CHECK("schema: unknown @ kind adds nothing", s.n_vars == 1 && s.n_uses == 0 &&
                                                      s.n_blocks == 0);
        vpf_schema_free(&s);
    }
    f = fopen(path("fw.schema"), "w");
    vpf_schema_write_header(f);
    vpf_schema_write_var(f, "@odd.c", "f", 3, "p->n", "int", VPF_TAG_COND);
    vpf_schema_write_var(f, "#odd.c", "f", 3, "v", "int", VPF_TAG_COND);
    vpf_schema_write_field(f, "@odd.c", "f", "p->n", "struct a,b.n", 4);
    vpf_schema_write_writer(f, "x,y.c", "g", 12, "struct a,b.n");
    vpf_schema_write_from(f, "x,y.c", "g", 13, "v", "h,i", 0);
    vpf_schema_write_from(f, "x,y.c", "g", 14, "flush", "full", 1);
    vpf_schema_write_from(f, "x,y.c", "g", 15, "rebuild", "struct c,d.valid", 2);
    vpf_schema_write_from(f, "x,y.c", "g", 16, "index", "struct t.n", 3);
    vpf_schema_write_from(f, "x,y.c", "g", 17, "add", "struct t.subs", 4);
    vpf_schema_write_from(f, "x,y.c", "g", 18, "struct h.allowance", "next_allowance", 5);
    vpf_schema_write_from(f, "x,y.c", "g", 19, "struct s.index", "entry_due", 6);
    vpf_schema_write_from(f, "x,y.c", "g", 20, "hi", "struct span.hi", 7);
    vpf_schema_write_from(f, "x,y.c", "due", 21, "truth", "pure", 8);
    vpf_schema_write_from(f, "x,y.c", "g", 22, "limit", "struct plan.nice", 9);
    fclose(f);
    rc = vpf_schema_load(path("fw.schema"), &s, &e);
    CHECK("schema @field/@writes writer round-trip",
          rc == 0 && s.n_fields == 1 && s.fields[0].offset == 4 &&
          !strcmp(s.fields[0].file, "@odd.c") && !strcmp(s.fields[0].key, "struct a,b.n") &&
          s.n_writes == 1 && s.writes[0].line == 12 && !strcmp(s.writes[0].file, "x,y.c") &&
          !strcmp(s.writes[0].target, "struct a,b.n"));
    CHECK("schema @predicate/@stops writer round-trip",
          rc == 0 && s.n_froms == 10 && s.froms[8].guard == 8 && !strcmp(s.froms[8].function, "due") &&
          s.froms[8].line == 21 && s.froms[9].guard == 9 && !strcmp(s.froms[9].variable, "limit") &&
          !strcmp(s.froms[9].callee, "struct plan.nice"));
    CHECK("schema @sizes/@items/@setfrom/@addguard/@bounds writer round-trip: each kind read back as written",
          rc == 0 && s.n_froms == 10 && s.froms[3].guard == 3 && s.froms[4].guard == 4 &&
          s.froms[6].guard == 6 && s.froms[7].guard == 7 && s.froms[7].line == 20 &&
          !strcmp(s.froms[7].variable, "hi") && !strcmp(s.froms[7].callee, "struct span.hi") &&
          s.froms[5].guard == 5 && s.froms[5].line == 18 &&
          !strcmp(s.froms[5].variable, "struct h.allowance") &&
          !strcmp(s.froms[5].callee, "next_allowance"));
    CHECK("schema @from/@guard writer round-trip",
          rc == 0 && s.n_froms == 10 && s.froms[2].guard == 2 &&
          !strcmp(s.froms[2].callee, "struct c,d.valid") && s.froms[0].line == 13 && !strcmp(s.froms[0].file, "x,y.c") &&
          !strcmp(s.froms[0].variable, "v") && !strcmp(s.froms[0].callee, "h,i") &&
          !s.froms[0].guard && s.froms[1].guard && s.froms[1].line == 14 &&
          !strcmp(s.froms[1].variable, "flush") && !strcmp(s.froms[1].callee, "full"));
    CHECK("schema: variable file starting with @ or # survives the round trip",
          rc == 0 && s.n_vars == 2 && !strcmp(s.vars[0].file, "@odd.c") &&
          !strcmp(s.vars[1].file, "#odd.c"));
    if (!rc)
        vpf_schema_free(&s);

    const char *bad[] = {
        "# vprof-schema 1\n@field, a, f, p->n, struct T.n\n",       /* field fields */
        "# vprof-schema 1\n@field, a, f, p->n, struct T.n, x\n",    /* field offset */
        "# vprof-schema 1\n@field, a, f, p->n, T.n, 0\n",           /* field key */
        "# vprof-schema 1\n@field, a, f, p->n, struct T., 0\n",     /* field key */
        "# vprof-schema 1\n@field, a, f, , struct T.n, 0\n",        /* field variable */
        "# vprof-schema 1\n@writes, a, f, 3\n",                     /* writes fields */
        "# vprof-schema 1\n@writes, a, f, -3, g\n",                 /* writes line */
        "# vprof-schema 1\n@writes, a, f, 3, \n",                   /* writes target */
        "# vprof-schema 1\n@writes, a, f, 3, g%z\n",                /* writes escape */
        "# vprof-schema 1\n@from, a, f, 3, v\n",                    /* from fields */
        "# vprof-schema 1\n@from, a, f, x, v, g\n",                 /* from line */
        "# vprof-schema 1\n@from, a, f, 3, , g\n",                  /* from variable */
        "# vprof-schema 1\n@from, a, f, 3, v, \n",                  /* from callee */
        "src/a.c, f, 1, v, int, none\n",                       /* no header */
        "# vprof-schema 1\nsrc/a.c, f, x1, v, int, none\n",    /* bad line */
        "# vprof-schema 1\nsrc/a.c, f, 1, v, int\n",           /* 5 fields */
        "# vprof-schema 2\n",                                  /* version */
        "# vprof-schema 1\nsrc/a.c, f, 1, v%zz, int, none\n",  /* escape */
        "# vprof-schema 1\n@block, a, f, 1, 2\n",              /* block fields */
        "# vprof-schema 1\n@uses, a, f\n",                     /* use fields */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rc = vpf_schema_parse(bad[i], strlen(bad[i]), "bad.schema", &s, &e);
        char name[64];
        snprintf(name, sizeof name, "schema rejects bad input %zu with file:line", i);
        CHECK(name, rc < 0 && !strncmp(e.msg, "bad.schema:", 11));
    }
}

static void test_meta(void)
{
    struct vpf_meta_builder *b = vpf_mb_new();
    struct vpf_var_desc v = {0};
    v.file = vpf_mb_str(b, "a.c");
    v.function = vpf_mb_str(b, "#global");
    v.name = vpf_mb_str(b, "g");
    v.type = vpf_mb_str(b, "int");
    v.line = 3; v.tags = VPF_TAG_GLOBAL; v.kind = VPF_KIND_SINT; v.size = 4;
    uint32_t id = vpf_mb_add_var(b, &v);
    CHECK("meta string dedup", vpf_mb_str(b, "a.c") == v.file);
    struct vpf_loc_entry e2 = {.pc_start = 0x2000, .pc_end = 0x2100, .var = id,
                               .loc = VPF_LOC_FBREG, .reg = VPF_RBP, .size = 4,
                               .offset = -20, .fb_offset = 16};
    struct vpf_loc_entry e1 = {.pc_start = 0x1000, .pc_end = 0x3000, .var = id,
                               .loc = VPF_LOC_ADDR, .size = 4, .offset = 0x4010};
    vpf_mb_add_entry(b, &e2);
    vpf_mb_add_entry(b, &e1);
    uint8_t bid[20];
    for (int i = 0; i < 20; i++)
        bid[i] = (uint8_t)i;
    vpf_mb_set_build_id(b, bid, 20);
    vpf_mb_set_flags(b, VPF_META_F_RELATIVE);
    vpf_err e;
    CHECK("meta write", vpf_mb_write(b, path("m.vmeta"), &e) == 0);
    vpf_mb_free(b);

    struct vpf_meta m;
    int rc = vpf_meta_load(path("m.vmeta"), &m, &e);
    CHECK("meta load", rc == 0);
    if (rc)
        return;
    CHECK("meta counts", m.hdr.n_vars == 1 && m.hdr.n_entries == 2);
    CHECK("meta sorted by pc", m.entries[0].pc_start == 0x1000 && m.entries[1].offset == -20);
    CHECK("meta strings", !strcmp(vpf_meta_str(&m, m.vars[0].name), "g") &&
                              !strcmp(vpf_meta_str(&m, m.vars[0].function), "#global"));
    CHECK("meta build id", m.hdr.build_id_len == 20 && m.hdr.build_id[19] == 19 &&
                               m.hdr.flags == VPF_META_F_RELATIVE);
    /* corruptions: each must be rejected with the file name and an offset */
    size_t len = m.owned_len;
    unsigned char *copy = malloc(len);
    memcpy(copy, m.owned, len);
    vpf_meta_free(&m);
    struct { size_t off; unsigned char val; const char *what; } muts[] = {
        {0, 'X', "magic"}, {8, 9, "version"}, {16, 7, "n_vars too large"},
        {64 + 22, 9, "var kind"}, {64 + 32 + 16, 5, "entry var index"},
        {64 + 32 + 20, 9, "entry loc kind"}, {64 + 32 + 22, 3, "entry size"},
        {64 + 32 + 21 + 48, 200, "entry register"},
    };
    for (size_t i = 0; i < sizeof muts / sizeof muts[0]; i++) {
        unsigned char *c = malloc(len);
        memcpy(c, copy, len);
        c[muts[i].off] = muts[i].val;
        rc = vpf_meta_parse(c, len, "x.vmeta", &m, &e);
        char name[96];
        snprintf(name, sizeof name, "meta rejects bad %s", muts[i].what);
        CHECK(name, rc < 0 && strstr(e.msg, "x.vmeta: offset ") == e.msg);
        free(c);
    }
    int accepted = 0;
    for (size_t cut = 0; cut < len; cut++)
        if (vpf_meta_parse(copy, cut, "t.vmeta", &m, &e) == 0)
            accepted++;
    CHECK("meta rejects every truncation", accepted == 0);
    free(copy);
}

/* EXPR entries (FORMATS.md §2.1): the program is a string of the table;
 * a bad offset, register or kind rejects the file, a bad program only its
 * entry (vpf_expr_check_entry). */
static void test_meta_expr(void)
{
    struct vpf_meta_builder *b = vpf_mb_new();
    struct vpf_var_desc v = {0};
    v.kind = VPF_KIND_SINT;
    v.size = 8;
    uint32_t id = vpf_mb_add_var(b, &v);
    struct vpf_loc_entry en = {.pc_start = 0x1000, .pc_end = 0x1100, .var = id,
                               .loc = VPF_LOC_EXPR, .reg = VPF_RSP, .size = 8,
                               .fb_offset = 8};
    en.offset = vpf_mb_str(b, "f-80 d8 #2572 mul r1 add");
    vpf_mb_add_entry(b, &en);
    vpf_err e;
    CHECK("expr meta write", vpf_mb_write(b, path("x.vmeta"), &e) == 0);
    vpf_mb_free(b);
    struct vpf_meta m;
    int rc = vpf_meta_load(path("x.vmeta"), &m, &e);
    CHECK("expr meta load", rc == 0);
    if (rc)
        return;
    const char *prog = vpf_meta_expr(&m, &m.entries[0]);
    CHECK("expr program found", prog && !strcmp(prog, "f-80 d8 #2572 mul r1 add"));
    CHECK("expr program valid", vpf_expr_check_entry(&m, &m.entries[0]) == NULL);
    char txt[128];
    vpf_expr_format(prog, txt, sizeof txt);
    CHECK("expr printed", !strcmp(txt, "fb-80 deref8 2572 mul rdx add"));
    size_t len = m.owned_len, ent = 64 + 32;
    unsigned char *copy = malloc(len);
    memcpy(copy, m.owned, len);
    uint32_t strtab = m.hdr.strtab_size;
    vpf_meta_free(&m);
    struct { size_t off; uint64_t val; int width; const char *what, *msg; } muts[] = {
        {ent + 24, strtab, 8, "program offset past the table", "expression program offset out of range"},
        {ent + 24, 0, 8, "program offset 0", "expression program offset out of range"},
        {ent + 24, (uint64_t)-5, 8, "negative program offset", "expression program offset out of range"},
        {ent + 21, 17, 1, "frame base register", "frame base register out of range"},
        {ent + 20, 6, 1, "location kind 6", "unknown location kind"},
    };
    for (size_t i = 0; i < sizeof muts / sizeof muts[0]; i++) {
        unsigned char *c = malloc(len);
        memcpy(c, copy, len);
        memcpy(c + muts[i].off, &muts[i].val, (size_t)muts[i].width);
        rc = vpf_meta_parse(c, len, "x.vmeta", &m, &e);
        char name[96];
        snprintf(name, sizeof name, "expr meta rejects %s", muts[i].what);
        CHECK(name, rc < 0 && strstr(e.msg, "x.vmeta: offset 96: location entry 0: ") == e.msg &&
                        strstr(e.msg, muts[i].msg));
        free(c);
    }
    /* a program the reader cannot run: the file is read, the entry is not */
    unsigned char *c = malloc(len);
    memcpy(c, copy, len);
    unsigned char *p = memmem(c, len, "#2572 mul", 9);
    if (p)
        memcpy(p, "#2572 mu?", 9);
    rc = vpf_meta_parse(c, len, "x.vmeta", &m, &e);
    const char *why = rc == 0 ? vpf_expr_check_entry(&m, &m.entries[0]) : NULL;
    CHECK("expr: a bad program leaves the file readable, its entry refused",
          p && rc == 0 && why && !strcmp(why, "malformed operation"));
    free(c);
    free(copy);
}

static void test_recfile(void)
{
    int fd = open(path("values.1"), O_RDWR | O_CREAT | O_EXCL, 0644);
    struct vpf_recfile_w w;
    vpf_err e;
    int rc = vpf_recfile_create(fd, VPF_VALUES_MAGIC, 1, sizeof(struct vpf_value_rec), 4, &w, &e);
    CHECK("values create", rc == 0);
    if (rc)
        return;
    struct vpf_values_header *h = (struct vpf_values_header *)w.base;
    h->hz = 1000;
    for (int i = 0; i < 6; i++) {
        struct vpf_value_rec *r = vpf_recfile_claim(&w);
        if (!r)
            continue;
        r->value = (uint64_t)i * 10;
        r->var = (uint32_t)i;
        if (i != 2)                 /* record 2 is claimed but never committed */
            vpf_commit_flag(&r->flags);
    }
    CHECK("values drops past capacity", h->dropped == 2);
    vpf_recfile_close(&w, 1);

    struct vpf_recfile_r r;
    rc = vpf_values_open(path("values.1"), &r, &e);
    CHECK("values open", rc == 0);
    if (rc)
        return;
    const struct vpf_value_rec *recs = vpf_values_recs(&r);
    CHECK("values count", r.n == 4 && vpf_values_hdr(&r)->hz == 1000);
    CHECK("values content", recs[3].value == 30 && (recs[3].flags & VPF_REC_COMMITTED) &&
                                !(recs[2].flags & VPF_REC_COMMITTED));
    CHECK("values clean flag", vpf_values_hdr(&r)->flags & VPF_VALUES_FLAG_CLEAN);
    vpf_recfile_close_r(&r);

    rc = truncate(path("values.1"), 64 + 40 * 3);
    rc = vpf_values_open(path("values.1"), &r, &e);
    CHECK("values rejects truncation with offset", rc < 0 && strstr(e.msg, "offset 184"));
    rc = vpf_latency_open(path("values.1"), &r, &e);
    CHECK("latency reader rejects a values file", rc < 0 && strstr(e.msg, "magic"));
}

/* Version 2: global groups and frame records, expanded by vpf_values_next
 * into what version 1 wrote, in version 1's order. */
static void test_values_v2(void)
{
    struct {
        uint32_t var, tid;
        uint64_t value, pc;
        uint8_t depth;
        uint16_t tick;
        int commit;
    } in[] = {
        {1, 100, 11, 0x100, 0 | VPF_DEPTH_GROUP, 5, 1},     /* A's group, tick 5 */
        {2, 100, 22, 0x100, 0 | VPF_DEPTH_GROUP, 5, 1},
        {1, 200, 33, 0x500, 1 | VPF_DEPTH_GROUP, 9, 1},     /* B's group, tick 9 */
        {7, 100, 77, 0x100, 0, 5, 1},                       /* A's local at the leaf */
        {VPF_VAR_FRAME, 100, 0, 0x200, 2, 5, 1},            /* A: the group at 0x200 */
        {VPF_VAR_FRAME, 200, 0, 0x600, 3, 9, 1},            /* B: its group at 0x600 */
        {8, 100, 88, 0x200, 2, 5, 1},                       /* A's local at 0x200 */
        {VPF_VAR_FRAME, 100, 0, 0x300, 4, 5, 1},
        {1, 100, 12, 0x110, 0 | VPF_DEPTH_GROUP, 6, 1},     /* A's group, tick 6 ... */
        {2, 100, 23, 0x110, 0 | VPF_DEPTH_GROUP, 6, 0},     /* ... one record never committed */
        {VPF_VAR_FRAME, 100, 0, 0x250, 1, 6, 1},
        {VPF_VAR_FRAME, 300, 0, 0x700, 1, 1, 1},            /* C has no group: nothing */
        {VPF_VAR_FRAME, 100, 0, 0x350, 1, 5, 1},            /* tick 5's group is gone */
    };
    const size_t n = sizeof in / sizeof in[0];
    struct { uint32_t var; uint64_t value, pc; uint8_t depth; } want[] = {
        {1, 11, 0x100, 0}, {2, 22, 0x100, 0}, {1, 33, 0x500, 1}, {7, 77, 0x100, 0},
        {1, 11, 0x200, 2}, {2, 22, 0x200, 2}, {1, 33, 0x600, 3}, {8, 88, 0x200, 2},
        {1, 11, 0x300, 4}, {2, 22, 0x300, 4}, {1, 12, 0x110, 0}, {1, 12, 0x250, 1},
    };
    const size_t nw = sizeof want / sizeof want[0];
    int fd = open(path("values.2"), O_RDWR | O_CREAT | O_EXCL, 0644);
    struct vpf_recfile_w w;
    vpf_err e;
    int rc = vpf_recfile_create(fd, VPF_VALUES_MAGIC, VPF_VALUES_VERSION,
                                sizeof(struct vpf_value_rec), n, &w, &e);
    CHECK("values v2 create", rc == 0 && VPF_VALUES_VERSION == 2);
    if (rc)
        return;
    for (size_t i = 0; i < n; i++) {
        struct vpf_value_rec *r = vpf_recfile_claim(&w);
        *r = (struct vpf_value_rec){.value = in[i].value, .pc = in[i].pc, .time_ns = 1000 + in[i].tick,
                                    .var = in[i].var, .tid = in[i].tid, .depth = in[i].depth,
                                    .flags = 3, .tick = in[i].tick, .entry = in[i].var + 40};
        if (in[i].commit)
            vpf_commit_flag(&r->flags);
    }
    vpf_recfile_close(&w, 1);
    struct vpf_recfile_r r;
    rc = vpf_values_open(path("values.2"), &r, &e);
    CHECK("values v2 open", rc == 0);
    if (rc)
        return;
    struct vpf_values_iter it;
    vpf_values_iter_init(&it, &r);
    size_t k = 0, bad = 0;
    uint64_t pos, last_pos = 0;
    for (const struct vpf_value_rec *v; (v = vpf_values_next(&it, &pos)); k++) {
        if (k >= nw || v->var != want[k].var || v->value != want[k].value ||
            v->pc != want[k].pc || v->depth != want[k].depth || v->entry != v->var + 40 ||
            vpf_rec_weight(v->flags) != 3 || !(v->flags & VPF_REC_COMMITTED) ||
            v->time_ns != 1000u + v->tick || pos < last_pos || pos >= n)
            bad++;
        last_pos = pos;
    }
    CHECK("values v2 expands groups at their frames, in order", k == nw && bad == 0);
    CHECK("values v2 counts", it.uncommitted == 1 && it.frames == 6 && it.orphans == 2);
    vpf_values_iter_free(&it);
    vpf_recfile_close_r(&r);

    /* version 1: records are what they say, a frame-looking one included */
    int fd1 = open(path("values.3"), O_RDWR | O_CREAT | O_EXCL, 0644);
    rc = vpf_recfile_create(fd1, VPF_VALUES_MAGIC, 1, sizeof(struct vpf_value_rec), 2, &w, &e);
    struct vpf_value_rec *a = vpf_recfile_claim(&w), *b = vpf_recfile_claim(&w);
    *a = (struct vpf_value_rec){.value = 5, .var = 3, .depth = 0x81, .tick = 1};
    *b = (struct vpf_value_rec){.var = VPF_VAR_FRAME, .depth = 2, .tick = 1};
    vpf_commit_flag(&a->flags);
    vpf_commit_flag(&b->flags);
    vpf_recfile_close(&w, 1);
    rc = vpf_values_open(path("values.3"), &r, &e);
    vpf_values_iter_init(&it, &r);
    const struct vpf_value_rec *v1 = vpf_values_next(&it, NULL), *v2 = vpf_values_next(&it, NULL);
    CHECK("values v1 read as is", rc == 0 && v1 && v1->depth == 0x81 && v2 &&
                                      v2->var == VPF_VAR_FRAME && !vpf_values_next(&it, NULL));
    vpf_values_iter_free(&it);
    vpf_recfile_close_r(&r);

    /* a version the reader does not know */
    unsigned char hdr[64 + 40];
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, VPF_VALUES_MAGIC, 8);
    hdr[8] = 3;
    hdr[10] = 64;
    hdr[12] = 40;
    write_file(path("values.4"), hdr, sizeof hdr);
    rc = vpf_values_open(path("values.4"), &r, &e);
    CHECK("values rejects version 3 at offset 8", rc < 0 && strstr(e.msg, "offset 8"));
}

static void test_layout(void)
{
    int fd = open(path("layout.1"), O_WRONLY | O_CREAT | O_EXCL, 0644);
    struct vpf_layout l = {.pid = 42, .ppid = 1, .exe = "/tmp/my app,1", .build_id = "abcd",
                           .load_bias = 0x5555000, .text_lo = 0x5556000, .text_hi = 0x5557000,
                           .hz = 997, .unwind = 3, .meta_path = "/tmp/x.vmeta",
                           .meta_status = "ok", .start_ns = 123};
    int rc = vpf_layout_write_head(fd, &l);
    rc |= vpf_layout_write_map(fd, 0x1000, 0x2000, 0, "/lib/libc.so.6");
    rc |= vpf_layout_write_var(fd, 0, "a.c", "#global", 3, "g", "int", 0, VPF_KIND_SINT, 4);
    rc |= vpf_layout_write_var(fd, 1, "a.c", "f", 9, "p->len", "unsigned long",
                               VPF_TAG_LOOP | VPF_TAG_COND, VPF_KIND_UINT, 8);
    /* a type name far longer than the writer's buffer, most of it escaped
     * (C++ template types run to many KiB): once dropped, which left a gap
     * in the var ids and made the whole log unreadable */
    static char longtype[30001];
    for (int i = 0; i < 30000; i++)
        longtype[i] = "m<a,%\tbc>"[i % 9];
    rc |= vpf_layout_write_var(fd, 2, "a.c", "g", 12, "m", longtype, 0, VPF_KIND_PTR, 8);
    rc |= vpf_layout_write_end(fd, 10, 20, 0, 1, 999);
    close(fd);
    CHECK("layout write", rc == 0);
    struct vpf_layout r;
    vpf_err e;
    rc = vpf_layout_load(path("layout.1"), &r, &e);
    CHECK("layout load", rc == 0);
    if (rc) {
        printf("# %s\n", e.msg);
        return;
    }
    CHECK("layout header fields", r.pid == 42 && !strcmp(r.exe, "/tmp/my app,1") &&
                                      r.load_bias == 0x5555000 && r.hz == 997 &&
                                      r.text_hi == 0x5557000 && !strcmp(r.meta_status, "ok"));
    CHECK("layout: a 30,000-character type name (50,000 bytes encoded) written whole",
          r.n_vars == 3 && !strcmp(r.vars[2].type, longtype) && r.vars[2].line == 12);
    CHECK("layout vars", r.n_vars == 3 && r.vars[0].tags == VPF_TAG_GLOBAL &&
                             !strcmp(r.vars[1].name, "p->len") &&
                             r.vars[1].tags == (VPF_TAG_LOOP | VPF_TAG_COND) &&
                             r.vars[1].size == 8);
    CHECK("layout maps and end", r.n_maps == 1 && r.has_end && r.samples == 20 && r.faults == 1);
    vpf_layout_free(&r);
    write_file(path("layout.bad"), "vprof-layout 1\npid\tx\n", 21);
    rc = vpf_layout_load(path("layout.bad"), &r, &e);
    CHECK("layout rejects malformed line with file:line", rc < 0 && strstr(e.msg, "layout.bad:2:"));
    write_file(path("layout.bad2"), "hello\n", 6);
    rc = vpf_layout_load(path("layout.bad2"), &r, &e);
    CHECK("layout rejects other files", rc < 0);
}

static void test_gmon(void)
{
    int fd = open(path("gmon.out"), O_WRONLY | O_CREAT | O_EXCL, 0644);
    struct vpf_gmon_writer w;
    uint16_t bins[8] = {1, 0, 3, 0, 0, 0, 0, 7};
    vpf_gmon_w_begin(&w, fd);
    vpf_gmon_w_hist(&w, 0x1000, 0x1020, bins, 8, 1000);
    vpf_gmon_w_arc(&w, 0x1008, 0x1010, 2);
    vpf_gmon_w_arc(&w, 0x1004, 0x1010, 5);
    vpf_gmon_w_arc(&w, 0x1004, 0x1010, 1);
    CHECK("gmon write", vpf_gmon_w_end(&w) == 0);
    close(fd);
    struct vpf_gmon g;
    vpf_err e;
    int rc = vpf_gmon_load(path("gmon.out"), &g, &e);
    CHECK("gmon load", rc == 0);
    if (rc)
        return;
    CHECK("gmon hist", g.lowpc == 0x1000 && g.hist_size == 8 && g.hist[7] == 7 &&
                           g.prof_rate == 1000 && !strcmp(g.dimen, "seconds"));
    CHECK("gmon arcs merged in file order", g.n_arcs == 2 && g.arcs[0].from_pc == 0x1008 &&
                                               g.arcs[1].count == 6);
    rc = vpf_gmon_merge(&g, path("gmon.out"), &e);
    CHECK("gmon merge sums", rc == 0 && g.hist[2] == 6 && g.arcs[1].count == 12);
    vpf_gmon_free(&g);
    rc = truncate(path("gmon.out"), 70);
    rc = vpf_gmon_load(path("gmon.out"), &g, &e);
    CHECK("gmon rejects truncation with offset", rc < 0 && strstr(e.msg, "offset 20"));
}

/* The format module's grow (vprof_format.h): geometric, and on overflow
 * -1 with the array and its capacity left as they were. */
static void test_grow(void)
{
    int *a = NULL;
    size_t cap = 0, reallocs = 0, n;
    int ok = 1;
    for (n = 0; n < 100000; n++) {
        size_t before = cap;
        if (vpf_grow_try((void **)&a, &cap, n + 1, sizeof *a) < 0) { ok = 0; break; }
        reallocs += cap != before;
        a[n] = (int)n;
    }
    for (size_t i = 0; ok && i < n; i++) ok = a[i] == (int)i;
    CHECK("grow keeps the elements while filling one at a time", ok && n == 100000);
    CHECK("grow is geometric (at most 14 reallocations for 100,000 elements)", reallocs <= 14);
    CHECK("grow's capacity covers what was asked", cap >= 100000);
    int *keep = a;
    size_t keep_cap = cap;
    int rc = vpf_grow_try((void **)&a, &cap, SIZE_MAX / 2, sizeof *a);
    CHECK("grow refuses a size that overflows, array and capacity unchanged",
          rc < 0 && a == keep && cap == keep_cap && a[99999] == 99999);
    rc = vpf_grow_try((void **)&a, &cap, 10, sizeof *a);
    CHECK("grow does nothing when there is room", rc == 0 && a == keep && cap == keep_cap);
    free(a);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/vpf-format-XXXXXX");
    if (!mkdtemp(dir))
        return 2;
    test_schema();
    test_meta();
    test_meta_expr();
    test_recfile();
    test_values_v2();
    test_layout();
    test_gmon();
    test_grow();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) { /* best effort */ }
    return fails != 0;
}
