"""A real JupyterLab and a real Chromium for the browser tests.

The tests start JupyterLab themselves (a free localhost port, a random token, no browser, a
temporary root, runtime and settings directory; ``--allow-root`` when run as root) on
*copies* of the notebooks, so JupyterLab's autosave never touches the repository.  Kernels
import this checkout's ``mlckit`` (``PYTHONPATH``).  Chromium is Debian's
(``apt-get install chromium``), driven by Playwright from PyPI.  Screenshots go to
``test-artifacts/browser/``.

Without Chromium or Playwright the tests are skipped on a developer's machine and fail
under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

# JupyterLab settings for a test session: no news pop-up, and every cell attached to the
# page (JupyterLab 4 otherwise skips rendering the cells out of view).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def in_ci() -> bool:
    """Whether we run as CI (``CI`` set, as CI services and .ci/run do)."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def require_browser():
    """Playwright's sync API, once Chromium is known to be there; else skip, or fail in CI."""
    missing = []
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
        missing.append("Playwright (pip install playwright)")
    if not os.path.exists(CHROMIUM):
        missing.append("Chromium (apt-get install chromium)")
    if missing:
        message = "browser tests need " + " and ".join(missing)
        if in_ci():
            pytest.fail(message + " (CI is set: they must run)")
        pytest.skip(message)
    return sync_playwright


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on a temporary root: ``url(path)`` opens a file in it."""

    def __init__(self, root: Path, home: Path):
        self.root = root
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
            JUPYTER_RUNTIME_DIR=str(home / "runtime"),
            JUPYTER_CONFIG_DIR=str(home / "config"),
            JUPYTER_DATA_DIR=str(home / "data"),
            JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        )
        for rel, value in LAB_SETTINGS.items():
            path = home / "settings" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))
        self.log = home / "lab.log"
        self.proc: subprocess.Popen | None = None

    def trust(self, name: str) -> None:
        """Sign a notebook, as its author's JupyterLab would: its widgets may render."""
        subprocess.run([sys.executable, "-m", "jupyter", "trust", str(self.root / name)],
                       env=self.env, check=True, capture_output=True)

    def start(self) -> None:
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
               f"--port={self.port}", f"--ServerApp.token={self.token}",
               f"--ServerApp.root_dir={self.root}", "--ServerApp.open_browser=False"]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited:\n{self.log.read_text()[-3000:]}")
            try:
                urllib.request.urlopen(self.api("status"), timeout=2)
                return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"JupyterLab did not start:\n{self.log.read_text()[-3000:]}")

    def api(self, what: str) -> str:
        return f"http://127.0.0.1:{self.port}/api/{what}?token={self.token}"

    def get(self, what: str):
        """A REST answer of the server (``sessions``, ``kernels`` …), decoded."""
        with urllib.request.urlopen(self.api(what), timeout=5) as answer:
            return json.loads(answer.read())

    def url(self, path: str) -> str:
        """``path`` opened alone, in a JupyterLab workspace of its own."""
        workspace = Path(path).stem
        return (f"http://127.0.0.1:{self.port}/lab/workspaces/{workspace}/tree/{path}"
                f"?reset&token={self.token}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)  # the server shuts its kernels down
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group this fixture started
            self.proc.wait(5)


@pytest.fixture(scope="module")
def sync_playwright():
    return require_browser()


NOTEBOOK = "05_exploring.ipynb"
SAVED = "05_exploring_saved.ipynb"  # the copy only opened, never run


@pytest.fixture(scope="module")
def lab(tmp_path_factory, sync_playwright):
    """JupyterLab serving two temporary copies of notebook 05 (nothing is written back):
    NOTEBOOK to run, SAVED only to open."""
    root = tmp_path_factory.mktemp("lab-root")
    shutil.copy(REPO / "notebooks" / NOTEBOOK, root / NOTEBOOK)
    shutil.copy(REPO / "notebooks" / NOTEBOOK, root / SAVED)
    server = Lab(root, tmp_path_factory.mktemp("lab-home"))
    server.trust(SAVED)  # as on its author's machine: JupyterLab may render its widgets
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser(sync_playwright):
    with sync_playwright() as p:
        args = ["--disable-dev-shm-usage"] + (["--no-sandbox"] if os.geteuid() == 0 else [])
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=args)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test leaves a screenshot of its page: FAILED_<test>.png."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        for name in ("notebook", "page"):
            page = item.funcargs.get(name)
            if page is not None:
                from playwright.sync_api import Error as PlaywrightError

                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                try:
                    page.screenshot(path=str(ARTIFACTS / f"FAILED_{item.name}.png"),
                                    full_page=True)
                except PlaywrightError as err:  # the browser is gone: report the failure
                    report.sections.append(("screenshot", f"no screenshot: {err}"))
                break
