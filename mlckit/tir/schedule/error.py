"""ScheduleError: what a schedule primitive could not do, and why."""

from __future__ import annotations

from mlckit.error import TVMError


class ScheduleError(TVMError, ValueError):
    """A primitive's precondition does not hold; the schedule is left unchanged.

    The message names the primitive, the blocks or loops involved and the violated
    condition, e.g.::

        ScheduleError: split: the product of the factors (3 * 4 = 12) is smaller than the
        extent 128 of loop `j`
    """

    def __init__(self, primitive: str, message: str, locations=()):
        self.primitive = primitive
        self.detail = message
        self.locations = list(locations)
        super().__init__(f"ScheduleError: {primitive}: {message}")
