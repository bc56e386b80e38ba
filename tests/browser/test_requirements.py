"""The browser tests skip on a machine without Chromium or Playwright, and fail in CI."""

import sys

import pytest

from . import conftest


def test_without_chromium_the_browser_tests_skip_outside_ci(monkeypatch):
    monkeypatch.setattr(conftest, "CHROMIUM", "/nonexistent/chromium")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"Chromium \(apt-get install chromium\)"):
        conftest.require_browser()


@pytest.mark.parametrize("ci", ["true", "1"])
def test_without_chromium_the_browser_tests_fail_in_ci(monkeypatch, ci):
    monkeypatch.setattr(conftest, "CHROMIUM", "/nonexistent/chromium")
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match="CI is set: they must run"):
        conftest.require_browser()


def test_without_playwright_the_browser_tests_fail_in_ci(monkeypatch):
    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)  # import fails
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"Playwright \(pip install playwright\)"):
        conftest.require_browser()
