"""Per-document verdicts of one filter: the first rule each document fails, as small integers; the
measures its rules read (:attr:`Verdicts.measures`), and the comparisons the rules are written
with (:func:`ratio`, :func:`over`, :func:`under`).

A filter writes each rule once, as a test of its measures (``RULES``: rule -> ``test(m, s, spaced)``,
``m`` the measures by name, ``s`` the filter's settings, ``spaced`` the documents whose word rules
apply); its ``evaluate`` measures and applies the tests (:meth:`Verdicts.check`), and
:func:`.signals.judge` applies the same tests to stored measures (``contentx select``)."""

from __future__ import annotations

import numpy as np


class Verdicts:
    """``codes[i]`` is 0 when document ``i`` passes every rule so far, else 1 + the index in
    ``rules`` of the first rule it failed.  Rules are checked in their order, so a rule only marks
    documents that passed the earlier ones (datatrove's filters return at the first failure)."""

    def __init__(
        self,
        filter_name: str,
        rules: tuple[str, ...],
        n: int,
        alive: np.ndarray | None = None,
        full: bool = False,
    ):
        self.filter_name = filter_name
        self.rules = rules
        self.codes = np.zeros(n, np.int16)
        self.alive = np.ones(n, bool) if alive is None else alive.copy()
        #: ``full``: every measure of every document of ``alive`` (``--signals``): a failed rule
        #: is recorded but the document stays in the set the later rules measure
        self.full = full
        #: the per-document measures the rules read (with ``full``: every one, :mod:`.signals`)
        self.measures: dict[str, np.ndarray] = {}

    def fail(self, rule: str, failing: np.ndarray) -> None:
        """Documents of ``failing`` (a mask) that are still alive fail ``rule`` (the first rule
        failed is kept)."""
        hit = failing & self.alive & (self.codes == 0)
        self.codes[hit] = self.rules.index(rule) + 1
        if not self.full:
            self.alive &= ~hit

    def measure(self, name: str, values: np.ndarray) -> None:
        """Keep ``values`` (one per document) as the measure ``name`` (what the rules read)."""
        self.measures[name] = np.asarray(values)

    def check(self, rule: str, test, settings, spaced: np.ndarray | None = None) -> None:
        """Documents failing the filter's ``test`` of ``rule`` on the measures so far fail it."""
        self.fail(rule, test(self.measures, settings, spaced))

    @property
    def passed(self) -> np.ndarray:
        return self.codes == 0

    def rule_names(self) -> list[str | None]:
        """Per document: ``"<filter>.<rule>"`` of its first failed rule, or None."""
        names = [None] + [f"{self.filter_name}.{rule}" for rule in self.rules]
        return [names[c] for c in self.codes.tolist()]


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` with 0/0 = 0 and x/0 = inf (a rule never divides by zero)."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    out[(denominator <= 0) & (numerator > 0)] = np.inf
    return out


def over(value, limit) -> np.ndarray:
    """``value > limit``; nothing is over an unset (None) limit."""
    return np.zeros(1, bool) if limit is None else value > limit


def under(value, limit) -> np.ndarray:
    """``value < limit``; nothing is under an unset (None) limit."""
    return np.zeros(1, bool) if limit is None else value < limit
