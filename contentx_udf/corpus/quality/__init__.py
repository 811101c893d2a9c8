"""Document-quality filters of web corpora (Gopher, C4, FineWeb, URL blocklists, PII masking),
pure Python + numpy + pyarrow compute, vectorised over a batch of documents (no Spark).

* :mod:`.words` — the one word splitter (spaCy's English rules as RE2 patterns) and the
  scripts without spaces;
* :mod:`.text` — a batch cut once into lines and words, shared by the filters;
* :mod:`.gopher`, :mod:`.c4`, :mod:`.fineweb` — the filters, one class each;
* :mod:`.urls`, :mod:`.pii` — URL blocklists and e-mail / IP masking;
* :mod:`.settings` — every threshold, the presets, TOML and command-line overrides;
* :mod:`.fineweb2`, :mod:`.profiles` — FineWeb-2's per-language configurations (``data/``) and
  the language profiles the ``fineweb2`` preset filters each document with;
* :mod:`.batch` — :func:`~.batch.apply_filters`, the entry point for a batch;
* :mod:`.arrays`, :mod:`.verdicts` — helpers (Arrow strings and ragged arrays; per-document
  first failed rule).

README "Quality filters (library)" documents the rules, the word splitter and the agreement
with datatrove (``benchmarks/filter_agreement.py``).
"""
