"""mx: Python front end of the mx deep-learning library, over libmx.so's C API.

Its names are Apache MXNet 1.x's (``mx.nd``, ``mx.sym``, ``mx.autograd``,
``mx.kv``, ``mx.io``), so an MXNet 1.x script runs with its import line
changed to ``import mx``. docs/library.md ("Python") lists what is provided
and what differs."""
from . import base
from .base import MXNetError
from .context import Context, cpu, cpu_pinned, current_context, gpu
from . import ndarray
from . import ndarray as nd
from . import autograd
from . import random
from . import symbol
from . import symbol as sym
from .executor import Executor
from . import kvstore
from . import kvstore as kv
from . import io
from . import optimizer
from . import lr_scheduler
from . import initializer
from . import initializer as init

__version__ = "0.1.0"
