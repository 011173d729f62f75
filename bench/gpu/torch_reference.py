#!/usr/bin/env python3
"""PyTorch timings of every workload in bench/gpu/workloads.txt (all sections), the list ember's
bench_cuda_* programs time too, printed in their row format (bench/gpu/gpu_bench.h) under the same
names, so bench/gpu/side_by_side.py can put each row next to ember's.

  python3 bench/gpu/torch_reference.py [--device cuda:0] [--list] [--smoke] [--quick]
                                       [--filter TEXT] [--table FILE]

  --list    print the workloads and check that every op is known here (no PyTorch needed)
  --smoke   every workload once at a tiny size (checks the code; --device cpu works)
  --quick   fewer timed runs (3 runs of a quarter of the calls)

Without PyTorch or without the device it says so and exits 0; an unknown op or a malformed table
exits 1.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ("f32", "f16", "bf16", "f64", "i64", "i32", "u8")
UNITS = ("GB/s", "TFLOP/s", "us")


class Workload:
    def __init__(self, section, cols, line):
        self.section = section
        self.name, self.op, self.dtype, shape, self.unit, work, opts = cols
        self.line = line
        if not self.name or len(self.name) > 43:
            raise ValueError("a name must have 1 to 43 characters")
        if self.dtype not in DTYPES:
            raise ValueError("unknown dtype '%s'" % self.dtype)
        self.shape = [int(d) for d in shape.split("x")]
        if self.unit not in UNITS:
            raise ValueError("unit must be GB/s, TFLOP/s or us")
        if self.unit == "us":
            if work != "-":
                raise ValueError("a time (us) has no work column: use -")
            self.work = 0.0
        else:
            if len(work) < 2 or not work.endswith("n"):
                raise ValueError("work must be 'K n' (e.g. 12n), got '%s'" % work)
            self.work = float(work[:-1])
        self.options = {}
        for o in opts.split():
            key, _, value = o.partition("=")
            self.options[key] = value

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def dims(self):
        text = self.options.get("dims", self.options.get("dim", ""))
        return [int(d) for d in text.split(",") if d]

    def dim(self):
        if "dim" not in self.options:
            raise ValueError("%s: needs dim=D" % self.name)
        return int(self.options["dim"])


def load_workloads(path):
    """Every row of the table, in order; raises ValueError naming the file and line."""
    rows, names, section = [], set(), None
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            where = "%s:%d: " % (path, no)
            if text.startswith("["):
                if not text.endswith("]"):
                    raise ValueError(where + "bad section header")
                section = text[1:-1]
                continue
            cols = [c.strip() for c in text.split("|")]
            if len(cols) != 7:
                raise ValueError(where + "expected 7 columns separated by '|', got %d" % len(cols))
            if section is None:
                raise ValueError(where + "a row before the first [section]")
            if cols[0] in names:
                raise ValueError(where + "duplicate " + cols[0])
            names.add(cols[0])
            if section == "ember_bench":  # `ember bench`'s own rows (conv2d, training steps)
                continue
            try:
                rows.append(Workload(section, cols, no))
            except ValueError as e:
                raise ValueError(where + str(e)) from None
    return rows


def row(name, value, unit, note=""):
    print("%-44s %12.3f %10s %s" % (name, value, unit, note), flush=True)


# ---- the ops: each builds its inputs and returns the call to time ------------------------------

def make_ops(torch, dev):
    tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
           "f64": torch.float64, "i64": torch.int64, "i32": torch.int32, "u8": torch.uint8}

    def inp(w, shape, transposed=False):
        dt = tdt[w.dtype]
        if transposed and "t" in w.options and len(shape) == 2:
            return torch.randn(shape[1], shape[0], device=dev, dtype=dt).t()
        return torch.randn(tuple(shape), device=dev, dtype=dt)

    def copy(w):
        a = inp(w, w.shape)
        out = torch.empty_like(a)
        return lambda: out.copy_(a)

    def binary(fn):
        def setup(w):
            a, b = inp(w, w.shape, True), inp(w, w.shape)
            return lambda: fn(a, b)
        return setup

    def unary(fn):
        def setup(w):
            a = inp(w, w.shape, True)
            return lambda: fn(a)
        return setup

    def mul_0d(w):
        a, s = inp(w, w.shape), inp(w, [])
        return lambda: torch.mul(a, s)

    def add_(w):
        a, b = inp(w, w.shape), inp(w, w.shape)
        return lambda: a.add_(b)

    def cast(w):
        a, to = inp(w, w.shape, True), tdt[w.options["to"]]
        return lambda: a.to(to)

    def reduction(fn):
        def setup(w):
            a, dims = inp(w, w.shape), w.dims()
            return lambda: fn(a, dims)
        return setup

    def along(fn):
        def setup(w):
            a, d = inp(w, w.shape), w.dim()
            return lambda: fn(a, d)
        return setup

    def product(w):
        s = w.shape
        if w.op == "bmm":
            if len(s) != 4:
                raise ValueError(w.name + ": bmm needs a shape of BxMxKxN")
            a, b = inp(w, [s[0], s[1], s[2]]), inp(w, [s[0], s[2], s[3]])
        else:
            if len(s) != 3:
                raise ValueError(w.name + ": matmul needs a shape of MxKxN")
            a, b = inp(w, [s[0], s[1]], True), inp(w, [s[1], s[2]])
        precision = w.options.get("precision", "highest")

        def call():
            torch.set_float32_matmul_precision(precision)
            return torch.matmul(a, b)
        return call

    def transfer(w):
        kind = w.options.get("host", "pageable")
        if kind not in ("pageable", "pinned"):
            raise ValueError(w.name + ": host must be pageable or pinned")
        pinned = kind == "pinned" and dev.type == "cuda"
        host = torch.full(w.shape, 1.5, dtype=tdt[w.dtype], pin_memory=pinned)
        buf = torch.empty(w.shape, dtype=tdt[w.dtype], device=dev)
        if w.op == "h2d":
            return lambda: buf.copy_(host, non_blocking=pinned)
        return lambda: host.copy_(buf, non_blocking=pinned)

    def alloc(w):
        shape, dt = w.shape, tdt[w.dtype]
        if "uncached" in w.options:
            def uncached():
                torch.empty(shape, dtype=dt, device=dev)  # freed at once, back to the cache
                if dev.type == "cuda":
                    torch.cuda.empty_cache()
            return uncached
        return lambda: torch.empty(shape, dtype=dt, device=dev)

    def red(name):
        def fn(a, dims):
            if not dims:
                return getattr(torch, name)(a)
            if name == "amax":
                return torch.amax(a, dim=dims)
            return getattr(torch, name)(a, dim=dims)
        return fn

    return {
        "copy": copy,
        "add": binary(torch.add),
        "mul": binary(torch.mul),
        "mul_0d": mul_0d,
        "add_": add_,
        "relu": unary(torch.relu),
        "exp": unary(torch.exp),
        "gelu": unary(torch.nn.functional.gelu),
        "contiguous": unary(lambda a: a.contiguous()),
        "cast": cast,
        "sum": reduction(red("sum")),
        "mean": reduction(red("mean")),
        "amax": reduction(red("amax")),
        "var": reduction(red("var")),
        "logsumexp": reduction(lambda a, dims: torch.logsumexp(a, dim=dims)),
        "argmax": along(lambda a, d: torch.argmax(a, dim=d)),
        "softmax": along(lambda a, d: torch.softmax(a, dim=d)),
        "log_softmax": along(lambda a, d: torch.log_softmax(a, dim=d)),
        "cumsum": along(lambda a, d: torch.cumsum(a, dim=d)),
        "matmul": product,
        "bmm": product,
        "h2d": transfer,
        "d2h": transfer,
        "alloc": alloc,
    }


# The ops make_ops defines, for --list without PyTorch.
KNOWN_OPS = ("copy", "add", "mul", "mul_0d", "add_", "relu", "exp", "gelu", "contiguous", "cast",
             "sum", "mean", "amax", "var", "logsumexp", "argmax", "softmax", "log_softmax",
             "cumsum", "matmul", "bmm", "h2d", "d2h", "alloc")


def median_ms(torch, dev, fn, iters, reps):
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    for _ in range(3):
        fn()
    sync()
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync()
        runs.append((time.perf_counter() - t0) * 1e3 / iters)
    return statistics.median(runs)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--table", default=os.path.join(HERE, "workloads.txt"))
    p.add_argument("--list", action="store_true")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--filter", default="")
    args = p.parse_args()
    try:
        rows = load_workloads(args.table)
    except (OSError, ValueError) as e:
        print("torch_reference: %s" % e, file=sys.stderr)
        return 1
    unknown = [w for w in rows if w.op not in KNOWN_OPS]
    for w in unknown:
        print("torch_reference: %s:%d: '%s' has op '%s', which this script does not know"
              % (args.table, w.line, w.name, w.op), file=sys.stderr)
    if args.list:
        for w in rows:
            print(w.name)
        return 1 if unknown else 0
    if unknown:
        return 1
    try:
        import torch
    except ImportError:
        print("torch_reference: PyTorch is not installed; nothing measured")
        return 0
    dev = torch.device(args.device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            print("torch_reference: no CUDA device is available to PyTorch; nothing measured")
            return 0
        torch.cuda.set_device(dev)
        name = torch.cuda.get_device_name(dev)
    else:
        name = "cpu"
    ops = make_ops(torch, dev)
    assert sorted(ops) == sorted(KNOWN_OPS), "KNOWN_OPS must list the ops make_ops defines"
    print("\nPyTorch %s, CUDA %s, %s%s" % (torch.__version__, torch.version.cuda, name,
                                          " (smoke run: tiny sizes, values mean nothing)"
                                          if args.smoke else ""))
    print("%-44s %12s %10s %s" % ("workload", "value", "unit", "note"))
    failed = 0
    section = None
    for w in rows:
        if args.filter and args.filter not in w.name:
            continue
        if w.section != section:
            section = w.section
            print("# [%s]" % section)
        iters, reps = int(w.options.get("iters", 20)), 5
        if args.smoke:
            cap = 4096 if len(w.shape) == 1 else 64 if len(w.shape) == 2 else 16
            w.shape = [min(d, cap) for d in w.shape]
            iters = reps = 1
        elif args.quick:
            iters, reps = max(1, iters // 4), 3
        try:
            ms = median_ms(torch, dev, ops[w.op](w), iters, reps)
        except Exception as e:  # report the row and go on with the others
            print("%-44s %12s %10s failed: %s" % (w.name, "-", w.unit, e), flush=True)
            failed += 1
            continue
        if w.unit == "us":
            row(w.name, ms * 1e3, "us")
        else:
            per_s = w.work * w.numel() / (ms * 1e-3)
            row(w.name, per_s / (1e9 if w.unit == "GB/s" else 1e12), w.unit, "%.4g ms" % ms)
    torch.set_float32_matmul_precision("highest")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
