"""GGUF files for the converter's tests, written the way llama.cpp's
convert_hf_to_gguf.py writes a Llama, Qwen2, Qwen3 or Gemma 3 model: its
tensor names, Llama's q/k row permutation, Gemma's norms stored as 1 +
weight, its tokenizer metadata. Independent of scripts/convert_gguf.py. Runs under the venv scripts/setup.sh creates
(gguf, tokenizers, transformers):

    gguf_files.py tokenizer OUT.json CORPUS...        a byte-level BPE with SmolLM2's pre-tokenizer
    gguf_files.py model HF_DIR TOKENIZER.json OUT.gguf [--type Q8_0] [--architecture NAME]
                        [--metadata KEY=VALUE]...
                        (the architecture: the one of HF_DIR's model_type unless named)
                        [--tokenizer-model NAME] [--pre NAME] [--add-bos]
    gguf_files.py encode TOKENIZER.json HF_DIR TEXT...  JSON: ids of TEXT by both, and what
                                                        transformers' AutoTokenizer.from_pretrained(HF_DIR) makes
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_files import read_model_dir  # noqa: E402

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
                 "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
                 "{% endif %}")
LAYER_NAMES = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
               "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
               "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
               "mlp.down_proj": "ffn_down", "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm"}
# Gemma 3's sandwich norms (llama.cpp's tensor names for them).
GEMMA3_NORM_NAMES = {"post_attention_layernorm": "post_attention_norm", "pre_feedforward_layernorm": "ffn_norm",
                     "post_feedforward_layernorm": "post_ffw_norm"}
ARCHITECTURE_OF_MODEL_TYPE = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2", "qwen3": "qwen3",
                              "gemma3_text": "gemma3"}


def train_tokenizer(out, corpus):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                       pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train(corpus, trainer)
    tokenizer.save(out)


def permute(weight, heads):
    """llama.cpp's LlamaModel.permute: rotate_half halves -> interleaved pairs."""
    return weight.reshape(heads, 2, weight.shape[0] // heads // 2, *weight.shape[1:]).swapaxes(1, 2).reshape(
        weight.shape)


def gguf_name(name, architecture):
    if name == "model.embed_tokens.weight":
        return "token_embd.weight"
    if name == "model.norm.weight":
        return "output_norm.weight"
    if name == "lm_head.weight":
        return "output.weight"
    _, _, layer, module = name.split(".", 3)
    module, kind = module.rsplit(".", 1)
    names = dict(LAYER_NAMES, **GEMMA3_NORM_NAMES) if architecture == "gemma3" else LAYER_NAMES
    return "blk.%s.%s.%s" % (layer, names[module], kind)


def gguf_values(name, values, config, architecture):
    """What llama.cpp's converter stores for one Hugging Face tensor."""
    if architecture == "llama" and name.endswith("q_proj.weight"):
        return permute(values, config["num_attention_heads"])
    if architecture == "llama" and name.endswith("k_proj.weight"):
        return permute(values, config["num_key_value_heads"])
    if architecture == "gemma3" and name.endswith("norm.weight"):
        return values + np.float32(1.0)
    return values


def rope_theta(config, layer_type):
    """The RoPE base of a layer type: rope_theta, or transformers 5's rope_parameters."""
    if config.get("rope_theta"):
        return config["rope_theta"]
    parameters = config.get("rope_parameters") or {}
    return parameters.get(layer_type, parameters).get("rope_theta", 10000.0)


def add_shape(writer, config, arch):
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_rope_freq_base(rope_theta(config, "full_attention"))
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    if arch == "llama":
        writer.add_rope_dimension_count(head_dim)
    else:
        writer.add_key_length(head_dim)
        writer.add_value_length(head_dim)
    writer.add_uint32(arch + ".vocab_size", config["vocab_size"])
    if arch == "gemma3":
        writer.add_sliding_window(config["sliding_window"])
        # A pattern other than llama.cpp's every-sixth-global, as a per-layer list.
        writer.add_array(arch + ".attention.sliding_window_pattern",
                         [t == "sliding_attention" for t in config["layer_types"]])


def write_model(args):
    import gguf
    config, tensors = read_model_dir(args.hf_dir)
    with open(args.tokenizer) as f:
        tokenizer = json.load(f)
    arch = args.architecture or ARCHITECTURE_OF_MODEL_TYPE[config["model_type"]]
    writer = gguf.GGUFWriter(args.out, arch)
    writer.add_name("nss_hpc test " + arch)
    add_shape(writer, config, arch)
    for key_value in args.metadata:  # extra float32 keys: KEY=VALUE
        key, value = key_value.split("=", 1)
        writer.add_float32(key, float(value))

    vocab = tokenizer["model"]["vocab"]
    tokens = [None] * len(vocab)
    for token, index in vocab.items():
        tokens[index] = token
    merges = [m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"]["merges"]]
    specials = {t["content"] for t in tokenizer["added_tokens"] if t["special"]}
    writer.add_tokenizer_model(args.tokenizer_model)
    writer.add_tokenizer_pre(args.pre)
    writer.add_token_list(tokens)
    writer.add_token_types([3 if t in specials else 1 for t in tokens])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(vocab["<|im_start|>"])
    writer.add_eos_token_id(vocab["<|im_end|>"])
    writer.add_unk_token_id(vocab["<|endoftext|>"])
    writer.add_pad_token_id(vocab["<|im_end|>"])
    writer.add_add_bos_token(args.add_bos)
    writer.add_chat_template(CHAT_TEMPLATE)

    quant = gguf.GGMLQuantizationType[args.type]
    for name in sorted(tensors):
        values = gguf_values(name, tensors[name].astype(np.float32), config, arch)
        if args.type == "I32":
            writer.add_tensor(gguf_name(name, arch), values.astype(np.int32))
        elif values.ndim == 2 and quant != gguf.GGMLQuantizationType.F32:
            writer.add_tensor(gguf_name(name, arch), gguf.quants.quantize(values, quant), raw_dtype=quant)
        else:  # norms and biases stay F32, as llama.cpp keeps them
            writer.add_tensor(gguf_name(name, arch), values)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def encode(args):
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer
    source = Tokenizer.from_file(args.tokenizer)
    converted = AutoTokenizer.from_pretrained(args.hf_dir)
    print(json.dumps({"source": [source.encode(t).ids for t in args.text],
                      "converted": [converted(t)["input_ids"] for t in args.text],
                      "decoded": [converted.decode(converted(t)["input_ids"]) for t in args.text],
                      "chat": converted.apply_chat_template([{"role": "user", "content": args.text[0]}],
                                                            add_generation_prompt=True, tokenize=False),
                      "eos_token": converted.eos_token, "bos_token": converted.bos_token}))


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    tokenizer = commands.add_parser("tokenizer")
    tokenizer.add_argument("out")
    tokenizer.add_argument("corpus", nargs="+")
    model = commands.add_parser("model")
    model.add_argument("hf_dir")
    model.add_argument("tokenizer")
    model.add_argument("out")
    model.add_argument("--type", default="F32")
    model.add_argument("--architecture")
    model.add_argument("--tokenizer-model", default="gpt2")
    model.add_argument("--pre", default="smollm")
    model.add_argument("--add-bos", action="store_true")
    model.add_argument("--metadata", action="append", default=[], help="KEY=VALUE, a float32 key to add")
    check = commands.add_parser("encode")
    check.add_argument("tokenizer")
    check.add_argument("hf_dir")
    check.add_argument("text", nargs="+")
    args = parser.parse_args()
    if args.command == "tokenizer":
        train_tokenizer(args.out, args.corpus)
    elif args.command == "model":
        write_model(args)
    else:
        encode(args)


if __name__ == "__main__":
    main()
