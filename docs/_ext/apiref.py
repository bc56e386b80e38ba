"""The API reference: mlckit's public names, grouped under TVM's package names.

One table (``PACKAGES``) says which mlckit module answers to which TVM package.  From it come
the reference pages (``docs/api/*.rst``, written at each build by the Sphinx extension at the
bottom) and the checks in ``tests/docs/``: every public function and class has a docstring
with an example, and every name ``docs/tvm_names.md`` lists has a docstring.

A public name is one in the module's ``__all__``, or else any name not starting with ``_``,
that is a function or class defined inside mlckit.  An object re-exported by several packages
is described once, on the first page that has it, and the later pages link there.
"""

from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

# (TVM package, mlckit module, one line about it); the order is the order of the pages, and
# the first package that exports an object is where it is described
PACKAGES: list[tuple[str, str, str]] = [
    ("tvm", "mlckit", "Entry points: build, compile, devices, global functions."),
    ("tvm.error", "mlckit.error", "The errors mlckit raises; all derive from TVMError."),
    ("tvm.ir", "mlckit.ir", "IRModule, GlobalVar, structural equality, operators."),
    ("tvm.ir.transform", "mlckit.ir.transform", "Passes, Sequential and PassContext."),
    ("tvm.instrument", "mlckit.instrument", "Pass instruments."),
    ("tvm.arith", "mlckit.arith", "Integer arithmetic: the Analyzer and its bounds."),
    ("tvm.tir", "mlckit.tir", "TensorIR: expressions, buffers, statements, PrimFunc."),
    ("tvm.tir.schedule", "mlckit.tir.schedule", "The TensorIR Schedule, its primitives and trace."),
    ("tvm.s_tir", "mlckit.s_tir", "TVM 0.24+'s names for the schedule (SBlock, s_tir.Schedule)."),
    ("tvm.tir.transform", "mlckit.tir.transform", "TensorIR lowering passes."),
    ("tvm.tir.analysis", "mlckit.tir.analysis", "TensorIR analyses."),
    ("tvm.te", "mlckit.te", "Tensor expressions: placeholder, compute, create_prim_func."),
    ("tvm.topi", "mlckit.topi", "The te operator library."),
    ("tvm.topi.nn", "mlckit.topi.nn", "Neural-network operators of topi."),
    ("tvm.relax", "mlckit.relax", "Relax: expressions, struct info, BlockBuilder, build, VM."),
    ("tvm.relax.op", "mlckit.relax.op", "Relax operators (R.add, R.matmul ...)."),
    ("tvm.relax.transform", "mlckit.relax.transform", "Relax passes."),
    ("tvm.relax.analysis", "mlckit.relax.analysis", "Relax analyses."),
    ("tvm.relax.frontend.nn", "mlckit.relax.frontend.nn", "Models as Python classes."),
    ("tvm.runtime", "mlckit.runtime", "Tensors, devices, modules and executables."),
    ("tvm.target", "mlckit.target", "Targets and their kinds."),
    ("tvm.script", "mlckit.script", "TVMScript: parse and print."),
    ("tvm.meta_schedule", "mlckit.meta_schedule", "Search over schedule traces (tune_tir)."),
    ("tvm.dlight", "mlckit.dlight", "Default schedules for GPU kernels."),
    ("tvm.dlight.gpu", "mlckit.dlight.gpu", "The dlight GPU rules."),
    ("tvm.testing", "mlckit.testing", "Test helpers."),
    ("tvm_ffi", "mlckit.ffi", "The FFI layer: containers and global functions."),
    ("mlckit.lnumpy", "mlckit.lnumpy", "mlckit only: the readable NumPy twin of a kernel."),
    ("mlckit.notebook", "mlckit.notebook", "mlckit only: notebook views and widgets."),
    ("mlckit.datasets", "mlckit.datasets", "mlckit only: the course's data sets."),
    ("mlckit.models", "mlckit.models", "mlckit only: the course's small models."),
]


@dataclass(frozen=True)
class Name:
    """One public name of one package: ``package.name`` is ``obj``."""

    package: str  # TVM's package name (the page)
    module: str  # the mlckit module it is reached from
    name: str
    obj: object

    @property
    def target(self) -> str:
        """Where autodoc finds it: ``mlckit.tir.Schedule``."""
        return f"{self.module}.{self.name}"

    @property
    def kind(self) -> str:
        return "class" if inspect.isclass(self.obj) else "function"


def _public(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return sorted(set(names))


def _documentable(obj) -> bool:
    if not (inspect.isclass(obj) or inspect.isfunction(obj) or inspect.isbuiltin(obj)
            or callable(obj) and hasattr(obj, "__wrapped__")):
        return False
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "mlckit"


def api_names() -> list[Name]:
    """Every public function and class, once per package that exports it, page by page."""
    out = []
    for package, modname, _ in PACKAGES:
        module = importlib.import_module(modname)
        for name in _public(module):
            obj = getattr(module, name, None)
            if _documentable(obj):
                out.append(Name(package, modname, name, obj))
    return out


def canonical(names: list[Name]) -> dict[int, Name]:
    """Each object's first appearance: the place it is described."""
    first: dict[int, Name] = {}
    for n in names:
        first.setdefault(id(n.obj), n)
    return first


# an example is a doctest (``>>>``) or a code block (``::`` / ``.. code-block``) in the docstring
_EXAMPLE = re.compile(r"^\s*>>> |::\s*$|^\s*\.\. code-block::", re.M)


def has_example(obj) -> bool:
    return bool(_EXAMPLE.search(inspect.getdoc(obj) or ""))


def missing_examples() -> list[Name]:
    """The described (canonical) names whose docstring has no example."""
    return [n for n in canonical(api_names()).values() if not has_example(n.obj)]


def source_file(obj) -> str:
    try:
        path = Path(inspect.getsourcefile(inspect.unwrap(obj)))
        return str(path.relative_to(Path(__file__).resolve().parents[2]))
    except (TypeError, ValueError):
        return "?"


# --- the names docs/tvm_names.md lists ----------------------------------------------------

# how a name in docs/tvm_names.md starts -> the mlckit module it is looked up in
_PREFIXES = {
    "tvm": "mlckit", "tvm_ffi": "mlckit.ffi", "T": "mlckit.script.tir", "R": "mlckit.script.relax",
    "I": "mlckit.script.ir", "relax": "mlckit.relax", "tir": "mlckit.tir", "te": "mlckit.te",
    "topi": "mlckit.topi", "s_tir": "mlckit.s_tir", "tirx": "mlckit.tirx", "nn": "mlckit.relax.frontend.nn",
    "ms": "mlckit.meta_schedule", "dl": "mlckit.dlight", "mlckit": "mlckit",
}
_CODE = re.compile(r"`([^`]+)`")


def _expand(text: str) -> list[str]:
    """``tvm.script.{ir, tir}`` -> ``tvm.script.ir``, ``tvm.script.tir``; calls lose their
    arguments (``tvm.compile(mod, target)`` -> ``tvm.compile``)."""
    text = re.sub(r"\(.*", "", text.strip())
    m = re.match(r"^([\w.]*)\{([^}]*)\}(.*)$", text)
    if m:
        return [x for part in m.group(2).split(",") for x in _expand(m.group(1) + part.strip() + m.group(3))]
    return [text] if re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+", text) else []


def _resolve(dotted: str):
    head, *rest = dotted.split(".")
    if head not in _PREFIXES:
        return None
    try:
        obj = importlib.import_module(_PREFIXES[head])
    except ImportError:
        return None
    for part in rest:
        nxt = getattr(obj, part, None)
        if nxt is None and inspect.ismodule(obj):
            try:
                nxt = importlib.import_module(f"{obj.__name__}.{part}")
            except ImportError:
                nxt = None
        if nxt is None:
            return None
        obj = nxt
    return obj


def listed_names(path: Path) -> dict[str, object]:
    """The functions and classes of mlckit that the table rows of ``path`` name, by the name
    written there (rows marked *missing* are left out: they name what is not there)."""
    found = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 4 or not cells[1].startswith("`") or cells[2].startswith("missing"):
            continue
        for code in _CODE.findall(cells[1]):
            for dotted in _expand(code):
                obj = _resolve(dotted)
                if _documentable(obj) or inspect.ismethod(obj) or inspect.ismethoddescriptor(obj):
                    found[dotted] = obj
    return found


def listed_without_docstring(path: Path) -> list[str]:
    return sorted(n for n, obj in listed_names(path).items() if not (inspect.getdoc(obj) or "").strip())


# --- the Sphinx extension -----------------------------------------------------------------

API_DIR = Path(__file__).resolve().parents[1] / "api"


def page_name(package: str) -> str:
    return package


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_pages(out: Path = API_DIR) -> None:
    """``docs/api/index.rst`` and one page per package (kept when unchanged, so an
    incremental build re-reads only what changed)."""
    out.mkdir(exist_ok=True)
    names = api_names()
    first = canonical(names)
    by_package: dict[str, list[Name]] = {}
    for n in names:
        by_package.setdefault(n.package, []).append(n)
    index = ["API reference", "=============", "",
             "mlckit's public functions and classes, grouped under the name of the TVM package",
             "that has them (``import mlckit as tvm`` makes ``tvm.tir.Schedule`` mlckit's",
             "``mlckit.tir.Schedule``).  Which TVM names work, and how far, is in",
             ":doc:`/docs/tvm_names`.", "", ".. toctree::", "   :maxdepth: 1", ""]
    for package, modname, about in PACKAGES:
        if package not in by_package:
            continue
        index.append(f"   {package} <{page_name(package)}>")
        title = f"``{package}``"
        lines = [f".. currentmodule:: {modname}", "", title, "=" * len(title), "", about, ""]
        if package != modname:
            lines += [f"In mlckit: ``{modname}``.", ""]
        lines += ["Which TVM names mlckit has, and how far they go: :doc:`/docs/tvm_names`.", ""]
        seen_here = []
        for n in by_package[package]:
            home = first[id(n.obj)]
            if home is n:
                lines += [f".. auto{n.kind}:: {n.target}"]
                if n.kind == "class":
                    lines += ["   :members:"]
                    # the Schedule gathers its primitives from mixin classes: show them
                    if any(b.__name__.endswith("Mixin") for b in n.obj.__mro__):
                        lines += ["   :inherited-members: object"]
                lines += [""]
            else:
                seen_here.append((n, home))
        if seen_here:
            lines += ["Also here", "---------", "",
                      "These names are described where they are first exported:", ""]
            for n, home in seen_here:
                lines.append(f"- ``{package}.{n.name}``: :py:obj:`{home.package}.{home.name} <{home.target}>`")
            lines.append("")
        _write_if_changed(out / f"{page_name(package)}.rst", "\n".join(lines))
    _write_if_changed(out / "index.rst", "\n".join(index) + "\n")


def _check_listed(app) -> None:
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    names_md = Path(app.srcdir) / "docs" / "tvm_names.md"
    for name in listed_without_docstring(names_md):
        logger.warning("%s is listed in docs/tvm_names.md but has no docstring", name,
                       location=(str(names_md), 0))


def setup(app):
    app.connect("builder-inited", lambda app: (write_pages(), _check_listed(app)))
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def report() -> str:
    """The public names without a docstring example, by file (``python docs/_ext/apiref.py``)."""
    described = list(canonical(api_names()).values())
    missing = missing_examples()
    by_file: dict[str, list[str]] = {}
    for n in missing:
        by_file.setdefault(source_file(n.obj), []).append(f"{n.package}.{n.name}")
    lines = [f"{len(described) - len(missing)} of {len(described)} public names in the API "
             f"reference have a docstring example; {len(missing)} have none:"]
    for path in sorted(by_file):
        lines.append(f"  {path} ({len(by_file[path])}): {', '.join(sorted(by_file[path]))}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
