"""Neural-network operators (TVM's ``topi.nn``)."""

from .dense import dense, matmul
from .elemwise import leaky_relu, relu

__all__ = ["dense", "leaky_relu", "matmul", "relu"]
