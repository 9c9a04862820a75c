# bench/overhead/common.sh - sourced by the overhead scripts (run.sh,
# handler_time.sh, stacks.sh): where they work, and the generated program
# with its metadata that run.sh and handler_time.sh measure.

# overhead_workdir NAME: a fresh directory, removed at exit, made current
overhead_workdir() {
    W=$(mktemp -d "${TMPDIR:-/tmp}/vprof-$1.XXXXXX")
    trap 'rm -rf "$W"' EXIT
    cd "$W" || exit 1
}

# overhead_prog META: gen_prog.sh's program as prog.c, built with -pg as pg,
# and its metadata from META (vprof-meta) as vars.vmeta - not pg.vmeta,
# which every run would find beside the program
overhead_prog() {
    bash "$ROOT/bench/overhead/gen_prog.sh" > prog.c
    gcc -O2 -g -pg prog.c -o pg
    "$1" --all --files '*prog.c' --quiet -o vars.vmeta pg
}
