#!/usr/bin/env python3
"""Puts ember's GPU benchmark rows next to PyTorch's, in the order of bench/gpu/workloads.txt:

  side_by_side.py [--table FILE] [--markdown] [--json FILE] EMBER_OUTPUT TORCH_OUTPUT

EMBER_OUTPUT is what the bench_cuda_* programs printed (concatenated), TORCH_OUTPUT what
torch_reference.py printed: rows in gpu_bench.h's format (the name in 44 columns, then value and
unit). Every workload of the table gets a line; a side that has no value shows "-" (not run, or
"failed" when the program said so). ratio > 1: ember is better (a higher rate, or a shorter time).
"of copy" is ember's GB/s over ember's largest device-to-device copy (the bandwidth roof), for
the rows that stay on the device.
--markdown prints the table in docs/perf.md's layout; --json also writes every row as JSON.
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_reference import load_workloads  # noqa: E402  (the one parser of the table)


def parse_rows(path):
    """name -> (value or None when the row says failed, unit)."""
    out = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        if len(line) <= 44:
            continue
        name, rest = line[:44].strip(), line[44:].split()
        if len(rest) < 2 or name == "workload":
            continue
        if rest[0] == "-" and len(rest) >= 3 and rest[2].startswith("failed"):
            out.setdefault(name, (None, rest[1]))
            continue
        try:
            value = float(rest[0])
        except ValueError:
            continue
        out.setdefault(name, (value, rest[1]))
    return out


def fmt(v):
    if v is None:
        return "-"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.3g" % v


def compare(table, ember, torch):
    """One dict per workload of the table, in order."""
    copies = [w for w in table if w.op == "copy" and not w.options and w.name in ember
              and ember[w.name][0]]
    roof = max(copies, key=lambda w: w.numel()) if copies else None
    roof_value = ember[roof.name][0] if roof else None
    out = []
    for w in table:
        e, t = ember.get(w.name), torch.get(w.name)
        r = {"section": w.section, "workload": w.name, "unit": w.unit,
             "ember": e[0] if e else None, "pytorch": t[0] if t else None,
             "ember_status": "ok" if e and e[0] is not None else ("failed" if e else "missing"),
             "pytorch_status": "ok" if t and t[0] is not None else ("failed" if t else "missing"),
             "ratio": None, "of_copy": None}
        if r["ember"] and r["pytorch"]:
            if w.unit == "us":
                r["ratio"] = r["pytorch"] / r["ember"]
            else:
                r["ratio"] = r["ember"] / r["pytorch"]
        if w.unit == "GB/s" and w.op not in ("h2d", "d2h") and r["ember"] and roof_value:
            r["of_copy"] = r["ember"] / roof_value
        out.append(r)
    return out, roof


def summary(rows):
    both = [r for r in rows if r["ratio"]]
    line = "%d workloads, %d with both sides" % (len(rows), len(both))
    if both:
        geo = math.exp(sum(math.log(r["ratio"]) for r in both) / len(both))
        faster = sum(1 for r in both if r["ratio"] >= 1.0)
        line += ": ember better in %d, PyTorch in %d; geometric mean ratio %.2fx" % (
            faster, len(both) - faster, geo)
    missing = [r["workload"] for r in rows if not r["ratio"]]
    if missing:
        line += "\nwithout a ratio: " + ", ".join(missing)
    return line


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ember")
    p.add_argument("torch")
    p.add_argument("--table", default=os.path.join(HERE, "workloads.txt"))
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--json", help="also write the rows as JSON to this file")
    args = p.parse_args()
    table = load_workloads(args.table)
    ember, torch = parse_rows(args.ember), parse_rows(args.torch)
    if not ember and not torch:
        print("no benchmark rows to compare (nothing was measured)")
        return 0
    rows, roof = compare(table, ember, torch)

    def cell(r, side):
        return fmt(r[side]) if r[side + "_status"] != "failed" else "failed"

    if args.markdown:
        print("| workload | unit | ember | PyTorch | ember vs PyTorch (>1: ember better) "
              "| ember of copy |")
        print("| --- | --- | ---: | ---: | ---: | ---: |")
        for r in rows:
            print("| %s | %s | %s | %s | %s | %s |" % (
                r["workload"], r["unit"], cell(r, "ember"), cell(r, "pytorch"),
                "%.2fx" % r["ratio"] if r["ratio"] else "-",
                "%.2f" % r["of_copy"] if r["of_copy"] else ""))
    else:
        print("%-44s %10s %10s %8s %8s %8s" % ("workload", "ember", "pytorch", "unit", "ratio",
                                               "of copy"))
        section = None
        for r in rows:
            if r["section"] != section:
                section = r["section"]
                print("[%s]" % section)
            print("%-44s %10s %10s %8s %8s %8s" % (
                r["workload"], cell(r, "ember"), cell(r, "pytorch"), r["unit"],
                "%.2fx" % r["ratio"] if r["ratio"] else "-",
                "%.2f" % r["of_copy"] if r["of_copy"] else ""))
        print("(ratio > 1: ember is better; of copy: ember's GB/s over its %s)"
              % (roof.name if roof else "device copy, not measured"))
    print(summary(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
