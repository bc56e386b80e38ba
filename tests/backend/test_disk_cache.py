"""The on-disk kernel cache: one folder per kernel (a second process loading it:
``numba_cpu/test_numba_cpu.py``), bounded by ``MLCKIT_CACHE_MAX_MB`` with the least recently
used entries evicted first."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mlckit.backend import disk_cache

ROOT = Path(__file__).resolve().parents[2]

# builds a kernel, then says whether Numba compiled it or loaded it from the disk cache
BUILD = '''
from mlckit.backend import numba_cpu
from mlckit.script import from_source
f = numba_cpu.build(from_source("""
@T.prim_func
def double(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
"""))
stats = f.dispatcher.stats
print(stats.cache_hits and "hit" or "miss", f.path.relative_to(numba_cpu.cache_dir()))
'''


def _run(code: str, cache: Path, **env) -> str:
    env = dict(os.environ, MLCKIT_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-c", code], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def _entry(directory: Path, name: str, size: int, age_s: float) -> Path:
    folder = directory / name
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "k.py").write_bytes(b"#" * (size // 2))
    (folder / "__pycache__" / "k.nbc").write_bytes(b"0" * (size - size // 2))
    then = time.time() - age_s
    os.utime(folder, (then, then))
    return folder


def test_trim_deletes_the_least_recently_used_entries_down_to_80_percent(tmp_path):
    old = _entry(tmp_path, "old", 400, age_s=300)
    middle = _entry(tmp_path, "middle", 400, age_s=200)
    new = _entry(tmp_path, "new", 400, age_s=100)
    assert disk_cache.usage(tmp_path) == (1200, 3)
    assert disk_cache.trim(900, tmp_path) == 2  # 1200 > 900: down to 720 or less
    assert not old.exists() and not middle.exists() and new.exists()
    assert disk_cache.trim(900, tmp_path) == 0  # within the bound: nothing to do
    assert disk_cache.trim(0, tmp_path) == 1 and disk_cache.usage(tmp_path) == (0, 0)


def test_using_an_entry_makes_it_the_most_recent(tmp_path):
    used = _entry(tmp_path, "used", 400, age_s=300)
    other = _entry(tmp_path, "other", 400, age_s=200)
    assert disk_cache.entry_dir(tmp_path, "used") == used
    assert time.time() - used.stat().st_mtime < 60  # touched: its time is its last use
    disk_cache.trim(500, tmp_path)
    assert used.exists() and not other.exists()


def test_a_process_adding_a_kernel_keeps_the_cache_within_its_bound(tmp_path):
    stale = [_entry(tmp_path / "numba", f"stale{k}", 2**20, age_s=1000 + k) for k in range(3)]
    out = _run(BUILD, tmp_path, MLCKIT_CACHE_MAX_MB="2").split()
    assert out[0] == "miss"
    # 3 MiB of stale entries against a bound of 2 MiB: the oldest two went, the new kernel
    # and the most recent stale entry stay
    assert [s.exists() for s in stale] == [True, False, False]
    assert (tmp_path / "numba" / out[1]).exists()


def test_a_trim_removes_the_flat_layout_of_earlier_versions(tmp_path):
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "mm_0123.mm-9.py311.nbi").write_bytes(b"0" * 10)
    (tmp_path / "mm_0123.py").write_text("# an earlier version's module\n")
    kept = _entry(tmp_path, "kept", 100, age_s=10)
    assert disk_cache.trim(2**20, tmp_path) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"] and kept.exists()


@pytest.mark.parametrize("text, expected", [("", 1024 * 2**20), ("0.5", 2**19),
                                            ("lots", 1024 * 2**20)])
def test_the_bound_comes_from_the_environment(monkeypatch, text, expected):
    monkeypatch.setenv("MLCKIT_CACHE_MAX_MB", text)
    assert disk_cache.max_bytes() == expected


def test_a_generated_module_is_written_into_its_entry_and_imported_once(tmp_path):
    source = "ANSWER = 42\n"
    module, path = disk_cache.load_module(tmp_path, "answer_1", "answer.py", source,
                                          "mlckit_test_answer_1")
    try:
        assert module.ANSWER == 42
        assert path == tmp_path / "answer_1" / "answer.py" and path.read_text() == source
        again, _ = disk_cache.load_module(tmp_path, "answer_1", "answer.py", source,
                                          "mlckit_test_answer_1")
        assert again is module  # imported once per process
        path.write_text("ANSWER = 0\n")  # a damaged file is written again
        disk_cache.load_module(tmp_path, "answer_1", "answer.py", source, "mlckit_test_answer_1")
        assert path.read_text() == source
        assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
    finally:
        sys.modules.pop("mlckit_test_answer_1", None)


def test_a_generated_module_where_the_cache_cannot_be_written_raises_oserror(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    with pytest.raises(OSError):
        disk_cache.load_module(blocked, "x_1", "x.py", "X = 1\n", "mlckit_test_x_1")
    assert "mlckit_test_x_1" not in sys.modules
