#!/bin/bash
# Writes the SQL of one workload to stdout: WHICH is normal or buggy.
# Both load the same 30,000 rows (deterministic: no random()), run the same
# 12 reporting queries (GROUP BY over the whole table) and the same 400
# point queries on column a; they differ only in the index that
# serves those queries: a one-column index on (a) (normal) or a two-column
# index on (a, b) (buggy). Both indexes make every query an index lookup in
# a correct SQLite.
set -eu
which=${1:?usage: gen_workload.sh normal|buggy}
case $which in
    normal) index="CREATE INDEX t_a ON t(a);" ;;
    buggy)  index="CREATE INDEX t_ab ON t(a, b);" ;;
    *) echo "gen_workload.sh: unknown workload '$which' (normal or buggy)" >&2; exit 2 ;;
esac
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
    printf "SELECT count(*), sum(b), max(c) FROM t WHERE a = %d;\n", (q * 2654435761) % 3001 }'
