"""The text filters by name: one class each (:mod:`.gopher`, :mod:`.c4`, :mod:`.fineweb`), with
its rules written once as tests of its measures (``tests``, :mod:`.verdicts`) and a common entry
``run(batch, texts, n_words, alive, full)``.  :func:`.batch.apply_filters` runs them in the
settings' order and :func:`.signals.judge` applies their tests to stored measures, both by name.
A new filter: its class here, its settings section (:data:`.settings.SECTIONS`), its name in the
order, its measures in :data:`.signals.SIGNALS`."""

from __future__ import annotations

from .c4 import C4Quality
from .fineweb import FineWebQuality
from .gopher import GopherQuality, GopherRepetition

#: name -> filter class (its ``name``), in FineWeb's order.
TEXT_FILTERS = {cls.name: cls for cls in (GopherRepetition, GopherQuality, C4Quality, FineWebQuality)}

#: The rule names of each text filter, in their order.
RULES = {name: cls.rules for name, cls in TEXT_FILTERS.items()}
