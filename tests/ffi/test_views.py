"""The view registry the core owns: upper layers install HTML forms and graphs on core
classes, the core asks for them without naming the upper layer."""

import subprocess
import sys

import numpy as np
import pytest

import mlckit
from mlckit.ffi import views
from mlckit.ffi.views import ViewError, find_view, html_view, register_view, view


class Base:
    pass


class Derived(Base):
    pass


@pytest.fixture
def empty_registry(monkeypatch):
    monkeypatch.setattr(views, "_VIEWS", {})
    monkeypatch.setattr(views, "_LOADERS", {})


def test_a_view_is_found_for_the_class_and_its_subclasses(empty_registry):
    register_view("html", Base, lambda obj: f"<b>{type(obj).__name__}</b>")
    assert html_view(Base()) == "<b>Base</b>"
    assert html_view(Derived()) == "<b>Derived</b>"


def test_without_a_view_the_html_form_is_none_and_a_graph_is_an_error(empty_registry):
    assert html_view(Base()) is None
    with pytest.raises(ViewError, match="no 'graph' view is installed for Base objects"):
        view("graph", Base())


def test_loaders_run_once_at_the_first_question(empty_registry):
    calls = []

    def install():
        calls.append(1)
        register_view("graph", Base, lambda obj, name=None: ("graph", name))

    views.add_view_loader(install)
    assert calls == []
    assert view("graph", Derived(), "main") == ("graph", "main")
    assert find_view("graph", Base()) is not None and calls == [1]


def test_a_view_whose_layer_cannot_be_imported_leaves_the_text_form(empty_registry):
    def needs_missing_module(obj):
        import mlckit_no_such_layer  # noqa: F401

    register_view("html", Base, needs_missing_module)
    assert html_view(Base()) is None


def test_import_mlckit_installs_the_notebook_views_on_first_use():
    a = mlckit.nd.array(np.arange(3, dtype="float32"))
    assert a._repr_html_().startswith("<div")
    assert find_view("graph", mlckit.IRModule({})) is not None


def test_the_driver_registers_tir_build_and_relax_the_global_var_call():
    from mlckit.relax.expr import Call

    assert mlckit.get_global_func("tir.build") is mlckit.build
    gv = mlckit.ir.GlobalVar("f")
    call = gv(1)
    assert isinstance(call, Call) and call.op is gv


def test_ir_prints_through_the_printer_it_loads_on_first_use_not_the_notebook_layer():
    code = (
        "import sys, mlckit\n"
        "mod = mlckit.IRModule({})\n"
        "print('mlckit.script.printer' in sys.modules)\n"
        "text = mod.script()\n"
        "html = mod._repr_html_()\n"
        "print('mlckit.script.printer' in sys.modules, 'mlckit.notebook' in sys.modules)\n"
        "print(text.splitlines()[-1].strip(), '<span' in html)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split("\n")[:3] == ["False", "True False", "pass True"]
