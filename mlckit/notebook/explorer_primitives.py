"""The schedule primitives a :class:`~mlckit.notebook.ScheduleExplorer` offers, as data.

Each entry says what the primitive acts on (a loop, a block, a block and a loop …), its
parameters with their kinds and defaults, and one line of help.  The explorer's model turns
the friendly arguments of ``apply(...)`` (block names, printed loop names) into the
schedule's handles; the view builds a button and one input per parameter from an entry.
Adding a primitive to the explorer is adding an entry here.

Example::

    >>> PRIMITIVES["split"].params[0].name
    'factors'
    >>> parse_param(PRIMITIVES["split"].params[0], "None, 8")
    [None, 8]
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mlckit.error import TVMValueError

__all__ = ["PRIMITIVES", "Param", "Primitive", "Selection", "format_param", "parse_param"]

# what a primitive acts on
LOOP = "loop"                    # a loop above the chosen block:        sch.split(loop, ...)
BLOCK = "block"                  # a block:                              sch.compute_inline(block)
BLOCK_LOOP = "block+loop"        # a block and a loop above it:          sch.decompose_reduction(block, loop)
BLOCK_OTHER_LOOP = "block+other loop"  # a block and a loop of another nest: sch.compute_at(block, loop)
LOOPS = "loops"                  # several loops above the chosen block: sch.reorder(*loops)
TARGETS = (LOOP, BLOCK, BLOCK_LOOP, BLOCK_OTHER_LOOP, LOOPS)

# parameter kinds
FACTORS = "factors"  # a list of ints, one of them may be None
LOOP_NAMES = "loops"  # a list of printed loop names
INT = "int"
CHOICE = "choice"
BOOL = "bool"


@dataclass(frozen=True)
class Selection:
    """What is picked: a block, a loop (a printed name; a ``(block, name)`` pair for a loop
    of another nest) and the printed names of the loops above the block, outermost first.

    Example::

        Selection("Y", "j", ("i", "j", "k")).inner_of("j")      # 'k'
    """

    block: str | None
    loop: str | tuple[str, str] | None
    nest: tuple[str, ...] = ()

    @property
    def own_loop(self) -> str | None:
        """The picked loop's name when it is above the picked block, else None."""
        if isinstance(self.loop, str) and self.loop in self.nest:
            return self.loop
        return None

    def inner_of(self, loop: str) -> str | None:
        """The loop just inside ``loop`` in the block's nest (None for the innermost)."""
        k = self.nest.index(loop)
        return self.nest[k + 1] if k + 1 < len(self.nest) else None


@dataclass(frozen=True)
class Param:
    """A parameter: its ``name`` (as the Schedule method's), ``kind``, ``default`` (a value,
    or a function of the :class:`Selection`) and, for a choice, its ``choices``.

    Example::

        Param("factor_axis", INT, 0)
    """

    name: str
    kind: str
    default: Any = None
    choices: tuple = ()
    help: str = ""

    def default_for(self, sel: Selection):
        return self.default(sel) if callable(self.default) else self.default


@dataclass(frozen=True)
class Primitive:
    """A schedule primitive as the explorer offers it: its ``name`` (the Schedule method),
    ``target`` (what it acts on), ``params``, one line of ``help``, and ``needs``: a reason
    it cannot apply to a selection before any trial (None when it may).

    Example::

        Primitive("unroll", LOOP, (), "unroll a loop")
    """

    name: str
    target: str
    params: tuple[Param, ...] = ()
    help: str = ""
    needs: Callable[[Selection], str | None] = field(default=lambda sel: None, repr=False)

    def defaults(self, sel: Selection) -> dict:
        """The parameters the explorer proposes for ``sel`` (what the legality trial uses)."""
        return {p.name: p.default_for(sel) for p in self.params}


def _fuse_default(sel: Selection):
    loop = sel.own_loop
    inner = sel.inner_of(loop) if loop else None
    return [loop, inner] if inner else None


def _reorder_default(sel: Selection):
    loop = sel.own_loop
    inner = sel.inner_of(loop) if loop else None
    return [inner, loop] if inner else None


def _needs_inner_loop(sel: Selection) -> str | None:
    loop = sel.own_loop
    if loop is not None and sel.inner_of(loop) is None:
        return f"loop `{loop}` is the innermost above block `{sel.block}`: pick an outer one"
    return None


_SCOPES = ("global", "shared", "local")

_ALL = (
    Primitive("split", LOOP, (Param("factors", FACTORS, [None, 4],
                                     help="one factor may be None: it is inferred"),),
              "split a loop into nested loops of the given extents"),
    Primitive("fuse", LOOPS, (Param("loops", LOOP_NAMES, _fuse_default,
                                    help="consecutive nested loops, outermost first"),),
              "fuse consecutive nested loops into one", _needs_inner_loop),
    Primitive("reorder", LOOPS, (Param("loops", LOOP_NAMES, _reorder_default,
                                       help="loops of one nest, in their new order"),),
              "change the order of loops of one nest", _needs_inner_loop),
    Primitive("parallel", LOOP, (), "run the iterations of a loop in parallel"),
    Primitive("vectorize", LOOP, (), "run the iterations of an innermost loop as one vector"),
    Primitive("unroll", LOOP, (), "unroll a loop"),
    Primitive("compute_at", BLOCK_OTHER_LOOP,
              (Param("preserve_unit_loops", BOOL, False),),
              "move a producer block under a loop of its consumer"),
    Primitive("reverse_compute_at", BLOCK_OTHER_LOOP,
              (Param("preserve_unit_loops", BOOL, False),),
              "move a consumer block under a loop of its producer"),
    Primitive("compute_inline", BLOCK, (),
              "inline a block into its consumers (its buffer disappears)"),
    Primitive("reverse_compute_inline", BLOCK, (), "inline a block into its producer"),
    Primitive("decompose_reduction", BLOCK_LOOP, (),
              "separate a reduction's initialisation, placed before the loop"),
    Primitive("rfactor", LOOP, (Param("factor_axis", INT, 0),),
              "compute partial results of a reduction over a loop, then sum them"),
    Primitive("cache_read", BLOCK, (Param("read_buffer_index", INT, 0),
                                    Param("storage_scope", CHOICE, "local", _SCOPES)),
              "read an input of a block through a cache buffer"),
    Primitive("cache_write", BLOCK, (Param("write_buffer_index", INT, 0),
                                     Param("storage_scope", CHOICE, "local", _SCOPES)),
              "write an output of a block through a cache buffer"),
    Primitive("blockize", LOOP, (), "turn the loops from a loop down into a block of their own"),
)

PRIMITIVES: dict[str, Primitive] = {p.name: p for p in _ALL}


def parse_param(param: Param, text):
    """The value of ``param`` from what a learner typed (or picked) in the view.

    Example::

        >>> parse_param(Param("loops", LOOP_NAMES), "j_0, k, j_1")
        ['j_0', 'k', 'j_1']
    """
    if param.kind in (BOOL, CHOICE):
        if param.kind == CHOICE and text not in param.choices:
            raise TVMValueError(f"{param.name}: {text!r} is not one of {', '.join(param.choices)}")
        return text
    text = str(text).strip()
    if param.kind == INT:
        try:
            return int(text)
        except ValueError:
            raise TVMValueError(f"{param.name}: expected an integer, got {text!r}") from None
    if param.kind == LOOP_NAMES:
        names = [n.strip().strip("'\"") for n in text.strip("[]()").split(",") if n.strip()]
        if not names or not all(n.isidentifier() for n in names):
            raise TVMValueError(f"{param.name}: expected loop names separated by commas, "
                                f"got {text!r}")
        return names
    if param.kind == FACTORS:
        try:
            value = ast.literal_eval("[" + text.strip("[]()") + "]")
        except (ValueError, SyntaxError):
            value = None
        if not value or not all(v is None or (isinstance(v, int) and not isinstance(v, bool))
                                for v in value):
            raise TVMValueError(f"{param.name}: expected integers separated by commas (one may "
                                f"be None), got {text!r}")
        return value
    raise TVMValueError(f"{param.name}: unknown parameter kind {param.kind!r}")


def format_param(param: Param, value) -> str:
    """``value`` as the view's input shows it (the inverse of :func:`parse_param`).

    Example::

        >>> format_param(PRIMITIVES["split"].params[0], [None, 8])
        'None, 8'
    """
    if value is None:
        return ""
    if param.kind in (FACTORS, LOOP_NAMES):
        return ", ".join(str(v) for v in value)
    return value if param.kind in (BOOL, CHOICE) else str(value)
