"""Sphinx configuration of the mlckit book: ``make docs`` (``sphinx-build -W``).

Why Sphinx with myst-nb: it is what TVM's own documentation uses, autodoc reads mlckit's
docstrings where they live, myst-nb renders the notebooks from their stored outputs
(``nb_execution_mode = "off"``), and ``-W`` turns every broken reference into an error.

The source directory is the repository root (only ``docs/`` and ``notebooks/`` are read), so
a link such as ``../notebooks/05_exploring.ipynb`` works both on the book and on GitHub.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "docs" / "_ext")]

project = "mlckit"
author = "the mlckit developers"
copyright = "the mlckit developers"

extensions = ["myst_nb", "sphinx.ext.autodoc", "apiref"]

root_doc = "docs/index"
include_patterns = ["docs/**", "notebooks/*.ipynb", "notebooks/exercises/*.ipynb",
                    "notebooks/README.md"]
exclude_patterns = ["docs/_build", "docs/_ext", "docs/_root", ".venv", ".git", "**/.ipynb_checkpoints"]
# the home page of the site is index.html: a redirect to docs/index.html
html_extra_path = ["_root"]

# notebooks: rendered from their stored outputs, never run
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

# every cross-reference must resolve
nitpicky = False
suppress_warnings = []

autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # signatures stay readable; types are in the prose
autodoc_inherit_docstrings = False

html_theme = "furo"
html_title = "mlckit — learning ML compilation"
html_static_path = []
html_show_sourcelink = False
