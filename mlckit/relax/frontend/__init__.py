"""Ways into Relax from model descriptions (TVM's ``relax.frontend``): ``nn``, models as
Python classes, and ``detach_params``."""

from . import nn
from .common import detach_params

__all__ = ["detach_params", "nn"]
