"""The PyTorch twin of bench/gpu/gpt2.cpp: the same GPT-2 (nanoGPT-style,
F.scaled_dot_product_attention, tied output projection, AdamW), synthetic tokens, 5 warm-up and
20 timed steps; prints tokens/s, ms/step, MFU against 989 TFLOP/s and peak device memory, eager
and (--compile) torch.compile.

    python3 gpt2_torch.py [--model gpt2|gpt2-tiny] [--batch B] [--seq T] [--device cpu|cuda]
                          [--amp] [--compile] [--warmup N] [--steps N]
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PEAK_FLOPS = 989e12
CONFIGS = {
    "gpt2": dict(vocab_size=50304, context=1024, n_layer=12, n_head=12, n_embd=768),
    "gpt2-tiny": dict(vocab_size=256, context=64, n_layer=2, n_head=4, n_embd=64),
}


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        C = c["n_embd"]
        self.n_head = c["n_head"]
        self.ln_1, self.ln_2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.c_attn, self.attn_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        heads = lambda t: t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), is_causal=True)
        x = x + self.attn_proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.wpe = nn.Embedding(c["context"], c["n_embd"])
        self.h = nn.ModuleList([Block(c) for _ in range(c["n_layer"])])
        self.ln_f = nn.LayerNorm(c["n_embd"])
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * c["n_layer"]))
            elif p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02)
            elif "ln" not in name:
                nn.init.zeros_(p)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in self.h:
            x = block(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2", choices=sorted(CONFIGS))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--amp", action="store_true", help="bf16 autocast")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        print("gpt2_torch: no CUDA device, nothing to time")
        return
    torch.manual_seed(0)
    c = dict(CONFIGS[a.model], context=max(a.seq, CONFIGS[a.model]["context"]))
    model = GPT2(c).to(a.device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1,
                            fused=a.device == "cuda")
    run = torch.compile(model) if a.compile else model
    x = torch.randint(0, c["vocab_size"], (a.batch, a.seq), device=a.device)
    y = torch.randint(0, c["vocab_size"], (a.batch, a.seq), device=a.device)

    def step():
        with torch.autocast(a.device, dtype=torch.bfloat16, enabled=a.amp):
            loss = run(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    t_compile = time.perf_counter()
    for _ in range(a.warmup):
        step()
    sync()
    t_compile = time.perf_counter() - t_compile
    if a.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        loss = step()
    sync()
    s = time.perf_counter() - t0
    n = sum(p.numel() for p in model.parameters()) - model.wpe.weight.numel()
    flops_per_token = 6 * n + 12 * c["n_layer"] * a.seq * c["n_embd"]
    tokens_s = a.batch * a.seq * a.steps / s
    peak = torch.cuda.max_memory_allocated() / 2**30 if a.device == "cuda" else 0.0
    kind = "compile" if a.compile else "eager"
    print(f"torch-{kind} {a.model} {a.device} {'bf16' if a.amp else 'fp32'} B={a.batch} "
          f"T={a.seq}: {1e3 * s / a.steps:.2f} ms/step, {tokens_s:.0f} tokens/s, "
          f"MFU {100 * flops_per_token * tokens_s / PEAK_FLOPS:.1f}%, peak {peak:.2f} GiB, "
          f"loss {loss.item():.4f}, warm-up {t_compile:.1f} s")


if __name__ == "__main__":
    main()
