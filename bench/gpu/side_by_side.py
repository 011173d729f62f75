#!/usr/bin/env python3
"""Joins the rows of ember's GPU benchmarks and of torch_reference.py by workload name:

  side_by_side.py EMBER_OUTPUT TORCH_OUTPUT

A row is a line in gpu_bench.h's format: the name in 44 columns, then value and unit. Rows with
no counterpart are listed with a dash on the other side.
"""
import sys


def rows(path):
    out = {}
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError:
        return out
    for line in lines:
        if len(line) <= 44:
            continue
        name, rest = line[:44].strip(), line[44:].split()
        if len(rest) < 2 or name == "workload":
            continue
        try:
            value = float(rest[0])
        except ValueError:
            continue
        out.setdefault(name, (value, rest[1]))
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    ember, torch = rows(sys.argv[1]), rows(sys.argv[2])
    names = list(ember) + [n for n in torch if n not in ember]
    if not names:
        print("no benchmark rows to compare")
        return 0
    print("%-44s %12s %12s %10s %8s" % ("workload", "ember", "pytorch", "unit", "ratio"))
    for n in names:
        e, t = ember.get(n), torch.get(n)
        unit = (e or t)[1]
        ratio = "-"
        if e and t and t[0] > 0 and e[1] == t[1]:
            # ratio > 1: ember is better (higher rate, or lower latency for time units).
            better_low = unit in ("us", "ms", "s")
            ratio = "%.2fx" % ((t[0] / e[0]) if better_low and e[0] > 0 else (e[0] / t[0]))
        print("%-44s %12s %12s %10s %8s" % (n, "%.3f" % e[0] if e else "-",
                                          "%.3f" % t[0] if t else "-", unit, ratio))
    print("(ratio > 1: ember is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
