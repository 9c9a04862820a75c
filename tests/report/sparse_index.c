/* An index filled only when a predicate says so (t_adders.sh): a log
 * appends records and gives one an index entry when index_due() says
 * enough bytes were written since the last entry; a seek binary-searches
 * the index and decodes records from the entry up to its target. With a
 * larger interval (the buggy run's argument) the index is sparse and every
 * seek decodes far more records: the cost is in seek() and decode(), the
 * decision in index_due(), which append() asks before each add.
 *
 * Usage: sparse_index INTERVAL_BYTES */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define RECORDS 200000

struct entry { unsigned rec, pos; };
struct log {
    unsigned char *data;
    unsigned size, nrec, last_indexed;
    struct entry *index;
    unsigned nindex;
    unsigned interval;
};

NOINLINE int index_due(const struct log *l)
{
    return l->nindex == 0 || l->size - l->last_indexed >= l->interval;
}

NOINLINE void append(struct log *l, unsigned len)
{
    if (index_due(l)) {
        l->index[l->nindex++] = (struct entry){l->nrec, l->size};
        l->last_indexed = l->size;
    }
    l->data[l->size] = (unsigned char)len;
    l->size += len;
    l->nrec++;
}

/* The length of the record at pos (its first byte). */
NOINLINE unsigned decode(const struct log *l, unsigned pos)
{
    return l->data[pos];
}

NOINLINE unsigned index_find(const struct log *l, unsigned rec)
{
    unsigned lo = 0, hi = l->nindex;
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (l->index[mid].rec <= rec) lo = mid; else hi = mid;
    }
    return lo;
}

NOINLINE unsigned seek(const struct log *l, unsigned rec)
{
    const struct entry *e = &l->index[index_find(l, rec)];
    unsigned pos = e->pos;
    for (unsigned r = e->rec; r < rec; r++)
        pos += decode(l, pos);
    return pos;
}

int main(int argc, char **argv)
{
    struct log l = {0};
    l.interval = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 4096;
    l.data = malloc(RECORDS * 64);
    l.index = malloc(RECORDS * sizeof *l.index);
    if (!l.data || !l.index) return 1;
    for (unsigned i = 0; i < RECORDS; i++) append(&l, 16 + i % 40);
    unsigned long sum = 0, x = 12345;
    for (unsigned q = 0; q < 200000; q++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        sum += seek(&l, (unsigned)(x >> 33) % RECORDS);
    }
    printf("%lu\n", sum & 0xffff);
    free(l.data), free(l.index);
    return 0;
}
