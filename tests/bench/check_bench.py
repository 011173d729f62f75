#!/usr/bin/env python3
"""Runs `ember bench` and checks its table, its JSON, the saved file, --compare and the errors.

  check_bench.py --suite cpu|sim [--table FILE] -- EMBER

Suite cpu runs `ember bench --quick` on the CPU (what CI runs); suite sim runs a tiny table on
two emulated GPUs (EMBER_SIM_DEVICES=2) so that the GPU columns and speed-ups are exercised.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

FAILURES = []
RESULT_KEYS = {"workload": str, "device": str, "unit": str, "value": (int, float, type(None)),
               "ms": (int, float, type(None)), "peak": (int, float, type(None)),
               "peak_fraction": (int, float, type(None)), "note": str}


def check(cond, what, out=""):
    if not cond:
        FAILURES.append(what)
        print("check_bench: FAIL: " + what + (("\n---- output ----\n" + out) if out else ""))


def run(cmd, env=None, timeout=300):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def check_run(d, devices, rows, out):
    for key in ("ember_bench", "time", "quick", "machine", "results"):
        check(key in d, "json: key %s" % key, out)
    m = d.get("machine", {})
    for key in ("host", "ember_version", "build_info", "cpu_model", "cpu_threads",
                "cpu_features", "driver_release", "gpus"):
        check(key in m, "json: machine.%s" % key, out)
    got = {(r["workload"], r["device"]) for r in d.get("results", [])}
    check(got == {(w, dev) for w in rows for dev in devices},
          "json: one result per workload and device: %s" % sorted(got), out)
    for r in d.get("results", []):
        for key, kind in RESULT_KEYS.items():
            check(isinstance(r.get(key), kind), "json: results[].%s" % key, out)


def suite_cpu(ember, tmp):
    a = os.path.join(tmp, "a.json")
    rc, out, err = run([ember, "bench", "--quick", "--device", "cpu", "--json", "--save", a])
    check(rc == 0, "--quick --json: exit %d (%s)" % (rc, err), out)
    d = json.loads(out)
    rc2, listed, _ = run([ember, "bench", "--quick", "--list"])
    rows = [line.split(" | ", 1)[1] for line in listed.splitlines()]
    check(rc2 == 0 and len(rows) >= 6, "--quick --list", listed)
    check_run(d, ["cpu"], rows, out)
    check(d["quick"] is True, "json: quick", out)
    for r in d["results"]:
        check(r["value"] is not None and r["value"] > 0 and r["ms"] > 0,
              "cpu: %s measured" % r["workload"], out)
        if r["unit"] == "TFLOP/s" and r["peak"]:
            check(0 < r["peak_fraction"] < 2, "cpu: %s fraction of peak" % r["workload"], out)
    with open(a) as f:
        check(json.load(f)["results"] == d["results"], "the saved file holds the printed run")
    check("[1/" in err and "on cpu" in err, "progress on stderr", err)

    rc, out, err = run([ember, "bench", "--quick", "--device", "cpu", "--save", "none",
                        "--filter", "matmul"])
    lines = out.splitlines()
    header = [l for l in lines if l.startswith("workload")]
    check(rc == 0 and header and header[0].split() == ["workload", "unit", "cpu", "%", "peak"],
          "table: columns", out)
    check(sum(1 for l in lines if l.startswith("matmul f32")) == 2 and
          not any(l.startswith("add f32") for l in lines), "table: --filter matmul", out)

    # B: A with every value doubled (twice the throughput, twice the time).
    b = os.path.join(tmp, "b.json")
    with open(a) as f:
        text = f.read()
    bd = json.loads(text)
    lines = [text.split("\n")[0], text.split("\n")[1], text.split("\n")[2]]
    with open(b, "w") as f:
        f.write("\n".join(lines) + "\n")
        for i, r in enumerate(bd["results"]):
            r["value"] *= 2
            f.write(json.dumps(r, separators=(",", ":")) +
                    ("," if i + 1 < len(bd["results"]) else "") + "\n")
        f.write("]}\n")
    rc, out, err = run([ember, "bench", "--compare", a, b])
    check(rc == 0, "--compare: exit %d (%s)" % (rc, err), out)
    for r in bd["results"]:
        row = [l for l in out.splitlines() if l.startswith(r["workload"])]
        want = "0.5x" if r["unit"] == "us" else "2.00x"
        check(row and row[0].split()[-1] == want,
              "--compare: %s shows %s" % (r["workload"], want), out)

    for args, code, words in (
            (["--compare", a, os.path.join(tmp, "missing.json")], 1, "cannot read"),
            (["--compare", a, ember], 1, "not a file saved by `ember bench`"),
            (["--compare", a], 2, "needs a value"),
            (["--quick", "--save", "/nonexistent/dir/out.json"], 1, "cannot write the results"),
            (["--bogus"], 2, "unknown option '--bogus'"),
            (["--device", "cuda:9"], 2, "--device cuda:9: no such device"),
            (["--filter", "no such workload"], 2, "no workload matches"),
            (["--table", "/nonexistent/table.txt"], 2, "--table: cannot read")):
        rc, out, err = run([ember, "bench"] + args)
        check(rc == code and words in err,
              "%s: exit %d and '%s' (got %d: %s)" % (args, code, words, rc, err))


def suite_sim(ember, tmp, table):
    out_path = os.path.join(tmp, "sim.json")
    env = {"EMBER_SIM_DEVICES": "2"}
    rc, out, err = run([ember, "bench", "--quick", "--table", table, "--json", "--save", out_path],
                       env)
    check(rc == 0, "sim: exit %d (%s)" % (rc, err), out)
    d = json.loads(out) if rc == 0 else {}
    rows = ["matmul f32 32^3", "conv2d f32 tiny fwd+bwd", "add f32 1K", "H2D pinned 4 KiB",
            "train step MLP batch 2"]
    check_run(d, ["cpu", "cuda:0", "cuda:1"], rows, out)
    check([g["device"] for g in d.get("machine", {}).get("gpus", [])] == ["cuda:0", "cuda:1"],
          "sim: the machine lists both GPUs", out)
    for r in d.get("results", []):
        if r["workload"] == "H2D pinned 4 KiB" and r["device"] == "cpu":
            check(r["value"] is None and r["note"] == "not applicable", "sim: no H2D on the CPU",
                  out)
        else:
            check(r["value"] is not None and r["value"] > 0, "sim: %s on %s measured" %
                  (r["workload"], r["device"]), out)
    rc, out, err = run([ember, "bench", "--quick", "--table", table, "--save", "none"], env)
    header = [l for l in out.splitlines() if l.startswith("workload")]
    check(rc == 0 and header and header[0].split() ==
          ["workload", "unit", "cpu", "%", "peak", "cuda:0", "speed-up", "%", "peak", "cuda:1",
           "speed-up", "%", "peak"], "sim table: columns", out)
    row = [l for l in out.splitlines() if l.startswith("add f32 1K")]
    check(row and row[0].split()[7].endswith("x"), "sim table: a speed-up", out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", choices=("cpu", "sim"), required=True)
    ap.add_argument("--table")
    ap.add_argument("command", nargs="+")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if a.suite == "cpu":
            suite_cpu(a.command[0], tmp)
        else:
            suite_sim(a.command[0], tmp, a.table)
    if FAILURES:
        print("check_bench: %d check(s) failed" % len(FAILURES))
        sys.exit(1)
    print("check_bench: suite %s passed" % a.suite)


if __name__ == "__main__":
    main()
