"""--constrain schema's token masks (lib/generate, through constraint_probe)
against two independent implementations of the same grammar
(constraint_reference.py, in the venv): a regular expression written from
the schema and tried by brute force on every token appended to the prefix
(the regex package's partial matches), and outlines-core's Index of that
expression (which never allows more; it matches leftmost-first and so
leaves out tokens that continue past a point where a match could end —
counted and printed). On the byte-level vocabulary and SmolLM2's tokenizer.json
(49,152 tokens), for a schema with string, number, empty and mixed columns
and bounded values, ungrouped and grouped, after every prefix of several
records' tokens: the allowed ids equal the regular expression's (tokens that are pieces of a
character are left out: a str-level expression cannot place them)."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import nss_e2e  # noqa: E402

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "constraint_reference.py")
SMOLLM2 = os.path.join(nss_e2e.SOURCE, "build", "models", "smollm2-135m-instruct", "tokenizer.json")
SCHEMA = {"columns": [
    {"name": "city", "type": "string", "empty_cells": False, "max_chars": 6, "max_integer_digits": 0,
     "max_fraction_digits": 0, "max_exponent_digits": 0},
    {"name": "temp", "type": "number", "empty_cells": False, "max_chars": 0, "max_integer_digits": 2,
     "max_fraction_digits": 1, "max_exponent_digits": 0},
    {"name": "rain \"mm\"", "type": "string", "empty_cells": True, "max_chars": 3, "max_integer_digits": 0,
     "max_fraction_digits": 0, "max_exponent_digits": 0},
    {"name": "note", "type": "string", "empty_cells": False, "max_chars": 5, "max_integer_digits": 3,
     "max_fraction_digits": 2, "max_exponent_digits": 2},
    {"name": "zip", "type": "string", "empty_cells": True, "max_chars": 5, "max_integer_digits": 5,
     "max_fraction_digits": 0, "max_exponent_digits": 0, "digit_strings": True,
     "missing_values": ["N/A", "NA", "NaN"]}]}
RECORDS = ['{"city":"Oslo","temp":12.5,"rain \\"mm\\"":"","note":"a\\"b","zip":"06647"}',
           '{"city":"Lima","temp":-3,"rain \\"mm\\"":"yes","note":1.25e-7,"zip":"NaN"}',
           '{"city":"Zürich","temp":0,"rain \\"mm\\"":"no","note":"ok\\n","zip":""}']


class ConstraintParityTest(nss_e2e.VenvScratchDirTest):
    SCRATCH_TAG = "constraint_parity"

    def compare(self, source, grouped, prefixes):
        schema = self.write("schema.json", json.dumps(SCHEMA).encode())
        lines = "".join(" ".join(map(str, p)) + "\n" for p in prefixes)
        probe = subprocess.run([nss_e2e.binary("constraint_probe"), schema, grouped, source], input=lines,
                               capture_output=True, text=True, timeout=300)
        self.assertEqual(probe.returncode, 0, probe.stderr)
        ours = [json.loads(line) for line in probe.stdout.splitlines()]
        path = self.write("prefixes.jsonl", "".join(json.dumps({"ids": p}) + "\n" for p in prefixes).encode())
        reference = self.venv(REFERENCE, schema, grouped, source, path)
        self.assertEqual(reference.returncode, 0, reference.stderr.decode()[-3000:])
        lines = [json.loads(line) for line in reference.stdout.decode().splitlines()]
        comparable = set(lines[0]["comparable"])
        allowed_somewhere = outlines_equal = outlines_missing = 0
        for prefix, got, want in zip(prefixes, ours, lines[1:]):
            self.assertIsNotNone(got, prefix)
            mine = sorted(set(got) & comparable)
            self.assertEqual(mine, want["regex"], prefix)
            allowed_somewhere += len(mine)
            # outlines-core matches leftmost-first: it never allows more, and
            # leaves out tokens that continue past a point where a match could end.
            if want["outlines"] is not None:
                self.assertLessEqual(set(want["outlines"]), set(mine), prefix)
                outlines_equal += want["outlines"] == mine
                outlines_missing += len(mine) - len(want["outlines"])
        self.assertEqual(len(ours), len(prefixes))
        self.assertGreater(allowed_somewhere, len(prefixes))
        print("%s grouped=%s: %d prefixes equal to the regex; outlines-core equal on %d, %d tokens fewer in all"
              % (os.path.basename(source), grouped, len(prefixes), outlines_equal, outlines_missing))
        return len(prefixes)

    def record_ids(self, source, text):
        if source == "byte-level":
            return list(text.encode())
        out = self.venv("-c", "import json,sys\nfrom tokenizers import Tokenizer\n"
                        "print(json.dumps(Tokenizer.from_file(sys.argv[1]).encode(sys.argv[2], "
                        "add_special_tokens=False).ids))", source, text)
        self.assertEqual(out.returncode, 0, out.stderr.decode())
        return json.loads(out.stdout)

    def prefixes(self, source, records):
        out = []
        for text in records:
            ids = self.record_ids(source, text)
            out += [ids[:n] for n in range(len(ids) + 1)]
        return out

    def test_byte_level(self):
        ascii_records = [r for r in RECORDS if r.isascii()]
        for grouped, records in (("0", ascii_records), ("1", ["\n".join(ascii_records)])):
            with self.subTest(grouped=grouped):
                self.compare("byte-level", grouped, self.prefixes("byte-level", records))

    def test_smollm2_tokenizer(self):
        if not os.path.exists(SMOLLM2):
            self.skipTest("%s is absent: scripts/setup.sh converts SmolLM2 and writes it" % SMOLLM2)
        count = self.compare(SMOLLM2, "0", self.prefixes(SMOLLM2, RECORDS[:2]))
        count += self.compare(SMOLLM2, "1", self.prefixes(SMOLLM2, ["\n".join(RECORDS[:2])])[-6:])
        print("SmolLM2: %d prefixes compared over 49,152 tokens" % count)


if __name__ == "__main__":
    unittest.main()
