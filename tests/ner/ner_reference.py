"""transformers' side of the named-entity tagger parity test; runs in the
venv (transformers, tokenizers, torch).

  ner_reference.py models OUT_DIR TEXTS.jsonl
      tiny random token classifiers saved by save_pretrained, each with its
      tokenizer: a cased BERT (gelu, CoNLL's B-/I- labels), an uncased BERT
      with accents stripped (gelu_new, labels without prefixes, bfloat16
      weights), a DistilBERT (relu) and a BERT from older checkpoints
      (LayerNorm gamma/beta); the WordPiece vocabulary is trained on the
      texts, so no word is unknown.
  ner_reference.py tag MODEL_DIR TEXTS.jsonl
      per text: the ids, the per-token logits, and transformers'
      token-classification pipeline with aggregation_strategy="first" (byte
      offsets), as JSON lines.
"""
import json
import os
import sys

import torch
from safetensors.torch import load_file, save_file
from tokenizers import BertWordPieceTokenizer
from transformers import (AutoModelForTokenClassification, AutoTokenizer, BertConfig, BertForTokenClassification,
                          BertTokenizerFast, DistilBertConfig, DistilBertTokenizerFast, DistilBertForTokenClassification, pipeline)

CONLL = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC", "I-MISC"]
PLAIN = ["O", "PERSON", "LOCATION", "email", "ORG"]


def texts_of(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def tokenizer(out, texts, lowercase, kind=BertTokenizerFast, max_length=64):
    """A WordPiece vocabulary trained on `texts` under `out`.vocab, as a transformers tokenizer."""
    trainer_dir = out + ".vocab"
    os.makedirs(trainer_dir, exist_ok=True)
    corpus = os.path.join(trainer_dir, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(texts))
    wordpiece = BertWordPieceTokenizer(lowercase=lowercase, strip_accents=lowercase)
    wordpiece.train([corpus], vocab_size=600 if max_length == 64 else 2000, min_frequency=1)
    wordpiece.save_model(trainer_dir)
    return kind(vocab_file=os.path.join(trainer_dir, "vocab.txt"), do_lower_case=lowercase, model_max_length=max_length)


def sharpen(model, seed):
    # Random weights give near-uniform labels; a larger classifier makes the
    # argmax of each token a clear decision, so float rounding cannot flip it.
    torch.manual_seed(seed)
    with torch.no_grad():
        model.classifier.weight.mul_(40.0)
        model.classifier.bias.normal_(0.0, 0.5)


def labels(names):
    return {"id2label": dict(enumerate(names)), "label2id": {n: i for i, n in enumerate(names)}}


def make_models(out, texts):
    torch.manual_seed(7)
    cased = tokenizer(os.path.join(out, "cased"), texts, False)
    uncased = tokenizer(os.path.join(out, "uncased"), texts, True)
    # DistilBERT's tokenizer gives no token_type_ids, which its model refuses.
    distil = tokenizer(os.path.join(out, "distil"), texts, False, DistilBertTokenizerFast)
    shape = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                 max_position_embeddings=64, initializer_range=0.2)
    made = {
        "bert": (BertForTokenClassification(BertConfig(vocab_size=cased.vocab_size, hidden_act="gelu",
                                                       **shape, **labels(CONLL))), cased, None),
        "bert-uncased-bf16": (BertForTokenClassification(BertConfig(vocab_size=uncased.vocab_size,
                                                                    hidden_act="gelu_new", layer_norm_eps=1e-5,
                                                                    **shape, **labels(PLAIN))),
                              uncased, torch.bfloat16),
        "distilbert": (DistilBertForTokenClassification(DistilBertConfig(
            vocab_size=cased.vocab_size, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64,
            activation="relu", initializer_range=0.2, **labels(CONLL))), distil, None),
        "bert-legacy-names": (BertForTokenClassification(BertConfig(vocab_size=cased.vocab_size, **shape,
                                                                    **labels(CONLL))), cased, None),
    }
    for seed, (name, (model, tok, dtype)) in enumerate(made.items()):
        sharpen(model, seed)
        directory = os.path.join(out, name)
        (model.to(dtype) if dtype else model).save_pretrained(directory, safe_serialization=True)
        tok.save_pretrained(directory)
        if name == "bert-legacy-names":
            path = os.path.join(directory, "model.safetensors")
            tensors = load_file(path)
            renamed = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
                       for k, v in tensors.items()}
            save_file(renamed, path, metadata={"format": "pt"})
        print(directory)


def byte_offset(text, char_offset):
    return len(text[:char_offset].encode("utf-8"))


def tag(directory, texts):
    model = AutoModelForTokenClassification.from_pretrained(directory, torch_dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(directory)
    nlp = pipeline("token-classification", model=model, tokenizer=tok, aggregation_strategy="first", device=-1)
    for text in texts:
        ids = tok(text)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].tolist()
        groups = [{"group": g["entity_group"], "begin": byte_offset(text, g["start"]),
                   "end": byte_offset(text, g["end"]), "score": float(g["score"])} for g in nlp(text)]
        print(json.dumps({"ids": ids, "logits": logits, "entities": groups}))


if __name__ == "__main__":
    if sys.argv[1] == "models":
        make_models(sys.argv[2], texts_of(sys.argv[3]))
    elif sys.argv[1] == "tag":
        tag(sys.argv[2], texts_of(sys.argv[3]))
    else:
        sys.exit("usage: ner_reference.py models OUT TEXTS.jsonl | tag MODEL_DIR TEXTS.jsonl")
