"""PII masking by class of format, measured on tests/trust/corpora/pii.py: national and
international phone numbers (UK, France), IBANs, dates of birth, street addresses, and
look-alikes that must pass unmasked. Floors per half; the figures are in docs/trust.md."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import cast

import pytest

from aide_memoire import Memory
from aide_memoire.engine.trust.pii import mask_pii
from aide_memoire.engine.trust.pii_formats import iban_valid

from .conftest import keyword_settings
from .corpora.pii import rows, score

FLOORS = {"uk-phone": 0.95, "fr-phone": 0.95, "iban": 0.95, "date-of-birth": 0.9,
          "address": 0.9, "lookalike": 0.9}


@pytest.mark.parametrize("half", ["tune", "holdout"])
@pytest.mark.parametrize("fmt", sorted(FLOORS))
def test_each_format_is_masked_above_its_floor(fmt: str, half: str) -> None:
    cell = score([r for r in rows() if r.format == fmt])[fmt]
    hits, total = cast(list[int], cell[half])
    assert total >= 5, (fmt, half, total)
    assert hits / total >= FLOORS[fmt], (fmt, half, cell["misses"])


def test_the_corpus_is_what_its_generator_writes() -> None:
    first, second = list(rows()), list(rows())
    assert first == second and len({r.text for r in first}) == len(first)


@pytest.mark.parametrize(("text", "masked"), [
    ("IBAN GB82 WEST 1234 5698 7654 32 for rent", "IBAN [IBAN] for rent"),
    ("IBAN GB83 WEST 1234 5698 7654 32 for rent", "IBAN GB83 WEST 1234 5698 7654 32 for rent"),
    ("Ring 020 7946 0958 or +44 (0)20 7946 0958.", "Ring [PHONE] or [PHONE]."),
    ("Appelle le 06 12 34 56 78 ou le +33 6 12 34 56 78.",
     "Appelle le [PHONE] ou le [PHONE]."),
    ("DOB 04/07/1986, ref 12/03/2024.", "DOB [DATE-OF-BIRTH], ref 12/03/2024."),
    ("Deliver to 221B Baker Street, NW1 6XE today.", "Deliver to [ADDRESS] today."),
    ("Ils habitent 12 rue de la Paix, 75002 Paris.", "Ils habitent [ADDRESS]."),
])
def test_examples_of_each_class(text: str, masked: str) -> None:
    assert mask_pii(text) == masked


def test_iban_check_digits() -> None:
    assert iban_valid("DE89 3704 0044 0532 0130 00")
    assert not iban_valid("DE88 3704 0044 0532 0130 00")


def test_a_masked_export_masks_the_new_formats_in_every_field(tmp_path: Path) -> None:
    with Memory(settings=keyword_settings(tmp_path / "home")) as memory:
        memory.store("Wire to FR76 3000 6000 0112 3456 7890 189 and call 01 23 45 67 89",
                     namespace="project:pii", source="she lives at 10 Downing Street",
                     metadata={"note": "born on 3 March 1979"})
        out = io.StringIO()
        memory.export(out, namespace="project:pii")
    line = json.loads(out.getvalue().splitlines()[1])
    assert line["content"] == "Wire to [IBAN] and call [PHONE]"
    assert line["source"] == "she lives at [ADDRESS]"
    assert line["metadata"] == {"note": "born on [DATE-OF-BIRTH]"}
