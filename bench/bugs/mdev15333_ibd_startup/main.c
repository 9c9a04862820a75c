/* A database server starting up and then serving queries, modelled on
 * MariaDB MDEV-15333 ("MariaDB (still) slow start"): on a normal start-up
 * (no crash recovery, validation off) InnoDB read and checksummed the
 * first page of every .ibd file.
 *
 * Start-up walks SYS_TABLES and opens every table's tablespace with
 * fil_open_single_table_tablespace(validate = false). Reading the first
 * page (to validate FSP_SPACE_FLAGS) is needed only when validating, or
 * for tables whose file lives elsewhere (DATA DIRECTORY, .isl files).
 *
 * The bug (from the MDEV-11623 flags fix of 10.1.21): the function also
 * reads the first page whenever the flags derived from SYS_TABLES differ
 * from the current format's, which is every table created before the
 * upgrade. A datadir created with the current format (normal) starts
 * quickly; the same 6,000 tables created by 10.1.20 (buggy) make start-up
 * read and checksum 6,000 pages before the first query. gprof blames the
 * page checksum; the condition on the flags in the open function is the
 * root cause (the fix: read only when validate is set or the file is
 * remote). Built at -O0, with gcc and vprof-meta (no schema pass). */
#include "../common/corpus.h"

#define UNIV_PAGE_SIZE    16384
#define FSP_FLAGS_CURRENT 0x21u        /* flags the 10.2 format writes */
#define FSP_FLAGS_10_1_20 0x821u       /* the same tables written by 10.1.20 */

typedef struct {
    uint32_t id, flags, n_rows;
    int data_dir;                      /* DATA DIRECTORY / .isl */
    char name[48];
} sys_tables_rec_t;

typedef struct fil_space {
    uint32_t id, flags;
    char name[48];
    struct fil_space *hash_next;
    uint64_t n_pending;
} fil_space_t;

#define SPACE_HASH 4096
static fil_space_t *space_hash[SPACE_HASH];
static fil_space_t *spaces;
static uint32_t n_spaces;
static sys_tables_rec_t *sys_tables;
static uint32_t n_sys_tables;
static uint8_t disk_page[UNIV_PAGE_SIZE];   /* what os_file_read returns */
static uint64_t n_pages_read;

/* ------------------------------------------------------ page checksum */
static uint32_t ut_crc32_slice[256];

static void ut_crc32_init(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
        ut_crc32_slice[b] = c;
    }
}

static uint32_t ut_crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++)
        c = ut_crc32_slice[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return ~c;
}

static int buf_page_is_corrupted(const uint8_t *page)
{
    uint32_t stored = (uint32_t)page[0] << 24 | (uint32_t)page[1] << 16 | (uint32_t)page[2] << 8 | page[3];
    return ut_crc32(page + 4, UNIV_PAGE_SIZE - 8) != stored;
}

/* ----------------------------------------------------------- files */
/* The first page of every file: the FSP header (written when the table
 * was created, checksum included) and empty space. */
static uint8_t first_page_image[UNIV_PAGE_SIZE];

static void os_file_read(uint32_t space_id, uint8_t *buf)
{
    memcpy(buf, first_page_image, UNIV_PAGE_SIZE);
    (void)space_id;
    n_pages_read++;
}

static uint32_t fsp_header_get_flags(const uint8_t *page, uint32_t sys_flags)
{
    (void)page;
    return sys_flags & ~0x800u;        /* what the page really says */
}

static int fil_read_first_page(fil_space_t *space, uint32_t *flags)
{
    os_file_read(space->id, disk_page);
    if (buf_page_is_corrupted(disk_page))
        return -1;
    *flags = fsp_header_get_flags(disk_page, space->flags);
    return 0;
}

static void fsp_flags_try_adjust(fil_space_t *space, uint32_t flags)
{
    if (flags != space->flags)
        space->flags = flags;          /* rewrite FSP_SPACE_FLAGS */
}

static fil_space_t *fil_space_create(const char *name, uint32_t id, uint32_t flags)
{
    fil_space_t *s = &spaces[n_spaces++];
    s->id = id;
    s->flags = flags;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->hash_next = space_hash[id % SPACE_HASH];
    space_hash[id % SPACE_HASH] = s;
    return s;
}

/* Opens a table's .ibd at start-up; validate is false on a normal start. */
static int fil_open_single_table_tablespace(int validate, uint32_t id, uint32_t flags,
                                            int remote, const char *name)
{
    fil_space_t *space = fil_space_create(name, id, flags);
#ifdef VPROF_CASE_FIX
    if (validate || remote) {
#else
    if (validate || remote || flags != FSP_FLAGS_CURRENT) { /* FIX: read the first page only if validate or remote; adjust flags only then */
#endif
        uint32_t page_flags;
        if (fil_read_first_page(space, &page_flags) != 0)
            return -1;
        fsp_flags_try_adjust(space, page_flags);
    }
    return 0;
}

/* ----------------------------------------------------------- start-up */
static void dict_check_sys_tables(int validate)
{
    for (uint32_t i = 0; i < n_sys_tables; i++) {
        const sys_tables_rec_t *r = &sys_tables[i];
        if (fil_open_single_table_tablespace(validate, r->id, r->flags, r->data_dir, r->name) != 0)
            fprintf(stderr, "table %s: corrupted first page\n", r->name);
    }
}

static void dict_check_tablespaces_and_store_max_id(int validate)
{
    dict_check_sys_tables(validate);
}

static void srv_start(void)
{
    int recv_needed_recovery = 0;
    dict_check_tablespaces_and_store_max_id(recv_needed_recovery);
}

static void innobase_init(void) { srv_start(); }
static void ha_init(void) { innobase_init(); }
static void init_server_components(void) { ha_init(); }

/* ----------------------------------------------------------- queries */
static fil_space_t *fil_space_get(uint32_t id)
{
    for (fil_space_t *s = space_hash[id % SPACE_HASH]; s; s = s->hash_next)
        if (s->id == id)
            return s;
    return NULL;
}

static uint64_t row_search(fil_space_t *s, uint64_t key)
{
    uint64_t h = key ^ s->id;
    for (int i = 0; i < 64; i++)
        h = (h ^ (h >> 31)) * 0x7fb5d329728ea185ULL;
    s->n_pending++;
    return h & 0xffff;
}

static uint64_t handle_queries(long n, rng_t *r)
{
    uint64_t sum = 0;
    for (long q = 0; q < n; q++) {
        fil_space_t *s = fil_space_get(1 + (uint32_t)rng_below(r, n_sys_tables));
        if (s)
            sum += row_search(s, rng_next(r));
    }
    return sum;
}

static uint64_t mysqld_main(long queries, rng_t *r)
{
    init_server_components();
    return handle_queries(queries, r);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "tables",  "tables in the data dictionary",            6000, 1, 1000000, 0 },
        { "created-by", "server version that created them (1: 10.1.20, 2: 10.2)", 2, 1, 2, 0 },
        { "queries", "queries served after start-up",         1200000, 0, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    n_sys_tables = (uint32_t)opt_get(opts, NOPTS(opts), "tables");
    uint32_t flags = opt_get(opts, NOPTS(opts), "created-by") == 1 ? FSP_FLAGS_10_1_20
                                                                  : FSP_FLAGS_CURRENT;
    sys_tables = calloc(n_sys_tables, sizeof *sys_tables);
    spaces = calloc(n_sys_tables, sizeof *spaces);
    if (!sys_tables || !spaces) { perror("calloc"); return 1; }
    for (uint32_t i = 0; i < n_sys_tables; i++) {
        sys_tables[i].id = i + 1;
        sys_tables[i].flags = flags;
        sys_tables[i].data_dir = i % 60 == 0;   /* a few tables live elsewhere */
        snprintf(sys_tables[i].name, sizeof sys_tables[i].name, "shop/t%u", i);
    }
    ut_crc32_init();
    for (int i = 4; i < 64; i++)
        first_page_image[i] = (uint8_t)(i * 7);
    uint32_t c = ut_crc32(first_page_image + 4, UNIV_PAGE_SIZE - 8);
    first_page_image[0] = (uint8_t)(c >> 24); first_page_image[1] = (uint8_t)(c >> 16);
    first_page_image[2] = (uint8_t)(c >> 8);  first_page_image[3] = (uint8_t)c;
    rng_t r;
    rng_seed(&r, 15333);
    uint64_t sum = mysqld_main(opt_get(opts, NOPTS(opts), "queries"), &r);
    printf("%u tablespaces opened, %ld queries, result %llu\n", n_spaces,
           opt_get(opts, NOPTS(opts), "queries"), (unsigned long long)sum);
    fprintf(stderr, "first pages read at start-up %llu\n", (unsigned long long)n_pages_read);
    return 0;
}
