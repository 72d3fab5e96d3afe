"""The golden fixtures of tests/fixtures/families (made by
scripts/make_family_fixtures.sh with torch 2 and transformers 5, which the
test venv cannot hold): for each family, nss_eval's loss on the windows of
write_token_dataset's file equals transformers' to 1e-6 relative, and greedy
nss_generate writes transformers' generate() tokens. The fixtures' windows
(8) are shorter than the sequences scored and generated, so the sliding
layers cut; SmolLM3's last layer has no RoPE, Gemma 3's local layers their
own base."""
import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from nss_e2e import SOURCE, binary, remove, scratch, write_token_dataset  # noqa: E402

FIXTURES = os.path.join(SOURCE, "tests", "fixtures", "families")
class FamilyFixturesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("family_fixtures")
        cls.data = write_token_dataset(os.path.join(cls.tmp, "train.h5"), vocab_size=258)

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def reference(self, family):
        with open(os.path.join(FIXTURES, family, "reference.json")) as f:
            return json.load(f)

    def evaluate(self, family):
        # The weights without the tokenizer: the token file is byte-level, not made with it.
        ref = self.reference(family)
        model = os.path.join(self.tmp, family)
        if not os.path.isdir(model):
            shutil.copytree(os.path.join(FIXTURES, family), model,
                            ignore=shutil.ignore_patterns("tokenizer.json", "reference.json"))
        return subprocess.run([binary("nss_eval"), "--model", model, "--data", self.data,
                               "--seq-len", str(ref["seq_len"]), "--batches", str(ref["batches"]), "--batch-size",
                               str(ref["batch_size"])], capture_output=True, text=True, timeout=120)

    def generate(self, family):
        ref = self.reference(family)
        prompts = os.path.join(self.tmp, family + "_prompts.jsonl")
        with open(prompts, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps({"prompt": p}) + "\n" for p in ref["prompts"]))
        return subprocess.run([binary("nss_generate"), "--model", os.path.join(FIXTURES, family), "--prompts",
                               prompts, "--temperature", "0", "--max-new-tokens", str(len(ref["greedy"][0]))],
                              capture_output=True, text=True, timeout=120)

    def test_every_family_matches_transformers(self):
        families = sorted(f for f in os.listdir(FIXTURES) if os.path.isdir(os.path.join(FIXTURES, f)))
        self.assertEqual(len(families), 6, families)
        for family in families:
            with self.subTest(family=family):
                ref = self.reference(family)
                proc = self.evaluate(family)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                result = json.loads(proc.stdout.splitlines()[-1])
                self.assertEqual(result["tokens"], ref["tokens"])
                self.assertAlmostEqual(result["loss"] / ref["loss"], 1.0, delta=1e-6, msg=(result, ref["loss"]))
                proc = self.generate(family)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                samples = sorted((json.loads(line) for line in proc.stdout.splitlines() if line.strip()),
                                 key=lambda s: s["prompt_index"])
                self.assertEqual([s["tokens"] for s in samples], ref["greedy"])
                print("%s: loss %.9f (transformers %s: %.9f), greedy equal" % (
                    family, result["loss"], ref["versions"]["transformers"], ref["loss"]))


if __name__ == "__main__":
    unittest.main()
