#!/usr/bin/env python3
"""End-to-end checks of `ember train` on a subset of Fashion-MNIST.

  check_train.py SCENARIO EMBER [--device DEV] [--model NAME] [--amp bf16|fp16|off]

Scenarios:
  learns     two short epochs: the training loss falls, test accuracy clears chance (10%) by a
             wide margin, and the metrics, chart, checkpoint and final weights are written.
  resume     a run stopped by Ctrl-C (SIGINT) after its first progress line saves a checkpoint
             and exits 130; --resume then finishes it with the same losses and accuracies and
             byte-identical final weights as an uninterrupted run; a further --resume of the
             finished run changes nothing.
  cli        out-of-range flags are refused before training; a second run in a directory is
             refused naming the first's pid; SIGTERM saves a checkpoint like Ctrl-C; values in a
             checkpoint with a valid checksum are checked; --resume rewrites the reports.
  crash      SIGKILL at the N-th file write or rename (--shim, an LD_PRELOAD library), SIGINT and
             SIGTERM at random moments, then --resume: the same final model, byte for byte, and
             complete reports.
  errors     bad input gives a one-line error and a non-zero exit, and never touches what was
             saved: unknown model/device, batch size 0, --resume without a checkpoint, a new run
             over an existing checkpoint, a checkpoint of another model, missing or corrupted data.
  amp_errors a run saved with --amp fp16 (its GradScaler state in the checkpoint) refuses a resume
             with another --amp, or when its scaler state is missing or malformed, naming the
             file and keeping the checkpoint.

With --amp every run trains under autocast (and, for fp16, a GradScaler); `resume` then checks
that the scaler's state travels through the checkpoint, so the resumed run is identical.
"""
import gzip
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import zlib

DATA = "/usr/share/datasets/fashion-mnist"


def fail(msg, out=""):
    print("check_train: FAIL: " + msg)
    if out:
        print("---- output ----\n" + out)
    sys.exit(1)


def run(cmd, expect_rc=0, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if expect_rc is not None and p.returncode != expect_rc:
        fail("%s exited %d, expected %d" % (" ".join(cmd), p.returncode, expect_rc), p.stdout)
    return p.stdout


def metrics(d):
    with open(os.path.join(d, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def base_args(ember, d, args):
    amp = ["--amp", args.amp] if args.amp else []
    return [ember, "train", "--checkpoint-dir", d, "--device", args.device, "--model", args.model,
            "--seed", "3", "--workers", "1"] + amp


def learns(ember, args, tmp):
    d = os.path.join(tmp, "run")
    out = run(base_args(ember, d, args) + ["--epochs", "2", "--train-samples", str(args.train),
                                           "--test-samples", str(args.test), "--batch-size", "32"])
    m = metrics(d)
    if len(m) != 2:
        fail("expected 2 epochs of metrics, got %d" % len(m), out)
    if not m[1]["train_loss"] < m[0]["train_loss"]:
        fail("training loss did not fall: %r" % [e["train_loss"] for e in m], out)
    if not m[1]["test_accuracy"] > args.min_accuracy:
        fail("test accuracy %.3f is not above %.2f" % (m[1]["test_accuracy"], args.min_accuracy),
             out)
    for name in ("metrics.csv", "chart.svg", "checkpoint.safetensors", "model.safetensors"):
        if not os.path.getsize(os.path.join(d, name)) > 0:
            fail(name + " was not written", out)
    with open(os.path.join(d, "chart.svg")) as f:
        svg = f.read()
    if not svg.startswith("<svg") or "polyline" not in svg:
        fail("chart.svg is not a chart", svg[:200])
    with open(os.path.join(d, "metrics.csv")) as f:
        rows = f.read().strip().split("\n")
    if len(rows) != 3 or not rows[0].startswith("epoch,"):
        fail("metrics.csv has %d lines" % len(rows), "\n".join(rows))
    for word in ("done: test accuracy", "samples/s", "peak"):
        if word not in out:
            fail("the summary lacks %r" % word, out)
    print("learns: ok, test accuracy %.3f after 2 epochs" % m[1]["test_accuracy"])


def same(a, b, keys=("epoch", "step", "train_loss", "train_accuracy", "test_loss",
                     "test_accuracy", "lr")):
    for x, y in zip(a, b):
        for k in keys:
            if abs(x[k] - y[k]) > 1e-9 * max(1.0, abs(x[k])):
                return "epoch %d: %s %r != %r" % (x["epoch"], k, x[k], y[k])
    return "" if len(a) == len(b) else "%d epochs != %d" % (len(a), len(b))


def resume(ember, args, tmp):
    # The run is stopped by SIGINT once its first progress line is read; on a loaded machine the
    # signal can land after the whole first epoch, so a run that ended its epoch first is tried
    # again with more batches an epoch, until it stops inside epoch 1.
    for attempt, samples in enumerate([args.train, args.train * 4, args.train * 15]):
        common = ["--epochs", "3", "--train-samples", str(samples), "--test-samples",
                  str(args.test), "--batch-size", "16"]
        d = os.path.join(tmp, "stopped%d" % attempt)
        p = subprocess.Popen(base_args(ember, d, args) + common, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        lines = []
        for line in p.stdout:
            lines.append(line)
            if line.startswith("epoch 1/3  batch"):
                p.send_signal(signal.SIGINT)
                break
        rest = p.stdout.read()
        rc = p.wait()
        out = "".join(lines) + rest
        if rc != 130:
            fail("interrupted run exited %d, expected 130" % rc, out)
        if "interrupted: saved" not in out:
            fail("no 'interrupted: saved' line", out)
        if not os.path.exists(os.path.join(d, "checkpoint.safetensors")):
            fail("no checkpoint after Ctrl-C", out)
        stop = re.search(r"\(epoch (\d+), batch (\d+)/(\d+)\)", out)
        if not stop:
            fail("the 'interrupted: saved' line names no epoch and batch", out)
        if stop.group(1) == "1" and stop.group(2) != stop.group(3):
            break
    else:
        fail("the run never stopped inside epoch 1, even with %d samples" % samples, out)
    ref = os.path.join(tmp, "ref")
    run(base_args(ember, ref, args) + common)
    out2 = run([ember, "train", "--resume", "--checkpoint-dir", d, "--device", args.device,
                "--workers", "0"])
    if "resuming after epoch 0, batch" not in out2:
        fail("the resumed run did not continue inside epoch 1", out2)
    diff = same(metrics(ref), metrics(d))
    if diff:
        fail("resumed run differs from the uninterrupted one: " + diff, out + out2)
    with open(os.path.join(ref, "model.safetensors"), "rb") as f:
        ref_weights = f.read()
    with open(os.path.join(d, "model.safetensors"), "rb") as f:
        if f.read() != ref_weights:
            fail("the resumed run's final weights differ from the uninterrupted run's")
    # Resuming a finished run trains nothing and keeps the results.
    run([ember, "train", "--resume", "--checkpoint-dir", d, "--device", args.device])
    diff = same(metrics(ref), metrics(d))
    if diff:
        fail("resuming a finished run changed it: " + diff)
    print("resume: ok, interrupted after %d progress line(s), same result" % len(lines))


def write_idx(path, magic, dims, payload):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", x) for x in dims) + payload)


def errors(ember, args, tmp):
    def one_line_error(cmd, rc, needle):
        out = run(cmd, expect_rc=rc)
        if needle not in out:
            fail("expected %r in the error of %s" % (needle, " ".join(cmd)), out)
        return out

    d = os.path.join(tmp, "e")
    one_line_error([ember, "train", "--model", "resnet"], 2, "--model: unknown value 'resnet'")
    one_line_error([ember, "train", "--device", "tpu"], 2, "--device: unknown device 'tpu'")
    one_line_error([ember, "train", "--batch-size", "0"], 2, "--batch-size must be at least 1")
    out = one_line_error([ember, "train", "--resume", "--checkpoint-dir", d], 1,
                         "no checkpoint in")
    # A real checkpoint, then a new run over it and a resume as another model.
    run(base_args(ember, d, args) + ["--epochs", "1", "--train-samples", "64", "--test-samples",
                                     "32", "--batch-size", "32"])
    ck = os.path.join(d, "checkpoint.safetensors")
    with open(ck, "rb") as f:
        saved = f.read()
    one_line_error(base_args(ember, d, args) + ["--epochs", "1"], 1, "already holds a checkpoint")
    other = "cnn" if args.model == "mlp" else "mlp"
    one_line_error([ember, "train", "--resume", "--checkpoint-dir", d, "--model", other], 1,
                   "is a checkpoint of model '%s'" % args.model)
    with open(ck, "rb") as f:
        if f.read() != saved:
            fail("a rejected command changed the saved checkpoint")
    # Missing and corrupted data.
    empty = os.path.join(tmp, "nodata")
    os.makedirs(empty)
    one_line_error([ember, "train", "--data", empty, "--checkpoint-dir", os.path.join(tmp, "n1")],
                   1, "cannot read Fashion-MNIST")
    bad = os.path.join(tmp, "bad")
    os.makedirs(bad)
    n = 10
    for split, count in (("train", n), ("t10k", n)):
        write_idx(os.path.join(bad, split + "-images-idx3-ubyte.gz"), 0x0803, [count, 28, 28],
                  bytes(count * 784))
        write_idx(os.path.join(bad, split + "-labels-idx1-ubyte.gz"), 0x0801, [count + 1],
                  bytes(count + 1))
    out = one_line_error([ember, "train", "--data", bad, "--checkpoint-dir",
                          os.path.join(tmp, "n2")], 1, "cannot read Fashion-MNIST")
    if "labels" not in out and "images" not in out:
        fail("the error does not say which file disagrees", out)
    print("errors: ok")


def rewrite_checkpoint(path, edit=None, **changes):
    """Rewrites an ember checkpoint with its metadata entries set from changes, edit(tensors)
    applied to its {name: (dtype, shape, bytes)}, and a checksum that matches again
    (io::save_checkpoint's CRC32: the metadata entries in key order, then each tensor's name,
    dtype and dims, then the data, strings NUL-ended)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__")
    data = raw[8 + n:]
    tensors = {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
               for k, v in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])}
    meta.update({k: str(v) for k, v in changes.items()})
    if edit:
        edit(tensors)
    crc = 0
    def put(text):
        nonlocal crc
        crc = zlib.crc32(text.encode() + b"\0", crc)
    for k in sorted(meta):
        if k != "ember.checksum":
            put(k)
            put(meta[k])
    for name, (dtype, shape, _) in tensors.items():
        put(name)
        put(dtype)
        for d in shape:
            put(str(d))
        put("")
    out, body = {}, b""
    for name, (dtype, shape, b) in tensors.items():
        crc = zlib.crc32(b, crc)
        out[name] = {"dtype": dtype, "shape": shape,
                     "data_offsets": [len(body), len(body) + len(b)]}
        body += b
    meta["ember.checksum"] = "crc32:%08x" % crc
    out["__metadata__"] = meta
    text = json.dumps(out, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + body)


def wait_for(p, prefix):
    """Reads p's output until a line starting with prefix; returns what it read."""
    lines = []
    for line in p.stdout:
        lines.append(line)
        if line.startswith(prefix):
            break
    return "".join(lines)


def cli(ember, args, tmp):
    """The command line's limits, the directory lock, SIGTERM, checkpoint value checks and the
    reports rewritten on resume."""
    def refused(cmd, rc, needle):
        out = run(cmd, expect_rc=rc)
        if needle not in out:
            fail("expected %r in the error of %s" % (needle, " ".join(cmd)), out)
        if "internal error" in out or "epoch 1/" in out:
            fail("%s: not a clean refusal before training" % " ".join(cmd), out)
        return out

    d = os.path.join(tmp, "c")
    t = [ember, "train", "--checkpoint-dir", d]
    for lr in ("inf", "nan", "1e308", "-1", "0"):
        refused(t + ["--lr", lr], 2, "--lr must be a finite number above 0")
    refused(t + ["--lr", "1e999"], 2, "--lr: 1e999 is out of range")
    refused(t + ["--threads", "100000"], 2, "--threads must be at most 1024, got 100000")
    refused(t + ["--threads", "4294967297"], 2, "--threads must be at most 1024")
    refused(t + ["--workers", "2147483648"], 2, "--workers must be at most 4096")
    refused(t + ["--workers", "99999999999999999999"], 2, "--workers: 99999999999999999999 is "
            "out of range")
    refused(t + ["--seed", "18446744073709551616"], 2, "--seed expects an integer from 0 to")
    refused(t + ["--seed", "-1"], 2, "--seed expects an integer")
    # Found before any data is read or any training done.
    refused([ember, "train", "--checkpoint-dir", "/proc/self/ember-run"], 1,
            "cannot create the checkpoint directory /proc/self/ember-run")
    refused([ember, "train", "--checkpoint-dir", "/proc/self"], 1,
            "cannot write to the checkpoint directory /proc/self")
    if os.path.exists(d):
        fail("a refused command created " + d)

    # Threads that cannot be created (an address-space limit): a clear error, no hang.
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    small = ["--epochs", "1", "--train-samples", "256", "--test-samples", "64", "--device",
             "cpu"]
    for flags, needle in ((["--workers", "3000"], "[DataLoader] could not start worker"),
                          (["--threads", "1000", "--workers", "0"],
                           "[parallel_for] could not start thread")):
        cmd = [ember, "train", "--checkpoint-dir", os.path.join(tmp, "nothreads")] + small + flags
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=cap, timeout=120)
        except subprocess.TimeoutExpired:
            fail("%s hung under an address-space limit" % " ".join(cmd))
        if p.returncode != 1 or needle not in p.stdout or "internal error" in p.stdout:
            fail("%s exited %d without %r" % (" ".join(cmd), p.returncode, needle), p.stdout)
        shutil.rmtree(os.path.join(tmp, "nothreads"), ignore_errors=True)

    # A run holds its directory: a second one is refused naming it; SIGTERM stops it like
    # Ctrl-C; the lock its process left behind is taken over by the next run.
    common = ["--epochs", "2", "--train-samples", "20000", "--test-samples", "64",
              "--batch-size", "16", "--seed", "18446744073709551615"]
    p = subprocess.Popen(base_args(ember, d, args)[:-4] + ["--workers", "1"] + common,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = wait_for(p, "epoch 1/2  batch")
    p.send_signal(signal.SIGSTOP)  # it keeps its lock, and stays inside epoch 1
    refused(base_args(ember, d, args) + common, 1,
            "is in use by another ember train (pid %d)" % p.pid)
    p.send_signal(signal.SIGTERM)
    p.send_signal(signal.SIGCONT)
    out += p.stdout.read()
    if p.wait() != 143 or "interrupted (SIGTERM): saved" not in out:
        fail("SIGTERM did not save a checkpoint and exit 143 (exit %d)" % p.returncode, out)
    out = run([ember, "train", "--resume", "--checkpoint-dir", d, "--device", args.device])
    if "resuming after epoch 0, batch" not in out or len(metrics(d)) != 2:
        fail("the run stopped by SIGTERM did not resume to its end", out)

    # Values in a checkpoint with a valid checksum are checked, naming file and key.
    ck = os.path.join(d, "checkpoint.safetensors")
    with open(ck, "rb") as f:
        good = f.read()
    for key, value, needle in (
            ("epochs", "abc", "'epochs' is 'abc', expected an integer"),
            ("epochs", "3 apples", "'epochs' is '3 apples', expected an integer"),
            ("epoch", "7", "'epoch' is '7', expected an integer from 0 to 2"),
            ("batch_size", "-4", "'batch_size' is '-4'"),
            ("lr", "inf", "'lr' is 'inf'"),
            ("seed", "x", "'seed' is 'x'"),
            ("loss_sum", "nan", "'loss_sum' is 'nan'"),
            ("scheduler", "warp", "'scheduler' is 'warp', expected one of onecycle"),
            ("optimizer", "adamw", "saved by another optimizer")):
        rewrite_checkpoint(ck, **{key: value})
        out = refused([ember, "train", "--resume", "--checkpoint-dir", d], 1, needle)
        if ck not in out:
            fail("the error does not name the checkpoint", out)
        with open(ck, "wb") as f:
            f.write(good)
    # A kill after the last checkpoint but before the reports: --resume rewrites them from the
    # checkpoint's history.
    want = metrics(d)
    os.remove(os.path.join(d, "chart.svg"))
    os.remove(os.path.join(d, "metrics.csv"))
    with open(os.path.join(d, "metrics.jsonl"), "r+") as f:
        first = f.readline()
        f.seek(0)
        f.truncate()
        f.write(first)
    run([ember, "train", "--resume", "--checkpoint-dir", d])
    if metrics(d) != want:
        fail("--resume did not rewrite metrics.jsonl: %r" % metrics(d))
    with open(os.path.join(d, "metrics.csv")) as f:
        if len(f.read().strip().split("\n")) != 3:
            fail("--resume did not rewrite metrics.csv")
    if not os.path.getsize(os.path.join(d, "chart.svg")) > 0:
        fail("--resume did not rewrite chart.svg")
    print("cli: ok")


def crash(ember, args, tmp):
    """SIGKILL at chosen writes/renames, SIGINT and SIGTERM at seeded-random moments, each
    followed by --resume (or a fresh start when no checkpoint was written yet): the final model
    is byte-identical to an uninterrupted run's and the reports are complete."""
    import random
    import time
    common = ["--epochs", "2", "--train-samples", "192", "--test-samples", "64",
              "--batch-size", "32"]
    ref = os.path.join(tmp, "ref")
    args.shim = os.path.abspath(args.shim)
    env = dict(os.environ, LD_PRELOAD=args.shim, EMBER_KILL_COUNT=os.path.join(tmp, "count"))
    run(base_args(ember, ref, args) + common, env=env)
    with open(os.path.join(tmp, "count")) as f:
        kinds = f.read().strip()  # one letter per write (W) or rename (R)
    events = len(kinds)
    with open(os.path.join(ref, "model.safetensors"), "rb") as f:
        want = f.read()
    want_metrics = metrics(ref)

    def finish(d, out):
        """Resumes (or restarts) d until the run completes, then checks it."""
        resumed = os.path.exists(os.path.join(d, "checkpoint.safetensors"))
        cmd = ([ember, "train", "--resume", "--checkpoint-dir", d, "--device", args.device]
               if resumed else base_args(ember, d, args) + common)
        out += run(cmd)
        with open(os.path.join(d, "model.safetensors"), "rb") as f:
            if f.read() != want:
                fail("%s: the final model differs from the uninterrupted run's" % d, out)
        diff = same(want_metrics, metrics(d))
        with open(os.path.join(d, "metrics.csv")) as f:
            rows = len(f.read().strip().split("\n"))
        if diff or rows != 3 or not os.path.getsize(os.path.join(d, "chart.svg")) > 0:
            fail("%s: incomplete reports after resuming (%s, %d csv rows)" % (d, diff, rows), out)

    # Just before every write (a file half written) and every rename (a file complete under its
    # temporary name) of the whole run.
    rng = random.Random(17)
    renames = [i + 1 for i, k in enumerate(kinds) if k == "R"]
    if len(renames) < 6:
        fail("expected a rename for every checkpoint and report, saw: " + kinds)
    points = range(1, events + 1)
    for n in points:
        d = os.path.join(tmp, "kill%d" % n)
        env = dict(os.environ, LD_PRELOAD=args.shim, EMBER_KILL_AT=str(n))
        p = subprocess.run(base_args(ember, d, args) + common, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != -signal.SIGKILL:
            fail("the run to be killed at write %d of %d exited %d" % (n, events, p.returncode),
                 p.stdout)
        finish(d, p.stdout)
        shutil.rmtree(d)

    # SIGINT and SIGTERM at seeded-random moments, up to three per run.
    for trial in range(3):
        d = os.path.join(tmp, "sig%d" % trial)
        out = ""
        for _ in range(3):
            resumed = os.path.exists(os.path.join(d, "checkpoint.safetensors"))
            cmd = ([ember, "train", "--resume", "--checkpoint-dir", d, "--device", args.device]
                   if resumed else base_args(ember, d, args) + common)
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
            time.sleep(rng.uniform(0.05, 1.0))
            sig = rng.choice([signal.SIGINT, signal.SIGTERM])
            p.send_signal(sig)
            text = p.communicate()[0]
            out += text
            # Stopped by the handler (128 + signal), finished first (0), or stopped by the
            # signal's default action before the handler was installed: never an abort.
            if p.returncode not in (0, 128 + sig, -sig):
                fail("run %d: %s exited %d" % (trial, sig.name, p.returncode), text)
            if p.returncode == 0:
                break
        finish(d, out)
    print("crash: ok, %d kill points of %d writes and renames, 3 signalled runs" %
          (len(points), events))


def amp_errors(ember, args, tmp):
    d = os.path.join(tmp, "fp16")
    args.amp = "fp16"
    out = run(base_args(ember, d, args) + ["--epochs", "1", "--train-samples", "64",
                                           "--test-samples", "32", "--batch-size", "16"])
    if "amp fp16 with loss scaling" not in out:
        fail("the run does not report fp16 with loss scaling", out)
    ck = os.path.join(d, "checkpoint.safetensors")
    with open(ck, "rb") as f:
        saved = f.read()
    n = struct.unpack("<Q", saved[:8])[0]
    names = json.loads(saved[8:8 + n])
    for key in ("scaler.scale", "scaler._growth_tracker", "scaler.growth_interval"):
        if key not in names:
            fail("checkpoint has no %s entry" % key)
    if names["__metadata__"].get("amp") != "fp16":
        fail("checkpoint metadata has no amp=fp16")
    p = subprocess.run([ember, "train", "--resume", "--checkpoint-dir", d, "--amp", "bf16"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 1 or "is a run with --amp fp16" not in p.stdout:
        fail("resume with another --amp was not refused", p.stdout)
    with open(ck, "rb") as f:
        if f.read() != saved:
            fail("a refused resume changed the checkpoint")
    # The scaler's state missing, or malformed: refused naming the file, nothing written.
    def drop(t):
        for k in [k for k in t if k.startswith("scaler.")]:
            del t[k]
    def negative_scale(t):
        t["scaler.scale"] = ("F64", [], struct.pack("<d", -1.0))
    for edit in (drop, negative_scale):
        shutil.rmtree(d + "_bad", ignore_errors=True)
        shutil.copytree(d, d + "_bad")
        bad = os.path.join(d + "_bad", "checkpoint.safetensors")
        rewrite_checkpoint(bad, edit)
        with open(bad, "rb") as f:
            before = f.read()
        p = subprocess.run([ember, "train", "--resume", "--checkpoint-dir", d + "_bad"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 1 or bad not in p.stdout or "GradScaler state" not in p.stdout:
            fail("a checkpoint with %s was not refused naming the file" % edit.__name__, p.stdout)
        with open(bad, "rb") as f:
            if f.read() != before:
                fail("a refused resume (%s) changed the checkpoint" % edit.__name__)
    print("amp_errors: ok")


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=["learns", "resume", "errors", "cli", "crash",
                                             "amp_errors"])
    ap.add_argument("--shim", help="kill_shim.so, for the crash scenario")
    ap.add_argument("ember")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--model", default="mlp")
    ap.add_argument("--amp", default=None)
    ap.add_argument("--train", type=int, default=4000)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--min-accuracy", type=float, default=0.6)
    args = ap.parse_args()
    if not os.path.isdir(DATA):
        fail(DATA + " is missing: scripts/install-deps.sh installs dataset-fashion-mnist")
    tmp = tempfile.mkdtemp(prefix="ember-train-")
    try:
        {"learns": learns, "resume": resume, "errors": errors, "cli": cli,
         "crash": crash, "amp_errors": amp_errors}[args.scenario](args.ember, args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
