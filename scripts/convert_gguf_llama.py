#!/usr/bin/env python3
"""A llama-architecture GGUF file (llama.cpp's format) -> a Hugging Face Llama directory (docs/model.md).

    build/venv/bin/python scripts/convert_gguf_llama.py IN.gguf OUT_DIR [--dtype float32|float16|bfloat16]

Writes config.json (LlamaForCausalLM), generation_config.json,
model.safetensors, tokenizer.json, tokenizer_config.json (with the chat
template the file carries) and special_tokens_map.json: a directory that
model.from_pretrained, nss_eval, prepare_data_hf.py and transformers load.
Quantised weights are dequantised with the gguf package's reference code (the
result is the model llama.cpp runs, at --dtype, float32 by default); the query
and key rows are permuted back from llama.cpp's interleaved-pair RoPE layout
to Hugging Face's rotate_half layout. The byte-level BPE tokenizer
(tokenizer.ggml.model "gpt2") is rebuilt from the vocabulary and merges in the
metadata. OUT_DIR appears complete or not at all (built under a temporary
name, then renamed). Exit codes: 0 written; 2 usage (OUT_DIR exists); 4 the
input (missing, not GGUF, an architecture other than llama, a tensor type,
RoPE scaling, pre-tokenizer or tokenizer model this converter does not
handle, a tensor missing or of the wrong shape).
"""
import argparse
import json
import os
import shutil
import struct
import sys

import numpy as np

EXIT_USAGE = 2
EXIT_DATA = 4

try:
    import gguf
    from gguf.quants import dequantize
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors
except ImportError as missing:
    print("convert_gguf_llama: error: %s; run it with build/venv/bin/python (scripts/setup.sh installs gguf and "
          "tokenizers there)" % missing, file=sys.stderr)
    sys.exit(EXIT_USAGE)

# Tensor types whose dequantisation gguf 0.19 implements and llama.cpp's
# usual quantisations produce.
SUPPORTED_TYPES = ("F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
                   "Q6_K")
SAFETENSORS_DTYPES = {"float32": "F32", "float16": "F16", "bfloat16": "BF16"}
LAYER_TENSORS = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
# token_type values of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
CONTROL_TOKEN = 3
USER_DEFINED_TOKEN = 4


class DataError(Exception):
    """A problem of the input file (exit 4)."""


class UsageError(Exception):
    """A bad command line (exit 2)."""


class GgufModel:
    """The metadata and tensors of an open GGUF file."""

    def __init__(self, path):
        if not os.path.isfile(path):
            raise DataError("cannot read %s: no such file" % path)
        try:
            self.reader = gguf.GGUFReader(path)
        except (ValueError, OSError, struct.error, IndexError) as e:
            raise DataError("%s is not a readable GGUF file: %s" % (path, e))
        self.path = path
        self.tensors = {t.name: t for t in self.reader.tensors}

    def get(self, key, default=None):
        field = self.reader.fields.get(key)
        return default if field is None else field.contents()

    def require(self, key):
        value = self.get(key)
        if value is None:
            raise DataError("%s lacks the metadata key %s" % (self.path, key))
        return value


def reverse_rope_permutation(weight, heads):
    """Undoes llama.cpp's q/k row permutation: its converter stores the rows of
    each head as interleaved (real, imaginary) pairs, w.reshape(heads, 2, d/2,
    in).swapaxes(1, 2); Hugging Face keeps the two halves apart (rotate_half)."""
    rows = weight.shape[0] // heads
    return weight.reshape(heads, rows // 2, 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def llama_config(model, dtype):
    architecture = model.require("general.architecture")
    if architecture != "llama":
        raise DataError("%s holds a %r model; this converter handles the llama architecture only"
                        % (model.path, architecture))
    if model.get("llama.expert_count", 0):
        raise DataError("%s is a mixture-of-experts model (llama.expert_count %d); nss_hpc trains dense Llama models"
                        % (model.path, model.get("llama.expert_count")))
    hidden = int(model.require("llama.embedding_length"))
    heads = int(model.require("llama.attention.head_count"))
    head_dim = int(model.get("llama.attention.key_length", hidden // heads))
    for key in ("llama.attention.value_length", "llama.rope.dimension_count"):
        if int(model.get(key, head_dim)) != head_dim:
            raise DataError("%s: %s is %d, not the head size %d; Hugging Face's Llama cannot express that"
                            % (model.path, key, model.get(key), head_dim))
    tokens = model.require("tokenizer.ggml.tokens")
    context = int(model.require("llama.context_length"))
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": int(model.get("llama.vocab_size", len(tokens))),
        "hidden_size": hidden,
        "intermediate_size": int(model.require("llama.feed_forward_length")),
        "num_hidden_layers": int(model.require("llama.block_count")),
        "num_attention_heads": heads,
        "num_key_value_heads": int(model.get("llama.attention.head_count_kv", heads)),
        "head_dim": head_dim,
        "hidden_act": "silu",
        "max_position_embeddings": context,
        "rms_norm_eps": float(model.require("llama.attention.layer_norm_rms_epsilon")),
        "rope_theta": float(model.get("llama.rope.freq_base", 10000.0)),
        "rope_scaling": rope_scaling(model),
        "attention_bias": False,
        "mlp_bias": False,
        "tie_word_embeddings": "output.weight" not in model.tensors,
        "torch_dtype": dtype,
    }
    for key in ("bos", "eos", "pad"):
        token_id = special_token_id(model, key)
        if token_id is not None:
            config[key + "_token_id"] = token_id
    return config


def rope_scaling(model):
    if "rope_freqs.weight" in model.tensors:
        raise DataError("%s scales RoPE with per-frequency factors (tensor rope_freqs.weight, Llama 3.1 style); "
                        "convert the original Hugging Face model instead" % model.path)
    kind = model.get("llama.rope.scaling.type", "none")
    if kind == "none":
        return None
    if kind == "linear":
        return {"rope_type": "linear", "factor": float(model.require("llama.rope.scaling.factor"))}
    raise DataError("%s uses RoPE scaling %r; this converter handles none and linear" % (model.path, kind))


def special_token_id(model, key):
    names = {"bos": "bos_token_id", "eos": "eos_token_id", "pad": "padding_token_id", "unk": "unknown_token_id"}
    value = model.get("tokenizer.ggml." + names[key])
    return None if value is None else int(value)


def expected_shapes(config):
    """Hugging Face name -> (GGUF name, shape) of every weight the config implies."""
    hidden, inter, head_dim = config["hidden_size"], config["intermediate_size"], config["head_dim"]
    q_rows = config["num_attention_heads"] * head_dim
    kv_rows = config["num_key_value_heads"] * head_dim
    shapes = {
        "attn_norm": [hidden], "ffn_norm": [hidden],
        "attn_q": [q_rows, hidden], "attn_k": [kv_rows, hidden], "attn_v": [kv_rows, hidden],
        "attn_output": [hidden, q_rows],
        "ffn_gate": [inter, hidden], "ffn_up": [inter, hidden], "ffn_down": [hidden, inter],
    }
    weights = {"model.embed_tokens.weight": ("token_embd.weight", [config["vocab_size"], hidden]),
               "model.norm.weight": ("output_norm.weight", [hidden])}
    if not config["tie_word_embeddings"]:
        weights["lm_head.weight"] = ("output.weight", [config["vocab_size"], hidden])
    for layer in range(config["num_hidden_layers"]):
        for kind, shape in shapes.items():
            weights["model.layers.%d.%s.weight" % (layer, LAYER_TENSORS[kind])] = ("blk.%d.%s.weight" % (layer, kind),
                                                                                    shape)
    return weights


def check_tensors(model, weights):
    """Every weight present with its shape and a supported type, nothing else."""
    wanted = {gguf_name: shape for gguf_name, shape in weights.values()}
    for name, tensor in model.tensors.items():
        if name not in wanted:
            raise DataError("%s holds the tensor %s, which a llama model of this shape does not have"
                            % (model.path, name))
        if tensor.tensor_type.name not in SUPPORTED_TYPES:
            raise DataError("%s: tensor %s is of type %s, which this converter does not dequantise (supported: %s)"
                            % (model.path, name, tensor.tensor_type.name, ", ".join(SUPPORTED_TYPES)))
        shape = [int(n) for n in reversed(tensor.shape)]  # GGUF lists the fastest-varying dimension first
        if shape != wanted[name]:
            raise DataError("%s: tensor %s has shape %s, the model's metadata implies %s"
                            % (model.path, name, shape, wanted[name]))
    missing = sorted(set(wanted) - set(model.tensors))
    if missing:
        raise DataError("%s lacks %d tensor(s) of the model: %s" % (model.path, len(missing), ", ".join(missing[:5])))


def to_dtype(values, dtype):
    """float32 -> the bytes of `dtype`, bfloat16 rounded to nearest even."""
    if dtype == "bfloat16":
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2").tobytes()
    return values.astype("<f4" if dtype == "float32" else "<f2").tobytes()


def write_safetensors(path, model, config, weights, dtype):
    """Streams the weights tensor by tensor into one safetensors file."""
    element_bytes = 2 if dtype != "float32" else 4
    header = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name in sorted(weights):
        shape = weights[name][1]
        size = int(np.prod(shape)) * element_bytes
        header[name] = {"dtype": SAFETENSORS_DTYPES[dtype], "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name in sorted(weights):
            gguf_name, shape = weights[name]
            tensor = model.tensors[gguf_name]
            values = np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32).reshape(shape)
            if gguf_name.endswith("attn_q.weight"):
                values = reverse_rope_permutation(values, config["num_attention_heads"])
            elif gguf_name.endswith("attn_k.weight"):
                values = reverse_rope_permutation(values, config["num_key_value_heads"])
            if not np.isfinite(values).all():
                raise DataError("%s: tensor %s holds non-finite values" % (model.path, gguf_name))
            f.write(to_dtype(values, dtype))
        f.flush()
        os.fsync(f.fileno())


def byte_level_tokenizer(model):
    """The tokenizers.Tokenizer llama.cpp's "gpt2" tokenizer model runs, and its control tokens."""
    kind = model.require("tokenizer.ggml.model")
    if kind != "gpt2":
        raise DataError("%s has the tokenizer model %r; this converter handles byte-level BPE (gpt2) only"
                        % (model.path, kind))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    # llama.cpp's pre-tokenizer names -> Hugging Face's equivalent (llama-vocab.cpp's regexes). Without a
    # name llama.cpp falls back to a split of its own, which has no such equivalent.
    pre_name = model.require("tokenizer.ggml.pre")
    pre_tokenizer = {
        "gpt-2": byte_level,
        "smollm": pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level]),
    }.get(pre_name)
    if pre_tokenizer is None:
        raise DataError("%s has the pre-tokenizer %r; this converter handles gpt-2 and smollm" % (model.path, pre_name))
    tokens = model.require("tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ")) for m in model.require("tokenizer.ggml.merges")]
    if any(len(m) != 2 for m in merges):
        raise DataError("%s: a merge of tokenizer.ggml.merges is not two tokens separated by one space" % model.path)
    tokenizer = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges, fuse_unk=False,
                                     byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.ByteLevel()
    types = model.get("tokenizer.ggml.token_type", [])
    control = [tokens[i] for i, t in enumerate(types) if t == CONTROL_TOKEN]
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    tokenizer.add_tokens([AddedToken(tokens[i], special=False, normalized=False)
                          for i, t in enumerate(types) if t == USER_DEFINED_TOKEN])
    byte_post = processors.ByteLevel(trim_offsets=False)
    bos = special_token_id(model, "bos")
    if model.get("tokenizer.ggml.add_bos_token", False) and bos is not None:
        prepend = processors.TemplateProcessing(single="%s $A" % tokens[bos], special_tokens=[(tokens[bos], bos)])
        tokenizer.post_processor = processors.Sequence([byte_post, prepend])
    else:
        tokenizer.post_processor = byte_post
    return tokenizer, control


def tokenizer_files(model, control):
    """tokenizer_config.json and special_tokens_map.json."""
    tokens = model.require("tokenizer.ggml.tokens")
    named = {}
    for key in ("bos", "eos", "unk", "pad"):
        token_id = special_token_id(model, key)
        if token_id is not None:
            named[key + "_token"] = tokens[token_id]
    special_map = dict(named, additional_special_tokens=[t for t in control if t not in named.values()])
    config = dict(special_map, tokenizer_class="PreTrainedTokenizerFast",
                  add_bos_token=bool(model.get("tokenizer.ggml.add_bos_token", False)),
                  add_eos_token=bool(model.get("tokenizer.ggml.add_eos_token", False)),
                  model_max_length=int(model.require("llama.context_length")), clean_up_tokenization_spaces=False)
    template = model.get("tokenizer.chat_template")
    if template:
        config["chat_template"] = template
    return config, special_map


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=2, ensure_ascii=False)
        f.write("\n")


def convert(source, output, dtype):
    if os.path.lexists(output):
        raise UsageError("%s exists; remove it or choose another output directory" % output)
    model = GgufModel(source)
    config = llama_config(model, dtype)
    weights = expected_shapes(config)
    check_tensors(model, weights)
    tokenizer, control = byte_level_tokenizer(model)
    tokenizer_config, special_map = tokenizer_files(model, control)
    generation = {k: config[k] for k in ("bos_token_id", "eos_token_id", "pad_token_id") if k in config}

    temporary = "%s.tmp.%d" % (output.rstrip("/"), os.getpid())
    os.makedirs(temporary)
    try:
        write_safetensors(os.path.join(temporary, "model.safetensors"), model, config, weights, dtype)
        write_json(os.path.join(temporary, "config.json"), config)
        write_json(os.path.join(temporary, "generation_config.json"), generation)
        tokenizer.save(os.path.join(temporary, "tokenizer.json"))
        write_json(os.path.join(temporary, "tokenizer_config.json"), tokenizer_config)
        write_json(os.path.join(temporary, "special_tokens_map.json"), special_map)
        os.rename(temporary, output)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return config, len(weights)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gguf", help="the GGUF file")
    parser.add_argument("output", help="the Hugging Face directory to create")
    parser.add_argument("--dtype", choices=sorted(SAFETENSORS_DTYPES), default="float32",
                        help="weights in model.safetensors (default float32, what nss_hpc computes in on the CPU)")
    args = parser.parse_args(argv)
    try:
        config, tensors = convert(args.gguf, args.output, args.dtype)
    except UsageError as e:
        print("convert_gguf_llama: error: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    except DataError as e:
        print("convert_gguf_llama: error: [gguf] %s" % e, file=sys.stderr)
        return EXIT_DATA
    print("wrote %s: %d layers, hidden %d, vocab %d, %d tensors, %s%s" % (
        args.output, config["num_hidden_layers"], config["hidden_size"], config["vocab_size"], tensors, args.dtype,
        ", tied embeddings" if config["tie_word_embeddings"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
