/* types.c - what vprof can record of a DWARF type, cached per type DIE.
 *
 * Recordable: basic types of 1/2/4/8 bytes (ints, enums, bool, float,
 * double), and pointers: to a basic type (recorded as the pointee, one
 * dereference) or to anything else (recorded as the address). Typedefs and
 * cv-qualifiers are looked through. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dwutil.h"
#include "vprof_xalloc.h"

struct tslot { Dwarf_Off off; struct tinfo ti; };

struct type_cache {
    Dwarf_Debug dbg;
    struct tslot *slots;
    size_t cap, n;
    char namebuf[512];
};

struct type_cache *types_new(Dwarf_Debug dbg)
{
    struct type_cache *t = vpf_xcalloc(1, sizeof *t);
    t->dbg = dbg;
    t->cap = 1024;
    t->slots = vpf_xcalloc(t->cap, sizeof *t->slots);
    return t;
}

void types_free(struct type_cache *t)
{
    if (!t)
        return;
    free(t->slots);
    free(t);
}

static size_t hash_off(Dwarf_Off o, size_t cap)
{
    return (size_t)((o * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static struct tslot *slot_get(struct type_cache *t, Dwarf_Off off, int *fresh)
{
    if (t->n * 2 >= t->cap) {   /* grow: keep load under one half */
        size_t nc = t->cap * 2;
        struct tslot *ns = vpf_xcalloc(nc, sizeof *ns);
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slots[i].off)
                continue;
            size_t h = hash_off(t->slots[i].off, nc);
            while (ns[h].off)
                h = (h + 1) & (nc - 1);
            ns[h] = t->slots[i];
        }
        free(t->slots);
        t->slots = ns;
        t->cap = nc;
    }
    size_t h = hash_off(off, t->cap);
    while (t->slots[h].off && t->slots[h].off != off)
        h = (h + 1) & (t->cap - 1);
    *fresh = !t->slots[h].off;
    if (*fresh) {
        t->slots[h].off = off;
        memset(&t->slots[h].ti, 0, sizeof t->slots[h].ti);
        t->n++;
    }
    return &t->slots[h];
}

static int is_qualifier(Dwarf_Half tag)
{
    return tag == DW_TAG_typedef || tag == DW_TAG_const_type ||
           tag == DW_TAG_volatile_type || tag == DW_TAG_restrict_type ||
           tag == DW_TAG_atomic_type || tag == DW_TAG_immutable_type;
}

/* Follows typedefs and qualifiers; returns the DIE of the real type (NULL
 * for void) and its offset in *real. */
static Dwarf_Die strip(struct type_cache *t, Dwarf_Off off, Dwarf_Off *real)
{
    for (int depth = 0; off && depth < 32; depth++) {
        Dwarf_Die d = dw_offdie(t->dbg, off);
        if (!d)
            return NULL;
        if (!is_qualifier(dw_tag(d))) {
            /* a declaration standing for a type-unit type: the full type */
            Dwarf_Off sig = dw_flag(t->dbg, d, DW_AT_signature)
                          ? dw_ref(t->dbg, d, DW_AT_signature) : 0;
            if (sig && sig != off) {
                dwarf_dealloc_die(d);
                off = sig;
                continue;
            }
            *real = off;
            return d;
        }
        Dwarf_Off next = dw_ref(t->dbg, d, DW_AT_type);
        dwarf_dealloc_die(d);
        off = next;
    }
    return NULL;
}

static int size_ok(Dwarf_Unsigned s)
{
    return s == 1 || s == 2 || s == 4 || s == 8;
}

static void classify_die(struct type_cache *t, Dwarf_Die d, Dwarf_Off real,
                         struct tinfo *ti, int depth)
{
    Dwarf_Unsigned size = 0, enc = 0;
    Dwarf_Half tag = dw_tag(d);
    dw_udata(t->dbg, d, DW_AT_byte_size, &size);
    ti->obj_size = size;
    switch (tag) {
    case DW_TAG_base_type:
        if (dw_udata(t->dbg, d, DW_AT_encoding, &enc) != 0 || !size_ok(size))
            return;
        ti->size = (uint8_t)size;
        switch (enc) {
        case DW_ATE_signed: case DW_ATE_signed_char:
            ti->kind = VPF_KIND_SINT; ti->lflags = VPF_LF_SIGNED; break;
        case DW_ATE_unsigned: case DW_ATE_unsigned_char: case DW_ATE_UTF:
            ti->kind = VPF_KIND_UINT; break;
        case DW_ATE_boolean:
            ti->kind = VPF_KIND_BOOL; break;
        case DW_ATE_float:
            if (size != 4 && size != 8)
                return;
            ti->kind = VPF_KIND_FLOAT; ti->lflags = VPF_LF_FLOAT; break;
        default:
            return;
        }
        ti->ok = 1;
        return;
    case DW_TAG_enumeration_type: {
        if (!size_ok(size))
            return;
        ti->ok = 1;
        ti->size = (uint8_t)size;
        ti->kind = VPF_KIND_UINT;
        Dwarf_Off under = dw_ref(t->dbg, d, DW_AT_type);
        if (under && depth < 8) {
            const struct tinfo *u = types_classify(t, under);
            if (u->ok && u->kind == VPF_KIND_SINT) {
                ti->kind = VPF_KIND_SINT;
                ti->lflags = VPF_LF_SIGNED;
            }
        }
        return;
    }
    case DW_TAG_pointer_type: case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type: {
        ti->ok = 1;
        ti->obj_size = 8;
        ti->kind = VPF_KIND_PTR;
        ti->size = 8;
        Dwarf_Off preal = 0;
        Dwarf_Die pd = strip(t, dw_ref(t->dbg, d, DW_AT_type), &preal);
        if (!pd)
            return;             /* void * */
        Dwarf_Half pt = dw_tag(pd);
        if (pt == DW_TAG_structure_type || pt == DW_TAG_union_type ||
            pt == DW_TAG_class_type) {
            ti->is_ptr_struct = 1;
            ti->struct_off = preal;
        } else if ((pt == DW_TAG_base_type || pt == DW_TAG_enumeration_type)
                   && depth < 8) {
            struct tinfo p;
            memset(&p, 0, sizeof p);
            classify_die(t, pd, preal, &p, depth + 1);
            if (p.ok) {
                ti->kind = VPF_KIND_PTR_BASIC;
                ti->size = p.size;
                ti->lflags = p.lflags | VPF_LF_DEREF;
            }
        }
        dwarf_dealloc_die(pd);
        return;
    }
    case DW_TAG_structure_type: case DW_TAG_union_type: case DW_TAG_class_type:
        ti->is_struct = 1;
        ti->struct_off = real;
        return;
    default:
        return;
    }
}

const struct tinfo *types_classify(struct type_cache *t, Dwarf_Off off)
{
    static const struct tinfo none;
    int fresh = 0;
    if (!off)
        return &none;
    struct tslot *s = slot_get(t, off, &fresh);
    if (!fresh)
        return &s->ti;
    struct tinfo ti;
    memset(&ti, 0, sizeof ti);
    Dwarf_Off real = 0;
    Dwarf_Die d = strip(t, off, &real);
    if (d) {
        classify_die(t, d, real, &ti, 0);
        dwarf_dealloc_die(d);
    }
    /* the slot may have moved if classify_die grew the table */
    s = slot_get(t, off, &fresh);
    s->ti = ti;
    return &s->ti;
}

/* DW_AT_data_member_location: a constant, or DW_OP_plus_uconst N. */
static int member_offset(Dwarf_Debug dbg, Dwarf_Die m, int64_t *off)
{
    Dwarf_Unsigned v = 0;
    if (!dw_flag(dbg, m, DW_AT_data_member_location)) {
        *off = 0;               /* union members */
        return 0;
    }
    if (dw_udata(dbg, m, DW_AT_data_member_location, &v) == 0) {
        *off = (int64_t)v;
        return 0;
    }
    Dwarf_Attribute at = NULL;
    Dwarf_Error err = NULL;
    Dwarf_Block *b = NULL;
    int rc = -1;
    if (dwarf_attr(m, DW_AT_data_member_location, &at, &err) == DW_DLV_OK) {
        if (dwarf_formblock(at, &b, &err) == DW_DLV_OK) {
            const unsigned char *p = b->bl_data;
            if (b->bl_len >= 2 && p[0] == DW_OP_plus_uconst) {
                uint64_t r = 0;
                unsigned shift = 0;
                for (Dwarf_Unsigned i = 1; i < b->bl_len && shift < 64; i++) {
                    r |= (uint64_t)(p[i] & 0x7f) << shift;
                    shift += 7;
                    if (!(p[i] & 0x80)) {
                        *off = (int64_t)r;
                        rc = 0;
                        break;
                    }
                }
            }
            dwarf_dealloc(dbg, b, DW_DLA_BLOCK);
        }
        dwarf_dealloc_attribute(at);
    }
    if (err)
        dwarf_dealloc_error(dbg, err);
    return rc;
}

int types_member(struct type_cache *t, Dwarf_Off struct_off, const char *name,
                 int64_t *moff, Dwarf_Off *mtype)
{
    Dwarf_Die s = dw_offdie(t->dbg, struct_off), c = NULL;
    Dwarf_Error err = NULL;
    int rc = -1;
    if (!s)
        return -1;
    if (dwarf_child(s, &c, &err) != DW_DLV_OK) {
        dwarf_dealloc_die(s);
        return -1;
    }
    while (c) {
        const char *n = dw_name(t->dbg, c);
        if (dw_tag(c) == DW_TAG_member && n && strcmp(n, name) == 0) {
            if (!dw_flag(t->dbg, c, DW_AT_bit_size) &&
                !dw_flag(t->dbg, c, DW_AT_data_bit_offset) &&
                member_offset(t->dbg, c, moff) == 0) {
                *mtype = dw_ref(t->dbg, c, DW_AT_type);
                rc = 0;
            }
            break;
        }
        Dwarf_Die next = NULL;
        int r = dwarf_siblingof_b(t->dbg, c, dwarf_get_die_infotypes_flag(c),
                                  &next, &err);
        dwarf_dealloc_die(c);
        c = r == DW_DLV_OK ? next : NULL;
    }
    if (c)
        dwarf_dealloc_die(c);
    dwarf_dealloc_die(s);
    return rc;
}

static void name_rec(struct type_cache *t, Dwarf_Off off, char *buf,
                     size_t len, int depth)
{
    Dwarf_Die d = off ? dw_offdie(t->dbg, off) : NULL;
    if (!d || depth > 8) {
        snprintf(buf, len, "void");
        if (d)
            dwarf_dealloc_die(d);
        return;
    }
    const char *n = dw_name(t->dbg, d);
    Dwarf_Half tag = dw_tag(d);
    Dwarf_Off sub = dw_ref(t->dbg, d, DW_AT_type);
    char inner[256];
    switch (tag) {
    case DW_TAG_pointer_type:
        name_rec(t, sub, inner, sizeof inner, depth + 1);
        snprintf(buf, len, "%s *", inner);
        break;
    case DW_TAG_const_type:
        name_rec(t, sub, inner, sizeof inner, depth + 1);
        snprintf(buf, len, "const %s", inner);
        break;
    case DW_TAG_volatile_type:
        name_rec(t, sub, inner, sizeof inner, depth + 1);
        snprintf(buf, len, "volatile %s", inner);
        break;
    case DW_TAG_structure_type:
        snprintf(buf, len, "struct %s", n ? n : "<anon>");
        break;
    case DW_TAG_union_type:
        snprintf(buf, len, "union %s", n ? n : "<anon>");
        break;
    case DW_TAG_enumeration_type:
        snprintf(buf, len, "enum %s", n ? n : "<anon>");
        break;
    default:
        if (n) {
            snprintf(buf, len, "%s", n);
        } else if (sub) {
            name_rec(t, sub, buf, len, depth + 1);
        } else {
            snprintf(buf, len, "<type>");
        }
    }
    dwarf_dealloc_die(d);
}

const char *types_name(struct type_cache *t, Dwarf_Off off)
{
    name_rec(t, off, t->namebuf, sizeof t->namebuf, 0);
    return t->namebuf;
}
