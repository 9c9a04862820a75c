#!/bin/bash
# Every knob of the runtime is read with vprof_env (secure_getenv), the
# stack scanner's included (issue 14 item 3): a setuid/setgid program must
# never act on a setting of the user who runs it. t_setuid.sh shows it for
# the knobs it can reach from a run; a knob it cannot reach (read only
# once another is on, like VPROF_LATENCY_FUNCS after VPROF_LATENCY) is
# still one plain getenv away from being honoured, so this checks the
# built runtime itself: no object of libvprof.so / libvprof.a calls
# getenv, and libvprof.so does not import it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
A=$VPROF_LIB/libvprof.a
[ -f "$A" ] || skip "libvprof.a not built (make)"

imp=$(nm -D --undefined-only "$LIBVPROF" | awk '{print $NF}' | sed 's/@.*//' | grep -x getenv)
check "libvprof.so imports no getenv (${imp:-none})" test -z "$imp"
sec=$(nm -D --undefined-only "$LIBVPROF" | awk '{print $NF}' | sed 's/@.*//' | grep -x secure_getenv)
check "libvprof.so reads its knobs with secure_getenv" test -n "$sec"

# nm -A on an archive prints archive:member: symbol lines
users=$(nm -A --undefined-only "$A" 2>/dev/null | awk '$NF == "getenv" {sub(/:[^:]*$/, "", $1); print $1}' |
        sed 's/.*://' | sort -u | tr '\n' ' ')
check "no object of libvprof.a calls getenv (${users:-none})" test -z "$users"
scanner=$(nm -A --undefined-only "$A" 2>/dev/null | grep -c 'lat_config\.o:.*secure_getenv')
check "the scanner's configuration (lat_config.o) is in libvprof.a and uses secure_getenv" \
    test "$scanner" -ge 1
finish
