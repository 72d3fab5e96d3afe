"""nss_prepare_data --pii end to end: a customer table with personal data
(tests/e2e/pii_people.py) prepared in each mode through the real binary —
what reaches the token file, the files beside it and their permissions, the
token file's record, consistency of the surrogates, the key's rules — and
every bad input with its exit code and nothing partial left."""
import csv
import hashlib
import io
import json
import os
import re
import resource
import stat
import subprocess
import sys
import threading
import unittest

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
import nss_e2e  # noqa: E402
import pii_people  # noqa: E402

BOS, EOS = 256, 257
ALL = "--pii-entities=all"


def run(args, env=None, timeout=120, file_size_limit=None):
    full_env = dict(os.environ, **(env or {}))

    def limit():
        if file_size_limit:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.run([nss_e2e.binary("nss_prepare_data")] + list(args), capture_output=True,
                          timeout=timeout, env=full_env, preexec_fn=limit)


def token_text(path):
    """The byte-level token file as text: every document, BOS/EOS dropped."""
    with h5py.File(path, "r") as f:
        tokens = f["tokens"][...]
    return bytes(t for t in tokens.tolist() if t < 256).decode("utf-8", "replace")


def attributes(path):
    with h5py.File(path, "r") as f:
        return {k: (v.item() if hasattr(v, "item") else v) for k, v in f.attrs.items()}


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read_text(path):
    with open(path) as f:
        return f.read()


def mode_of(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


class PreparePiiTest(nss_e2e.ScratchDirTest):
    SCRATCH_TAG = "prepare_pii"

    def setUp(self):
        super().setUp()
        self.source = self.path("people.csv")
        self.rows = pii_people.write_people(self.source, 120)  # 240 rows: enough for a holdout

    def prepare(self, *args, output="out.h5", expect=0, env=None):
        result = run(["--input", self.source, "--format", "records", "--output", self.path(output)]
                     + list(args), env=env)
        self.assertEqual(result.returncode, expect, result.stderr.decode())
        return result

    def test_replace_keeps_every_value_from_the_model_consistently(self):
        result = self.prepare(ALL, "--holdout", "0.25")
        stdout, stderr = result.stdout.decode(), result.stderr.decode()
        self.assertIn("PII (replace): columns customer (name), street (street_address), email (email), "
                      "phone (phone_number), ssn (ssn), card (credit_debit_card), iban (iban)", stdout)
        for name in ["out.pii.json", "out.pii.key", "out.training.csv", "out.holdout.csv"]:
            self.assertEqual(mode_of(self.path(name)), 0o600, name)
        key = read_text(self.path("out.pii.key"))
        self.assertRegex(key, r"^[0-9a-f]{64}\n$")
        report_text = read_text(self.path("out.pii.json"))
        report = json.loads(report_text)
        attrs = attributes(self.path("out.h5"))
        self.assertEqual(attrs["pii_mode"], "replace")
        self.assertEqual(attrs["pii_report"], self.path("out.pii.json"))
        self.assertEqual(attrs["pii_report_sha256"], sha256_of(self.path("out.pii.json")))
        self.assertEqual(attrs["pii_key_id"], report["key_id"])
        self.assertEqual(attrs["training_table"], self.path("out.training.csv"))
        self.assertEqual(attrs["training_sha256"], sha256_of(self.path("out.training.csv")))
        self.assertEqual(attrs["source_table"], self.source)
        self.assertEqual(attrs["holdout_sha256"], sha256_of(self.path("out.holdout.csv")))
        # No original personal value anywhere the model or a report reads.
        secrets = pii_people.secret_values(self.rows)
        model_text = token_text(self.path("out.h5"))
        for name, text in [("tokens", model_text), ("report", report_text),
                           ("training.csv", read_text(self.path("out.training.csv"))),
                           ("holdout.csv", read_text(self.path("out.holdout.csv"))),
                           ("console", stdout + stderr)]:
            leaked = [s for s in secrets if s in text]
            self.assertEqual(leaked, [], "%s holds original values" % name)
        self.assertNotIn(key.strip(), report_text + stdout + stderr + model_text)
        columns = report["column_statistics"]
        self.assertEqual([c["assigned_entity"] for c in columns.values()],
                         ["name", "street_address", "email", "phone_number", "ssn", "credit_debit_card",
                          "iban", None, None, None])
        self.assertEqual(columns["note"]["transform_functions"], ["fake_entities"])
        training_rows = len(self.rows) - len(report["holdout_source_rows"])
        self.assertEqual(len(report["holdout_source_rows"]), 60)
        self.assertEqual(columns["note"]["detected_entity_counts"],
                         {"phone_number": training_rows, "email": training_rows})
        self.check_consistent(report)

    def check_consistent(self, report):
        """Each original maps to one surrogate wherever it appears (training or
        holdout), distinct originals to distinct surrogates, none to itself;
        the other columns are unchanged and every surrogate keeps its format."""
        header, training = pii_people.read_rows(self.path("out.training.csv"))
        _, holdout = pii_people.read_rows(self.path("out.holdout.csv"))
        held = report["holdout_source_rows"]
        self.assertEqual(len(held), len(holdout))
        self.assertEqual(report["training_rows"], len(training))
        originals = [r for i, r in enumerate(self.rows) if i not in held] + [self.rows[i] for i in held]
        transformed = training + holdout
        for column in list(pii_people.SECRET_COLUMNS) + ["customer", "street"]:
            c = header.index(column)
            mapping = {}
            for original, new in zip(originals, transformed):
                self.assertEqual(mapping.setdefault(original[c], new[c]), new[c], column)
                self.assertNotEqual(original[c], new[c], column)
            self.assertEqual(len(set(mapping.values())), len(mapping), column + " is one-to-one")
        for original, new in zip(originals, transformed):
            for column in ["plan", "age"]:
                c = header.index(column)
                self.assertEqual(original[c], new[c])
            self.assertTrue(pii_people.luhn_valid(new[header.index("card")]), new)
            self.assertTrue(pii_people.iban_valid(new[header.index("iban")]), new)
            self.assertRegex(new[header.index("ssn")], r"^\d{3}-\d{2}-\d{4}$")
            self.assertRegex(new[header.index("phone")], r"^\(\d{3}\) \d{3}-\d{4}$")
            self.assertRegex(new[header.index("email")], r"^[^@\s]+@example\.(com|net|org)$")

    def test_one_key_same_surrogates_another_key_others(self):
        key = self.path("shared.key")
        self.prepare(ALL, "--pii-key", key, output="a.h5")
        self.prepare(ALL, "--pii-key", key, output="b.h5")
        self.prepare(ALL, output="c.h5")
        a = read_text(self.path("a.training.csv"))
        self.assertEqual(a, read_text(self.path("b.training.csv")))
        _, rows_a = pii_people.read_rows(self.path("a.training.csv"))
        _, rows_c = pii_people.read_rows(self.path("c.training.csv"))
        for column in ["email", "card", "iban", "ssn"]:
            c = pii_people.HEADER.index(column)
            same = sum(x[c] == y[c] for x, y in zip(rows_a, rows_c))
            self.assertLess(same, len(rows_a) // 20, column + ": another key, other surrogates")
        self.assertEqual(json.loads(read_text(self.path("a.pii.json")))["key_id"],
                         json.loads(read_text(self.path("b.pii.json")))["key_id"])
        self.assertNotEqual(json.loads(read_text(self.path("a.pii.json")))["key_id"],
                            json.loads(read_text(self.path("c.pii.json")))["key_id"])

    def test_two_jobs_creating_one_key_share_it(self):
        key = self.path("new.key")
        results = {}

        def job(name):
            results[name] = run(["--input", self.source, "--format", "records", "--pii-key", key,
                                 "--output", self.path(name)])

        threads = [threading.Thread(target=job, args=(n,)) for n in ["x.h5", "y.h5"]]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for name, result in results.items():
            self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertEqual(read_text(self.path("x.training.csv")),
                         read_text(self.path("y.training.csv")))

    def test_hash_redact_detect_and_off(self):
        self.prepare("--pii", "hash", output="hash.h5")
        _, rows = pii_people.read_rows(self.path("hash.training.csv"))
        email = pii_people.HEADER.index("email")
        self.assertTrue(all(re.fullmatch(r"[0-9a-f]{16}", r[email]) for r in rows))
        self.assertEqual(len({r[email] for r in rows}), len({r[email] for r in self.rows}))

        self.prepare("--pii", "redact", output="redact.h5")
        _, rows = pii_people.read_rows(self.path("redact.training.csv"))
        self.assertEqual({r[email] for r in rows}, {"<email>"})
        self.assertTrue(all(r[-1].startswith(("call <phone_number> or write to <email>",
                                              "reach me at <phone_number> (mail <email>)"))
                            for r in rows))
        self.assertFalse(os.path.exists(self.path("redact.pii.key")), "redact needs no key")

        result = self.prepare("--pii", "detect", output="detect.h5")
        self.assertIn("--pii detect: 6 columns and 480 values inside free text hold personal data; "
                      "the token file contains them unchanged", result.stderr.decode())
        self.assertIn(self.rows[0][email], token_text(self.path("detect.h5")))
        for absent in ["detect.pii.key", "detect.training.csv"]:
            self.assertFalse(os.path.exists(self.path(absent)), absent)
        attrs = attributes(self.path("detect.h5"))
        self.assertEqual(attrs["pii_mode"], "detect")
        self.assertNotIn("training_table", attrs)

        self.prepare("--pii", "off", output="off.h5")
        attrs = attributes(self.path("off.h5"))
        self.assertNotIn("pii_mode", attrs)
        self.assertEqual(attrs["source_table"], self.source, "records always name their table")
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if n.startswith("off.")), ["off.h5"])

    def test_csv_documents(self):
        result = run(["--input", self.source, "--pii", "replace", "--output", self.path("docs.h5")])
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        text = token_text(self.path("docs.h5"))
        self.assertEqual([s for s in pii_people.secret_values(self.rows) if s in text and "@" in s],
                         [], "e-mail addresses replaced")
        self.assertIn('"plan":"', text)
        self.assertFalse(os.path.exists(self.path("docs.training.csv")))
        self.assertEqual(attributes(self.path("docs.h5"))["pii_mode"], "replace")
        result = run(["--input", self.source, "--output", self.path("plain.h5")])
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        self.assertIn(self.rows[0][1], token_text(self.path("plain.h5")), "csv: off by default")

    def assert_refused(self, args, code, words, inputs=None, env=None):
        before = sorted(os.listdir(self.dir))
        result = run(args, env=env)
        message = result.stderr.decode()
        self.assertEqual(result.returncode, code, message)
        for word in words:
            self.assertIn(word, message)
        self.assertEqual(sorted(os.listdir(self.dir)), before, "nothing partial left: " + message)
        return message

    def test_bad_options_and_key_files(self):
        base = ["--input", self.source, "--format", "records", "--output", self.path("bad.h5")]
        text = self.write("notes.txt", b"call 212-555-0101\n")
        self.assert_refused(["--input", text, "--pii", "replace", "--output", self.path("t.h5")], 2,
                            ["--pii works on tables"])
        self.assert_refused(["--input", self.source, "--input", self.source, "--format", "csv",
                             "--pii", "replace", "--output", self.path("t.h5")], 2, ["one table"])
        self.assert_refused(base + ["--pii", "scramble"], 2, ["--pii scramble", "detect, replace"])
        self.assert_refused(base + ["--pii-entities", "email,shoe_size"], 2, ["shoe_size"])
        self.assert_refused(base + ["--pii-column", "email"], 2, ["COLUMN=ENTITY"])
        self.assert_refused(base + ["--pii-column", "mail=email"], 2, ["mail", "customer, street, email"])
        self.assert_refused(base + ["--pii-column", "email=shoe_size"], 2, ["shoe_size", "credit_debit_card"])
        self.assert_refused(base + ["--pii-column", "email=all"], 2, ["unknown entity 'all'"])
        self.assert_refused(base + ["--pii-column", "email=email", "--pii-column", "email=none"], 2, ["twice"])
        self.assert_refused(base + ["--pii-column", "note=none", "--pii-keep", "note"], 2,
                            ["both --pii-keep and --pii-column"])
        self.assert_refused(base + ["--pii-keep", "nope"], 2, ["--pii-keep nope"])
        self.assert_refused(base + ["--pii", "off", "--pii-keep", "email"], 2, ["--pii detect"])
        self.assert_refused(base + ["--pii-report", self.dir], 2, [self.dir])
        self.assert_refused(base + ["--pii-report", self.source], 2, ["would replace the input"])
        self.assert_refused(base, 2, ["faker", "python3-fake-factory"],
                            env={"NSS_FAKER_DIR": self.path("no-faker")})
        short = self.write("short.key", b"abcd\n")
        os.chmod(short, 0o600)
        self.assert_refused(base + ["--pii-key", short], 4, [short, "64"])
        shared = self.write("shared.key", b"ab" * 32 + b"\n")
        os.chmod(shared, 0o644)
        self.assert_refused(base + ["--pii-key", shared], 4, [shared, "chmod 600"])
        os.chmod(shared, 0o600)
        os.mkdir(self.path("keydir"))
        self.assert_refused(base + ["--pii-key", self.path("keydir")], 4, ["keydir"])
        os.mknod(self.path("keynode"), 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        self.assert_refused(base + ["--pii-key", self.path("keynode")], 4, ["keynode"])
        # A bad key is never echoed.
        secret = self.write("secret.key", b"Z" + b"cd" * 31 + b"e\n")
        os.chmod(secret, 0o600)
        message = self.assert_refused(base + ["--pii-key", secret], 4, [secret])
        self.assertNotIn("cdcdcd", message)

    def test_a_failed_preparation_keeps_the_previous_set_whole(self):
        """Every file is written in full before the first is published: a
        second preparation that runs out of room (here the file-size limit)
        at the token file leaves the first one's files as they were."""
        self.prepare(ALL, "--holdout", "0.25")
        names = ["out.h5", "out.pii.json", "out.pii.key", "out.training.csv", "out.holdout.csv"]
        before = {name: sha256_of(self.path(name)) for name in names}
        bigger = self.path("bigger.csv")
        pii_people.write_people(bigger, 400, seed=11)
        result = run(["--input", bigger, "--format", "records", "--output", self.path("out.h5"), ALL,
                      "--holdout", "0.25"], file_size_limit=os.path.getsize(self.path("out.h5")))
        self.assertEqual(result.returncode, 2, result.stderr.decode())
        self.assertIn("out.h5", result.stderr.decode())
        self.assertEqual({name: sha256_of(self.path(name)) for name in names}, before)
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if n.startswith("out")), sorted(names))

    def test_bad_tables(self):
        def refused(name, content, words):
            path = self.write(name, content)
            self.assert_refused(["--input", path, "--format", "records", "--output",
                                 self.path("bad.h5")], 4, [name] + words)
            os.remove(path)

        refused("binary.csv", b"id,blob\n1,ab\x00cd\n2,x\n3,y\n", [":2: a NUL byte"])
        refused("ragged.csv", b"name,email\nAda,ada@corp.com,extra\n", ["fields"])
        refused("header.csv", b"name,email\n", ["no rows"])
        # A 1 GiB line (sparse after its first 17 MiB): refused at the record limit, unread beyond.
        huge = self.path("huge.csv")
        with open(huge, "wb") as f:
            f.write(b"note,email\n" + b"x" * (17 << 20))
            f.truncate(1 << 30)
        self.assert_refused(["--input", huge, "--format", "records", "--output",
                             self.path("bad.h5")], 4, ["huge.csv:2", "longer than 16 MiB"])
        os.remove(huge)
        # Invalid UTF-8 is data, as everywhere in nss_prepare_data: kept byte for
        # byte, the valid personal data around it still found and replaced.
        path = self.write("latin1.csv", b"name,note\n" + b"".join(
            b"r%d,caf\xe9 \xff mail bob%d@corp.com\n" % (i, i) for i in range(12)))
        result = run(["--input", path, "--format", "records", "--output", self.path("l.h5")])
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        with open(self.path("l.training.csv"), "rb") as f:
            data = f.read()
        self.assertIn(b"caf\xe9 \xff mail ", data)
        self.assertNotIn(b"@corp.com", data)


if __name__ == "__main__":
    unittest.main()
