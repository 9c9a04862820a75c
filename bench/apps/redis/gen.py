#!/usr/bin/env python3
"""Deterministic Redis command streams (RESP) for bench/apps/redis.

usage: gen.py WORKLOAD > commands.resp

  sets-small   SADD of 20 members into each of 10,000 sets, then SISMEMBER
               of every member and of as many absent ones, SCARD  (normal)
  sets-large   the same with 7,000 members into each of 5 sets    (buggy)
  zset-small   ZADD of 100 members into each of 1,500 sorted sets, then
               ZSCORE and ZRANK of every member             (normal)
  zset-large   the same with 4,000 members into each of 5 sets (buggy)
  hash-small   HSET of 100 fields into each of 1,200 hashes, then HGET (normal)
  hash-large   the same with 3,000 fields into each of 30 hashes   (buggy)

Every workload sends about the same kind of commands; the large ones only
make the data structures bigger. Fixed seeds: the same bytes every time."""
import random
import sys


def cmd(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def sets(nsets, members):
    rnd = random.Random(7)
    for m in range(members):
        for s in range(nsets):
            yield cmd("SADD", "set:%d" % s, "member:%d" % m)
    for s in range(nsets):
        for m in rnd.sample(range(2 * members), 2 * members):
            yield cmd("SISMEMBER", "set:%d" % s, "member:%d" % m)
        yield cmd("SCARD", "set:%d" % s)


def zsets(nsets, members):
    rnd = random.Random(11)
    for m in range(members):
        for s in range(nsets):
            yield cmd("ZADD", "zs:%d" % s, rnd.randrange(1 << 30), "m:%d" % m)
    for s in range(nsets):
        for m in rnd.sample(range(members), members):
            yield cmd("ZSCORE", "zs:%d" % s, "m:%d" % m)
            yield cmd("ZRANK", "zs:%d" % s, "m:%d" % m)


def hashes(nhash, fields):
    rnd = random.Random(13)
    for f in range(fields):
        for h in range(nhash):
            yield cmd("HSET", "h:%d" % h, "field:%d" % f, rnd.randrange(1 << 30))
    for h in range(nhash):
        for f in rnd.sample(range(fields), fields):
            yield cmd("HGET", "h:%d" % h, "field:%d" % f)


WORKLOADS = {
    "sets-small": lambda: sets(10000, 20),
    "sets-large": lambda: sets(5, 7000),
    "zset-small": lambda: zsets(1500, 100),
    "zset-large": lambda: zsets(5, 4000),
    "hash-small": lambda: hashes(1200, 100),
    "hash-large": lambda: hashes(30, 3000),
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in WORKLOADS:
        sys.exit("usage: gen.py {%s}" % "|".join(WORKLOADS))
    out = sys.stdout.buffer
    for c in WORKLOADS[sys.argv[1]]():
        out.write(c)
