"""nss_generate with the tokenizer.json files the model families ship, as
transformers writes them: SmolLM2's after save_pretrained with an empty
normalizer Sequence (the file users reported), and the Gemma, Mistral and
Qwen2 pipelines of tests/tokenizer/family_tokenizers.py (byte fallback,
Metaspace, NFC). Beside each, a tiny random model of its vocabulary written
by transformers — a Llama, and beside the Mistral tokenizer a
MistralForCausalLM without a window, beside the Qwen2 tokenizer a
Qwen2ForCausalLM with random q/k/v biases: greedy generation writes the
tokens transformers' generate() writes from the same prompt ids, and the
text is the tokenizer's decode of those tokens."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, VENV_PYTHON, binary, remove, scratch  # noqa: E402

FAMILIES = os.path.join(SOURCE, "tests", "tokenizer", "family_tokenizers.py")
SMOLLM2 = os.environ.get("NSS_REAL_MODEL", os.path.join(SOURCE, "build", "models", "smollm2-135m-instruct"))
PROMPTS = ["Checkpoints are", "naïve café: 1234 ✓", "日本語 tokens\tand  spaces", "Ünïcödé ΣΑΣ 😀"]
NEW_TOKENS = 8
MAKE = r"""
import json, sys, torch
import transformers
directory, new_tokens, prompts, family = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
torch.manual_seed(0)
Config, Model = getattr(transformers, family + "Config"), getattr(transformers, family + "ForCausalLM")
extra = {"sliding_window": None} if family == "Mistral" else {}
config = Config(vocab_size=max(tokenizer.get_vocab().values()) + 1, hidden_size=32, intermediate_size=64,
                num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                tie_word_embeddings=False, initializer_range=0.2, **extra)
made = Model(config).eval()
with torch.no_grad():  # transformers initialises biases to 0: make them count
    for name, parameter in made.named_parameters():
        if name.endswith(".bias"):
            parameter.normal_(0.0, 0.2)
made.save_pretrained(directory, safe_serialization=True)
model = Model.from_pretrained(directory, torch_dtype=torch.float32).eval()
reference = []
for prompt in prompts:
    ids = torch.tensor([tokenizer(prompt).input_ids])
    with torch.no_grad():
        generated = model.generate(input_ids=ids, max_new_tokens=new_tokens, do_sample=False, synced_gpus=False,
                                   eos_token_id=None, pad_token_id=0)
    reference.append(generated[0, ids.shape[1]:].tolist())
print(json.dumps(reference))
"""
DECODE = r"""
import json, sys
from transformers import AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
for line in sys.stdin:
    print(json.dumps(tokenizer.decode(json.loads(line), skip_special_tokens=True)))
"""


def venv(*args, stdin=None):
    proc = subprocess.run([VENV_PYTHON] + list(args), capture_output=True, text=True, timeout=300, input=stdin)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@unittest.skipUnless(os.path.isfile(os.path.join(SMOLLM2, "tokenizer.json")),
                     "no SmolLM2 tokenizer at %s: scripts/setup.sh converts it" % SMOLLM2)
class FamilyTokenizerGenerateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("family_generate")
        corpus = os.path.join(cls.tmp, "corpus.txt")
        with open(os.path.join(SOURCE, "docs", "data.md"), encoding="utf-8") as f, \
                open(corpus, "w", encoding="utf-8") as out:
            out.write(f.read() + "\n".join(PROMPTS * 10) + "\n")
        venv(FAMILIES, "resave", SMOLLM2, os.path.join(cls.tmp, "smollm2"))
        venv(FAMILIES, "families", os.path.join(cls.tmp, "families"), corpus)
        families = os.path.join(cls.tmp, "families")
        made = {os.path.join(cls.tmp, "smollm2"): "Llama", os.path.join(families, "gemma"): "Llama",
                os.path.join(families, "mistral"): "Mistral", os.path.join(families, "qwen2"): "Qwen2"}
        cls.reference = {d: json.loads(venv("-c", MAKE, d, str(NEW_TOKENS), json.dumps(PROMPTS), family))
                         for d, family in made.items()}
        cls.directories = list(made)
        cls.prompts = os.path.join(cls.tmp, "prompts.jsonl")
        with open(cls.prompts, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps({"prompt": p}) + "\n" for p in PROMPTS))

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def test_greedy_tokens_and_text_match_transformers(self):
        for directory in self.directories:
            with self.subTest(family=os.path.basename(directory)):
                proc = subprocess.run([binary("nss_generate"), "--model", directory, "--prompts", self.prompts,
                                       "--temperature", "0", "--max-new-tokens", str(NEW_TOKENS)],
                                      capture_output=True, text=True, timeout=120)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                samples = sorted((json.loads(line) for line in proc.stdout.splitlines() if line.strip()),
                                 key=lambda s: s["prompt_index"])
                self.assertEqual(len(samples), len(PROMPTS), proc.stdout)
                for sample, reference in zip(samples, self.reference[directory]):
                    tokens = sample["tokens"]
                    # The model may write an end token before the reference's length.
                    self.assertEqual(tokens, reference[:len(tokens)], sample)
                    if len(tokens) < NEW_TOKENS:
                        self.assertEqual(sample["finish_reason"], "eos", sample)
                print("%s: %s tokens, texts %r" % (os.path.basename(directory), [len(s["tokens"]) for s in samples],
                                                   [s["text"][:20] for s in samples]))
                texts = venv("-c", DECODE, directory, stdin="".join(json.dumps(s["tokens"]) + "\n" for s in samples))
                self.assertEqual([s["text"] for s in samples], [json.loads(line) for line in texts.splitlines()])


if __name__ == "__main__":
    unittest.main()
