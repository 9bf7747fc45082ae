"""Is this value a credential, or something that names, points at or stands in for one?

The context rules (secret_context.py) find a value next to a credential-like name, flag
or word; these tests decide whether the value itself is one. References (``$VAR``,
``os.environ[...]``, ``vault:...``, a path, a URL without a password), placeholders
(``<your-token>``, ``xxxx``, ``changeme``), numbers, booleans and identifiers are not.
"""

from __future__ import annotations

import re

from .findings import shannon_entropy

__all__ = ["is_password", "is_placeholder", "is_reference", "looks_random"]

_PLACEHOLDER = re.compile(
    r"(?i)^(?:[x*•.\-_#?]+|\.\.\.|…|"
    r"your\w*|(?:my|the|some|insert|enter|put|add|replace|fill|paste)[_\-]\w+|"
    r"\w*(?:_here|-here|here)|changeme\w*|change[_\-]?me\w*|replace[_\-]?me\w*|"
    r"(?:password|passwd|secret|token|apikey|api_key|key|value|pass|pwd)\d?|"
    r"example\w*|sample\w*|dummy\w*|fake\w*|test(?:ing)?\d?|redacted|masked|hidden|removed|"
    r"placeholder\w*|none|null|nil|empty|true|false|yes|no|on|off|undefined|unset|required|"
    r"optional|string|str|int|bool|todo|tbd|tba|n/?a|foo\w*|bar|baz|qux|default|\*+\w{0,4})$"
)
# Code and config references to where a secret lives, not the secret.
_REFERENCE = re.compile(
    r"(?i)^(?:\$|%\w+%|\{\{|\$\{|!(?:vault|ref|sub|getatt|secret)\b|"
    r"(?:vault|ssm|arn|secretsmanager|secret|op|env|file|keyring|kms|gcp-secret|azure-keyvault|"
    r"akv|sops|doppler|bws|k8s|kubernetes)s?:|"
    r"&\w|\w+::\w|(?:os|process|sys|settings|config|conf|cfg|env|environ|secrets|self|this|app|ctx|request|"
    r"props|params|vars|input|inputs|context|values|import\.meta)\b[.\[]|"
    r"[a-z_][\w.]*\(|getenv|environ\b)"
)
# A cloud resource name or key path ("projects/p/secrets/s/versions/2", "tagKeys/key1"):
# word segments between slashes, none of them generated-looking. A base64 secret that
# holds slashes ("wJalrXUtnFEMI/K7MDENG/bPxRfi...") has mixed-case random segments.
_RESOURCE = re.compile(r"^[A-Za-z][\w.@-]*(?:/[\w.@:-]*){1,}$")
_PATH = re.compile(r"^(?:/|~/|\.\.?/|[A-Za-z]:[\\/]|\\\\|file://)")
_URL = re.compile(r"(?i)^[a-z][a-z0-9+.\-]{1,20}://")
_NUMBER = re.compile(r"^[+\-]?\d+(?:[.,:]\d+)*[a-zA-Z%]{0,3}$")
# Names of things (snake, kebab, dotted, camel case of plain words; env-var names).
_IDENTIFIER = re.compile(
    r"^(?:[a-z]+(?:[_\-.:][a-z]+)+:?|[A-Z]+(?:_[A-Z0-9]+)+|[a-z]+(?:[A-Z][a-z]+)+)$"
)
# Pieces of a name: capitalised or lower-case words of 3+ letters ("ExistingLabelValue1",
# "tpm2-pcr-signature.json", "val1:NoSchedule"). A generated value breaks into letters
# and digits at random and has few such pieces.
_WORD_PIECE = re.compile(r"[A-Z]?[a-z]{2,}")
_LONG_DIGITS = re.compile(r"\d{5,}")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_VERSION = re.compile(r"^v?\d+(?:[.\-]\d+)+(?:[.\-+][A-Za-z0-9]+)*$")
_DIGEST = re.compile(r"(?i)^(?:sha(?:1|224|256|384|512)|md5|blake2b?|crc32)[:\-]")


def is_placeholder(value: str) -> bool:
    """A stand-in a person writes where the real value goes."""
    # An opening bracket starts a stand-in: <your-token>, [redacted:...], {{ secret }}.
    if value[:1] in "<[{(" or _PLACEHOLDER.match(value) or "example" in value.lower():
        return True
    # "ghp_XXXXXXXXXXXX", "sk-aaaaaaaa": the variable part is one repeated character.
    tail = value.split("_")[-1].split("-")[-1]
    return len(tail) >= 6 and len(set(tail.lower())) <= 2


def _resource(value: str) -> bool:
    if not _RESOURCE.match(value) or value.count("/") < 2:
        return False
    return all(not segment or segment.islower() or segment.isdigit() or (
        _IDENTIFIER.match(segment) is not None) for segment in value.split("/"))


def _generated_segment(value: str) -> bool:
    """A piece between slashes shaped like key material: long, mixed case and digits, no
    dot (base64 secrets start with "/" or "+" as often as with a letter)."""
    return any(len(seg) >= 16 and "." not in seg and any(c.isupper() for c in seg)
               and any(c.islower() for c in seg) and any(c.isdigit() for c in seg)
               for seg in re.split(r"[/\\]", value))


def is_reference(value: str) -> bool:
    """A pointer to a secret (variable, path, resource name, URL, code, digest), not it."""
    if _REFERENCE.match(value) or _DIGEST.match(value):
        return True
    if _PATH.match(value):
        return not _generated_segment(value)
    if _resource(value):
        return True
    return bool(_URL.match(value)) and "@" not in value


# An upper-case name where a value goes ("API_KEY", "MD5_AUTHENTICATION_KEY"): the
# usage line of a manual, a template; never a generated value.
_UPPER_NAME = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[A-Z]{2,}$")


def _trivial(value: str) -> bool:
    return (len(value) < 4 or is_placeholder(value) or is_reference(value)
            or bool(_NUMBER.match(value)) or bool(_VERSION.match(value))
            or bool(_UPPER_NAME.match(value)))


def wordish(value: str) -> bool:
    """Made of words (a name, a label, a file name), not of random characters: most of
    its letters and digits sit in word pieces, and no long run of digits."""
    alnum = sum(c.isalnum() for c in value)
    if not alnum or _LONG_DIGITS.search(value):
        return False
    pieces = sum(len(m.group(0)) for m in _WORD_PIECE.finditer(value))
    return pieces / alnum >= 0.6


def looks_random(value: str, *, uuid_counts: bool = False, min_length: int = 16) -> bool:
    """Shaped like a generated credential rather than a word, id, hash of a commit or UUID."""
    if _trivial(value) or "=" in value.rstrip("="):  # "a=b" pairs are settings, not keys
        return False
    if not _HEX.match(value) and wordish(value):
        return False
    if _UUID.match(value):
        return uuid_counts
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if _HEX.match(value):
        # 40 hex is a commit; refuse hex only as long as a key (>= 32, not 40) next to a name
        # that says secret. The caller decides that; here: long enough and varied.
        return len(value) >= 32 and has_digit and has_alpha and shannon_entropy(value) >= 3.0
    if len(value) < min_length or not (has_digit and has_alpha):
        # Long mixed-case letters with no digit still read as generated (base64 of bytes).
        mixed_case = any(c.isupper() for c in value) and any(c.islower() for c in value)
        if not (len(value) >= 24 and mixed_case and not _IDENTIFIER.match(value)):
            return False
    return shannon_entropy(value) >= 3.2


def is_password(value: str) -> bool:
    """A value next to a password word: anything but a reference, placeholder, number,
    identifier or plain word (a passphrase of 12+ letters counts)."""
    if _trivial(value) or len(value) < 6:
        return False
    has_alpha = any(c.isalpha() for c in value)
    has_other = any(not c.isalpha() for c in value)
    if has_alpha and has_other and not _IDENTIFIER.match(value):
        return True
    if " " in value:  # a quoted passphrase: several words
        return len(value.split()) >= 3 and len(value) >= 16
    return len(value) >= 16 and value.isalpha()
