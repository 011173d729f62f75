#!/usr/bin/env python3
"""PyTorch timings of the workloads ember's GPU benchmarks measure, printed in the same table
format (bench/gpu/gpu_bench.h) and with the same workload names, so scripts/gpu-check.sh can show
ember and PyTorch side by side.

  python3 bench/gpu/torch_reference.py [--device cuda:0] [--quick]

Without PyTorch or without a GPU it says so and exits 0.
"""
import argparse
import statistics
import sys
import time


def row(name, value, unit, note=""):
    print("%-44s %12.3f %10s %s" % (name, value, unit, note), flush=True)


def median_ms(torch, fn, iters=20, reps=5):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t0) * 1e3 / iters)
    return statistics.median(runs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--quick", action="store_true", help="smaller sizes (a quick check)")
    args = p.parse_args()
    try:
        import torch
    except ImportError:
        print("torch_reference: PyTorch is not installed; nothing measured")
        return 0
    if not torch.cuda.is_available():
        print("torch_reference: no CUDA device is available to PyTorch; nothing measured")
        return 0
    dev = torch.device(args.device)
    torch.cuda.set_device(dev)
    n = (64 << 20) if not args.quick else (4 << 20)
    mn = "64M" if not args.quick else "4M"
    nbytes = 4 * n
    print("\nPyTorch %s, CUDA %s, %s" % (torch.__version__, torch.version.cuda,
                                        torch.cuda.get_device_name(dev)))
    print("%-44s %12s %10s %s" % ("workload", "value", "unit", "note"))

    # Element-wise bandwidth: bytes moved per element (reads + writes).
    a = torch.full((n,), 1.5, device=dev)
    b = torch.full((n,), 2.5, device=dev)
    out = torch.empty_like(a)
    for name, fn, bytes_per in [
        ("add f32 " + mn, lambda: torch.add(a, b, out=out), 12),
        ("mul f32 " + mn, lambda: torch.mul(a, b, out=out), 12),
        ("relu f32 " + mn, lambda: torch.relu(a), 8),
        ("cast f32->f16 " + mn, lambda: a.to(torch.float16), 6),
        ("copy D2D f32 " + mn, lambda: out.copy_(a), 8),
        ("sum f32 " + mn, lambda: a.sum(), 4),
    ]:
        ms = median_ms(torch, fn)
        row(name, bytes_per * n / ms / 1e6, "GB/s")

    rows = 4096 if not args.quick else 1024
    x = torch.randn(rows, 4096, device=dev)
    ms = median_ms(torch, lambda: torch.softmax(x, dim=-1))
    row("softmax rows %dx4096 f32" % rows, 8 * x.numel() / ms / 1e6, "GB/s")

    m = 4096 if not args.quick else 1024
    flops = 2 * m ** 3
    for label, dtype, tf32 in [("fp32", torch.float32, False), ("tf32", torch.float32, True),
                               ("bf16", torch.bfloat16, False), ("fp16", torch.float16, False)]:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        A = torch.randn(m, m, device=dev, dtype=dtype)
        B = torch.randn(m, m, device=dev, dtype=dtype)
        ms = median_ms(torch, lambda: A @ B, iters=10)
        row("matmul %d^3 %s" % (m, label), flops / ms / 1e9, "TFLOP/s")
    torch.backends.cuda.matmul.allow_tf32 = False

    size = "256 MiB" if not args.quick else "16 MiB"
    dev_buf = torch.empty(n, device=dev)
    for kind, pinned in [("pageable", False), ("pinned", True)]:
        host = torch.full((n,), 1.5, pin_memory=pinned)
        ms = median_ms(torch, lambda: dev_buf.copy_(host, non_blocking=pinned), iters=5)
        row("H2D %s %s" % (kind, size), nbytes / ms / 1e6, "GB/s")
        ms = median_ms(torch, lambda: host.copy_(dev_buf, non_blocking=pinned), iters=5)
        row("D2H %s %s" % (kind, size), nbytes / ms / 1e6, "GB/s")

    elems = 1 << 18  # 1 MiB of floats
    ms = median_ms(torch, lambda: torch.empty(elems, device=dev), iters=1000)
    row("alloc+free 1 MiB (cached)", ms * 1e3, "us")

    def uncached():
        t = torch.empty(elems, device=dev)
        del t
        torch.cuda.empty_cache()

    ms = median_ms(torch, uncached, iters=100)
    row("alloc+free 1 MiB (cudaMalloc)", ms * 1e3, "us", "empty_cache() each time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
