"""Writes one tokenizer.json per model family with the pipeline that
family's published file has, made by the ecosystem's own code; runs in the
venv (transformers, tokenizers, sentencepiece).

  family_tokenizers.py families OUT_DIR TRAIN_TEXT
  family_tokenizers.py resave MODEL_DIR OUT_DIR

`resave` loads a model directory's tokenizer with AutoTokenizer and writes it
with save_pretrained, its normalizer an empty Sequence as newer files carry
it (the SmolLM2 file users reported).

  - llama2-legacy, mistral: LlamaTokenizerFast converted from a SentencePiece
    BPE model trained here (legacy: Prepend + Replace normalizers, the
    Replace/ByteFallback/Fuse/Strip decoder; non-legacy, as Mistral's newer
    files: a Metaspace pre-tokenizer prepending to the first piece only),
  - gemma: GemmaTokenizerFast converted from such a model (Replace
    normalizer, a Split on " " merged with the previous piece, byte fallback,
    tab as a token, <start_of_turn> special),
  - qwen2: Qwen2TokenizerFast from a byte-level vocabulary and merges trained
    here (NFC, Qwen's Split pattern, ByteLevel, its special tokens); Qwen3's
    files have the same pipeline,
  - then variants of the trained byte-level vocabulary for the normalizers
    and pre-tokenizers no family above covers (NFKC, NFD, NFKD, Lowercase,
    Strip, Prepend, Replace with a regex, StripAccents, Punctuation,
    Whitespace, WhitespaceSplit, Metaspace with every prepend scheme and
    split, CharDelimiterSplit, Digits; a Metaspace decoder before the
    ByteLevel one).

  - bert-cased, bert-uncased: BertTokenizerFast (BertConverter: the
    BertNormalizer, BertPreTokenizer, TemplateProcessing [CLS] $A [SEP],
    WordPiece model and decoder) from a WordPiece vocabulary trained here,
    with and without lowercasing (and so stripping accents),
  - bert-native: tokenizers' own BertWordPieceTokenizer over that vocabulary
    (BertProcessing), and bert-short-words: the same with
    max_input_chars_per_word 8, no clean_text, strip_accents on while
    cased, and a
    decoder without cleanup.

Each is written with save_pretrained (transformers) or Tokenizer.save
(tokenizers): the files users get."""
import json
import os
import sys

import sentencepiece as spm
from tokenizers import BertWordPieceTokenizer, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import AutoTokenizer, BertTokenizerFast, GemmaTokenizerFast, LlamaTokenizerFast, Qwen2TokenizerFast

QWEN_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def train_spm(text, prefix, **ids):
    spm.SentencePieceTrainer.train(input=text, model_prefix=prefix, model_type="bpe", vocab_size=1200,
                                   byte_fallback=True, split_digits=True, character_coverage=0.9995,
                                   normalization_rule_name="identity", remove_extra_whitespaces=False,
                                   allow_whitespace_only_pieces=True, hard_vocab_limit=False, minloglevel=2,
                                   **ids)
    return prefix + ".model"


def save(tokenizer, out, name):
    directory = os.path.join(out, name)
    tokenizer.save_pretrained(directory)
    return os.path.join(directory, "tokenizer.json")


def llama_family(out, text):
    model = train_spm(text, os.path.join(out, "llama_spm"), unk_id=0, bos_id=1, eos_id=2, pad_id=-1)
    written = [save(LlamaTokenizerFast(vocab_file=model, from_slow=True, legacy=legacy, add_prefix_space=True),
                    out, name) for name, legacy in (("llama2-legacy", True), ("mistral", False))]
    gemma_model = train_spm(text, os.path.join(out, "gemma_spm"), pad_id=0, eos_id=1, bos_id=2, unk_id=3,
                            user_defined_symbols=["<start_of_turn>", "<end_of_turn>"])
    gemma = GemmaTokenizerFast(vocab_file=gemma_model, from_slow=True)
    written.append(save(gemma, out, "gemma"))
    return written


def byte_level_vocabulary(out, text):
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = trainers.BpeTrainer(vocab_size=2000, special_tokens=QWEN_SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train([text], trainer)
    directory = os.path.join(out, "qwen_files")
    os.makedirs(directory, exist_ok=True)
    tokenizer.model.save(directory)
    return os.path.join(directory, "vocab.json"), os.path.join(directory, "merges.txt")


def qwen2(out, vocab, merges):
    tokenizer = Qwen2TokenizerFast(vocab_file=vocab, merges_file=merges, from_slow=True,
                                   unk_token=None, bos_token=None, eos_token="<|endoftext|>",
                                   pad_token="<|endoftext|>")
    tokenizer.add_special_tokens({"additional_special_tokens": QWEN_SPECIAL[1:]})
    return save(tokenizer, out, "qwen2")


# Normalizer and pre-tokenizer variants over the byte-level vocabulary.
VARIANTS = {
    "nfkc-lowercase": (normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]), None),
    "nfd-strip-accents": (normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents()]), None),
    "nfkd-strip": (normalizers.Sequence([normalizers.NFKD(), normalizers.Strip(left=True, right=True)]), None),
    "prepend-replace-regex": (normalizers.Sequence([normalizers.Prepend("\u2581"),
                                                    normalizers.Replace(Regex(r"\s+"), " "),
                                                    normalizers.Strip(left=False, right=True)]), None),
    "punctuation": (None, pre_tokenizers.Punctuation(behavior="isolated")),
    "punctuation-contiguous": (None, pre_tokenizers.Punctuation(behavior="contiguous")),
    "whitespace": (None, pre_tokenizers.Whitespace()),
    "whitespace-split": (normalizers.NFC(), pre_tokenizers.WhitespaceSplit()),
    "metaspace-always": (None, pre_tokenizers.Metaspace(prepend_scheme="always", split=True),
                         decoders.Metaspace(prepend_scheme="always")),
    "metaspace-first": (None, pre_tokenizers.Metaspace(prepend_scheme="first", split=True)),
    "metaspace-never": (None, pre_tokenizers.Metaspace(prepend_scheme="never", split=False)),
    "char-delimiter-digits": (None, pre_tokenizers.Sequence([pre_tokenizers.CharDelimiterSplit("e"),
                                                             pre_tokenizers.Digits(individual_digits=True)])),
}


def variants(out, vocab, merges):
    written = []
    for name, (normalizer, pre_tokenizer, *decoder) in VARIANTS.items():
        tokenizer = Tokenizer(models.BPE.from_file(vocab, merges))
        tokenizer.add_special_tokens(QWEN_SPECIAL)
        tokenizer.add_tokens(["[[note]]"])
        if normalizer is not None:
            tokenizer.normalizer = normalizer
        steps = [pre_tokenizer] if pre_tokenizer is not None else []
        # The pieces still go through the byte-level alphabet the vocabulary is in.
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            steps + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        tokenizer.decoder = decoders.Sequence(decoder + [decoders.ByteLevel()])
        path = os.path.join(out, name, "tokenizer.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tokenizer.save(path)
        written.append(path)
    return written


def wordpiece_vocabulary(out, text):
    trainer = BertWordPieceTokenizer(lowercase=False)
    trainer.train([text], vocab_size=1000)
    directory = os.path.join(out, "bert_files")
    os.makedirs(directory, exist_ok=True)
    return trainer.save_model(directory)[0]


def bert(out, text):
    vocab = wordpiece_vocabulary(out, text)
    written = [save(BertTokenizerFast(vocab_file=vocab, do_lower_case=lower), out, name)
               for name, lower in (("bert-cased", False), ("bert-uncased", True))]
    native = BertWordPieceTokenizer(vocab, lowercase=False)
    written.append(os.path.join(out, "bert-native.json"))
    native.save(written[-1])
    short = BertWordPieceTokenizer(vocab, clean_text=False, lowercase=False, strip_accents=True)
    short._tokenizer.model = models.WordPiece.from_file(vocab, unk_token="[UNK]", max_input_chars_per_word=8)
    short._tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    written.append(os.path.join(out, "bert-short-words.json"))
    short.save(written[-1])
    return written


def resave(source, out):
    tokenizer = AutoTokenizer.from_pretrained(source)
    tokenizer.backend_tokenizer.normalizer = normalizers.Sequence([])
    tokenizer.save_pretrained(out)
    print(json.dumps([os.path.join(out, "tokenizer.json")]))


def families(out, text):
    os.makedirs(out, exist_ok=True)
    written = llama_family(out, text)
    vocab, merges = byte_level_vocabulary(out, text)
    written.append(qwen2(out, vocab, merges))
    written += variants(out, vocab, merges)
    written += bert(out, text)
    print(json.dumps(written))


if __name__ == "__main__":
    {"families": families, "resave": resave}[sys.argv[1]](sys.argv[2], sys.argv[3])
