"""``create_llvm``: C code for a micro-kernel, ready for ``pragma_import_llvm`` (TVM's
``tvm.contrib.clang``).

In TVM, ``create_llvm(c_source)`` runs clang to turn C into LLVM IR text, and annotating a
loop with ``"pragma_import_llvm"`` links that IR into the generated kernel, where LLVM can
inline it.  mlckit's kernels are compiled by Numba, which cannot take C in, so:

- where clang is on the PATH, ``create_llvm`` returns the LLVM IR as TVM does, and the
  backend compiles it into a shared library with ``llc`` and ``cc``;
- otherwise it checks that the C compiles (with ``cc``: errors appear here, as with TVM)
  and returns **the C source itself**, marked by a first comment line; the backend compiles
  it into a shared library when it builds the kernel.

Either way the kernel calls the function through ctypes (a real call; TVM inlines it).

Example::

    from mlckit.contrib import clang, utils
    temp = utils.tempdir()
    code = clang.create_llvm(c_source, output=temp.relpath("temp.ll"))
    sch.annotate(loop, "pragma_import_llvm", code)
"""

from __future__ import annotations

import shutil
import subprocess

from mlckit.error import TVMError

from . import utils

__all__ = ["MARKER", "create_llvm", "find_clang"]

MARKER = "// mlckit: C source (no clang here to emit LLVM IR); compiled by cc when built\n"


def find_clang(required: bool = True) -> list[str]:
    """The clang executables on the PATH (``clang``, ``clang-<version>``)."""
    found = [c for c in ("clang", *(f"clang-{v}" for v in range(22, 10, -1))) if shutil.which(c)]
    if required and not found:
        raise TVMError("cannot find clang on the PATH")
    return found


def create_llvm(inputs, output: str | None = None, options=None, cc: str | None = None) -> str:
    """LLVM IR text of ``inputs`` (C source, or paths of source files) where clang exists;
    else the C source itself (see the module docstring).  Also written to ``output``.

    Example::

        code = create_llvm('extern "C" int one() { return 1; }')
    """
    from mlckit.backend.extern import compile_library

    inputs = [inputs] if isinstance(inputs, str) else list(inputs)
    sources = []
    for code in inputs:
        if utils.is_source_path(code):
            with open(code) as f:
                sources.append(f.read())
        else:
            sources.append(code)
    clang = cc or (find_clang(required=False) or [None])[0]
    temp = utils.tempdir()
    output = output or temp.relpath("output.ll")
    if clang is not None:
        files = []
        for i, text in enumerate(sources):
            path = temp.relpath(f"input{i}.cc")
            with open(path, "w") as f:
                f.write(text)
            files.append(path)
        cmd = [clang, "-S", "-emit-llvm", *(options or []), "-o", output, *files]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise TVMError(f"Compilation error:\n{proc.stdout}{proc.stderr}")
        with open(output) as f:
            return f.read()
    text = MARKER + "\n".join(sources)
    compile_library(text, tuple(options or ()))  # C errors show here, as clang's would
    with open(output, "w") as f:
        f.write(text)
    return text


