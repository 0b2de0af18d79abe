"""mx.io: libmx's iterators with MXNet's parameter names (MNISTIter on
Fashion-MNIST, CSVIter, ImageRecordIter against MXNet's batches) and
NDArrayIter."""
import os

import numpy as np
import pytest

import mx
from conftest import assert_close


def test_iterators_are_generated():
    for name in ("MNISTIter", "ImageRecordIter", "CSVIter"):
        assert callable(getattr(mx.io, name))
        assert "batch_size" in getattr(mx.io, name).__doc__


def test_mnist_iter_on_fashion_mnist(fashion_mnist):
    it = mx.io.MNISTIter(image=os.path.join(fashion_mnist, "t10k-images-idx3-ubyte.gz"),
                         label=os.path.join(fashion_mnist, "t10k-labels-idx1-ubyte.gz"),
                         batch_size=128, shuffle=False, flat=True, silent=True)
    assert it.provide_data[0].name == "data" and it.provide_data[0].shape == (128, 784)
    assert it.provide_label[0].name == "softmax_label" and it.provide_label[0].shape == (128,)
    batches = 0
    first_label = None
    for batch in it:
        assert batch.data[0].shape == (128, 784) and batch.label[0].shape == (128,)
        if first_label is None:
            first_label = batch.label[0].asnumpy().copy()
            x = batch.data[0].asnumpy()
            assert 0 <= x.min() and x.max() < 1
        batches += 1
    assert batches == 79  # 10000 images, the last batch padded
    assert batch.pad == 79 * 128 - 10000
    assert set(np.unique(first_label)) <= set(range(10))
    it.reset()
    again = it.next()
    np.testing.assert_array_equal(again.label[0].asnumpy(), first_label)
    images = mx.io.MNISTIter(image=os.path.join(fashion_mnist, "t10k-images-idx3-ubyte.gz"),
                             label=os.path.join(fashion_mnist, "t10k-labels-idx1-ubyte.gz"),
                             batch_size=10, silent=True)
    assert images.next().data[0].shape == (10, 1, 28, 28)


def test_csv_iter(tmp_path):
    data = np.arange(30, dtype=np.float32).reshape(10, 3)
    labels = np.arange(10, dtype=np.float32)
    np.savetxt(tmp_path / "d.csv", data, delimiter=",")
    np.savetxt(tmp_path / "l.csv", labels, delimiter=",")
    it = mx.io.CSVIter(data_csv=str(tmp_path / "d.csv"), data_shape=(3,),
                       label_csv=str(tmp_path / "l.csv"), batch_size=4)
    got = [(b.data[0].asnumpy().copy(), b.label[0].asnumpy().copy(), b.pad) for b in it]
    assert len(got) == 3 and got[-1][2] == 2
    assert_close(got[0][0], data[:4])
    assert_close(got[2][1][:2], labels[8:])
    assert_close(got[2][0][2:], data[:2])  # round_batch: the last batch wraps around
    it.reset()
    assert_close(it.next().data[0].asnumpy(), data[:4])


def test_image_record_iter_matches_mxnet(fixtures_dir):
    rec_dir = os.path.join(fixtures_dir, "recordio")
    expected = mx.nd.load(os.path.join(rec_dir, "iter_batches.params"))
    for name, extra in [("plain", {}), ("resize", {"resize": 10})]:
        it = mx.io.ImageRecordIter(path_imgrec=os.path.join(rec_dir, "im2rec_png.rec"),
                                   data_shape=(3, 8, 8), batch_size=6, preprocess_threads=1,
                                   mean_r=100, std_g=2, scale=0.5, **extra)
        batch = it.next()
        assert batch.pad == 0
        assert_close(batch.data[0].asnumpy(), expected[name + "_data"].asnumpy(), atol=1e-4)
        assert_close(batch.label[0].asnumpy(), expected[name + "_label"].asnumpy())


def test_iterator_errors(tmp_path):
    with pytest.raises(mx.MXNetError, match="missing.csv"):
        mx.io.CSVIter(data_csv=str(tmp_path / "missing.csv"), data_shape=(3,), batch_size=2)
    with pytest.raises(mx.MXNetError, match="batch_size"):
        mx.io.CSVIter(data_csv=str(tmp_path / "x.csv"), data_shape=(3,))


def test_ndarray_iter():
    data = np.arange(20, dtype=np.float32).reshape(10, 2)
    label = np.arange(10)
    it = mx.io.NDArrayIter(data, label, batch_size=4, shuffle=False)
    assert it.provide_data[0].shape == (4, 2) and it.provide_label[0].name == "softmax_label"
    batches = list(it)
    assert len(batches) == 3 and batches[-1].pad == 2
    assert_close(batches[1].data[0].asnumpy(), data[4:8])
    assert batches[0].label[0].dtype == np.float32
    it = mx.io.NDArrayIter({"x": data}, batch_size=5, last_batch_handle="discard", shuffle=True)
    seen = np.concatenate([b.data[0].asnumpy()[:, 0] for b in it])
    assert sorted(seen.tolist()) == data[:, 0].tolist()
    it.reset()
    assert len(list(it)) == 2
