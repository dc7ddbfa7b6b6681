"""What a child process sends its parent: an artefact, or the ``InputError`` its read
raised, as pickles. The paired read's child (inputs/paired_read.py) frames them so: one tag
byte, then the pickle."""

from __future__ import annotations

import io
import pickle

from ci_eval.core.artefact.artefact import Artefact
from ci_eval.inputs.collector import collector_paused

ARTEFACT, ERROR = b"A", b"E"


def artefact_frame(artefact: Artefact) -> bytes:
    return ARTEFACT + pickle.dumps(artefact, pickle.HIGHEST_PROTOCOL)


def error_frame(exc: BaseException) -> bytes:
    out = io.BytesIO()
    _ErrorPickler(out, pickle.HIGHEST_PROTOCOL).dump(exc)
    return ERROR + out.getvalue()


def unpickled(payload: bytes):
    """The object a frame's payload holds (the collector paused, as for a read); raises
    whatever unpickling raises."""
    with collector_paused():
        return pickle.loads(payload)


class _ErrorPickler(pickle.Pickler):
    """Pickles an exception as its class, arguments and attributes, so it unpickles as it
    was without calling its ``__init__`` (``InputErrors`` takes a list of problems)."""

    def reducer_override(self, obj):
        if isinstance(obj, BaseException):
            return _rebuilt_error, (type(obj), obj.args, dict(vars(obj)))
        return NotImplemented


def _rebuilt_error(kind: type, args: tuple, state: dict) -> BaseException:
    error = kind.__new__(kind, *args)
    error.args = args
    vars(error).update(state)
    return error
