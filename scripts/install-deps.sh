#!/bin/sh
# Installs the Debian (bookworm) packages vprof needs to build and test, only
# when something is missing, so `make demo` and `make test` work on a fresh
# machine. Run as root (or with sudo available). Idempotent and quiet when all
# is present. `install-deps.sh --bench-apps` installs, in addition, what the
# real applications of bench/apps need to build (`make -C bench realworld`).
set -e

# Build: compiler, LLVM 14 for the schema pass, DWARF/ELF readers, unwinder,
# statistics, C++ name demangling (libiberty-dev: libiberty's cplus_demangle;
# bookworm ships it apart from binutils-dev), libclang-rt (libFuzzer and
# sanitizer runtimes for the fuzz targets). Tests: gdb (variable-location
# oracle), binutils gprof, scipy (Anderson-Darling oracle), valgrind,
# chromium (HTML report check).
# glibc-patch: glibc-source (the packaged 2.36 tree), gawk and bison (build).
# bench (make -C bench bugs): coz-profiler, the COZ causal profiler column.
PKGS="build-essential clang-14 llvm-14-dev libclang-14-dev libclang-rt-14-dev libdwarf-dev libelf-dev
      libunwind-dev libgsl-dev zlib1g-dev libiberty-dev binutils gdb python3 python3-scipy
      python3-numpy valgrind pkg-config chromium autoconf glibc-source gawk bison cmake
      coz-profiler"
# bench/apps (not needed by make test): memcached links libevent;
# apt-get source needs dpkg-dev
[ "${1:-}" = --bench-apps ] && PKGS="$PKGS libevent-dev dpkg-dev"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "vprof: installing missing packages:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
