"""column_gap (scripts/bench/constraint_fidelity.sh's program) on two small
tables: a table against itself is 0 in every column, against one of other
categories, prices and names clearly apart, and the bootstrap interval holds
the point estimate; a column of all different names, which nss_evaluate
leaves out, is measured by its value frequencies."""
import csv
import json
import os
import random
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import nss_e2e  # noqa: E402


def write_table(path, categories, low, high, rows=60, seed=3):
    rng = random.Random(seed)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["name", "category", "price"])
        for row in range(rows):
            writer.writerow(["item %d-%d" % (seed, row), rng.choice(categories), "%.2f" % rng.uniform(low, high)])
    return path


class ColumnGapTest(nss_e2e.ScratchDirTest):
    SCRATCH_TAG = "column_gap"

    def gap(self, a, b):
        proc = subprocess.run([nss_e2e.binary("column_gap"), a, b, "--bootstrap", "200", "--seed", "1"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return {c["name"]: c for c in json.loads(proc.stdout)["columns"]}

    def test_a_table_against_itself_and_against_another(self):
        a = write_table(self.path("a.csv"), ["food", "garden", "toys"], 1, 10)
        b = write_table(self.path("b.csv"), ["food", "tools"], 5, 40, seed=4)
        same = self.gap(a, a)
        self.assertEqual([same[c]["type"] for c in ("name", "category", "price")],
                         ["other", "categorical", "numeric"])
        self.assertEqual([same[c]["measure"] for c in ("name", "category", "price")],
                         ["categories", "compare_column", "compare_column"])
        self.assertIsNone(same["name"]["distance"])
        for column in same.values():
            self.assertEqual(column["measured"], 0.0, column)
            self.assertGreater(column["noise_floor"], 0.0, column)
            self.assertGreater(column["noise_floor_b"], 0.0, column)
        for column in self.gap(a, b).values():
            if column["measure"] == "compare_column":
                self.assertEqual(column["measured"], column["distance"], column)
            self.assertGreater(column["measured"], 0.3, column)
            low, high = column["interval_95"]
            self.assertLessEqual(low, column["measured"], column)
            self.assertGreaterEqual(high, column["measured"], column)
            if column["name"] != "name":  # all names distinct: any two samples are disjoint, floors 1 too
                self.assertGreater(column["measured_half_rows"],
                                   max(column["noise_floor"], column["noise_floor_b"]), column)

    def test_usage_errors_are_exit_2(self):
        a = write_table(self.path("a.csv"), ["food"], 1, 10)
        for args in ([a], [a, a, "--bootstrap", "x"], [a, a, "--frobnicate"]):
            proc = subprocess.run([nss_e2e.binary("column_gap")] + args, capture_output=True, text=True,
                                  timeout=60)
            self.assertEqual(proc.returncode, 2, proc.stderr)


if __name__ == "__main__":
    unittest.main()
