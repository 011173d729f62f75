#!/usr/bin/env python3
"""`ember train` written in PyTorch: the same Fashion-MNIST run, for a side-by-side comparison
(bench/gpu/train_compare.py runs both).

  python3 bench/gpu/torch_train.py --data DIR [--model cnn|mlp] [--epochs N] [--batch-size N]
                                   [--device cuda|cpu] [--workers N] [--seed S] [--lr X]
                                   [--train-samples N] [--test-samples N] [--out-dir DIR]

The same as tools/ember/train.cpp with its defaults:
- data: the four IDX files in DIR (raw or .gz), pixels / 255 normalised with mean 0.2860 and std
  0.3530 per sample in the Dataset; shuffled training batches from a DataLoader with --workers
  workers (ember's default 1; persistent), pinned memory on a GPU and non_blocking copies; test
  batches of 500 without workers;
- models: cnn = conv 1->32 3x3 (no bias) + BatchNorm + ReLU + maxpool 2, conv 32->64 the same,
  flatten, dropout 0.25, linear 3136->128 + ReLU, dropout 0.25, linear 128->10; mlp = flatten,
  784->256 + ReLU, dropout 0.2, 256->128 + ReLU, 128->10; PyTorch's initialisation;
- SGD with Nesterov momentum 0.9, weight decay 5e-4, lr 0.05, OneCycleLR over the whole run
  (PyTorch's defaults, which ember's OneCycleLR shares) stepped every batch; cross-entropy;
- the loop: running loss and accuracy summed on the device, read every tenth batch (ember's
  progress line does the same); samples/s counts the training loop only, as ember's does;
- float32 throughout without TensorFloat-32, as ember computes by default: PyTorch's cuDNN
  convolutions would round to TF32 (torch.backends.cudnn.allow_tf32 is true by default);
  --cudnn-tf32 keeps PyTorch's default.

Prints one line per epoch and writes DIR/metrics.jsonl (ember's fields) and DIR/summary.json
(peak device memory, peak RSS of this process). Exit 3 when PyTorch is missing.
"""
import argparse
import gzip
import json
import os
import resource
import sys
import time

MEAN, STD = 0.2860, 0.3530


def read_idx(root, name):
    """The IDX file root/name (or name.gz) as (dims, bytes)."""
    path = os.path.join(root, name)
    if os.path.isfile(path):
        with open(path, "rb") as f:
            data = f.read()
    elif os.path.isfile(path + ".gz"):
        with gzip.open(path + ".gz", "rb") as f:
            data = f.read()
    else:
        raise SystemExit("torch_train: %s(.gz) not found" % path)
    if data[:2] != b"\0\0" or data[2] != 0x08:
        raise SystemExit("torch_train: %s is not an unsigned-byte IDX file" % path)
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return dims, data[4 + 4 * ndim:]


class FashionMNIST:
    """A map-style dataset of the IDX files (a module-level class, so that loader workers started
    by spawn or forkserver can unpickle it): (1, 28, 28) float32 normalised images and labels."""

    def __init__(self, root, train, limit):
        import torch
        prefix = "train" if train else "t10k"
        dims, images = read_idx(root, prefix + "-images-idx3-ubyte")
        _, labels = read_idx(root, prefix + "-labels-idx1-ubyte")
        self.images = torch.frombuffer(bytearray(images), dtype=torch.uint8).view(*dims)
        self.labels = torch.frombuffer(bytearray(labels), dtype=torch.uint8).long()
        if limit:
            self.images, self.labels = self.images[:limit], self.labels[:limit]

    def __len__(self):
        return self.labels.numel()

    def __getitem__(self, i):
        x = self.images[i].unsqueeze(0).float().div_(255).sub_(MEAN).div_(STD)
        return x, self.labels[i]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--model", choices=("cnn", "mlp"), default="cnn")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--device", default="cuda")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--train-samples", type=int, default=0)
    p.add_argument("--test-samples", type=int, default=0)
    p.add_argument("--out-dir", default="")
    p.add_argument("--amp", choices=("off", "bf16", "fp16"), default="off",
                   help="autocast around forward and loss (fp16 with a GradScaler), as ember's "
                   "--amp")
    p.add_argument("--cudnn-tf32", action="store_true",
                   help="let cuDNN round float32 convolutions to TF32 (PyTorch's default)")
    args = p.parse_args()
    try:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
    except ImportError:
        print("torch_train: PyTorch is not installed")
        return 3

    def make_model(name):
        if name == "mlp":
            return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2),
                                 nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
        return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32),
                             nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64),
                             nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.25),
                             nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25),
                             nn.Linear(128, 10))

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("torch_train: no CUDA device is available to PyTorch")
        return 1
    gpu = device.type == "cuda"
    torch.backends.cudnn.allow_tf32 = args.cudnn_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    train_set = FashionMNIST(args.data, True, args.train_samples)
    test_set = FashionMNIST(args.data, False, args.test_samples)
    gen = torch.Generator()
    gen.manual_seed(args.seed)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.workers, persistent_workers=args.workers > 0,
                              pin_memory=gpu, generator=gen)
    test_loader = DataLoader(test_set, batch_size=500, pin_memory=gpu)
    batches = len(train_loader)

    torch.manual_seed(args.seed)
    model = make_model(args.model).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True,
                          weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=args.epochs * batches)
    print("torch train: %s on Fashion-MNIST (%d train, %d test) on %s%s\n"
          "  sgd lr %g, onecycle schedule, batch %d, %d epochs, seed %d, torch %s, cuDNN TF32 %s,"
          " amp %s"
          % (args.model, len(train_set), len(test_set), device,
             " (%s)" % torch.cuda.get_device_name(device) if gpu else "", args.lr,
             args.batch_size, args.epochs, args.seed, torch.__version__,
             "on" if args.cudnn_tf32 else "off", args.amp), flush=True)
    if gpu:
        torch.cuda.reset_peak_memory_stats(device)

    def evaluate():
        model.eval()
        loss_sum = torch.zeros((), dtype=torch.float64, device=device)
        correct = torch.zeros((), dtype=torch.int64, device=device)
        seen = 0
        with torch.no_grad():
            for x, y in test_loader:
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                logits = model(x)
                loss_sum += F.cross_entropy(logits, y).double() * y.size(0)
                correct += logits.argmax(1).eq(y).sum()
                seen += y.size(0)
        model.train()
        n = max(seen, 1)
        return loss_sum.item() / n, correct.item() / n

    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.amp)
    scaler = torch.amp.GradScaler(device.type, enabled=args.amp == "fp16")
    history = []
    start = time.perf_counter()
    step = 0
    for epoch in range(args.epochs):
        loss_sum = torch.zeros((), dtype=torch.float64, device=device)
        correct = torch.zeros((), dtype=torch.float64, device=device)
        seen, done = 0, 0
        t0 = time.perf_counter()
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast(device.type, dtype=amp_dtype or torch.float32,
                                enabled=amp_dtype is not None):
                logits = model(x)
                loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            sched.step()
            step += 1
            done += 1
            with torch.no_grad():
                loss_sum += loss.detach().double() * y.size(0)
                correct += logits.argmax(1).eq(y).sum().double()
            seen += y.size(0)
            if done % 10 == 0 or done == batches:
                loss_sum.item()  # ember's progress line reads the running loss here
        train_secs = time.perf_counter() - t0
        train_loss, train_acc = loss_sum.item() / seen, correct.item() / seen
        test_loss, test_acc = evaluate()
        m = {"epoch": epoch + 1, "step": step, "train_loss": train_loss,
             "train_accuracy": train_acc, "test_loss": test_loss, "test_accuracy": test_acc,
             "lr": opt.param_groups[0]["lr"], "samples_per_s": seen / train_secs,
             "elapsed_s": time.perf_counter() - start}
        history.append(m)
        print("epoch %d/%d  train loss %.4f acc %.2f%%  test loss %.4f acc %.2f%%  %.0f samples/s"
              "  %.1fs" % (m["epoch"], args.epochs, train_loss, 100 * train_acc, test_loss,
                           100 * test_acc, m["samples_per_s"], m["elapsed_s"]), flush=True)
    peak_dev = torch.cuda.max_memory_allocated(device) if gpu else 0
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print("done: test accuracy %.2f%%, peak device memory %.1f MiB, peak RSS %.1f MiB"
          % (100 * history[-1]["test_accuracy"], peak_dev / 2**20, peak_rss / 2**20))
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
        with open(os.path.join(args.out_dir, "metrics.jsonl"), "w") as f:
            for m in history:
                f.write(json.dumps(m) + "\n")
        with open(os.path.join(args.out_dir, "summary.json"), "w") as f:
            json.dump({"framework": "pytorch", "torch": torch.__version__,
                       "peak_device_bytes": peak_dev, "peak_rss_bytes": peak_rss}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
