"""Mutators of the evolutionary search (TVM's names); ``Mutator.create("llvm")`` gives
TVM's CPU probabilities for the mutators mlckit has (tile size 0.9, compute location 0.05,
unroll 0.03; TVM's ``MutateParallel`` is missing)."""

from .mutate_compute_location import MutateComputeLocation
from .mutate_tile_size import MutateTileSize
from .mutate_unroll import MutateUnroll
from .mutator import DEFAULTS, Mutator


def _llvm_mutators() -> dict[Mutator, float]:
    return {MutateTileSize(): 0.9, MutateComputeLocation(): 0.05, MutateUnroll(): 0.03}


DEFAULTS.update({"llvm": _llvm_mutators, "c": _llvm_mutators})

__all__ = ["MutateComputeLocation", "MutateTileSize", "MutateUnroll", "Mutator"]
