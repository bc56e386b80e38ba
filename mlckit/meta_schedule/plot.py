"""The best-so-far curve of a tuning run (matplotlib, imported when called).

Example::

    ms.plot.best_so_far(database, MyModule)      # a matplotlib Axes
"""

from __future__ import annotations

import math

from .database.database import is_valid


def best_so_far_ms(database, mod) -> list[float]:
    """For each measured candidate of ``mod``'s workload, in order, the best median run time
    so far in milliseconds (NaN until one succeeded)."""
    workload = database.find_workload(mod)
    if workload is None:
        return []
    out, best = [], math.inf
    for record in database.get_all_tuning_records():
        if record.workload is not workload:
            continue
        if is_valid(record.run_secs):
            best = min(best, record.median_secs * 1e3)
        out.append(best if best < math.inf else math.nan)
    return out


def best_so_far(database, mod, ax=None, label: str | None = None):
    """Plot the best time so far against the number of measured candidates."""
    import matplotlib.pyplot as plt

    curve = best_so_far_ms(database, mod)
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3))
    ax.step(range(1, len(curve) + 1), curve, where="post", label=label)
    ax.set_xlabel("candidates measured")
    ax.set_ylabel("best time so far (ms)")
    ax.set_title("tuning progress")
    if label:
        ax.legend()
    return ax
