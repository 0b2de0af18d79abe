"""mx.io: data iterators. The iterators of libmx (MNISTIter,
ImageRecordIter, CSVIter, SyntheticIter, with MXNet's parameter names) are
generated at import from the C API's listing; NDArrayIter iterates arrays
held in memory. Each yields DataBatch objects with .data and .label lists."""
from __future__ import annotations

import ctypes
from collections import namedtuple
from typing import Dict, List, Optional

import numpy as np

from .base import (_LIB, DataIterHandle, MXNetError, NDArrayHandle, c_str_array, check_call,
                   mx_uint, py_str, py_str_list)
from .ndarray import NDArray, array
from .op_info import param_str

__all__ = ["DataDesc", "DataBatch", "DataIter", "MXDataIter", "NDArrayIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """The name, shape (and type, layout) of one input of a batch."""

    def __new__(cls, name: str, shape, dtype=np.float32, layout: str = "NCHW"):
        desc = super().__new__(cls, name, tuple(shape))
        desc.dtype = np.dtype(dtype).type
        desc.layout = layout
        return desc

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"


class DataBatch:
    """One batch: lists of arrays, and how many examples at the end only pad it."""

    def __init__(self, data: List[NDArray], label: Optional[List[NDArray]] = None,
                 pad: int = 0, index=None, provide_data=None, provide_label=None):
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __repr__(self) -> str:
        shapes = [d.shape for d in self.data]
        labels = [lab.shape for lab in self.label] if self.label else []
        return f"DataBatch: data shapes: {shapes} label shapes: {labels}"


class DataIter:
    """The iterator protocol of MXNet's DataIter: reset(), next(), and
    Python iteration over one epoch."""

    def __init__(self, batch_size: int = 0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def __next__(self) -> DataBatch:
        return self.next()

    def reset(self) -> None:
        pass

    def next(self) -> DataBatch:
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def iter_next(self) -> bool:
        raise NotImplementedError

    def getdata(self):
        raise NotImplementedError

    def getlabel(self):
        raise NotImplementedError

    def getindex(self):
        return None

    def getpad(self) -> int:
        return 0


class MXDataIter(DataIter):
    """An iterator of libmx. A batch's arrays are the iterator's own: the
    next batch may reuse their memory, so copy what must outlive it."""

    def __init__(self, handle: DataIterHandle, data_name: str = "data",
                 label_name: str = "softmax_label"):
        super().__init__()
        self.handle = handle
        self.data_name, self.label_name = data_name, label_name
        self._pending: Optional[DataBatch] = None  # a batch read ahead by provide_data
        self._descs = None

    def __del__(self):
        if getattr(self, "handle", None) is not None and _LIB is not None:
            _LIB.MXDataIterFree(self.handle)
            self.handle = None

    def reset(self) -> None:
        self._pending = None
        check_call(_LIB.MXDataIterBeforeFirst(self.handle))

    def iter_next(self) -> bool:
        out = ctypes.c_int()
        check_call(_LIB.MXDataIterNext(self.handle, ctypes.byref(out)))
        return bool(out.value)

    def _array(self, fn) -> NDArray:
        handle = NDArrayHandle()
        check_call(fn(self.handle, ctypes.byref(handle)))
        return NDArray(handle)

    def getdata(self) -> List[NDArray]:
        return [self._array(_LIB.MXDataIterGetData)]

    def getlabel(self) -> List[NDArray]:
        return [self._array(_LIB.MXDataIterGetLabel)]

    def getpad(self) -> int:
        pad = ctypes.c_int()
        check_call(_LIB.MXDataIterGetPadNum(self.handle, ctypes.byref(pad)))
        return pad.value

    def getindex(self) -> np.ndarray:
        index = ctypes.POINTER(ctypes.c_uint64)()
        size = ctypes.c_uint64()
        check_call(_LIB.MXDataIterGetIndex(self.handle, ctypes.byref(index), ctypes.byref(size)))
        return np.array([index[i] for i in range(size.value)], dtype=np.uint64)

    def next(self) -> DataBatch:
        if self._pending is not None:
            batch, self._pending = self._pending, None
            return batch
        batch = super().next()
        if self._descs is None:
            self._remember(batch)
        batch.provide_data, batch.provide_label = self._descs
        return batch

    def _remember(self, batch: DataBatch) -> None:
        self.batch_size = batch.data[0].shape[0]
        self._descs = ([DataDesc(self.data_name, batch.data[0].shape, batch.data[0].dtype)],
                       [DataDesc(self.label_name, batch.label[0].shape, batch.label[0].dtype)])

    def _describe(self):
        if self._descs is None:  # read the first batch ahead; next() returns it
            self._pending = self.next()
        return self._descs

    @property
    def provide_data(self) -> List[DataDesc]:
        return self._describe()[0]

    @property
    def provide_label(self) -> List[DataDesc]:
        return self._describe()[1]


def _list_iterators() -> Dict[str, tuple]:
    size = mx_uint()
    creators = ctypes.POINTER(ctypes.c_void_p)()
    check_call(_LIB.MXListDataIters(ctypes.byref(size), ctypes.byref(creators)))
    result = {}
    for i in range(size.value):
        creator = ctypes.c_void_p(creators[i])
        name, desc = ctypes.c_char_p(), ctypes.c_char_p()
        num = mx_uint()
        names = ctypes.POINTER(ctypes.c_char_p)()
        types = ctypes.POINTER(ctypes.c_char_p)()
        descs = ctypes.POINTER(ctypes.c_char_p)()
        check_call(_LIB.MXDataIterGetIterInfo(creator, ctypes.byref(name), ctypes.byref(desc),
                                              ctypes.byref(num), ctypes.byref(names),
                                              ctypes.byref(types), ctypes.byref(descs)))
        params = list(zip(py_str_list(num.value, names), py_str_list(num.value, types),
                          py_str_list(num.value, descs)))
        result[py_str(name.value)] = (creator, py_str(desc.value or b""), params)
    return result


def _make_iterator(name: str, creator, description: str, params) -> type:
    def create(**kwargs) -> MXDataIter:
        data_name = kwargs.pop("data_name", "data")
        label_name = kwargs.pop("label_name", "softmax_label")
        items = {k: param_str(v) for k, v in kwargs.items() if v is not None}
        handle = DataIterHandle()
        check_call(_LIB.MXDataIterCreateIter(creator, mx_uint(len(items)),
                                             c_str_array(list(items)),
                                             c_str_array(list(items.values())),
                                             ctypes.byref(handle)))
        return MXDataIter(handle, data_name, label_name)

    lines = [description.strip() or name, "", "Parameters", "----------"]
    for pname, ptype, pdesc in params:
        lines += [f"{pname} : {ptype}", f"    {pdesc}"]
    lines += ["data_name, label_name : str, optional",
              "    The names in provide_data / provide_label ('data', 'softmax_label')."]
    create.__name__ = create.__qualname__ = name
    create.__doc__ = "\n".join(lines)
    create.__module__ = "mx.io"
    return create


for _name, (_creator, _desc, _params) in _list_iterators().items():
    globals()[_name] = _make_iterator(_name, _creator, _desc, _params)
    __all__.append(_name)


class NDArrayIter(DataIter):
    """Batches of arrays held in memory (numpy arrays or NDArrays; a list or
    dict of them for several inputs), as MXNet's NDArrayIter. last_batch_handle:
    'pad' (fill the last batch from the start, .pad says how many) or
    'discard'."""

    def __init__(self, data, label=None, batch_size: int = 1, shuffle: bool = False,
                 last_batch_handle: str = "pad", data_name: str = "data",
                 label_name: str = "softmax_label"):
        super().__init__(batch_size)
        if last_batch_handle not in ("pad", "discard"):
            raise MXNetError(f"NDArrayIter: last_batch_handle '{last_batch_handle}' is not "
                             "supported ('pad' or 'discard')")
        self.data = self._named(data, data_name)
        self.label = self._named(label, label_name) if label is not None else []
        self.num_data = self.data[0][1].shape[0]
        for name, a in self.data + self.label:
            if a.shape[0] != self.num_data:
                raise MXNetError(f"NDArrayIter: '{name}' has {a.shape[0]} rows, "
                                 f"'{self.data[0][0]}' has {self.num_data}")
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.cursor = -batch_size
        self._order = np.arange(self.num_data)
        self.reset()

    @staticmethod
    def _named(values, default_name: str):
        if isinstance(values, dict):
            items = list(values.items())
        elif isinstance(values, (list, tuple)):
            items = [(f"_{i}_{default_name}" if len(values) > 1 else default_name, v)
                     for i, v in enumerate(values)]
        else:
            items = [(default_name, values)]
        # As MXNet: NDArrays keep their type, anything else becomes float32.
        return [(n, v.asnumpy() if isinstance(v, NDArray) else np.asarray(v, dtype=np.float32))
                for n, v in items]

    @property
    def provide_data(self) -> List[DataDesc]:
        return [DataDesc(n, (self.batch_size,) + a.shape[1:], a.dtype) for n, a in self.data]

    @property
    def provide_label(self) -> List[DataDesc]:
        return [DataDesc(n, (self.batch_size,) + a.shape[1:], a.dtype) for n, a in self.label]

    def reset(self) -> None:
        if self.shuffle:
            np.random.shuffle(self._order)
        self.cursor = -self.batch_size

    def iter_next(self) -> bool:
        self.cursor += self.batch_size
        if self.last_batch_handle == "discard":
            return self.cursor + self.batch_size <= self.num_data
        return self.cursor < self.num_data

    def _batch(self, arrays) -> List[NDArray]:
        idx = np.arange(self.cursor, self.cursor + self.batch_size) % self.num_data
        return [array(a[self._order[idx]], dtype=a.dtype) for _, a in arrays]

    def getdata(self) -> List[NDArray]:
        return self._batch(self.data)

    def getlabel(self) -> List[NDArray]:
        return self._batch(self.label)

    def getpad(self) -> int:
        return max(0, self.cursor + self.batch_size - self.num_data)

    def getindex(self) -> np.ndarray:
        idx = np.arange(self.cursor, self.cursor + self.batch_size) % self.num_data
        return self._order[idx]
