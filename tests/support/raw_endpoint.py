"""A loopback TCP server that answers a model endpoint's request as no HTTP library would:
a trickle of bytes, a connection cut in the middle of the answer, bytes that are not HTTP.

It reads each request (its headers and its Content-Length body), counts it, then hands the
socket to ``behaviour(sock, stop)``; ``stop`` is set when the server shuts down, so a slow
behaviour waits on it rather than sleeping. The server polls for shutdown every 50 ms.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Callable

Behaviour = Callable[[socket.socket, threading.Event], None]


def completion(content: str) -> bytes:
    """A chat completion's JSON, as the stand-in in chat_standin.py answers it."""
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop"}]}).encode()


def trickle(interval: float, *, headers_too: bool = False) -> Behaviour:
    """A 200 whose body (and, with ``headers_too``, the status line and headers as well)
    comes one byte every ``interval`` seconds, announcing far more than it will ever send."""
    def behave(sock: socket.socket, stop: threading.Event) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n"
        body = completion('{"questions": ["what is lift?"]}') * 1000
        if not headers_too:
            sock.sendall(head)
        for byte in (head + body if headers_too else body):
            if stop.wait(interval):
                return
            sock.sendall(bytes([byte]))
    return behave


def cut_mid_answer(sock: socket.socket, stop: threading.Event) -> None:
    """A 200 announcing its whole body, then half of it, then the connection closed."""
    body = completion('{"questions": ["what is lift?"]}')
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(body)}\r\n\r\n".encode() + body[: len(body) // 2])


def cut_mid_chunk(sock: socket.socket, stop: threading.Event) -> None:
    """A 200 in chunked transfer encoding whose one chunk announces more than is sent."""
    body = completion('{"questions": ["what is lift?"]}')
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                 + f"{len(body):x}\r\n".encode() + body[: len(body) // 2])


def not_http(sock: socket.socket, stop: threading.Event) -> None:
    """What an SSH server says first, and nothing more: the endpoint's port is the wrong one."""
    sock.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")


class RawEndpoint:
    def __init__(self, behaviour: Behaviour):
        self.behaviour = behaviour
        self.requests = 0
        self.stop = threading.Event()

    def __enter__(self) -> RawEndpoint:
        endpoint = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock = self.request
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = sock.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, rest = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(rest) < length:
                    chunk = sock.recv(65536)
                    if not chunk:
                        return
                    rest += chunk
                endpoint.requests += 1
                try:
                    endpoint.behaviour(sock, endpoint.stop)
                except OSError:
                    pass  # the client left, as it should when its deadline passed

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
