/* section_asm.c - schema text -> `.vprof_schema` section assembly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "section_asm.h"

static const char head[] = "\t.pushsection " VSG_SECTION_NAME ",\"\",@progbits\n";
static const char tail[] = "\t.popsection\n";

char *vsg_section_asm(const char *text, size_t len)
{
    /* Worst case: every byte becomes a 4-byte octal escape, plus one
     * `\t.ascii ""\n` (11 bytes) per input line. */
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    size_t cap = sizeof head + sizeof tail + len * 4 + lines * 12 + 1;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t o = 0;
    memcpy(out, head, sizeof head - 1);
    o += sizeof head - 1;
    size_t i = 0;
    while (i < len) {
        memcpy(out + o, "\t.ascii \"", 9);
        o += 9;
        for (; i < len; i++) {
            unsigned char c = (unsigned char)text[i];
            if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f) {
                /* Octal escapes are always three digits, so a digit that
                 * follows can never be read as part of the escape. */
                o += (size_t)snprintf(out + o, cap - o, "\\%03o", c);
            } else {
                out[o++] = (char)c;
            }
            if (c == '\n') {
                i++;
                break;
            }
        }
        memcpy(out + o, "\"\n", 2);
        o += 2;
    }
    memcpy(out + o, tail, sizeof tail);  /* includes the NUL */
    return out;
}
