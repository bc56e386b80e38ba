"""Cost models: ``RidgeModel`` (the default; ``"xgb"`` names it too) and ``RandomModel``."""

from .cost_model import CostModel
from .random_model import RandomModel
from .ridge_model import RidgeModel

__all__ = ["CostModel", "RandomModel", "RidgeModel"]
