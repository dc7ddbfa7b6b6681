"""The one HTTP exchange every model endpoint gets (`gold generate --endpoint`, the labelling
page's `--suggest-endpoint`): a POST and its whole answer, within bounds a hostile or broken
server cannot stretch.

- **No redirect is followed.** The request carries the API key and the user's own text (a
  chunk, a question); an OpenAI-compatible API answers a POST where it is sent, so a redirect
  is either a wrong address or a server sending both somewhere else. It is refused, naming
  the place it pointed to, so a person who trusts that place can give it as the endpoint.
- **One deadline for the whole answer**: connecting, the status line and headers, and every
  byte of the body must arrive within ``timeout`` seconds in all. A socket's timeout bounds
  each read only, so a server sending one byte every half second would never time out; here
  a timer shuts the socket down at the deadline, whatever the exchange is waiting for. (The
  host name's look-up is the system resolver's and is not bounded here.)
- **At most** ``MAX_ANSWER_BYTES`` of body are read: a chat completion is a few kilobytes.
- Whatever goes wrong becomes :class:`Failed`, one sentence and whether another attempt may
  help; nothing of ``http.client`` or ``socket`` escapes. Messages never hold the key: the
  caller scrubs them (ci_eval/core/text.scrub), as the GitHub client scrubs its own.
"""

from __future__ import annotations

import http.client
import socket
import threading
import urllib.parse
from dataclasses import dataclass

MAX_ANSWER_BYTES = 4 * 1024 * 1024
_CHUNK = 64 * 1024
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # names lower-cased
    body: bytes


class Failed(Exception):
    """No answer to read. ``again``: a fresh attempt may get one (a refused connection, a
    connection cut mid-answer); otherwise it would fail the same way (a redirect, bytes that
    are not HTTP, the deadline, an answer over the size bound)."""

    def __init__(self, message: str, again: bool):
        super().__init__(message)
        self.message, self.again = message, again


def origin(url: str) -> str:
    """``scheme://host:port`` of ``url``: where a redirect would send the request."""
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    host = parts.hostname or "?"
    return f"{parts.scheme or '?'}://{host}" + (f":{port}" if port else "")


class _Deadline:
    """A timer that shuts the connection's socket at the deadline, ending any read or write
    it blocks in; ``passed`` says whether it did."""

    def __init__(self, connection: http.client.HTTPConnection, seconds: float):
        self.connection = connection
        self.fired = threading.Event()
        self.timer = threading.Timer(seconds, self._cut)
        self.timer.daemon = True

    def _cut(self) -> None:
        self.fired.set()  # first: a connection made after this look sees the flag
        sock = self.connection.sock
        if sock is not None:
            try:
                # the plain socket's shutdown, under any TLS layer: the blocked read gets end of file
                socket.socket.shutdown(sock, socket.SHUT_RDWR)
            except OSError:
                pass

    @property
    def passed(self) -> bool:
        return self.fired.is_set()

    def __enter__(self) -> _Deadline:
        self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self.timer.cancel()


def post(url: str, body: bytes, headers: dict[str, str], timeout: float,
         max_bytes: int = MAX_ANSWER_BYTES) -> Answer:
    """POST ``body`` to ``url`` and read the whole answer within ``timeout`` seconds, or
    raise :class:`Failed`. Any status is an :class:`Answer` except a redirect."""
    parts = urllib.parse.urlsplit(url)
    kind = {"http": http.client.HTTPConnection, "https": http.client.HTTPSConnection}.get(parts.scheme)
    if kind is None or not parts.hostname:
        raise Failed(f"{url} is not an http:// or https:// address", again=False)
    try:
        port = parts.port
    except ValueError:
        raise Failed(f"{url} has a port that is not a number", again=False) from None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection, path, headers = _through_proxy(kind, parts, port, path, headers, timeout)
    try:
        with _Deadline(connection, timeout) as deadline:
            return _exchange(connection, url, path, body, headers, deadline, timeout, max_bytes)
    finally:
        connection.close()


def _through_proxy(kind, parts, port, path, headers, timeout):
    """The connection, path and headers for ``parts``, through the proxy the environment
    names (``https_proxy``, ``http_proxy``, ``no_proxy``, as urllib reads them): an https
    address through a CONNECT tunnel, an http one by its whole URL."""
    import urllib.request

    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.hostname):
        return kind(parts.hostname, port, timeout=timeout), path, headers
    via = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    auth = {}
    if via.username is not None:
        import base64

        pair = f"{urllib.parse.unquote(via.username)}:{urllib.parse.unquote(via.password or '')}"
        auth = {"Proxy-Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    try:
        proxy_port = via.port
    except ValueError:
        raise Failed(f"the proxy {origin(proxy)} has a port that is not a number", again=False) from None
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(via.hostname, proxy_port or 80, timeout=timeout)
        connection.set_tunnel(parts.hostname, port, headers=auth)
        return connection, path, headers
    return (http.client.HTTPConnection(via.hostname, proxy_port or 80, timeout=timeout),
            urllib.parse.urlunsplit(parts), {**headers, **auth})


def _exchange(connection, url, path, body, headers, deadline: _Deadline, timeout: float, max_bytes: int) -> Answer:
    late = f"no complete answer from {url} within {timeout:g} s (the whole answer, not each read; raise the timeout)"
    try:
        connection.connect()
    except OSError as exc:
        if deadline.passed or isinstance(exc, TimeoutError):
            raise Failed(late, again=False) from None
        raise Failed(f"cannot reach {url}: {getattr(exc, 'strerror', None) or exc}", again=True) from None
    if deadline.passed:
        raise Failed(late, again=False)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
    except (OSError, http.client.HTTPException) as exc:
        if deadline.passed or isinstance(exc, TimeoutError):
            raise Failed(late, again=False) from None
        if isinstance(exc, (http.client.RemoteDisconnected, OSError)):
            raise Failed(f"{url} closed the connection without an answer", again=True) from None
        raise Failed(f"{url} answered bytes that are not HTTP ({type(exc).__name__}); is it the API's address?",
                     again=False) from None
    status = response.status
    answer_headers = {k.lower(): v for k, v in response.getheaders()}
    if status in _REDIRECTS:
        to = urllib.parse.urljoin(url, answer_headers.get("location", ""))
        raise Failed(f"{url} answered HTTP {status}, a redirect to {origin(to)}: not followed, as the key and "
                     "the text would go along; give the address it names as the endpoint if you trust it",
                     again=False)
    return Answer(status, answer_headers, _body(response, url, deadline, late, max_bytes))


def _body(response: http.client.HTTPResponse, url: str, deadline: _Deadline, late: str, max_bytes: int) -> bytes:
    declared = response.getheader("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise Failed(f"{url} announced an answer of {int(declared):,} bytes, over the {max_bytes:,}-byte bound",
                     again=False)
    data = bytearray()
    try:
        while chunk := response.read1(_CHUNK):
            data += chunk
            if len(data) > max_bytes:
                raise Failed(f"{url} sent an answer over the {max_bytes:,}-byte bound", again=False)
    except (OSError, http.client.HTTPException) as exc:
        if deadline.passed or isinstance(exc, TimeoutError):
            raise Failed(late, again=False) from None
        raise Failed(f"{url} cut the connection mid-answer ({len(data):,} bytes"
                     + (f" of {int(declared):,}" if declared.isdigit() else "") + ")", again=True) from None
    if deadline.passed:  # the cut looked like the answer's end
        raise Failed(late, again=False)
    if declared.isdigit() and len(data) < int(declared):
        raise Failed(f"{url} cut the connection mid-answer ({len(data):,} bytes of {int(declared):,})", again=True)
    return bytes(data)
