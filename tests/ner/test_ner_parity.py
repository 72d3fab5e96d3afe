"""The named-entity tagger (lib/ner, through ner_probe) against transformers
(the venv's) on tiny random token classifiers saved by save_pretrained —
BERT cased (gelu), BERT uncased with accents stripped (gelu_new, bfloat16
weights, labels without B-/I-), DistilBERT (relu), and LayerNorm weights
under their old gamma/beta names:

  - the words: the C++ word split equals the words transformers' fast
    tokenizer gives (word_ids and offsets), on text with punctuation,
    accents, CJK, control characters and unusual whitespace;
  - the logits of every token equal the model's (1e-4);
  - the entity groups equal the token-classification pipeline's with
    aggregation_strategy="first": group, byte offsets, score (1e-4);
  - a text longer than the model's positions is cut into [CLS] ... [SEP]
    sequences at word boundaries and tagged as the same cut in Python tags it;
  - a directory that is not a tagger (no weights, a pickle, no config,
    truncated weights, a config the weights do not fit, a BPE tokenizer,
    another architecture) is refused naming the file."""
import json
import os
import random
import shutil
import subprocess
import sys
import unicodedata
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import nss_e2e  # noqa: E402

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ner_reference.py")
PROBE = nss_e2e.binary("ner_probe")
MODELS = ["bert", "bert-uncased-bf16", "distilbert", "bert-legacy-names"]

FIRST = ["Alice", "Bob", "Zorblax", "Quendrith", "Marie", "José", "Åsa", "Olúwaseun", "Li", "Renée"]
LAST = ["Smith", "Okafor", "Vantrell", "Müller", "García", "Nakamura", "O'Brien", "Dubois"]
PLACES = ["Paris", "New York", "São Paulo", "Zürich", "Lagos", "Kyoto", "Reykjavík"]
FILLER = ["met", "with", "in", "the", "office", "on", "Monday", "and", "called", "about", "order", "#", "12",
          "re", ":", "invoice", "(", "late", ")", "-", "thanks", "!", "?", "e-mail", "sent", "to", "us", "...",
          "東京", "会议", "naïve", "café", "façade", "3.5", "v2.0", "'s", "n't"]


def sentence(rng, words):
    parts = []
    for _ in range(words):
        pick = rng.random()
        if pick < 0.2:
            parts.append(rng.choice(FIRST) + " " + rng.choice(LAST))
        elif pick < 0.3:
            parts.append(rng.choice(PLACES))
        else:
            parts.append(rng.choice(FILLER))
    glue = [" ", " ", " ", "  ", "\t", ", ", " \u00a0", "\u2003"]
    return "".join(p + rng.choice(glue) for p in parts).strip()


def texts(seed, count, words):
    rng = random.Random(seed)
    out = [sentence(rng, rng.randint(1, words)) for _ in range(count)]
    out += ["Alice\u0007Smith met Bob", "\u200bZorblax\u200b Quendrith", "x\u0000y Paris", "東京でAliceに会った",
            "", "   ", "!!!", "Smith,Okafor;Vantrell", "Renée\u0301 Dubois"]
    return out


def same_span(text, theirs, ours):
    """`ours` where it differs from `theirs` only by accents a normalizer
    strips at either end (a span here covers the whole word as written;
    tokenizers' offsets stop at the last character it kept), else `theirs`."""
    if len(ours) != 2:
        return theirs
    data = text.encode("utf-8")
    edges = data[min(ours[0], theirs[0]):max(ours[0], theirs[0])] + data[min(ours[1], theirs[1]):max(ours[1], theirs[1])]
    marks_only = all(unicodedata.category(c) == "Mn" for c in edges.decode("utf-8", "replace"))
    return tuple(ours) if marks_only and ours[0] <= theirs[0] and ours[1] >= theirs[1] else tuple(theirs)


class NerParityTest(nss_e2e.VenvScratchDirTest):
    SCRATCH_TAG = "ner_parity"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.models_dir = nss_e2e.scratch("ner_models")
        cls.texts = texts(11, 60, 10)
        cls.long_texts = [sentence(random.Random(s), 90) for s in (1, 2, 3)]
        cls.corpus = os.path.join(cls.models_dir, "texts.jsonl")
        cls.write_texts(cls.corpus, cls.texts + cls.long_texts + [" ".join(FIRST + LAST + PLACES + FILLER)])
        made = subprocess.run([nss_e2e.VENV_PYTHON, REFERENCE, "models", cls.models_dir, cls.corpus],
                              capture_output=True, timeout=240)
        if made.returncode != 0:
            raise AssertionError(made.stderr.decode()[-3000:])

    @classmethod
    def tearDownClass(cls):
        nss_e2e.remove(cls.models_dir)

    @staticmethod
    def write_texts(path, items):
        with open(path, "w", encoding="utf-8") as f:
            for text in items:
                f.write(json.dumps({"text": text}) + "\n")

    def reference(self, model, items):
        path = self.path(model + ".jsonl")
        self.write_texts(path, items)
        out = self.venv(REFERENCE, "tag", os.path.join(self.models_dir, model), path)
        self.assertEqual(out.returncode, 0, out.stderr.decode()[-3000:])
        return [json.loads(line) for line in out.stdout.decode().splitlines()]

    def probe(self, args, stdin):
        out = subprocess.run([PROBE] + args, input=stdin.encode(), capture_output=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr.decode()[-3000:])
        return out

    def tag(self, model, items):
        lines = "".join(json.dumps({"text": t}) + "\n" for t in items)
        out = self.probe([os.path.join(self.models_dir, model)], lines)
        return [json.loads(line) for line in out.stdout.decode().splitlines()], json.loads(out.stderr)

    def test_logits_and_groups_match_transformers(self):
        for model in MODELS:
            with self.subTest(model=model):
                expected = self.reference(model, self.texts)
                ids = "".join(" ".join(map(str, e["ids"])) + "\n" for e in expected)
                logits = json.loads(self.probe(["--logits", os.path.join(self.models_dir, model)], ids).stdout)
                pairs = [(a, b) for e, got in zip(expected, logits)
                         for row_e, row_g in zip(e["logits"], got) for a, b in zip(row_e, row_g)]
                self.assertEqual(len(pairs), sum(len(e["logits"]) for e in expected) * len(expected[0]["logits"][0]))
                # float32 sums of a different order: relative to the largest logit.
                scale = max(abs(a) for a, _ in pairs)
                self.assertLess(max(abs(a - b) for a, b in pairs), 1e-5 + 2e-6 * scale)
                tagged, described = self.tag(model, self.texts)
                groups = 0
                for text, e, got in zip(self.texts, expected, tagged):
                    simple = [(g["group"], g["begin"], g["end"]) for g in got["entities"]]
                    self.assertEqual(simple, [(g["group"],) + same_span(text, (g["begin"], g["end"]), ours[1:])
                                              for g, ours in zip(e["entities"], simple + [()] * len(e["entities"]))],
                                     text)
                    for a, b in zip(got["entities"], e["entities"]):
                        self.assertAlmostEqual(a["score"], b["score"], delta=1e-4)
                    groups += len(simple)
                self.assertGreater(groups, 50, "the random tagger should label many words")
                self.assertEqual(described["model_type"], "distilbert" if model == "distilbert" else "bert")
                self.assertEqual(described["cells_tagged"], len(self.texts))

    def test_words_match_the_fast_tokenizer(self):
        script = ("import json,sys\nfrom transformers import AutoTokenizer\n"
                  "tok=AutoTokenizer.from_pretrained(sys.argv[1])\n"
                  "for line in open(sys.argv[2],encoding='utf-8'):\n"
                  "    t=json.loads(line)['text']; e=tok(t,add_special_tokens=False,return_offsets_mapping=True)\n"
                  "    words={}\n"
                  "    for w,(s,f) in zip(e.word_ids(),e['offset_mapping']):\n"
                  "        b=len(t[:s].encode()); g=len(t[:f].encode()); o=words.setdefault(w,[b,g]); o[1]=g\n"
                  "    print(json.dumps([words[k] for k in sorted(words)]))\n")
        path = self.write("words.py", script.encode())
        for model in ("bert", "bert-uncased-bf16"):
            corpus = self.path(model + "-texts.jsonl")
            self.write_texts(corpus, self.texts)
            out = self.venv(path, os.path.join(self.models_dir, model), corpus)
            self.assertEqual(out.returncode, 0, out.stderr.decode())
            expected = [json.loads(line) for line in out.stdout.decode().splitlines()]
            tagged, _ = self.tag(model, self.texts)
            for text, e, got in zip(self.texts, expected, tagged):
                self.assertEqual(got["words"], [list(same_span(text, tuple(w), tuple(o)))
                                                for w, o in zip(e, got["words"] + [[]] * len(e))], repr(text))

    def test_long_text_is_cut_at_word_boundaries(self):
        model = "bert"
        expected = self.long_reference(model)
        tagged, _ = self.tag(model, self.long_texts)
        for text, e, got in zip(self.long_texts, expected, tagged):
            self.assertEqual([(g["group"], g["begin"], g["end"]) for g in got["entities"]], e, text)

    def long_reference(self, model):
        # The cut in Python: words (the fast tokenizer's word_ids) filled
        # into sequences of at most max_positions - 2 tokens, each tagged
        # alone; a word takes its first token's label; B-/I- groups.
        script = r'''
import json, sys, torch
from transformers import AutoModelForTokenClassification, AutoTokenizer
tok = AutoTokenizer.from_pretrained(sys.argv[1]); model = AutoModelForTokenClassification.from_pretrained(sys.argv[1]).eval()
budget = model.config.max_position_embeddings - 2
labels = model.config.id2label
for line in open(sys.argv[2], encoding="utf-8"):
    t = json.loads(line)["text"]; e = tok(t, add_special_tokens=False, return_offsets_mapping=True)
    words = []
    for w, i, (s, f) in zip(e.word_ids(), e["input_ids"], e["offset_mapping"]):
        if not words or words[-1]["w"] != w: words.append({"w": w, "ids": [], "b": len(t[:s].encode())})
        words[-1]["ids"].append(i); words[-1]["e"] = len(t[:f].encode())
    chunks, cur = [], []
    for word in words:
        if sum(len(x["ids"]) for x in cur) + len(word["ids"]) > budget: chunks.append(cur); cur = []
        cur.append(word)
    chunks.append(cur)
    tagged = []
    for chunk in chunks:
        ids = [tok.cls_token_id] + [i for x in chunk for i in x["ids"]] + [tok.sep_token_id]
        with torch.no_grad(): logits = model(torch.tensor([ids])).logits[0]
        row = 1
        for x in chunk:
            tagged.append((labels[int(logits[row].argmax())], x["b"], x["e"])); row += len(x["ids"])
    groups = []
    for label, b, f in tagged:
        begins, group = (label[0] == "B", label[2:]) if label[:2] in ("B-", "I-") else (False, label)
        if groups and groups[-1][0] == group and not begins: groups[-1][2] = f
        else: groups.append([group, b, f])
    print(json.dumps([g for g in groups if g[0] != "O"]))
'''
        path = self.write("long.py", script.encode())
        corpus = self.path("long.jsonl")
        self.write_texts(corpus, self.long_texts)
        out = self.venv(path, os.path.join(self.models_dir, model), corpus)
        self.assertEqual(out.returncode, 0, out.stderr.decode())
        return [[tuple(g) for g in json.loads(line)] for line in out.stdout.decode().splitlines()]

    def test_not_a_tagger_is_refused(self):
        good = os.path.join(self.models_dir, "bert")
        cases = {
            "no-weights": ("model.safetensors", None, 4, "model.safetensors"),
            "pickle": ("model.safetensors", "pytorch_model.bin", 4, "pytorch_model.bin"),
            "no-config": ("config.json", None, 4, "config.json"),
        }
        for name, (remove, add, code, mention) in cases.items():
            with self.subTest(case=name):
                directory = self.path(name)
                shutil.copytree(good, directory)
                os.remove(os.path.join(directory, remove))
                if add:
                    self.write(os.path.join(name, add), b"\x80\x02pickle")
                out = subprocess.run([PROBE, directory], input=b"", capture_output=True, timeout=60)
                self.assertEqual(out.returncode, code, out.stderr.decode())
                self.assertIn(mention, out.stderr.decode())
        edits = {
            "truncated": ("model.safetensors", lambda data: data[:100], "model.safetensors"),
            "shape": ("config.json", lambda data: data.replace(b'"intermediate_size": 64', b'"intermediate_size": 65'),
                      "has shape [64, 32], the config says [65, 32]"),
            "bpe": ("tokenizer.json", lambda data: b'{"model": {"type": "BPE", "vocab": {}, "merges": []}}',
                    "is not BERT's WordPiece pipeline"),
            "not-json": ("config.json", lambda data: data[:20], "config.json: not valid JSON"),
        }
        for name, (target, edit, mention) in edits.items():
            with self.subTest(case=name):
                directory = self.path(name)
                shutil.copytree(good, directory)
                path = os.path.join(directory, target)
                with open(path, "rb") as f:
                    data = f.read()
                with open(path, "wb") as f:
                    f.write(edit(data))
                out = subprocess.run([PROBE, directory], input=b"", capture_output=True, timeout=60)
                self.assertEqual(out.returncode, 4, out.stderr.decode())
                self.assertIn(mention, out.stderr.decode())
        llama_dir = self.path("llama")
        shutil.copytree(good, llama_dir)
        with open(os.path.join(llama_dir, "config.json")) as f:
            config = json.load(f)
        config["model_type"] = "llama"
        with open(os.path.join(llama_dir, "config.json"), "w") as f:
            json.dump(config, f)
        out = subprocess.run([PROBE, llama_dir], input=b"", capture_output=True, timeout=60)
        self.assertEqual(out.returncode, 4)
        self.assertIn("model_type \"llama\" is not supported (supported: bert, distilbert)", out.stderr.decode())


if __name__ == "__main__":
    unittest.main()
