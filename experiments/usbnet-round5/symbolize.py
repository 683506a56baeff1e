#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""symbolize.py KALLSYMS DUMP: the lab's monitor-at-stall.txt with every
kernel text address (RIP=, and the words of each stack dump) followed by
its symbol+offset from KALLSYMS ("ADDR TYPE NAME" lines: /proc/kallsyms of
the same kernel, or kallsyms-finder's output for its vmlinuz; the lab boots
with nokaslr, so the addresses match). Written to stdout."""
import bisect
import re
import sys


def load(path):
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in "tTwW" and re.fullmatch(r"[0-9a-f]{16}", p[0]):
                syms.append((int(p[0], 16), p[2]))
    syms.sort()
    return syms


def name(syms, addrs, a):
    i = bisect.bisect_right(addrs, a) - 1
    if i < 0 or a - syms[i][0] > 0x100000:
        return None
    return "%s+0x%x" % (syms[i][1], a - syms[i][0])


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: symbolize.py KALLSYMS DUMP")
    syms = load(sys.argv[1])
    if not syms:
        sys.exit("no text symbols in " + sys.argv[1])
    addrs = [s[0] for s in syms]
    lo, hi = addrs[0], addrs[-1] + 0x100000
    word = re.compile(r"\b(?:0x)?(ffffffff[0-9a-f]{8})\b")
    with open(sys.argv[2]) as f:
        for line in f:
            line = line.rstrip("\n")
            notes = []
            for m in word.finditer(line):
                a = int(m.group(1), 16)
                if lo <= a < hi:
                    n = name(syms, addrs, a)
                    if n:
                        notes.append(n)
            print(line + ("    # " + " ".join(notes) if notes else ""))


if __name__ == "__main__":
    main()
