"""``ReplayTrace``: random search — each candidate replays a design space with fresh
sampling decisions (TVM's ``ReplayTrace``).  Structurally equal programs are measured once.

Example::

    ms.tune_tir(mod, "llvm", work_dir="t", max_trials_global=16, strategy="replay-trace")
"""

from __future__ import annotations

from .search_strategy import SearchStrategy


class ReplayTrace(SearchStrategy):
    """Random sampling of the design spaces."""

    def __init__(self, max_fail_count: int = 100):
        self.max_fail_count = max_fail_count

    def generate_measure_candidates(self):
        budget = self._budget()
        if budget <= 0:
            return None
        picked = self._sample_new(budget, self.seen, self.max_fail_count,
                                  sink=self.candidate_sink)
        self.trials += len(picked)
        return picked or None
