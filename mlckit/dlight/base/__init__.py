"""dlight's base: the rule interface (``schedule_rule``) and the pass that applies rules
(``transform``), laid out as TVM's ``dlight.base``."""

from .schedule_rule import ScheduleRule
from .transform import ApplyDefaultSchedule, is_scheduled

__all__ = ["ApplyDefaultSchedule", "ScheduleRule", "is_scheduled"]
