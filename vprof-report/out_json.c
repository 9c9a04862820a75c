/* out_json.c - --json: the schema is in docs/vprof-report.md (version 1);
 * fields are only ever added, never renamed or removed. */
#include <math.h>
#include <string.h>

#include "demangle.h"
#include "output.h"
#include "ctx_rank.h"
#include "verdict.h"
#include "writers.h"

void vpr_jstr(FILE *o, const char *s)
{
    if (!s) { fputs("null", o); return; }
    fputc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(o, "\\%c", c);
        else if (c < 0x20) fprintf(o, "\\u%04x", c);
        else fputc(c, o);
    }
    fputc('"', o);
}

void vpr_jnum(FILE *o, double x)
{
    if (isnan(x) || isinf(x)) fputs("null", o);
    else fprintf(o, "%.17g", x);
}

static void jrange(FILE *o, double lo, double hi)
{
    if (lo > hi) { fputs("null", o); return; }
    fputc('[', o); vpr_jnum(o, lo); fputc(',', o); vpr_jnum(o, hi); fputc(']', o);
}

static void jvar(FILE *o, const struct vpr_var *v)
{
    char tags[64];
    vpr_tags_str(v->tags, tags, sizeof tags);
    fputs("{\"name\":", o); vpr_jstr(o, v->name);
    fputs(",\"file\":", o); vpr_jstr(o, v->file);
    fputs(",\"function\":", o); vpr_jstr(o, vpr_dm(v->function));
    fputs(",\"function_symbol\":", o); vpr_jstr(o, v->function);
    fprintf(o, ",\"line\":%u,\"type\":", v->line); vpr_jstr(o, v->type);
    fputs(",\"tags\":", o); vpr_jstr(o, tags);
    fputs(",\"kind\":", o); vpr_jstr(o, vpf_kind_name(v->kind));
    fputs(",\"discount\":", o); vpr_jnum(o, v->r);
    fputs(",\"dimension\":", o); vpr_jstr(o, v->dim >= 0 ? vpr_dim_name[v->dim] : NULL);
    fprintf(o, ",\"address_like\":[%llu,%llu]", (unsigned long long)v->addr_like[0],
            (unsigned long long)v->addr_like[1]);
    fputs(",\"dimensions\":[", o);
    int first = 1;
    for (int d = 0; d < VPR_N_DIMS; d++) {
        if (v->st[d] == VPR_DS_NONE) continue;
        if (!first) fputc(',', o);
        first = 0;
        fputs("{\"dimension\":", o); vpr_jstr(o, vpr_dim_name[d]);
        fputs(",\"state\":", o); vpr_jstr(o, vpr_state_name(v->st[d]));
        fputs(",\"discount\":", o); vpr_jnum(o, v->dim_r[d]);
        fputs(",\"ad_statistic\":", o); vpr_jnum(o, v->dim_stat[d]);
        fputs(",\"pvalue\":", o); vpr_jnum(o, v->dim_p[d]);
        fputs(",\"hellinger\":", o); vpr_jnum(o, v->dim_h[d]);
        fprintf(o, ",\"normal_samples\":%llu,\"buggy_samples\":%llu",
                (unsigned long long)v->n[0][d], (unsigned long long)v->n[1][d]);
        fputs(",\"normal_range\":", o); jrange(o, v->lo[d], v->hi[d]);
        fputs(",\"buggy_range\":", o); jrange(o, v->blo[d], v->bhi[d]);
        fprintf(o, ",\"out_of_range\":%llu}", (unsigned long long)v->n_outside[d]);
    }
    fputs("]}", o);
}

static void jside(FILE *o, const struct vpr_model *m, int s)
{
    const struct vpr_side_stats *st = &m->st[s];
    fprintf(o, "{\"runs\":%zu,\"processes\":%zu,\"value_samples\":%llu,"
            "\"dropped\":%llu,\"faults\":%llu,\"uncommitted\":%llu,"
            "\"unknown_variable\":%llu,\"hz\":%u}",
            m->n_runs[s], st->procs, (unsigned long long)st->value_samples,
            (unsigned long long)st->dropped, (unsigned long long)st->faults,
            (unsigned long long)st->uncommitted, (unsigned long long)st->unknown_var, st->hz);
}

void vpr_out_json(FILE *o, const struct vpr_model *m)
{
    fputs("{\"vprof_report\":1,\"exe\":", o); vpr_jstr(o, m->exe);
    fputs(",\"build_id\":", o); vpr_jstr(o, m->sym.build_id);
    fprintf(o, ",\"options\":{\"default_discount\":%.17g,\"valid_discount\":%.17g,"
            "\"pvalue\":%.17g,\"top\":%d,\"reservoir\":%zu,\"bins\":%zu}",
            m->o->default_discount, m->o->valid_discount, m->o->pvalue, m->o->top,
            m->o->reservoir, m->o->bins);
    fputs(",\"normal\":", o); jside(o, m, VPR_NORMAL);
    fputs(",\"buggy\":", o); jside(o, m, VPR_BUGGY);
    fputs(",\"functions\":[", o);
    size_t shown = vpr_n_shown(m);
    for (size_t i = 0; i < shown; i++) {
        const struct vpr_func *f = &m->f[m->order[i]];
        if (i) fputc(',', o);
        fputs("\n{\"name\":", o); vpr_jstr(o, vpr_dm(f->name));
        fputs(",\"symbol\":", o); vpr_jstr(o, f->name);
        fprintf(o, ",\"rank\":%zu", i + 1);
        fprintf(o, ",\"inlined_only\":%s", f->inl_only ? "true" : "false");
        long host = f->inl_only ? vpr_model_host(f) : -1;
        fputs(",\"inlined_into\":", o);
        if (host >= 0) vpr_jstr(o, vpr_dm(m->f[host].name));
        else fputs("null", o);
        fputs(",\"file\":", o); vpr_jstr(o, f->file);
        fprintf(o, ",\"line\":%u", f->line);
        fputs(",\"calibrated_cost\":", o); vpr_jnum(o, f->calibrated);
        fputs(",\"raw_cost\":", o); vpr_jnum(o, f->raw[VPR_BUGGY]);
        fputs(",\"pc_cost\":", o); vpr_jnum(o, f->pc_cost[VPR_BUGGY]);
        fputs(",\"var_cost\":", o); vpr_jnum(o, f->var_cost[VPR_BUGGY]);
        fputs(",\"normal_raw_cost\":", o); vpr_jnum(o, f->raw[VPR_NORMAL]);
        fputs(",\"normal_pc_cost\":", o); vpr_jnum(o, f->pc_cost[VPR_NORMAL]);
        fputs(",\"discount\":", o);
        if (f->disc == VPR_DISC_NONE) fputs("null", o); else vpr_jnum(o, f->r);
        fputs(",\"discounter\":", o); vpr_jstr(o, vpr_disc_name(f->disc));
        if (f->disc == VPR_DISC_HIST) fprintf(o, ",\"hist_h\":%u,\"hist_c\":%u", f->hist_h, f->hist_c);
        fputs(",\"dimension\":", o);
        vpr_jstr(o, f->disc == VPR_DISC_VARIABLE && f->dim >= 0 ? vpr_dim_name[f->dim]
                : f->disc == VPR_DISC_LATENCY ? "latency" : f->disc == VPR_DISC_LOCK ? "lock" : f->disc == VPR_DISC_ARC ? "calls"
                : f->disc == VPR_DISC_CONTEXT ? "contexts" : NULL);
        fputs(",\"variable\":", o); vpr_jstr(o, f->var >= 0 ? m->v[f->var].name : NULL);
        fputs(",\"pattern\":", o); vpr_jstr(o, f->pattern ? f->pattern : "none");
        struct vpr_verdict vd;
        vpr_verdict(m, f, &vd);
        if (i < VPR_WRITERS_SHOWN) vpr_verdict_writers(m, f, &vd);
        fputs(",\"evidence\":{\"strength\":", o); vpr_jstr(o, vpr_evidence_name(vd.evidence));
        fprintf(o, ",\"normal\":%llu,\"buggy\":%llu,\"pvalue\":", (unsigned long long)vd.n[0],
                (unsigned long long)vd.n[1]);
        vpr_jnum(o, vd.p);
        fputs(",\"values\":", o); vpr_jstr(o, vd.values[0] ? vd.values : NULL);
        fputs(",\"why\":", o); vpr_jstr(o, vd.why);
        fputs(",\"written_by\":", o); vpr_jstr(o, vd.writers[0] ? vd.writers : NULL);
        fputs(",\"returned_by\":", o); vpr_jstr(o, vd.returned[0] ? vd.returned : NULL);
        fputs(",\"variable_also\":", o); vpr_jstr(o, vd.var_also[0] ? vd.var_also : NULL);
        fputs(",\"declared\":", o);
        if (vd.decl_line) {
            fputs("{\"file\":", o); vpr_jstr(o, vd.decl_file);
            fprintf(o, ",\"line\":%u}", vd.decl_line);
        } else fputs("null", o);
        fputs("},\"blamed_cost\":", o); vpr_jnum(o, f->blamed);
        fputs(",\"lock_cost\":", o); vpr_jnum(o, f->lock_cost);
        fputs(",\"added_cost\":", o); vpr_jnum(o, f->added);
        fprintf(o, ",\"whole_run\":%s", f->whole_run ? "true" : "false");
        fputs(",\"calls\":", o);
        if (f->arc.to >= 0) {
            fputs("{\"callee\":", o); vpr_jstr(o, m->f[f->arc.to].name);
            fprintf(o, ",\"normal_calls\":%.17g,\"normal_callee_calls\":%.17g,"
                    "\"buggy_calls\":%.17g,\"buggy_callee_calls\":%.17g,\"expected\":%.17g,"
                    "\"pvalue\":", f->arc.per[0], f->arc.count[0], f->arc.per[1],
                    f->arc.count[1], f->arc.expected);
            vpr_jnum(o, f->arc.p);
            fprintf(o, ",\"rare_caller\":%s,\"sibling_call\":%s,\"guarded_by\":",
                    f->arc.rare ? "true" : "false", f->arc.sibling ? "true" : "false");
            if (f->guard) vpr_jstr(o, vpr_dm(f->guard->callee));
            else fputs("null", o);
            fputs(",\"guarded_by_state\":", o);
            if (f->state) vpr_jstr(o, f->state->callee);
            else fputs("null", o);
            fputs(",\"guarded_by_states\":[", o);
            const struct vpf_schema_from *sts[16];
            size_t n_st = vpr_call_states(m, f, m->f[f->arc.to].name, sts, 16);
            for (size_t s = 0; s < n_st; s++) {
                if (s) fputc(',', o);
                vpr_jstr(o, sts[s]->callee);
            }
            fputs("]}", o);
        } else fputs("null", o);
        fputs(",\"guard_of\":", o);
        if (f->guard_of >= 0) vpr_jstr(o, vpr_dm(m->f[f->guard_of].name));
        else fputs("null", o);
        fprintf(o, ",\"guard_above\":%s", f->guard_of >= 0 && f->guard_above ? "true" : "false");
        fprintf(o, ",\"placed_above\":%s", f->placed_above ? "true" : "false");
        fputs(",\"producer_of\":", o);
        if (f->producer_of >= 0) vpr_jstr(o, vpr_dm(m->f[f->producer_of].name));
        else fputs("null", o);
        fputs(",\"state_of\":", o);
        if (f->state_of >= 0) vpr_jstr(o, vpr_dm(m->f[f->state_of].name));
        else fputs("null", o);
        fputs(",\"state\":", o);
        if (f->state_of >= 0 && f->state_via) vpr_jstr(o, f->state_via->callee);
        else fputs("null", o);
        fputs(",\"size_of\":", o);
        if (f->size_of >= 0) vpr_jstr(o, vpr_dm(m->f[f->size_of].name));
        else fputs("null", o);
        fputs(",\"size\":", o);
        if (f->size_of >= 0 && f->size_via) vpr_jstr(o, f->size_via);
        else fputs("null", o);
        fprintf(o, ",\"size_role\":%s", f->size_of < 0 ? "null" :
                f->size_role == VPR_SIZER ? "\"sizer\"" :
                f->size_role == VPR_SIZE_CHOICE ? "\"size-choice\"" :
                f->size_role == VPR_ADDER ? "\"adder\"" :
                f->size_role == VPR_LIMIT || f->size_role == VPR_LIMIT_LOW ? "\"limit\"" :
                f->size_role == VPR_ADD_GUARD ? "\"add-guard\"" :
                f->size_role == VPR_RANGE ? "\"range\"" :
                f->size_role == VPR_STOP ? "\"stop\"" :
                f->size_role == VPR_ALT_CHOICE ? "\"choice\"" : "\"filler\"");
        fputs(",\"link_of\":", o);
        if (f->link_of >= 0) vpr_jstr(o, vpr_dm(m->f[f->link_of].name));
        else fputs("null", o);
        fputs(",\"link_call\":", o);
        if (f->link_of >= 0) {
            char call[512];
            snprintf(call, sizeof call, "%s -> %s", vpr_dm(m->f[f->link_from].name),
                     vpr_dm(f->link_to));
            vpr_jstr(o, call);
        } else
            fputs("null", o);
        if (f->link_of >= 0) fprintf(o, ",\"link_per\":%d", f->link_per);
        fputs(",\"locations\":[", o);
        for (size_t k = 0; k < f->n_loc; k++) {
            const struct vpr_location *l = &f->loc[k];
            if (k) fputc(',', o);
            fputs("{\"file\":", o); vpr_jstr(o, l->file);
            fprintf(o, ",\"line\":%u,\"samples\":%llu,\"block\":", l->line,
                    (unsigned long long)l->n);
            if (l->block >= 0) fprintf(o, "%ld", l->block); else fputs("null", o);
            fputs(",\"block_kind\":", o); vpr_jstr(o, l->block_kind);
            fputs(",\"inlined\":", o); vpr_jstr(o, l->inlined ? vpr_dm(l->inlined) : NULL);
            fputc('}', o);
        }
        fputs("],\"variables\":[", o);
        for (size_t k = 0; k < f->n_vars; k++) {
            if (k) fputc(',', o);
            jvar(o, &m->v[f->vars[k]]);
        }
        fputs("],\"latency\":", o);
        vpr_lat_json_func(o, m, m->order[i]);
        vpr_mctx_json_func(o, m, m->order[i]);
        fputc('}', o);
    }
    fputs("\n],\"latency\":", o);
    vpr_lat_json_summary(o, m);
    vpr_mctx_json_summary(o, m);
    if (m->ctx_note[0]) { fputs(",\"contexts_note\":", o); vpr_jstr(o, m->ctx_note); }
    fputs("}\n", o);
}
