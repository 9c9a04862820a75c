/* Fixture: the MariaDB code of the vProf paper's Figure 1 (MDEV-21826),
 * reduced. The paper's Figure 3 schema lists recv_n_pool_free_frames with
 * tags none and available_mem with cond|args. */
unsigned long recv_n_pool_free_frames;
unsigned long srv_page_size = 16384;
unsigned long srv_buf_pool_ins = 1;
unsigned long buf_pool_get_n_pages(void);
void recv_apply_hashed_log_recs(int last_batch);
void read_log_seg(unsigned long *end_lsn, unsigned long start_lsn);
int recv_scan_log_recs(unsigned long available_mem, unsigned long start_lsn);

int recv_group_scan_log_recs(unsigned long ckpt_lsn)
{
    unsigned long available_mem = srv_page_size *
        (buf_pool_get_n_pages() - recv_n_pool_free_frames * srv_buf_pool_ins);
    unsigned long start_lsn = ckpt_lsn, end_lsn = ckpt_lsn;
    do {
        recv_apply_hashed_log_recs(0);
        start_lsn = end_lsn;
        read_log_seg(&end_lsn, start_lsn + 65536);
    } while (end_lsn != start_lsn && !recv_scan_log_recs(available_mem, start_lsn));
    return 1;
}
