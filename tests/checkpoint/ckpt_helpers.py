"""Helpers for the checkpoint end-to-end tests: the synthetic values of
tests/checkpoint/synthetic_state.h in numpy, a reader of nss-dcp checkpoints
that uses only h5py, json and xxhash (no nss_hpc code), and runners for the
binaries."""
import json
import os
import sys

import h5py
import numpy as np
import xxhash

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import nss_e2e  # noqa: E402

DTYPES = {"float32": np.float32, "float64": np.float64, "bfloat16": np.uint16,
          "float16": np.float16, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
          "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32, "int64": np.int64,
          "uint64": np.uint64}


def fnv1a32(text):
    h = 2166136261
    for byte in text.encode():
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def expected(name, count, step):
    """Values of tensor `name` at `step` (synthetic_state.h's formula)."""
    code = fnv1a32(name) % 4096
    e = np.arange(count, dtype=np.uint64)
    mixed = (e * np.uint64(2654435761) + np.uint64(step * 40503 + code * 97)) % np.uint64(1 << 20)
    return (mixed.astype(np.float64) / 524288.0 - 1.0).astype(np.float32)


def read_checkpoint(step_dir):
    """Every tensor of a step, reassembled from its rank files with h5py as
    metadata.json describes them; every checksum block is verified with xxhash."""
    with open(os.path.join(step_dir, "metadata.json")) as f:
        meta = json.load(f)
    assert meta["format"] == "nss-dcp" and meta["version"] == 1, meta["format"]
    block = meta["checksum_block_bytes"]
    files = {name: h5py.File(os.path.join(step_dir, name), "r") for name in meta["files"]}
    tensors = {}
    try:
        for name, t in meta["tensors"].items():
            numel = int(np.prod(t["shape"], dtype=np.int64))
            flat = np.full(numel, np.nan if t["dtype"] == "float32" else 0,
                           dtype=DTYPES[t["dtype"]])
            filled = np.zeros(numel, dtype=bool)
            for c in t["chunks"]:
                ds = files[c["file"]][c["dataset"]]
                data = ds[c["dataset_offset"]:c["dataset_offset"] + c["length"]]
                raw = data.astype(data.dtype.newbyteorder("<")).tobytes()
                digests = [xxhash.xxh3_64_hexdigest(raw[i:i + block])
                           for i in range(0, len(raw), block)]
                assert digests == c["checksums"], "%s %s %s" % (name, c["file"], c["dataset"])
                lo = c["tensor_offset"]
                assert not filled[lo:lo + c["length"]].any(), "overlap in " + name
                flat[lo:lo + c["length"]] = data
                filled[lo:lo + c["length"]] = True
            assert filled.all(), "gap in " + name
            tensors[name] = flat.reshape(t["shape"])
    finally:
        for f in files.values():
            f.close()
    return meta, tensors


def writer(ranks, *args, timeout=300, env=None):
    """Runs tests' ckpt_writer under mpiexec."""
    return nss_e2e.mpirun(ranks, [nss_e2e.binary("ckpt_writer")] + [str(a) for a in args],
                          timeout=timeout, env=env)


def tool(name, *args, timeout=300):
    """Runs a serial tool (nss_ckpt, nss_consolidate) without mpiexec."""
    import subprocess
    return subprocess.run([nss_e2e.binary(name)] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=timeout)


def committed_steps(checkpoint_dir):
    """Committed step numbers (directories step_N with metadata.json), newest first."""
    steps = []
    for entry in os.listdir(checkpoint_dir):
        if entry.startswith("step_") and entry[5:].isdigit() and os.path.isfile(
                os.path.join(checkpoint_dir, entry, "metadata.json")):
            steps.append(int(entry[5:]))
    return sorted(steps, reverse=True)


def step_dir(checkpoint_dir, step):
    return os.path.join(checkpoint_dir, "step_%08d" % step)


def load_line(proc):
    """The JSON line ckpt_writer load prints on rank 0."""
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise AssertionError("no JSON line in:\n" + proc.stdout + proc.stderr)


def dataset_offset(h5_path, dataset):
    """Byte offset of a contiguous dataset's first element in its file."""
    with h5py.File(h5_path, "r") as f:
        return f[dataset].id.get_offset()


SAFETENSORS_DTYPES = {"F32": np.float32, "F64": np.float64, "BF16": np.uint16, "F16": np.float16,
                      "I64": np.int64, "I32": np.int32}


def read_safetensors(path):
    """(metadata, header, {name: array}) of a safetensors file (BF16 as raw uint16)."""
    with open(path, "rb") as f:
        blob = f.read()
    n = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8:8 + n])
    metadata = header.pop("__metadata__", None)
    data = blob[8 + n:]
    tensors = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        array = np.frombuffer(data[begin:end], dtype=SAFETENSORS_DTYPES[t["dtype"]])
        tensors[name] = array.reshape(t["shape"])
    return metadata, header, tensors


def write_safetensors(path, tensors):
    """Writes float32 arrays as a safetensors file with {"format": "pt"}."""
    header, offset, blobs = {"__metadata__": {"format": "pt"}}, 0, []
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


# The synthetic model's Llama configuration (tests/checkpoint/ckpt_writer.cpp).
TINY_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 16,
               "intermediate_size": 40, "num_hidden_layers": 2, "num_attention_heads": 4,
               "num_key_value_heads": 2, "head_dim": 4, "vocab_size": 37,
               "max_position_embeddings": 1024, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
               "hidden_act": "silu", "tie_word_embeddings": False, "torch_dtype": "float32"}


def tiny_model_shapes(tied=False):
    """Hugging Face names and shapes of the synthetic model's weights."""
    shapes = {"model.embed_tokens.weight": (37, 16), "model.norm.weight": (16,)}
    if not tied:
        shapes["lm_head.weight"] = (37, 16)
    for i in range(2):
        p = "model.layers.%d." % i
        shapes.update({p + "self_attn.q_proj.weight": (16, 16), p + "self_attn.k_proj.weight": (8, 16),
                       p + "self_attn.v_proj.weight": (8, 16), p + "self_attn.o_proj.weight": (16, 16),
                       p + "mlp.gate_proj.weight": (40, 16), p + "mlp.up_proj.weight": (40, 16),
                       p + "mlp.down_proj.weight": (16, 40), p + "input_layernorm.weight": (16,),
                       p + "post_attention_layernorm.weight": (16,)})
    return shapes


def write_base_model(directory, seed=0):
    """A Hugging Face directory of the synthetic shape with random weights; returns them."""
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    weights = {name: rng.standard_normal(shape).astype(np.float32)
               for name, shape in tiny_model_shapes().items()}
    write_safetensors(os.path.join(directory, "model.safetensors"), weights)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(TINY_CONFIG, f)
    return weights
