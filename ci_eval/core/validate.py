"""JSON Schema validation that reports every problem at once, each with its JSON path."""

from __future__ import annotations

from typing import Any

from ci_eval.errors import InputError


def json_path(parts) -> str:
    """``["gate", "min", "hit@5"]`` -> ``gate.min.hit@5``; list indexes as ``[3]``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _describe(value: Any) -> str:
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return f'"{text}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
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


def schema_problems(data: Any, schema: dict, source: str, prefix=()) -> list[InputError]:
    """Every schema violation in ``data``, sorted by location, as one-line InputErrors."""
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
            InputError(message or _message(best), source, json_path([*prefix, *best.absolute_path]))
        )
    problems.sort(key=lambda p: (p.place or "", p.message))
    return problems
