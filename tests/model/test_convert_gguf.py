"""scripts/convert_gguf.py: a GGUF file as llama.cpp writes it
(tests/model/gguf_files.py) becomes the Hugging Face directory it came from —
float32 weights bit for bit with the q/k permutation undone, quantised ones
within their quantisation step, the shape in config.json, the byte-level BPE
tokenizer encoding as the original does (transformers' AutoTokenizer, the chat
template); the Qwen2, Qwen3, Mistral and Gemma 3 golden fixtures
(tests/fixtures/families) come back with their tensor names, biases, q/k and
sandwich norms and layer plan, and a Qwen2 file converts to what
transformers' own GGUF loader makes of it — and what it cannot convert is exit
4 naming what (architecture, tensor type, tokenizer model, pre-tokenizer, a
non-finite weight) with no output left behind; an existing output is exit 2.
Runs the venv of scripts/setup.sh (gguf, tokenizers, transformers)."""
import json
import os
import subprocess
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from nss_e2e import SOURCE, remove, scratch  # noqa: E402
from hf_files import llama_config, random_llama_weights, read_model_dir, read_safetensors, write_model_dir  # noqa: E402

VENV_PYTHON = os.environ.get("NSS_VENV_PYTHON", os.path.join(SOURCE, "build", "venv", "bin", "python"))
CONVERTER = os.path.join(SOURCE, "scripts", "convert_gguf.py")
FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "families")
GGUF_FILES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gguf_files.py")
TEXTS = ["Hello world, 2024! caf\u00e9 3.14159 isn't it?", "<|im_start|>user\nthe 12 cats<|im_end|>\n  def f(x):"]


def venv(*args):
    return subprocess.run([VENV_PYTHON] + [str(a) for a in args], capture_output=True, text=True, timeout=240)


class ConvertGgufTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(VENV_PYTHON):
            raise AssertionError("no venv at %s: run scripts/setup.sh (it installs gguf into it)" % VENV_PYTHON)
        cls.tmp = scratch("convert_gguf")
        cls.config = llama_config(hidden=64, intermediate=96, layers=2, heads=4, kv_heads=2, vocab=300, tied=True,
                                  rope_theta=100000.0, eps=9.999999747378752e-06)
        cls.weights = random_llama_weights(cls.config, seed=3, scale=0.05)
        cls.hf = os.path.join(cls.tmp, "hf")
        write_model_dir(cls.hf, cls.config, cls.weights)
        corpus = os.path.join(cls.tmp, "corpus.txt")
        with open(corpus, "w") as out:
            for name in ("README.md", "docs/model.md", "docs/data.md"):
                with open(os.path.join(SOURCE, name)) as f:
                    out.write(f.read())
        cls.tokenizer = os.path.join(cls.tmp, "tokenizer.json")
        proc = venv(GGUF_FILES, "tokenizer", cls.tokenizer, corpus)
        assert proc.returncode == 0, proc.stderr

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def gguf(self, name, *options, weights=None, source=None):
        source = source or self.hf
        if weights is not None:
            source = os.path.join(self.tmp, name + "_source")
            write_model_dir(source, self.config, weights)
        path = os.path.join(self.tmp, name + ".gguf")
        proc = venv(GGUF_FILES, "model", source, self.tokenizer, path, *options)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return path

    def convert(self, source, name, *options, expect=0):
        out = os.path.join(self.tmp, name)
        existed = os.path.exists(out)
        proc = venv(CONVERTER, source, out, *options)
        self.assertEqual(proc.returncode, expect, proc.stdout + proc.stderr)
        if expect != 0:
            self.assertEqual(os.path.exists(out), existed)
            self.assertEqual([n for n in os.listdir(self.tmp) if ".tmp." in n], [])
        return out, proc.stderr

    def test_float32_weights_come_back_bit_for_bit(self):
        out, _ = self.convert(self.gguf("f32"), "f32_hf")
        self.assertEqual(sorted(os.listdir(out)), ["config.json", "generation_config.json", "model.safetensors",
                                                   "special_tokens_map.json", "tokenizer.json",
                                                   "tokenizer_config.json"])
        config, tensors = read_model_dir(out)
        for key, value in self.config.items():
            self.assertEqual(config[key], value, key)
        self.assertEqual((config["bos_token_id"], config["eos_token_id"]), (1, 2))
        self.assertEqual(sorted(tensors), sorted(self.weights))
        for name, value in self.weights.items():
            self.assertTrue(np.array_equal(tensors[name].astype(np.float32), value), name)

    def test_quantised_weights_within_their_step_at_each_dtype(self):
        source = self.gguf("q8", "--type", "Q8_0")
        for dtype, stored in (("float32", "F32"), ("float16", "F16"), ("bfloat16", "BF16")):
            with self.subTest(dtype):
                out, _ = self.convert(source, "q8_" + dtype, "--dtype", dtype)
                with open(os.path.join(out, "config.json")) as f:
                    self.assertEqual(json.load(f)["torch_dtype"], dtype)
                tensors, _ = read_safetensors(os.path.join(out, "model.safetensors"))
                for name, value in self.weights.items():
                    # Q8_0: 32 values share a scale max|w|/127; bfloat16 adds 2^-8 relative.
                    step = np.abs(value).max() / 127 + np.abs(value).max() * 2 ** -8
                    self.assertLess(np.abs(tensors[name] - value).max(), step, name)

    def test_tokenizer_encodes_like_the_original(self):
        out, _ = self.convert(self.gguf("tok"), "tok_hf")
        proc = venv(GGUF_FILES, "encode", self.tokenizer, out, *TEXTS)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        result = json.loads(proc.stdout)
        self.assertEqual(result["converted"], result["source"])
        self.assertEqual(result["decoded"], TEXTS)
        self.assertEqual((result["bos_token"], result["eos_token"]), ("<|im_start|>", "<|im_end|>"))
        self.assertEqual(result["chat"], "<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n" % TEXTS[0])

        with_bos, _ = self.convert(self.gguf("bos", "--add-bos"), "bos_hf")
        proc = venv(GGUF_FILES, "encode", self.tokenizer, with_bos, *TEXTS)
        result = json.loads(proc.stdout)
        self.assertEqual(result["converted"], [[1] + ids for ids in result["source"]])

    def test_each_architecture_comes_back_as_its_fixture(self):
        # (Mistral is a llama to llama.cpp, its window lost: the llama tests cover it.)
        for family in ("qwen2", "qwen3", "gemma3"):
            with self.subTest(family):
                fixture = os.path.join(FIXTURES, family)
                out, _ = self.convert(self.gguf(family, source=fixture), family + "_hf")
                expected_config, expected = read_model_dir(fixture)
                config, tensors = read_model_dir(out)
                self.assertEqual(sorted(tensors), sorted(expected))
                for name, value in expected.items():
                    got = tensors[name].astype(np.float32)
                    if family == "gemma3" and name.endswith("norm.weight"):
                        # llama.cpp stores 1 + w in float32; w comes back within an ulp of 1 + w.
                        ulp = np.spacing(np.abs(value.astype(np.float32)) + np.float32(1))
                        self.assertTrue(np.all(np.abs(got - value) <= ulp), name)
                    else:
                        self.assertTrue(np.array_equal(got, value), name)
                keys = ["architectures", "hidden_size", "intermediate_size", "num_hidden_layers",
                        "num_attention_heads", "num_key_value_heads", "vocab_size", "tie_word_embeddings"]
                keys += ["model_type"] + (["layer_types", "sliding_window"] if family == "gemma3" else [])
                for key in keys:
                    self.assertEqual(config[key], expected_config[key], (family, key))
                thetas = expected_config.get("rope_parameters") or {}
                self.assertEqual(config["rope_theta"], thetas.get("full_attention", thetas).get("rope_theta"))
                # llama.cpp scales Gemma 3's queries by head_dim^-1/2 (the file cannot say otherwise).
                if family == "gemma3":
                    self.assertEqual(config["query_pre_attn_scalar"], config["head_dim"])
                    self.assertEqual(config["rope_local_base_freq"], thetas["sliding_attention"]["rope_theta"])

    def test_qwen2_as_transformers_gguf_loader_reads_it(self):
        # transformers 4.46 dequantises and names a qwen2 GGUF itself: the same tensors.
        source = self.gguf("qwen2_q8", "--type", "Q8_0", source=os.path.join(FIXTURES, "qwen2"))
        out, _ = self.convert(source, "qwen2_q8_hf")
        proc = venv("-c", """import sys, torch, numpy, safetensors.numpy as st
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained(sys.argv[1], gguf_file=sys.argv[2], torch_dtype=torch.float32)
ours = st.load_file(sys.argv[3] + "/model.safetensors")
theirs = {k: v.numpy() for k, v in model.state_dict().items() if not (k == "lm_head.weight" and k not in ours)}
assert sorted(theirs) == sorted(ours), (sorted(set(theirs) ^ set(ours)))
print(max(float(numpy.abs(theirs[k] - ours[k]).max()) for k in ours))""", self.tmp, os.path.basename(source), out)
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        self.assertEqual(float(proc.stdout.split()[-1]), 0.0)

    def test_what_it_cannot_convert_is_exit_4_by_name(self):
        nan = dict(self.weights)
        nan["model.layers.1.mlp.up_proj.weight"] = nan["model.layers.1.mlp.up_proj.weight"].copy()
        nan["model.layers.1.mlp.up_proj.weight"][3, 5] = np.nan
        not_gguf = os.path.join(self.tmp, "not.gguf")
        with open(not_gguf, "wb") as f:
            f.write(b"GGML" + bytes(60))
        cases = {
            "phi3": (self.gguf("phi3", "--architecture", "phi3"), "'phi3' model; this converter handles llama, qwen2"),
            "i32": (self.gguf("i32", "--type", "I32"), "is of type I32"),
            "spm": (self.gguf("spm", "--tokenizer-model", "llama"), "tokenizer model 'llama'"),
            "pre": (self.gguf("pre", "--pre", "deepseek-llm"), "pre-tokenizer 'deepseek-llm'"),
            "nan": (self.gguf("nan", weights=nan), "blk.1.ffn_up.weight holds non-finite values"),
            "not_gguf": (not_gguf, "not a readable GGUF file"),
            "softcap": (self.gguf("softcap", "--metadata", "gemma3.final_logit_softcapping=30",
                                  source=os.path.join(FIXTURES, "gemma3")),
                        "gemma3.final_logit_softcapping is set; nss_hpc computes no logit softcapping"),
            "missing": (os.path.join(self.tmp, "absent.gguf"), "no such file"),
        }
        for name, (source, message) in cases.items():
            with self.subTest(name):
                _, stderr = self.convert(source, name + "_hf", expect=4)
                self.assertIn(message, stderr)

    def test_an_existing_output_is_exit_2(self):
        out = os.path.join(self.tmp, "taken")
        os.makedirs(out)
        _, stderr = self.convert(self.gguf("taken"), "taken", expect=2)
        self.assertIn("exists", stderr)


if __name__ == "__main__":
    unittest.main()
