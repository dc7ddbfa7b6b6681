"""The embedded demo: a retrieval stage over text nobody on this project wrote.

The corpus is the Python language reference topics that ship with every CPython
(``pydoc_data.topics``), read from the running interpreter at run time. On top of it sit a
small BM25 retriever, a hand-labelled gold set, two configurations (base and head) and a
deterministic stand-in for an answer-correctness judge, so ``ci-eval demo`` can show a
full base-vs-head report offline.
"""
