"""nss_generate through the real binary: greedy generation on the real
SmolLM2-135M-Instruct writes the tokens transformers' own generate() writes
(fp32, CPU), also for prompts of different lengths decoded together; sampling
is reproducible for a seed and identical at batch sizes 1 and 8, at 1 and 2
threads and at 1, 2
and 4 ranks (mpirun splits the prompts); --stop and
EOS end samples with their finish_reason; a checkpoint step of nss_hpc (byte
level) generates; bad input is exit 2 or 4."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, VENV_PYTHON, VenvScratchDirTest, binary, mpirun, prepare_text_dataset  # noqa: E402
import bpe_tokenizer  # noqa: E402

MODEL = os.environ.get("NSS_REAL_MODEL", os.path.join(SOURCE, "build", "models", "smollm2-135m-instruct"))
PROMPTS = ["The capital of France is", "def fibonacci(n):", "Once upon a time, in a small village near the sea,"]
REFERENCE = r"""
import json, sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
model_dir, new_tokens = sys.argv[1], int(sys.argv[2])
tokenizer = AutoTokenizer.from_pretrained(model_dir)
model = AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32).eval()
for line in sys.stdin:
    ids = tokenizer(json.loads(line), return_tensors="pt").input_ids
    with torch.no_grad():
        # synced_gpus=None probes for FSDP, which Debian's torch 1.13 cannot.
        out = model.generate(ids, max_new_tokens=new_tokens, do_sample=False, synced_gpus=False,
                             eos_token_id=None, pad_token_id=tokenizer.eos_token_id)
    print(json.dumps(out[0, ids.shape[1]:].tolist()))
"""


def generate(*args, threads=None):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads)) if threads else None
    proc = subprocess.run([binary("nss_generate")] + list(args), capture_output=True, text=True, timeout=600,
                          env=env)
    samples = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc, samples


class GenerateTest(VenvScratchDirTest):
    SCRATCH_TAG = "generate"

    def prompts_file(self, prompts):
        return self.write("prompts.jsonl", "".join(json.dumps({"prompt": p}) + "\n" for p in prompts).encode())

    def test_greedy_matches_transformers_generate(self):
        if not os.path.isdir(MODEL):
            raise AssertionError("no model at %s: run scripts/setup.sh (it converts SmolLM2)" % MODEL)
        new = 12
        proc, samples = generate("--model", MODEL, "--prompts", self.prompts_file(PROMPTS), "--temperature", "0",
                                 "--max-new-tokens", str(new), "--batch-size", "3")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        reference = subprocess.run([VENV_PYTHON, "-c", REFERENCE, MODEL, str(new)], capture_output=True, text=True,
                                   timeout=600, input="".join(json.dumps(p) + "\n" for p in PROMPTS))
        self.assertEqual(reference.returncode, 0, reference.stderr)
        expected = [json.loads(line) for line in reference.stdout.splitlines()]
        self.assertEqual([s["prompt_index"] for s in samples], [0, 1, 2])
        for sample, tokens in zip(samples, expected):
            # transformers does not stop at EOS here (eos_token_id=None): compare what we wrote.
            self.assertEqual(sample["tokens"], tokens[:len(sample["tokens"])], sample)
        self.assertIn("Paris", samples[0]["text"])

    def test_sampling_is_reproducible_and_independent_of_the_batch_and_threads(self):
        args = ["--model", MODEL, "--prompts", self.prompts_file(PROMPTS), "--temperature", "0.9", "--top-p", "0.95",
                "--top-k", "50", "--seed", "7", "--num-samples", "3", "--max-new-tokens", "10"]
        _, batch8 = generate(*args, "--batch-size", "8")
        _, batch1 = generate(*args, "--batch-size", "1")
        _, again = generate(*args, "--batch-size", "8", threads=2)  # the ctest default is 1 thread
        self.assertEqual(len(batch8), 9)
        self.assertEqual([(s["prompt_index"], s["sample"]) for s in batch8],
                         [(p, s) for p in range(3) for s in range(3)])
        self.assertEqual(batch8, again)
        self.assertEqual(batch8, batch1)
        self.assertGreater(len({tuple(s["tokens"]) for s in batch8 if s["prompt_index"] == 2}), 1)
        _, other_seed = generate(*args[:-2], "--seed", "8", "--max-new-tokens", "10")
        self.assertNotEqual(batch8, other_seed)

    def test_ranks_share_the_prompts_and_write_what_one_process_writes(self):
        args = ["--model", MODEL, "--prompts", self.prompts_file(PROMPTS), "--num-samples", "2", "--seed", "3",
                "--max-new-tokens", "8"]
        _, alone = generate(*args)
        for ranks in (2, 4):  # 4 ranks for 3 prompts: one rank has none
            # A new file each time: an existing output is never overwritten.
            output = self.path("ranks%d.jsonl" % ranks)
            proc = mpirun(ranks, [binary("nss_generate")] + args + ["--output", output])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(output) as f:
                self.assertEqual([json.loads(line) for line in f], alone)
        proc = mpirun(2, [binary("nss_generate"), "--model", MODEL, "--prompt", "x", "--top-p", "0"])
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(proc.stderr.count("nss_generate: error"), 1, proc.stderr)

    def test_stop_text_and_output_file(self):
        out = self.path("out.jsonl")
        proc, _ = generate("--model", MODEL, "--prompt", "The capital of France is", "--temperature", "0",
                           "--max-new-tokens", "16", "--stop", ".", "--output", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            sample = json.loads(f.read())
        self.assertEqual(sample["finish_reason"], "stop")
        self.assertEqual(sample["text"], " Paris")

    def test_a_trained_step_generates_with_the_byte_tokenizer(self):
        data = prepare_text_dataset(self.dir)
        run = self.path("run")
        train = mpirun(2, [binary("nss_hpc"), os.path.join(SOURCE, "configs", "run.yaml"), "--set",
                           "run.output_dir=" + run, "--set", "data.path=" + data, "--set", "eval.interval_steps=0",
                           "--set", "data.seq_len=32", "--set", "training.max_steps=4", "--set",
                           "preflight.enabled=false"])
        self.assertEqual(train.returncode, 0, train.stderr)
        step = os.path.join(run, "checkpoints", "step_00000004")
        proc, samples = generate("--model", step, "--prompt", "Checkpoints are", "--max-new-tokens", "8",
                                 "--temperature", "0.8")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("built-in byte-level tokenizer", proc.stderr)
        self.assertEqual(len(samples), 1)
        self.assertIn(samples[0]["finish_reason"], ("eos", "length"))
        # Any id of the model's vocabulary may be drawn (a 4-step model can sample its BOS, 256); the text
        # is the bytes of the byte ids (exact when they are valid UTF-8; the JSON replaces broken ones).
        tokens = samples[0]["tokens"]
        self.assertTrue(all(0 <= t < 258 for t in tokens), tokens)
        try:
            self.assertEqual(samples[0]["text"], bytes(t for t in tokens if t < 256).decode("utf-8"))
        except UnicodeDecodeError:
            pass

    def test_a_step_uses_the_tokenizer_its_data_was_made_with(self):
        os.makedirs(self.path("tok"))
        tokenizer = self.path("tok/tokenizer.json")
        bpe_tokenizer.train(VENV_PYTHON, tokenizer, 600, ["<s>", "</s>"])
        text = self.write("text.txt", b"The checkpoint of a model is saved in shards.\n" * 300)
        data = self.path("bpe.h5")
        prepared = subprocess.run([VENV_PYTHON, os.path.join(SOURCE, "scripts", "prepare_data_hf.py"), "--tokenizer",
                                   tokenizer, "--input", text, "--output", data], capture_output=True, text=True)
        self.assertEqual(prepared.returncode, 0, prepared.stderr)
        run = self.path("run")
        train = mpirun(1, [binary("nss_hpc"), os.path.join(SOURCE, "configs", "run.yaml"), "--set",
                           "run.output_dir=" + run, "--set", "data.path=" + data, "--set", "eval.interval_steps=0",
                           "--set", "data.seq_len=32", "--set", "training.max_steps=2", "--set",
                           "model.vocab_size=600", "--set", "preflight.enabled=false"])
        self.assertEqual(train.returncode, 0, train.stderr)
        step = os.path.join(run, "checkpoints", "step_00000002")
        args = ["--model", step, "--prompt", "The checkpoint", "--max-new-tokens", "4", "--temperature", "0"]
        proc, samples = generate(*args)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("tokenizer.json " + tokenizer, proc.stderr)
        self.assertTrue(all(0 <= t < 600 for t in samples[0]["tokens"]))
        with open(tokenizer, "a") as f:  # another tokenizer now: its SHA-256 differs
            f.write("\n")
        proc, _ = generate(*args)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("which has changed since", proc.stderr)
        self.assertIn("--tokenizer", proc.stderr)
        proc, again = generate(*args, "--tokenizer", tokenizer)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(again, samples)

    def nss_hpc(self, run, data, *sets):
        args = [binary("nss_hpc"), os.path.join(SOURCE, "configs", "run.yaml"), "--set", "run.output_dir=" + run,
                "--set", "data.path=" + data, "--set", "eval.interval_steps=0", "--set", "data.seq_len=32",
                "--set", "preflight.enabled=false"]
        for s in sets:
            args += ["--set", s]
        proc = mpirun(2, args)
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_a_lora_step_generates_what_its_merged_export_generates(self):
        data = prepare_text_dataset(self.dir)
        self.nss_hpc(self.path("base_run"), data, "training.max_steps=3")
        base = self.path("base")
        consolidate = [binary("nss_consolidate"), self.path("base_run/checkpoints/step_00000003"), "--output", base,
                       "--format", "hf"]
        self.assertEqual(subprocess.run(consolidate, capture_output=True).returncode, 0)
        self.nss_hpc(self.path("lora_run"), data, "training.max_steps=4", "model.from_pretrained=" + base,
                     "training.lora.enabled=true", "training.lora.targets=[q_proj,v_proj,down_proj]",
                     "training.lr=2e-2")
        step = self.path("lora_run/checkpoints/step_00000004")
        merged = self.path("merged")
        proc = subprocess.run([binary("nss_consolidate"), step, "--output", merged, "--format", "hf", "--merge-lora"],
                              capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        args = ["--prompts", self.prompts_file(["Checkpoints are", "A", "The run directory holds"]),
                "--temperature", "0", "--max-new-tokens", "24", "--batch-size", "3"]
        proc, unmerged = generate("--model", step, *args)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc, exported = generate("--model", merged, *args)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(unmerged, exported)
        _, base_samples = generate("--model", base, *args)
        self.assertNotEqual(unmerged, base_samples)  # the adapters changed what the model writes
        scores = []
        for model in (step, merged):
            proc = subprocess.run([binary("nss_eval"), "--model", model, "--data", data, "--batches", "2",
                                   "--batch-size", "4"], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            scores.append(json.loads(proc.stdout)["loss"])
        self.assertAlmostEqual(scores[0], scores[1], delta=1e-5 * scores[1])

    def test_bf16_on_the_cpu_writes_the_answer(self):
        proc, samples = generate("--model", MODEL, "--prompt", "The capital of France is", "--temperature", "0",
                                 "--max-new-tokens", "4", "--dtype", "bf16")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("on cpu in bf16", proc.stderr)
        self.assertIn("Paris", samples[0]["text"])

    def test_bad_input_is_a_usage_or_data_error(self):
        proc, _ = generate("--model", MODEL, "--prompt", "x", "--prompts", self.prompts_file(["y"]))
        self.assertEqual(proc.returncode, 2, proc.stderr)
        proc, _ = generate("--model", MODEL, "--prompt", "x", "--top-p", "0")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("top_p must be in (0, 1]", proc.stderr)
        bad = self.write("bad.jsonl", b'{"messages": []}\n')
        proc, _ = generate("--model", MODEL, "--prompts", bad)
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn("bad.jsonl:1: a prompt line needs a string \"prompt\"", proc.stderr)
        proc, _ = generate("--model", MODEL, "--prompt", "x", "--tokenizer", self.path("missing.json"))
        self.assertEqual(proc.returncode, 2, proc.stderr)


if __name__ == "__main__":
    unittest.main()
