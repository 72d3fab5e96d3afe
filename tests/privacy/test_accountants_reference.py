"""lib/privacy's accountants next to independent implementations from PyPI in
the venv of scripts/setup.sh (required, like the other venv tests): over a
grid of (q, sigma, steps, delta), accountant_probe's RDP epsilon against
Opacus's compute_rdp + get_privacy_spent with the same orders (DEFAULT_ALPHAS)
and conversion, and its PRV epsilon against dp-accounting's PLD accountant
(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)) composed `steps` times,
pessimistic, value_discretization_interval 1e-4). Prints the table that
docs/privacy.md quotes, and the PRV accountant's time for 10,000 steps and
for a calibration."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from nss_e2e import SOURCE, binary  # noqa: E402

VENV_PYTHON = os.environ.get("NSS_VENV_PYTHON", os.path.join(SOURCE, "build", "venv", "bin", "python"))

RATES = (0.001, 0.01, 0.1)
SIGMAS = (0.6, 1.0, 2.0)
STEPS = (100, 1000, 10000)
DELTAS = (1e-5, 1e-6)
# Beyond this (Opacus's RDP) epsilon there is no privacy to speak of, and the
# PRV grid (and dp-accounting's) grows past hundreds of MB: RDP only there.
PRV_MAX_EPSILON = 100.0
RDP_TOLERANCE = 1e-6  # the same formulas in double precision
PLD_TOLERANCE = 0.01

# Runs in the venv: Opacus's RDP epsilon and order for every case, and
# dp-accounting's PLD epsilon where Opacus's is at most argv[3] (one
# composition per (q, sigma, steps), read at every delta).
REFERENCE = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent
from opacus.accountants.rdp import RDPAccountant
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
cases, pld_max_epsilon = json.load(open(sys.argv[1])), float(sys.argv[3])
out, plds = [], {}
for c in cases:
    rdp = compute_rdp(q=c["q"], noise_multiplier=c["sigma"], steps=c["steps"], orders=RDPAccountant.DEFAULT_ALPHAS)
    eps, order = get_privacy_spent(orders=RDPAccountant.DEFAULT_ALPHAS, rdp=rdp, delta=c["delta"])
    row = {"opacus": float(eps), "opacus_order": float(order), "pld": None}
    if eps <= pld_max_epsilon:
        key = (c["q"], c["sigma"], c["steps"])
        if key not in plds:
            plds[key] = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
            event = dp_event.PoissonSampledDpEvent(c["q"], dp_event.GaussianDpEvent(c["sigma"]))
            plds[key].compose(dp_event.SelfComposedDpEvent(event, c["steps"]))
        row["pld"] = plds[key].get_epsilon(c["delta"])
    out.append(row)
json.dump(out, open(sys.argv[2], "w"))
"""


def venv_ready():
    if not os.path.exists(VENV_PYTHON):
        return "no venv at %s" % VENV_PYTHON
    check = subprocess.run([VENV_PYTHON, "-c", "import opacus.accountants.analysis.rdp, dp_accounting.pld"],
                           capture_output=True, text=True)
    return None if check.returncode == 0 else check.stderr.strip().splitlines()[-1]


def rel(a, b):
    return abs(a - b) / abs(b)


class AccountantsReferenceTest(unittest.TestCase):
    def test_epsilon_table_against_opacus_and_dp_accounting(self):
        problem = venv_ready()
        if problem:
            raise AssertionError("%s: run scripts/setup.sh (it installs opacus and dp-accounting into "
                                 "build/venv)" % problem)
        grid = [(q, s, k, d) for q in RATES for s in SIGMAS for k in STEPS for d in DELTAS]
        with tempfile.TemporaryDirectory() as tmp:
            # The probe and the references run side by side.
            cases, result = os.path.join(tmp, "cases.json"), os.path.join(tmp, "ref.json")
            with open(cases, "w") as f:
                json.dump([{"q": q, "sigma": s, "steps": k, "delta": d} for q, s, k, d in grid], f)
            probe = subprocess.Popen([binary("accountant_probe"), "epsilon"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
            probe.stdin.write("".join("%r %r %d %r\n" % case for case in grid))
            probe.stdin.close()
            subprocess.run([VENV_PYTHON, "-c", REFERENCE, cases, result, repr(PRV_MAX_EPSILON)], check=True,
                           timeout=240)
            ours = [line.split() for line in probe.stdout.read().splitlines()]
            self.assertEqual(probe.wait(timeout=240), 0)
            self.assertEqual(len(ours), len(grid))
            with open(result) as f:
                refs = json.load(f)
        self.report(grid, ours, refs)

    def report(self, grid, ours, refs):
        print("\n|   q   | sigma | steps | delta | RDP (ours) | Opacus RDP | rel. diff | PRV lower | PRV estimate "
              "| PRV upper = eps | dp-accounting PLD | estimate vs PLD | PRV grid | PRV s |")
        print("|" + "---|" * 14)
        worst_rdp = worst_pld = 0.0
        slowest = 0.0
        for (q, s, k, d), row, ref in zip(grid, ours, refs):
            rdp, order = float(row[4]), float(row[5])
            with self.subTest(q=q, sigma=s, steps=k, delta=d):
                self.assertLessEqual(rel(rdp, ref["opacus"]), RDP_TOLERANCE)
                self.assertEqual(order, ref["opacus_order"])
                worst_rdp = max(worst_rdp, rel(rdp, ref["opacus"]))
                cells = ["%g" % q, "%g" % s, "%d" % k, "%g" % d, "%.4f" % rdp, "%.4f" % ref["opacus"],
                         "%.1e" % rel(rdp, ref["opacus"])]
                if ref["pld"] is None:
                    cells += ["-"] * 7
                else:
                    self.assertNotEqual(row[6], "error:", " ".join(row))
                    lower, estimate, upper = (float(x) for x in row[6:9])
                    pld = ref["pld"]
                    # dp-accounting's pessimistic PLD lies within our bounds,
                    # and our estimate within 1 % of it.
                    self.assertLessEqual(lower, pld)
                    self.assertLessEqual(pld, upper)
                    self.assertLessEqual(rel(estimate, pld), PLD_TOLERANCE)
                    worst_pld = max(worst_pld, rel(estimate, pld))
                    if k == 10000:
                        slowest = max(slowest, float(row[10]))
                    cells += ["%.4f" % lower, "%.4f" % estimate, "%.4f" % upper, "%.4f" % pld,
                              "%.1e" % rel(estimate, pld), row[9], row[10]]
                print("| " + " | ".join(cells) + " |")
        print("largest relative difference: RDP vs Opacus %.1e, PRV estimate vs dp-accounting %.1e" %
              (worst_rdp, worst_pld))
        print("slowest PRV epsilon at 10,000 steps: %.3f s" % slowest)

    def test_calibration_time(self):
        """A preflight calibrates sigma for a target epsilon; the probe prints
        the time (the PRV accountant's bisection at 10,000 steps)."""
        for kind in ("rdp", "prv"):
            out = subprocess.run([binary("accountant_probe"), "calibrate", kind, "0.01", "10000", "1e-5", "4"],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)
            sigma, eps, seconds = (float(x) for x in out.stdout.split())
            print("\ncalibrate %s q 0.01, 10000 steps, delta 1e-5, target 4: sigma %.4f, epsilon %.4f, %.2f s" %
                  (kind, sigma, eps, seconds))
            self.assertLessEqual(eps, 4.0)
            self.assertGreater(eps, 3.96)


if __name__ == "__main__":
    unittest.main()
