"""The on-disk cache of compiled kernels: one folder per entry, a size bound, least recently
used entries evicted first.

``numba_cpu`` writes each generated module into a folder of its own,
``$MLCKIT_CACHE_DIR/numba/<name>_<digest>/`` (default ``~/.cache/mlckit``), where Numba's
``cache=True`` keeps the machine code beside it (``__pycache__``).  Using an entry touches
its folder (the module file itself keeps its time: Numba's cache checks it), so the folder's
time is the entry's last use.  The first time a process adds an entry, the cache is trimmed:
while it holds more than ``MLCKIT_CACHE_MAX_MB`` megabytes (default 1024), the entries used
longest ago are deleted, down to 80 % of the bound, so that the next additions do not trim
again.  A second run of a notebook finds its kernels here and compiles nothing.

Example::

    from mlckit.backend import disk_cache
    disk_cache.usage()          # (bytes, entries) of the numba cache
    disk_cache.trim(0)          # empty it
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import threading
from pathlib import Path

__all__ = ["DEFAULT_MAX_MB", "cache_root", "entry_dir", "load_module", "max_bytes", "trim",
           "usage"]

DEFAULT_MAX_MB = 1024
_KEEP_AFTER_TRIM = 0.8  # a trim leaves this share of the bound, so additions do not re-trim
_trimmed = False  # this process trimmed already (once, at its first new entry)
_LOCK = threading.Lock()


def cache_root() -> Path:
    """``$MLCKIT_CACHE_DIR``, else ``~/.cache/mlckit``."""
    return Path(os.environ.get("MLCKIT_CACHE_DIR")
                or os.path.join(os.path.expanduser("~"), ".cache", "mlckit"))


def max_bytes() -> int:
    """The bound on the numba cache: ``MLCKIT_CACHE_MAX_MB`` megabytes (default 1024)."""
    text = os.environ.get("MLCKIT_CACHE_MAX_MB", "")
    try:
        megabytes = float(text) if text else DEFAULT_MAX_MB
    except ValueError:
        megabytes = DEFAULT_MAX_MB
    return int(max(megabytes, 0) * 2**20)


def entry_dir(directory: Path, stem: str) -> Path:
    """The folder of entry ``stem`` under ``directory``: an entry in use is touched (its time
    is its last use), a new one is made, the cache trimmed first (once per process)."""
    folder = directory / stem
    try:
        os.utime(folder)
        return folder
    except FileNotFoundError:
        pass
    global _trimmed
    with _LOCK:
        first, _trimmed = not _trimmed, True
    if first:
        trim(max_bytes(), directory)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def load_module(directory: Path, stem: str, filename: str, source: str, module_name: str):
    """``source`` as the module ``<directory>/<stem>/<filename>`` of entry ``stem`` (written
    when missing or different, atomically: another process may be reading it), imported once
    per process as ``module_name``: Numba's ``cache=True`` keeps its machine code beside it.
    Returns ``(module, path)``; raises ``OSError`` where the folder cannot be written.

    Example::

        module, path = load_module(cache_dir(), "relu_3f2a", "relu.py", text, "mlckit_relu")
    """
    folder = entry_dir(directory, stem)
    path = folder / filename
    if not path.exists() or path.read_text() != source:
        tmp = folder / f".{filename}.{os.getpid()}.{threading.get_ident()}.tmp"
        tmp.write_text(source)
        os.replace(tmp, path)
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return module, path


def _entries(directory: Path) -> list[tuple[float, int, Path]]:
    """(last use, bytes, folder) of every entry."""
    found = []
    try:
        folders = list(os.scandir(directory))
    except FileNotFoundError:
        return found
    for entry in folders:
        if entry.name.startswith("."):  # a file being written
            continue
        try:
            used = entry.stat(follow_symlinks=False).st_mtime
            if entry.is_dir(follow_symlinks=False):
                size = sum(f.stat().st_size for f in Path(entry.path).rglob("*")
                           if f.is_file())
            else:
                size = entry.stat(follow_symlinks=False).st_size
        except FileNotFoundError:  # another process evicted it meanwhile
            continue
        found.append((used, size, Path(entry.path)))
    return found


def _remove_flat_layout(directory: Path) -> None:
    """Delete what the layout before the folders left (``numba/<name>_<digest>.py``, one
    shared ``__pycache__``): this version never reads it."""
    try:
        items = list(os.scandir(directory))
    except FileNotFoundError:
        return
    for item in items:
        if item.name == "__pycache__" and item.is_dir(follow_symlinks=False):
            shutil.rmtree(item.path, ignore_errors=True)
        elif item.name.endswith(".py") and item.is_file(follow_symlinks=False):
            Path(item.path).unlink(missing_ok=True)


def usage(directory: Path | None = None) -> tuple[int, int]:
    """(bytes, entries) of the cache in ``directory`` (default: the numba cache)."""
    entries = _entries(directory or cache_root() / "numba")
    return sum(size for _, size, _ in entries), len(entries)


def trim(limit: int, directory: Path | None = None) -> int:
    """Delete the least recently used entries while the cache holds more than ``limit``
    bytes, down to 80 % of it (``limit`` 0: everything); the number deleted."""
    directory = directory or cache_root() / "numba"
    _remove_flat_layout(directory)
    entries = sorted(_entries(directory))
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return 0
    goal = limit * _KEEP_AFTER_TRIM
    deleted = 0
    for _, size, folder in entries:
        if total <= goal:
            break
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)
        else:
            folder.unlink(missing_ok=True)
        total -= size
        deleted += 1
    return deleted
