#!/bin/bash
# Analysis-speed benchmark of vprof-report: generated value-sample files of
# 100 MB and 1 GB (vprof-gen-runs "bench" scenario: 64 variables, 4
# threads), analysed normal vs buggy; wall time compared with
# `cat FILE > /dev/null` of the same data (both warm: each file is read once
# before timing), peak memory from getrusage.
#
# usage: bench/analysis/run.sh [--sizes "100 1024"] [--dir WORKDIR] [--keep]
#   --sizes  sizes in MiB of the buggy values file (default "100 1024"); the
#            normal side is 100 MiB each time
#   --dir    where the run directories go (default: a temporary directory;
#            needs about twice the largest size free)
#   --keep   do not delete the generated files
# Prints one line per size:
#   size_mib=N samples=N analysis_s=X cpu_s=U cat_s=Y ratio=X/Y max_rss_mib=M
# (analysis_s is wall time: on a loaded machine compare cpu_s too)
# and exits non-zero if vprof-report fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
sizes="100 1024" dir="" keep=0
while [ $# -gt 0 ]; do
    case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--sizes \"100 1024\"] [--dir DIR] [--keep]" >&2; exit 2 ;;
    esac
done
make -s build/bin/vprof-report build/bin/vprof-gen-runs >/dev/null
R=$PWD/build/bin/vprof-report GEN=$PWD/build/bin/vprof-gen-runs
if [ -z "$dir" ]; then dir=$(mktemp -d "${TMPDIR:-/tmp}/vprof-bench-analysis.XXXXXX"); fi
mkdir -p "$dir"
[ "$keep" = 1 ] || trap 'rm -rf "$dir"' EXIT

cat > "$dir/target.c" <<'C'
volatile long sink;
void hot(int n) { for (int k = 0; k < n; k++) sink += k; }
void caller(int m) { for (int i = 0; i < m; i++) hot(50); }
int main(void) { caller(10); return 0; }
C
gcc -g -O0 -o "$dir/target" "$dir/target.c"
addr() { echo "0x$(nm "$dir/target" | awk -v f="$1" '$3==f {print $1}')"; }
fn="--func hot=$(addr hot) --func caller=$(addr caller)"

# wall seconds of a command, its output discarded
secs() { local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { print e - s }'; }

# shellcheck disable=SC2086
"$GEN" bench normal "$dir/normal" "$dir/target" $fn --bytes $((100 << 20)) --seed 1
for mib in $sizes; do
    rm -rf "$dir/buggy"
    # shellcheck disable=SC2086
    "$GEN" bench buggy "$dir/buggy" "$dir/target" $fn --bytes $((mib << 20)) --seed 2
    f=$dir/buggy/values.1000
    cat "$f" "$dir/normal/values.1000" > /dev/null        # warm the page cache
    t_cat=$(secs cat "$f" "$dir/normal/values.1000")
    t_cat=$(secs cat "$f" "$dir/normal/values.1000")
    "$R" --no-progress --json "$dir/normal" "$dir/buggy" > "$dir/out.json"  # warm-up
    # wall, user, system seconds and peak RSS (KiB) of the child, by python3
    # (in install-deps.sh) rather than GNU time (not installed everywhere)
    read -r t_an t_user t_sys rss < <(/usr/bin/python3 - "$R" "$dir" <<'PY'
import resource, subprocess, sys, time
r, d = sys.argv[1], sys.argv[2]
t = time.monotonic()
subprocess.run([r, "--no-progress", "--json", f"{d}/normal", f"{d}/buggy"],
               stdout=subprocess.DEVNULL, check=True)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(time.monotonic() - t, u.ru_utime, u.ru_stime, u.ru_maxrss)
PY
)
    samples=$(/usr/bin/python3 -c "import json; d = json.load(open('$dir/out.json')); print(d['normal']['value_samples'] + d['buggy']['value_samples'])")
    awk -v m="$mib" -v n="$samples" -v a="$t_an" -v c="$t_cat" -v r="$rss" \
        -v cpu="$(awk -v u="$t_user" -v s="$t_sys" 'BEGIN { print u + s }')" 'BEGIN {
        printf "size_mib=%s samples=%s analysis_s=%.2f cpu_s=%.2f cat_s=%.3f ratio=%.1f max_rss_mib=%.0f\n",
               m, n, a, cpu, c, a / c, r / 1024 }'
done
