"""Search strategies (TVM's names): ``EvolutionarySearch`` (default) and ``ReplayTrace``."""

from .evolutionary_search import EvolutionarySearch
from .replay_trace import ReplayTrace
from .search_strategy import MeasureCandidate, SearchStrategy

__all__ = ["EvolutionarySearch", "MeasureCandidate", "ReplayTrace", "SearchStrategy"]
