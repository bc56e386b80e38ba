"""``RandomModel``: random scores — the search becomes random sampling plus mutation.

Example::

    ms.tune_tir(mod, "llvm", work_dir="t", max_trials_global=16, cost_model="random")
"""

from __future__ import annotations

import numpy as np

from .cost_model import CostModel


class RandomModel(CostModel):
    """Scores drawn uniformly from [0, 1) with a seeded generator (TVM's ``RandomModel``)."""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def update(self, candidates, results) -> None:
        pass

    def predict(self, candidates):
        return self.rng.random(len(candidates))

    @property
    def ready(self) -> bool:
        return False
