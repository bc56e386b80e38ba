"""Annotations: ``annotate`` / ``unannotate`` a block or loop with a key and a value.

Annotations are hints for later passes and backends (``"pragma_auto_unroll_max_step"``,
``"meta_schedule.*"``); they never change what the function computes.
"""

from __future__ import annotations

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Rewrite, replace_stmts
from .query import name_of
from .rv import ExprRV


def _is_annotation_value(value) -> bool:
    if isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_annotation_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_annotation_value(v) for k, v in value.items())
    return False


class AnnotateMixin:
    def _set_annotations(self, prim, block_or_loop, fn):
        sref = self._sref(block_or_loop, prim)
        stmt = sref.stmt
        rw = Rewrite()
        new = rw.derive(stmt, annotations=fn(dict(stmt.annotations), sref))
        func = self.mod[sref.func_name]
        self._commit(sref.func_name, replace_stmts(func.body, {id(stmt): new}, rw), rw)

    @primitive("Annotate", inputs=("block_or_loop", "ann_val"), attrs=("ann_key",))
    def annotate(self, block_or_loop, ann_key: str, ann_val) -> None:
        """Set annotation ``ann_key`` to ``ann_val`` on a block or loop.

        Before / after ``sch.annotate(i, "pragma_unroll", 1)``::

            for i in range(8):                     for i in T.serial(8, annotations={"pragma_unroll": 1}):
        """
        if not isinstance(ann_key, str):
            raise ScheduleError("annotate", f"the annotation key must be a string, got {ann_key!r}")
        if isinstance(ann_val, ExprRV):  # a sampled value: annotate with the value, as TVM
            ann_val = self._int(ann_val, "annotate")
        if not _is_annotation_value(ann_val):
            raise ScheduleError(
                "annotate", f"annotation {ann_key!r}: a value must be a str, int, float, bool, or a "
                f"list/dict of those (it is printed in TVMScript), got {type(ann_val).__name__}")

        def update(anns, sref):
            anns[ann_key] = ann_val
            return anns

        self._set_annotations("annotate", block_or_loop, update)

    @primitive("Unannotate", inputs=("block_or_loop",), attrs=("ann_key",))
    def unannotate(self, block_or_loop, ann_key: str) -> None:
        """Remove annotation ``ann_key`` from a block or loop (it must be there)."""

        def update(anns, sref):
            if ann_key not in anns:
                kind = "block" if sref.is_block else "loop"
                raise ScheduleError("unannotate", f"{kind} `{name_of(sref)}` has no annotation "
                                    f"{ann_key!r} (it has: {sorted(anns) or 'none'})")
            del anns[ann_key]
            return anns

        self._set_annotations("unannotate", block_or_loop, update)
