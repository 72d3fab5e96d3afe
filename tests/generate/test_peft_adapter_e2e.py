"""A PEFT adapter directory over --base, against PEFT itself (venv): a tiny
random Llama and LoRA adapters made by PEFT (random B, so the adapters
matter), plain and rsLoRA, all seven projections and a subset. nss_generate
--model ADAPTER --base BASE writes the greedy tokens PEFT's own generate()
writes; nss_eval scores the adapter as PEFT's merge_and_unload() export
(1e-5); misuse and damaged adapters are exit 2 or 4. --records reads the
table's schema from a step's record of its training data, which no adapter
directory carries: a LoRA step fine-tuned on records writes schema-valid
records, while its own nss_consolidate adapter export (the same model over
--base) and PEFT's adapter are refused with exit 2 naming the fix."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import (RECORD_COLUMNS, VENV_PYTHON, binary, prepare_records_dataset,  # noqa: E402
                     prepare_text_dataset, read_records_output, remove, scratch, train)

PROMPTS = ["Checkpoints are", "A", "The run directory"]
RECORDS_STEPS = 200
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
        cls.records_step, cls.records_adapter = cls.train_records_adapter()

    @classmethod
    def train_records_adapter(cls):
        """A LoRA run over the base on a records table, and its step's PEFT export."""
        run_dir = os.path.join(cls.tmp, "records")
        cls.records_data = prepare_records_dataset(cls.tmp)
        train(1, run_dir, ["data.path=" + cls.records_data,
                           "model.from_pretrained=" + os.path.join(cls.tmp, "base"),
                           "eval.interval_steps=0", "data.seq_len=64", "training.global_batch_size=8",
                           "training.micro_batch_size=8", "training.max_steps=%d" % RECORDS_STEPS,
                           "training.warmup_steps=5", "training.lr=1e-2", "logging.interval_steps=50",
                           "checkpoint.interval_steps=0", "preflight.enabled=false",
                           "training.lora.enabled=true", "training.lora.rank=8",
                           "training.lora.targets=[q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj]"])
        step = os.path.join(run_dir, "checkpoints", "step_%08d" % RECORDS_STEPS)
        adapter = os.path.join(cls.tmp, "records_adapter")
        proc = run("nss_consolidate", step, "--output", adapter, "--format", "hf")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert os.path.exists(os.path.join(adapter, "adapter_config.json")), os.listdir(adapter)
        return step, adapter

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

    def test_records_of_an_adapter_take_the_schema_of_records_data(self):
        out = self.path("records_of_step")
        proc = run("nss_generate", "--model", self.records_step, "--records", "8", "--output", out,
                   "--max-new-tokens", "48", "--temperature", "0.8", "--seed", "3")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        summary, invalid, records = read_records_output(out)
        self.assertEqual(summary["constrain"], "schema")
        self.assertEqual((summary["valid_records"], summary["invalid_records"]), (8, len(invalid)))
        self.assertTrue(all("cut off at --max-new-tokens" in r["reason"] for r in invalid), invalid)
        self.assertEqual([list(r) for r in records], [RECORD_COLUMNS] * 8)
        # The export is the step's model over --base: the same greedy text.
        prompt = ["--prompt", "Row of city, temp, rain:\n", "--temperature", "0", "--max-new-tokens", "40"]
        from_step = run("nss_generate", "--model", self.records_step, *prompt)
        from_adapter = run("nss_generate", "--model", self.records_adapter, "--base", self.path("base"), *prompt)
        self.assertEqual(from_step.returncode, 0, from_step.stderr)
        self.assertEqual(from_adapter.returncode, 0, from_adapter.stderr)
        self.assertIn("applied unmerged", from_adapter.stderr)
        self.assertEqual(json.loads(from_adapter.stdout)["text"], json.loads(from_step.stdout)["text"])
        # Neither that export nor PEFT's own adapter carries the table's schema.
        for adapter in (self.records_adapter, self.path("all")):
            out = self.path("records_of_" + os.path.basename(adapter))
            proc = run("nss_generate", "--model", adapter, "--base", self.path("base"), "--records", "8",
                       "--output", out)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("--records needs a model fine-tuned on records data, but %s holds no record of its "
                          "training data's preparation" % adapter, proc.stderr)
            self.assertIn("generate from that run's step", proc.stderr)
            self.assertIn("--records-data FILE.h5", proc.stderr)
            self.assertFalse(os.path.exists(os.path.join(out, "generation.json")))
        # --records-data names the prepared data: the adapter over --base then
        # writes, constrained, the very records its step writes.
        out = self.path("records_of_adapter")
        proc = run("nss_generate", "--model", self.records_adapter, "--base", self.path("base"), "--records", "8",
                   "--records-data", self.records_data, "--output", out, "--max-new-tokens", "48",
                   "--temperature", "0.8", "--seed", "3")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for name in ("synthetic.csv", "synthetic.jsonl", "invalid.jsonl"):
            with open(os.path.join(out, name)) as a, open(os.path.join(self.path("records_of_step"), name)) as b:
                self.assertEqual(a.read(), b.read(), name)
        self.assertEqual(read_records_output(out)[0]["constrain"], "schema")
        # A step keeps its own record; --records-data without --records is a slip.
        # A directory is no token file (exit 4, as nss_eval --data).
        for args, code, message in (
                (["--model", self.records_step, "--records", "8", "--records-data", self.records_data, "--output",
                  self.path("records_twice")], 2, "records the data it was trained on"),
                (["--model", self.records_step, "--prompt", "A", "--records-data", self.records_data], 2,
                 "--records-data applies to --records only"),
                (["--model", self.records_adapter, "--base", self.path("base"), "--records", "8", "--records-data",
                  self.data, "--output", self.path("records_from_text")], 2,
                 "--records-data %s holds 'text' data, not records data" % self.data),
                (["--model", self.records_adapter, "--base", self.path("base"), "--records", "8", "--records-data",
                  self.path("base"), "--output", self.path("records_from_dir")], 4,
                 "--records-data: token dataset %s is a directory, not a regular file" % self.path("base"))):
            proc = run("nss_generate", *args)
            self.assertEqual(proc.returncode, code, (args, proc.stderr))
            self.assertIn(message, proc.stderr)

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
