"""What every method function returns (shared by :mod:`contentx_udf.core` and the methods)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class MethodResult:
    """What a method function returns: the extracted text and its own figures."""

    text: str
    scores: dict[str, float] = field(default_factory=dict)
