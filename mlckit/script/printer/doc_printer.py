"""Docs -> Python text: indentation, line layout and minimal parentheses.

Parentheses follow Python's operator precedence exactly as TVM's ``PythonDocPrinter``
(src/script/printer/doc_printer/python_doc_printer.cc): a child gets parentheses when it
binds less tightly than its parent, and the right operand of a binary operator also when it
binds equally (``a - (b - c)``, but ``a - b - c``).
"""

from __future__ import annotations

import math

from mlckit.error import TVMTypeError

from . import doc as D

# Python's precedence levels (higher binds tighter).
_LAMBDA, _IF_ELSE, _OR, _AND, _NOT, _CMP = 1, 2, 3, 4, 5, 6
_ADD, _MULT, _UNARY, _POW, _ATOM = 11, 12, 13, 14, 15

_OP_PRECEDENCE = {
    D.OpKind.USUB: _UNARY, D.OpKind.INVERT: _UNARY, D.OpKind.NOT: _NOT,
    D.OpKind.ADD: _ADD, D.OpKind.SUB: _ADD,
    D.OpKind.MULT: _MULT, D.OpKind.DIV: _MULT, D.OpKind.FLOOR_DIV: _MULT, D.OpKind.MOD: _MULT,
    D.OpKind.POW: _POW,
    D.OpKind.LT: _CMP, D.OpKind.LTE: _CMP, D.OpKind.EQ: _CMP, D.OpKind.NOT_EQ: _CMP,
    D.OpKind.GT: _CMP, D.OpKind.GTE: _CMP,
    D.OpKind.AND: _AND, D.OpKind.OR: _OR, D.OpKind.IF_THEN_ELSE: _IF_ELSE,
}


def precedence(doc: D.ExprDoc) -> int:
    """How tightly ``doc`` binds (atoms, calls, indexing: tightest)."""
    if isinstance(doc, D.OperationDoc):
        return _OP_PRECEDENCE[doc.kind]
    if isinstance(doc, D.LambdaDoc):
        return _LAMBDA
    return _ATOM


def format_float(value: float) -> str:
    """A float as TVM prints it: ``1.0`` for integral values, else 17 significant digits."""
    if math.isnan(value):
        return '"nan"'
    if math.isinf(value):
        return '"inf"' if value > 0 else '"-inf"'
    if float(round(value)) == value:
        return f"{value:.1f}"
    return f"{value:.17g}"


def format_str(value: str) -> str:
    """A double-quoted Python string literal."""
    out = []
    for ch in value:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class PythonDocPrinter:
    """Renders one doc tree; use :func:`to_python`."""

    def __init__(self, indent_spaces: int = 4, spans: list | None = None):
        self.indent_spaces = indent_spaces
        self.indent = 0
        self.out: list[str] = []
        self.line = 1
        # (first line, last line, source nodes) of each statement printed from IR nodes
        self.spans = spans

    # -- layout helpers ------------------------------------------------------------------
    def write(self, text: str) -> None:
        self.out.append(text)
        self.line += text.count("\n")

    def newline(self) -> None:
        self.out.append("\n" + " " * self.indent)
        self.line += 1

    def indented_block(self, stmts: list) -> None:
        self.indent += self.indent_spaces
        for stmt in stmts:
            self.newline()
            self.print(stmt)
        if not stmts:
            self.newline()
            self.write("pass")
        self.indent -= self.indent_spaces

    def joined(self, docs, sep: str = ", ") -> None:
        for i, d in enumerate(docs):
            if i:
                self.write(sep)
            self.print(d)

    def child(self, doc: D.ExprDoc, parent_prec: int, paren_if_equal: bool = False) -> None:
        prec = precedence(doc)
        if prec < parent_prec or (paren_if_equal and prec == parent_prec):
            self.write("(")
            self.print(doc)
            self.write(")")
        else:
            self.print(doc)

    # -- dispatch ------------------------------------------------------------------------
    def print(self, doc: D.Doc) -> None:
        method = getattr(self, "print_" + type(doc).__name__, None)
        if method is None:
            raise TVMTypeError(f"the doc printer cannot print {type(doc).__name__}")
        nodes = getattr(doc, "source_nodes", ())
        if self.spans is None or not nodes:
            method(doc)
            return
        start = self.line
        method(doc)
        end = self.line - 1 if self.out and self.out[-1].endswith("\n") else self.line
        self.spans.append((start, end, nodes))

    # -- expressions ---------------------------------------------------------------------
    def print_LiteralDoc(self, doc: D.LiteralDoc) -> None:
        v = doc.value
        if v is None:
            self.write("None")
        elif isinstance(v, bool):
            self.write("True" if v else "False")
        elif isinstance(v, int):
            self.write(str(v))
        elif isinstance(v, float):
            self.write(format_float(v))
        elif isinstance(v, str):
            self.write(format_str(v))
        else:
            raise TVMTypeError(f"unsupported literal {v!r}")

    def print_IdDoc(self, doc: D.IdDoc) -> None:
        self.write(doc.name)

    def print_AttrAccessDoc(self, doc: D.AttrAccessDoc) -> None:
        self.child(doc.value, _ATOM)
        self.write("." + doc.name)

    def print_IndexDoc(self, doc: D.IndexDoc) -> None:
        self.child(doc.value, _ATOM)
        if not doc.indices:
            self.write("[()]")
            return
        self.write("[")
        self.joined(doc.indices)
        self.write("]")

    def print_OperationDoc(self, doc: D.OperationDoc) -> None:
        kind, ops = doc.kind, doc.operands
        prec = _OP_PRECEDENCE[kind]
        if kind.is_unary:
            self.write(kind.token)
            self.child(ops[0], prec)
        elif kind is D.OpKind.POW:
            self.child(ops[0], prec, paren_if_equal=True)
            self.write(" ** ")
            self.child(ops[1], _UNARY)
        elif kind is D.OpKind.IF_THEN_ELSE:
            self.child(ops[1], prec)
            self.write(" if ")
            self.child(ops[0], prec, paren_if_equal=True)
            self.write(" else ")
            self.child(ops[2], prec, paren_if_equal=True)
        else:
            self.child(ops[0], prec)
            self.write(f" {kind.token} ")
            self.child(ops[1], prec, paren_if_equal=True)

    def print_CallDoc(self, doc: D.CallDoc) -> None:
        self.child(doc.callee, _ATOM)
        self.write("(")
        first = True
        for arg in doc.args:
            if not first:
                self.write(", ")
            first = False
            self.print(arg)
        for key, value in doc.kwargs:
            if not first:
                self.write(", ")
            first = False
            self.write(key + "=")
            self.print(value)
        self.write(")")

    def print_LambdaDoc(self, doc: D.LambdaDoc) -> None:
        self.write("lambda ")
        self.joined(doc.args)
        self.write(": ")
        self.child(doc.body, _LAMBDA)

    def print_ListDoc(self, doc: D.ListDoc) -> None:
        self.write("[")
        self.joined(doc.elements)
        self.write("]")

    def print_TupleDoc(self, doc: D.TupleDoc) -> None:
        self.write("(")
        self.joined(doc.elements)
        if len(doc.elements) == 1:
            self.write(",")
        self.write(")")

    def print_DictDoc(self, doc: D.DictDoc) -> None:
        self.write("{")
        for i, (k, v) in enumerate(zip(doc.keys, doc.values)):
            if i:
                self.write(", ")
            self.print(k)
            self.write(": ")
            self.print(v)
        self.write("}")

    def print_SliceDoc(self, doc: D.SliceDoc) -> None:
        if doc.start is not None:
            self.print(doc.start)
        self.write(":")
        if doc.stop is not None:
            self.print(doc.stop)
        if doc.step is not None:
            self.write(":")
            self.print(doc.step)

    # -- statements ----------------------------------------------------------------------
    def print_StmtBlockDoc(self, doc: D.StmtBlockDoc) -> None:
        for i, stmt in enumerate(doc.stmts):
            if i:
                self.newline()
            self.print(stmt)

    def _unpacked(self, doc: D.ExprDoc) -> None:
        if isinstance(doc, D.TupleDoc) and len(doc.elements) != 1:
            self.joined(doc.elements)
        else:
            self.print(doc)

    def print_AssignDoc(self, doc: D.AssignDoc) -> None:
        if isinstance(doc.lhs, D.TupleDoc):
            self.joined(doc.lhs.elements)
        else:
            self.print(doc.lhs)
        if doc.annotation is not None:
            self.write(": ")
            self.print(doc.annotation)
        if doc.rhs is not None:
            self.write(" = ")
            self._unpacked(doc.rhs)

    def print_ExprStmtDoc(self, doc: D.ExprStmtDoc) -> None:
        self.print(doc.expr)

    def print_AssertDoc(self, doc: D.AssertDoc) -> None:
        self.write("assert ")
        self.print(doc.test)
        if doc.msg is not None:
            self.write(", ")
            self.print(doc.msg)

    def print_ReturnDoc(self, doc: D.ReturnDoc) -> None:
        self.write("return ")
        self.print(doc.value)

    def print_IfDoc(self, doc: D.IfDoc) -> None:
        self.write("if ")
        self.print(doc.predicate)
        self.write(":")
        self.indented_block(doc.then_branch)
        if doc.else_branch:
            self.newline()
            self.write("else:")
            self.indented_block(doc.else_branch)

    def print_WhileDoc(self, doc: D.WhileDoc) -> None:
        self.write("while ")
        self.print(doc.predicate)
        self.write(":")
        self.indented_block(doc.body)

    def print_ForDoc(self, doc: D.ForDoc) -> None:
        self.write("for ")
        if isinstance(doc.lhs, D.TupleDoc):
            self.joined(doc.lhs.elements)
            if len(doc.lhs.elements) == 1:
                self.write(",")
        else:
            self.print(doc.lhs)
        self.write(" in ")
        self.print(doc.rhs)
        self.write(":")
        self.indented_block(doc.body)

    def print_ScopeDoc(self, doc: D.ScopeDoc) -> None:
        self.write("with ")
        self.print(doc.rhs)
        if doc.lhs is not None:
            self.write(" as ")
            self.print(doc.lhs)
        self.write(":")
        self.indented_block(doc.body)

    def print_FunctionDoc(self, doc: D.FunctionDoc) -> None:
        for dec in doc.decorators:
            self.write("@")
            self.print(dec)
            self.newline()
        self.write("def ")
        self.print(doc.name)
        self.write("(")
        self.joined(doc.args)
        self.write(")")
        if doc.return_type is not None:
            self.write(" -> ")
            self.print(doc.return_type)
        self.write(":")
        self.indented_block(doc.body)
        self.write("\n")  # a blank line after every function, as TVM

    def print_ClassDoc(self, doc: D.ClassDoc) -> None:
        for dec in doc.decorators:
            self.write("@")
            self.print(dec)
            self.newline()
        self.write("class ")
        self.print(doc.name)
        self.write(":")
        self.indented_block(doc.body)

    def print_CommentDoc(self, doc: D.CommentDoc) -> None:
        lines = doc.comment.split("\n") if doc.comment else []
        for i, line in enumerate(lines):
            if i:
                self.newline()
            self.write("# " + line)


def to_python(doc: D.Doc, indent_spaces: int = 4, spans: list | None = None) -> str:
    """The Python text of ``doc``, without trailing whitespace on any line or at the end.

    With a list ``spans``, appends ``(first line, last line, source_nodes)`` for every
    statement doc that records the IR nodes it was printed from."""
    printer = PythonDocPrinter(indent_spaces, spans)
    printer.print(doc)
    text = "".join(printer.out)
    return "\n".join(line.rstrip() for line in text.split("\n")).rstrip()
