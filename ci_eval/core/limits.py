"""Bounds every part of ci-eval shares, so what one reader accepts the next one accepts too."""

# The longest chunk id, in bytes of UTF-8: the run-file and qrels readers refuse a longer
# field at its line (ids are held as rows as wide as the longest, so a megabyte-long "id"
# would make every row a megabyte wide). The shipped JSON Schemas cap chunk ids at this many
# characters (a schema counts characters, and an id of at most 4,096 bytes has at most
# 4,096 of them), so an id a reader took is never refused later by the gold set, the
# artefact or the labelling page; tests/core/test_limits.py holds the schemas to it.
MAX_ID_BYTES = 4096

# The longest question, in characters: the gold set's schema and reader, the candidates file
# the labelling page reads. A generator's longer question is dropped at generation (and
# counted), so `gold generate` never writes a file `label --candidates` refuses.
MAX_QUESTION = 10_000
