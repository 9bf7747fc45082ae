"""Secret detection: provider key formats, tokens, private keys, passwords, keyed entropy.

Two kinds of rule. Provider formats have a fixed, distinctive shape (``AKIA`` + 16,
``ghp_`` + 36...) and are refused wherever they appear. Generic values (a password in
a connection string, a high-entropy token after ``api_key=``) are refused only next to
a key-like word, so that git SHAs, UUIDs, hashes and base64 of ordinary text pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .findings import Finding, shannon_entropy

__all__ = ["PROVIDER_RULES", "scan_secrets"]

# (rule id, what to call it in an error, pattern). Patterns match the secret itself. A
# leading \b is checked in Python instead (see _compile): with it, re cannot jump to the
# literal prefix and scans ~50x slower.
def _compile(pattern: str) -> tuple[re.Pattern[str], bool]:
    bounded = pattern.startswith(r"\b")
    return re.compile(pattern.removeprefix(r"\b")), bounded


PROVIDER_RULES: tuple[tuple[str, str, tuple[re.Pattern[str], bool]], ...] = tuple(
    (rule, label, _compile(pattern))
    for rule, label, pattern in (
        ("aws-access-key", "AWS access key id",
         r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z2-7]{16}\b"),
        ("gcp-api-key", "Google API key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
        ("gcp-oauth-secret", "Google OAuth client secret", r"\bGOCSPX-[0-9A-Za-z_\-]{28}"),
        ("gcp-oauth-token", "Google OAuth access token", r"\bya29\.[0-9A-Za-z_\-]{30,}"),
        ("gcp-service-account", "Google service account key",
         r'"private_key_id"\s*:\s*"[0-9a-f]{40}"'),
        ("azure-storage-key", "Azure storage account key",
         r"(?i)AccountKey=[A-Za-z0-9+/]{86}==?"),
        ("azure-client-secret", "Azure AD client secret",
         r"(?<![A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
        ("azure-sas", "Azure SAS signature", r"[?&]sig=[A-Za-z0-9%+/]{40,}(?:%3D|=)*"),
        ("github-token", "GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
        ("github-pat", "GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9_]{82}\b"),
        ("gitlab-token", "GitLab token",
         r"\b(?:glpat|gldt|glrt|glcbt|glptt|glsoat|glft)-[A-Za-z0-9_\-]{20,}"),
        ("gitlab-runner", "GitLab runner token", r"\bGR1348941[A-Za-z0-9_\-]{20}"),
        ("slack-token", "Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("slack-app-token", "Slack app token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{20,}"),
        ("slack-webhook", "Slack webhook URL",
         r"hooks\.slack\.com/(?:services|workflows)/T[A-Z0-9]+/[A-Z0-9]+/[A-Za-z0-9]{16,}"),
        ("stripe-key", "Stripe secret key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{24,}"),
        ("stripe-webhook", "Stripe webhook secret", r"\bwhsec_[A-Za-z0-9]{32,}"),
        ("anthropic-key", "Anthropic API key", r"\bsk-ant-[a-z]+\d*-[A-Za-z0-9_\-]{40,}"),
        ("openai-key", "OpenAI API key",
         r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,}"),
        ("openai-project-key", "OpenAI API key",
         r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}"),
        ("openai-legacy-key", "OpenAI API key", r"\bsk-[A-Za-z0-9]{48}\b"),
        ("twilio-key", "Twilio API key", r"\bSK[0-9a-f]{32}\b"),
        ("sendgrid-key", "SendGrid API key", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b"),
        ("npm-token", "npm access token", r"\bnpm_[A-Za-z0-9]{36}\b"),
        ("pypi-token", "PyPI upload token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
        ("huggingface-token", "Hugging Face token", r"\bhf_[A-Za-z0-9]{34,}\b"),
        ("mailgun-key", "Mailgun API key", r"\bkey-[0-9a-f]{32}\b"),
        ("mailchimp-key", "Mailchimp API key", r"\b[0-9a-f]{32}-us\d{1,2}\b"),
        ("shopify-token", "Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
        ("digitalocean-token", "DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
        ("databricks-token", "Databricks token", r"\bdapi[0-9a-f]{32}(?:-\d)?\b"),
        ("vault-token", "HashiCorp Vault token", r"\bhv[sb]\.[A-Za-z0-9_\-]{24,}"),
        ("age-key", "age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
        ("groq-key", "Groq API key", r"\bgsk_[A-Za-z0-9]{48,}\b"),
        ("replicate-token", "Replicate token", r"\br8_[A-Za-z0-9]{37}\b"),
        ("xai-key", "xAI API key", r"\bxai-[A-Za-z0-9]{70,}\b"),
        ("linear-key", "Linear API key", r"\blin_api_[A-Za-z0-9]{40}\b"),
        ("notion-token", "Notion token", r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b"),
        ("postman-key", "Postman API key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
        ("square-token", "Square token", r"\b(?:sq0atp|sq0csp)-[A-Za-z0-9_\-]{22,}"),
        ("telegram-token", "Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b"),
        ("discord-token", "Discord bot token",
         r"\b[MN][A-Za-z\d]{23,25}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,38}\b"),
        ("jwt", "JSON Web Token",
         r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        ("private-key", "private key block",
         r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
         r"(?:\s*[A-Za-z\-]+:[^\n]*)*\s*[A-Za-z0-9+/=\s]{40,}"),
    )
)

# Literal text each provider rule needs (lower-cased): a rule runs only if one is present,
# which keeps screening a long text cheap. Rules not listed always run.
_NEEDS: dict[str, tuple[str, ...]] = {
    "aws-access-key": ("akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva",
                       "aroa", "apka", "asca"),
    "gcp-api-key": ("aiza",), "gcp-oauth-secret": ("gocspx-",), "gcp-oauth-token": ("ya29.",),
    "gcp-service-account": ("private_key_id",), "azure-storage-key": ("accountkey=",),
    "azure-client-secret": ("q~",), "azure-sas": ("sig=",), "github-token": ("gh",),
    "github-pat": ("github_pat_",), "gitlab-token": ("gl",), "gitlab-runner": ("gr1348941",),
    "slack-token": ("xox",), "slack-app-token": ("xapp-",), "slack-webhook": ("hooks.slack",),
    "stripe-key": ("k_live_", "k_test_"), "stripe-webhook": ("whsec_",),
    "anthropic-key": ("sk-ant-",), "openai-key": ("t3blbkfj",), "openai-project-key": ("sk-",),
    "openai-legacy-key": ("sk-",), "twilio-key": ("sk",), "sendgrid-key": ("sg.",),
    "npm-token": ("npm_",), "pypi-token": ("pypi-",), "huggingface-token": ("hf_",),
    "mailgun-key": ("key-",), "mailchimp-key": ("-us",), "shopify-token": ("shp",),
    "digitalocean-token": ("_v1_",), "databricks-token": ("dapi",), "vault-token": ("hvs.", "hvb."),
    "age-key": ("age-secret-key",), "groq-key": ("gsk_",), "replicate-token": ("r8_",),
    "xai-key": ("xai-",), "linear-key": ("lin_api_",), "notion-token": ("secret_", "ntn_"),
    "postman-key": ("pmak-",), "square-token": ("sq0",), "telegram-token": (":aa",),
    "jwt": ("eyj",), "private-key": ("private key",),
}
_GENERIC_NEEDS = ("key", "secret", "token", "pass", "pwd", "credential", "auth", "bearer", "://")

# Words that make a nearby value a credential. Bare "key" counts only in assignments.
_KEYWORDS = (
    r"api[_\-. ]?key|apikey|api[_\-. ]?token|access[_\-. ]?token|auth[_\-. ]?token|"
    r"refresh[_\-. ]?token|secret[_\-. ]?key|secret|client[_\-. ]?secret|private[_\-. ]?key|"
    r"access[_\-. ]?key(?:[_\-. ]?id)?|auth[_\-. ]?key|signing[_\-. ]?key|session[_\-. ]?key|"
    r"encryption[_\-. ]?key|master[_\-. ]?key|token|passw(?:or)?d|passphrase|pwd|credentials?|"
    r"key"
)
_KEYED_VALUE = re.compile(
    rf"(?i)(?<![A-Za-z0-9])(?P<word>{_KEYWORDS})[\"']?\s*(?:[:=]|=>|\bis\b)\s*"
    r"(?P<quote>[\"'`]?)(?P<value>[^\s\"'`,;)}\]>]{6,})"
)
_BEARER = re.compile(r"(?i)\b(?:bearer|token)\s+(?P<value>[A-Za-z0-9\-._~+/]{20,}=*)")
_URL_PASSWORD = re.compile(
    r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?P<user>[^\s:/@]{0,64}):(?P<value>[^\s@/]{3,128})@[^\s/]+"
)
_DSN_PASSWORD = re.compile(r"(?i)(?:^|[;\s\"'])(?:password|pwd)\s*=\s*(?P<value>[^;\s\"']{3,})")

_PLACEHOLDER = re.compile(
    # The marker redaction leaves (trust/redact.py) is not a password either.
    r"(?i)^(?:\[redacted:[a-z0-9\-]+\]?|\$\{?[A-Z_][A-Z0-9_]*\}?|%\(?[a-z_]+\)?s?|\{\{?[^}]*\}?\}|<[^>]*>|\[[^\]]*\]|"
    r"[x*•.\-_#]+|your\w*|(?:my|the|some)[_\-]\w+|changeme|password\d?|secret|example\w*|"
    r"dummy\w*|redacted|placeholder|none|null|true|false|undefined|required|optional|"
    r"string|env(?:\.\w+|\[.*)|os\.\w+.*|process\.env.*|getenv.*)$"
)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_VERSIONISH = re.compile(r"^v?\d+(?:[.\-]\d+)+(?:[.\-+][A-Za-z0-9]+)*$")


def _looks_random(value: str, *, strong_word: bool) -> bool:
    """True for values shaped like generated credentials rather than words or ids."""
    if _PLACEHOLDER.match(value) or _VERSIONISH.match(value) or "EXAMPLE" in value.upper():
        return False
    if _UUID.match(value):
        return strong_word
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if _HEX.match(value):
        return len(value) >= 32 and has_digit and has_alpha and shannon_entropy(value) >= 3.0
    if len(value) < 16 or not (has_digit and has_alpha):
        return False
    return shannon_entropy(value) >= 3.5


def _is_password_word(word: str) -> bool:
    lowered = word.lower()
    return lowered.startswith(("pass", "pwd"))


def _password_value(value: str) -> bool:
    """A password next to a password word: anything but a placeholder or a plain word."""
    if _PLACEHOLDER.match(value) or "EXAMPLE" in value.upper():
        return False
    has_alpha = any(c.isalpha() for c in value)
    has_other = any(not c.isalpha() for c in value)
    return len(value) >= 6 and has_alpha and has_other


def _generic(text: str) -> Iterator[Finding]:
    for match in _KEYED_VALUE.finditer(text):
        word, value = match.group("word"), match.group("value").rstrip(".")
        start = match.start("value")
        if _is_password_word(word):
            if _password_value(value):
                yield Finding("secret", "password", "password", start, start + len(value))
            continue
        strong = word.lower() not in ("key", "token")
        if _looks_random(value, strong_word=strong):
            yield Finding("secret", "keyed-token", f"{word} value", start, start + len(value))
    for match in _BEARER.finditer(text):
        value = match.group("value")
        if _looks_random(value, strong_word=True):
            yield Finding("secret", "bearer-token", "bearer token", *match.span("value"))
    for pattern in (_URL_PASSWORD, _DSN_PASSWORD):
        for match in pattern.finditer(text):
            value = match.group("value")
            if not _PLACEHOLDER.match(value) and "EXAMPLE" not in value.upper():
                yield Finding(
                    "secret", "connection-password", "password in a connection string",
                    *match.span("value"),
                )


def scan_secrets(text: str, *, field: str = "content") -> list[Finding]:
    """Every secret in ``text``, by position. Where two overlap, a provider format wins
    over a generic rule (it names the secret better), then the earlier one."""
    lowered = text.lower()
    provider: list[Finding] = []
    for rule, label, (pattern, bounded) in PROVIDER_RULES:
        needs = _NEEDS.get(rule)
        if needs and not any(literal in lowered for literal in needs):
            continue
        for match in pattern.finditer(text):
            start = match.start()
            if bounded and start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                continue
            if "EXAMPLE" not in match.group(0).upper():
                provider.append(Finding("secret", rule, label, *match.span(), field=field))
    generic: list[Finding] = []
    if any(word in lowered for word in _GENERIC_NEEDS):
        generic = [
            Finding(f.category, f.rule, f.label, f.start, f.end, field=field)
            for f in _generic(text)
        ]
    kept: list[Finding] = []
    for finding in sorted(provider, key=lambda f: (f.start, -f.end)) + sorted(
        generic, key=lambda f: (f.start, -f.end)
    ):
        if not any(finding.start < k.end and k.start < finding.end for k in kept):
            kept.append(finding)
    return sorted(kept, key=lambda f: f.start)
