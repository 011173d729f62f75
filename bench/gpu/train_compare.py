#!/usr/bin/env python3
"""`ember train` next to its PyTorch twin (bench/gpu/torch_train.py) on Fashion-MNIST: the same
models, optimizer, schedule, batch size and data path, one process each, one after the other.

  train_compare.py --ember PATH [--data DIR] [--models cnn,mlp] [--epochs 2] [--batch-size 64]
                   [--device cuda] [--workers 1] [--amp off|bf16|fp16] [--work-dir DIR]
                   [--json FILE]
                   [--timeout SECONDS] [--train-samples N] [--test-samples N] [--python EXE]

Prints, per model and framework: the training seconds of each epoch, samples/s over the run
(training loops only, as `ember train` counts them), the final test accuracy, the process's wall
time, its peak resident set (from wait4, the same measure for both) and its peak device memory
(max_memory_allocated). Exit 1 when a run fails, or when ember's test accuracy falls more than
--max-gap (default 0.03) below PyTorch's; PyTorch missing is reported, not a failure.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, log, timeout):
    """Runs cmd with stdout/stderr to log; (exit code, wall seconds, peak RSS bytes)."""
    t0 = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                out.write("\n[train_compare] killed after %d s\n" % timeout)
                break
            time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.perf_counter() - t0, usage.ru_maxrss * 1024


def read_jsonl(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return []


def result(framework, model, rc, wall, rss, metrics, peak_dev, log):
    r = {"framework": framework, "model": model, "exit": rc, "wall_s": wall, "peak_rss_bytes": rss,
         "peak_device_bytes": peak_dev, "epochs": metrics, "log": log}
    if metrics:
        secs = [m["_n"] / m["samples_per_s"] for m in metrics if m.get("samples_per_s")]
        r["epoch_s"] = secs
        r["samples_per_s"] = sum(m["_n"] for m in metrics) / sum(secs) if secs else 0
        r["test_accuracy"] = metrics[-1]["test_accuracy"]
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ember", required=True, help="the ember executable")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--models", default="cnn,mlp")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--device", default="cuda")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--amp", choices=("off", "bf16", "fp16"), default="off",
                   help="mixed precision on both sides (ember's default on a GPU is bf16: pass "
                   "it explicitly so both sides agree)")
    p.add_argument("--work-dir", default="")
    p.add_argument("--json", default="")
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--train-samples", type=int, default=0)
    p.add_argument("--test-samples", type=int, default=0)
    p.add_argument("--max-gap", type=float, default=0.03)
    p.add_argument("--python", default=sys.executable)
    args = p.parse_args()
    work = args.work_dir or tempfile.mkdtemp(prefix="train-compare-")
    os.makedirs(work, exist_ok=True)
    common = ["--epochs", str(args.epochs), "--batch-size", str(args.batch_size), "--device",
              args.device, "--workers", str(args.workers), "--data", args.data, "--amp", args.amp]
    limits = []
    if args.train_samples:
        limits += ["--train-samples", str(args.train_samples)]
    if args.test_samples:
        limits += ["--test-samples", str(args.test_samples)]
    n_train = args.train_samples or 60000

    results, problems = [], []
    for model in [m for m in args.models.split(",") if m]:
        # ember train refuses a directory that holds a checkpoint: a fresh one per run.
        ck = tempfile.mkdtemp(prefix="ember-%s-" % model, dir=work)
        log = os.path.join(work, "ember-%s.log" % model)
        rc, wall, rss = run([args.ember, "train", "--model", model, "--checkpoint-dir", ck] +
                            common + limits, log, args.timeout)
        metrics = read_jsonl(os.path.join(ck, "metrics.jsonl"))
        text = open(log, errors="replace").read()
        dev = re.search(r"peak device memory ([0-9.]+) MiB", text)
        peak_dev = float(dev.group(1)) * 2**20 if dev else None
        for m in metrics:
            m["_n"] = n_train
        results.append(result("ember", model, rc, wall, rss, metrics, peak_dev, log))

        out = os.path.join(work, "torch-%s" % model)
        log = os.path.join(work, "torch-%s.log" % model)
        rc, wall, rss = run([args.python, os.path.join(HERE, "torch_train.py"), "--model", model,
                             "--out-dir", out] + common + limits, log, args.timeout)
        metrics = read_jsonl(os.path.join(out, "metrics.jsonl"))
        for m in metrics:
            m["_n"] = n_train
        summ = {}
        try:
            with open(os.path.join(out, "summary.json")) as f:
                summ = json.load(f)
        except (OSError, ValueError):
            pass
        results.append(result("pytorch", model, rc, wall, rss, metrics,
                              summ.get("peak_device_bytes"), log))

    print("Fashion-MNIST, %d epoch(s), batch %d, device %s, %d loader worker(s), amp %s%s"
          % (args.epochs, args.batch_size, args.device, args.workers, args.amp,
             ", first %d training samples" % args.train_samples if args.train_samples else ""))
    head = "%-5s %-14s %-17s %11s %9s %9s %12s %12s" % (
        "model", "framework", "epoch seconds", "samples/s", "test acc", "wall s", "peak RSS MiB",
        "peak dev MiB")
    print(head)

    def mib(b):
        return "%.0f" % (b / 2**20) if b else "-"

    by = {(r["model"], r["framework"]): r for r in results}
    for model in dict.fromkeys(r["model"] for r in results):
        for fw in ("ember", "pytorch"):
            r = by[(model, fw)]
            if r["exit"] == 3 and fw == "pytorch":
                print("%-5s %-14s PyTorch is not installed: not run" % (model, fw))
                continue
            if r["exit"] != 0 or "samples_per_s" not in r:
                print("%-5s %-14s FAILED (exit %d): see %s" % (model, fw, r["exit"], r["log"]))
                problems.append("%s %s failed (exit %d)" % (fw, model, r["exit"]))
                continue
            print("%-5s %-14s %-17s %11.0f %8.2f%% %9.1f %12s %12s" % (
                model, fw, " ".join("%.2f" % s for s in r["epoch_s"]), r["samples_per_s"],
                100 * r["test_accuracy"], r["wall_s"], mib(r["peak_rss_bytes"]),
                mib(r["peak_device_bytes"])))
        e, t = by[(model, "ember")], by[(model, "pytorch")]
        if "samples_per_s" in e and "samples_per_s" in t and t["exit"] == 0:
            def ratio(a, b):
                return "%.2fx" % (a / b) if a and b else "-"
            print("%-5s %-14s %-17s %11s %+8.2f%% %9s %12s %12s" % (
                model, "ember/pytorch", "", ratio(e["samples_per_s"], t["samples_per_s"]),
                100 * (e["test_accuracy"] - t["test_accuracy"]), ratio(t["wall_s"], e["wall_s"]),
                ratio(t["peak_rss_bytes"], e["peak_rss_bytes"]),
                ratio(t["peak_device_bytes"], e["peak_device_bytes"])))
            if e["test_accuracy"] < t["test_accuracy"] - args.max_gap:
                problems.append("%s: ember's test accuracy %.2f%% is more than %.0f points below "
                                "PyTorch's %.2f%%" % (model, 100 * e["test_accuracy"],
                                                      100 * args.max_gap, 100 * t["test_accuracy"]))
    print("(ember/pytorch: samples/s as ember over PyTorch, accuracy as ember minus PyTorch; wall "
          "time, RSS and device memory as PyTorch over ember: > 1 is ember better everywhere)")
    brief = []
    for model in dict.fromkeys(r["model"] for r in results):
        e, t = by[(model, "ember")], by[(model, "pytorch")]
        if "samples_per_s" not in e:
            brief.append("%s: ember failed" % model)
        elif "samples_per_s" not in t or t["exit"] != 0:
            brief.append("%s: ember %.0f samples/s, %.2f%%; PyTorch not run" % (
                model, e["samples_per_s"], 100 * e["test_accuracy"]))
        else:
            brief.append("%s %.0f vs %.0f samples/s (%.2fx), %.2f%% vs %.2f%%" % (
                model, e["samples_per_s"], t["samples_per_s"],
                e["samples_per_s"] / t["samples_per_s"], 100 * e["test_accuracy"],
                100 * t["test_accuracy"]))
    print("summary: " + "; ".join(brief) + " (ember vs PyTorch)")
    for prob in problems:
        print("PROBLEM: " + prob)
    if args.json:
        for r in results:
            for m in r["epochs"]:
                m.pop("_n", None)
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
