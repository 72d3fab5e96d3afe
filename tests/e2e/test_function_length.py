"""No function in lib/ or apps/ is longer than 80 lines, as lizard (PyPI, in
the venv scripts/setup.sh makes) measures them: C++ sources, headers and the
CUDA kernels."""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from nss_e2e import SOURCE, VENV_PYTHON  # noqa: E402

MAX_LINES = 80
EXTENSIONS = (".cpp", ".h", ".cu", ".cuh")


def sources():
    found = []
    for top in ("lib", "apps"):
        for root, _, files in os.walk(os.path.join(SOURCE, top)):
            found += [os.path.join(root, f) for f in files if f.endswith(EXTENSIONS)]
    return sorted(found)


class FunctionLengthTest(unittest.TestCase):
    def test_no_function_is_longer_than_80_lines(self):
        files = sources()
        self.assertGreater(len(files), 300, "lib/ and apps/ sources not found under %s" % SOURCE)
        # Only the length is judged: complexity, arguments and tokens unbounded.
        proc = subprocess.run([VENV_PYTHON, "-m", "lizard", "--length", str(MAX_LINES), "--CCN", "100000",
                               "--arguments", "100000", "--warnings_only"] + files,
                              capture_output=True, text=True, timeout=300)
        self.assertNotIn("No module named lizard", proc.stderr,
                         "lizard is missing from the venv: run scripts/setup.sh")
        self.assertEqual(proc.stdout.strip(), "",
                         "functions longer than %d lines (split them):\n%s" % (MAX_LINES, proc.stdout))
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_the_measure_catches_a_long_function(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
            f.write("int long_one() {\n" + "  int x = 0;\n" * (MAX_LINES + 1) + "  return 0;\n}\n")
        self.addCleanup(os.remove, f.name)
        proc = subprocess.run([VENV_PYTHON, "-m", "lizard", "--length", str(MAX_LINES), "--CCN", "100000",
                               "--arguments", "100000", "--warnings_only", f.name],
                              capture_output=True, text=True, timeout=60)
        self.assertIn("long_one", proc.stdout)


if __name__ == "__main__":
    unittest.main()
