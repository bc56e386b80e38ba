"""The stored notebooks: widget outputs come with their widget state, so a saved notebook
shows its widgets without running (nbval checks the outputs themselves)."""

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def widget_views(nb) -> list[str]:
    return [out["data"][WIDGET_VIEW]["model_id"]
            for cell in nb["cells"] if cell["cell_type"] == "code"
            for out in cell.get("outputs", []) if WIDGET_VIEW in out.get("data", {})]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_widget_output_has_its_state_stored(path):
    nb = json.loads(path.read_text())
    views = widget_views(nb)
    if not views:
        return
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    for model_id in views:
        assert model_id in state, f"{path.name}: widget {model_id} has no stored state"
        # and every model it refers to: children, layouts, styles
        pending, seen = [model_id], set()
        while pending:
            current = pending.pop()
            assert current in state, f"{path.name}: widget {current} has no stored state"
            seen.add(current)
            pending += [ref for ref in references(state[current]["state"]) if ref not in seen]


def references(value) -> list[str]:
    """The model ids a widget's state refers to (``"IPY_MODEL_<id>"`` strings)."""
    if isinstance(value, str):
        return [value.removeprefix("IPY_MODEL_")] if value.startswith("IPY_MODEL_") else []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [ref for item in value for ref in references(item)]
    return []


def test_notebook_05_stores_the_explorer_as_its_cells_left_it():
    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" /
                     "05_exploring.ipynb").read_text())
    state = nb["metadata"]["widgets"][WIDGET_STATE]["state"]
    explorers = [m for m in state.values()
                 if "mlckit-explorer" in m["state"].get("_dom_classes", [])]
    assert len(explorers) == 1
    htmls = {cls: m["state"]["value"] for m in state.values()
             for cls in m["state"].get("_dom_classes", []) if cls.startswith("mlckit-explorer-")}
    assert "b7 = sch.decompose_reduction(block=b0, loop=l3)" in htmls["mlckit-explorer-trace"]
    assert "Y_init" in htmls["mlckit-explorer-script"]
    assert "<svg" in htmls["mlckit-explorer-timing"]
