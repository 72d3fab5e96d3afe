"""Hugging Face `tokenizers` side of the parity test; runs in the venv.

  hf_reference.py train-llama3 OUT.json TRAIN_TEXT...   a Llama-3-style tokenizer
  hf_reference.py encode TOKENIZER.json CORPUS.json     what tokenizer_probe prints
"""
import json
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

# Llama 3's pre-tokenizer pattern (its tokenizer.json's Split).
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]


def train_llama3(out, files):
    tokenizer = Tokenizer(models.BPE(ignore_merges=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=3000, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train(files, trainer)
    # A non-special added token matched after normalization (the second pass)
    # and one that takes the whitespace around it.
    tokenizer.add_tokens(["[[note]]", AddedToken("<pad>", special=False, lstrip=True, rstrip=True,
                                                 normalized=False)])
    bos = tokenizer.token_to_id("<|begin_of_text|>")
    tokenizer.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", bos)])])
    tokenizer.save(out)


def encode(path, corpus_path):
    tokenizer = Tokenizer.from_file(path)
    print(json.dumps({"vocab_size": tokenizer.get_vocab_size(with_added_tokens=True)}))
    with open(corpus_path) as f:
        corpus = json.load(f)
    for text in corpus:
        ids = tokenizer.encode(text, add_special_tokens=True).ids
        print(json.dumps({"ids": ids,
                          "ids_plain": tokenizer.encode(text, add_special_tokens=False).ids,
                          "decoded": tokenizer.decode(ids, skip_special_tokens=False),
                          "decoded_skip": tokenizer.decode(ids, skip_special_tokens=True),
                          "decoded_each": [tokenizer.decode([i], skip_special_tokens=False) for i in ids]}))


if __name__ == "__main__":
    if sys.argv[1] == "train-llama3":
        train_llama3(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "encode":
        encode(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: hf_reference.py train-llama3 OUT TEXT... | encode TOKENIZER CORPUS")
