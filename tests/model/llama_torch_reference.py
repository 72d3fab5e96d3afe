"""A second independent reference: Hugging Face's LlamaForCausalLM written
as plain PyTorch modules (float64), the way modeling_llama.py structures it
(repeat_kv, rotate_half, the llama3 inv_freq rule with torch.where), without
transformers. Same command line and files as llama_reference.py."""
import argparse
import json
import math

import numpy as np
import torch

from hf_files import read_model_dir


def inverse_frequencies(config):
    d = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    inv = 1.0 / (config.get("rope_theta", 10000.0) ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    scaling = config.get("rope_scaling") or {}
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "linear":
        inv = inv / scaling["factor"]
    elif kind == "llama3":
        factor, old = scaling["factor"], scaling["original_max_position_embeddings"]
        low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > old / low, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < old / high) * ~(wavelen > old / low)
        inv = torch.where(medium, smoothed, scaled)
    return inv


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class RMSNorm(torch.nn.Module):
    def __init__(self, weight, eps):
        super().__init__()
        self.weight, self.eps = weight, eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class Linear(torch.nn.Module):
    """nn.Linear without bias, plus a PEFT LoRA branch when adapters exist."""

    def __init__(self, w, name, lora_scale):
        super().__init__()
        self.weight = w[name + ".weight"]
        self.a, self.b = w.get(name + ".lora_A.weight"), w.get(name + ".lora_B.weight")
        self.scale = lora_scale

    def forward(self, x):
        y = torch.nn.functional.linear(x, self.weight)
        if self.a is not None:
            y = y + torch.nn.functional.linear(torch.nn.functional.linear(x, self.a), self.b) * self.scale
        return y


class Attention(torch.nn.Module):
    def __init__(self, c, w, prefix, lora_scale):
        super().__init__()
        self.heads, self.kv_heads = c["num_attention_heads"], c["num_key_value_heads"]
        self.d = c.get("head_dim") or c["hidden_size"] // self.heads
        self.q, self.k, self.v, self.o = (Linear(w, prefix + n, lora_scale)
                                          for n in ("q_proj", "k_proj", "v_proj", "o_proj"))

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, -1, self.d).transpose(1, 2)
        k = self.k(x).view(b, s, -1, self.d).transpose(1, 2)
        v = self.v(x).view(b, s, -1, self.d).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        groups = self.heads // self.kv_heads
        k = k[:, :, None].expand(b, self.kv_heads, groups, s, self.d).reshape(b, self.heads, s, self.d)
        v = v[:, :, None].expand(b, self.kv_heads, groups, s, self.d).reshape(b, self.heads, s, self.d)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.d)
        mask = torch.full((s, s), float("-inf"), dtype=x.dtype).triu(1)
        out = torch.softmax(scores + mask, dim=-1) @ v
        return self.o(out.transpose(1, 2).reshape(b, s, -1))


class Llama(torch.nn.Module):
    def __init__(self, c, w, lora_scale):
        super().__init__()
        eps = c.get("rms_norm_eps", 1e-6)
        self.c, self.embed = c, w["model.embed_tokens.weight"]
        self.layers = []
        for i in range(c["num_hidden_layers"]):
            p = "model.layers.%d." % i
            self.layers.append((RMSNorm(w[p + "input_layernorm.weight"], eps),
                                Attention(c, w, p + "self_attn.", lora_scale),
                                RMSNorm(w[p + "post_attention_layernorm.weight"], eps),
                                [Linear(w, p + "mlp." + n, lora_scale)
                                 for n in ("gate_proj", "up_proj", "down_proj")]))
        self.norm = RMSNorm(w["model.norm.weight"], eps)
        self.head = self.embed if c.get("tie_word_embeddings") else w["lm_head.weight"]

    def forward(self, tokens):
        s = tokens.shape[1]
        freqs = torch.outer(torch.arange(s, dtype=torch.float64), inverse_frequencies(self.c))
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        x = torch.nn.functional.embedding(tokens, self.embed)
        for norm1, attention, norm2, (gate, up, down) in self.layers:
            x = x + attention(norm1(x), cos, sin)
            h = norm2(x)
            x = x + down(torch.nn.functional.silu(gate(h)) * up(h))
        return torch.nn.functional.linear(self.norm(x), self.head)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--lora-alpha", type=float)
    parser.add_argument("--lora-rank", type=int)
    args = parser.parse_args()
    config, weights = read_model_dir(args.model)
    weights = {name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in weights.items()}
    scale = args.lora_alpha / args.lora_rank if args.lora_rank else 0.0
    with open(args.input) as f:
        batch = json.load(f)
    tokens, targets = torch.tensor(batch["tokens"]), torch.tensor(batch["targets"])
    with torch.no_grad():
        logits = Llama(config, weights, scale)(tokens)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    with open(args.out, "w") as f:
        json.dump({"logits": logits.reshape(-1).tolist(), "loss": float(loss)}, f)


if __name__ == "__main__":
    main()
