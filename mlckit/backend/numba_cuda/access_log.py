"""What every GPU thread touched: the record of :func:`.record.record_accesses` and what it
tells.

Each access of a buffer by one thread is a row: the access site (a ``BufferLoad`` or
``BufferStore`` of the lowered TIR), its dynamic execution, the barrier interval, the kernel
launch, the block and thread (linear ids, x fastest: ``tx + bdx * (ty + bdy * tz)``, as
CUDA numbers threads into warps) and the flat element.  From the rows:

- **counts**: reads and writes of each buffer per thread (``counts``, ``count``);
- **coalescing** of global accesses, per warp of 32 consecutive threads of a block and per
  execution of an access site (one instruction; a ``T.vectorized`` loop is one vector
  instruction).  The *sectors* of an execution are the distinct 32-byte segments its
  threads' elements lie in (offsets from the buffer's start, which is 32-byte aligned);
  the *minimum* is the number of 32-byte segments the same number of distinct elements
  would lie in were they contiguous from the lowest address touched.  An execution is
  uncoalesced when its sectors exceed that minimum (a stride between threads, a column
  walked by ``threadIdx.x``); a broadcast (every thread the same element) or a contiguous
  run at any offset is not.  128-byte lines are counted alongside (``lines``, ``min_lines``);
- **bank conflicts** of shared accesses, per warp and execution: shared memory has 32 banks
  of 4-byte words (word ``w`` in bank ``w % 32``, each buffer starting at bank 0); threads
  reading the same word share it (a broadcast), distinct words in one bank are served one
  after another.  The *ways* of an execution are the most distinct words in one bank, its
  minimum ``ceil(distinct words / 32)``; more ways than that is a conflict;
- **races**: two threads touching the same element of a buffer, at least one writing, with
  nothing ordering them: in the same barrier interval of the same block (shared and global
  memory), or in two different blocks of one launch (global memory; barriers order only a
  block's own threads).  Local memory is each thread's own.

Example::

    log = record_accesses(sch.mod["main"], a, b)
    log.count("A_shared", "write", block=0, thread=5)    # 1 (the cooperative fetch)
    log.uncoalesced, log.bank_conflicts, log.races
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from mlckit.error import TVMKeyError, TVMValueError

__all__ = ["AccessLog", "BankConflict", "BufferInfo", "Coalescing", "DivergentBarrier",
           "KernelInfo", "Race",
           "RaceAccess", "Site", "ThreadAccess"]

WARP = 32
SECTOR = 32
LINE = 128
BANKS = 32
WORD = 4
MAX_RACES = 1000


@dataclass(frozen=True)
class BufferInfo:
    """A buffer the kernels touched: its name, storage scope, shape, dtype, element size."""

    name: str
    scope: str
    shape: tuple
    dtype: str
    itemsize: int


@dataclass(frozen=True)
class Site:
    """An access site: a load or store of the lowered TIR (``text``) in block ``block``."""

    index: int
    buffer: int
    kind: str  # "read" or "write"
    text: str
    block: str
    kernel: str

    def __str__(self):
        return f"`{self.text}`" + (f" (block {self.block!r})" if self.block else "")


@dataclass(frozen=True)
class KernelInfo:
    """A kernel launch: its grid and block extents (x first)."""

    name: str
    grid: tuple
    block: tuple

    @property
    def n_threads(self) -> int:
        return math.prod(self.block)

    @property
    def n_blocks(self) -> int:
        return math.prod(self.grid)


@dataclass(frozen=True)
class Coalescing:
    """The global accesses of one site, per warp execution (see the module's docstring)."""

    site: Site
    buffer: str
    executions: int  # warp executions of the site
    uncoalesced: int  # of them, how many touch more sectors than the minimum
    sectors: int  # summed over the executions
    min_sectors: int
    lines: int
    min_lines: int
    example: tuple | None  # (kernel, block, warp, sectors, minimum) of the first uncoalesced

    def __str__(self):
        where = ""
        if self.example:
            k, block, warp, sectors, least = self.example
            where = f"; e.g. block {block} warp {warp}: {sectors} sectors for {least}"
        return (f"{self.buffer}: {self.site}: {self.uncoalesced} of {self.executions} warp "
                f"accesses uncoalesced, {self.sectors} 32-byte sectors where {self.min_sectors} "
                f"would do{where}")


@dataclass(frozen=True)
class BankConflict:
    """The shared accesses of one site that conflict (see the module's docstring)."""

    site: Site
    buffer: str
    executions: int
    conflicted: int
    max_ways: int
    # (kernel, block, warp, bank, threads, words) of the worst: the distinct words of the
    # bank and, for each, the first thread reading it
    example: tuple | None

    def __str__(self):
        where = ""
        if self.example:
            _, block, warp, bank, threads, words = self.example
            where = (f"; e.g. block {block} warp {warp}: bank {bank} serves "
                     f"{len(words)} words ({', '.join(map(str, words))}) to threads "
                     f"{', '.join(map(str, threads))}")
        return (f"{self.buffer}: {self.site}: {self.conflicted} of {self.executions} warp "
                f"accesses conflict, up to {self.max_ways}-way{where}")


@dataclass(frozen=True)
class DivergentBarrier:
    """A ``T.tvm_storage_sync`` that only some threads of a block reach (it sits under a
    condition on the thread index): undefined on a GPU, the block may hang."""

    kernel: str
    block: tuple  # the first such block
    reached: int  # by how many of its threads
    threads: int
    where: str  # the TIR block around it
    blocks: int  # how many thread blocks it splits

    def __str__(self):
        where = f" in block {self.where!r}" if self.where else ""
        return (f"{self.kernel}: a barrier{where} is reached by {self.reached} of the "
                f"{self.threads} threads of block {self.block} (and splits {self.blocks} "
                "block(s)): every thread of a block must reach it, or none")


@dataclass(frozen=True)
class ThreadAccess:
    """One access of one thread: ``buffer[element]``, read or written, in barrier
    ``interval``, at ``site``."""

    buffer: str
    scope: str
    kind: str
    element: tuple
    interval: int
    site: Site

    def __str__(self):
        idx = ", ".join(str(i) for i in self.element)
        return f"{self.kind:5} {self.buffer}[{idx}] ({self.scope}) interval {self.interval}"


@dataclass(frozen=True)
class RaceAccess:
    """One side of a race: the thread (block and thread coordinates, x first), its access."""

    block: tuple
    thread: tuple
    kind: str
    site: Site

    def __str__(self):
        verb = "writes" if self.kind == "write" else "reads"
        return f"block {self.block} thread {self.thread} {verb} it at {self.site}"


@dataclass(frozen=True)
class Race:
    """Two threads touch ``buffer[element]``, at least one writing, unordered: in one barrier
    ``interval`` of one block, or (``between_blocks``) in two blocks of one launch."""

    buffer: str
    scope: str
    element: tuple
    interval: int
    between_blocks: bool
    first: RaceAccess
    second: RaceAccess

    def __str__(self):
        when = ("in different blocks" if self.between_blocks
                else f"in barrier interval {self.interval}")
        idx = ", ".join(str(i) for i in self.element)
        return f"race on {self.buffer}[{idx}] ({self.scope}) {when}: {self.first}; {self.second}"


class AccessLog:
    """Every access of every thread, and the counts, coalescing, bank conflicts and races
    they show (see the module's docstring)."""

    def __init__(self, buffers, sites, kernels, *, site, exec_id, interval, launch, block,
                 thread, flat, divergent_barriers=()):
        self.buffers: list[BufferInfo] = list(buffers)
        self.sites: list[Site] = list(sites)
        self.kernels: list[KernelInfo] = list(kernels)
        self.site, self.exec_id, self.interval = site, exec_id, interval
        self.launch, self.block, self.thread, self.flat = launch, block, thread, flat
        # barriers under a condition some threads of a block fail (see DivergentBarrier)
        self.divergent_barriers: list[DivergentBarrier] = list(divergent_barriers)
        site_buffer = np.array([s.buffer for s in self.sites] or [0], np.int64)
        site_write = np.array([s.kind == "write" for s in self.sites] or [False])
        self.buffer_of = site_buffer[site] if len(site) else np.zeros(0, np.int64)
        self.is_write = site_write[site] if len(site) else np.zeros(0, bool)

    def __len__(self) -> int:
        return len(self.site)

    # -- look-ups ---------------------------------------------------------------------------
    def buffer_index(self, name) -> int:
        if isinstance(name, int):
            return name
        for k, b in enumerate(self.buffers):
            if b.name == name:
                return k
        raise TVMKeyError(f"no buffer {name!r} was accessed; the kernels touched "
                          f"{', '.join(b.name for b in self.buffers)}")

    def coords(self, launch: int, block: int, thread: int) -> tuple[tuple, tuple]:
        """(block coordinates, thread coordinates), x first, of linear ids in ``launch``."""
        k = self.kernels[launch]
        return _coords(block, k.grid), _coords(thread, k.block)

    def _linear(self, value, dims) -> int:
        if isinstance(value, (int, np.integer)):
            return int(value)
        value = tuple(value)
        if len(value) != len(dims):
            raise TVMValueError(f"coordinates {value} do not match the extents {dims}")
        out = 0
        for v, d in zip(reversed(value), reversed(dims)):
            out = out * d + int(v)
        return out

    # -- counts -----------------------------------------------------------------------------
    def counts(self, buffer, kind: str = "read", launch: int = 0) -> np.ndarray:
        """Accesses of ``buffer`` (``kind`` "read" or "write") per thread of ``launch``: an
        array ``[block, thread]`` of linear ids."""
        if kind not in ("read", "write"):
            raise TVMValueError(f"kind is 'read' or 'write', got {kind!r}")
        k = self.kernels[launch]
        sel = ((self.buffer_of == self.buffer_index(buffer)) & (self.launch == launch)
               & (self.is_write == (kind == "write")))
        ids = self.block[sel] * k.n_threads + self.thread[sel]
        return np.bincount(ids, minlength=k.n_blocks * k.n_threads).reshape(
            k.n_blocks, k.n_threads)

    def count(self, buffer, kind: str = "read", block=0, thread=0, launch: int = 0) -> int:
        """Accesses of ``buffer`` by one thread (coordinates as tuples, x first, or ids)."""
        k = self.kernels[launch]
        return int(self.counts(buffer, kind, launch)[self._linear(block, k.grid),
                                                     self._linear(thread, k.block)])

    def scope_counts(self, scope: str, kind: str = "read", launch: int = 0) -> np.ndarray:
        """Accesses of all buffers in ``scope`` ("global", "shared" or "local") per thread of
        ``launch``, as :meth:`counts` (GPU-Puzzles' "global reads per thread")."""
        k = self.kernels[launch]
        out = np.zeros((k.n_blocks, k.n_threads), np.int64)
        for bi, buf in enumerate(self.buffers):
            if buf.scope == scope:
                out += self.counts(bi, kind, launch)
        return out

    def thread_accesses(self, block=0, thread=0, launch: int = 0) -> list[ThreadAccess]:
        """Everything one thread did, in its order: each access's buffer, scope, kind,
        element, barrier interval and site.

        Example::

            for a in log.thread_accesses(block=0, thread=1): print(a)
        """
        k = self.kernels[launch]
        rows = np.flatnonzero((self.launch == launch)
                              & (self.block == self._linear(block, k.grid))
                              & (self.thread == self._linear(thread, k.block)))
        out = []
        for r in rows:
            buf = self.buffers[int(self.buffer_of[r])]
            element = tuple(int(i) for i in np.unravel_index(int(self.flat[r]), buf.shape))
            out.append(ThreadAccess(buf.name, buf.scope, "write" if self.is_write[r] else "read",
                                    element, int(self.interval[r]),
                                    self.sites[int(self.site[r])]))
        return out

    def elements(self, buffer, kind: str = "read", block=0, thread=0,
                 launch: int = 0) -> list[tuple]:
        """The elements of ``buffer`` one thread read (or wrote), in the order it did.

        Example::

            log.elements("A", "read", block=(1,), thread=(0,))   # [(64,), (128,)]
        """
        k = self.kernels[launch]
        bi = self.buffer_index(buffer)
        sel = ((self.buffer_of == bi) & (self.launch == launch)
               & (self.is_write == (kind == "write"))
               & (self.block == self._linear(block, k.grid))
               & (self.thread == self._linear(thread, k.block)))
        shape = self.buffers[bi].shape
        return [tuple(int(i) for i in np.unravel_index(f, shape)) for f in self.flat[sel]]

    # -- coalescing ---------------------------------------------------------------------------
    @cached_property
    def coalescing(self) -> list[Coalescing]:
        """Per site of a global buffer: its warp executions and how many are uncoalesced."""
        scope = np.array([b.scope == "global" for b in self.buffers] or [False])
        sel = np.flatnonzero(scope[self.buffer_of]) if len(self) else np.zeros(0, np.int64)
        if not len(sel):
            return []
        isz = np.array([b.itemsize for b in self.buffers])[self.buffer_of[sel]]
        addr = self.flat[sel] * isz
        gid, first = self._warp_groups(sel)
        n = len(first)
        elem_keys = _unique_pairs(gid, self.flat[sel])
        n_elem = np.bincount(elem_keys[0], minlength=n)
        min_addr = np.full(n, np.iinfo(np.int64).max)
        np.minimum.at(min_addr, gid, addr)
        g_isz = np.zeros(n, np.int64)
        g_isz[gid] = isz
        sectors = np.bincount(_unique_pairs(gid, addr // SECTOR)[0], minlength=n)
        lines = np.bincount(_unique_pairs(gid, addr // LINE)[0], minlength=n)
        end = min_addr + n_elem * g_isz - 1
        least = end // SECTOR - min_addr // SECTOR + 1
        least_lines = end // LINE - min_addr // LINE + 1
        bad = sectors > least
        rows = first  # one record of each group, to read its site, launch, block, thread
        out = []
        g_site = self.site[rows]
        for s in np.unique(g_site):
            g = np.flatnonzero(g_site == s)
            flagged = g[bad[g]]
            example = None
            if len(flagged):
                r = rows[flagged[0]]
                lk = int(self.launch[r])
                b, _ = self.coords(lk, int(self.block[r]), 0)
                example = (self.kernels[lk].name, b, int(self.thread[r]) // WARP,
                           int(sectors[flagged[0]]), int(least[flagged[0]]))
            site = self.sites[int(s)]
            out.append(Coalescing(site, self.buffers[site.buffer].name, len(g), len(flagged),
                                  int(sectors[g].sum()), int(least[g].sum()),
                                  int(lines[g].sum()), int(least_lines[g].sum()), example))
        return out

    @property
    def uncoalesced(self) -> list[Coalescing]:
        """The sites of :attr:`coalescing` with at least one uncoalesced warp access."""
        return [c for c in self.coalescing if c.uncoalesced]

    def _warp_groups(self, sel):
        """(group id per selected row, first row of each group): one group per execution of
        a site by one warp of one block."""
        keys = (self.thread[sel] // WARP, self.block[sel], self.exec_id[sel], self.site[sel])
        order = np.lexsort(keys)
        sorted_keys = [k[order] for k in keys]
        change = np.zeros(len(order), bool)
        change[0] = True
        for k in sorted_keys:
            change[1:] |= k[1:] != k[:-1]
        gid_sorted = np.cumsum(change) - 1
        gid = np.empty(len(order), np.int64)
        gid[order] = gid_sorted
        return gid, sel[order[change]]

    # -- bank conflicts -----------------------------------------------------------------------
    @cached_property
    def bank_conflicts(self) -> list[BankConflict]:
        """Per site of a shared buffer with conflicting warp accesses: how many, how bad."""
        scope = np.array([b.scope == "shared" for b in self.buffers] or [False])
        sel = np.flatnonzero(scope[self.buffer_of]) if len(self) else np.zeros(0, np.int64)
        if not len(sel):
            return []
        isz = np.array([b.itemsize for b in self.buffers])[self.buffer_of[sel]]
        gid, first = self._warp_groups(sel)
        n = len(first)
        words_per = np.maximum(1, isz // WORD)
        rep = np.repeat(np.arange(len(sel)), words_per)
        offset = np.arange(len(rep)) - np.repeat(np.cumsum(words_per) - words_per, words_per)
        word = self.flat[sel][rep] * isz[rep] // WORD + offset
        wgid, wword = _unique_pairs(gid[rep], word)
        n_words = np.bincount(wgid, minlength=n)
        bgid, bbank = wgid, wword % BANKS
        per_bank = np.zeros((n, BANKS), np.int64)
        np.add.at(per_bank, (bgid, bbank), 1)
        ways = per_bank.max(axis=1)
        least = -(-n_words // BANKS)
        bad = ways > least
        out = []
        g_site = self.site[first]
        for s in np.unique(g_site):
            g = np.flatnonzero(g_site == s)
            flagged = g[bad[g]]
            if not len(flagged):
                continue
            worst = flagged[np.argmax(ways[flagged])]
            bank = int(np.argmax(per_bank[worst]))
            r = first[worst]
            lk = int(self.launch[r])
            rows = sel[(gid == worst)]
            row_words = self.flat[rows] * int(isz[gid == worst][0]) // WORD
            in_bank = row_words % BANKS == bank
            b, _ = self.coords(lk, int(self.block[r]), 0)
            words, at = np.unique(row_words[in_bank], return_index=True)
            threads = tuple(int(t) for t in self.thread[rows][in_bank][at])
            words = tuple(int(w) for w in words)
            site = self.sites[int(s)]
            out.append(BankConflict(site, self.buffers[site.buffer].name, len(g), len(flagged),
                                    int(ways[flagged].max()),
                                    (self.kernels[lk].name, b, int(self.thread[r]) // WARP, bank,
                                     threads, words)))
        return out

    # -- races --------------------------------------------------------------------------------
    @cached_property
    def _race_groups(self) -> list:
        """[(between_blocks, rows of one racy element group)], in a fixed order."""
        found = []
        for bi, buf in enumerate(self.buffers):
            if buf.scope == "local":
                continue
            sel = np.flatnonzero(self.buffer_of == bi)
            if not len(sel):
                continue
            # one block, one barrier interval: two different threads, one writing
            found += [(False, g) for g in _racy(
                sel, (self.flat[sel], self.interval[sel], self.block[sel], self.launch[sel]),
                self.thread[sel], self.is_write[sel])]
            if buf.scope == "global":  # different blocks of one launch: nothing orders them
                found += [(True, g) for g in _racy(
                    sel, (self.flat[sel], self.launch[sel]), self.block[sel],
                    self.is_write[sel])]
        return found

    @property
    def race_count(self) -> int:
        """How many (element, interval, block) groups race; :attr:`races` lists the first
        ones (at most 1000)."""
        return len(self._race_groups)

    @cached_property
    def races(self) -> list[Race]:
        """The races: per element (and barrier interval and block), the two threads."""
        return [self._race(between, rows) for between, rows in self._race_groups[:MAX_RACES]]

    def races_in(self, buffer) -> list[Race]:
        """The races on one buffer (at most 1000)."""
        bi = self.buffer_index(buffer)
        groups = [(b, g) for b, g in self._race_groups if self.buffer_of[g[0]] == bi]
        return [self._race(between, rows) for between, rows in groups[:MAX_RACES]]

    def _race(self, between: bool, rows) -> Race:
        # the writer with the lowest (block, thread), then the lowest other thread (in another
        # block when the race is between blocks), each at its first access in program order
        rows = rows[np.lexsort((rows, self.thread[rows], self.block[rows]))]
        writer = rows[self.is_write[rows]][0]
        if between:
            other = rows[self.block[rows] != self.block[writer]][0]
        else:
            other = rows[self.thread[rows] != self.thread[writer]][0]
        first, second = sorted((writer, other), key=lambda r: (self.block[r], self.thread[r]))
        buf = self.buffers[int(self.buffer_of[writer])]
        element = tuple(int(i) for i in np.unravel_index(int(self.flat[writer]), buf.shape))
        return Race(buf.name, buf.scope, element, int(self.interval[writer]), between,
                    self._race_access(first), self._race_access(second))

    def _race_access(self, r) -> RaceAccess:
        b, t = self.coords(int(self.launch[r]), int(self.block[r]), int(self.thread[r]))
        return RaceAccess(b, t, "write" if self.is_write[r] else "read",
                          self.sites[int(self.site[r])])

    # -- text -----------------------------------------------------------------------------------
    def summary_lines(self) -> list[str]:
        lines = []
        for k, kern in enumerate(self.kernels):
            lines.append(f"kernel {kern.name}: grid {kern.grid}, block {kern.block} "
                         f"({kern.n_blocks} x {kern.n_threads} threads)")
            for bi, buf in enumerate(self.buffers):
                parts = []
                for kind in ("read", "write"):
                    c = self.counts(bi, kind, k)
                    if c.any():
                        parts.append(f"{kind}s per thread {_spread(c)}")
                if parts:
                    lines.append(f"  {buf.name} ({buf.scope}, {buf.dtype}{list(buf.shape)}): "
                                 + ", ".join(parts))
        unc = self.uncoalesced
        lines.append(f"uncoalesced global accesses: {len(unc) or 'none'}")
        lines += [f"  {c}" for c in unc]
        bank = self.bank_conflicts
        lines.append(f"shared-memory bank conflicts: {len(bank) or 'none'}")
        lines += [f"  {b}" for b in bank]
        if self.divergent_barriers:
            lines.append(f"barriers not every thread reaches: {len(self.divergent_barriers)}")
            lines += [f"  {d}" for d in self.divergent_barriers]
        lines.append(f"races: {self.race_count or 'none'}")
        lines += [f"  {r}" for r in self.races[:10]]
        if self.race_count > 10:
            lines.append(f"  ... and {self.race_count - 10} more")
        return lines

    def __str__(self):
        return "\n".join(self.summary_lines())

    def __repr__(self):
        return (f"<AccessLog: {len(self)} accesses, {len(self.uncoalesced)} uncoalesced sites, "
                f"{len(self.bank_conflicts)} bank-conflict sites, {self.race_count} races>")


def _coords(linear: int, dims) -> tuple:
    out = []
    for d in dims:
        out.append(int(linear % d))
        linear //= d
    return tuple(out)


def _spread(c: np.ndarray) -> str:
    lo, hi = int(c.min()), int(c.max())
    return str(lo) if lo == hi else f"{lo}..{hi}"


def _unique_pairs(a, b):
    """The distinct (a, b) pairs, as two arrays."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    if not len(a):
        return a, b
    low = int(b.min())
    span = int(b.max()) - low + 1
    keys = np.sort(a * span + (b - low))  # one int64 per pair: a fast 1-D sort
    keep = np.ones(len(keys), bool)
    keep[1:] = keys[1:] != keys[:-1]
    keys = keys[keep]
    return keys // span, keys % span + low


def _racy(sel, keys, who, write) -> list:
    """Groups of ``sel`` (rows with equal ``keys``) where two different ``who`` (threads or
    blocks) meet and one row writes: a list of row arrays, in key order."""
    order = np.lexsort(keys)
    sk = [k[order] for k in keys]
    change = np.zeros(len(order), bool)
    change[0] = True
    for k in sk:
        change[1:] |= k[1:] != k[:-1]
    starts = np.flatnonzero(change)
    w = who[order]
    lo, hi = np.minimum.reduceat(w, starts), np.maximum.reduceat(w, starts)
    any_write = np.maximum.reduceat(write[order].astype(np.int8), starts) > 0
    ends = np.append(starts[1:], len(order))
    racy = np.flatnonzero((lo != hi) & any_write)
    return [sel[order[starts[g]:ends[g]]] for g in racy]
