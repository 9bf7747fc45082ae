"""Shared by the corpus generators: the seeded generator, the halves, field placement."""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

HERE = Path(__file__).resolve().parent
SEED = 20261201
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"


def half_of(text: str) -> str:
    return "tune" if hashlib.sha256(text.encode()).digest()[0] % 2 == 0 else "holdout"


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, items: Sequence[T]) -> T:
        return self.rng.choice(list(items))

    def chars(self, alphabet: str, n: int) -> str:
        while True:
            value = "".join(self.rng.choice(alphabet) for _ in range(n))
            digits = set(alphabet) & set(string.digits)
            letters = set(alphabet) & set(string.ascii_letters)
            if (not digits or any(c.isdigit() for c in value)) and (
                not letters or any(c.isalpha() for c in value)
            ):
                return value

    def password(self) -> str:
        """What people choose: words, digits and a symbol, or a manager's random string."""
        words = ["river", "Falcon", "orange", "Tiger", "winter", "Maple", "rocket", "Sunny",
                 "copper", "Delta", "harbor", "Kestrel", "velvet", "Nimbus", "quartz"]
        style = self.rng.randrange(4)
        if style == 0:
            return self.pick(words) + str(self.rng.randrange(10, 9999)) + self.pick("!#$%&*?@")
        if style == 1:
            return self.chars(_ALNUM + "!#%&*+-=?@^", self.rng.randrange(12, 24))
        if style == 2:
            return "-".join(self.pick(words).lower() for _ in range(3)) + str(self.rng.randrange(9))
        return self.pick(words) + self.pick("._-") + self.pick(words) + str(self.rng.randrange(100))


def place(g: Gen, text: str, field: str) -> tuple[str, str]:
    """Put ``text`` in a memory field; the field decides how it must be carried."""
    if field == "metadata":
        return field, json.dumps({"note": "from the deploy runbook", "snippet": text})
    if field == "tags":
        first = text.split()[-1] if len(text) > 60 else text
        return field, first[:64].replace(",", ";").replace("\n", " ")
    if field in ("source", "speaker", "session_id"):
        return field, text.replace("\n", " ")[:200]
    return field, text
