"""Personal data and secrets taken out of questions mined from a log.

A query log holds what users typed, and users paste their email address, their phone
number, a card number or an API key into a search box. Mined questions go into a
candidates file, a groups file and, once kept, the gold set that is committed to the
repository: each such item is replaced by a placeholder (``[email]``, ``[phone]``,
``[card]``, ``[key]``) before anything is folded or written, and counted by kind.

What is recognised, in this order (a key is taken before its digits can read as a phone):

- **keys and tokens**: the shapes providers give them (``sk-...``, GitHub's ``ghp_``,
  ``gho_``, ``ghu_``, ``ghs_``, ``ghr_`` and ``github_pat_``, AWS access key ids
  ``AKIA``/``ASIA`` + 16), and any other run of at least ``LONG`` letters, digits and
  ``+/=_-`` mixing letters and digits whose characters carry at least ``ENTROPY`` bits each
  (a random token; words and version strings carry far less);
- **emails**: ``name@domain.tld``;
- **card-like numbers**: 13 to 19 digits, alone or in groups split by spaces or dashes,
  that pass the Luhn check (so an order number that happens to be long is kept);
- **phone numbers**: 9 to 15 digits written as a phone number is: a leading ``+``, or
  groups split by spaces, dashes, dots or brackets (``(555) 010-4477``), so a bare
  count or a year is kept.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

# The shortest run of mixed characters read as a random token, and the bits of entropy per
# character it must carry: a 24-character base64 token carries about 4.3; English words
# and hyphenated names stay under 3.5.
LONG = 24
ENTROPY = 3.5
PLACEHOLDERS = {"key": "[key]", "email": "[email]", "card": "[card]", "phone": "[phone]"}
KIND_NAMES = {"email": "emails", "phone": "phone numbers", "card": "card numbers", "key": "keys or tokens"}

_KEY_SHAPES = re.compile(
    r"(?<![\w-])(?:sk-[A-Za-z0-9_-]{16,}|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16})(?![\w-])")
_RUN = re.compile(rf"(?<![\w+/=-])[A-Za-z0-9+/=_-]{{{LONG},}}(?![\w+/=-])")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_PHONE = re.compile(r"(?<![\w+])(?:\+\s?)?(?:\(\d{1,4}\)[\s.-]?)?\d[\d\s().-]{6,}\d(?![\w])")


@dataclass(frozen=True)
class Scrubbed:
    text: str
    found: Counter  # kind -> how many were replaced


def _entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values())


def _random_token(s: str) -> bool:
    return (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
            and _entropy(s) >= ENTROPY)


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _phone(match: str) -> bool:
    digits = sum(c.isdigit() for c in match)
    grouped = match.lstrip().startswith("+") or any(c in match for c in " ().-")
    return 9 <= digits <= 15 and grouped


def scrub(text: str) -> Scrubbed:
    """``text`` with every item of personal data or secret replaced by its placeholder."""
    found: Counter = Counter()

    def replace(kind: str, keep=lambda s: True):
        def sub(m: re.Match) -> str:
            if not keep(m.group(0)):
                return m.group(0)
            found[kind] += 1
            return PLACEHOLDERS[kind]
        return sub

    text = _KEY_SHAPES.sub(replace("key"), text)
    text = _RUN.sub(replace("key", _random_token), text)
    text = _EMAIL.sub(replace("email"), text)
    text = _CARD.sub(replace("card", lambda s: luhn(re.sub(r"\D", "", s))), text)
    text = _PHONE.sub(replace("phone", _phone), text)
    return Scrubbed(text, found)


def scrub_all(questions: list[str]) -> tuple[list[str], Counter, int]:
    """Every question scrubbed: the questions, what was replaced by kind, and how many
    questions held something."""
    out, total, touched = [], Counter(), 0
    for q in questions:
        s = scrub(q)
        out.append(s.text)
        total.update(s.found)
        touched += bool(s.found)
    return out, total, touched


def describe(found: Counter) -> str:
    """``3 emails, 1 phone numbers``, in the order of KIND_NAMES."""
    return ", ".join(f"{found[k]} {name}" for k, name in KIND_NAMES.items() if found[k])
