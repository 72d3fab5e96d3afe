#!/usr/bin/env python3
"""NeMo Safe Synthesizer's (NSS) own regex PII detectors on the labelled table.

Golden fixture for tests/pii/nss_regex_parity_test.py. Runs in the reference
venv of scripts/make_evaluation_fixtures.sh (nemo-safe-synthesizer 0.1.16
installed with --no-deps), with the few packages NSS's regex detectors import
that the evaluation venv lacks (tldextract and its dependencies,
python-stdnum, regex) on PYTHONPATH; scripts/make_pii_fixtures.sh installs
them and runs this. Never part of scripts/setup.sh or the test command.

  pii_reference.py --cells CELLS.jsonl --out FIXTURE.json
      CELLS.jsonl: pii_labelled_table_dump's lines
      {"column":..., "cell":..., "spans":[[begin,end,"entity"],...]}.

Every one of NSS's 36 regex detectors (pii_replacer/ner/regexes' `rules`, the
list NSS's regex_pipeline() instantiates) runs on each cell as NSS runs it:
predictor.evaluate(JSONRecord({column: cell})), so the column name is the
header context and the cell the value (NSS strips the value first; offsets
are into the stripped value, which for the table's cells is the cell). NSS's
NER keeps every prediction with score >= min_score, 0.0 by default, so all
are kept here. pipeline.regex_pipeline() itself is not called: pipeline.py
imports person_name (flashtext) and spaCy-backed modules that the regex
detectors do not need; `rules` is the same tuple it instantiates.

No stub is needed: pii_replacer.ner.regexes imports neither torch nor
transformers (evaluation_reference.py's stubs are for NSS's evaluation
modules). tldextract runs with NSS's own suffix_list_urls=None, its bundled
public suffix snapshot, so nothing is fetched.

Offsets: NSS's are Python str (code point) indices and ours are byte
offsets; the table is ASCII, which this script checks, so both agree.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import sys

# NSS's label -> our entity (lib/pii/entity.h's names), where both have the
# type. ip_address is NSS's IPv4 pattern (it never matches IPv6), so ipv4.
# phone_number: ours splits phone and fax by context; NSS has one type, so a
# fax number NSS finds is compared with our fax_number (the test accepts both).
NSS_TO_OURS = {
    "email_address": "email",
    "phone_number": "phone_number",
    "credit_card_number": "credit_debit_card",
    "us_social_security_number": "ssn",
    "us_zip_code": "postcode",
    "iban_code": "iban",
    "ip_address": "ipv4",
    "url": "url",
    "uuid": "uuid",
}
# NSS's labels with no entity of ours (recorded with "ours": null):
# aba_routing_number, age, domain_name, hostname, imei_hardware_id, md5,
# sha256, sha512, swift_code, latitude, longitude, gps_coordinates, the API
# key and secret types, sex, gender, race, ethnicity, google_olc.


def versions() -> dict:
    def version(dist):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {
        "python": platform.python_version(),
        "nemo-safe-synthesizer": version("nemo-safe-synthesizer"),
        "tldextract": version("tldextract"),
        "python-stdnum": version("python-stdnum"),
        "regex": version("regex"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    from nemo_safe_synthesizer.data_processing.records.json_record import JSONRecord
    from nemo_safe_synthesizer.pii_replacer.ner.regexes import rules

    predictors = [rule() for rule in rules]
    if len(predictors) != 36:
        sys.exit("expected NSS's 36 regex detectors, found %d" % len(predictors))

    cells = []
    with open(args.cells, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if not row["cell"].isascii() or row["cell"] != row["cell"].strip():
                sys.exit("cell %d: not stripped ASCII; offsets would differ" % len(cells))
            detections = []
            for predictor in predictors:
                record = JSONRecord({row["column"]: row["cell"]})
                for p in predictor.evaluate(record):
                    detections.append([p.start, p.end, p.label, NSS_TO_OURS.get(p.label)])
            detections.sort(key=lambda d: (d[0], d[1], d[2]))
            cells.append({"column": row["column"], "cell": row["cell"], "spans": row["spans"],
                          "nss": detections})

    fixture = {
        "versions": versions(),
        "detectors": sorted(p.source for p in predictors),
        "nss_to_ours": NSS_TO_OURS,
        "cells": cells,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(fixture, f, indent=None, separators=(",", ":"))
        f.write("\n")
    found = sum(len(c["nss"]) for c in cells)
    print("%d cells, %d NSS detections -> %s" % (len(cells), found, args.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
