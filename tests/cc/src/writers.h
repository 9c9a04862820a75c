/* Types and globals shared by writers.c and writers_ext.c (t_writers.sh). */
struct ht { unsigned nbuckets; unsigned count; void **b; struct { int hits; } in; };
typedef struct { long used; long cap; } arena_t;
struct stats { long ops; long misses; };
struct cfg { int mode; struct stats st; int level; };

extern long budget;
extern struct cfg config;
void tweak(int level);
