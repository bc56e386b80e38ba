"""mlckit.contrib.utils: TVM's tempdir."""

import os

from mlckit.contrib import utils


def test_tempdir_relpath_listdir_remove():
    temp = utils.tempdir()
    path = temp.relpath("kernel.ll")
    assert os.path.dirname(path) == temp.temp_dir
    with open(path, "w") as f:
        f.write("x")
    assert temp.listdir() == ["kernel.ll"]
    directory = temp.temp_dir
    temp.remove()
    assert not os.path.exists(directory)


def test_tempdir_as_context_manager():
    with utils.tempdir() as temp:
        directory = temp.temp_dir
        assert os.path.isdir(directory)
    assert not os.path.exists(directory)
