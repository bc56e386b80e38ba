"""Temporary directories (TVM's ``tvm.contrib.utils``).

Example::

    temp = utils.tempdir()
    path = temp.relpath("kernel.ll")     # a file name inside the directory
    temp.listdir()                       # ['kernel.ll'] once written
    temp.remove()                        # also done when the object is garbage-collected
"""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile

from mlckit.error import TVMTypeError

__all__ = ["TempDirectory", "is_source_path", "tempdir"]


class TempDirectory:
    """A directory removed with its contents by ``remove()``, at ``with`` exit, or when the
    object is garbage-collected (unless ``keep_for_debug``)."""

    def __init__(self, custom_path: str | None = None, keep_for_debug: bool | None = None):
        self.keep_for_debug = bool(keep_for_debug)
        if custom_path:
            os.mkdir(custom_path)
            self.temp_dir = custom_path
        else:
            self.temp_dir = tempfile.mkdtemp(prefix="mlckit_")

    def relpath(self, name: str) -> str:
        """The path of ``name`` inside the directory."""
        return os.path.join(self.temp_dir, name)

    def listdir(self) -> list[str]:
        """The names in the directory."""
        return os.listdir(self.temp_dir)

    @property
    def path(self) -> pathlib.Path:
        return pathlib.Path(self.temp_dir)

    def __truediv__(self, other):
        if not isinstance(other, (str, pathlib.Path)):
            raise TVMTypeError(f"TempDirectory / operator: must supply str or pathlib.Path; "
                               f"got {other!r}")
        return self.path / other

    def remove(self) -> None:
        """Delete the directory and everything in it."""
        if self.temp_dir and not self.keep_for_debug:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
        self.temp_dir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()

    def __del__(self):
        try:
            self.remove()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def tempdir(custom_path: str | None = None, keep_for_debug: bool | None = None) -> TempDirectory:
    """A new temporary directory (TVM's ``utils.tempdir``)."""
    return TempDirectory(custom_path, keep_for_debug)


def is_source_path(path: str) -> bool:
    """Whether ``path`` names a file (an existing one, or one-line text with an extension)
    rather than being source code itself."""
    if os.path.exists(path):
        return True
    if "\n" in path:
        return False
    parts = path.rsplit(".", 1)
    return len(parts) == 2 and parts[1].strip() == parts[1]
