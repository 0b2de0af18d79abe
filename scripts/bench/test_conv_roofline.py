#!/usr/bin/env python3
"""The roofline script's arithmetic on hand-made oneDNN verbose lines: the
floor of each kind of convolution, which lines count, and the grouping
(ctest: test_conv_roofline)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conv_roofline as roofline  # noqa: E402


def exec_line(primitive, implementation, problem, ms):
    return f"onednn_verbose,exec,cpu,{primitive},{implementation},forward_inference,fmt,attr,alg,{problem},{ms}"


CONV_1X1 = "mb2_ic64oc32_ih8oh8kh1sh1dh0ph0_iw8ow8kw1sw1dw0pw0"
CONV_3X3 = "mb2_ic16oc16_ih8oh8kh3sh1dh0ph1_iw8ow8kw3sw1dw0pw1"
CONV_STEM = "mb2_ic3oc16_ih16oh8kh7sh2dh0ph3_iw16ow8kw7sw2dw0pw3"


class Floor(unittest.TestCase):
    def test_taps_leave_out_the_padding(self):
        self.assertEqual(roofline.taps(8, 8, 1, 1, 0), 8)
        # 3 taps at 8 positions, the first and last each lose one to the padding.
        self.assertEqual(roofline.taps(8, 8, 3, 1, 1), 22)
        self.assertEqual(roofline.taps(16, 8, 7, 2, 3), sum(
            1 for o in range(8) for k in range(7) if 0 <= 2 * o + k - 3 < 16))

    def test_convolutions(self):
        flops, weight_bytes = roofline.convolution_floor(CONV_1X1)
        self.assertEqual(flops, 2 * 2 * 64 * 32 * 8 * 8)
        self.assertEqual(weight_bytes, 4 * 64 * 32)
        # Stride-1 3x3: Winograd F(4x4, 3x3), 36 products per 4x4 tile.
        flops, weight_bytes = roofline.convolution_floor(CONV_3X3)
        self.assertEqual(flops, 2 * 2 * 16 * 16 * 2 * 2 * 36)
        self.assertEqual(weight_bytes, 4 * 16 * 16 * 9)
        flops, _ = roofline.convolution_floor(CONV_STEM)
        self.assertEqual(flops, 2 * 2 * 3 * 16 * roofline.taps(16, 8, 7, 2, 3) ** 2)

    def test_groups(self):
        grouped = "mb1_g4ic16oc16_ih8oh4kh3sh2dh0ph1_iw8ow4kw3sw2dw0pw1"
        flops, weight_bytes = roofline.convolution_floor(grouped)
        self.assertEqual(flops, 2 * 4 * 16 * roofline.taps(8, 4, 3, 2, 1) ** 2)
        self.assertEqual(weight_bytes, 4 * 4 * 16 * 9)


class Analyse(unittest.TestCase):
    def log(self):
        lines = [exec_line("reorder", "jit:blk", "32x64x1x1", 0.5)]  # weights, once
        for _ in range(3):
            lines += [exec_line("convolution", "jit_1x1:avx512_core", CONV_1X1, 1.0),
                      exec_line("convolution", "jit_wino_4x3:avx512_core", CONV_3X3, 0.2),
                      exec_line("batch_normalization", "bnorm_jit:avx512_core", "mb2ic32ih8iw8", 0.1),
                      exec_line("reorder", "jit:uni", "2x32x8x8", 0.05),
                      exec_line("inner_product", "brgemm:avx512_core", "mb2ic2048oc10", 0.01),
                      exec_line("convolution", "jit_1x1:avx512_core", CONV_1X1.replace("mb2", "mb1"), 9.0)]
        return "\n".join(["not a verbose line"] + lines)

    def test_groups_runs_and_floors(self):
        measured, floor, executions = roofline.analyse(self.log(), batch=2, peak_gflops=1.0, bandwidth_gbs=1.0)
        self.assertEqual(executions, 3)
        self.assertAlmostEqual(measured["convolution, 1x1"], 1.0)  # the batch-1 lines are left out
        self.assertAlmostEqual(measured["convolution, Winograd"], 0.2)
        self.assertAlmostEqual(measured["reorder"], 0.05)  # the one-time weight reorder is left out
        # At 1 GFLOP/s, FLOPs / 1e6 are milliseconds; bandwidth at 1 GB/s, bytes / 1e6.
        self.assertAlmostEqual(floor["convolution, 1x1"], 2 * 2 * 64 * 32 * 64 / 1e6)
        self.assertAlmostEqual(floor["batch_normalization"], 0.1)  # memory-bound: as measured
        # The classifier is bound by reading its weights: 4 * 2048 * 10 bytes.
        self.assertAlmostEqual(floor["inner_product"], 4 * 2048 * 10 / 1e6)

    def test_no_convolution_at_the_batch(self):
        with self.assertRaises(SystemExit):
            roofline.analyse(self.log(), batch=4, peak_gflops=1.0, bandwidth_gbs=1.0)


class Outputs(unittest.TestCase):
    def test_figures_of_a_run(self):
        out = ("latency at batch 1: 39.500 ms\n"
               "throughput at batch 16: 30.8 samples/s (519.100 ms per batch, mean of 10 runs)\n")
        self.assertEqual(roofline.ms_per_batch(out, 1), 39.5)
        self.assertEqual(roofline.ms_per_batch(out, 16), 519.1)
        self.assertIsNone(roofline.ms_per_batch(out, 8))


if __name__ == "__main__":
    unittest.main()
