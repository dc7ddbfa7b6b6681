"""Where things are, for a test in any folder of tests/ and for the helpers here.

tests/support/ is on the import path (pyproject's pytest ``pythonpath``), so these helpers are
imported by their own names; a subprocess that must import them (a retriever given as
``fake_retrievers:lexical``) gets ``PYTHONPATH=SUPPORT``."""

from __future__ import annotations

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
TESTS = SUPPORT.parent
REPO_ROOT = TESTS.parent
PACKAGE = REPO_ROOT / "ci_eval"
DOCS = REPO_ROOT / "docs"
GOLDEN = TESTS / "golden"
BAD_INPUTS = TESTS / "bad_inputs"
# The small valid project every bad-input case is a variation of.
BAD_INPUTS_PROJECT = BAD_INPUTS / "_project"
# Public reference data (trec_eval's own tests, collections, GitHub's OpenAPI slice) lives
# beside the checkout, never inside it. Users' machines do not have it.
SHARED = REPO_ROOT.parent / "shared"
