"""GGUF files for the converter's tests, written the way llama.cpp's
convert_hf_to_gguf.py writes a Llama: its tensor names, its q/k row
permutation, its tokenizer metadata. Independent of
scripts/convert_gguf_llama.py. Runs under the venv scripts/setup.sh creates
(gguf, tokenizers, transformers):

    gguf_files.py tokenizer OUT.json CORPUS...        a byte-level BPE with SmolLM2's pre-tokenizer
    gguf_files.py model HF_DIR TOKENIZER.json OUT.gguf [--type Q8_0] [--architecture NAME]
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
               "mlp.down_proj": "ffn_down"}


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


def gguf_name(name):
    if name == "model.embed_tokens.weight":
        return "token_embd.weight"
    if name == "model.norm.weight":
        return "output_norm.weight"
    if name == "lm_head.weight":
        return "output.weight"
    _, _, layer, module = name.split(".", 3)
    return "blk.%s.%s.weight" % (layer, LAYER_NAMES[module[:-len(".weight")]])


def write_model(args):
    import gguf
    config, tensors = read_model_dir(args.hf_dir)
    with open(args.tokenizer) as f:
        tokenizer = json.load(f)
    writer = gguf.GGUFWriter(args.out, args.architecture)
    arch = args.architecture
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_rope_freq_base(config["rope_theta"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_rope_dimension_count(config["head_dim"])
    writer.add_uint32(arch + ".vocab_size", config["vocab_size"])

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
        values = tensors[name].astype(np.float32)
        if name.endswith("q_proj.weight"):
            values = permute(values, config["num_attention_heads"])
        elif name.endswith("k_proj.weight"):
            values = permute(values, config["num_key_value_heads"])
        if args.type == "I32":
            writer.add_tensor(gguf_name(name), values.astype(np.int32))
        elif values.ndim == 2 and quant != gguf.GGMLQuantizationType.F32:
            writer.add_tensor(gguf_name(name), gguf.quants.quantize(values, quant), raw_dtype=quant)
        else:  # norms stay F32, as llama.cpp keeps them
            writer.add_tensor(gguf_name(name), values)
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
    model.add_argument("--architecture", default="llama")
    model.add_argument("--tokenizer-model", default="gpt2")
    model.add_argument("--pre", default="smollm")
    model.add_argument("--add-bos", action="store_true")
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
