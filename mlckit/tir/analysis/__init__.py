"""Analyses of TIR: block access regions, well-formedness."""

from .block_access_region import get_block_access_region
from .verify_well_formed import verify_well_formed

__all__ = ["get_block_access_region", "verify_well_formed"]
