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

#endif
