#!/usr/bin/env python3
"""Runs `ember doctor` and checks its exit code and output.

  check_doctor.py [checks] -- COMMAND...

JSON mode (default) parses stdout as one JSON object, checks its shape, that the exit code is 0
exactly when "usable" is true, and that every error finding has a fix. --text checks the text
report instead (its closing verdict against the exit code).
"""
import argparse
import json
import subprocess
import sys

NOT_USABLE_REASONS = {"build_without_cuda", "no_driver", "driver_too_old", "no_gpu"}


def fail(msg, out=""):
    print("check_doctor: FAIL: " + msg)
    if out:
        print("---- output ----\n" + out)
    sys.exit(1)


def check_json(args, rc, out):
    try:
        d = json.loads(out)
    except json.JSONDecodeError as e:
        fail("stdout is not one JSON object: %s" % e, out)
    for key, kind in [("ember_version", str), ("build_info", str), ("cuda_build", str),
                      ("cuda_archs", str), ("cuda_runtime_version", int),
                      ("cuda_driver_version", int), ("libraries", dict), ("cpu", dict),
                      ("gpus", list), ("findings", list), ("usable", bool)]:
        if not isinstance(d.get(key), kind):
            fail("key %r missing or not %s" % (key, kind.__name__), out)
    for lib in ("cublas", "cudnn", "nccl"):
        entry = d["libraries"].get(lib)
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), int):
            fail("libraries.%s.version missing" % lib, out)
        if (entry["version"] > 0) != bool(entry["path"]):
            fail("libraries.%s: a version needs a path and a path a version" % lib, out)
    if d["cuda_build"] not in ("on", "sim", "off"):
        fail("cuda_build is %r" % d["cuda_build"], out)
    if not d["cpu"]["model"] or d["cpu"]["logical_cores"] < 1:
        fail("cpu model or core count missing", out)
    if (rc == 0) != d["usable"]:
        fail("exit code %d does not match usable=%s" % (rc, d["usable"]), out)
    ids = [f["id"] for f in d["findings"]]
    for f in d["findings"]:
        if f["severity"] not in ("error", "warning", "info") or not f["message"]:
            fail("malformed finding %r" % f, out)
        if f["severity"] == "error" and not f["fix"] and not f["id"].startswith("smoke_"):
            fail("error finding %r has no fix" % f["id"], out)
    gpus = d["gpus"]
    for g in gpus:
        for key in ("name", "total_memory", "compute_capability", "sm_count", "coverage",
                    "health", "smoke_test"):
            if key not in g:
                fail("gpu %d lacks %r" % (g.get("index", -1), key), out)
        if g["total_memory"] <= 0 or g["sm_count"] <= 0:
            fail("gpu %d: memory or SM count not positive" % g["index"], out)
        if not g["health"]["available"] and not g["health"]["error"]:
            fail("gpu %d: health unavailable without a reason" % g["index"], out)

    expect = args.expect
    if expect == "auto":
        expect = "usable" if gpus and d["cuda_build"] != "off" and d["usable"] else "unusable"
    if expect == "usable":
        if rc != 0 or not d["usable"]:
            fail("expected CUDA to be usable (exit 0), got exit %d" % rc, out)
    elif expect == "unusable":
        if rc != 1 or d["usable"]:
            fail("expected exit 1 (CUDA not usable), got %d" % rc, out)
        if not NOT_USABLE_REASONS.intersection(ids) and not any(
                i.startswith("smoke_") or i == "arch_not_covered" for i in ids):
            fail("not usable but no finding says why: %s" % ids, out)
    if args.gpus is not None and len(gpus) != args.gpus:
        fail("expected %d GPUs, found %d" % (args.gpus, len(gpus)), out)
    if args.gpu_name and any(g["name"] != args.gpu_name for g in gpus):
        fail("expected every GPU to be named %r" % args.gpu_name, out)
    if args.coverage:
        kind, via = args.coverage.split(":")
        for g in gpus:
            if g["coverage"] != {"kind": kind, "via": via}:
                fail("gpu %d coverage %r, expected %s" % (g["index"], g["coverage"], args.coverage), out)
    if args.smoke:
        for g in gpus:
            s = g["smoke_test"]
            if not (s["run"] and s["alloc_ok"]):
                fail("gpu %d: smoke test did not allocate: %r" % (g["index"], s), out)
            if s["matmul"] not in ("ok", "no_kernel"):
                fail("gpu %d: smoke matmul %r" % (g["index"], s), out)
            if s["matmul"] == "ok" and not s["max_abs_error"] < 1e-2:
                fail("gpu %d: matmul error %r" % (g["index"], s["max_abs_error"]), out)
    for want in args.finding:
        if want not in ids:
            fail("expected finding %r, got %s" % (want, ids), out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--expect", choices=["usable", "unusable", "auto"])
    p.add_argument("--exit", type=int, help="the exit code expected")
    p.add_argument("--text", action="store_true", help="check the text report, not JSON")
    p.add_argument("--gpus", type=int)
    p.add_argument("--gpu-name")
    p.add_argument("--coverage", help="KIND:VIA, e.g. native:sm_90")
    p.add_argument("--smoke", action="store_true", help="the smoke test ran and passed")
    p.add_argument("--finding", action="append", default=[], help="a finding id that must appear")
    p.add_argument("command", nargs="+")
    args = p.parse_args()

    proc = subprocess.run(args.command, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    rc = proc.returncode
    if args.exit is not None and rc != args.exit:
        fail("exit code %d, expected %d" % (rc, args.exit), out)
    if args.exit == 2:
        if "usage" not in out.lower() and "unknown" not in out.lower():
            fail("a usage error should explain itself", out)
    elif args.text:
        verdict_ok = "OK: CUDA is usable" in proc.stdout
        verdict_no = "CUDA is not usable" in proc.stdout
        if rc not in (0, 1) or (rc == 0) != verdict_ok or (rc == 1) != verdict_no:
            fail("exit code %d does not match the verdict" % rc, out)
        for section in ("ember", "CUDA", "cuDNN", "NCCL", "CPU"):
            if section not in proc.stdout:
                fail("the report lacks %r" % section, out)
        if rc == 1 and "fix:" not in proc.stdout:
            fail("not usable but no fix is given", out)
    else:
        check_json(args, rc, proc.stdout)
    print("check_doctor: OK (exit %d)" % rc)


if __name__ == "__main__":
    main()
