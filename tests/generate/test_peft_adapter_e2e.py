"""A PEFT adapter directory over --base, against PEFT itself (venv): a tiny
random Llama and LoRA adapters made by PEFT (random B, so the adapters
matter), plain and rsLoRA, all seven projections and a subset. nss_generate
--model ADAPTER --base BASE writes the greedy tokens PEFT's own generate()
writes; nss_eval scores the adapter as PEFT's merge_and_unload() export
(1e-5); misuse and damaged adapters are exit 2 or 4."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import VENV_PYTHON, binary, prepare_text_dataset, remove, scratch  # noqa: E402

PROMPTS = ["Checkpoints are", "A", "The run directory"]
MAKE = r"""
import json, os, sys, torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM
out, new_tokens = sys.argv[1], int(sys.argv[2])
prompts = json.loads(sys.argv[3])
torch.manual_seed(0)
config = LlamaConfig(vocab_size=258, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                     bos_token_id=256, eos_token_id=257, tie_word_embeddings=False)
LlamaForCausalLM(config).save_pretrained(out + "/base", safe_serialization=True)
wide = LlamaConfig(**dict(config.to_dict(), hidden_size=32, intermediate_size=48))
LlamaForCausalLM(wide).save_pretrained(out + "/other_base", safe_serialization=True)
reference = {}
for name, targets, rslora in (("all", ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
                               False),
                              ("rslora", ["q_proj", "v_proj"], True)):
    base = LlamaForCausalLM.from_pretrained(out + "/base", torch_dtype=torch.float32)
    model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=targets, lora_dropout=0.0,
                                            use_rslora=rslora))
    with torch.no_grad():
        for module_name, parameter in model.named_parameters():
            if "lora_B" in module_name:
                parameter.normal_(0, 0.2)
    model.save_pretrained(out + "/" + name)
    model.eval()
    tokens = []
    for prompt in prompts:
        ids = torch.tensor([[256] + list(prompt.encode())])
        with torch.no_grad():
            generated = model.generate(input_ids=ids, max_new_tokens=new_tokens, do_sample=False, synced_gpus=False,
                                       eos_token_id=None, pad_token_id=0)
        tokens.append(generated[0, ids.shape[1]:].tolist())
    reference[name] = tokens
    model.merge_and_unload().save_pretrained(out + "/" + name + "_merged", safe_serialization=True)
json.dump(reference, open(out + "/reference.json", "w"))
"""


def run(tool, *args):
    return subprocess.run([binary(tool)] + list(args), capture_output=True, text=True, timeout=600)


class PeftAdapterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("peft_adapter")
        made = subprocess.run([VENV_PYTHON, "-c", MAKE, cls.tmp, "12", json.dumps(PROMPTS)], capture_output=True,
                              text=True, timeout=600)
        assert made.returncode == 0, made.stderr
        with open(os.path.join(cls.tmp, "reference.json")) as f:
            cls.reference = json.load(f)
        cls.data = prepare_text_dataset(cls.tmp)
        cls.prompts = os.path.join(cls.tmp, "prompts.jsonl")
        with open(cls.prompts, "w") as f:
            f.write("".join(json.dumps({"prompt": p}) + "\n" for p in PROMPTS))

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def score(self, *model):
        proc = run("nss_eval", "--model", *model, "--data", self.data, "--seq-len", "32", "--batches", "2",
                   "--batch-size", "2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return json.loads(proc.stdout)["loss"]

    def test_greedy_tokens_are_peft_generates(self):
        for name in ("all", "rslora"):
            proc = run("nss_generate", "--model", self.path(name), "--base", self.path("base"), "--prompts",
                       self.prompts, "--temperature", "0", "--max-new-tokens", "12")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn("applied unmerged", proc.stderr)
            samples = [json.loads(line) for line in proc.stdout.splitlines()]
            for sample, tokens in zip(samples, self.reference[name]):
                self.assertEqual(sample["tokens"], tokens[:len(sample["tokens"])], (name, sample))
                self.assertGreater(len(sample["tokens"]), 0)

    def test_scores_equal_peft_merged_export(self):
        base = self.score(self.path("base"))
        for name in ("all", "rslora"):
            adapter = self.score(self.path(name), "--base", self.path("base"))
            merged = self.score(self.path(name + "_merged"))
            self.assertAlmostEqual(adapter, merged, delta=1e-5 * merged, msg=name)
            self.assertGreater(abs(adapter - base), 1e-3, name)  # the adapters matter

    def adapter_copy(self, name, edit_config=None, truncate=False):
        import shutil
        target = self.path(name)
        shutil.copytree(self.path("all"), target)
        config_path = os.path.join(target, "adapter_config.json")
        if edit_config:
            with open(config_path) as f:
                config = json.load(f)
            config.update(edit_config)
            with open(config_path, "w") as f:
                json.dump(config, f)
        if truncate:
            weights = os.path.join(target, "adapter_model.safetensors")
            os.truncate(weights, os.path.getsize(weights) // 2)
        return target

    def test_misuse_and_damage_are_exit_2_or_4(self):
        generate = ["--prompt", "A", "--max-new-tokens", "2"]
        cases = [
            (["--model", self.path("all")] + generate, 2, "--base DIR"),
            (["--model", self.path("base"), "--base", self.path("base")] + generate, 2, "holds no adapter_config"),
            (["--model", self.path("all"), "--base", self.path("other_base")] + generate, 2, "has shape"),
            (["--model", self.adapter_copy("fan", {"fan_in_fan_out": True}), "--base", self.path("base")] + generate,
             2, "fan_in_fan_out"),
            (["--model", self.adapter_copy("dora", {"use_dora": True}), "--base", self.path("base")] + generate, 2,
             "use_dora"),
            (["--model", self.adapter_copy("embed", {"target_modules": ["embed_tokens"]}), "--base",
              self.path("base")] + generate, 2, "embed_tokens"),
            (["--model", self.adapter_copy("saved", {"modules_to_save": ["lm_head"]}), "--base",
              self.path("base")] + generate, 2, "modules_to_save"),
            (["--model", self.adapter_copy("fewer", {"target_modules": ["q_proj"]}), "--base",
              self.path("base")] + generate, 4, "not a LoRA matrix"),
            (["--model", self.adapter_copy("cut", truncate=True), "--base", self.path("base")] + generate, 4,
             "adapter_model.safetensors"),
        ]
        for args, code, message in cases:
            proc = run("nss_generate", *args)
            self.assertEqual(proc.returncode, code, (args, proc.stderr))
            self.assertIn(message, proc.stderr, args)
        proc = run("nss_eval", "--model", self.path("all"), "--data", self.data)
        self.assertEqual(proc.returncode, 2, proc.stderr)


if __name__ == "__main__":
    unittest.main()
