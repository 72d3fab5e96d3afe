"""An independent NumPy (float64) implementation of Hugging Face's
LlamaForCausalLM forward pass and loss, from the published definitions:
RMSNorm, rotary embeddings in the rotate_half convention with rope_theta and
rope_scaling (linear; llama3 from Meta's apply_scaling), grouped-query causal
attention, SwiGLU MLP, tied or separate LM head, and PEFT LoRA adapters
(lora_A/lora_B tensors next to their projections, scale alpha / rank).

    llama_reference.py --model DIR --input IN.json --out OUT.json [--lora-alpha A --lora-rank R]

IN.json: {"tokens": [[...], ...], "targets": [[...], ...]} (B rows of S ids);
OUT.json: {"logits": [B*S*V values, row-major], "loss": mean next-token cross-entropy}.
"""
import argparse
import json
import math

import numpy as np

from hf_files import read_model_dir


def inverse_frequencies(config):
    d = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    theta = config.get("rope_theta", 10000.0)
    inv = 1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)
    scaling = config.get("rope_scaling") or {}
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "linear":
        return inv / scaling["factor"]
    if kind == "llama3":
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        out = []
        for f in inv:
            wavelen = 2 * math.pi / f
            if wavelen < old / high:
                out.append(f)
            elif wavelen > old / low:
                out.append(f / factor)
            else:
                smooth = (old / wavelen - low) / (high - low)
                out.append((1 - smooth) * f / factor + smooth * f)
        return np.array(out)
    assert kind == "default", kind
    return inv


def rotary_tables(config, seq_len):
    angles = np.arange(seq_len, dtype=np.float64)[:, None] * inverse_frequencies(config)[None, :]
    doubled = np.concatenate([angles, angles], axis=-1)
    return np.cos(doubled), np.sin(doubled)


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def rms_norm(x, weight, eps):
    return weight * (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps))


def silu(x):
    return x / (1.0 + np.exp(-x))


class Llama:
    def __init__(self, config, weights, lora_alpha=None, lora_rank=None):
        self.c = config
        self.w = weights
        self.lora_scale = lora_alpha / lora_rank if lora_rank else 0.0

    def proj(self, module, x):
        y = x @ self.w[module + ".weight"].T
        a = self.w.get(module + ".lora_A.weight")
        if a is not None:
            y = y + (x @ a.T) @ self.w[module + ".lora_B.weight"].T * self.lora_scale
        return y

    def attention(self, prefix, x, cos, sin):
        c = self.c
        b, s, _ = x.shape
        heads, kv_heads = c["num_attention_heads"], c["num_key_value_heads"]
        d = c.get("head_dim") or c["hidden_size"] // heads
        q = self.proj(prefix + "q_proj", x).reshape(b, s, heads, d).transpose(0, 2, 1, 3)
        k = self.proj(prefix + "k_proj", x).reshape(b, s, kv_heads, d).transpose(0, 2, 1, 3)
        v = self.proj(prefix + "v_proj", x).reshape(b, s, kv_heads, d).transpose(0, 2, 1, 3)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        future = np.triu(np.ones((s, s), dtype=bool), k=1)
        out = np.empty_like(q)
        for head in range(heads):
            kv = head // (heads // kv_heads)
            scores = q[:, head] @ k[:, kv].transpose(0, 2, 1) / math.sqrt(d)
            scores = np.where(future, -np.inf, scores)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            out[:, head] = (scores / scores.sum(axis=-1, keepdims=True)) @ v[:, kv]
        return self.proj(prefix + "o_proj", out.transpose(0, 2, 1, 3).reshape(b, s, heads * d))

    def logits(self, tokens):
        c, w = self.c, self.w
        eps = c.get("rms_norm_eps", 1e-6)
        cos, sin = rotary_tables(c, tokens.shape[1])
        x = w["model.embed_tokens.weight"][tokens]
        for i in range(c["num_hidden_layers"]):
            p = "model.layers.%d." % i
            x = x + self.attention(p + "self_attn.", rms_norm(x, w[p + "input_layernorm.weight"], eps),
                                   cos, sin)
            h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
            x = x + self.proj(p + "mlp.down_proj",
                              silu(self.proj(p + "mlp.gate_proj", h)) * self.proj(p + "mlp.up_proj", h))
        x = rms_norm(x, w["model.norm.weight"], eps)
        head = w["model.embed_tokens.weight"] if c.get("tie_word_embeddings") else w["lm_head.weight"]
        return x @ head.T


def cross_entropy(logits, targets):
    """Mean next-token cross-entropy."""
    top = logits.max(axis=-1, keepdims=True)
    log_z = np.log(np.exp(logits - top).sum(axis=-1)) + top[..., 0]
    picked = np.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return float(np.mean(log_z - picked))


def eval_loss(model_dir, tokens, seq_len, batches, batch_size):
    """nss_eval's definition: window i = tokens[i*seq_len, i*seq_len + seq_len + 1),
    batch_size windows per batch, `batches` batches, mean over every target token."""
    config, weights = read_model_dir(model_dir)
    model = Llama(config, weights)
    total, count = 0.0, 0
    for batch in range(batches):
        starts = [(batch * batch_size + r) * seq_len for r in range(batch_size)]
        windows = np.stack([tokens[s:s + seq_len + 1] for s in starts]).astype(np.int64)
        logits = model.logits(windows[:, :-1])
        total += cross_entropy(logits, windows[:, 1:]) * windows[:, 1:].size
        count += windows[:, 1:].size
    return total / count, count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--lora-alpha", type=float)
    parser.add_argument("--lora-rank", type=int)
    args = parser.parse_args()
    config, weights = read_model_dir(args.model)
    model = Llama(config, weights, args.lora_alpha, args.lora_rank)
    with open(args.input) as f:
        batch = json.load(f)
    tokens, targets = np.array(batch["tokens"]), np.array(batch["targets"])
    logits = model.logits(tokens)
    with open(args.out, "w") as f:
        json.dump({"logits": logits.ravel().tolist(), "loss": cross_entropy(logits, targets)}, f)


if __name__ == "__main__":
    main()
