"""Analyses of TIR: block access regions, well-formedness, variable use."""

from .block_access_region import get_block_access_region
from .var_use import var_ids
from .verify_well_formed import verify_well_formed

__all__ = ["get_block_access_region", "var_ids", "verify_well_formed"]

from .buffer_access_lca import detect_buffer_access_lca  # noqa: E402

__all__ += ["detect_buffer_access_lca"]
