"""``CostModel``: predicts which candidates run fast, so the search measures promising ones.

``update(candidates, results)`` learns from measured candidates; ``predict(candidates)``
returns a score per candidate, higher meaning faster.

Example::

    model = ms.cost_model.CostModel.create("ridge")     # "xgb" means the same in mlckit
"""

from __future__ import annotations

from mlckit.error import TVMValueError


class CostModel:
    """The interface of a cost model (TVM's ``meta_schedule.CostModel``).

    >>> from mlckit import meta_schedule as ms
    >>> issubclass(ms.cost_model.RidgeModel, ms.cost_model.CostModel)
    True
    """

    def update(self, candidates, results) -> None:
        raise NotImplementedError

    def predict(self, candidates):
        raise NotImplementedError

    @property
    def ready(self) -> bool:
        """Whether predictions carry information yet (the search evolves only then)."""
        return True

    @staticmethod
    def create(kind="xgb", *args, **kwargs) -> CostModel:
        """``"ridge"`` (also ``"xgb"``, TVM's default name: mlckit's default model is a ridge
        regression, see ``ridge_model``), ``"random"``; a CostModel passes through."""
        from .random_model import RandomModel
        from .ridge_model import RidgeModel

        if isinstance(kind, CostModel):
            return kind
        kinds = {"xgb": RidgeModel, "ridge": RidgeModel, "mlp": RidgeModel, "random": RandomModel}
        if kind not in kinds:
            raise TVMValueError(f"unknown cost model {kind!r} (one of {', '.join(kinds)})")
        return kinds[kind](*args, **kwargs)
