"""mx.random: the seed of every device's random generators."""
import ctypes

from .base import _LIB, check_call


def seed(seed_state: int, ctx="all") -> None:
    """Seeds the random generators (Dropout masks, random operators) of every
    device, after the operations already pushed that use them. mx seeds all
    devices at once; ctx is accepted for MXNet's signature."""
    check_call(_LIB.MXRandomSeed(ctypes.c_int(int(seed_state))))
