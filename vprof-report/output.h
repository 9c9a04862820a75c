/* output.h - the three renderings of a ranked model. */
#ifndef VPR_OUTPUT_H
#define VPR_OUTPUT_H
#include <stdio.h>
#include "model.h"

void vpr_out_text(FILE *out, const struct vpr_model *m);
void vpr_out_json(FILE *out, const struct vpr_model *m);
int vpr_out_html(const char *path, const struct vpr_model *m, char *err,
                 size_t errlen);

/* helpers shared by the renderers */
size_t vpr_n_shown(const struct vpr_model *m);      /* min(--top, ranked) */
const char *vpr_disc_name(int d);                   /* "variable", "hist", "none" */
const char *vpr_state_name(int st);
void vpr_tags_str(uint16_t tags, char *buf, size_t len);
void vpr_jstr(FILE *o, const char *s);              /* JSON string or null */
void vpr_jnum(FILE *o, double x);                   /* JSON number or null */
void vpr_html_esc(FILE *o, const char *s);          /* HTML text (NULL: nothing) */

/* latency (out_latency.c, out_timeline.c, out_trace.c); no-ops without
 * latency events */
void vpr_lat_text(FILE *out, const struct vpr_model *m);
void vpr_lat_json_func(FILE *o, const struct vpr_model *m, size_t f);
void vpr_lat_json_summary(FILE *o, const struct vpr_model *m);
void vpr_lat_html_func(FILE *o, const struct vpr_model *m, size_t f);
void vpr_lat_html_waits(FILE *o, const struct vpr_model *m);
/* --timeline REQ: returns 0, or 1 when no run has that request */
int vpr_out_timeline(FILE *out, const struct vpr_model *m, uint64_t req);
int vpr_out_trace(const char *path, const struct vpr_model *m, char *err,
                  size_t errlen);

#endif
