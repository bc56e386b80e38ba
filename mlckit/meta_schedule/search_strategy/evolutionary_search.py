"""``EvolutionarySearch``: TVM's search — a population of sampled programs evolved by
mutation under the cost model, the best predicted ones measured.

Each round: the population starts with the best measured traces of this workload
(``init_measured_ratio``) and fresh random samples; for ``genetic_num_iters`` generations,
parents are drawn in proportion to their predicted score and mutated (a mutator picked by
its probability changes one decision) with probability ``genetic_mutate_prob``; finally the
best predicted programs not measured yet are measured, plus an ``eps_greedy`` share of
random ones.

While the cost model is still warming up its predictions are random, so evolving would only
shuffle; the round then measures fresh random samples directly (the same distribution TVM
gets, without the work).  mlckit's defaults are smaller than TVM's (population 96, not
512; 2 generations, not 4; at least 32 fresh samples, not 50) because replaying and
post-processing a candidate here is Python (~10–25 ms), not C++; a mutated trace seen
before in the round is not replayed again.

Deterministic: the first round (and every round while the model warms up) depends only on
the seed; later rounds also depend on the measured times the model learned from.

Example::

    strategy = ms.search_strategy.EvolutionarySearch(population_size=128)
"""

from __future__ import annotations

import json
import math

from .search_strategy import MeasureCandidate, SearchStrategy, strip_postproc


class EvolutionarySearch(SearchStrategy):
    """Evolve sampled programs under the cost model (TVM's ``EvolutionarySearch``)."""

    def __init__(self, population_size: int = 96, init_measured_ratio: float = 0.2,
                 init_min_unmeasured: int = 32, max_fail_count: int = 64,
                 genetic_num_iters: int = 2, genetic_mutate_prob: float = 0.85,
                 genetic_max_fail_count: int = 10, eps_greedy: float = 0.05):
        self.population_size = population_size
        self.init_measured_ratio = init_measured_ratio
        self.init_min_unmeasured = init_min_unmeasured
        self.max_fail_count = max_fail_count
        self.genetic_num_iters = genetic_num_iters
        self.genetic_mutate_prob = genetic_mutate_prob
        self.genetic_max_fail_count = genetic_max_fail_count
        self.eps_greedy = eps_greedy

    def generate_measure_candidates(self):
        budget = self._budget()
        if budget <= 0:
            return None
        if self.cost_model is None or not self.cost_model.ready:
            picked = self._sample_new(budget, self.seen, self.max_fail_count,
                                      sink=self.candidate_sink)
        else:
            picked = self._evolve(budget)
        self.trials += len(picked)
        return picked or None

    # -- the genetic algorithm -------------------------------------------------------------
    def _measured_population(self) -> list[MeasureCandidate]:
        if self.database is None or self.workload is None:
            return []
        k = int(self.population_size * self.init_measured_ratio)
        out = []
        for record in self.database.get_top_k(self.workload, k):
            cand = self._candidate(strip_postproc(record.trace.as_json()), keep_decisions=True)
            if cand is not None:
                out.append(cand)
        return out

    def _evolve(self, budget: int) -> list[MeasureCandidate]:
        measured = self._measured_population()
        n_random = max(self.population_size - len(measured), self.init_min_unmeasured)
        randoms = self._sample_new(n_random, set(self.seen), self.max_fail_count)
        population = measured + randoms
        replayed: dict[str, MeasureCandidate | None] = {}  # mutated trace -> its candidate
        mutators = [(m, p) for m, p in self.mutator_probs.items() if p > 0]
        for _ in range(self.genetic_num_iters):
            if not population or not mutators:
                break
            scores = self.cost_model.predict(population)
            weights = _softmax(scores)
            nxt: dict[int, MeasureCandidate] = {}
            fails = 0
            while len(nxt) < self.population_size and fails < self.genetic_max_fail_count * 10:
                parent = self.rng.choices(population, weights)[0]
                child = parent
                if self.rng.random() < self.genetic_mutate_prob:
                    mutator = self.rng.choices([m for m, _ in mutators],
                                               [p for _, p in mutators])[0]
                    new_json = mutator.apply(parent.trace_json, self.rng)
                    key = json.dumps(new_json)
                    if new_json is not None and key not in replayed:
                        replayed[key] = self._candidate(new_json, True)
                    child = replayed.get(key)
                if child is None or child.shash in nxt:
                    fails += 1
                    continue
                nxt[child.shash] = child
            population = list(nxt.values()) or population
        pool = {c.shash: c for c in population + randoms if c.shash not in self.seen}
        ranked = list(pool.values())
        scores = self.cost_model.predict(ranked) if ranked else []
        order = sorted(range(len(ranked)), key=lambda i: -scores[i])
        n_best = budget - int(round(budget * self.eps_greedy))
        picked = [ranked[i] for i in order[:n_best]]
        chosen = {c.shash for c in picked}
        rest = [c for c in randoms if c.shash not in chosen and c.shash not in self.seen]
        self.rng.shuffle(rest)
        picked += rest[:budget - len(picked)]
        for c in picked:
            self.seen.add(c.shash)
        return picked


def _softmax(scores) -> list[float]:
    top = max(scores)
    spread = (max(scores) - min(scores)) or 1.0
    return [math.exp(3.0 * (s - top) / spread) for s in scores]
