"""The C++ tokenizer (lib/tokenizer, through tokenizer_probe) against Hugging
Face `tokenizers` (the venv's): the same ids with and without special tokens,
and the same decoded text keeping and skipping special tokens and for every
id alone, on a corpus of non-ASCII text, whitespace runs, numbers,
punctuation, contractions and embedded special tokens, for

  - SmolLM2's real tokenizer.json (build/models, made by scripts/setup.sh),
  - a Llama-3-style tokenizer trained here (Split with Llama 3's pattern,
    ByteLevel without regex, special tokens, TemplateProcessing with BOS),
  - the same with ByteLevel's own GPT-2 split, a prefix space, contiguous
    Digits and "a b" merges (the older file format),
  - the same with Split patterns (Regex and String) under every behavior,
    inverted or not,
  - one tokenizer.json per model family written by transformers' own
    converters and save_pretrained (family_tokenizers.py: Llama 2 and
    Mistral legacy and Metaspace, Gemma, Qwen2/Qwen3) and variants for every
    other normalizer and pre-tokenizer (NFKC, NFD, NFKD, Lowercase, Strip,
    StripAccents, Prepend, Replace, Punctuation, Whitespace, Metaspace, ...),
    and BERT's WordPiece files (BertTokenizerFast cased and uncased,
    tokenizers' BertWordPieceTokenizer with BertProcessing, and one with
    short words, no clean_text and a decoder without cleanup).

An unsupported tokenizer.json is exit 4 naming the file and the feature."""
import glob
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import nss_e2e  # noqa: E402

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hf_reference.py")
FAMILIES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "family_tokenizers.py")
SMOLLM2 = os.path.join(nss_e2e.SOURCE, "build", "models", "smollm2-135m-instruct", "tokenizer.json")

HANDMADE = [
    "", " ", "   ", "Hello world", "Hello, world!", "  leading spaces", "trailing spaces   ",
    "Café naïve résumé façade — “quoted” ‘single’ «guillemets»", "e\u0301 combining, Ångström, Straße, ÆØÅ",
    "日本語のテキストと中文字符，還有標點。", "한국어 텍스트입니다", "Привет, мир! Ёжик",
    "emoji 😀👍🏽 family 👨‍👩‍👧‍👦 flag 🇫🇷 keycap 1️⃣", "مرحبا بالعالم ١٢٣", "שלום עולם", "नमस्ते दुनिया १२३",
    "a   b    c     d", "\t\tx\t y \t\t", "line1\nline2\n\n\nline3\n", "a\r\nb\r\n\r\nc\r", "\n", "\r\n\r\n",
    " \n \n  \n", "spaces before newline   \nnext", "a\u00a0b\u3000c\u2009d\u200be\u2028f",
    "1234567890 3.14159 12,345,678 007 -42 +1e-10", "3141592653589793238462643383279502884197",
    "x² ½ Ⅻ ٣٤٥ १२३ ① ⅷ", "Hello!!! What?? (yes) [no] {maybe} ... --- ;; :: ->>= <<< @#$%^&*",
    "I'm you're it's they've we'll he'd don't CAN'T I'M We'Ve 'S", "rock 'n' roll ''quoted''",
    "def f(x):\n    return x**2  # comment\n\n\tif x:\n\t\tpass\n",
    "Supercalifragilisticexpialidocious", "a" * 64, "ab" * 40, "🙂" * 20, " " * 50 + "x",
    "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n",
    "<|im_start|><|im_end|><|endoftext|>", "<|im_start", "text<|endoftext|>more",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
    "two  <|eot_id|>  spaces", "<|begin_of_text|>", "<|end_of_text|> after",
    "a [[note]] b", "x <pad> y", "x<pad>y", "  <pad>  <pad>  ", "[[note]][[note]]",
    "mixed 中文 and English 123 and emoji 🎉!", "tab\tseparated\tvalues\t1\t2\t3",
    "\u0000 nul and \u0007 bell and \u007f del", "\ufeffbyte order mark", "\U0001d49c math script",
    "ﬁ ligature ＦＵＬＬＷＩＤＴＨ ｶﾀｶﾅ", "Ώ ΐ ǅ İ ß ẞ ﬃ",
    "x\u180e's \u180e're",  # U+180E: whitespace to PCRE2's own \\s, not to Oniguruma's
    " " * 5000 + "x", "a" * 3000, "é" * 2000, " \n" * 1000, "1" * 1000, "\r\n" * 500 + "x", "!?" * 800,
]


# Pieces that random texts are made of: spaces of every kind, letters, marks
# and digits of several scripts, contraction parts, symbols, special tokens.
PIECES = [" ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u0085", "\u1680", "\u180e", "\u2000", "\u2007", "\u200b",
          "\u2028", "\u202f", "\u3000", "\ufeff", "\x0b", "\x0c", "\x1c", "\x1f", "a", "Z", "é", "ß", "İ", "ǅ", "中",
          "ア", "한", "й", "ع", "א", "ก", "\u0301", "\u0903", "\u064b", "0", "7", "٣", "१", "²", "½", "Ⅻ", "①", "'",
          "'s", "'T", "'re", "'LL", "'d", "’", "!", "?", ".", ",", "-", "_", "<", ">", "|", "$", "😀", "👍🏽", "\u200d",
          "🇫🇷", "\U0001d49c", "\U000e0001", "\ue000", "\x00", "\x7f", "\u00ad", "<|im_start|>", "<|endoftext|>",
          "<|begin_of_text|>", "<|eot_id|>", "[[note]]", "<pad>"]


# What BERT's normalizer, pre-tokenizer, WordPiece model and decoder each
# treat apart: control and format characters, NUL, U+FFFD, CJK ideographs
# (the blocks and their edges), accents, a literal "##", words longer than
# max_input_chars_per_word, special tokens in the text, the contractions and
# punctuation the decoder's cleanup joins.
BERT_TEXTS = [
    "[CLS] Hello [SEP] world [MASK] [PAD][UNK]", "a\x00b\x01c\x7fd\x85e\u200bf\u200dg\ufeffh\ue000i\ufffdj",
    "tab\there\nnew\rline\r\n\x0b\x0c\u2028\u2029 end", "##ing ## #x# ##", "un##related ##s",
    "中文字符和日本語の漢字、한국어 か 㐀 䶿 一 鿿 豈 﫿 𠀀 𪛟 𪜀 𫠝 𫠠 𬺯 丽 𪘀",
    "Café naïve résumé Ångström crème brûlée ÀÉÎÕÜ ǅ İ ß e\u0301 o\u0308 \u1734\u1885\ua9bd\U000111c9",
    "x" * 101, "y" * 100, "ab" * 60 + " short " + "é" * 120, "supercalifragilisticexpialidocious",
    "I do not think so . It 's , isn 't ? I 'm sure ! They 've we 're ' quoted '",
    "don't won't I'm it's they've we're do not DO NOT", "a.b,c!d?e'f", "\u166d\u2e43\u2e44 punct",
    "x\u0378y\U000e0001z\U0010fffd", "\ufffd" * 5, "\x00" * 3, "",
]


def random_texts(count, seed=16):
    """Texts of random pieces and of random code points (any plane, no
    surrogates): what handmade cases miss (a difference in the regular
    expressions' Unicode classes) shows up here."""
    rng = random.Random(seed)
    texts = ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40))) for _ in range(count)]
    for _ in range(count):
        code_points = [rng.choice([rng.randint(0x80, 0x3000), rng.randint(0x3000, 0xFFFF), rng.randint(0x10000, 0x10FFFF)])
                       for _ in range(rng.randint(1, 30))]
        texts.append("".join(chr(c) if not 0xD800 <= c <= 0xDFFF else " " for c in code_points)
                     + rng.choice(PIECES))
    return texts


def corpus():
    """The handmade cases, random texts, then paragraphs of local text
    (license texts and Python modules every Debian machine has)."""
    texts = HANDMADE + random_texts(1000)
    files = sorted(glob.glob("/usr/share/common-licenses/*"))[:12] + sorted(glob.glob("/usr/lib/python3.11/*.py"))[:12]
    for path in files:
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.extend(p for p in f.read().split("\n\n")[:60] if p)
    return texts


def wordpiece_cleanup(tokenizer_json):
    """True when the file's decoder is (or holds) WordPiece with cleanup."""
    with open(tokenizer_json, encoding="utf-8") as f:
        decoder = json.load(f).get("decoder") or {}
    steps = decoder.get("decoders", [decoder]) if decoder.get("type") == "Sequence" else [decoder]
    return any(d.get("type") == "WordPiece" and d.get("cleanup", True) for d in steps)


class TokenizerParityTest(nss_e2e.VenvScratchDirTest):
    SCRATCH_TAG = "tokenizer"

    def reference(self, tokenizer_json, texts):
        with open(self.path("corpus.json"), "w") as f:
            json.dump(texts, f)
        result = self.venv(REFERENCE, "encode", tokenizer_json, self.path("corpus.json"))
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        return [json.loads(line) for line in result.stdout.decode().splitlines()]

    def probe(self, tokenizer_json, texts):
        stdin = "".join(json.dumps(t) + "\n" for t in texts)
        result = subprocess.run([nss_e2e.binary("tokenizer_probe"), tokenizer_json], input=stdin,
                                capture_output=True, text=True, timeout=240)
        self.assertEqual(result.returncode, 0, result.stderr)
        # Not splitlines(): the C++ side writes U+2028 and other line
        # separators unescaped.
        return [json.loads(line) for line in result.stdout.split("\n") if line]

    def assert_parity(self, tokenizer_json, texts=None):
        texts = texts or corpus()
        expected, actual = self.reference(tokenizer_json, texts), self.probe(tokenizer_json, texts)
        self.assertEqual(actual[0], expected[0])  # vocab_size
        self.assertEqual(len(actual), len(expected))
        mismatches = []
        cleanup = wordpiece_cleanup(tokenizer_json)
        for text, want, got in zip(texts, expected[1:], actual[1:]):
            for key in ("ids", "ids_plain", "decoded", "decoded_skip", "decoded_each"):
                if want[key] != got[key]:
                    mismatches.append("%s of %r: tokenizers %r, C++ %r" % (key, text[:80], want[key], got[key]))
            # What token_bytes says each id adds, joined, is the decoded text
            # (where the decoder lets a token's text be known alone).
            if got["token_bytes_agree"] is not (None if cleanup else True):
                mismatches.append("token_bytes of %r: %r" % (text[:80], got["token_bytes_agree"]))
        tokens = sum(len(r["ids"]) for r in expected[1:])
        print("%s: %d texts, %d tokens, %d mismatches" % (tokenizer_json, len(texts), tokens, len(mismatches)))
        self.assertEqual(mismatches, [], "\n".join(mismatches[:10]))
        return texts, expected[1:]

    def train_llama3_style(self):
        training_text = self.write("train.txt", "\n".join(HANDMADE * 20).encode())
        result = self.venv(REFERENCE, "train-llama3", self.path("llama3.json"), training_text,
                           "/usr/share/common-licenses/GPL-3", "/usr/share/common-licenses/Apache-2.0")
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        with open(self.path("llama3.json")) as f:
            return json.load(f)

    def test_smollm2(self):
        if not os.path.exists(SMOLLM2):
            self.skipTest("%s is absent: scripts/setup.sh converts SmolLM2 and writes it" % SMOLLM2)
        _, results = self.assert_parity(SMOLLM2)
        self.assertTrue(any(1 in r["ids"] for r in results))  # <|im_start|> was found in the text
        # The same file after transformers' save_pretrained with an empty
        # normalizer Sequence, as newer files carry it.
        result = self.venv(FAMILIES, "resave", os.path.dirname(SMOLLM2), self.path("resaved"))
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        with open(self.path("resaved/tokenizer.json")) as f:
            self.assertEqual(json.load(f)["normalizer"], {"type": "Sequence", "normalizers": []})
        self.assert_parity(self.path("resaved/tokenizer.json"))

    def test_llama3_style(self):
        spec = self.train_llama3_style()
        self.assertEqual(spec["pre_tokenizer"]["pretokenizers"][0]["type"], "Split")
        self.assertFalse(spec["pre_tokenizer"]["pretokenizers"][1]["use_regex"])
        self.assertTrue(spec["model"]["ignore_merges"])
        _, results = self.assert_parity(self.path("llama3.json"))
        bos = next(t["id"] for t in spec["added_tokens"] if t["content"] == "<|begin_of_text|>")
        self.assertTrue(all(r["ids"][0] == bos and r["ids"][1:] == r["ids_plain"] for r in results))

    def test_gpt2_split_prefix_space_and_string_merges(self):
        spec = self.train_llama3_style()
        spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": False},
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}]}
        spec["model"]["merges"] = [" ".join(pair) for pair in spec["model"]["merges"]]
        spec["model"]["ignore_merges"] = False
        with open(self.path("gpt2.json"), "w") as f:
            json.dump(spec, f)
        self.assert_parity(self.path("gpt2.json"))

    def test_split_behaviors(self):
        spec = self.train_llama3_style()
        splits = [({"Regex": r"\s+"}, "Removed", False), ({"String": " "}, "MergedWithPrevious", False),
                  ({"String": " "}, "MergedWithNext", False), ({"Regex": r"\p{P}"}, "Contiguous", False),
                  ({"Regex": r"\p{L}+"}, "Isolated", True), ({"Regex": r"[0-9]"}, "Removed", True),
                  ({"String": "<"}, "MergedWithNext", True)]
        texts = HANDMADE + random_texts(200, seed=17)
        for pattern, behavior, invert in splits:
            with self.subTest(pattern=pattern, behavior=behavior, invert=invert):
                spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
                    {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert},
                    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
                with open(self.path("split.json"), "w") as f:
                    json.dump(spec, f)
                self.assert_parity(self.path("split.json"), texts)

    def test_model_families(self):
        training_text = self.write("families.txt", ("\n".join(HANDMADE * 20) + open(
            "/usr/share/common-licenses/GPL-3", encoding="utf-8").read()).encode())
        result = self.venv(FAMILIES, "families", self.path("families"), training_text)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        written = json.loads(result.stdout.decode().splitlines()[-1])
        self.assertGreaterEqual(len(written), 20)
        texts = HANDMADE + random_texts(300, seed=18) + [
            "<s>text after a special token", "<start_of_turn>user\nHi<end_of_turn>", "\t tab first",
            "<|im_start|>system\nYou are 😀<|im_end|>", "Ünïcödé   ÀÉÎÕÜ ǄǅǆΣΑΣ ﬀ ㎏ ①"] + BERT_TEXTS
        # Every code point once (surrogates aside), in runs with marks and
        # capitals between: the Unicode tables of both sides compared whole.
        every = [chr(c) for c in range(0x80, 0x32000) if not 0xD800 <= c <= 0xDFFF]
        texts += ["a\u0301" + "A".join(every[i:i + 400]) for i in range(0, len(every), 400)]
        for path in written:
            with self.subTest(family=os.path.basename(os.path.dirname(path))):
                self.assert_parity(path, texts)

    def test_unsupported_tokenizer_is_a_data_error(self):
        spec = self.train_llama3_style()
        spec["pre_tokenizer"] = {"type": "UnicodeScripts"}
        with open(self.path("scripts.json"), "w") as f:
            json.dump(spec, f)
        result = subprocess.run([nss_e2e.binary("tokenizer_probe"), self.path("scripts.json")], input="",
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 4, result.stderr)
        self.assertIn(self.path("scripts.json"), result.stderr)
        self.assertIn('pre-tokenizer type "UnicodeScripts"', result.stderr)


if __name__ == "__main__":
    import unittest
    unittest.main()
