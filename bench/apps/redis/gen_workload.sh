#!/bin/bash
# Writes the commands of the workload (inline protocol, one per line) for
# `redis-cli --pipe`: 40 hashes (user:0 .. user:39), each filled with 1,500
# fields by HSET and read back by as many HGETs, interleaved over the
# hashes, plus some SET/GET/INCR traffic. Deterministic. The normal and the
# buggy run send exactly these commands; they differ only in the server's
# configuration (run.sh).
set -eu
awk 'BEGIN {
    nh = 40; nf = 1500
    for (f = 0; f < nf; f++) {
        for (h = 0; h < nh; h++) {
            printf "HSET user:%d field:%05d value-%d-%d\n", h, (f * 7919) % nf, h, f
            printf "HGET user:%d field:%05d\n", (h * 31) % nh, (f * 104729) % nf
        }
        printf "SET counter:%d %d\nINCR counter:%d\nGET counter:%d\n", f % 100, f, f % 100, (f * 13) % 100
    }
}'
