"""``TuneContext``: one tuning task — the workload, the target, and the pieces that tune it.

Example::

    ctx = ms.TuneContext(mod, target="llvm --num-cores=1",
                         space_generator=ms.space_generator.ScheduleFn(my_fn), rand_state=0)
    spaces = ctx.generate_design_space()
"""

from __future__ import annotations

from .utils import as_target, normalize_mod


class TuneContext:
    """A tuning task (TVM's ``TuneContext``): it initializes its space generator and search
    strategy with itself, so they learn the target.

    >>> from mlckit.script import ir as I, tir as T
    >>> @I.ir_module
    ... class Mod:
    ...     @T.prim_func
    ...     def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...         for i in range(4):
    ...             with T.block("B"):
    ...                 vi = T.axis.spatial(4, i)
    ...                 b[vi] = a[vi]
    >>> import mlckit as tvm
    >>> from mlckit import meta_schedule as ms
    >>> ctx = ms.TuneContext(mod=Mod, target=tvm.target.Target("llvm"), task_name="copy")
    >>> ctx.task_name, ctx.target.kind.name
    ('copy', 'llvm')
    """

    def __init__(self, mod=None, target=None, space_generator=None, search_strategy=None,
                 task_name: str = "main", rand_state: int = -1, num_threads="physical"):
        from .search_strategy import SearchStrategy
        from .space_generator import SpaceGenerator

        self.mod = None if mod is None else normalize_mod(mod)
        self.target = None if target is None else as_target(target)
        self.task_name = task_name
        self.rand_state = rand_state
        self.num_threads = num_threads
        self.space_generator = None if space_generator is None else \
            SpaceGenerator.create(space_generator)
        self.search_strategy = None if search_strategy is None else \
            SearchStrategy.create(search_strategy)
        if self.space_generator is not None and self.target is not None:
            self.space_generator.initialize_with_tune_context(self)
        if self.search_strategy is not None:
            self.search_strategy.initialize_with_tune_context(self)

    def generate_design_space(self) -> list:
        """The design spaces of the workload (schedules whose traces the search re-samples)."""
        seed = None if self.rand_state in (None, -1) else self.rand_state
        return self.space_generator.generate_design_space(self.mod, seed)
