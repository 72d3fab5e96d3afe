#!/usr/bin/python3
"""Plain-PyTorch baseline for scripts/bench/train_throughput.sh (CPU, fp32) and
scripts/bench/gpu_backlog.sh (CUDA, --bf16 --sdpa: bf16 autocast over fp32
weights, flash attention): the same Llama shape as nss_hpc (RMSNorm, GQA, RoPE,
SwiGLU), per-block activation checkpointing, AdamW, random tokens. Prints one
JSON line with tokens/s (median of the timed steps)."""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Block(torch.nn.Module):
    def __init__(self, hidden, intermediate, heads, kv_heads, sdpa=False):
        super().__init__()
        self.sdpa = sdpa
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.input_norm = torch.nn.Parameter(torch.ones(hidden))
        self.post_norm = torch.nn.Parameter(torch.ones(hidden))
        self.q = torch.nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k = torch.nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v = torch.nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o = torch.nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.gate = torch.nn.Linear(hidden, intermediate, bias=False)
        self.up = torch.nn.Linear(hidden, intermediate, bias=False)
        self.down = torch.nn.Linear(intermediate, hidden, bias=False)

    @staticmethod
    def norm(x, weight):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return weight * (x.float() * torch.rsqrt(variance + 1e-5)).to(x.dtype)

    @staticmethod
    def rotate(x, cos, sin):
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        h = self.norm(x, self.input_norm)
        q = self.q(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        if self.sdpa:
            q, k, v = (t.to(torch.get_autocast_dtype("cuda")) for t in (q, k, v))
            attn = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:
            groups = self.heads // self.kv_heads
            k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
            scores = (q @ k.transpose(-1, -2)) / self.head_dim ** 0.5 + mask
            attn = torch.softmax(scores.float(), dim=-1).to(q.dtype) @ v
        x = x + self.o(attn.transpose(1, 2).reshape(b, s, -1))
        h = self.norm(x, self.post_norm)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(torch.nn.Module):
    def __init__(self, vocab, hidden, intermediate, layers, heads, kv_heads, sdpa=False, tied=False,
                 recompute=True):
        super().__init__()
        self.recompute = recompute
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.blocks = torch.nn.ModuleList(
            Block(hidden, intermediate, heads, kv_heads, sdpa) for _ in range(layers))
        self.norm = torch.nn.Parameter(torch.ones(hidden))
        self.head = torch.nn.Linear(hidden, vocab, bias=False)
        if tied:
            self.head.weight = self.embed.weight
        self.head_dim = hidden // heads

    def forward(self, tokens, targets):
        s, device = tokens.shape[1], tokens.device
        inv = 1.0 / (10000.0 ** (torch.arange(0, self.head_dim, 2, device=device).float() / self.head_dim))
        angles = torch.outer(torch.arange(s, device=device).float(), inv)
        angles = torch.cat((angles, angles), dim=-1)
        cos, sin = angles.cos(), angles.sin()
        mask = torch.full((s, s), float("-inf"), device=device).triu(1)
        x = self.embed(tokens)
        for block in self.blocks:
            x = checkpoint(block, x, cos, sin, mask, use_reentrant=False) if self.recompute \
                else block(x, cos, sin, mask)
        logits = self.head(Block.norm(x, self.norm))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1))


def profile_one_step(model, opt, a, device):
    """Kernel time by operator for one step (torch.profiler), to stderr."""
    import sys
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    batches = [torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=device) for _ in range(a.accum)]
    with profile(activities=activities) as prof:
        for tokens in batches:
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=a.bf16):
                loss = model(tokens[:, :-1], tokens[:, 1:]) / a.accum
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize()
    key = "self_cuda_time_total" if device.type == "cuda" else "self_cpu_time_total"
    print(prof.key_averages().table(sort_by=key, row_limit=a.profile), file=sys.stderr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vocab", type=int, default=258)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--intermediate", type=int, default=688)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast over fp32 weights")
    p.add_argument("--sdpa", action="store_true", help="F.scaled_dot_product_attention (causal, GQA)")
    p.add_argument("--tied", action="store_true", help="tie the head to the embedding")
    p.add_argument("--accum", type=int, default=1, help="micro-batches of --batch per step")
    p.add_argument("--no-recompute", action="store_true", help="keep every block's activations")
    p.add_argument("--profile", type=int, default=0, metavar="ROWS",
                   help="after timing, profile one step and print its top ROWS kernels to stderr")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    device = torch.device(a.device)
    model = Llama(a.vocab, a.hidden, a.intermediate, a.layers, a.heads, a.kv_heads, a.sdpa,
                  a.tied, not a.no_recompute).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    times = []
    for step in range(a.warmup + a.steps):
        batches = [torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=device) for _ in range(a.accum)]
        sync()
        start = time.perf_counter()
        for tokens in batches:
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=a.bf16):
                loss = model(tokens[:, :-1], tokens[:, 1:]) / a.accum
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync()
        if step >= a.warmup:
            times.append(time.perf_counter() - start)
    if a.profile:
        profile_one_step(model, opt, a, device)
    seconds = statistics.median(times)
    print(json.dumps({"tokens_per_s": a.accum * a.batch * a.seq / seconds, "step_time_s": seconds,
                      "torch": torch.__version__, "threads": torch.get_num_threads(),
                      "device": str(device)}))


if __name__ == "__main__":
    main()
