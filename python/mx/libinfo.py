"""Finding libmx.so, the library this package calls through ctypes."""
from __future__ import annotations

import ctypes.util
import os
from typing import List

# The library's file names, most specific first (SONAME, then the link name).
LIB_NAMES = ("libmx.so.0", "libmx.so")


def candidate_paths() -> List[str]:
    """Where libmx.so is looked for, in order:

    1. ``MX_LIBRARY_PATH``: the library file itself, or a folder holding it;
    2. this package's own folder (a library copied next to the package);
    3. the system's search (``LD_LIBRARY_PATH``, the ld.so cache), by name.
    """
    paths: List[str] = []
    env = os.environ.get("MX_LIBRARY_PATH")
    if env:
        if os.path.isdir(env):
            paths += [os.path.join(env, name) for name in LIB_NAMES]
        else:
            paths.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    paths += [os.path.join(here, name) for name in LIB_NAMES]
    found = ctypes.util.find_library("mx")
    # Bare names make dlopen search the system's paths.
    paths += list(LIB_NAMES) + ([found] if found and found not in LIB_NAMES else [])
    return paths


def load_library() -> ctypes.CDLL:
    """Loads libmx.so from the first candidate that opens.

    RTLD_GLOBAL: the MPI library libmx.so links loads plugins that look up
    its symbols in the global namespace (as mpi4py loads it).
    """
    errors = []
    for path in candidate_paths():
        if os.path.sep in path and not os.path.exists(path):
            errors.append(f"{path} (no such file)")
            continue
        try:
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            errors.append(f"{path} ({e})")
    raise ImportError(
        "mx: cannot load libmx.so; set MX_LIBRARY_PATH to the library or its folder "
        "(e.g. build/lib of an mx build). Tried: " + "; ".join(errors))
