"""Every tool that writes a file goes through one output owner
(core/output_location.h): a device node, a FIFO or a directory at the output
path is exit 2 with the same message from every tool and is left exactly as
it was; a missing parent directory is exit 2 (never created); an existing
output of nss_generate and nss_consolidate is never overwritten, while
nss_prepare_data replaces a regular file (a token file is derived from its
inputs); a refused nss_generate --records run leaves no directory behind,
and a tool ended by a signal while it writes leaves no temporary file.
Device nodes are made with mknod in the test's scratch directory, never the
system's /dev/null."""
import glob
import os
import stat
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from nss_e2e import SOURCE, ScratchDirTest, binary, mpirun  # noqa: E402

FIXTURE = sorted(glob.glob(os.path.join(SOURCE, "tests", "fixtures", "formats_*")))[-1]
STEP = os.path.join(FIXTURE, "runs", "full", "checkpoints", "step_00000004")
TEXT = os.path.join(FIXTURE, "data", "text.txt")


def run(*args):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300)


def writers(output):
    """Each tool invocation that writes `output`, by name."""
    return {
        "nss_prepare_data": [binary("nss_prepare_data"), "--input", TEXT, "--output", output],
        "nss_generate": [binary("nss_generate"), "--model", STEP, "--prompt", "Row", "--max-new-tokens", 2,
                         "--output", output],
        "nss_consolidate hdf5": [binary("nss_consolidate"), STEP, "--output", output],
        "nss_consolidate safetensors": [binary("nss_consolidate"), STEP, "--output", output, "--format",
                                        "safetensors"],
        "nss_consolidate hf": [binary("nss_consolidate"), STEP, "--output", output, "--format", "hf"],
    }


class OutputLocationTest(ScratchDirTest):
    SCRATCH_TAG = "output_locations"

    def device_node(self, name):
        path = self.path(name)
        try:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
        except PermissionError:
            self.skipTest("this process may not create device nodes (mknod needs CAP_MKNOD)")
        return path

    def expect_refused(self, args, path, message):
        before = os.lstat(path)
        proc = run(*args)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn(message, proc.stderr)
        after = os.lstat(path)
        self.assertEqual((stat.S_IFMT(before.st_mode), before.st_rdev, before.st_ino),
                         (stat.S_IFMT(after.st_mode), after.st_rdev, after.st_ino))
        self.assertEqual([n for n in os.listdir(self.dir) if ".tmp." in n], [])

    def test_a_device_node_is_refused_by_every_tool_and_left_as_it_was(self):
        node = self.device_node("null")
        for tool, args in writers(node).items():
            with self.subTest(tool=tool):
                self.expect_refused(args, node, "--output %s is a character device" % node)
        records = [binary("nss_generate"), "--model", STEP, "--records", 2, "--output", node]
        self.expect_refused(records, node, "is a character device, not a directory")

    def test_links_are_judged_by_what_they_name(self):
        node = self.device_node("null")
        to_node = self.path("to_null")
        os.symlink(node, to_node)
        dangling = self.path("dangling")
        os.symlink(self.path("nowhere"), dangling)
        for tool, args in writers(to_node).items():
            with self.subTest(tool=tool, link="device"):
                self.expect_refused(args, node, "--output %s is a character device" % to_node)
        for tool, args in writers(dangling).items():
            with self.subTest(tool=tool, link="dangling"):
                self.expect_refused(args, dangling, "is a symbolic link to a path that does not exist")
                self.assertFalse(os.path.exists(self.path("nowhere")))

    def test_a_fifo_is_refused_at_once(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        for tool, args in writers(fifo).items():
            with self.subTest(tool=tool):
                self.expect_refused(args, fifo, "--output %s is a FIFO" % fifo)

    def test_a_directory_is_refused_with_the_same_message(self):
        directory = self.path("folder")
        os.mkdir(directory)
        for tool, args in writers(directory).items():
            with self.subTest(tool=tool):
                # A directory exporter's output must be new like any other.
                message = "already exists (a directory)" if tool.startswith("nss_consolidate") or \
                    tool == "nss_generate" else "is a directory"
                self.expect_refused(args, directory, "--output %s %s" % (directory, message))
                self.assertEqual(os.listdir(directory), [])

    def test_a_missing_parent_is_refused_and_never_created(self):
        output = self.path("missing/sub/out")
        for tool, args in writers(output).items():
            with self.subTest(tool=tool):
                proc = run(*args)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn("No such file or directory", proc.stderr)
                self.assertIn("choose another --output", proc.stderr)
                self.assertFalse(os.path.exists(self.path("missing")))

    def test_a_token_file_on_a_full_disk_or_past_the_size_limit_is_exit_2_and_leaves_nothing(self):
        import resource
        limited = self.path("limited")
        os.mkdir(limited)
        proc = subprocess.run([binary("nss_prepare_data"), "--input", TEXT, "--output",
                               os.path.join(limited, "t.h5")], capture_output=True, text=True, timeout=120,
                              preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384)))
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("File too large", proc.stderr)
        self.assertEqual(os.listdir(limited), [])
        full = self.path("full")
        os.mkdir(full)
        if os.geteuid() != 0:
            self.skipTest("mounting a small tmpfs needs root")
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24k", "tmpfs", full], capture_output=True).returncode:
            self.skipTest("this machine does not allow mounting a tmpfs")
        self.addCleanup(subprocess.run, ["umount", full])
        proc = run(binary("nss_prepare_data"), "--input", TEXT, "--output", os.path.join(full, "t.h5"))
        self.assertEqual(proc.returncode, 2, proc.stderr)  # was exit 4, then a crash in HDF5's exit handler
        self.assertIn("No space left on device", proc.stderr)
        self.assertIn("choose another --output", proc.stderr)
        self.assertEqual(os.listdir(full), [])

    def test_a_signal_while_writing_leaves_no_temporary_file(self):
        import signal
        import time
        text = self.path("big.txt")
        with open(text, "w") as f:
            f.write("alpha beta gamma delta, row and column\n" * 600000)  # 23 MB: about a second of writing
        out_dir = self.path("signalled")
        os.mkdir(out_dir)
        proc = subprocess.Popen([binary("nss_prepare_data"), "--input", text, "--output",
                                 os.path.join(out_dir, "t.h5")], stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not os.listdir(out_dir) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        self.assertIsNone(proc.poll(), "the token file was written before the test saw its temporary file")
        self.assertIn(".tmp.", os.listdir(out_dir)[0])
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, -signal.SIGTERM)  # ended by the signal, as before
        self.assertEqual(os.listdir(out_dir), [])  # was: t.h5.tmp.<pid> left behind

    def test_an_existing_result_is_never_overwritten_but_a_token_file_is_replaced(self):
        for tool, args in writers(self.path("existing")).items():
            with self.subTest(tool=tool):
                with open(self.path("existing"), "w") as f:
                    f.write("keep me\n")
                proc = run(*args)
                if tool == "nss_prepare_data":
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    with open(self.path("existing"), "rb") as f:
                        self.assertEqual(f.read(8), b"\x89HDF\r\n\x1a\n")
                else:
                    self.assertEqual(proc.returncode, 2, proc.stderr)
                    self.assertIn("--output %s already exists" % self.path("existing"), proc.stderr)
                    with open(self.path("existing")) as f:
                        self.assertEqual(f.read(), "keep me\n")
                os.remove(self.path("existing"))

    def test_records_replace_a_stopped_run_but_never_a_complete_one(self):
        import json
        records = self.path("records")
        os.mkdir(records)
        args = [binary("nss_generate"), "--model", STEP, "--records", 2, "--output", records, "--max-new-tokens", 4,
                "--constrain", "none"]
        for complete in (True, False):
            with self.subTest(complete=complete):
                with open(os.path.join(records, "generation.json"), "w") as f:
                    json.dump({"complete": complete, "valid_records": 99}, f)
                with open(os.path.join(records, "synthetic.csv"), "w") as f:
                    f.write("earlier\n")
                proc = run(*args)
                with open(os.path.join(records, "generation.json")) as f:
                    summary = json.load(f)
                if complete:
                    self.assertEqual(proc.returncode, 2, proc.stderr)
                    self.assertIn("already holds synthetic.csv, generation.json", proc.stderr)
                    self.assertEqual(summary["valid_records"], 99)
                else:  # the barely trained step stops early, its files written
                    self.assertEqual(proc.returncode, 4, proc.stderr)
                    self.assertEqual(summary["records_wanted"], 2)

    def test_records_refused_for_a_text_step_leave_no_directory(self):
        run_dir = self.path("text_run")
        data = self.path("text.h5")
        self.assertEqual(run(binary("nss_prepare_data"), "--input", TEXT, "--output", data).returncode, 0)
        trained = mpirun(1, [binary("nss_hpc"), os.path.join(SOURCE, "configs", "run.yaml"), "--set",
                             "run.output_dir=" + run_dir, "--set", "data.path=" + data, "--set",
                             "data.seq_len=32", "--set", "eval.interval_steps=0", "--set", "training.max_steps=1",
                             "--set", "preflight.enabled=false", "--set", "model.num_hidden_layers=1"])
        self.assertEqual(trained.returncode, 0, trained.stderr)
        records = self.path("records")
        proc = run(binary("nss_generate"), "--model", os.path.join(run_dir, "checkpoints", "step_00000001"),
                   "--records", 2, "--output", records)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("records", proc.stderr)
        self.assertFalse(os.path.exists(records), os.listdir(records) if os.path.isdir(records) else "")


if __name__ == "__main__":
    unittest.main()
