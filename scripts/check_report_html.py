#!/usr/bin/env python3
"""Static check of an nss_evaluate report.html (standard library only).

Usage: check_report_html.py REPORT.html [--json] [--expect NAME=VALUE ...]

Fails (exit 1, one line per problem on stderr) unless the page:
  * is an HTML5 document: <!DOCTYPE html>, <html lang=...>, <meta charset>,
    a non-empty <title>;
  * is self-contained: no <script>, <link>, <iframe>, <object>, <embed>,
    <img>, <base> or <meta http-equiv="refresh">; every URL-carrying
    attribute (href, src, srcset, xlink:href, action, formaction, poster,
    data, background, cite, ping, manifest, longdesc) holds a '#' anchor;
    every CSS url(...) in <style> or style="" points at '#...'; no @import;
  * closes every <svg>, <table>, <div> and <section> it opens, in order;
  * carries the notice that it is not covered by differential privacy;
  * marks both headline scores, each once, with a grade that fits the value.

Markers the report defines (lib/evaluate/report_html.cpp writes them):
  class="score"          one element per score, each key once:
      data-score   which score, as evaluation.json names it:
                   synthetic_quality_score, data_privacy_score (headlines);
                   column_distribution_stability, column_correlation_stability,
                   deep_structure_stability, text_structure_similarity,
                   text_semantic_similarity, membership_inference_protection,
                   attribute_inference_protection, pii_replay (components)
      data-value   the 0-10 score with one decimal; empty when unavailable
      data-grade   Excellent, Very Good, Good, Moderate, Poor or Unavailable
  class="column-score"   per column of the distribution table:
      data-column  the column name (HTML-escaped in the page)
      data-value   as above
  class="dp-notice"      the sentence that the report itself carries no
                         differential-privacy guarantee.
  class="pii-replay"     per row of the PII Replay Analysis table:
      data-column  the column name
      data-value   the share of its distinct training values replayed, in %

Prints one line per score ("NAME VALUE GRADE", VALUE "n/a" when
unavailable), or with --json one object {"scores": {NAME: {"value", "grade"}},
"column_scores": [{"column", "value"}], "pii_replay": [{"column", "value"}]}. --expect NAME=VALUE (VALUE a number
or "n/a") also fails when that score differs by more than 0.05.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from html.parser import HTMLParser

URL_ATTRIBUTES = {
    "href", "src", "srcset", "xlink:href", "action", "formaction", "poster", "data",
    "background", "cite", "ping", "manifest", "longdesc",
}
FORBIDDEN_TAGS = {"script", "link", "iframe", "object", "embed", "img", "base", "frame"}
BALANCED_TAGS = {"svg", "table", "div", "section"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
             "track", "wbr"}
HEADLINES = ("synthetic_quality_score", "data_privacy_score")
GRADES = ("Poor", "Moderate", "Good", "Very Good", "Excellent")
CSS_URL = re.compile(r"url\(\s*(['\"]?)(.*?)\1\s*\)", re.IGNORECASE | re.DOTALL)
DP_NOTICE = "not covered by any differential-privacy guarantee"


def grade_of(value: float | None) -> str:
    """The grade NeMo Safe Synthesizer gives a 0-10 score."""
    if value is None:
        return "Unavailable"
    return GRADES[min(max(int(value) // 2, 0), 4)]


class ReportParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.doctype = ""
        self.html_lang = None
        self.charset = False
        self.title = ""
        self.scores: dict[str, dict] = {}
        self.column_scores: list[dict] = []
        self.pii_replay: list[dict] = []
        self.dp_notice = ""
        self._open: list[str] = []
        self._in_title = self._in_style = False
        self._notice_depth = 0  # >0 while inside the dp-notice element

    def where(self) -> str:
        line, column = self.getpos()
        return f"line {line}, column {column + 1}"

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.check_references(tag, values)
        if tag in BALANCED_TAGS:
            self._open.append(tag)
        if tag == "html":
            self.html_lang = values.get("lang")
        elif tag == "meta" and "charset" in values:
            self.charset = True
        self._in_title |= tag == "title"
        self._in_style |= tag == "style"
        if self._notice_depth and tag not in VOID_TAGS:
            self._notice_depth += 1
        classes = values.get("class", "").split()
        if "dp-notice" in classes and not self._notice_depth:
            self._notice_depth = 1
        if "score" in classes:
            self.read_score(values)
        if "column-score" in classes:
            self.column_scores.append(
                {"column": values.get("data-column", ""), "value": self.number(values)})
        if "pii-replay" in classes:
            self.pii_replay.append(
                {"column": values.get("data-column", ""), "value": self.number(values)})

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.check_references(tag, {name: value or "" for name, value in attrs})
        if tag in BALANCED_TAGS:
            self.problems.append(f"<{tag}/> self-closed at {self.where()}")

    def handle_endtag(self, tag: str) -> None:
        if tag in BALANCED_TAGS:
            if not self._open or self._open[-1] != tag:
                self.problems.append(f"</{tag}> at {self.where()} closes nothing open")
            else:
                self._open.pop()
        if tag == "title":
            self._in_title = False
        if tag == "style":
            self._in_style = False
        if self._notice_depth:
            self._notice_depth -= 1

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._in_style:
            self.check_css(data, "<style>")
        if self._notice_depth:
            self.dp_notice += data

    def check_references(self, tag: str, values: dict[str, str]) -> None:
        if tag in FORBIDDEN_TAGS:
            self.problems.append(f"<{tag}> at {self.where()}: the page must be self-contained")
        if tag == "meta" and values.get("http-equiv", "").lower() == "refresh":
            self.problems.append(f"<meta http-equiv=refresh> at {self.where()}")
        for name, value in values.items():
            if name in URL_ATTRIBUTES and not value.strip().startswith("#"):
                self.problems.append(
                    f'<{tag} {name}="{value}"> at {self.where()}: only #anchors are allowed')
        if "style" in values:
            self.check_css(values["style"], f"style attribute of <{tag}>")

    def check_css(self, css: str, where: str) -> None:
        if "@import" in css.lower():
            self.problems.append(f"@import in {where} at {self.where()}")
        for match in CSS_URL.finditer(css):
            if not match.group(2).strip().startswith("#"):
                self.problems.append(f"url({match.group(2)}) in {where} at {self.where()}")

    def number(self, values: dict[str, str]) -> float | None:
        text = values.get("data-value", "").strip()
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            self.problems.append(f'data-value="{text}" at {self.where()} is not a number')
            return None

    def read_score(self, values: dict[str, str]) -> None:
        key = values.get("data-score", "")
        if not key:
            self.problems.append(f'class="score" without data-score at {self.where()}')
            return
        if key in self.scores:
            self.problems.append(f'score "{key}" marked twice (again at {self.where()})')
        value = self.number(values)
        grade = values.get("data-grade", "")
        if value is not None and not 0 <= value <= 10:
            self.problems.append(f'score "{key}" = {value} is outside 0-10')
        if grade != grade_of(value):
            self.problems.append(f'score "{key}" = {value} is graded "{grade}", '
                                 f'expected "{grade_of(value)}"')
        self.scores[key] = {"value": value, "grade": grade}

    def finish(self) -> None:
        if self.doctype.strip().lower() != "doctype html":
            self.problems.append("the page does not start with <!DOCTYPE html>")
        if not self.html_lang:
            self.problems.append("<html> has no lang attribute")
        if not self.charset:
            self.problems.append("no <meta charset>")
        if not self.title.strip():
            self.problems.append("no <title>, or an empty one")
        for tag in self._open:
            self.problems.append(f"<{tag}> never closed")
        if DP_NOTICE not in " ".join(self.dp_notice.split()):
            self.problems.append(f'no class="dp-notice" element saying "{DP_NOTICE}"')
        for key in HEADLINES:
            if key not in self.scores:
                self.problems.append(f'no class="score" marker with data-score="{key}"')


def check_expectations(scores: dict[str, dict], expectations: list[str]) -> list[str]:
    problems = []
    for expectation in expectations:
        key, _, wanted = expectation.partition("=")
        if key not in scores:
            problems.append(f'--expect {expectation}: no score "{key}" in the page')
            continue
        value = scores[key]["value"]
        if wanted.strip().lower() == "n/a":
            if value is not None:
                problems.append(f"--expect {expectation}: the page has {value}")
            continue
        try:
            number = float(wanted)
        except ValueError:
            problems.append(f'--expect {expectation}: "{wanted}" is neither a number nor n/a')
            continue
        if value is None or abs(value - number) > 0.05:
            problems.append(f"--expect {expectation}: the page has {value}")
    return problems


def main() -> int:
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("report", help="the report.html to check")
    arguments.add_argument("--json", action="store_true", help="print the scores as JSON")
    arguments.add_argument("--expect", action="append", default=[], metavar="NAME=VALUE",
                           help='a score the page must show (VALUE a number or "n/a")')
    options = arguments.parse_args()
    try:
        with open(options.report, encoding="utf-8") as page:
            text = page.read()
    except (OSError, UnicodeDecodeError) as error:
        print(f"check_report_html: cannot read {options.report}: {error}", file=sys.stderr)
        return 1
    parser = ReportParser()
    parser.feed(text)
    parser.close()
    parser.finish()
    problems = parser.problems + check_expectations(parser.scores, options.expect)
    if options.json:
        print(json.dumps({"scores": parser.scores, "column_scores": parser.column_scores,
                          "pii_replay": parser.pii_replay}, indent=1))
    else:
        for key, score in parser.scores.items():
            value = "n/a" if score["value"] is None else f'{score["value"]:.1f}'
            print(f'{key} {value} {score["grade"]}')
    for problem in problems:
        print(f"check_report_html: {options.report}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
