"""A loopback GitHub for tests: real HTTP, in-memory state, recorded requests.

Two servers on 127.0.0.1, each on its own ephemeral port:

- the API (``api_url``, addressed as ``127.0.0.1``) serves the REST endpoints the action
  uses, from the state a test sets up with ``add_pull``, ``add_run``, ``add_artifact`` and
  ``add_comment``;
- the artifact blob host (``blob_url``, addressed as ``localhost`` so it is another host to
  any client) serves artifact zips reached through the ``/zip`` endpoint's 302 redirect,
  the way GitHub hands out short-lived storage URLs. It records an ``Authorization``
  header as a violation and refuses the request, as the real storage host does.

Every request is recorded (method, path, query, headers, body, operation id). Every
response the API sends is validated against GitHub's OpenAPI description in
``../shared/github/github-rest-subset.openapi.json`` (and every request against its
operation's parameters and body); problems are collected in ``response_problems`` and
``request_problems``. When ``../shared`` is absent, validation is off and
``validation_skipped`` says why.

Faults are scripted per operation id: ``fail("issues/create-comment", 403, ...)``,
``secondary_rate_limit(...)``, ``fail_blob(...)``, ``refuse_writes()``, ``link_pages_to(...)``.

The package: state.py (what the repository holds), objects.py (GitHub's JSON for it),
routes/ (one module per API area), faults.py (scripted failures), openapi.py (the
validation), handlers.py (the two HTTP handlers) and server.py (``GitHubStandIn``).
"""

from .handlers import Recorded
from .openapi import SPEC_PATH, OpenAPICheck, openapi_check
from .server import GitHubStandIn
from .state import EPOCH, fake_sha, iso

__all__ = ["EPOCH", "SPEC_PATH", "GitHubStandIn", "OpenAPICheck", "Recorded", "fake_sha", "iso", "openapi_check"]
