/* section_asm.h - turns schema text into module-level assembly that places it
 * in the non-allocated ELF section `.vprof_schema`. The linker concatenates
 * the sections of all objects, so the schema travels with each object and
 * nothing is written beside it (no races in parallel builds), and .text is
 * untouched. */
#ifndef VPROF_SECTION_ASM_H
#define VPROF_SECTION_ASM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VSG_SECTION_NAME ".vprof_schema"

/* Returns malloc'd assembly text: `.pushsection .vprof_schema,"",@progbits`,
 * one `.ascii` directive per text line (every byte outside printable ASCII,
 * and `"` and `\`, written as an octal escape), `.popsection`. NULL when out
 * of memory. */
char *vsg_section_asm(const char *text, size_t len);

#ifdef __cplusplus
}
#endif
#endif
