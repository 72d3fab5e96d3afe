"""NSS_WITH_NCCL / NSS_WITH_CUDA at configure time, against the libtorch of the
build under test: OFF forbids the GPU pieces, ON forces them (a clear error
when what they need is missing), AUTO builds what was found. Configure only
(no compilation), in scratch build directories."""
import os
import re
import subprocess
import unittest

import nss_e2e

BUILD = os.environ["NSS_BUILD_DIR"]
HAVE_NCCL = os.environ["NSS_HAVE_NCCL"] == "ON"
TORCH_HAS_CUDA = os.environ["NSS_TORCH_HAS_CUDA"] == "ON"


def cached(name):
    """A value from the build's CMakeCache.txt ('' when absent)."""
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(r"%s:[A-Z]+=(.*)$" % re.escape(name), line.strip())
            if m:
                return m.group(1)
    return ""


def configure(*options):
    """Configures the source tree in a scratch directory with the build's libtorch."""
    out = nss_e2e.scratch("cmake")
    args = ["cmake", "-S", nss_e2e.SOURCE, "-B", out, "-G", "Ninja", "-DNSS_BUILD_TESTS=OFF"]
    for name in ("CMAKE_PREFIX_PATH", "Torch_DIR"):
        if cached(name):
            args.append("-D%s=%s" % (name, cached(name)))
    env = dict(os.environ)
    # A CUDA libtorch's CMake files enable the CUDA language (nvcc), as in
    # scripts/build_torch2.sh.
    if os.path.exists("/usr/local/cuda/bin/nvcc"):
        env["PATH"] = "/usr/local/cuda/bin:" + env["PATH"]
    try:
        return subprocess.run(args + list(options), capture_output=True, text=True, env=env,
                              timeout=300)
    finally:
        nss_e2e.remove(out)


def found(result):
    """The 'nss_hpc: X ON/OFF' lines of a configure run, as {X: 'ON'/'OFF'}."""
    lines = re.findall(r"-- nss_hpc: (.*) (ON|OFF)\b", result.stdout)
    return {what.split(" (")[0]: state for what, state in lines}


class GpuBuildOptions(unittest.TestCase):
    def test_off_forbids_every_gpu_piece(self):
        r = configure("-DNSS_WITH_NCCL=OFF", "-DNSS_WITH_CUDA=OFF")
        self.assertEqual(r.returncode, 0, r.stderr)
        f = found(r)
        self.assertEqual(f.get("NCCL communicator"), "OFF", r.stdout)
        self.assertEqual(f.get("CUDA runtime for the GPU inventory"), "OFF", r.stdout)
        self.assertEqual(f.get("CUDA device path"), "OFF", r.stdout)

    def test_nccl_on_builds_it_or_says_what_is_missing(self):
        r = configure("-DNSS_WITH_NCCL=ON", "-DNSS_WITH_CUDA=OFF")
        if HAVE_NCCL:
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(found(r).get("NCCL communicator"), "ON", r.stdout)
        else:
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("NSS_WITH_NCCL=ON but nccl.h/libnccl or the CUDA runtime", r.stderr)

    def test_cuda_on_needs_a_cuda_libtorch(self):
        r = configure("-DNSS_WITH_CUDA=ON")
        if TORCH_HAS_CUDA:
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(found(r).get("CUDA device path"), "ON", r.stdout)
        else:
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("has no CUDA", r.stderr)
            self.assertIn("torch.utils.cmake_prefix_path", r.stderr)


if __name__ == "__main__":
    unittest.main()
