#!/bin/bash
# Writes the SQL of one workload of bench/apps/sqlite3 to stdout.
# Deterministic (no random()). A first line "-- database: NAME" asks app.sh
# to open the file NAME (in the run directory) instead of :memory:.
#
#   index-a    30,000 rows in memory, 12 GROUP BY reports and 400 point
#              queries WHERE a = ?, served by an index on (a)
#   index-ab   the same, served by an index on (a, b) instead (a correct
#              SQLite uses it for "a = ?" exactly as the one on (a))
#   scan-pages 20,000 rows (about 2 MB) in a database file, 10 scans and 30
#              self-joins (600,000 lookups by rowid at scattered pages), with
#              PRAGMA cache_size = 1000 (pages)
#   scan-kib   the same with the default cache size (-2000: 2,000 KiB)
#   seek-small 300 rows in memory, 2,000 self-joins (600,000 lookups by rowid)
#   seek-large 60,000 rows in memory, 10 self-joins (600,000 lookups by rowid)
set -eu
which=${1:?usage: gen.sh index-a|index-ab|scan-pages|scan-kib|seek-small|seek-large}
case $which in
index-a|index-ab)
    if [ "$which" = index-a ]; then index="CREATE INDEX t_a ON t(a);"
    else index="CREATE INDEX t_ab ON t(a, b);"; fi
    cat <<SQL
PRAGMA cache_size = 4000;
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000)
INSERT INTO t(a, b, c) SELECT (i * 7919) % 3001, (i * 104729) % 997, printf('row-%08d', i) FROM n;
$index
SQL
    awk 'BEGIN { for (q = 0; q < 12; q++)
        printf "SELECT b %% %d AS g, count(*), max(c) FROM t GROUP BY g ORDER BY 2 DESC LIMIT 3;\n", 50 + q }'
    awk 'BEGIN { for (q = 0; q < 400; q++)
        printf "SELECT count(*), sum(b), max(c) FROM t WHERE a = %d;\n", (q * 2654435761) % 3001 }' ;;
scan-pages|scan-kib)
    echo "-- database: test.db"
    [ "$which" = scan-pages ] && echo "PRAGMA cache_size = 1000;"
    cat <<SQL
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c TEXT);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO t(a, b, c) SELECT (i * 7919) % 3001, (i * 104729) % 997,
    printf('row-%08d-%s', i, substr('abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz', 1 + i % 17, 60)) FROM n;
COMMIT;
SQL
    awk 'BEGIN { for (q = 0; q < 10; q++)
        printf "SELECT count(*), sum(a), max(c) FROM t WHERE b %% %d = 1;\n", 3 + q }'
    # self-joins: one rowid lookup at a scattered page per row of the table
    awk 'BEGIN { for (q = 0; q < 30; q++)
        printf "SELECT count(*), sum(u.a), max(u.c) FROM t JOIN t AS u ON u.id = (t.id * %d) %% 20000 + 1;\n", 7919 + 2 * q }' ;;
seek-small|seek-large)
    if [ "$which" = seek-small ]; then rows=300 joins=2000; else rows=60000 joins=10; fi
    cat <<SQL
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
INSERT INTO t(a, b, c) SELECT (i * 7919) % 3001, (i * 104729) % 997, printf('row-%08d', i) FROM n;
SQL
    awk -v rows=$rows -v joins=$joins 'BEGIN { for (q = 0; q < joins; q++)
        printf "SELECT count(*), sum(u.a), max(u.c) FROM t JOIN t AS u ON u.id = (t.id * %d) %% %d + 1;\n", 7919 + 2 * q, rows }' ;;
*)
    echo "gen.sh: unknown workload '$which'" >&2; exit 2 ;;
esac
