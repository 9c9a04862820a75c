/* source.h - the text of a source line, for showing the code the evidence
 * points at. Files are read on first use and kept; a file that cannot be
 * read (moved, another machine) simply has no text. */
#ifndef VPR_SOURCE_H
#define VPR_SOURCE_H

struct vpr_source;

struct vpr_source *vpr_source_new(void);
void vpr_source_free(struct vpr_source *s);
/* Line `line` (1-based) of `path` without its leading blanks, or NULL. The
 * pointer stays valid until vpr_source_free. */
const char *vpr_source_line(struct vpr_source *s, const char *path, unsigned line);
/* The same line as it is in the file (indentation kept). */
const char *vpr_source_raw(struct vpr_source *s, const char *path, unsigned line);

/* Do two paths name the same file? A path may be relative to the
 * compilation directory (the schema's), so the shorter one must be a suffix
 * of the longer at a '/' boundary. */
int vpr_same_path(const char *a, const char *b);

#endif
