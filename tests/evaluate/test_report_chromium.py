"""report.html in a real headless Chromium (Debian's chromium or
chromium-headless-shell; not installed by scripts/setup.sh — the test skips
with the reason where neither is): nss_evaluate's page for a reference table
renders, its rendered DOM carries every score of evaluation.json, the
screenshot is a full, non-blank page, and Chromium's network log shows no
request leaving the page. A planted external image proves the log would
show one."""
import json
import os
import shutil
import struct
import subprocess
import sys
import unittest
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from nss_e2e import SOURCE, binary, remove, scratch, write  # noqa: E402

FIXTURE = os.path.join(SOURCE, "tests", "fixtures", "evaluation", "iris", "independent")
BROWSERS = ["chromium-headless-shell", "chromium", "chromium-browser"]
WIDTH, HEIGHT = 1200, 1600


def browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of a non-interlaced 8-bit PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color = header[:4]
    assert depth == 8 and color in (2, 6), header
    channels = 3 if color == 2 else 4
    raw, stride, rows, previous = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(line)
        previous = line
    return width, height, channels, rows


@unittest.skipIf(browser() is None, "no headless Chromium here (apt install chromium or chromium-headless-shell)")
class ReportInChromiumTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch("report_chromium")
        cls.out = os.path.join(cls.tmp, "eval")
        proc = subprocess.run([binary("nss_evaluate"), "--train", os.path.join(FIXTURE, "train.csv"),
                               "--holdout", os.path.join(FIXTURE, "holdout.csv"),
                               "--synthetic", os.path.join(FIXTURE, "synthetic.csv"), "--output", cls.out],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        with open(os.path.join(cls.out, "evaluation.json")) as f:
            cls.summary = json.load(f)["summary"]

    @classmethod
    def tearDownClass(cls):
        remove(cls.tmp)

    def render(self, page, *flags):
        netlog = os.path.join(self.tmp, "netlog.json")
        if os.path.exists(netlog):
            os.remove(netlog)
        proc = subprocess.run([browser(), "--no-sandbox", "--disable-gpu", "--log-net-log=" + netlog,
                               "--window-size=%d,%d" % (WIDTH, HEIGHT)] + list(flags) + ["file://" + page],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(netlog) as f:
            events = json.load(f)["events"]
        urls = {str(e["params"][k]) for e in events for k in ("url", "original_url", "host")
                if k in e.get("params", {})}
        return proc.stdout, {u for u in urls if not u.startswith("file://")}

    def test_the_page_renders_with_every_score_and_requests_nothing(self):
        page = os.path.join(self.out, "report.html")
        dom, requests = self.render(page, "--dump-dom")
        self.assertEqual(requests, set())
        names = {"synthetic_data_quality_score": "synthetic_quality_score", "data_privacy_score": "data_privacy_score",
                 "membership_inference_protection_score": "membership_inference_protection",
                 "attribute_inference_protection_score": "attribute_inference_protection",
                 "column_distribution_stability_score": "column_distribution_stability",
                 "column_correlation_stability_score": "column_correlation_stability",
                 "deep_structure_stability_score": "deep_structure_stability"}
        for field, marker in names.items():
            value = self.summary[field]
            self.assertIn('data-score="%s" data-value="%.1f"' % (marker, value), dom, field)
        self.assertIn("not covered by any differential-privacy guarantee", dom)

        shot = os.path.join(self.tmp, "report.png")
        _, requests = self.render(page, "--screenshot=" + shot)
        self.assertEqual(requests, set())
        width, height, channels, rows = png_pixels(shot)
        self.assertEqual((width, height), (WIDTH, HEIGHT))
        # The score cards' coloured digits and badges: many pixels far from white and from grey.
        coloured = sum(1 for row in rows[:height // 3] for x in range(0, width * channels, channels)
                       if max(row[x:x + 3]) - min(row[x:x + 3]) > 60)
        self.assertGreater(coloured, 2000, "the top of the page shows no coloured score")

    def test_the_network_log_would_show_a_leaving_request(self):
        planted = write(os.path.join(self.tmp, "planted.html"),
                        '<!doctype html><html lang="en"><body><img src="http://example.invalid/x.png"></body></html>')
        _, requests = self.render(planted, "--dump-dom")
        self.assertIn("http://example.invalid/x.png", requests)


if __name__ == "__main__":
    unittest.main()
