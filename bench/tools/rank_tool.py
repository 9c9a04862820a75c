#!/usr/bin/env python3
"""Rank of one function according to one tool, for scripts that run real
applications (bench/apps/*/run.sh). Same ranking rules as run_bugs.py.

  rank_tool.py gprof EXE RUNDIR FUNCTION      flat profile of RUNDIR/gmon*
  rank_tool.py perf RUNDIR FUNCTION           RUNDIR/perf.data
  rank_tool.py vprof NORMALDIR BUGGYDIR FUNCTION [OUT.json]

Prints "RANK TOTAL TOP" (RANK is NR when the function is not ranked);
exits 1 with a message on stderr when the tool fails."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import run_bugs  # noqa: E402


def main(argv):
    try:
        if len(argv) == 4 and argv[0] == "gprof":
            rows = corpus.gprof_flat(argv[1], argv[2])
            fn = argv[3]
        elif len(argv) == 3 and argv[0] == "perf":
            rows = corpus.perf_ranking(argv[1])
            fn = argv[2]
        elif len(argv) in (4, 5) and argv[0] == "vprof":
            out = argv[4] if len(argv) == 5 else os.devnull
            rows = run_bugs.vprof_report([argv[1]], [argv[2]], out)
            fn = argv[3]
            f = run_bugs.find_fn(rows, fn)
            print("%s %d %s" % (f["rank"] if f else "NR", len(rows),
                                rows[0]["name"] if rows else "-"))
            return 0
        else:
            print(__doc__, file=sys.stderr)
            return 2
    except (corpus.CaseError, OSError, ValueError) as e:
        print("rank_tool.py: %s" % e, file=sys.stderr)
        return 1
    r = corpus.rank_of(rows, fn)
    print("%s %d %s" % (r or "NR", len(rows), rows[0]["name"] if rows else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
