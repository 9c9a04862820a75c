/* Writes to globals defined in writers.c: `config` is extern here and no
 * variable of this unit has its type, so the unit has no debug type for
 * it and its members are written as `config+N` (t_writers.sh). */
#include "writers.h"

void tweak(int level)
{
    config.level = level;                            /* w:ext.level */
    budget += level;                                 /* w:ext.budget */
}
