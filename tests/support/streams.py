"""A stream that keeps each write call apart: a log line written in two calls (print's text,
then its newline) can have another thread's write land between them."""

from __future__ import annotations


class Writes:
    def __init__(self):
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return len(text)

    def flush(self) -> None:
        pass
