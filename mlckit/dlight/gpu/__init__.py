"""GPU schedule rules (``tvm.dlight.gpu``): ``Fallback``."""

from .fallback import Fallback

__all__ = ["Fallback"]
