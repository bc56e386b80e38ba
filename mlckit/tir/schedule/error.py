"""ScheduleError: what a schedule primitive could not do, and why — shown on the IR."""

from __future__ import annotations

from mlckit.error import TVMError


class ScheduleError(TVMError, ValueError):
    """A primitive's precondition does not hold; the schedule is left unchanged.

    The message names the primitive, the blocks or loops involved and the violated
    condition; raised from a schedule, it also shows the function as it was, with the loops
    and blocks the primitive was given underlined, as TVM does::

        ScheduleError: split: the product of the factors (3 * 4 = 12) is smaller than the
        extent 128 of loop `j`
        The IR, with the loop or block marked:
        ...
                for j in range(128):
                ^^^^^^^^^^^^^^^^^^^^
    """

    def __init__(self, primitive: str, message: str, locations=()):
        self.primitive = primitive
        self.detail = message
        self.locations = list(locations)
        self.func = None  # the PrimFunc the IR part shows (set by the schedule)
        self._rendered: str | None = None
        super().__init__(self.short)

    @property
    def short(self) -> str:
        """The message without the IR: ``ScheduleError: <primitive>: <what and why>``."""
        return f"ScheduleError: {self.primitive}: {self.detail}"

    def attach_ir(self, func, stmts) -> None:
        """Show ``func`` with ``stmts`` (the primitive's loops and blocks) underlined; the
        error's own ``locations``, when it names them, are marked instead."""
        marked = [s for s in (self.locations or stmts) if s is not None]
        if func is None or not marked or self.func is not None:
            return
        self.func, self.locations = func, marked

    def __str__(self) -> str:
        if self.func is None:
            return self.short
        if self._rendered is None:  # printing is costly: only when the message is read
            self._rendered = self.short + "\n" + marked_script(self.func, self.locations)
        return self._rendered


def marked_script(func, stmts) -> str:
    """``func``'s TVMScript with a ``^^^^`` line under the first line of each of ``stmts``."""
    from mlckit.script.printer import script_with_line_map

    text = script_with_line_map(func)
    first_lines = set()
    for stmt in stmts:
        lines = text.node_lines(stmt) or [  # a block's `with T.block` line is its realize's
            n for n, nodes in text.line_to_nodes.items()
            if any(getattr(x, "block", None) is stmt for x in nodes)]
        if lines:
            first_lines.add(min(lines))
    out = ["The IR, with the loop or block marked:"]
    for number, line in enumerate(text.splitlines(), 1):
        out.append(line)
        if number in first_lines:
            indent = len(line) - len(line.lstrip())
            out.append(" " * indent + "^" * (len(line) - indent))
    return "\n".join(out)
