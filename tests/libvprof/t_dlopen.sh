#!/bin/bash
# A tick never calls into the dynamic loader to unwind (issue 14): a frame
# in code dlopen'ed after start-up, whose unwind info libunwind would look
# up with dl_iterate_phdr (the loader's lock), ends the walk and the stack
# is flagged truncated. prog_dlopen.c "held" makes the hang certain: a
# helper thread holds the loader's lock (inside a dl_iterate_phdr callback)
# while it waits for a mutex the main thread holds as it runs the plugin's
# loop; before the fix the first tick in the plugin waited for the lock
# forever (every run hung). "churn" keeps a thread in dlopen, dlclose and
# dl_iterate_phdr while the main thread runs the plugin: no tick calls
# dl_iterate_phdr (noloader.c counts libunwind's calls: 3 or 4 a run before
# the fix), and the churner's ticks in the loader's code still unwind to
# the program.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
gcc -O2 -g -DPLUGIN -fPIC -shared -o plugin.so "$SRC/prog_dlopen.c" 2> plugin.cc.log
build pdl prog_dlopen.c gcc -O2 -ldl
check "builds" test -x pdl -a -f plugin.so
size=$(symaddr plugin.so plugin_spin | cut -d' ' -f2)
rel=0; file pdl | grep -q 'pie executable' && rel=1
g=$(symaddr pdl stop | cut -d' ' -f1)
printf 'flags %s\nvar stop #global sint 4\nentry stop 0 0x7fffffffffff addr 0 4 0 %s\n' "$rel" "$g" > m.txt
"$MKMETA" m.txt m.vmeta

# run NAME MODE ENV...: the program under libvprof at 1 kHz, 300 ms of
# CPU in the plugin, killed after 60 s
run() {
    local n=$1 mode=$2; shift 2
    env "$@" VPROF_STATS=1 VPROF_HZ=1000 VPROF_STACKS_MAX=100000 VPROF_OUT=out_$n \
        LD_PRELOAD=$LIBVPROF timeout -s KILL 60 ./pdl "$PWD/plugin.so" 300 "$mode" \
        > "run_$n.txt" 2> "err_$n.txt"
}

# plugin_ticks N: "all truncated" stacks recorded with the PC in the
# plugin's loop, and how many are not flagged truncated
plugin_ticks() {
    local lo
    lo=$(awk '/^plugin_spin/{print $2}' "run_$1.txt")
    "$VPCHECK" stacks out_$1/stacks.* | awk -v lo=$((lo)) -v sz=$((size)) '
        !/^#/ && strtonum($6) >= lo && strtonum($6) < lo + sz { n++; if (!and($4, 1)) bad++ }
        END { print n + 0, bad + 0 }'
}

for u in cfi libunwind check; do
    for m in nometa meta; do
        n=${u}_$m
        metaenv=VPROF_META=
        [ $m = meta ] && metaenv=VPROF_META=$PWD/m.vmeta
        run "$n" held VPROF_UNWINDER=$u "$metaenv"
        st=$?
        check "$u, $m: a tick in dlopen'ed code while another thread holds the loader's lock does not hang (status $st)" \
            test $st = 0 -a -n "$(grep '^done' "run_$n.txt")"
        [ $st = 0 ] || { cat "err_$n.txt"; continue; }
        stopped=$(sed -n 's/.*; \([0-9]*\) walks stopped at code loaded after start-up.*/\1/p' "err_$n.txt")
        check "$u, $m: the walks stopped at the plugin (${stopped:-none})" test "${stopped:-0}" -ge 100
        read -r ticks bad < <(plugin_ticks "$n")
        check "$u, $m: the plugin's ticks are recorded truncated ($ticks ticks, $bad not truncated)" \
            test "$ticks" -ge 100 -a "$bad" = 0
        [ $u = check ] && check "$u, $m: the unwinders agree" grep -q 'unwind check:.* 0 differ' "err_$n.txt"
    done
done

# Without a hang to show it: noloader.so counts libunwind's calls to
# dl_iterate_phdr (before the fix 3 or 4 a run: libunwind caches what it
# found)
gcc -O2 -fPIC -shared -o noloader.so "$SRC/noloader.c" 2> noloader.cc.log
for u in cfi libunwind; do
    VPROF_UNWINDER=$u VPROF_HZ=1000 VPROF_STACKS_MAX=100000 VPROF_OUT=out_nl_$u \
        LD_PRELOAD="$LIBVPROF $PWD/noloader.so" timeout -s KILL 60 ./pdl "$PWD/plugin.so" 300 churn \
        > "run_nl_$u.txt" 2> "err_nl_$u.txt"
    read -r ticks bad < <(plugin_ticks "nl_$u")
    check "$u: ticks in the plugin ($ticks) while a thread loops in the loader: none calls into it ($(grep noloader: "err_nl_$u.txt"))" \
        test "$ticks" -ge 100 -a -n "$(grep 'noloader: 0 calls from libunwind$' "err_nl_$u.txt")"
done

run churn churn VPROF_META=$PWD/m.vmeta
st=$?
check "dlopen/dlclose/dl_iterate_phdr in a loop under ticks: finished (status $st)" \
    test $st = 0 -a -n "$(grep '^done' run_churn.txt)"
# the churner's ticks (not the main thread's) land in the loader and in
# libc: the table steps them up to churner() in the program, whence the
# frame pointers lead to the thread's bottom
pid=$(basename out_churn/stacks.* | cut -d. -f2)
read -r mine trunc < <("$VPCHECK" stacks out_churn/stacks.* | awk -v p="$pid" '
    !/^#/ && $2 != p { n++; if (and($4, 1)) t++ } END { print n + 0, t + 0 }')
check "the churner's ticks in the loader unwind to the program ($mine ticks, $trunc truncated)" \
    test "$mine" -ge 20 -a "$trunc" -le $((mine / 20))
finish
