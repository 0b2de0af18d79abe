#!/usr/bin/env python3
"""The GPU benchmark driver's host side, without a GPU: argument parsing, the
summary table, and the clear failure when no GPU is found (ctest:
test_gpu_bench_driver)."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_vs_pytorch as bench  # noqa: E402


class ParseArgs(unittest.TestCase):
    def test_defaults(self):
        a = bench.parse_args(["--python", "py"])
        self.assertEqual(a.rows, bench.ROWS)
        self.assertEqual(a.repeats, 3)
        self.assertFalse(a.quick)
        self.assertEqual(bench.command_line(a), "scripts/bench/gpu_vs_pytorch.sh PYTHON")

    def test_rows_and_command(self):
        a = bench.parse_args(["--python", "py", "--rows", "resnet50-infer", "--quick", "--repeats", "5"])
        self.assertEqual(a.rows, ["resnet50-infer"])
        self.assertEqual(bench.command_line(a),
                         "scripts/bench/gpu_vs_pytorch.sh PYTHON --quick --repeats 5 --rows resnet50-infer")

    def test_precision(self):
        a = bench.parse_args(["--python", "py", "--precision", "bfloat16", "--rows",
                              "resnet50-train,resnet18-train"])
        self.assertEqual(a.precision, "bfloat16")
        self.assertIn("--precision bfloat16", bench.command_line(a))
        text = bench.summary([], "GPU", "2.5.0", "cmd", "now", precision="bfloat16")
        self.assertIn("bfloat16 mixed precision (mx train.precision, PyTorch torch.autocast)", text)
        self.assertIn("float32 (TF32 off)", bench.summary([], "GPU", "2.5.0", "cmd", "now"))

    def test_errors(self):
        for argv in [["--python", "py", "--rows", "vgg"], ["--python", "py", "--repeats", "0"], [],
                     ["--python", "py", "--precision", "float16"],  # the inference rows are float32
                     ["--python", "py", "--precision", "int8"]]:
            with self.assertRaises(SystemExit) as e, open(os.devnull, "w") as null:
                stderr, sys.stderr = sys.stderr, null
                try:
                    bench.parse_args(argv)
                finally:
                    sys.stderr = stderr
            self.assertEqual(e.exception.code, 2)


class Summary(unittest.TestCase):
    def test_ratio_is_speed_for_both_kinds(self):
        faster = bench.Row("train", "images/s", [300, 320, 310], [200, 210, 190], True)
        self.assertAlmostEqual(faster.ratio(), 310 / 200)
        slower_latency = bench.Row("latency", "ms", [4.0, 5.0, 6.0], [2.0, 2.5, 3.0], False)
        self.assertAlmostEqual(slower_latency.ratio(), 0.5)

    def test_table(self):
        rows = [bench.Row("ResNet-50 train, batch 64", "images/s", [300.0, 320.0, 310.0], [200.0, 210.0, 190.0],
                          True),
                bench.Row("ResNet-50 inference, batch 1 latency", "ms", [4.0, 5.0, 6.0], [2.0, 2.5, 3.0], False)]
        text = bench.summary(rows, "NVIDIA H100 80GB HBM3", "2.5.0", "scripts/bench/gpu_vs_pytorch.sh PYTHON",
                             "2026-01-01 00:00 UTC")
        self.assertIn("GPU: NVIDIA H100 80GB HBM3; PyTorch 2.5.0", text)
        self.assertIn("| ResNet-50 train, batch 64 | images/s | 310.0 (300.0–320.0) | 200.0 (190.0–210.0) | 1.55× |",
                      text)
        self.assertIn("| ResNet-50 inference, batch 1 latency | ms | 5.00 (4.00–6.00) | 2.50 (2.00–3.00) | 0.50× |",
                      text)

    def test_numbers_from_program_output(self):
        text = "pytorch 2.5.0 on X\nlatency at batch 1: 3.250 ms\nthroughput at batch 64: 1234.5 samples/s\n"
        self.assertEqual(bench.number(text, "latency at batch 1:", "ms"), 3.25)
        self.assertEqual(bench.number(text, "throughput at batch 64:", "samples/s"), 1234.5)
        with self.assertRaises(RuntimeError):
            bench.number(text, "throughput at batch 32:", "samples/s")
        # The peer's training line has no prefix: "N samples/s".
        self.assertEqual(bench.number("pytorch 2.5.0 on X\n812.3 samples/s\n", "", "samples/s"), 812.3)


class NoGpu(unittest.TestCase):
    def test_gpu_name_from_nvidia_smi(self):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "nvidia-smi")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3'\necho 'NVIDIA H100 80GB HBM3'\n")
            os.chmod(fake, 0o755)
            self.assertEqual(bench.gpu_name(fake), "NVIDIA H100 80GB HBM3")

    def test_fails_clearly_before_running_anything(self):
        for smi in ["/bin/false", "/nonexistent/nvidia-smi"]:
            proc = subprocess.run([sys.executable, bench.__file__, "--python", "/nonexistent/python",
                                   "--build", "/nonexistent/build", "--nvidia-smi", smi],
                                  capture_output=True, text=True)
            self.assertEqual(proc.returncode, 1)
            self.assertEqual(proc.stdout, "")
            self.assertIn("no GPU found", proc.stderr)
            self.assertEqual(len(proc.stderr.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
