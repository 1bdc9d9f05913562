"""ctxpack v1: verifiable chunked context packs with prefix-reuse deltas (standard library only)."""

from .chunking import split_content
from .errors import ERROR_CODES, ContextPackError
from .pack import DELTA_SCHEMA, PACK_SCHEMA, ContextPack, ContextPackDelta, apply_delta, canonical_json

__all__ = [
    "ContextPack",
    "ContextPackDelta",
    "ContextPackError",
    "ERROR_CODES",
    "DELTA_SCHEMA",
    "PACK_SCHEMA",
    "apply_delta",
    "canonical_json",
    "split_content",
]
__version__ = "1.0.0"
