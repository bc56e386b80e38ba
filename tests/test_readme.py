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
