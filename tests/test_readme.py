"""The README's example runs as written."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs(tmp_path, capsys):
    snippet = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    path = tmp_path / "readme_example.py"
    path.write_text(snippet)
    exec(compile(snippet, str(path), "exec"), {"__name__": "readme_example"})
    assert "@I.ir_module" in capsys.readouterr().out


def test_make_lab_runs_as_root_and_without_a_display(tmp_path):
    # `make -n` prints the command without running it; the flags follow who and where we are
    import os
    import shutil
    import subprocess

    if shutil.which("make") is None:
        raise AssertionError("make is needed to run the README's commands")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    out = subprocess.run(["make", "-n", "lab"], cwd=README.parent, env=env, capture_output=True,
                         text=True, check=True).stdout
    command = next(line for line in out.splitlines() if "jupyter lab" in line)
    assert "--no-browser" in command
    assert ("--allow-root" in command) == (os.getuid() == 0)
    with_display = subprocess.run(["make", "-n", "lab"], cwd=README.parent,
                                  env={**env, "DISPLAY": ":0"}, capture_output=True, text=True,
                                  check=True).stdout
    assert "--no-browser" not in with_display
