"""A corpus of personal data by class of format, written from the classes (not from the
rules' examples), with a fixed seed; each row is split by a fixed hash of its text into
``tune`` (the only half the rules were tuned on) and ``holdout``.

Positive rows hold one value of a format inside a sentence; look-alike rows hold text
that must pass unmasked (versions, order numbers, ordinary dates, times, prices, counts
of streets). ``python -m tests.trust.corpora.pii`` prints the per-format figures that
docs/trust.md quotes; tests/trust/test_pii_formats.py asserts floors on them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from .common import Gen, half_of

SEED = 33


@dataclass(frozen=True)
class Row:
    text: str
    format: str  # "uk-phone", ..., or "lookalike"
    value: str | None  # the personal datum inside the text; None for look-alikes
    mask: str | None  # the mask it must become

    @property
    def half(self) -> str:
        return half_of(self.text)


_SENTENCES = [
    "Reach her at {v} after six.", "His number is {v}.", "Call {v} if the build breaks.",
    "{v} is the landlord's line.", "Note from the call: {v}, ask for Sam.",
    "Contact: {v}", "They moved; the new details are {v} for now.",
    "Pay the invoice to {v} by Friday.", "Customer said {v} when asked.",
]


def _digits(g: Gen, n: int) -> str:
    return "".join(g.pick("0123456789") for _ in range(n))


def _uk_phone(g: Gen) -> str:
    shape = g.rng.randrange(6)
    if shape == 0:
        return f"020 {_digits(g, 4)} {_digits(g, 4)}"
    if shape == 1:
        return f"07{_digits(g, 3)} {_digits(g, 6)}"
    if shape == 2:
        return f"(01{_digits(g, 3)}) {_digits(g, 6)}"
    if shape == 3:
        return f"01{_digits(g, 2)} {_digits(g, 3)} {_digits(g, 4)}"
    if shape == 4:
        return f"+44 {g.pick(['20', '7700', '161', '1632'])} {_digits(g, 3)} {_digits(g, 4)}"
    return f"+44 (0){g.pick(['20', '7911', '113'])} {_digits(g, 4)} {_digits(g, 3)}"


def _fr_phone(g: Gen) -> str:
    lead = g.pick("1234567")
    pairs = [_digits(g, 2) for _ in range(4)]
    shape = g.rng.randrange(6)
    if shape == 0:
        return f"0{lead} " + " ".join(pairs)
    if shape == 1:
        return f"0{lead}." + ".".join(pairs)
    if shape == 2:
        return f"0{lead}-" + "-".join(pairs)
    if shape == 3:
        return f"0{lead}" + "".join(pairs)
    if shape == 4:
        return f"+33 {lead} " + " ".join(pairs)
    return f"+33 (0){lead} " + " ".join(pairs)


_IBAN_LENGTHS = {"GB": ("BBBB", 14), "FR": ("", 23), "DE": ("", 18), "ES": ("", 20),
                 "NL": ("BBBB", 10), "IT": ("B", 22), "BE": ("", 12), "CH": ("", 17)}


def _iban(g: Gen) -> str:
    country = g.pick(sorted(_IBAN_LENGTHS))
    letters, digits = _IBAN_LENGTHS[country]
    bank = "".join(g.pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in letters)
    body = bank + _digits(g, digits)
    moved = body + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
    iban = f"{country}{check:02d}{body}"
    if g.rng.random() < 0.5:
        return " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))
    return iban


_MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December"]
_MONTHS_FR = ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
              "septembre", "octobre", "novembre", "décembre"]


def _date(g: Gen) -> str:
    day, month, year = g.rng.randint(1, 28), g.rng.randint(1, 12), g.rng.randint(1930, 2015)
    shape = g.rng.randrange(6)
    if shape == 0:
        return f"{day:02d}/{month:02d}/{year}"
    if shape == 1:
        return f"{year}-{month:02d}-{day:02d}"
    if shape == 2:
        return f"{day}.{month}.{year}"
    if shape == 3:
        return f"{day} {_MONTHS_EN[month - 1]} {year}"
    if shape == 4:
        return f"{_MONTHS_EN[month - 1]} {day}, {year}"
    return f"{day} {_MONTHS_FR[month - 1]} {year}"


_DOB_SENTENCES = [
    "Patient born {v}, allergic to penicillin.", "DOB: {v}", "Date of birth {v}; verified.",
    "She was born on {v} in Leeds.", "Form says d.o.b. {v}.", "Il est né le {v} à Lyon.",
    "Elle est née le {v}.", "Geboren am {v} in Köln.", "Fecha de nacimiento: {v}.",
    "His birthday is {v}, plan the card.", "Birth date {v} per the passport.",
]

_EN_STREETS = ["Baker", "Downing", "Church", "Elm", "Station", "High", "Mill", "Kings",
               "Pennsylvania", "Victoria", "Oak Tree", "St John's"]
_EN_TYPES = ["Street", "Road", "Avenue", "Lane", "Drive", "Close", "Court", "Crescent", "Way",
             "St", "Rd", "Place", "Terrace", "Gardens"]
_FR_STREETS = ["de la Paix", "Victor Hugo", "des Lilas", "du Moulin", "Jean Jaurès",
               "de la République", "Saint-Michel", "des Champs-Élysées", "Gambetta"]
_FR_TYPES = ["rue", "avenue", "boulevard", "place", "allée", "chemin", "impasse", "quai"]
_DE_STREETS = ["Haupt", "Linden", "Berg", "Garten", "Schiller", "Bahnhof"]
_DE_TYPES = ["straße", "strasse", "weg", "gasse", "platz", "allee"]


def _address(g: Gen) -> str:
    shape = g.rng.randrange(3)
    if shape == 0:
        number = f"{g.rng.randint(1, 2400)}{g.pick(['', '', 'B', 'a'])}"
        line = f"{number} {g.pick(_EN_STREETS)} {g.pick(_EN_TYPES)}"
        post = g.pick(["", "", f", SW{g.rng.randint(1, 20)} {g.rng.randint(1, 9)}AA",
                       f" {g.pick('EMN')}{g.rng.randint(1, 20)} {g.rng.randint(1, 9)}QT"])
        return line + post
    if shape == 1:
        number = f"{g.rng.randint(1, 180)}{g.pick(['', '', ' bis', ' ter'])}"
        comma = g.pick(["", ","])
        line = f"{number}{comma} {g.pick(_FR_TYPES)} {g.pick(_FR_STREETS)}"
        return line + g.pick(["", "", f", 750{g.rng.randint(10, 20)} Paris",
                              f" 690{g.rng.randint(10, 99)} Lyon"])
    return f"{g.pick(_DE_STREETS)}{g.pick(_DE_TYPES)} {g.rng.randint(1, 120)}"


_ADDRESS_SENTENCES = [
    "Send the parcel to {v}.", "The office is at {v}, second floor.", "She lives at {v}.",
    "Meet at {v} tomorrow.", "Invoice address: {v}", "Ils habitent {v}.",
    "Die Lieferung geht an {v}.", "Old address was {v} until May.",
]

_LOOKALIKES = [
    "Upgrade to version 2.14.3 before the release.", "Order 0612345 shipped on Monday.",
    "The meeting moved to 12/03/2024 at 10:30.", "Release notes for 2024-06-12 are out.",
    "It costs 1 234,56 EUR including tax.", "ISBN 978-0-306-40615-7 is the reference.",
    "Commit 3b81f0a2 fixed the retry loop.", "The service listens on port 5433.",
    "We have 3 main streets to map and 2 roads to survey.", "Build 2024061201 passed.",
    "Ticket ABCD-1234 tracks the outage.", "The batch took 0.612 seconds.",
    "Room 101 is booked from 14:00 to 15:30.", "Product code GB12 ABCD 1234 5678 90 is wrong.",
    "Chapter 12 covers the road ahead.", "Set timeout to 0 10 20 for the three tiers.",
    "The project started in March 2019 and shipped in May.", "He was born to lead the team.",
    "Our birthday party budget is 300 pounds.", "Take the 2 pm train from platform 9.",
    "Coordinates 48.8566, 2.3522 mark the venue.", "Use the 5 rue templates for new pages.",
    "Serial SN-0612-3456-78 is on the label.", "Dial extension 0 for the front desk.",
    "Revenue grew 12 percent on 01.02.2024.", "The 10 best avenues for growth are listed.",
    "Temperature range 06 to 12 degrees tonight.", "See RFC 9110 section 11.1.",
    "The 221 tests in street_view.py pass.", "Version 06.12.34 of the firmware is out.",
]


def _lookalike(g: Gen) -> str:
    """Text shaped near a format that is not personal data, from classes of its own."""
    shape = g.rng.randrange(9)
    if shape == 0:
        return f"Upgrade to v{g.rng.randint(0, 30)}.{g.rng.randint(0, 99)}.{g.rng.randint(0, 99)}."
    if shape == 1:
        return f"Build {g.pick('123456789')}{_digits(g, 9)} passed the checks."
    if shape == 2:
        return f"The release is planned for {_date(g)} at the latest."
    if shape == 3:
        return f"Order 0{_digits(g, 6)} left the warehouse."
    if shape == 4:
        return f"Levels 0{g.pick('123456')} {_digits(g, 2)} {_digits(g, 2)} were logged."
    if shape == 5:
        iban = _iban(g).replace(" ", "")
        wrong = f"{iban[:2]}{(int(iban[2:4]) + 1) % 100:02d}{iban[4:]}"
        return f"Reference {wrong} is not valid."
    if shape == 6:
        return (f"We mapped {g.rng.randint(2, 40)} {g.pick(['streets', 'roads', 'avenues'])} "
                "last week.")
    if shape == 7:
        return f"It took {g.rng.randint(1, 59)} min {g.rng.randint(1, 59)} s at {_digits(g, 2)}:30."
    return f"Chapter {g.rng.randint(1, 40)} {g.pick(['covers', 'explains', 'skips'])} the road."


def rows() -> Iterator[Row]:
    g = Gen(SEED)
    makers = [("uk-phone", _uk_phone, _SENTENCES, "[PHONE]"),
              ("fr-phone", _fr_phone, _SENTENCES, "[PHONE]"),
              ("iban", _iban, _SENTENCES, "[IBAN]"),
              ("date-of-birth", _date, _DOB_SENTENCES, "[DATE-OF-BIRTH]"),
              ("address", _address, _ADDRESS_SENTENCES, "[ADDRESS]")]
    for name, make, sentences, mask in makers:
        seen: set[str] = set()
        while len(seen) < 60:
            value = make(g)
            text = g.pick(sentences).format(v=value)
            if text in seen:
                continue
            seen.add(text)
            yield Row(text, name, value, mask)
    for text in _LOOKALIKES:
        yield Row(text, "lookalike", None, None)
    seen = set(_LOOKALIKES)
    while len(seen) < len(_LOOKALIKES) + 90:
        text = _lookalike(g)
        if text not in seen:
            seen.add(text)
            yield Row(text, "lookalike", None, None)


def score(rows_: list[Row]) -> dict[str, dict[str, object]]:
    """Per format and half: rows, and how many were masked right (positives: the value
    gone and its mask in place; look-alikes: the text unchanged)."""
    from aide_memoire.engine.trust.pii import mask_pii

    out: dict[str, dict[str, object]] = {}
    for row in rows_:
        masked = mask_pii(row.text)
        if row.value is None:
            ok = masked == row.text
        else:
            ok = row.value not in masked and bool(row.mask) and str(row.mask) in masked
        cell = out.setdefault(row.format, {"tune": [0, 0], "holdout": [0, 0], "misses": []})
        pair = cell[row.half]
        assert isinstance(pair, list)
        pair[0] += int(ok)
        pair[1] += 1
        if not ok:
            misses = cell["misses"]
            assert isinstance(misses, list)
            misses.append({"half": row.half, "text": row.text, "masked": masked})
    return out


if __name__ == "__main__":
    result = score(list(rows()))
    show_misses = "--misses" in sys.argv
    for name, cell in result.items():
        line = {k: cell[k] for k in ("tune", "holdout")}
        print(name, json.dumps(line))
        if show_misses:
            for miss in cell["misses"]:  # type: ignore[attr-defined]
                print("   ", json.dumps(miss, ensure_ascii=False))
