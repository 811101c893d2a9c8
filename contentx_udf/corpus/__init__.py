"""From extracted text to a corpus: language id and text hashes (pure), the corpus job (Spark).

* :mod:`.language` — ``detect_language`` and ``text_hash``, pure functions the extraction
  workers call for every ``ok`` row;
* :mod:`.filters`, :mod:`.dedup`, :mod:`.report` — the corpus job's stages;
* :mod:`.job` — the driver of ``contentx corpus`` / ``jobs/build_corpus.py`` (thin).
"""
