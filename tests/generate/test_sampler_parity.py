"""TokenSampler's candidates against transformers' own logits warpers
(TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper, applied in the
order generate() applies them), with and without a constraint's mask applied
first (--constrain schema: refused logits -inf, so the model's distribution
is renormalised over the allowed tokens): the same tokens keep a nonzero
probability, with the same probabilities, and no refused token does."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import VENV_PYTHON, binary  # noqa: E402

REFERENCE = r"""
import json, sys
import torch
from transformers.generation.logits_process import (TemperatureLogitsWarper, TopKLogitsWarper,
                                                    TopPLogitsWarper)
for line in sys.stdin:
    r = json.loads(line)
    scores = torch.tensor([r["logits"]], dtype=torch.float32)
    scores[0, r.get("refused", [])] = -float("inf")  # a grammar's mask, as a logits processor before the warpers
    ids = torch.zeros((1, 1), dtype=torch.long)
    scores = TemperatureLogitsWarper(r["temperature"])(ids, scores)
    if r["top_k"] > 0:
        scores = TopKLogitsWarper(r["top_k"])(ids, scores)
    if r["top_p"] < 1:
        scores = TopPLogitsWarper(r["top_p"])(ids, scores)
    p = torch.softmax(scores.double(), dim=-1)[0]
    kept = [i for i in range(p.numel()) if p[i] > 0]
    print(json.dumps({"tokens": kept, "probabilities": [p[i].item() for i in kept]}))
"""


class SamplerParityTest(unittest.TestCase):
    def test_candidates_match_transformers_warpers(self):
        if not os.path.exists(VENV_PYTHON):
            raise AssertionError("no venv at %s: run scripts/setup.sh" % VENV_PYTHON)
        import numpy as np
        rng = np.random.default_rng(5)
        requests = []
        for case in range(120):
            vocab = int(rng.integers(2, 300))
            logits = rng.normal(0, 3, vocab).astype(np.float32)
            if case % 3 == 0:  # ties, as quantised logits have
                logits = np.round(logits)
            request = {"logits": [float(x) for x in logits],
                       "temperature": float(rng.choice([0.3, 0.7, 1.0, 1.5])),
                       "top_k": int(rng.choice([0, 1, 5, 40, 1000])),
                       "top_p": float(rng.choice([1.0, 0.9, 0.5, 0.05]))}
            if case >= 30:  # a constraint's mask first: the rest renormalised
                keep = rng.random(vocab) < rng.choice([0.02, 0.3, 0.9])
                keep[int(rng.integers(vocab))] = True
                request["refused"] = [int(i) for i in np.flatnonzero(~keep)]
            requests.append(request)
        text = "".join(json.dumps(r) + "\n" for r in requests)
        ours = subprocess.run([binary("sampler_probe")], input=text, capture_output=True, text=True,
                              timeout=60, check=True).stdout.splitlines()
        theirs = subprocess.run([VENV_PYTHON, "-c", REFERENCE], input=text, capture_output=True, text=True,
                                timeout=300)
        self.assertEqual(theirs.returncode, 0, theirs.stderr)
        theirs = theirs.stdout.splitlines()
        self.assertEqual(len(ours), len(requests))
        ties = 0
        for request, mine, reference in zip(requests, ours, theirs):
            mine, reference = json.loads(mine), json.loads(reference)
            settings = {k: request[k] for k in ("temperature", "top_k", "top_p")}
            # Which of several tokens tied at the nucleus boundary stays is
            # arbitrary in transformers (torch.sort is not stable); ours is
            # fixed. Tokens kept by one side only must be such ties.
            only_mine = set(mine["tokens"]) - set(reference["tokens"])
            only_theirs = set(reference["tokens"]) - set(mine["tokens"])
            logits = request["logits"]
            self.assertEqual(sorted(logits[t] for t in only_mine), sorted(logits[t] for t in only_theirs),
                             settings)
            self.assertFalse(set(mine["tokens"]) & set(request.get("refused", [])), settings)
            self.assertEqual(len(mine["tokens"]), len(reference["tokens"]), settings)
            for a, b in zip(sorted(mine["probabilities"]), sorted(reference["probabilities"])):
                self.assertAlmostEqual(a, b, delta=1e-6, msg=str(settings))
            ties += len(only_mine)
        print("%d cases, %d boundary ties resolved differently" % (len(requests), ties))


if __name__ == "__main__":
    unittest.main()
