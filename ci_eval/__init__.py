"""ci_eval: measure a RAG system's retrieval stage on its own, on every pull request.

Kept import-free on purpose: ``ci-eval --version`` must start fast, so heavy modules
(numpy, jsonschema, PyGithub) are imported only where they are used.
"""

__version__ = "0.1.0"
