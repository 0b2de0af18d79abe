"""Shared fixtures of the mx package's tests: where the repository's test
fixtures and Fashion-MNIST are, and numeric helpers."""
import os

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# tests/fixtures of the repository (MX_FIXTURES_DIR overrides, for a copy elsewhere).
FIXTURES = os.environ.get("MX_FIXTURES_DIR",
                          os.path.join(HERE, os.pardir, os.pardir, "tests", "fixtures"))
FASHION_MNIST = os.environ.get("MX_FASHION_MNIST", "/usr/share/datasets/fashion-mnist")


@pytest.fixture
def fixtures_dir():
    if not os.path.isdir(FIXTURES):
        pytest.skip(f"the repository's tests/fixtures is not at {FIXTURES}")
    return FIXTURES


@pytest.fixture
def fashion_mnist():
    needed = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
              "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
    missing = [n for n in needed if not os.path.exists(os.path.join(FASHION_MNIST, n))]
    if missing:
        pytest.skip(f"Fashion-MNIST is not in {FASHION_MNIST} (missing {', '.join(missing)}; "
                    "Debian's dataset-fashion-mnist package has it)")
    return FASHION_MNIST


def assert_close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)
