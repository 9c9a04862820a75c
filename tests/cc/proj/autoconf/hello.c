/* Fixture: its build needs the answers of configure's checks (via DEFS). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    (void)argv;
#if defined(HAVE_STRDUP) && defined(HAVE_LIBM) && SIZEOF_LONG == 8
    char *s = strdup("ok");
    int bad = s == NULL || cos(0.0) != 1.0 || argc < 1;
    free(s);
    return bad;
#else
    return 2;   /* a configure check gave the wrong answer */
#endif
}
