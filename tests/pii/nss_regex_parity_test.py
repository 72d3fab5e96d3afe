"""nss_hpc's PII detection finds at least what NeMo Safe Synthesizer's (NSS)
own 36 regex detectors find, for the entity types both have, on the same
labelled table (tests/pii/labelled_table.cpp: entity columns, decoy columns
and free text with labelled spans).

NSS's detections come from tests/fixtures/pii/nss_regex_detections.json
(scripts/make_pii_fixtures.sh runs scripts/pii_reference.py in the reference
venv with NSS 0.1.16; the fixture records the versions and NSS's label ->
our entity mapping). The test regenerates the table with
pii_labelled_table_dump and requires it to be the fixture's (else the
fixture is stale), runs nss_hpc's detection on the fixture's cells
(pii_labelled_table_dump detect: the column classifier, then the cell
scanner on unassigned columns) and asserts: every NSS detection of a shared
type that overlaps a labelled span of that type has an overlapping span of
ours with the label's entity. It prints per entity: the labelled values,
NSS's true detections, how many of those we find, NSS's false positives per
the labels and how many of those we do not report; then every difference
with its reason."""
import collections
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from nss_e2e import SOURCE, binary  # noqa: E402

FIXTURE = os.path.join(SOURCE, "tests", "fixtures", "pii", "nss_regex_detections.json")
FAKER_DIR = os.environ.get("NSS_FAKER_DIR", "/usr/lib/python3/dist-packages/faker")

# NSS has one phone type; ours tells phone from fax by context, so an NSS
# phone_number on a labelled fax number is ours when we call it fax_number.
SAME_TYPE = {"phone_number": {"phone_number", "fax_number"}}


# Why NSS's regex matches a decoy (the reason printed with each difference).
WHY_DECOY = {
    "ip_address": "NSS's IPv4 pattern takes any four dot-separated numbers up to 255, so "
                  "build and version numbers (10.0.0.x, 4.19.13.2) match; nss_hpc drops an "
                  "address right after a version word (version, build, v)",
    "uuid": "NSS's UUID pattern makes the dashes optional, so a 32-digit hex id with a 1-5 "
            "and an 8-b in the version and variant places matches; nss_hpc requires the "
            "dashes",
    "phone_number": "NSS's phone pattern has no word boundary, so ten digits inside a longer "
                    "number match when a phone word is near; nss_hpc wants no letter or digit "
                    "right before the number and no digit right after",
}


def overlaps(a, b):
    return a[0] < b[1] and b[0] < a[1]


def run(args, stdin=None):
    proc = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, "%s: exit %d\n%s" % (args, proc.returncode, proc.stderr)
    return proc.stdout


class NssRegexParity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(os.path.join(FAKER_DIR, "providers", "person", "en_US", "__init__.py")):
            raise unittest.SkipTest("python3-fake-factory is not installed (%s)" % FAKER_DIR)
        with open(FIXTURE, encoding="utf-8") as f:
            cls.fixture = json.load(f)

    def test_table_is_the_fixtures(self):
        cells = self.fixture["cells"]
        rows = sum(1 for c in cells if c["column"] == cells[0]["column"])
        dumped = [json.loads(line) for line in run([binary("pii_labelled_table_dump"), "dump",
                                                    str(rows)]).splitlines()]
        self.assertEqual(len(dumped), len(cells), "stale fixture: run scripts/make_pii_fixtures.sh")
        for i, (now, then) in enumerate(zip(dumped, cells)):
            self.assertEqual((now["column"], now["cell"], now["spans"]),
                             (then["column"], then["cell"], then["spans"]),
                             "cell %d differs: the labelled table changed, run "
                             "scripts/make_pii_fixtures.sh" % i)

    def test_we_find_what_nss_regexes_find(self):
        fx = self.fixture
        cells = fx["cells"]
        print("NSS %s, %d regex detectors, %d cells" % (
            fx["versions"]["nemo-safe-synthesizer"], len(fx["detectors"]), len(cells)))
        self.assertEqual(len(fx["detectors"]), 36)
        lines = "".join("%s %s\n" % (c["column"].encode().hex(), c["cell"].encode().hex())
                        for c in cells)
        ours_all = [json.loads(line) for line in
                    run([binary("pii_labelled_table_dump"), "detect"], lines).splitlines()]
        self.assertEqual(len(ours_all), len(cells))

        shared = sorted(set(fx["nss_to_ours"].values()) | {"fax_number"})
        stats = {e: collections.Counter() for e in shared}
        missed, nss_false, both_false, nss_missed = [], [], [], []
        for i, (c, ours) in enumerate(zip(cells, ours_all)):
            for label in c["spans"]:
                if label[2] in stats:
                    stats[label[2]]["labelled"] += 1
                    if any(overlaps(o, label) and o[2] == label[2] for o in ours):
                        stats[label[2]]["we_found_labelled"] += 1
            for begin, end, nss_label, entity in c["nss"]:
                if entity is None:
                    continue  # a type of NSS's that nss_hpc does not have
                kinds = SAME_TYPE.get(entity, {entity})
                span = (begin, end)
                text = c["cell"][begin:end]
                truth = [s for s in c["spans"] if s[2] in kinds and overlaps(s, span)]
                where = "%s cell %d %r: NSS %s %r" % (c["column"], i, c["cell"], nss_label, text)
                if truth:
                    want = truth[0][2]
                    stats[want]["nss_true"] += 1
                    if any(overlaps(o, span) and o[2] == want for o in ours):
                        stats[want]["we_found"] += 1
                    else:
                        missed.append("%s: labelled %s, we report %s" % (where, want, ours))
                else:
                    stats[entity]["nss_false"] += 1
                    labels = [s[2] for s in c["spans"] if overlaps(s, span)]
                    reason = ("inside a labelled %s, not a %s" % ("/".join(labels), entity) if labels
                              else "a decoy, labelled no entity: " + WHY_DECOY.get(nss_label, "?"))
                    if any(overlaps(o, span) and o[2] in kinds for o in ours):
                        both_false.append("%s: %s; we report it too" % (where, reason))
                    else:
                        stats[entity]["we_skip_false"] += 1
                        nss_false.append("%s: %s" % (where, reason))
            # Labelled values of a shared type that NSS's regexes leave out.
            for label in c["spans"]:
                if label[2] not in stats:
                    continue
                hit = any(overlaps(n, label) and n[3] and label[2] in SAME_TYPE.get(n[3], {n[3]})
                          for n in c["nss"])
                if not hit:
                    nss_missed.append((label[2], c["column"]))

        print("%-18s %9s %9s %9s %11s %9s %13s" % ("entity", "labelled", "we found", "NSS true",
                                                    "we of NSS's", "NSS false", "we don't too"))
        for e in shared:
            s = stats[e]
            print("%-18s %9d %9d %9d %11d %9d %13d" % (
                e, s["labelled"], s["we_found_labelled"], s["nss_true"], s["we_found"],
                s["nss_false"], s["we_skip_false"]))
        counted = collections.Counter(nss_missed)
        print("labelled values NSS's regexes miss (entity, column: count):")
        for (entity, column), n in sorted(counted.items()):
            print("  %s, %s: %d" % (entity, column, n))
        print("NSS detections of types nss_hpc does not have (label: count): " + ", ".join(
            "%s: %d" % kv for kv in sorted(collections.Counter(
                n[2] for c in cells for n in c["nss"] if n[3] is None).items())))
        print("NSS false positives (per the labels) that nss_hpc does not report:")
        for line in nss_false:
            print("  " + line)
        print("NSS false positives that nss_hpc reports too:")
        for line in both_false or ["none"]:
            print("  " + line)
        print("NSS true detections nss_hpc misses:")
        for line in missed or ["none"]:
            print("  " + line)
        self.assertEqual(missed, [], "nss_hpc misses what NSS's regexes find")
        self.assertGreater(sum(s["nss_true"] for s in stats.values()), 100)


if __name__ == "__main__":
    unittest.main()
