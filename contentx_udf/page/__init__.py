"""A page from bytes to arrays: decoding, the parsed document, its source text and tag tables."""
