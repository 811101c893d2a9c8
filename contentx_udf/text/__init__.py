"""The text layer both jobs share: language identification, the exact-duplicate text hash and
word segmentation (with the Arrow string helpers they are built on).  Nothing here imports Spark,
the extraction methods or the corpus job; ``spark/worker`` and ``corpus/`` both import from here."""
