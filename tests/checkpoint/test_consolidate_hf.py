"""nss_consolidate --format safetensors|hf: what a Hugging Face user loads.
Full models (config.json right, tied embeddings, sharding with an index,
bfloat16), PEFT LoRA adapters, and merged LoRA weights W + (alpha/r) B A."""
import json
import os
import shutil
import subprocess
import unittest

import numpy as np

import ckpt_helpers as ck
import nss_e2e

LORA_RANK = 4
LORA_ALPHA = 16.0


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
        out, _ = self.consolidate(self.full, "full_hf", "--format", "hf")
        self.assertEqual(sorted(os.listdir(out)), ["config.json", "model.safetensors"])
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
        self.assertEqual(sorted(os.listdir(out)), ["adapter_config.json", "adapter_model.safetensors"])
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
        self.assertEqual(sorted(os.listdir(out)), ["config.json", "model.safetensors"])
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


if __name__ == "__main__":
    unittest.main()
