"""How long ``Exercise.check`` takes to give feedback, for every exercise's reference
solution: the first check in a fresh process (Numba compiles, tuning starts its worker)
and the next one.  The goal is under 2 s on 2 cores.

    python benchmarks/exercise_checks.py
"""

from __future__ import annotations

import time

from mlckit import exercises


def main() -> None:
    rows = []
    for ex in exercises.all_exercises():
        solution = ex.solution_object()
        times = []
        for _ in range(2):
            start = time.perf_counter()
            fb = ex.check(solution)
            times.append(time.perf_counter() - start)
        rows.append((ex.name, *times, fb.status))
    print(f"{'exercise':32s} {'first':>7s} {'again':>7s}  verdict")
    for name, first, again, status in rows:
        print(f"{name:32s} {first:6.2f}s {again:6.2f}s  {status}")
    worst = max(rows, key=lambda r: r[1])
    print(f"slowest first check: {worst[0]} {worst[1]:.2f}s")


if __name__ == "__main__":
    main()
