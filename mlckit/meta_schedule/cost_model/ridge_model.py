"""``RidgeModel``: ridge regression on loop features and their pairwise products.

Why this model: TVM trains XGBoost on its features.  XGBoost's wheel is hundreds of MB and
scikit-learn brings SciPy; both would dominate mlckit's install and CI time, while a
tuning run here measures tens to a few hundred candidates — few samples, for which a
regularized linear model over quadratic features (the products capture interactions such
as "small inner tile *and* vectorized") ranks about as well as boosting.  It is a closed
form in NumPy (``numpy.linalg.solve``): no new dependency, no threads, microseconds to fit,
and deterministic, so the same seed gives the same search.

It regresses ``-log(median run time)`` on standardized features; higher predictions mean
faster programs.  The products are penalized ``quadratic_penalty`` times more than the
features themselves: with few samples the model leans on the linear trend, and bends only
where the data insist.  Until ``num_warmup_samples`` candidates are measured it predicts random
scores from a seeded generator (as TVM's XGB model does before its warm-up).

Example::

    model = ms.cost_model.RidgeModel(alpha=1.0, num_warmup_samples=32, seed=0)
"""

from __future__ import annotations

import math

import numpy as np

from ..feature_extractor import PerStoreFeature
from .cost_model import CostModel


class RidgeModel(CostModel):
    """Ridge regression over quadratic loop features (mlckit's default cost model)."""

    def __init__(self, alpha: float = 1.0, num_warmup_samples: int = 32,
                 seed: int | None = None, extractor=None, quadratic_penalty: float = 100.0):
        self.alpha = alpha
        self.quadratic_penalty = quadratic_penalty
        self.num_warmup_samples = num_warmup_samples
        self.extractor = extractor or PerStoreFeature()
        self.rng = np.random.default_rng(seed)
        self.xs: list[np.ndarray] = []
        self.ys: list[float] = []
        self.weights = None

    @property
    def ready(self) -> bool:
        return len(self.ys) >= self.num_warmup_samples and self.weights is not None

    def _features(self, cand) -> np.ndarray:
        """The candidate's features, computed once (a population is scored every generation)."""
        feats = getattr(cand, "features", None)
        if feats is None:
            feats = cand.features = self.extractor.extract_from(cand.sch.mod)
        return feats

    def _expand(self, feats: np.ndarray) -> np.ndarray:
        z = (feats - self.mean) / self.std
        i, j = np.triu_indices(z.shape[1])
        return np.hstack([np.ones((len(z), 1)), z, z[:, i] * z[:, j]])

    def update(self, candidates, results) -> None:
        """Learn from measured candidates; failed measurements are skipped."""
        for cand, res in zip(candidates, results):
            secs = res.run_secs
            if res.error_msg or not secs:
                continue
            self.xs.append(self._features(cand))
            self.ys.append(-math.log(float(np.median(secs))))
        if len(self.ys) < max(2, self.num_warmup_samples):
            return
        x = np.stack(self.xs)
        self.mean = x.mean(axis=0)
        std = x.std(axis=0)
        # a feature constant in training gets weight 0; scaling it by 1 keeps a candidate
        # where it varies from blowing up the prediction
        self.std = np.where(std > 1e-9, std, 1.0)
        design = self._expand(x)
        y = np.asarray(self.ys)
        self.y_mean = y.mean()
        n_linear = 1 + x.shape[1]
        penalty = np.full(design.shape[1], self.alpha * self.quadratic_penalty)
        penalty[:n_linear] = self.alpha
        gram = design.T @ design + np.diag(penalty)
        self.weights = np.linalg.solve(gram, design.T @ (y - self.y_mean))

    def predict(self, candidates):
        """A score per candidate, higher meaning faster (random during warm-up)."""
        if not self.ready:
            return self.rng.random(len(candidates))
        feats = np.stack([self._features(c) for c in candidates])
        return self._expand(feats) @ self.weights + self.y_mean
