"""JSON Schema validation that reports every problem at once, each with its JSON path."""

from __future__ import annotations

import re
from typing import Any

from ci_eval.errors import InputError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def json_path(parts) -> str:
    """``["gate", "min", "hit@5"]`` -> ``gate.min.hit@5``; list indexes as ``[3]``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part or _CONTROL.search(str(part)):
            out += f"[{_describe(str(part))}]"  # shown quoted: a raw newline would break the line
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _describe(value: Any) -> str:
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        text = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)  # a NUL shown, not sent
        return f'"{text}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int) and abs(value) >= 10**40:  # 10**400 is not shown in full
        digits = str(abs(value))
        return f"{'-' if value < 0 else ''}{digits[:10]}... ({len(digits)} digits)"
    if isinstance(value, (int, float)):
        return repr(value)
    return type(value).__name__.replace("dict", "an object").replace("list", "an array")


_TYPE_NAMES = {
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "a table/object",
    "array": "a list",
    "null": "null",
}


# Patterns whose regex would say nothing to a user, in words.
_PATTERN_WORDS = {
    "^[^\\u0000]*$": "holds a NUL character, which no command line or environment can carry",
    "^[^=\\u0000]+$": "an environment variable name may not hold '=' or a NUL character",
}


def _message(error) -> str:
    """Plain-language messages for the validators users trip over most."""
    kind = error.validator
    if kind == "type":
        wanted = error.validator_value
        wanted = [wanted] if isinstance(wanted, str) else wanted
        names = " or ".join(_TYPE_NAMES.get(w, w) for w in wanted)
        return f"expected {names}, got {_describe(error.instance)}"
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return f"unknown key {', '.join(repr(e) for e in extra)} (allowed: {', '.join(allowed)})"
    if kind == "required":
        return error.message.replace("is a required property", "is required")
    if kind == "enum":
        options = ", ".join(_describe(v) for v in error.validator_value)
        return f"expected one of {options}, got {_describe(error.instance)}"
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        return f"{_describe(error.instance)} is out of range ({kind} {error.validator_value})"
    if kind == "minLength":
        return "must not be empty"
    if kind == "pattern":
        words = _PATTERN_WORDS.get(error.validator_value)
        if words:
            return f"{_describe(error.instance)}: {words}"
        return f"{_describe(error.instance)} does not match the pattern {error.validator_value}"
    if kind == "const":
        return f"expected {_describe(error.validator_value)}, got {_describe(error.instance)}"
    if kind in ("minItems", "maxItems", "uniqueItems", "maxLength", "maxProperties"):
        return error.message.split(" is ")[-1] if " is " in error.message else error.message
    return " ".join(error.message.split())[:200]


def _wrong_type_for_every_branch(error) -> str | None:
    """``"gold": "kb/a"`` fails both branches of a oneOf on type alone: say which types fit
    instead of "is not valid under any of the given schemas"."""
    if not all(e.validator == "type" and len(e.absolute_path) == len(error.absolute_path) for e in error.context):
        return None
    wanted: list[str] = []
    for e in error.context:
        value = e.validator_value
        wanted += [value] if isinstance(value, str) else list(value)
    names = " or ".join(dict.fromkeys(_TYPE_NAMES.get(w, w) for w in wanted))
    return f"expected {names}, got {_describe(error.instance)}"


def schema_problems(data: Any, schema: dict, source: str, prefix=(), name_path=None) -> list[InputError]:
    """Every schema violation in ``data``, sorted by location, as one-line InputErrors;
    ``name_path`` may turn a path's positions into names (a row's fields)."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    problems = []
    for error in validator.iter_errors(data):
        # oneOf/anyOf: report the branch closest to what the user wrote, not the envelope.
        best = error
        message = None
        if error.context:
            best = min(error.context, key=lambda e: (-len(e.absolute_path), e.validator == "type"))
            if len(best.absolute_path) <= len(error.absolute_path):
                best = error
                message = _wrong_type_for_every_branch(error)
        problems.append(
            InputError(message or _message(best), source,
                       json_path([*prefix, *(name_path or tuple)(best.absolute_path)]))
        )
    problems.sort(key=lambda p: (p.place or "", p.message))
    return problems


# --------------------------------------------------------------------------- verdict
# Valid documents are the norm: "valid?" is asked first, and the problems are worded only for
# a document that is not. The large parts of the large documents (a gold set's questions, an
# artefact's rows) are checked by hand (core/gold/goldset.py, core/artefact/artefact_rows.py,
# core/artefact/row_blocks.py), so what is asked here is small. A compiled checker of its own
# bought no 20 % on any command (1.00x on compare, 1.03x on run at 100,000 questions) and was
# removed (docs/design.md, "Speed mechanisms, measured").

_VALIDATORS: dict[int, tuple] = {}


def schema_valid(instance: Any, schema: dict) -> bool:
    """Whether ``schema`` accepts ``instance``: jsonschema's verdict, its validator built once
    a schema (the schema kept with it, so its id is not reused)."""
    held = _VALIDATORS.get(id(schema))
    if held is None:
        from jsonschema import Draft202012Validator

        held = _VALIDATORS[id(schema)] = (schema, Draft202012Validator(schema))
    return held[1].is_valid(instance)


def problems_or_none(data: Any, schema: dict, source: str, prefix=()) -> list[InputError]:
    """``schema_problems``, worded only when the document is not valid."""
    if schema_valid(data, schema):
        return []
    return schema_problems(data, schema, source, prefix)
