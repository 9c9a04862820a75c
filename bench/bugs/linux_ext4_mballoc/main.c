/* A simulated ext4 writing files on a nearly full file system, modelled on
 * the block allocator's linear group scan, replaced in Linux 5.13 by
 * "ext4: improve cr 0 / cr 1 group scanning" (Harshad Shirwadkar; the
 * mb_optimize_scan mount option): on a large, almost full file system each
 * allocation walked the block groups one by one from the goal group.
 *
 * A buffered write reaches the allocator through the VFS and ext4's
 * delayed-allocation path (vfs_write -> ... -> ext4_map_blocks ->
 * ext4_mb_new_blocks -> ext4_mb_regular_allocator). The allocator looks
 * for a group whose largest free extent fits the request
 * (ext4_mb_good_group), starting at the inode's goal group, then takes the
 * extent from the group's bitmap.
 *
 * The bug: ext4_mb_regular_allocator() tries the groups in order from the
 * goal. When free space is spread over every group (normal) the goal group
 * fits; when the first 90% of the groups are full (buggy: the file system
 * was filled in order) every allocation checks about a thousand full
 * groups first. gprof blames ext4_mb_good_group; the allocator's scan order
 * is the root cause (the fix keeps lists of groups by largest free order
 * and picks one directly). The hot leaf is 14 frames below main. */
#include "../common/corpus.h"

#define BLOCKS_PER_GROUP 1024
#define MAX_ORDER        11              /* 2^10 = a whole group */

typedef struct ext4_group_info {
    uint32_t bb_free;
    int bb_largest_free_order;           /* -1: no free block */
    uint64_t bitmap[BLOCKS_PER_GROUP / 64];
#ifdef VPROF_CASE_FIX
    struct ext4_group_info *order_next, *order_prev;
    long group;
#endif
} ext4_group_info;

typedef struct {
    ext4_group_info *groups;
    long ngroups;
    uint64_t free_blocks;
#ifdef VPROF_CASE_FIX
    ext4_group_info *largest_free_orders[MAX_ORDER];   /* the fix's lists */
#endif
} ext4_sb_info;

typedef struct {
    long goal_group, found_group;
    int len, order, found_start;
} ext4_allocation_context;

typedef struct { long ino, goal_group; uint64_t size, csum; } inode_t;

static ext4_sb_info sbi;
static uint64_t n_groups_checked;

/* ----------------------------------------------------------- bitmaps */
static int mb_test_bit(const ext4_group_info *g, int bit)
{
    return (g->bitmap[bit / 64] >> (bit % 64)) & 1;
}

static void mb_set_bits(ext4_group_info *g, int start, int len)
{
    for (int b = start; b < start + len; b++)
        g->bitmap[b / 64] |= 1ULL << (b % 64);
}

/* Largest power-of-two free run in the group (the buddy's summary). */
static int mb_largest_free_order(const ext4_group_info *g)
{
    int best = 0, run = 0;
    for (int w = 0; w < BLOCKS_PER_GROUP / 64; w++) {
        uint64_t word = g->bitmap[w];
        if (word == ~0ULL) { run = 0; continue; }
        if (word == 0) { run += 64; if (run > best) best = run; continue; }
        for (int k = 0; k < 64; k++) {
            run = (word >> k) & 1 ? 0 : run + 1;
            if (run > best) best = run;
        }
    }
    int order = -1;
    while (order + 1 < MAX_ORDER && (1 << (order + 1)) <= best) order++;
    return order;
}

#ifdef VPROF_CASE_FIX
static void mb_order_list_del(ext4_group_info *g)
{
    if (g->bb_largest_free_order < 0) return;
    if (g->order_prev) g->order_prev->order_next = g->order_next;
    else sbi.largest_free_orders[g->bb_largest_free_order] = g->order_next;
    if (g->order_next) g->order_next->order_prev = g->order_prev;
    g->order_next = g->order_prev = NULL;
}

static void mb_order_list_add(ext4_group_info *g)
{
    if (g->bb_largest_free_order < 0) return;
    g->order_prev = NULL;
    g->order_next = sbi.largest_free_orders[g->bb_largest_free_order];
    if (g->order_next) g->order_next->order_prev = g;
    sbi.largest_free_orders[g->bb_largest_free_order] = g;
}
#endif

static void mb_set_largest_free_order(ext4_group_info *g)
{
#ifdef VPROF_CASE_FIX
    mb_order_list_del(g);
#endif
    g->bb_largest_free_order = mb_largest_free_order(g);
#ifdef VPROF_CASE_FIX
    mb_order_list_add(g);
#endif
}

/* ---------------------------------------------------------- mballoc */
static int ext4_mb_good_group(const ext4_allocation_context *ac, long group, int cr)
{
    const ext4_group_info *g = &sbi.groups[group];
    n_groups_checked++;
    if (g->bb_free < (uint32_t)ac->len)
        return 0;
    if (cr == 0)
        return g->bb_largest_free_order >= ac->order;
    return 1;
}

/* Takes LEN free blocks from the group's bitmap (first fit). */
static int ext4_mb_complex_scan_group(ext4_allocation_context *ac, long group)
{
    ext4_group_info *g = &sbi.groups[group];
    int run = 0;
    for (int b = 0; b < BLOCKS_PER_GROUP; b++) {
        run = (g->bitmap[b / 64] >> (b % 64)) & 1 ? 0 : run + 1;
        if (run == ac->len) {
            int start = b - ac->len + 1;
            mb_set_bits(g, start, ac->len);
            g->bb_free -= (uint32_t)ac->len;
            mb_set_largest_free_order(g);
            ac->found_group = group;
            ac->found_start = start;
            return 1;
        }
    }
    return 0;
}

static int ext4_mb_regular_allocator(ext4_allocation_context *ac)
{
    for (int cr = 0; cr < 2; cr++) {
#ifdef VPROF_CASE_FIX
        if (cr == 0) {
            for (int o = ac->order; o < MAX_ORDER; o++)
                for (ext4_group_info *g = sbi.largest_free_orders[o]; g; g = g->order_next)
                    if (ext4_mb_good_group(ac, g->group, cr) && ext4_mb_complex_scan_group(ac, g->group))
                        return 0;
            continue;
        }
#endif
        for (long i = 0; i < sbi.ngroups; i++) { /* FIX: pick from the lists of groups by largest free order (mb_optimize_scan) instead of walking from the goal */
            long group = (ac->goal_group + i) % sbi.ngroups;
            if (ext4_mb_good_group(ac, group, cr) && ext4_mb_complex_scan_group(ac, group))
                return 0;
        }
    }
    return -1;                          /* ENOSPC */
}

static long ext4_mb_new_blocks(inode_t *inode, int len)
{
    ext4_allocation_context ac = { inode->goal_group, -1, len, 0, -1 };
    while ((1 << (ac.order + 1)) <= len) ac.order++;
    if (ext4_mb_regular_allocator(&ac) != 0)
        return -1;
    sbi.free_blocks -= (uint64_t)len;
    return ac.found_group * BLOCKS_PER_GROUP + ac.found_start;
}

/* ------------------------------------------------- the write path */
static long ext4_ext_map_blocks(inode_t *inode, int len) { return ext4_mb_new_blocks(inode, len); }
static long ext4_map_blocks(inode_t *inode, int len) { return ext4_ext_map_blocks(inode, len); }

static int ext4_da_write_begin(inode_t *inode, int len)
{
    return ext4_map_blocks(inode, len) < 0 ? -28 : 0;
}

/* Copies the user's data into the page cache (the inherent work). */
static void copy_page_from_iter(inode_t *inode, const uint8_t *buf, int len)
{
    uint64_t c = inode->csum;
    for (int i = 0; i < len; i++)
        c = (c ^ buf[i]) * 0x100000001b3ULL;
    inode->csum = c;
}

static long generic_perform_write(inode_t *inode, const uint8_t *buf, int nblocks)
{
    if (ext4_da_write_begin(inode, nblocks) != 0)
        return -28;
    copy_page_from_iter(inode, buf, nblocks * 512);
    inode->size += (uint64_t)nblocks * 4096;
    return nblocks;
}

static long ext4_buffered_write_iter(inode_t *i, const uint8_t *b, int n) { return generic_perform_write(i, b, n); }
static long ext4_file_write_iter(inode_t *i, const uint8_t *b, int n) { return ext4_buffered_write_iter(i, b, n); }
static long vfs_write(inode_t *i, const uint8_t *b, int n) { return ext4_file_write_iter(i, b, n); }
static long ksys_write(inode_t *i, const uint8_t *b, int n) { return vfs_write(i, b, n); }
static long sys_write(inode_t *i, const uint8_t *b, int n) { return ksys_write(i, b, n); }

/* ------------------------------------------------------------- mkfs */
static void mkfs_and_fill(long ngroups, int full_pct, int layout_in_order, rng_t *r)
{
    sbi.ngroups = ngroups;
    sbi.groups = calloc((size_t)ngroups, sizeof *sbi.groups);
    if (!sbi.groups) { perror("calloc"); exit(1); }
    long full_groups = ngroups * full_pct / 100;
    for (long gi = 0; gi < ngroups; gi++) {
        ext4_group_info *g = &sbi.groups[gi];
#ifdef VPROF_CASE_FIX
        g->group = gi;
        g->bb_largest_free_order = -1;
#endif
        int used;
        if (layout_in_order)           /* filled from the start */
            used = gi < full_groups ? BLOCKS_PER_GROUP : 0;
        else                           /* the same usage spread over all groups */
            used = BLOCKS_PER_GROUP * full_pct / 100;
        for (int b = 0; b < used; b += 16) {
            int start = layout_in_order ? b : (int)((uint64_t)b * 4099 % BLOCKS_PER_GROUP) / 16 * 16;
            mb_set_bits(g, start, 16);
        }
        g->bb_free = 0;
        for (int b = 0; b < BLOCKS_PER_GROUP; b++)
            g->bb_free += !mb_test_bit(g, b);
        sbi.free_blocks += g->bb_free;
        mb_set_largest_free_order(g);
    }
    (void)r;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "groups",   "block groups",                            2048, 1, 1000000, 0 },
        { "used-pct", "percent of the blocks in use",              90, 0, 99, 0 },
        { "in-order", "1: the used blocks fill the first groups", 0, 0, 1, 0 },
        { "files",    "files written",                           4000, 1, 100000000, 0 },
        { "writes",   "8-block writes per file",                    5, 1, 1000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    rng_t r;
    rng_seed(&r, 513);
    mkfs_and_fill(opt_get(opts, NOPTS(opts), "groups"), (int)opt_get(opts, NOPTS(opts), "used-pct"),
                  (int)opt_get(opts, NOPTS(opts), "in-order"), &r);
    uint8_t buf[4096];
    for (int i = 0; i < (int)sizeof buf; i++)
        buf[i] = (uint8_t)(i * 7);
    long files = opt_get(opts, NOPTS(opts), "files"), written = 0, enospc = 0;
    uint64_t csum = 0;
    for (long f = 0; f < files; f++) {
        inode_t ino = { 12 + f, (long)rng_below(&r, (uint64_t)sbi.ngroups), 0, 0 };
        for (long w = 0; w < opt_get(opts, NOPTS(opts), "writes"); w++) {
            long n = sys_write(&ino, buf, 8);
            if (n < 0) enospc++; else written += n;
        }
        csum += ino.csum ^ (uint64_t)f;
    }
    printf("%ld files: %ld blocks written, %ld ENOSPC, data %016llx\n", files, written, enospc,
           (unsigned long long)csum);
    fprintf(stderr, "groups checked %llu, free blocks left %llu\n",
            (unsigned long long)n_groups_checked, (unsigned long long)sbi.free_blocks);
    return 0;
}
