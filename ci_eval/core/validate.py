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
    if kind in ("maxItems", "maxProperties"):  # never the instance itself: it may be megabytes
        what = "items" if kind == "maxItems" else "entries"
        return f"holds {len(error.instance):,} {what}, over the limit of {error.validator_value:,}"
    if kind in ("minItems", "uniqueItems", "maxLength"):
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
# artefact's rows) are checked by hand (core/gold/goldset.py, core/artefact/artefact_rows.py),
# so what is asked here is small: a config, a gold set's or an artefact's envelope. A small
# checker for the keywords our own schemas use answers it, so a command given valid input
# never imports jsonschema, whose import is a third of a small command's start-up: without
# it `ci-eval check` took 1.34x the wall and 1.35x the CPU (docs/benchmarks.md, "Speed mechanisms,
# measured"). jsonschema answers for a schema the checker cannot read, and words the
# problems of a document either refuses; tests/core/test_validate.py holds the two to the
# same verdicts.

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool)
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
_SUPPORTED = {
    "$schema", "$id", "title", "description", "type", "required", "properties",
    "additionalProperties", "items", "maxItems", "minItems", "maxLength", "minLength",
    "pattern", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "maxProperties",
    "$ref", "$defs", "propertyNames", "oneOf", "anyOf", "prefixItems",
}


class _Unknown(Exception):
    """The schema uses a keyword the fast checker does not implement."""


def _compile(schema, root: dict, cache: dict):
    # long: one branch per JSON Schema keyword, each closing over the values the others
    # read; apart, they would pass the same half-built state around.
    """A schema -> a function(instance) -> bool, built once. Closures instead of walking
    the schema dict on every node is what makes this several times faster than a walk."""
    import re

    if schema is True:
        return lambda v: True
    if schema is False:
        return lambda v: False
    key = id(schema)
    if key in cache:
        return lambda v: cache[key](v)  # late-bound: recursive $refs compile once
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        cache[key] = _compile(target, root, cache)
        return cache[key]
    if not _SUPPORTED.issuperset(schema):
        raise _Unknown(sorted(set(schema) - _SUPPORTED))
    checks = []
    kind = schema.get("type")
    if kind is not None:
        tests = [_TYPES[k] for k in ([kind] if isinstance(kind, str) else kind)]
        checks.append(lambda v: any(t(v) for t in tests))
    if "enum" in schema:
        options = schema["enum"]
        checks.append(lambda v: any(v == e and type(v) is type(e) for e in options))
    if "const" in schema:
        const = schema["const"]
        checks.append(lambda v: v == const and type(v) is type(const))
    lo_len, hi_len = schema.get("minLength", 0), schema.get("maxLength")
    pattern = re.compile(schema["pattern"]) if "pattern" in schema else None
    if lo_len or hi_len is not None or pattern is not None:
        def text(v, lo=lo_len, hi=hi_len, pat=pattern):
            if not isinstance(v, str):
                return True
            return lo <= len(v) and (hi is None or len(v) <= hi) and (pat is None or pat.search(v) is not None)
        checks.append(text)
    bounds = [(schema[b], b) for b in ("minimum", "maximum", "exclusiveMinimum") if b in schema]
    if bounds:
        def number(v, bounds=bounds):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return True
            for limit, b in bounds:
                if (b == "minimum" and v < limit) or (b == "maximum" and v > limit) or (
                        b == "exclusiveMinimum" and v <= limit):
                    return False
            return True
        checks.append(number)
    if any(k in schema for k in ("items", "maxItems", "minItems", "prefixItems")):
        item = _compile(schema["items"], root, cache) if "items" in schema else None
        prefix = [_compile(sub, root, cache) for sub in schema.get("prefixItems", ())]
        lo_items, hi_items = schema.get("minItems", 0), schema.get("maxItems")

        def array(v, item=item, prefix=prefix, lo=lo_items, hi=hi_items):
            if not isinstance(v, list):
                return True
            if len(v) < lo or (hi is not None and len(v) > hi):
                return False
            if not all(check(x) for check, x in zip(prefix, v)):
                return False
            # "items" holds for the entries after the positional ones only
            return item is None or all(item(x) for x in v[len(prefix):])
        checks.append(array)
    if any(k in schema for k in ("properties", "required", "additionalProperties", "maxProperties",
                                 "propertyNames")):
        props = {name: _compile(sub, root, cache) for name, sub in schema.get("properties", {}).items()}
        extra = _compile(schema.get("additionalProperties", True), root, cache)
        names = _compile(schema["propertyNames"], root, cache) if "propertyNames" in schema else None
        required = tuple(schema.get("required", ()))
        hi_props = schema.get("maxProperties")

        def obj(v, props=props, extra=extra, names=names, required=required, hi=hi_props):
            if not isinstance(v, dict):
                return True
            if (hi is not None and len(v) > hi) or any(r not in v for r in required):
                return False
            for name, value in v.items():
                if names is not None and not names(name):
                    return False
                if not props.get(name, extra)(value):
                    return False
            return True
        checks.append(obj)
    if "oneOf" in schema:
        branches = [_compile(b, root, cache) for b in schema["oneOf"]]
        checks.append(lambda v: sum(1 for b in branches if b(v)) == 1)
    if "anyOf" in schema:
        options = [_compile(b, root, cache) for b in schema["anyOf"]]
        checks.append(lambda v: any(o(v) for o in options))
    fn = (lambda v: all(c(v) for c in checks)) if len(checks) != 1 else checks[0]
    cache[key] = fn
    return fn


_COMPILED: dict[int, tuple] = {}


def fast_valid(instance: Any, schema: dict) -> bool | None:
    """True or False when this checker can decide; None when the schema uses a keyword it
    does not implement (then only jsonschema can). Compiled once a schema, the schema kept
    with it so its id is not reused."""
    held = _COMPILED.get(id(schema))
    if held is None:
        try:
            check = _compile(schema, schema, {})
        except _Unknown:
            check = None
        held = _COMPILED[id(schema)] = (schema, check)
    return None if held[1] is None else bool(held[1](instance))


_VALIDATORS: dict[int, tuple] = {}


def schema_valid(instance: Any, schema: dict) -> bool:
    """Whether ``schema`` accepts ``instance``: the small checker's verdict, else jsonschema's
    (its validator built once a schema, the schema kept with it so its id is not reused)."""
    fast = fast_valid(instance, schema)
    if fast is not None:
        return fast
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
