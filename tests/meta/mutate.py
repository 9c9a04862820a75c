#!/usr/bin/env python3
"""mutate.py SEED N_ELF N_SCHEMA ELF SCHEMA OUTDIR

Writes N_ELF mutated copies of ELF (elf_NNN) and N_SCHEMA mutated copies of
SCHEMA (schema_NNN.vschema) into OUTDIR, deterministically from SEED.
ELF mutations aim at what vprof-meta parses: random bytes of one DWARF or
CFI section, section header fields (offset, size), truncation, and the ELF
header. Schema mutations: byte flips, deleted/duplicated separators, long
fields, bad percent escapes, binary junk, truncation."""
import random
import struct
import sys


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = []
    for i in range(shnum):
        off = shoff + i * shentsize
        name, typ, flags, addr, offset, size = struct.unpack_from(
            "<IIQQQQ", data, off)
        hdrs.append((name, offset, size, off))
    stroff = hdrs[shstrndx][1]
    out = {}
    for name, offset, size, hoff in hdrs:
        end = data.index(b"\0", stroff + name)
        out[data[stroff + name:end].decode()] = (offset, size, hoff)
    return out


def mutate_elf(rng, data, secs):
    d = bytearray(data)
    targets = [n for n in secs if n.startswith((".debug_", ".eh_frame"))
               and secs[n][1] > 0]
    kind = rng.randrange(6)
    if kind <= 2:               # bytes inside one DWARF/CFI section
        off, size, _ = secs[rng.choice(targets)]
        for _ in range(rng.randint(1, 8)):
            p = off + rng.randrange(size)
            d[p] = rng.choice([0, 0xff, rng.randrange(256), d[p] ^ 0x80])
    elif kind == 3:             # a section header's offset or size
        _, _, hoff = secs[rng.choice(targets)]
        field = hoff + rng.choice([0x18, 0x20])
        val = rng.choice([0, 1, 0xffffffff, len(d), len(d) * 2,
                          rng.randrange(1 << 32), (1 << 64) - 1])
        struct.pack_into("<Q", d, field, val)
    elif kind == 4:             # truncation
        d = d[:rng.randrange(len(d))]
    else:                       # ELF header fields
        for _ in range(rng.randint(1, 3)):
            p = rng.randrange(16, 64)
            d[p] = rng.randrange(256)
    return bytes(d)


def mutate_schema(rng, text):
    lines = text.split("\n")
    kind = rng.randrange(7)
    if kind == 0:
        b = bytearray(text.encode())
        for _ in range(rng.randint(1, 6)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if kind == 1:
        i = rng.randrange(1, len(lines))
        lines[i] = lines[i].replace(",", "", rng.randint(1, 3))
    elif kind == 2:
        i = rng.randrange(1, len(lines))
        lines[i] = lines[i] + "," * rng.randint(1, 4)
    elif kind == 3:
        i = rng.randrange(1, len(lines))
        lines[i] = lines[i].replace("basic.c", "x" * rng.choice([1, 5000]))
    elif kind == 4:
        i = rng.randrange(1, len(lines))
        lines[i] = lines[i].replace(", ", rng.choice([", %", ", %zz", ", %2",
                                                      ", \t", ", \r"]), 1)
    elif kind == 5:
        lines.insert(rng.randrange(len(lines)),
                     rng.choice(["@block, a", "# vprof-schema 9",
                                 "basic.c, main, -1, x, int, none",
                                 "basic.c, main, 99999999999, x, int, none",
                                 "basic.c, main, 3, s.->x, int, none",
                                 "basic.c, main, 3, ->, int, none",
                                 "\0\0\0"]))
    else:
        t = "\n".join(lines)
        return t[:rng.randrange(len(t))].encode()
    return "\n".join(lines).encode()


def main():
    seed, n_elf, n_schema = (int(x) for x in sys.argv[1:4])
    elf, schema, outdir = sys.argv[4:7]
    rng = random.Random(seed)
    data = open(elf, "rb").read()
    secs = sections(data)
    for i in range(n_elf):
        with open("%s/elf_%03d" % (outdir, i), "wb") as f:
            f.write(mutate_elf(rng, data, secs))
    text = open(schema).read()
    for i in range(n_schema):
        with open("%s/schema_%03d.vschema" % (outdir, i), "wb") as f:
            f.write(mutate_schema(rng, text))


main()
