"""Personal data recognised by the shape of its format: national phone numbers, IBANs,
dates of birth and street addresses (pii.py holds the older kinds and the masking).

Each rule is a class of format, not a list of examples (the corpus that measures them,
tests/trust/corpora/pii.py, is written from the same classes and split before tuning):

- **phones in national form**: a trunk ``0`` then 9 or 10 digits in groups (UK
  ``020 7946 0958``, ``07700 900123``, ``(01632) 960123``; French ``06 12 34 56 78``,
  ``01.23.45.67.89``; compact ``0612345678``). International ``+CC`` forms, with
  ``(0)`` or not, are pii.py's.
- **IBAN**: two letters, two check digits, 11 to 30 letters or digits, compact or in
  groups of four, passing the ISO 7064 mod-97 check (a product code almost never does).
- **date of birth**: a date (numeric, ISO or with a month name in English, French,
  German, Spanish or Italian) within a few words after a birth cue (``born``, ``DOB``,
  ``date of birth``, ``né le``, ``geboren am``, ``fecha de nacimiento``...). A date
  without a cue is an ordinary date, and kept.
- **street address**: a house number, then a street name ending in a street type
  (``221B Baker Street``, ``1600 Pennsylvania Avenue NW``), or a street type first as
  French, Spanish and Italian write it (``12 rue de la Paix``, ``8 bis avenue Victor
  Hugo``), or the German order (``Hauptstraße 5``); a postcode and town that follow
  (``SW1A 2AA``, ``75002 Paris``) go with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["iban_valid", "scan_formats"]

_SEP = r"[ .\-]"
# 0 + 9 or 10 digits: French pairs, UK 2-5 digit area codes, optional parentheses.
_NATIONAL_PHONE = re.compile(
    r"(?<![\w+.\-/])(?:"
    r"0\d(?:" + _SEP + r"?\d{2}){4}"                      # 06 12 34 56 78, 01.23.45.67.89
    r"|\(0\d{2,4}\)\s?\d{3,4}[ \-]?\d{3,4}"                # (020) 7946 0958
    r"|0\d{2,4}[ \-]\d{3,4}[ \-]?\d{3,4}"                  # 020 7946 0958, 07700 900123
    r"|0\d{9,10}"                                          # 0612345678, 07700900123
    r")(?![\w\-]|[.,]\d)"
)
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?"
                   r"(?![A-Za-z0-9])")

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|"
    "janvier|février|fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|"
    "novembre|décembre|decembre|januar|februar|märz|maerz|juni|juli|oktober|dezember|"
    "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|"
    "diciembre|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre"
)
_DATE = (
    r"(?:\d{1,2}[/.\-]\d{1,2}[/.\-](?:19|20)\d{2}"
    r"|(?:19|20)\d{2}-\d{1,2}-\d{1,2}"
    r"|\d{1,2}(?:st|nd|rd|th|er)?\.?\s(?:" + _MONTHS + r")\.?,?\s(?:19|20)\d{2}"
    r"|(?:" + _MONTHS + r")\.?\s\d{1,2}(?:st|nd|rd|th)?,?\s(?:19|20)\d{2})"
)
_BIRTH_CUE = (
    r"(?:born|birthday|birth\s?date|date\sof\sbirth|d\.?o\.?b\.?|n[ée]e?\sle|"
    r"date\sde\snaissance|geboren(?:\sam)?|geburtsdatum|fecha\sde\snacimiento|"
    r"nacid[oa]\sel|data\sdi\snascita|nat[oa]\sil)"
)
_DOB = re.compile(r"(?i)\b" + _BIRTH_CUE + r"(?!\w)[^.\n\d]{0,24}?(?P<date>" + _DATE + r")(?!\d)")

_EN_TYPES = (
    r"Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Drive|Dr|Boulevard|Blvd|Close|Court|Ct|Place|Pl|"
    r"Square|Sq|Terrace|Way|Crescent|Gardens|Grove|Hill|Mews|Row|Walk|Parkway|Highway|"
    r"Circle|Park"
)
_FR_TYPES = (r"rue|avenue|av\.|boulevard|bd|place|allée|allee|chemin|impasse|quai|route|"
             r"cours|square|passage|calle|avenida|paseo|plaza|via|viale|piazza|corso")
_NAME = r"[A-ZÀ-Ý][\w'’\-]*"
_POST = (r"(?:,?\s(?:[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"        # UK postcode
         r"|\d{5}\s" + _NAME + r"))?")                         # 75002 Paris, 28013 Madrid
_ADDRESS = re.compile(
    r"(?<![\w/.\-])(?:"
    r"\d{1,5}[A-Za-z]?(?:\s(?:bis|ter))?,?\s(?:" + _NAME + r"\s){1,4}(?:" + _EN_TYPES + r")\.?"
    r"(?:\s(?:NW|NE|SW|SE|N|S|E|W))?(?![\w-])"
    r"|\d{1,5}(?:\s?(?:bis|ter))?,?\s(?:" + _FR_TYPES + r")\s(?:(?:de|du|des|de\sla|del|"
    r"della|di|d'|l')\s?)?" + _NAME + r"(?:[\s\-](?:(?:de|du|des|la|le|del|di)\s)?"
    + _NAME + r"){0,3}"
    r"|[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm)"
    r"\s\d{1,4}[a-z]?"
    r")" + _POST
)


def iban_valid(raw: str) -> bool:
    """ISO 13616: the rearranged number, letters as 10..35, is 1 modulo 97."""
    compact = raw.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    try:
        number = int("".join(str(int(c, 36)) for c in moved))
    except ValueError:
        return False
    return number % 97 == 1


def _national_phone_ok(raw: str) -> bool:
    digits = re.sub(r"\D", "", raw)
    return 10 <= len(digits) <= 11 and len(set(digits[1:])) > 2


def scan_formats(text: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of each national phone, IBAN, date of birth and address."""
    for match in _NATIONAL_PHONE.finditer(text):
        if _national_phone_ok(match.group(0)):
            yield "phone", match.start(), match.end()
    for match in _IBAN.finditer(text):
        if iban_valid(match.group(0)):
            yield "iban", match.start(), match.end()
    for match in _DOB.finditer(text):
        yield "dob", match.start("date"), match.end("date")
    for match in _ADDRESS.finditer(text):
        yield "address", match.start(), match.end()
