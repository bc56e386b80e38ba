"""Script completion (TVM's ``ScriptComplete``), run when a PrimFunc frame closes.

1. If the body holds blocks but is not already a single root block, wrap it in
   ``T.block("root")`` holding the function-level ``T.alloc_buffer``s.
2. Fill the ``T.reads`` / ``T.writes`` a block left out by access-region detection (the
   root block keeps empty regions).
"""

from __future__ import annotations

from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.analysis.block_access_region import get_block_access_region
from mlckit.tir.function import PrimFunc

from .frames import DETECT_ACCESS


def _contains_block(stmt) -> bool:
    if isinstance(stmt, (S.BlockRealize, S.Block)):
        return True
    if isinstance(stmt, S.Stmt):
        for name in stmt.field_names():
            value = getattr(stmt, name)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, S.Stmt) and _contains_block(v):
                    return True
    return False


def script_complete(func: PrimFunc, root_allocs: list) -> PrimFunc:
    """``func`` with its root block and missing block regions filled in."""
    body = func.body
    realize = body if isinstance(body, S.BlockRealize) else None
    insert_root = bool(root_allocs) or (realize is not None and realize.block.iter_vars) or (
        realize is None and _contains_block(body))
    if insert_root:
        root = S.Block([], [], [], "root", body, None, list(root_allocs), span=func.span)
        body = S.BlockRealize([], E.IntImm("bool", True), root, span=func.span)
    visible = {id(b): b for b in func.buffer_map.values()}
    for b in root_allocs:
        visible[id(b)] = b
    completer = _Completer(visible)
    body = completer.visit(body)
    return func if body is func.body else func.replace(body=body)


class _Completer:
    def __init__(self, visible: dict):
        self.visible = visible
        self.is_root = True

    def visit(self, stmt):
        if isinstance(stmt, S.Block):
            return self.block(stmt)
        changes = {}
        for name in stmt.field_names():
            value = getattr(stmt, name)
            if isinstance(value, S.Stmt):
                new = self.visit(value)
                if new is not value:
                    changes[name] = new
            elif isinstance(value, list) and any(isinstance(v, S.Stmt) for v in value):
                new = [self.visit(v) if isinstance(v, S.Stmt) else v for v in value]
                if any(a is not b for a, b in zip(new, value)):
                    changes[name] = new
        return stmt.replace(**changes) if changes else stmt

    def block(self, block: S.Block) -> S.Block:
        own = list(block.alloc_buffers) + [mb.buffer for mb in block.match_buffers]
        for b in own:
            self.visible[id(b)] = b
        is_root, self.is_root = self.is_root, False
        new = self.visit_children(block)
        self.is_root = is_root
        for b in own:
            self.visible.pop(id(b), None)
        mask = new.annotations.get(DETECT_ACCESS, 0)
        if not mask:
            return new
        annotations = {k: v for k, v in new.annotations.items() if k != DETECT_ACCESS}
        changes = {"annotations": annotations}
        if not is_root:
            reads, writes = get_block_access_region(new, self.visible.values())
            if mask & 1:
                changes["reads"] = reads
            if mask & 2:
                changes["writes"] = writes
        return new.replace(**changes)

    def visit_children(self, block: S.Block) -> S.Block:
        changes = {}
        if block.init is not None:
            init = self.visit(block.init)
            if init is not block.init:
                changes["init"] = init
        body = self.visit(block.body)
        if body is not block.body:
            changes["body"] = body
        return block.replace(**changes) if changes else block
