"""``gpu_view(func, *arrays)``: a picture of what every GPU thread reads and writes.

The kernel runs on the CPU as a GPU would run it, every access recorded
(:func:`mlckit.backend.numba_cuda.record.record_accesses`); this module only draws the
record, in the spirit of srush's GPU-Puzzles:

- per buffer, a grid of its elements (the part one thread block touches), each coloured by
  the thread that writes it (full colour) or first reads it (pale), with the number of
  accesses in it, the threads in its tooltip and races outlined in red;
- per buffer and kind of access, a grid of the block's threads with the count of each;
- the uncoalesced global accesses, the shared-memory bank conflicts and the races, each
  naming the access site.

The HTML uses inline styles only (no ``<script>``, no ``<style>``), so it renders in an
untrusted notebook too, and scrolls inside its own box.  ``str(view)`` is the plain-text form.

Example::

    from mlckit.notebook.gpu_view import gpu_view, record_accesses
    view = gpu_view(sch.mod["main"], a, b)       # b receives the kernel's result
    view                                         # in a notebook: the picture
    print(view)                                  # in a terminal: the summary
    gpu_view(sch.mod["main"], a, b, sync=False).log.races[0]   # the barrier left out
"""

from __future__ import annotations

import colorsys
import html
import math
from functools import cached_property

import numpy as np

from mlckit.backend.numba_cuda.access_log import AccessLog
from mlckit.backend.numba_cuda.record import record_accesses
from mlckit.error import TVMValueError

__all__ = ["GpuView", "gpu_view", "record_accesses"]

MAX_CELLS = 2048  # elements drawn per buffer grid
MAX_LISTED = 50  # races, conflicts ... listed in the HTML
# a cell's own style; its row (ROW) sets what cells inherit (font, alignment)
CELL = "display:inline-block;width:18px;height:16px;margin-right:1px;text-align:center;"
ROW = "white-space:nowrap;height:17px;font-size:9px;line-height:16px;text-align:left;color:#222"
BOX = ("max-width:100%;max-height:900px;overflow:auto;border:1px solid #ccc;padding:6px;"
       "font-family:monospace;font-size:12px;color:#222;background-color:#fff;")


def gpu_view(func, *arrays, sync: bool = True, block=0, target=None) -> GpuView:
    """Run the thread-bound ``func`` on ``arrays`` (writing its outputs into them), recording
    every access, and return the view of thread block ``block`` (an id or coordinates).

    ``sync=False`` leaves out the barriers mlckit would insert, to see the races a missing
    ``T.tvm_storage_sync("shared")`` causes.

    Example::

        gpu_view(sch.mod["main"], a, b)
    """
    log = record_accesses(func, *arrays, sync=sync, target=target)
    return GpuView(log, block)


def _colour(thread: int, n: int, pale: bool = False) -> str:
    hue = 0.85 * thread / max(n - 1, 1)
    r, g, b = colorsys.hsv_to_rgb(hue, 0.22 if pale else 0.6, 1.0 if pale else 0.95)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


class GpuView:
    """The picture of an :class:`AccessLog` for one thread block of each launch: ``log``,
    ``block`` (the block's linear id); ``_repr_html_`` and ``str``.

    >>> import numpy as np
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    ...     for i in T.thread_binding(64, thread="threadIdx.x"):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(64, i)
    ...             B[vi] = A[vi]
    >>> a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    >>> view = gpu_view(copy, a, b)
    >>> print(str(view).splitlines()[2])
      B (global, float32[64]): writes per thread 1
    >>> view.log.race_count, bool((b == a).all())
    (0, True)
    """

    def __init__(self, log: AccessLog, block=0):
        self.log = log
        if not log.kernels:
            raise TVMValueError("gpu_view: the function launched no kernel")
        k = log.kernels[0]
        self.block = log._linear(block, k.grid)
        for kern in log.kernels:
            if not 0 <= self.block < kern.n_blocks:
                raise TVMValueError(f"gpu_view: block {block} is outside the grid {kern.grid} "
                                    f"of {kern.name}")

    # -- what is drawn ----------------------------------------------------------------------
    @cached_property
    def _race_elements(self) -> list[tuple]:
        """(buffer, launch, block, flat element, between blocks) of every racing group."""
        log = self.log
        return [(int(log.buffer_of[g[0]]), int(log.launch[g[0]]), int(log.block[g[0]]),
                 int(log.flat[g[0]]), between) for between, g in log._race_groups]

    def element_grid(self, buffer, launch: int = 0) -> dict:
        """The drawn part of ``buffer`` for the selected block: ``rows`` and ``cols`` (ranges
        of the rows, the leading dimensions flattened, and of the last dimension),
        ``count`` / ``writer`` / ``reader`` (arrays over the buffer's flat elements: accesses,
        the lowest writing and reading thread, -1 for none) and ``racy`` (flat elements)."""
        log = self.log
        bi = log.buffer_index(buffer)
        buf = log.buffers[bi]
        size = math.prod(buf.shape)
        sel = np.flatnonzero((log.buffer_of == bi) & (log.launch == launch)
                             & (log.block == self.block))
        flat, thread, write = log.flat[sel], log.thread[sel], log.is_write[sel]
        big = np.iinfo(np.int64).max
        writer = np.full(size, big)
        reader = np.full(size, big)
        np.minimum.at(writer, flat[write], thread[write])
        np.minimum.at(reader, flat[~write], thread[~write])
        writer[writer == big] = -1
        reader[reader == big] = -1
        cols_n = buf.shape[-1] if len(buf.shape) > 1 else min(size, 32)
        rows_n = -(-size // cols_n)
        if len(flat):
            r, c = flat // cols_n, flat % cols_n
            rows = range(int(r.min()), int(r.max()) + 1)
            cols = range(int(c.min()), int(c.max()) + 1)
        else:
            rows, cols = range(0), range(0)
        if len(rows) * len(cols) > MAX_CELLS:
            rows = range(rows.start, rows.start + max(1, MAX_CELLS // max(len(cols), 1)))
        racy = {f for b, lk, blk, f, between in self._race_elements
                if b == bi and lk == launch and (between or blk == self.block)}
        return {"rows": rows, "cols": cols, "cols_n": cols_n, "rows_n": rows_n,
                "count": np.bincount(flat, minlength=size), "writer": writer,
                "reader": reader, "racy": racy, "flat": flat, "thread": thread, "write": write}

    # -- HTML ---------------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        log = self.log
        parts = [f'<div style="{BOX}">']
        for k, kern in enumerate(log.kernels):
            b, _ = log.coords(k, self.block, 0)
            parts.append(f'<div style="font-weight:bold;font-size:13px;margin:4px 0">'
                         f'{html.escape(kern.name)}: grid {kern.grid}, block {kern.block} '
                         f'&#8212; showing thread block {b}</div>')
            parts.append(self._legend(kern))
            for bi, buf in enumerate(log.buffers):
                if buf.scope != "local" and np.any((log.buffer_of == bi) & (log.launch == k)):
                    parts.append(self._buffer_html(bi, k))
            parts.append(self._counts_html(k))
        parts.append(self._lists_html())
        parts.append("</div>")
        return "".join(parts)

    def _legend(self, kern) -> str:
        n = kern.n_threads
        step = max(1, n // 64)
        cells = "".join(f'<span title="thread {t}" style="{CELL}width:6px;margin:0;'
                        f'background-color:{_colour(t, n)}"></span>' for t in range(0, n, step))
        return (f'<div style="margin:2px 0 6px 0">thread colours (0 &#8594; {n - 1}): {cells}'
                f' &#160; full colour: written by, pale: read by; red outline: a race</div>')

    def _buffer_html(self, bi: int, launch: int) -> str:
        log, buf = self.log, self.log.buffers[bi]
        g = self.element_grid(bi, launch)
        n = log.kernels[launch].n_threads
        head = (f'<div style="margin:8px 0 2px 0"><b>{html.escape(buf.name)}</b> '
                f'({buf.scope}, {buf.dtype}{list(buf.shape)})')
        if not len(g["rows"]):
            return head + " &#8212; not touched by this block</div>"
        shown = f"rows {g['rows'].start}..{g['rows'].stop - 1}, " \
                f"columns {g['cols'].start}..{g['cols'].stop - 1}"
        if len(buf.shape) == 1:
            shown = f"elements {g['rows'].start * g['cols_n']}.." \
                    f"{min(g['rows'].stop * g['cols_n'], math.prod(buf.shape)) - 1}, " \
                    f"{g['cols_n']} a row"
        out = [head, f" &#8212; {shown}</div><div style=\"white-space:nowrap\">"]
        threads_at = _threads_by_element(g)
        g["name"] = self._thread_name(launch)
        size = math.prod(buf.shape)
        for r in g["rows"]:
            out.append(f'<div style="{ROW}">')
            for c in g["cols"]:
                f = r * g["cols_n"] + c
                if f >= size:
                    break
                out.append(self._cell(buf, f, g, threads_at.get(f), n))
            out.append("</div>")
        out.append("</div>")
        return "".join(out)

    def _cell(self, buf, f: int, g: dict, threads, n: int) -> str:
        count = int(g["count"][f])
        if not count:
            return f'<span style="{CELL}background-color:#f2f2f2"></span>'
        w, r = int(g["writer"][f]), int(g["reader"][f])
        colour = _colour(w, n) if w >= 0 else _colour(r, n, pale=True)
        outline = "outline:2px solid #d00;outline-offset:-2px;" if f in g["racy"] else ""
        index = ", ".join(str(int(i)) for i in np.unravel_index(f, buf.shape))
        title = f"{buf.name}[{index}]"
        if threads:
            writes, reads = threads
            if writes:
                title += f"; written by thread {_few([g['name'](t) for t in writes[:5]], len(writes))}"
            if reads:
                title += f"; read by thread {_few([g['name'](t) for t in reads[:5]], len(reads))}"
        if f in g["racy"]:
            title += "; RACE"
        return (f'<span title="{html.escape(title)}" style="{CELL}{outline}'
                f'background-color:{colour}">{count}</span>')

    def _thread_name(self, launch: int):
        """Thread ids as the learner writes them: ``5`` in one dimension, else ``(tx, ty)``."""
        log = self.log
        if len(log.kernels[launch].block) == 1:
            return str
        return lambda t: str(log.coords(launch, 0, t)[1])

    def _counts_html(self, launch: int) -> str:
        log, kern = self.log, self.log.kernels[launch]
        n = kern.n_threads
        width = kern.block[0] if len(kern.block) > 1 else min(n, 32)
        out = ['<div style="margin:10px 0 2px 0"><b>accesses per thread</b> of this block '
               f'(where they differ: threads in rows of {width}, hover for the thread)</div>']
        same = []
        name = self._thread_name(launch)
        for bi, buf in enumerate(log.buffers):
            for kind in ("read", "write"):
                c = log.counts(bi, kind, launch)
                if not c.any():
                    continue
                row = c[self.block]
                label = f"{html.escape(buf.name)} ({buf.scope}) {kind}s: {_range_text(row)}"
                if row.min() == row.max():  # every thread the same: one number says it
                    same.append(label)
                    continue
                out.append(f'<div style="display:inline-block;vertical-align:top;margin:0 12px '
                           f'8px 0"><div>{label}</div>')
                for start in range(0, n, width):
                    out.append(f'<div style="{ROW}">')
                    for t in range(start, min(start + width, n)):
                        out.append(f'<span title="thread {name(t)}: {int(row[t])} {kind}s" '
                                   f'style="{CELL}background-color:{_colour(t, n, pale=True)}">'
                                   f'{int(row[t])}</span>')
                    out.append("</div>")
                out.append("</div>")
        if same:
            out.insert(1, f'<div>every thread: {"; ".join(same)}</div>')
        return "".join(out)

    def _lists_html(self) -> str:
        log = self.log
        out = []
        lists = [("uncoalesced global accesses", log.uncoalesced, None),
                 ("shared-memory bank conflicts", log.bank_conflicts, None),
                 ("races", log.races, log.race_count)]
        if log.divergent_barriers:
            lists.insert(2, ("barriers not every thread reaches", log.divergent_barriers, None))
        for title, items, total in lists:
            count = total if total is not None else len(items)
            colour = "#a00" if count else "#070"
            out.append(f'<div style="margin:8px 0 2px 0;color:{colour}"><b>{title}: '
                       f'{count or "none"}</b></div>')
            if items:
                out.append('<ul style="margin:0;padding-left:20px">')
                out += [f"<li>{html.escape(str(x))}</li>" for x in items[:MAX_LISTED]]
                if count > MAX_LISTED:
                    out.append(f"<li>&#8230; and {count - MAX_LISTED} more</li>")
                out.append("</ul>")
        return "".join(out)

    # -- text ---------------------------------------------------------------------------------
    def __str__(self) -> str:
        return str(self.log)

    def __repr__(self) -> str:
        return f"<GpuView of block {self.block}: {self.log!r}>"


def _threads_by_element(g: dict) -> dict:
    """flat element -> (writing threads, reading threads), for the elements drawn."""
    out: dict = {}
    order = np.lexsort((g["thread"], g["flat"]))
    for f, t, w in zip(g["flat"][order].tolist(), g["thread"][order].tolist(),
                       g["write"][order].tolist()):
        entry = out.setdefault(f, ([], []))
        lst = entry[0] if w else entry[1]
        if not lst or lst[-1] != t:
            lst.append(t)
    return out


def _few(items, total: int, limit: int = 4) -> str:
    text = ", ".join(str(x) for x in items[:limit])
    return text + (f" and {total - limit} more" if total > limit else "")


def _range_text(row) -> str:
    lo, hi = int(row.min()), int(row.max())
    return str(lo) if lo == hi else f"{lo}..{hi}"
