/* demangle.h - the names people read: C++ linkage names demangled by
 * libiberty (what gprof, nm -C and addr2line -C use), and short forms of
 * them for narrow table columns. Symbols stay linkage names inside the
 * model; only the printing goes through here. */
#ifndef VPR_DEMANGLE_H
#define VPR_DEMANGLE_H
#include <stddef.h>

/* On by default; --no-demangle turns it off (every name as linked). */
void vpr_demangle_enable(int on);

/* The readable form of a symbol name: demangled C++ (or Rust) as
 * `gprof` prints it (parameters and qualifiers included, `@VERSION`
 * suffixes kept), else the name itself. The result lives until exit (cached
 * per name); NULL gives NULL. */
const char *vpr_dm(const char *sym);

/* The same, whatever --no-demangle says: for the analysis that reads a
 * name's structure (a constructor's "Class::Class"), not for printing. */
const char *vpr_dm_always(const char *sym);

/* The readable form of sym in at most cols columns (UTF-8 characters), into
 * dst (len bytes). A name that does not fit is shortened: for a demangled
 * name, template arguments become `<…>`, parameters `(...)` (`()` when
 * none), the return type and trailing qualifiers go
 * (`Router::match(...)`); if that is still too wide, the parameters go,
 * then leading scopes become `…::` (`…::_M_rehash`); what still does not
 * fit is cut and ends in `~`. With pad, spaces fill up to cols. Returns the
 * columns written. */
int vpr_dm_fit(char *dst, size_t len, const char *sym, int cols, int pad);

/* Columns of a UTF-8 string (code points). */
int vpr_cols(const char *s);

#endif
