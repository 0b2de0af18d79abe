"""mx.kv: key-value stores for parameters (MXNet's KVStore): 'local' and
'device' in this process, 'dist_sync' / 'dist_async' as a worker of a job
started by mpirun with mx-serve-ps servers."""
from __future__ import annotations

import ctypes
from typing import Dict, List, Union

from .base import (_LIB, KVStoreHandle, MXNetError, c_array, c_handle_array, c_str, c_str_array,
                   check_call, mx_uint, py_str)
from .ndarray import NDArray

__all__ = ["KVStore", "create"]

Key = Union[int, str]
_STR_KEY_BASE = 1 << 30


class KVStore:
    """Keys are ints or strs. str keys are numbered in the order this store
    first sees them (the C API takes ints), so in a dist job every worker
    must init its keys in the same order, as MXNet requires anyway."""

    def __init__(self, handle: KVStoreHandle):
        self.handle = handle
        self._str_keys: Dict[str, int] = {}
        self._optimizer = None

    def __del__(self):
        self.close()

    def close(self) -> None:
        """Frees the store; a dist store meets the other workers and, once
        all are done, stops the servers."""
        if getattr(self, "handle", None) is not None and _LIB is not None:
            check_call(_LIB.MXKVStoreFree(self.handle))
            self.handle = None

    def __enter__(self) -> "KVStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- keys and values ---------------------------------------------------
    def _int_key(self, key: Key, create: bool) -> int:
        if isinstance(key, int):
            return key
        if isinstance(key, str):
            if key not in self._str_keys:
                if not create:
                    raise MXNetError(f"KVStore: key '{key}' was not initialized")
                # Above the int keys a program uses (non-negative: servers are chosen by key).
                self._str_keys[key] = _STR_KEY_BASE + len(self._str_keys)
            return self._str_keys[key]
        raise TypeError(f"KVStore keys are int or str, not {type(key).__name__}")

    def _pairs(self, key, value, create: bool):
        """Flat (keys, arrays): a key with a list of arrays is repeated once per array."""
        if isinstance(key, (int, str)):
            keys, values = [key], [value]
        else:
            keys, values = list(key), list(value)
            if len(keys) != len(values):
                raise MXNetError(f"KVStore: {len(keys)} keys but {len(values)} values")
        flat_keys: List[int] = []
        flat_vals: List[NDArray] = []
        for k, v in zip(keys, values):
            arrays = [v] if isinstance(v, NDArray) else list(v)
            for a in arrays:
                if not isinstance(a, NDArray):
                    raise TypeError(f"KVStore values are NDArrays, not {type(a).__name__}")
            ik = self._int_key(k, create)
            flat_keys += [ik] * len(arrays)
            flat_vals += arrays
        return c_array(ctypes.c_int, flat_keys), c_handle_array(flat_vals), len(flat_vals)

    def init(self, key, value) -> None:
        """Initial values (in a dist store, worker 0's reach the servers)."""
        keys, vals, n = self._pairs(key, value, True)
        check_call(_LIB.MXKVStoreInit(self.handle, mx_uint(n), keys, vals))

    def push(self, key, value, priority: int = 0) -> None:
        """Pushes values; several for one key (a list) are summed. With an
        optimizer set, the sum updates the stored value; without, it replaces it."""
        keys, vals, n = self._pairs(key, value, False)
        check_call(_LIB.MXKVStorePush(self.handle, mx_uint(n), keys, vals, ctypes.c_int(priority)))

    def pull(self, key, out=None, priority: int = 0, ignore_sparse: bool = True) -> None:
        """Pulls the stored values into `out` (an array, or a list per key)."""
        if out is None:
            raise MXNetError("KVStore.pull needs out= (the arrays to pull into)")
        keys, vals, n = self._pairs(key, out, False)
        check_call(_LIB.MXKVStorePull(self.handle, mx_uint(n), keys, vals, ctypes.c_int(priority)))

    def pushpull(self, key, value, out=None, priority: int = 0) -> None:
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    # ---- optimizer ---------------------------------------------------------
    def set_optimizer(self, optimizer) -> None:
        """Runs the optimizer where the values live (here for local/device,
        on the servers for dist): an mx.optimizer.Optimizer, whose name and
        parameters go to libmx (MXNet pickles the object instead)."""
        name, params = optimizer.kvstore_params()
        check_call(_LIB.MXKVStoreSetOptimizer(self.handle, c_str(name), mx_uint(len(params)),
                                              c_str_array(list(params)),
                                              c_str_array([str(v) for v in params.values()])))
        self._optimizer = optimizer

    # ---- the job -----------------------------------------------------------
    @property
    def type(self) -> str:
        out = ctypes.c_char_p()
        check_call(_LIB.MXKVStoreGetType(self.handle, ctypes.byref(out)))
        return py_str(out.value)

    @property
    def rank(self) -> int:
        out = ctypes.c_int()
        check_call(_LIB.MXKVStoreGetRank(self.handle, ctypes.byref(out)))
        return out.value

    @property
    def num_workers(self) -> int:
        out = ctypes.c_int()
        check_call(_LIB.MXKVStoreGetGroupSize(self.handle, ctypes.byref(out)))
        return out.value

    def barrier(self) -> None:
        """Waits for this process's operations, then for every worker."""
        check_call(_LIB.MXKVStoreBarrier(self.handle))

    _barrier = barrier


def create(name: str = "local") -> KVStore:
    """A store: 'local', 'device', 'dist_sync', 'dist_async' (also
    'dist_device_sync', as MXNet names it, which is dist_sync here)."""
    if not isinstance(name, str):
        raise TypeError("mx.kv.create: name must be a str")
    if name == "dist_device_sync":
        name = "dist_sync"
    handle = KVStoreHandle()
    check_call(_LIB.MXKVStoreCreate(c_str(name), ctypes.byref(handle)))
    return KVStore(handle)
