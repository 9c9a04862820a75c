# bench/apps/lib/debsrc.sh - the one place that fetches a Debian source
# package for the benchmarks (bench/apps, bench/realworld, bench/meta).
# Source it, then:
#
#   dir=$(debsrc_fetch PACKAGE WORKDIR)
#
# unpacks `apt-get source PACKAGE` (Debian bookworm; PACKAGE may be a binary
# package, apt picks its source) into WORKDIR once and prints the absolute
# path of the unpacked tree (e.g. WORKDIR/redis-7.0.15); later calls reuse it
# without asking apt (WORKDIR/.debsrc-PACKAGE records the path). When apt has
# no deb-src entry it adds one (/etc/apt/sources.list.d/vprof-deb-src.sources)
# and runs apt-get update: that needs root, once per machine. Messages go to
# stderr; on failure it prints apt's output and returns 1.

debsrc_fetch() {        # debsrc_fetch PACKAGE WORKDIR
    local pkg=$1 work=$2 dsc src ver dir
    mkdir -p "$work" || return 1
    work=$(cd "$work" && pwd)
    if [ -f "$work/.debsrc-$pkg" ]; then
        dir=$(cat "$work/.debsrc-$pkg")
        [ -f "$dir/debian/control" ] && { echo "$dir"; return 0; }
    fi
    if ! apt-get source --print-uris "$pkg" >/dev/null 2>&1; then
        echo "debsrc: adding a deb-src entry for Debian bookworm" >&2
        cat > /etc/apt/sources.list.d/vprof-deb-src.sources <<'SRC' || return 1
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        apt-get update -qq >&2 || return 1
    fi
    # the .dsc's name says where dpkg-source unpacks: SOURCE_VERSION.dsc ->
    # SOURCE-UPSTREAM (no epoch, no Debian revision)
    dsc=$(apt-get source --print-uris "$pkg" 2>/dev/null | grep -o "[^ /']*\.dsc'" | head -1)
    dsc=${dsc%.dsc\'}
    dsc=$(printf '%b' "${dsc//%/\\x}")    # the URI is %-encoded (+ is %2b)
    [ -n "$dsc" ] || { echo "debsrc: apt knows no source for $pkg" >&2; return 1; }
    src=${dsc%%_*} ver=${dsc#*_}
    ver=${ver#*:}; case "$ver" in *-*) ver=${ver%-*} ;; esac
    dir=$work/$src-$ver
    if [ ! -f "$dir/debian/control" ]; then
        echo "debsrc: apt-get source $pkg (into $work)" >&2
        (cd "$work" && apt-get source -qq "$pkg") > "$work/fetch-$pkg.log" 2>&1 \
            || { cat "$work/fetch-$pkg.log" >&2; return 1; }
        [ -f "$dir/debian/control" ] \
            || { echo "debsrc: apt-get source $pkg left no $dir" >&2; return 1; }
    fi
    echo "$dir" > "$work/.debsrc-$pkg"
    echo "$dir"
}
