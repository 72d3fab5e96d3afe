#!/usr/bin/python3
"""Plain-PyTorch baseline for scripts/bench/train_throughput.sh and
scripts/bench/family_throughput.sh (CPU, fp32) and scripts/bench/gpu_backlog.sh
(CUDA, --bf16 --sdpa: bf16 autocast over fp32 weights, flash attention): the
same model as nss_hpc at the same shape, per-block activation checkpointing,
AdamW, random tokens. --family picks what the decoder computes, as Hugging Face
transformers does (docs/model.md, "Model families as data"); the default is
Llama (RMSNorm, GQA, RoPE, SwiGLU). Prints one JSON line with tokens/s (median
of the timed steps) and the parameter count."""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

# What each family computes beyond Llama (lib/arch/architecture.cpp's table):
# q/k/v biases (Qwen2), per-head q/k RMSNorm before RoPE (Qwen3, Gemma 3), and
# Gemma 3's RMSNorm times (1 + weight) in float32, sandwich norms (after
# attention, before and after the MLP), GeGLU (tanh GELU) and embeddings times
# sqrt(hidden). Which layers slide or skip RoPE is --layer-types.
FAMILIES = {
    "llama": {},
    "qwen2": {"qkv_bias": True},
    "mistral": {},
    "qwen3": {"qk_norm": True},
    "smollm3": {},
    "gemma3": {"qk_norm": True, "one_plus_norm": True, "sandwich": True, "gelu": True,
               "scaled_embedding": True},
}
LAYER_TYPES = ("full_attention", "sliding_attention", "full_attention_no_rope")
EPS = 1e-5  # model.rms_norm_eps's default


def rms_norm(x, weight, one_plus=False):
    if one_plus:  # Gemma3RMSNorm: normalised and scaled in float32, then cast
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + EPS)
                * (1.0 + weight.float())).type_as(x)
    variance = x.float().pow(2).mean(-1, keepdim=True)
    return weight * (x.float() * torch.rsqrt(variance + EPS)).to(x.dtype)


class Block(torch.nn.Module):
    def __init__(self, hidden, intermediate, heads, kv_heads, sdpa=False, head_dim=0,
                 query_pre_attn_scalar=0.0, qkv_bias=False, qk_norm=False, one_plus_norm=False,
                 sandwich=False, gelu=False):
        super().__init__()
        self.sdpa, self.gelu, self.one_plus = sdpa, gelu, one_plus_norm
        self.heads, self.kv_heads = heads, kv_heads
        self.head_dim = head_dim or hidden // heads
        self.scale_root = (query_pre_attn_scalar or self.head_dim) ** 0.5
        self.sdpa_scale = {} if not query_pre_attn_scalar else {"scale": 1.0 / self.scale_root}
        norm = (lambda n: torch.nn.Parameter(torch.zeros(n))) if one_plus_norm \
            else (lambda n: torch.nn.Parameter(torch.ones(n)))
        self.input_norm = norm(hidden)
        self.post_norm = norm(hidden)
        self.pre_ff_norm = norm(hidden) if sandwich else None
        self.post_ff_norm = norm(hidden) if sandwich else None
        self.q_norm = norm(self.head_dim) if qk_norm else None
        self.k_norm = norm(self.head_dim) if qk_norm else None
        self.q = torch.nn.Linear(hidden, heads * self.head_dim, bias=qkv_bias)
        self.k = torch.nn.Linear(hidden, kv_heads * self.head_dim, bias=qkv_bias)
        self.v = torch.nn.Linear(hidden, kv_heads * self.head_dim, bias=qkv_bias)
        self.o = torch.nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.gate = torch.nn.Linear(hidden, intermediate, bias=False)
        self.up = torch.nn.Linear(hidden, intermediate, bias=False)
        self.down = torch.nn.Linear(intermediate, hidden, bias=False)

    def norm(self, x, weight):
        return rms_norm(x, weight, self.one_plus)

    @staticmethod
    def rotate(x, cos, sin):
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin

    def project(self, linear, h, heads, head_norm):
        b, s, _ = h.shape
        t = linear(h).view(b, s, heads, self.head_dim)
        return (t if head_norm is None else self.norm(t, head_norm)).transpose(1, 2)

    def forward(self, x, cos, sin, mask, windowed=False):
        """cos None: a layer without RoPE; mask: causal, or the window's band when windowed."""
        b, s, _ = x.shape
        h = self.norm(x, self.input_norm)
        q = self.project(self.q, h, self.heads, self.q_norm)
        k = self.project(self.k, h, self.kv_heads, self.k_norm)
        v = self.project(self.v, h, self.kv_heads, None)
        if cos is not None:
            q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        if self.sdpa:
            q, k, v = (t.to(torch.get_autocast_dtype("cuda")) for t in (q, k, v))
            masking = {"attn_mask": mask.to(q.dtype)} if windowed else {"is_causal": True}
            attn = F.scaled_dot_product_attention(q, k, v, enable_gqa=True, **masking,
                                                  **self.sdpa_scale)
        else:
            groups = self.heads // self.kv_heads
            k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
            scores = (q @ k.transpose(-1, -2)) / self.scale_root + mask
            attn = torch.softmax(scores.float(), dim=-1).to(q.dtype) @ v
        attended = self.o(attn.transpose(1, 2).reshape(b, s, -1))
        if self.pre_ff_norm is not None:  # Gemma 3's sandwich norms
            x = x + self.norm(attended, self.post_norm)
            h = self.norm(x, self.pre_ff_norm)
            return x + self.norm(self.mlp(h), self.post_ff_norm)
        x = x + attended
        h = self.norm(x, self.post_norm)
        return x + self.mlp(h)

    def mlp(self, h):
        gate = F.gelu(self.gate(h), approximate="tanh") if self.gelu else F.silu(self.gate(h))
        return self.down(gate * self.up(h))


class Decoder(torch.nn.Module):
    def __init__(self, vocab, hidden, intermediate, layers, heads, kv_heads, sdpa=False, tied=False,
                 recompute=True, family="llama", head_dim=0, layer_types=None, window=0,
                 rope_theta=10000.0, rope_local_theta=0.0, query_pre_attn_scalar=0.0):
        super().__init__()
        traits = FAMILIES[family]
        self.recompute = recompute
        self.one_plus = traits.get("one_plus_norm", False)
        self.embed_scale = hidden ** 0.5 if traits.get("scaled_embedding") else None
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.blocks = torch.nn.ModuleList(
            Block(hidden, intermediate, heads, kv_heads, sdpa, head_dim, query_pre_attn_scalar,
                  traits.get("qkv_bias", False), traits.get("qk_norm", False), self.one_plus,
                  traits.get("sandwich", False), traits.get("gelu", False))
            for _ in range(layers))
        self.norm = torch.nn.Parameter(torch.zeros(hidden) if self.one_plus else torch.ones(hidden))
        self.head = torch.nn.Linear(hidden, vocab, bias=False)
        if tied:
            self.head.weight = self.embed.weight
        self.head_dim = head_dim or hidden // heads
        self.layer_types = layer_types or ["full_attention"] * layers
        self.window = window
        # A sliding layer's RoPE base is rope_local_theta when given (Gemma 3's local layers).
        self.thetas = [rope_local_theta if t == "sliding_attention" and rope_local_theta else rope_theta
                       for t in self.layer_types]

    def rope(self, theta, s, device):
        inv = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, device=device).float() / self.head_dim))
        angles = torch.outer(torch.arange(s, device=device).float(), inv)
        angles = torch.cat((angles, angles), dim=-1)
        return angles.cos(), angles.sin()

    def forward(self, tokens, targets):
        s, device = tokens.shape[1], tokens.device
        tables = {theta: self.rope(theta, s, device) for theta in set(self.thetas)}
        mask = torch.full((s, s), float("-inf"), device=device).triu(1)
        # transformers' sliding window: query i sees keys j with 0 <= i - j < window.
        band = mask + torch.full((s, s), float("-inf"), device=device).tril(-self.window) \
            if self.window else None
        x = self.embed(tokens)
        if self.embed_scale is not None:  # Gemma: the scale in the weight's dtype
            x = x * torch.tensor(self.embed_scale, dtype=self.embed.weight.dtype)
        for block, kind, theta in zip(self.blocks, self.layer_types, self.thetas):
            cos, sin = tables[theta] if kind != "full_attention_no_rope" else (None, None)
            windowed = kind == "sliding_attention" and 0 < self.window < s
            layer_mask = band if windowed else mask
            x = checkpoint(block, x, cos, sin, layer_mask, windowed, use_reentrant=False) \
                if self.recompute else block(x, cos, sin, layer_mask, windowed)
        logits = self.head(rms_norm(x, self.norm, self.one_plus))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1))


def layer_plan(parser, a):
    """Each layer's type: --layer-types, or what transformers makes of the family's
    defaults (Mistral: every layer slides when there is a window; Gemma 3: every
    sixth layer global, the others sliding; SmolLM3: every fourth without RoPE)."""
    if a.layer_types:
        types = [t.strip() for t in a.layer_types.split(",")]
    elif a.family == "mistral" and a.window:
        types = ["sliding_attention"] * a.layers
    elif a.family == "gemma3":
        types = ["full_attention" if (l + 1) % 6 == 0 else "sliding_attention" for l in range(a.layers)]
    elif a.family == "smollm3":
        types = ["full_attention_no_rope" if (l + 1) % 4 == 0 else "full_attention" for l in range(a.layers)]
    else:
        types = ["full_attention"] * a.layers
    if len(types) != a.layers or any(t not in LAYER_TYPES for t in types):
        parser.error("--layer-types: give %d of %s" % (a.layers, ", ".join(LAYER_TYPES)))
    if "sliding_attention" in types and a.window <= 0:
        parser.error("--layer-types has sliding_attention layers: give --window")
    return types


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
    p.add_argument("--family", choices=sorted(FAMILIES), default="llama",
                   help="what the decoder computes, as model.family (docs/model.md)")
    p.add_argument("--head-dim", type=int, default=0, help="per-head width; 0: hidden / heads")
    p.add_argument("--layer-types", default="",
                   help="comma-separated, one per layer: " + ", ".join(LAYER_TYPES) +
                        " (model.layer_types); empty: the family's Hugging Face default")
    p.add_argument("--window", type=int, default=0,
                   help="keys a sliding_attention layer sees (model.sliding_window); 0: none")
    p.add_argument("--rope-theta", type=float, default=10000.0)
    p.add_argument("--rope-local-theta", type=float, default=0.0,
                   help="RoPE base of the sliding layers (Gemma 3's rope_local_base_freq); 0: --rope-theta")
    p.add_argument("--query-pre-attn-scalar", type=float, default=0.0,
                   help="q.k scaled by this^-1/2 (Gemma 3); 0: head_dim")
    a = p.parse_args()
    layer_types = layer_plan(p, a)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    device = torch.device(a.device)
    model = Decoder(a.vocab, a.hidden, a.intermediate, a.layers, a.heads, a.kv_heads, a.sdpa,
                    a.tied, not a.no_recompute, a.family, a.head_dim, layer_types, a.window,
                    a.rope_theta, a.rope_local_theta, a.query_pre_attn_scalar).to(device)
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
                      "device": str(device), "family": a.family,
                      "parameters": sum(p.numel() for p in model.parameters())}))


if __name__ == "__main__":
    main()
