#!/usr/bin/env python3
"""A GGUF file (llama.cpp's format) of a llama, qwen2, qwen3 or gemma3 model -> a Hugging Face directory
(docs/model.md).

    build/venv/bin/python scripts/convert_gguf.py IN.gguf OUT_DIR [--dtype float32|float16|bfloat16]

Writes config.json (LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM or
Gemma3ForCausalLM), generation_config.json, model.safetensors, tokenizer.json,
tokenizer_config.json (with the chat template the file carries) and
special_tokens_map.json: a directory that model.from_pretrained, nss_eval,
prepare_data_hf.py and transformers load. Quantised weights are dequantised
with the gguf package's reference code (the result is the model llama.cpp
runs, at --dtype, float32 by default). What llama.cpp's converter changed is
undone per architecture: llama's query and key rows go back from the
interleaved-pair RoPE layout to Hugging Face's rotate_half layout, Gemma 3's
norm weights lose the 1 that was added to them. The tokenizer is rebuilt from
the metadata: byte-level BPE (tokenizer.ggml.model "gpt2") from its
vocabulary and merges, Gemma's SentencePiece BPE ("llama") with merges
recovered from the vocabulary order. OUT_DIR appears complete or not at all
(built under a temporary name, then renamed). Exit codes: 0 written; 2 usage
(OUT_DIR exists); 4 the input (missing, not GGUF, an architecture, tensor
type, RoPE scaling, pre-tokenizer or tokenizer model this converter does not
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
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
except ImportError as missing:
    print("convert_gguf: error: %s; run it with build/venv/bin/python (scripts/setup.sh installs gguf and "
          "tokenizers there)" % missing, file=sys.stderr)
    sys.exit(EXIT_USAGE)

# Tensor types whose dequantisation gguf 0.19 implements and llama.cpp's
# usual quantisations produce.
SUPPORTED_TYPES = ("F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
                   "Q6_K")
SAFETENSORS_DTYPES = {"float32": "F32", "float16": "F16", "bfloat16": "BF16"}
PROJECTIONS = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
               "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
               "ffn_down": "mlp.down_proj"}
QK_NORMS = {"attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm"}


class Architecture:
    """What one GGUF architecture is in Hugging Face's terms: the class, the
    block's norms (GGUF name -> Hugging Face name), which projections carry a
    bias, what llama.cpp's converter did to the weights, and the config keys
    the family adds."""

    def __init__(self, hf_class, model_type, norms, biases=(), permuted_qk=False, norm_shift=0.0,
                 activation=("hidden_act", "silu")):
        self.hf_class, self.model_type, self.norms, self.biases = hf_class, model_type, norms, biases
        self.permuted_qk, self.norm_shift, self.activation = permuted_qk, norm_shift, activation


PRE_NORM = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm"}
ARCHITECTURES = {
    "llama": Architecture("LlamaForCausalLM", "llama", PRE_NORM, permuted_qk=True),
    "qwen2": Architecture("Qwen2ForCausalLM", "qwen2", PRE_NORM, biases=("attn_q", "attn_k", "attn_v")),
    "qwen3": Architecture("Qwen3ForCausalLM", "qwen3", dict(PRE_NORM, **QK_NORMS)),
    # Sandwich norms; llama.cpp stores Gemma's (1 + weight) norms as 1 + weight.
    "gemma3": Architecture("Gemma3ForCausalLM", "gemma3_text",
                           dict(QK_NORMS, attn_norm="input_layernorm", post_attention_norm="post_attention_layernorm",
                                ffn_norm="pre_feedforward_layernorm", post_ffw_norm="post_feedforward_layernorm"),
                           norm_shift=1.0, activation=("hidden_activation", "gelu_pytorch_tanh")),
}
# Gemma 3 in llama.cpp: every sixth layer global, the local ones at RoPE base 1e4.
GEMMA3_SLIDING_PATTERN = 6
GEMMA3_LOCAL_ROPE_BASE = 10000.0
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


def architecture_of(model):
    name = model.require("general.architecture")
    if name not in ARCHITECTURES:
        raise DataError("%s holds a %r model; this converter handles %s" % (model.path, name, ", ".join(ARCHITECTURES)))
    if model.get(name + ".expert_count", 0):
        raise DataError("%s is a mixture-of-experts model (%s.expert_count %d); nss_hpc trains dense models"
                        % (model.path, name, model.get(name + ".expert_count")))
    return name, ARCHITECTURES[name]


def hf_config(model, dtype):
    name, arch = architecture_of(model)
    key = lambda suffix: name + "." + suffix  # noqa: E731
    hidden = int(model.require(key("embedding_length")))
    heads = int(model.require(key("attention.head_count")))
    head_dim = int(model.get(key("attention.key_length"), hidden // heads))
    for other in ("attention.value_length", "rope.dimension_count"):
        if int(model.get(key(other), head_dim)) != head_dim:
            raise DataError("%s: %s is %d, not the head size %d; Hugging Face's %s cannot express that"
                            % (model.path, key(other), model.get(key(other)), head_dim, arch.hf_class))
    tokens = model.require("tokenizer.ggml.tokens")
    layers = int(model.require(key("block_count")))
    config = {
        "architectures": [arch.hf_class],
        "model_type": arch.model_type,
        "vocab_size": int(model.get(key("vocab_size"), len(tokens))),
        "hidden_size": hidden,
        "intermediate_size": int(model.require(key("feed_forward_length"))),
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": int(model.get(key("attention.head_count_kv"), heads)),
        "head_dim": head_dim,
        arch.activation[0]: arch.activation[1],
        "max_position_embeddings": int(model.require(key("context_length"))),
        "rms_norm_eps": float(model.require(key("attention.layer_norm_rms_epsilon"))),
        "rope_theta": float(model.get(key("rope.freq_base"), 10000.0)),
        "rope_scaling": rope_scaling(model, name),
        "attention_bias": False,
        "tie_word_embeddings": "output.weight" not in model.tensors,
        "torch_dtype": dtype,
    }
    if name == "llama":
        config["mlp_bias"] = False
    if name in ("qwen2", "qwen3"):
        config.update(use_sliding_window=False, sliding_window=None, max_window_layers=layers)
    if name == "gemma3":
        config.update(gemma3_attention(model, key, layers, hidden, heads, head_dim))
    for token in ("bos", "eos", "pad"):
        token_id = special_token_id(model, token)
        if token_id is not None:
            config[token + "_token_id"] = token_id
    return config


def gemma3_attention(model, key, layers, hidden, heads, head_dim):
    """Gemma 3's local and global layers and query scaling, as llama.cpp runs
    a file that states none of them (llama-model.cpp): a pattern of 6, local
    RoPE base 1e4, queries scaled by head_dim^-1/2 (hidden/heads for the 62
    layers of the 27B)."""
    window = model.require(key("attention.sliding_window"))
    pattern = model.get(key("attention.sliding_window_pattern"), GEMMA3_SLIDING_PATTERN)
    if isinstance(pattern, list):
        sliding = [bool(p) for p in pattern]
    else:
        sliding = [(layer + 1) % int(pattern) != 0 for layer in range(layers)]
    if len(sliding) != layers:
        raise DataError("%s: %s lists %d layers, the model has %d"
                        % (model.path, key("attention.sliding_window_pattern"), len(sliding), layers))
    for softcap in ("attn_logit_softcapping", "final_logit_softcapping"):
        if model.get(key(softcap)):
            raise DataError("%s: %s is set; nss_hpc computes no logit softcapping" % (model.path, key(softcap)))
    return {"sliding_window": int(window),
            "layer_types": ["sliding_attention" if s else "full_attention" for s in sliding],
            "rope_local_base_freq": GEMMA3_LOCAL_ROPE_BASE,
            "query_pre_attn_scalar": hidden // heads if layers == 62 else head_dim,
            "attn_logit_softcapping": None, "final_logit_softcapping": None}


def rope_scaling(model, name):
    if "rope_freqs.weight" in model.tensors:
        raise DataError("%s scales RoPE with per-frequency factors (tensor rope_freqs.weight, Llama 3.1 style); "
                        "convert the original Hugging Face model instead" % model.path)
    kind = model.get(name + ".rope.scaling.type", "none")
    if kind == "none":
        return None
    if kind == "linear":
        return {"rope_type": "linear", "factor": float(model.require(name + ".rope.scaling.factor"))}
    raise DataError("%s uses RoPE scaling %r; this converter handles none and linear" % (model.path, kind))


def special_token_id(model, key):
    names = {"bos": "bos_token_id", "eos": "eos_token_id", "pad": "padding_token_id", "unk": "unknown_token_id"}
    value = model.get("tokenizer.ggml." + names[key])
    return None if value is None else int(value)


def expected_shapes(config, arch):
    """Hugging Face name -> (GGUF name, shape) of every tensor the config implies."""
    hidden, inter, head_dim = config["hidden_size"], config["intermediate_size"], config["head_dim"]
    q_rows = config["num_attention_heads"] * head_dim
    kv_rows = config["num_key_value_heads"] * head_dim
    shapes = {"attn_q": [q_rows, hidden], "attn_k": [kv_rows, hidden], "attn_v": [kv_rows, hidden],
              "attn_output": [hidden, q_rows], "ffn_gate": [inter, hidden], "ffn_up": [inter, hidden],
              "ffn_down": [hidden, inter]}
    norm_shapes = {gguf: [head_dim] if gguf in QK_NORMS else [hidden] for gguf in arch.norms}
    weights = {"model.embed_tokens.weight": ("token_embd.weight", [config["vocab_size"], hidden]),
               "model.norm.weight": ("output_norm.weight", [hidden])}
    if not config["tie_word_embeddings"]:
        weights["lm_head.weight"] = ("output.weight", [config["vocab_size"], hidden])
    for layer in range(config["num_hidden_layers"]):
        block = lambda gguf, suffix: "blk.%d.%s.%s" % (layer, gguf, suffix)  # noqa: E731
        hf = lambda module, suffix: "model.layers.%d.%s.%s" % (layer, module, suffix)  # noqa: E731
        for gguf, shape in shapes.items():
            weights[hf(PROJECTIONS[gguf], "weight")] = (block(gguf, "weight"), shape)
            if gguf in arch.biases:
                weights[hf(PROJECTIONS[gguf], "bias")] = (block(gguf, "bias"), shape[:1])
        for gguf, module in arch.norms.items():
            weights[hf(module, "weight")] = (block(gguf, "weight"), norm_shapes[gguf])
    return weights


def check_tensors(model, weights):
    """Every tensor present with its shape and a supported type, nothing else."""
    wanted = {gguf_name: shape for gguf_name, shape in weights.values()}
    for name, tensor in model.tensors.items():
        if name not in wanted:
            raise DataError("%s holds the tensor %s, which a model of this architecture and shape does not have"
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


def hf_values(model, config, arch, gguf_name, shape):
    """One tensor dequantised to float32 with llama.cpp's changes undone."""
    tensor = model.tensors[gguf_name]
    values = np.asarray(dequantize(tensor.data, tensor.tensor_type), dtype=np.float32).reshape(shape)
    kind = gguf_name.split(".")[-2]
    if arch.permuted_qk and gguf_name.endswith(".weight") and kind in ("attn_q", "attn_k"):
        values = reverse_rope_permutation(
            values, config["num_attention_heads" if kind == "attn_q" else "num_key_value_heads"])
    if arch.norm_shift and gguf_name.endswith("norm.weight"):
        values = values - np.float32(arch.norm_shift)
    if not np.isfinite(values).all():
        raise DataError("%s: tensor %s holds non-finite values" % (model.path, gguf_name))
    return values


def to_dtype(values, dtype):
    """float32 -> the bytes of `dtype`, bfloat16 rounded to nearest even."""
    if dtype == "bfloat16":
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2").tobytes()
    return values.astype("<f4" if dtype == "float32" else "<f2").tobytes()


def write_safetensors(path, model, config, arch, weights, dtype):
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
            f.write(to_dtype(hf_values(model, config, arch, *weights[name]), dtype))
        f.flush()
        os.fsync(f.fileno())


# llama.cpp's pre-tokenizer names -> Hugging Face's equivalent (llama-vocab.cpp's regexes; Qwen2's tokenizer.json
# adds NFC). Without a name llama.cpp falls back to a split of its own, which has no such equivalent.
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
               r"|\s+(?!\S)|\s+")


def byte_level_pipeline(model):
    """The normalizer and pre-tokenizer of a byte-level BPE file's pre-tokenizer name."""
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    pre_name = model.require("tokenizer.ggml.pre")
    if pre_name == "gpt-2":
        return None, byte_level
    if pre_name == "smollm":
        return None, pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    if pre_name == "qwen2":
        split = pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False)
        return normalizers.NFC(), pre_tokenizers.Sequence(
            [split, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    raise DataError("%s has the pre-tokenizer %r; this converter handles gpt-2, smollm and qwen2"
                    % (model.path, pre_name))


def byte_level_tokenizer(model, tokens):
    """The tokenizers.Tokenizer llama.cpp's "gpt2" tokenizer model runs."""
    normalizer, pre_tokenizer = byte_level_pipeline(model)
    merges = [tuple(m.split(" ")) for m in model.require("tokenizer.ggml.merges")]
    if any(len(m) != 2 for m in merges):
        raise DataError("%s: a merge of tokenizer.ggml.merges is not two tokens separated by one space" % model.path)
    tokenizer = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges, fuse_unk=False,
                                     byte_fallback=False))
    if normalizer is not None:
        tokenizer.normalizer = normalizer
    tokenizer.pre_tokenizer = pre_tokenizer
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer, processors.ByteLevel(trim_offsets=False)


def gemma_tokenizer(model, tokens):
    """Gemma's SentencePiece BPE as its tokenizer.json spells it: spaces become
    U+2581, byte fallback, no merges in the file — they follow from the
    vocabulary, each token's split into two tokens ranked by the token's place
    in it (Gemma's scores do not follow its merge order). Whitespace tokens the
    file stores as spaces are the U+2581 runs the normalised text holds."""
    if model.require("general.architecture") != "gemma3":
        raise DataError("%s has the tokenizer model 'llama' (SentencePiece) outside a gemma3 model; this converter "
                        "handles byte-level BPE (gpt2), and SentencePiece for Gemma 3 only" % model.path)
    spelled = ["\u2581" * len(t) if t and not t.strip(" ") else t for t in tokens]
    vocab = {t: i for i, t in enumerate(spelled)}
    if len(vocab) != len(spelled):
        raise DataError("%s: tokenizer.ggml.tokens lists a token twice" % model.path)
    merges = []
    for token, rank in vocab.items():
        pairs = [(token[:i], token[i:]) for i in range(1, len(token)) if token[:i] in vocab and token[i:] in vocab]
        merges.extend((left, right, rank) for left, right in sorted(pairs, key=lambda p: (vocab[p[0]], vocab[p[1]])))
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])))
    unk = special_token_id(model, "unk")
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[(a, b) for a, b, _ in merges], fuse_unk=True,
                                     byte_fallback=True, unk_token=spelled[unk] if unk is not None else None))
    tokenizer.normalizer = normalizers.Replace(" ", "\u2581")
    tokenizer.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous", invert=False)
    tokenizer.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
    return tokenizer, None


def file_tokenizer(model):
    """The tokenizers.Tokenizer the file's tokenizer model runs, and its control tokens."""
    kind = model.require("tokenizer.ggml.model")
    tokens = model.require("tokenizer.ggml.tokens")
    if kind == "gpt2":
        tokenizer, post = byte_level_tokenizer(model, tokens)
    elif kind == "llama":
        tokenizer, post = gemma_tokenizer(model, tokens)
    else:
        raise DataError("%s has the tokenizer model %r; this converter handles byte-level BPE (gpt2) and Gemma's "
                        "SentencePiece (llama)" % (model.path, kind))
    types = model.get("tokenizer.ggml.token_type", [])
    control = [tokens[i] for i, t in enumerate(types) if t == CONTROL_TOKEN]
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    tokenizer.add_tokens([AddedToken(tokens[i], special=False, normalized=False)
                          for i, t in enumerate(types) if t == USER_DEFINED_TOKEN and tokens[i].strip(" ")])
    bos = special_token_id(model, "bos")
    steps = [post] if post is not None else []
    if model.get("tokenizer.ggml.add_bos_token", kind == "llama") and bos is not None:
        steps.append(processors.TemplateProcessing(single="%s $A" % tokens[bos], special_tokens=[(tokens[bos], bos)]))
    if steps:
        tokenizer.post_processor = steps[0] if len(steps) == 1 else processors.Sequence(steps)
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
    sentencepiece = model.require("tokenizer.ggml.model") == "llama"
    context = model.require(model.require("general.architecture") + ".context_length")
    config = dict(special_map, tokenizer_class="PreTrainedTokenizerFast",
                  add_bos_token=bool(model.get("tokenizer.ggml.add_bos_token", sentencepiece)),
                  add_eos_token=bool(model.get("tokenizer.ggml.add_eos_token", False)),
                  model_max_length=int(context), clean_up_tokenization_spaces=False)
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
    _, arch = architecture_of(model)
    config = hf_config(model, dtype)
    weights = expected_shapes(config, arch)
    check_tensors(model, weights)
    tokenizer, control = file_tokenizer(model)
    tokenizer_config, special_map = tokenizer_files(model, control)
    generation = {k: config[k] for k in ("bos_token_id", "eos_token_id", "pad_token_id") if k in config}

    temporary = "%s.tmp.%d" % (output.rstrip("/"), os.getpid())
    os.makedirs(temporary)
    try:
        write_safetensors(os.path.join(temporary, "model.safetensors"), model, config, arch, weights, dtype)
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
        print("convert_gguf: error: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    except DataError as e:
        print("convert_gguf: error: [gguf] %s" % e, file=sys.stderr)
        return EXIT_DATA
    print("wrote %s: %s, %d layers, hidden %d, vocab %d, %d tensors, %s%s" % (
        args.output, config["architectures"][0], config["num_hidden_layers"], config["hidden_size"], config["vocab_size"], tensors, args.dtype,
        ", tied embeddings" if config["tie_word_embeddings"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
