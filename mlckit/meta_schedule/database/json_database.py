"""``JSONDatabase``: TVM's two JSON-lines files under a ``work_dir``.

- ``database_workload.json``: one workload per line, ``[structural hash, module]`` (the
  module as base64 of its TVMScript, where TVM stores base64 of its own JSON form);
- ``database_tuning_record.json``: one record per line, ``[workload index, [trace,
  run_secs, target, args_info]]``.

Every write goes to a temporary file in the same folder that then replaces the old file
(``os.replace``), so an interrupted tuning never leaves a half-written database.  Reading
checks each line and names the file and line of anything corrupt.

Example::

    db = ms.database.JSONDatabase(work_dir="./tune_tmp")
    sch = db.query_schedule(mod, "llvm --num-cores=1")
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from pathlib import Path

from mlckit.error import TVMError
from mlckit.ffi import register_func

from ..error import DatabaseError
from .database import Database, TuningRecord, Workload


class JSONDatabase(Database):
    """A database kept in ``work_dir``'s two JSON-lines files (TVM's ``JSONDatabase``).

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
    >>> from mlckit import meta_schedule as ms, tir
    >>> sch = tir.Schedule(Mod)
    >>> _ = sch.get_block("B", func_name="copy")
    >>> import os, tempfile
    >>> work_dir = tempfile.mkdtemp()
    >>> db = ms.database.JSONDatabase(work_dir=work_dir)
    >>> workload = db.commit_workload(Mod)
    >>> db.commit_tuning_record(ms.database.TuningRecord(sch.trace, workload, [1e-6], tvm.target.Target("llvm")))
    >>> sorted(os.listdir(work_dir))
    ['database_tuning_record.json', 'database_workload.json']
    """

    def __init__(self, path_workload: str | None = None, path_tuning_record: str | None = None,
                 work_dir: str | None = None, allow_missing: bool = True,
                 module_equality: str = "structural"):
        super().__init__()
        if work_dir is not None:
            path_workload = path_workload or os.path.join(work_dir, "database_workload.json")
            path_tuning_record = path_tuning_record or os.path.join(
                work_dir, "database_tuning_record.json")
        if path_workload is None or path_tuning_record is None:
            raise DatabaseError("JSONDatabase needs work_dir=... or both path_workload and "
                                "path_tuning_record")
        self.path_workload = Path(path_workload)
        self.path_tuning_record = Path(path_tuning_record)
        for path in (self.path_workload, self.path_tuning_record):
            if not path.exists() and not allow_missing:
                raise DatabaseError(f"tuning database file {str(path)!r} does not exist "
                                    "(allow_missing=False)")
        self._load()

    # -- reading --------------------------------------------------------------------------
    def _lines(self, path: Path):
        if not path.exists():
            return
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as err:
            raise DatabaseError(f"cannot read tuning database file {str(path)!r}: {err}") from None
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as err:
                raise DatabaseError(
                    f"tuning database file {str(path)!r}, line {lineno}: not valid JSON "
                    f"({err.msg} at column {err.colno})") from None

    def _corrupt(self, path: Path, lineno: int, why: str) -> DatabaseError:
        return DatabaseError(f"tuning database file {str(path)!r}, line {lineno}: {why}")

    def _load(self) -> None:
        from mlckit.script import from_source

        for lineno, obj in self._lines(self.path_workload):
            if not (isinstance(obj, list) and len(obj) == 2 and isinstance(obj[1], str)):
                raise self._corrupt(self.path_workload, lineno,
                                    "a workload is [structural hash, base64 module]")
            try:
                text = base64.b64decode(obj[1].encode(), validate=True).decode()
                mod = from_source(text)
            except (ValueError, UnicodeDecodeError, TVMError, SyntaxError) as err:
                raise self._corrupt(self.path_workload, lineno,
                                    f"the module does not decode or parse ({err})") from None
            self._workloads.append(Workload(mod))
        for lineno, obj in self._lines(self.path_tuning_record):
            if not (isinstance(obj, list) and len(obj) == 2 and isinstance(obj[0], int)
                    and isinstance(obj[1], list) and len(obj[1]) == 4):
                raise self._corrupt(self.path_tuning_record, lineno,
                                    "a record is [workload index, [trace, run_secs, target, "
                                    "args_info]]")
            index = obj[0]
            if not 0 <= index < len(self._workloads):
                raise self._corrupt(self.path_tuning_record, lineno,
                                    f"workload index {index} is not in "
                                    f"{str(self.path_workload)!r} ({len(self._workloads)} "
                                    "workloads)")
            try:
                record = TuningRecord.from_json(obj[1], self._workloads[index])
            except (TypeError, ValueError, IndexError, TVMError) as err:
                raise self._corrupt(self.path_tuning_record, lineno,
                                    f"the record does not decode ({err})") from None
            self._records.append((index, record))

    # -- writing (write-then-rename) ------------------------------------------------------
    def _write(self, path: Path, lines: list[str]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                f.write("".join(line + "\n" for line in lines))
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def _on_new_workload(self) -> None:
        self._write(self.path_workload, [
            json.dumps([str(wl.shash & 0xFFFFFFFFFFFFFFFF), base64.b64encode(wl.mod.script().encode()).decode()])
            for wl in self._workloads])
        if not self.path_tuning_record.exists():
            self._write(self.path_tuning_record, [])

    def _on_new_records(self) -> None:
        self._write(self.path_tuning_record,
                    [json.dumps([i, r.as_json()]) for i, r in self._records])


# How relax.transform.MetaScheduleApplyDatabase(work_dir=...) opens a database.
register_func("meta_schedule.database.JSONDatabase", override=True)(JSONDatabase)
