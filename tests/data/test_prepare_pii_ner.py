"""nss_prepare_data --pii-ner-model end to end: a table of notes about
people and places with invented names — in no word list, so the patterns
cannot see them — prepared with the tiny tagger committed in
tests/fixtures/ner/tiny_tagger (train_tiny_tagger.py):

  - replace: the tagged names and places are gone from the training rows,
    the holdout and the token file, each replaced consistently; recall of
    the labelled people and places at least 0.95 and no other word touched
    (precision); the report says which model, its labels and what it found;
  - without the model the same names reach the token file (what the model
    adds), and the report says it was not used;
  - detect counts them; hash and redact use the same spans;
  - a directory that is not a tagger, a file given as the directory, and the
    option without PII handling are refused with their exit codes, nothing
    written."""
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fixtures", "ner"))
import nss_e2e  # noqa: E402
import ner_notes  # noqa: E402

TAGGER = os.path.join(nss_e2e.SOURCE, "tests", "fixtures", "ner", "tiny_tagger")


def run(args, timeout=120):
    return subprocess.run([nss_e2e.binary("nss_prepare_data")] + list(args), capture_output=True, timeout=timeout)


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


class PreparePiiNerTest(nss_e2e.ScratchDirTest):
    SCRATCH_TAG = "prepare_pii_ner"

    def setUp(self):
        super().setUp()
        # Names from a stream the tagger was not trained on.
        rng = random.Random(5)
        self.notes = ner_notes.notes(rng, 200, names_seed=1234)
        self.source = self.path("notes.csv")
        with open(self.source, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["ticket", "notes", "priority"])
            for i, (words, _) in enumerate(self.notes):
                writer.writerow([1000 + i, " ".join(words), rng.choice(["low", "high"])])

    def prepare(self, *args, output="out.h5", expect=0):
        result = run(["--input", self.source, "--format", "records", "--output", self.path(output)] + list(args))
        self.assertEqual(result.returncode, expect, result.stderr.decode())
        return result

    def report(self, name):
        with open(self.path(name), encoding="utf-8") as f:
            return json.load(f)

    def text(self, name):
        with open(self.path(name), encoding="utf-8") as f:
            return f.read()

    def labelled(self, tag):
        """Each note's words labelled `tag` (PER or LOC), grouped into entities."""
        out = []
        for words, tags in self.notes:
            groups = []
            for word, label in zip(words, tags):
                if label == "B-" + tag:
                    groups.append([word])
                elif label == "I-" + tag:
                    groups[-1].append(word)
            out.append([" ".join(g) for g in groups])
        return out

    def test_replace_removes_invented_names_the_patterns_miss(self):
        self.prepare("--pii", "replace", "--pii-ner-model", TAGGER, "--holdout", "0.1")
        report = self.report("out.pii.json")
        model = report["named_entity_model"]
        self.assertTrue(model["used"])
        self.assertEqual(model["directory"], os.path.realpath(TAGGER))
        self.assertEqual(model["labels"], {"PER": "name", "LOC": "city"})
        self.assertEqual(model["model_type"], "bert")
        self.assertEqual(len(model["weights_sha256"]), 64)
        self.assertGreater(model["cells_tagged"], 150)
        notes = report["column_statistics"]["notes"]
        self.assertIn("fake_entities", notes["transform_functions"])
        # The report counts the training rows' entities: within 5% of the labels there.
        training = read_rows(self.path("out.training.csv"))
        rows = [int(r["ticket"]) - 1000 for r in training]
        for tag, entity in (("PER", "name"), ("LOC", "city")):
            labelled = sum(len(self.labelled(tag)[i]) for i in rows)
            self.assertGreater(labelled, 30)
            self.assertLess(abs(notes["detected_entity_counts"][entity] - labelled), 0.05 * labelled, entity)

        trained = training + read_rows(self.path("out.holdout.csv"))
        by_ticket = {int(r["ticket"]): r["notes"] for r in trained}
        self.assertEqual(len(by_ticket), len(self.notes))
        found = total = 0
        originals = set()
        for i, (words, tags) in enumerate(self.notes):
            after = by_ticket[1000 + i]
            for entity in self.labelled("PER")[i] + self.labelled("LOC")[i]:
                total += 1
                originals.add(entity)
                found += entity not in after
            # Precision: the words around the entities are the note's own.
            for word, label in zip(words, tags):
                if label == "O" and word not in ("Team", "Gold"):
                    self.assertIn(word, after, (words, after))
        self.assertGreaterEqual(found / total, 0.95, "recall of invented names and places")
        text = self.text("out.training.csv")
        leaked = [name for name in originals if name in text]
        self.assertLessEqual(len(leaked), 0.05 * len(originals), leaked[:10])

    def test_without_the_model_the_names_stay(self):
        self.prepare("--pii", "replace")
        report = self.report("out.pii.json")
        self.assertEqual(report["named_entity_model"]["used"], False)
        self.assertIn("--pii-ner-model", report["named_entity_model"]["reason"])
        text = self.text("out.training.csv")
        people = [name for names in self.labelled("PER") for name in names]
        self.assertGreater(sum(name in text for name in people), 0.9 * len(people))

    def test_detect_hash_and_redact_use_the_same_spans(self):
        counts = {}
        for mode in ("detect", "hash", "redact"):
            self.prepare("--pii", mode, "--pii-ner-model", TAGGER, output=mode + ".h5")
            report = self.report(mode + ".pii.json")
            counts[mode] = report["column_statistics"]["notes"]["detected_entity_counts"]
        self.assertEqual(counts["detect"], counts["hash"])
        self.assertEqual(counts["detect"], counts["redact"])
        redacted = self.text("redact.training.csv")
        self.assertGreater(redacted.count("<name>"), 150)

    def test_bad_model_directories_are_refused(self):
        broken = self.path("broken")
        shutil.copytree(TAGGER, broken)
        os.remove(os.path.join(broken, "tokenizer.json"))
        cases = [
            (["--pii-ner-model", self.path("missing")], 2, "is not a directory"),
            (["--pii-ner-model", self.source], 2, "is not a directory"),
            (["--pii-ner-model", broken], 4, "has vocab.txt but no tokenizer.json"),
            (["--pii", "off", "--pii-ner-model", TAGGER], 2, "--pii-ner-model"),
        ]
        for args, code, message in cases:
            with self.subTest(args=args):
                result = self.prepare(*args, output="bad.h5", expect=code)
                self.assertIn(message, result.stderr.decode())
                self.assertFalse([f for f in os.listdir(self.dir) if f.startswith("bad.")])


if __name__ == "__main__":
    unittest.main()
