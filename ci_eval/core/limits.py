"""Bounds every part of ci-eval shares, so what one reader accepts the next one accepts too."""

# The longest chunk id, in bytes of UTF-8: the run-file and qrels readers refuse a longer
# field at its line (ids are held as rows as wide as the longest, so a megabyte-long "id"
# would make every row a megabyte wide). The shipped JSON Schemas cap chunk ids at this many
# characters (a schema counts characters, and an id of at most 4,096 bytes has at most
# 4,096 of them), so an id a reader took is never refused later by the gold set, the
# artefact or the labelling page; tests/core/test_limits.py holds the schemas to it.
MAX_ID_BYTES = 4096

# A gold set's questions and the artefact a run writes of them are held to one set of bounds:
# a gold set `check` and `run` accept is one `compare` accepts as a base (before, the gold
# set's schema took 51 tags or 1,001 judged chunks that the artefact's refused, and the push
# run left a baseline every later pull request skipped). The shipped schemas say the same
# figures (tests/core/test_limits.py holds them to these).
MAX_TAGS_PER_QUESTION = 50
MAX_TAG_CHARS = 100
MAX_JUDGED = 1000  # chunks judged for one question (gold ids of any grade)
MAX_QUESTION_ID_CHARS = 200
MAX_QUESTION_CHARS = 10_000  # also the candidates file the labelling page reads; a
# generator's longer question is dropped at generation (and counted), so `gold generate`
# never writes a file `label --candidates` refuses
# Distinct tags in one gold set or artefact. The comparison tests every tag against every
# metric (about 4 ms a tag with the default ten metrics), so a fork's artefact of 30,000
# tags of its own held the privileged poster for minutes; 500 tags is a few seconds, and
# more than any tags table a person reads.
MAX_TAGS = 500

# The one size limit of a run artefact, for the writer and every reader (compare, merge,
# history, sweep --from): 128 MiB holds about 270,000 questions at depth 15 in version 2
# (about 480 bytes a question; version 1 took about 1 KB, so 130,000). A run is refused
# before retrieval when its gold set alone passes it, and stopped at its first rows when
# their size projects past it (core/artefact/artefact_size.py). A base artefact comes from
# another run, perhaps a fork's: readers cap it by its size before reading a byte of it.
MAX_ARTEFACT_BYTES = 128 * 1024 * 1024
