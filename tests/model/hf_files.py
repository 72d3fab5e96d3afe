"""Hugging Face model files in plain NumPy, written independently of nss_hpc:
safetensors reading and writing (F32, F16, BF16), sharded directories with
model.safetensors.index.json, and random Llama weights with config.json."""
import json
import os
import struct

import numpy as np

_NUMPY_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64}


def bf16_bits(array):
    """float32 -> bfloat16 bit patterns (uint16), round to nearest even."""
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def read_safetensors(path):
    """{name: float64 array} of every tensor, plus the __metadata__ dict."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    metadata = header.pop("__metadata__", {})
    body = data[8 + length:]
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw = body[begin:end]
        if entry["dtype"] == "BF16":
            values = (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
        else:
            values = np.frombuffer(raw, dtype=_NUMPY_DTYPES[entry["dtype"]])
        tensors[name] = values.astype(np.float64).reshape(entry["shape"])
    return tensors, metadata


def write_safetensors(path, tensors, dtype="F32"):
    """Writes {name: array} with every tensor stored as `dtype` (F32, F16 or BF16)."""
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        array = np.asarray(tensors[name], dtype=np.float32)
        if dtype == "BF16":
            blob = bf16_bits(array).tobytes()
        else:
            blob = array.astype(_NUMPY_DTYPES[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def read_model_dir(path):
    """(config dict, {name: float64 array}) of a Hugging Face directory."""
    with open(os.path.join(path, "config.json")) as f:
        config = json.load(f)
    single = os.path.join(path, "model.safetensors")
    if os.path.exists(single):
        return config, read_safetensors(single)[0]
    with open(os.path.join(path, "model.safetensors.index.json")) as f:
        weight_map = json.load(f)["weight_map"]
    tensors = {}
    for file_name in sorted(set(weight_map.values())):
        tensors.update(read_safetensors(os.path.join(path, file_name))[0])
    return config, {name: tensors[name] for name in weight_map}


def write_model_dir(path, config, tensors, dtype="F32", shards=1):
    """config.json plus model.safetensors, or `shards` files and an index."""
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    names = sorted(tensors)
    if shards == 1:
        write_safetensors(os.path.join(path, "model.safetensors"), tensors, dtype)
        return
    weight_map = {}
    for index in range(shards):
        file_name = "model-%05d-of-%05d.safetensors" % (index + 1, shards)
        part = {name: tensors[name] for name in names[index::shards]}
        write_safetensors(os.path.join(path, file_name), part, dtype)
        weight_map.update({name: file_name for name in part})
    with open(os.path.join(path, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)


def llama_config(hidden=32, intermediate=48, layers=2, heads=4, kv_heads=2, head_dim=None,
                 vocab=61, tied=False, rope_theta=10000.0, rope_scaling=None, eps=1e-5):
    """A LlamaForCausalLM config.json dict."""
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
        "hidden_size": hidden, "intermediate_size": intermediate, "num_hidden_layers": layers,
        "num_attention_heads": heads, "num_key_value_heads": kv_heads,
        "head_dim": head_dim or hidden // heads, "vocab_size": vocab,
        "max_position_embeddings": 256, "rms_norm_eps": eps, "rope_theta": rope_theta,
        "rope_scaling": rope_scaling, "tie_word_embeddings": tied, "torch_dtype": "float32",
    }


def random_llama_weights(config, seed=0, scale=0.2):
    """Random weights for `config` with HF names. Norm weights vary around 1 so
    that a wrongly applied norm shows; the scale makes logits non-trivial."""
    rng = np.random.default_rng(seed)
    h, v = config["hidden_size"], config["vocab_size"]
    d = config.get("head_dim") or h // config["num_attention_heads"]
    q, kv = config["num_attention_heads"] * d, config["num_key_value_heads"] * d
    inter = config["intermediate_size"]
    shapes = {"model.embed_tokens.weight": (v, h), "model.norm.weight": (h,)}
    if not config["tie_word_embeddings"]:
        shapes["lm_head.weight"] = (v, h)
    for i in range(config["num_hidden_layers"]):
        p = "model.layers.%d." % i
        shapes.update({
            p + "input_layernorm.weight": (h,), p + "post_attention_layernorm.weight": (h,),
            p + "self_attn.q_proj.weight": (q, h), p + "self_attn.k_proj.weight": (kv, h),
            p + "self_attn.v_proj.weight": (kv, h), p + "self_attn.o_proj.weight": (h, q),
            p + "mlp.gate_proj.weight": (inter, h), p + "mlp.up_proj.weight": (inter, h),
            p + "mlp.down_proj.weight": (h, inter)})
    weights = {}
    for name in sorted(shapes):
        if name.endswith("norm.weight"):
            weights[name] = (1.0 + 0.1 * rng.standard_normal(shapes[name])).astype(np.float32)
        else:
            weights[name] = (scale * rng.standard_normal(shapes[name])).astype(np.float32)
    return weights
