"""nss_consolidate --format safetensors|hf: what a Hugging Face user loads.
Full models (config.json right, tied embeddings, sharding with an index,
bfloat16), PEFT LoRA adapters, and merged LoRA weights W + (alpha/r) B A; the
pretrained directory's tokenizer files beside them. Short LoRA and full runs
of nss_hpc from a pretrained directory with a real tokenizer are exported and
loaded by transformers' AutoTokenizer and AutoModelForCausalLM and by PEFT's
PeftModel (under the venv of scripts/setup.sh; skipped, saying why, without it)."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import unittest

import h5py
import numpy as np

import ckpt_helpers as ck
import nss_e2e
import bpe_tokenizer  # noqa: E402  (tests/e2e, on the path ckpt_helpers sets)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "model"))
from hf_files import llama_config, random_llama_weights, write_model_dir  # noqa: E402

LORA_RANK = 4
LORA_ALPHA = 16.0
TOKENIZER_FILES = ["generation_config.json", "special_tokens_map.json", "tokenizer.json",
                   "tokenizer_config.json"]


def same_bits(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


class ConsolidateHfTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = nss_e2e.scratch("ckpt_hf")
        cls.full = os.path.join(cls.root, "full")
        cls.tied = os.path.join(cls.root, "tied")
        cls.lora = os.path.join(cls.root, "lora")
        cls.base = os.path.join(cls.root, "base_model")
        cls.base_weights = ck.write_base_model(cls.base)
        for name in TOKENIZER_FILES:
            nss_e2e.write(os.path.join(cls.base, name), json.dumps({"file": name}))
        for args in (("--dir", cls.full), ("--dir", cls.tied, "--tied"),
                     ("--dir", cls.lora, "--lora", LORA_RANK, "--base", cls.base)):
            proc = ck.writer(2, "save", "--first", 5, "--block-bytes", 2048, *args)
            assert proc.returncode == 0, proc.stdout + proc.stderr

    @classmethod
    def tearDownClass(cls):
        nss_e2e.remove(cls.root)

    def consolidate(self, checkpoint, name, *args, expect=0):
        out = os.path.join(self.root, name)
        proc = ck.tool("nss_consolidate", ck.step_dir(checkpoint, 5), "--output", out, *args)
        self.assertEqual(proc.returncode, expect, proc.stdout + proc.stderr)
        return out, proc

    def expect_tokenizer_files_of(self, source, out):
        for name in TOKENIZER_FILES:
            with open(os.path.join(source, name), "rb") as a, open(os.path.join(out, name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)

    def model_tensors(self, checkpoint):
        _, tensors = ck.read_checkpoint(ck.step_dir(checkpoint, 5))
        return {n: t for n, t in tensors.items() if not n.startswith("optimizer.")}

    def test_safetensors_file_holds_the_model_bitwise(self):
        out, _ = self.consolidate(self.full, "full.safetensors", "--format", "safetensors")
        metadata, header, tensors = ck.read_safetensors(out)
        self.assertEqual(metadata, {"format": "pt"})
        want = self.model_tensors(self.full)
        self.assertEqual(sorted(tensors), sorted(want))
        for name, value in want.items():
            self.assertEqual(header[name]["dtype"], "F32")
            self.assertTrue(same_bits(tensors[name], value), name)

    def test_hf_directory_has_config_and_weights(self):
        out, proc = self.consolidate(self.full, "full_hf", "--format", "hf")
        # Not started from a pretrained directory: no tokenizer files, no warning.
        self.assertEqual(sorted(os.listdir(out)), ["config.json", "model.safetensors"])
        self.assertNotIn("AutoTokenizer", proc.stderr)
        with open(os.path.join(out, "config.json")) as f:
            config = json.load(f)
        self.assertEqual(config["architectures"], ["LlamaForCausalLM"])
        for key in ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                    "num_key_value_heads", "vocab_size", "tie_word_embeddings"):
            self.assertEqual(config[key], ck.TINY_CONFIG[key], key)
        self.assertEqual(config["torch_dtype"], "float32")
        _, _, tensors = ck.read_safetensors(os.path.join(out, "model.safetensors"))
        want = self.model_tensors(self.full)
        self.assertEqual(sorted(tensors), sorted(ck.tiny_model_shapes()))
        for name, value in want.items():
            self.assertTrue(same_bits(tensors[name], value), name)

    def test_large_models_are_sharded_with_an_index(self):
        out, _ = self.consolidate(self.full, "sharded_hf", "--format", "hf", "--max-shard-size", "4KiB")
        with open(os.path.join(out, "model.safetensors.index.json")) as f:
            index = json.load(f)
        shards = sorted(set(index["weight_map"].values()))
        self.assertGreater(len(shards), 2)
        self.assertTrue(all(s.endswith("-of-%05d.safetensors" % len(shards)) for s in shards))
        self.assertFalse(os.path.exists(os.path.join(out, "model.safetensors")))
        want = self.model_tensors(self.full)
        self.assertEqual(sorted(index["weight_map"]), sorted(want))
        total = 0
        for shard in shards:
            metadata, _, tensors = ck.read_safetensors(os.path.join(out, shard))
            self.assertEqual(metadata, {"format": "pt"})
            for name, value in tensors.items():
                self.assertEqual(index["weight_map"][name], shard)
                self.assertTrue(same_bits(value, want[name]), name)
                total += value.nbytes
        self.assertEqual(index["metadata"]["total_size"], total)

    def test_tied_embeddings_have_no_lm_head(self):
        out, _ = self.consolidate(self.tied, "tied_hf", "--format", "hf")
        with open(os.path.join(out, "config.json")) as f:
            self.assertTrue(json.load(f)["tie_word_embeddings"])
        _, _, tensors = ck.read_safetensors(os.path.join(out, "model.safetensors"))
        self.assertNotIn("lm_head.weight", tensors)
        self.assertEqual(sorted(tensors), sorted(ck.tiny_model_shapes(tied=True)))

    def test_bfloat16_weights(self):
        out, _ = self.consolidate(self.full, "bf16_hf", "--format", "hf", "--dtype", "bfloat16")
        with open(os.path.join(out, "config.json")) as f:
            self.assertEqual(json.load(f)["torch_dtype"], "bfloat16")
        _, header, tensors = ck.read_safetensors(os.path.join(out, "model.safetensors"))
        for name, value in self.model_tensors(self.full).items():
            self.assertEqual(header[name]["dtype"], "BF16")
            bits = value.view(np.uint32).astype(np.uint64)
            want = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
            self.assertTrue(np.array_equal(tensors[name], want), name)

    def test_lora_adapter_in_peft_layout(self):
        out, _ = self.consolidate(self.lora, "adapter", "--format", "hf")
        self.assertEqual(sorted(os.listdir(out)),
                         sorted(["adapter_config.json", "adapter_model.safetensors"] + TOKENIZER_FILES))
        self.expect_tokenizer_files_of(self.base, out)
        with open(os.path.join(out, "adapter_config.json")) as f:
            config = json.load(f)
        self.assertEqual(config["peft_type"], "LORA")
        self.assertEqual(config["r"], LORA_RANK)
        self.assertEqual(config["lora_alpha"], LORA_ALPHA)
        self.assertEqual(config["target_modules"], ["q_proj", "v_proj"])
        self.assertEqual(config["base_model_name_or_path"], self.base)
        metadata, _, tensors = ck.read_safetensors(os.path.join(out, "adapter_model.safetensors"))
        self.assertEqual(metadata, {"format": "pt"})
        want = self.model_tensors(self.lora)
        self.assertEqual(len(tensors), 8)
        for name, value in want.items():
            self.assertTrue(same_bits(tensors["base_model.model." + name], value), name)
        self.assertEqual(tensors["base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight"].shape,
                         (8, LORA_RANK))

    def test_merged_lora_is_w_plus_scaled_b_a(self):
        out, _ = self.consolidate(self.lora, "merged", "--format", "hf", "--merge-lora")
        self.assertEqual(sorted(os.listdir(out)),
                         sorted(["config.json", "model.safetensors"] + TOKENIZER_FILES))
        self.expect_tokenizer_files_of(self.base, out)
        _, _, tensors = ck.read_safetensors(os.path.join(out, "model.safetensors"))
        adapters = self.model_tensors(self.lora)
        self.assertEqual(sorted(tensors), sorted(self.base_weights))
        merged = 0
        for name, base in self.base_weights.items():
            module = name[:-len(".weight")]
            if module + ".lora_A.weight" not in adapters:
                self.assertTrue(same_bits(tensors[name], base), name)
                continue
            a = adapters[module + ".lora_A.weight"].astype(np.float64)
            b = adapters[module + ".lora_B.weight"].astype(np.float64)
            want = base.astype(np.float64) + (LORA_ALPHA / LORA_RANK) * (b @ a)
            np.testing.assert_allclose(tensors[name], want, rtol=1e-5, atol=1e-5, err_msg=name)
            merged += 1
        self.assertEqual(merged, 4)

    def test_login_node_wrapper_picks_the_newest_step(self):
        script = os.path.join(nss_e2e.SOURCE, "scripts", "consolidate_checkpoint.sh")
        copy = os.path.join(self.root, "wrapper")
        shutil.copytree(self.full, copy)
        proc = subprocess.run([script, copy, "--dtype", "bfloat16"], capture_output=True, text=True,
                              env=dict(os.environ, NSS_BIN_DIR=nss_e2e.BIN))
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("newest committed step is " + ck.step_dir(copy, 5), proc.stderr)
        out = ck.step_dir(copy, 5) + "_hf"
        self.assertEqual(sorted(os.listdir(out)), ["config.json", "model.safetensors"])
        self.assertEqual(subprocess.run([script, os.path.join(self.root, "nowhere")],
                                        capture_output=True).returncode, 2)

    def test_refusals(self):
        _, proc = self.consolidate(self.full, "x1", "--format", "hf", "--merge-lora", expect=2)
        self.assertIn("holds no LoRA adapters", proc.stderr)
        _, proc = self.consolidate(self.lora, "x2.h5", "--merge-lora", expect=2)
        self.assertIn("--format hf", proc.stderr)

    def test_damaged_lora_step_leaves_nothing(self):
        copy = os.path.join(self.root, "lora_damaged")
        shutil.copytree(self.lora, copy)
        path = os.path.join(ck.step_dir(copy, 5), "rank_00000.h5")
        offset = ck.dataset_offset(path, "/model/unit_000") + 8
        with open(path, "r+b") as f:
            f.seek(offset)
            f.write(b"\x00\x00\x80\x3f")
        out = os.path.join(self.root, "damaged_merged")
        proc = ck.tool("nss_consolidate", ck.step_dir(copy, 5), "--output", out, "--format", "hf",
                       "--merge-lora")
        self.assertEqual(proc.returncode, 5, proc.stdout + proc.stderr)
        self.assertIn("checksum mismatch", proc.stderr)
        self.assertEqual([n for n in os.listdir(self.root) if n.startswith("damaged_merged")], [])


VENV_PYTHON = os.environ.get("NSS_VENV_PYTHON",
                             os.path.join(nss_e2e.SOURCE, "build", "venv", "bin", "python"))
LOAD_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hf_load_check.py")
VOCAB = 300
SEQ_LEN = 32
TEXT = "The tokenizer travels with the weights: caf\u00e9, 42 tokens."


def hf_libraries_missing():
    """Why transformers and peft cannot be used, or None."""
    if not os.path.exists(VENV_PYTHON):
        return "no venv at %s (scripts/setup.sh creates it with transformers and peft)" % VENV_PYTHON
    proc = subprocess.run([VENV_PYTHON, "-c", "import tokenizers, transformers, peft"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return "%s cannot import transformers and peft (scripts/setup.sh installs them): %s" % (
            VENV_PYTHON, proc.stderr.strip().splitlines()[-1])
    return None


class PretrainedRunExportTest(unittest.TestCase):
    """A LoRA run and a full fine-tune of nss_hpc from a pretrained directory
    with a real tokenizer, exported (LoRA: merged with --merge-lora and as a
    PEFT adapter), loaded by the Hugging Face libraries themselves."""

    @classmethod
    def setUpClass(cls):
        missing = hf_libraries_missing()
        if missing:
            raise unittest.SkipTest(missing)
        cls.loaded = {}
        cls.root = nss_e2e.scratch("ckpt_hf_pretrained")
        cls.addClassCleanup(nss_e2e.remove, cls.root)  # also when setUpClass fails
        cls.pretrained = os.path.join(cls.root, "pretrained")
        config = llama_config(hidden=48, intermediate=80, layers=2, heads=4, kv_heads=2, vocab=VOCAB)
        write_model_dir(cls.pretrained, config, random_llama_weights(config, seed=3, scale=0.1))
        tokenizer = os.path.join(cls.pretrained, "tokenizer.json")
        bpe_tokenizer.train(VENV_PYTHON, tokenizer, VOCAB, ["<s>", "</s>"])
        for name, content in (
                ("tokenizer_config.json", {"tokenizer_class": "PreTrainedTokenizerFast",
                                           "bos_token": "<s>", "eos_token": "</s>",
                                           "model_max_length": 256}),
                ("special_tokens_map.json", {"bos_token": "<s>", "eos_token": "</s>"}),
                ("generation_config.json", {"bos_token_id": 0, "eos_token_id": 1})):
            nss_e2e.write(os.path.join(cls.pretrained, name), json.dumps(content))

        # A dataset made with the model's tokenizer, as the trainer demands.
        cls.data = nss_e2e.write_token_dataset(os.path.join(cls.root, "train.h5"), tokens=4096,
                                               vocab_size=VOCAB)
        with open(tokenizer, "rb") as f, h5py.File(cls.data, "a") as h5:
            h5.attrs["tokenizer"] = "hf:" + tokenizer
            h5.attrs["tokenizer_sha256"] = hashlib.sha256(f.read()).hexdigest()
        # model.from_pretrained relative to the run's working directory: the
        # checkpoint and the adapter must name it absolute.
        yaml = nss_e2e.write(os.path.join(cls.root, "run.yaml"), """\
model:
  from_pretrained: pretrained
data:
  path: %s
  seq_len: %d
training:
  global_batch_size: 4
  micro_batch_size: 2
  max_steps: 3
  warmup_steps: 1
  lr: 0.01
  lora:
    enabled: true
    rank: %d
    alpha: %g
    targets: [q_proj, v_proj, down_proj]
checkpoint:
  interval_steps: 3
""" % (cls.data, SEQ_LEN, LORA_RANK, LORA_ALPHA))
        for run, sets in (("run_lora", []), ("run_full", ["training.lora.enabled=false"])):
            args = [nss_e2e.binary("nss_hpc"), yaml, "--set", "run.output_dir=" + run]
            proc = nss_e2e.mpirun(1, args + [a for s in sets for a in ("--set", s)], timeout=240,
                                  cwd=cls.root)
            assert proc.returncode == 0, proc.stdout + proc.stderr
        cls.step = ck.step_dir(os.path.join(cls.root, "run_lora", "checkpoints"), 3)
        cls.merged = cls.export(cls.step, "merged", "--merge-lora")
        cls.adapter = cls.export(cls.step, "adapter")
        cls.full = cls.export(ck.step_dir(os.path.join(cls.root, "run_full", "checkpoints"), 3),
                              "full")

    @classmethod
    def export(cls, step, name, *args):
        out = os.path.join(cls.root, name)
        proc = ck.tool("nss_consolidate", step, "--output", out, "--format", "hf", *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return out

    def load_check(self, kind, path):
        """hf_load_check.py's result for `path`, checked, once per path."""
        if path not in self.loaded:
            self.loaded[path] = self.run_load_check(kind, path)
        return self.loaded[path]

    def run_load_check(self, kind, path):
        proc = subprocess.run([VENV_PYTHON, LOAD_CHECK, kind, path, "--tokenizer-source",
                               self.pretrained, "--text", TEXT, "--data", self.data, "--seq-len",
                               str(SEQ_LEN), "--windows", "4"],
                              capture_output=True, text=True, timeout=240)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        self.assertGreater(len(result["source_ids"]), 5)
        self.assertEqual(result["ids"], result["source_ids"])
        self.assertEqual(result["loading"], {"missing": [], "unexpected": [], "mismatched": []})
        self.assertEqual(result["differing"], [])
        return result

    def same_file(self, a, b):
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()

    def expect_model_loads_like_nss_eval(self, out):
        self.assertEqual(sorted(os.listdir(out)),
                         sorted(["config.json", "model.safetensors"] + TOKENIZER_FILES))
        for name in TOKENIZER_FILES:
            self.assertTrue(self.same_file(os.path.join(self.pretrained, name),
                                           os.path.join(out, name)), name)
        result = self.load_check("model", out)
        proc = ck.tool("nss_eval", "--model", out, "--data", self.data, "--seq-len", SEQ_LEN,
                       "--batches", 2, "--batch-size", 2)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertAlmostEqual(result["loss"], json.loads(proc.stdout)["loss"], delta=1e-4)

    def test_merged_export_loads_with_transformers_like_nss_eval(self):
        self.expect_model_loads_like_nss_eval(self.merged)

    def test_full_fine_tune_export_loads_with_transformers_like_nss_eval(self):
        self.expect_model_loads_like_nss_eval(self.full)

    def test_peft_adapter_loads_on_its_base_like_the_merged_export(self):
        self.assertEqual(sorted(os.listdir(self.adapter)),
                         sorted(["adapter_config.json", "adapter_model.safetensors"] + TOKENIZER_FILES))
        with open(os.path.join(self.adapter, "adapter_config.json")) as f:
            self.assertEqual(json.load(f)["base_model_name_or_path"],
                             os.path.realpath(self.pretrained))
        _, _, adapters = ck.read_safetensors(os.path.join(self.adapter, "adapter_model.safetensors"))
        self.assertGreater(max(np.abs(v).max() for n, v in adapters.items() if "lora_B" in n), 1e-4,
                           "training left every adapter at zero: the comparison would be vacuous")
        peft = self.load_check("peft", self.adapter)
        merged = self.load_check("model", self.merged)
        np.testing.assert_allclose(peft["logits"], merged["logits"], rtol=0, atol=1e-4)
        self.assertAlmostEqual(peft["loss"], merged["loss"], delta=1e-4)

    def test_lost_tokenizer_is_a_warning_and_the_weights_are_written(self):
        tokenizer = os.path.join(self.pretrained, "tokenizer.json")
        os.rename(tokenizer, tokenizer + ".away")
        try:
            out = os.path.join(self.root, "merged_without_tokenizer")
            proc = ck.tool("nss_consolidate", self.step, "--output", out, "--format", "hf",
                           "--merge-lora")
        finally:
            os.rename(tokenizer + ".away", tokenizer)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("%s does not exist; AutoTokenizer will not load %s until the tokenizer files "
                      "are copied into it by hand" % (os.path.realpath(tokenizer), out), proc.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["config.json", "generation_config.json",
                                                   "model.safetensors", "special_tokens_map.json",
                                                   "tokenizer_config.json"])
        self.assertTrue(self.same_file(os.path.join(out, "model.safetensors"),
                                       os.path.join(self.merged, "model.safetensors")))

        os.rename(self.pretrained, self.pretrained + ".gone")
        try:
            out = os.path.join(self.root, "adapter_without_base")
            proc = ck.tool("nss_consolidate", self.step, "--output", out, "--format", "hf")
        finally:
            os.rename(self.pretrained + ".gone", self.pretrained)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("%s is not a directory: tokenizer.json, tokenizer_config.json, "
                      "special_tokens_map.json, generation_config.json not copied from it; "
                      "AutoTokenizer will not load %s" % (os.path.realpath(self.pretrained), out),
                      proc.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["adapter_config.json", "adapter_model.safetensors"])
        self.assertTrue(self.same_file(os.path.join(out, "adapter_model.safetensors"),
                                       os.path.join(self.adapter, "adapter_model.safetensors")))


if __name__ == "__main__":
    unittest.main()
