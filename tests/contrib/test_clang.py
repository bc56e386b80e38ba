"""mlckit.contrib.clang: create_llvm (LLVM IR with clang; the C source, checked by cc, without)."""

import pytest

from mlckit.backend.extern import compile_library, is_llvm_ir
from mlckit.contrib import clang, utils
from mlckit.error import TVMError

ONE = 'extern "C" int one() { return 1; }'


def test_create_llvm_writes_the_output_and_returns_code_that_builds():
    temp = utils.tempdir()
    out = temp.relpath("temp.ll")
    code = clang.create_llvm(ONE, output=out)
    with open(out) as f:
        assert f.read() == code
    if clang.find_clang(required=False):
        assert is_llvm_ir(code)
    else:  # no clang: the C source itself, marked
        assert code == clang.MARKER + ONE
    assert compile_library(code).one() == 1


def test_create_llvm_reports_a_compilation_error():
    with pytest.raises(TVMError, match="does not compile|Compilation error"):
        clang.create_llvm("int broken( { return 0; }")


def test_create_llvm_reads_source_files():
    temp = utils.tempdir()
    src = temp.relpath("one.cc")
    with open(src, "w") as f:
        f.write(ONE)
    assert compile_library(clang.create_llvm([src])).one() == 1
