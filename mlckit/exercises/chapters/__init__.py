"""One module per course chapter; importing it registers the chapter's exercises."""

from . import gpu, relax, rewrite, schedule, tensorir, tensorize, tuning  # noqa: F401
