"""Credentials recognised by where they sit, not by their shape.

Four classes, each by the role of the text around a value:

- a *name* that says it holds a credential (any identifier containing PASS, PWD, SECRET,
  TOKEN, KEY, CREDENTIAL, AUTH... in an assignment, a YAML or JSON pair, an env export,
  a query string), unless the name only points at one (``*_FILE``, ``*_ID``, ``*_URL``)
  or is a data-structure key (``partition_key``, ``next_page_token``);
- a *command line* that takes a password as an argument (``curl -u``, ``mysql -p``,
  ``sshpass -p``, ``docker login -p``, ``--password=``...);
- an *HTTP header* that carries one (Basic, Bearer, API-key headers, session cookies);
- a *sentence* that gives one ("my password is ...", in several languages).

The value tests are in secret_values.py; this module only finds candidates.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .findings import Finding
from .secret_values import is_password, is_placeholder, is_reference, looks_random

__all__ = ["context_findings"]

_WORDS = r"pass|pwd|pw|secret|token|key|credential|creds|auth|cookie|session|salt|signature"
# NAME [sep] VALUE. The name is any identifier containing a credential word; the value
# runs to the closing quote when quoted, else to whitespace or punctuation.
_ASSIGNMENT = re.compile(
    rf"(?i)(?<![\w.\-$])(?P<name>[\w.\-]{{0,80}}?(?:{_WORDS})[\w.\-]{{0,40}}?)"
    r"[\"'`]?\]?(?:\s*(?::=|=>|=|:)|\s(?:is|was|are)\s|(?P<blank>[ \t]+))\s*"
    r"(?:(?P<quote>[\"'`])(?P<quoted>[^\"'`\n]{1,200})(?P=quote)|(?P<value>[^\s\"'`,;)}\]>]{3,}))"
)
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SPLIT_NAME = re.compile(r"[_.\-\s]+|(?<=[a-z0-9])(?=[A-Z])")
# A part of a name that says password: the word itself, its short forms, a compound
# ending in one ("dbpass", "rootpwd"); never a word that only starts alike ("passion").
_PASSWORD_PREFIXES = ("password", "passwd", "passphrase", "passcode", "passw", "pwd")
_PASSWORD_SUFFIXES = ("pass", "pwd", "passwd", "password")


def _password_part(part: str) -> bool:
    return part in ("pw", "pword", "pass") or part.startswith(_PASSWORD_PREFIXES) or (
        part.endswith(_PASSWORD_SUFFIXES)
    )

_NOT_PASSWORD = ("passport", "bypass", "compass", "passenger", "passive", "passthrough",
                 "passed", "passes", "passing", "passage", "encompass", "surpass")
_SECRET_PARTS = ("secret", "credential", "credentials", "creds", "private", "signing", "salt",
                 "cookie", "auth", "authorization", "signature", "session")
# Words that contain a credential word but mean something else: a name made of one of
# them says nothing about its value ("author = ...", "tokenizer = ...", "keyboard: ...").
_ORDINARY_PARTS = _words(
    "author authors authored authoring authority authorities authorize authorized authorizer "
    "authorizes authorizing authorization_code authentic authenticity tokenizer tokenizers "
    "tokenize tokenized tokenization tokenizing keyboard keyboards keyword keywords keystroke "
    "keystrokes keyframe keyframes keynote keypad keypress keyup keydown keymap keymaps "
    "keyset keyspace keyword_only monkey turkey hockey jockey whiskey donkey passenger "
    "passengers passage passages passport compass bypass passive passthrough encompass surpass "
    "authen "
    "sessions_dir salty saltstack"
)
# "pass", "passing" as verbs: "Pass `override=True` to ...", "passing --preview". An
# assignment or a copula ("pass = x", "PASS: x", "the db pass is x") makes them names.
_PASS_VERBS = frozenset({"pass", "passing", "passed", "passes"})
# Secret-like names whose value must look generated to count (a cookie "fig=newton", a
# session "length: 57600s" are data); secret and credential names also take passwords.
_STRICT_SECRET_PARTS = ("secret", "credential", "creds", "private")
# A last word that makes the name point at, describe or configure a secret.
_POINTER_SUFFIXES = _words(
    "id ids name names url uri urls path paths file files dir directory folder arn length len "
    "min max ttl expiry expires expiration lifetime timeout algorithm algo alg type types "
    "header prefix suffix field fields column col env var variable size count rotation days "
    "format version region endpoint host port user username login location mount ref hint "
    "policy label hash hashed digest fingerprint kid index idx mode scope scopes provider "
    "store source server issuer audience method scheme limit limits bits usage required "
    "enabled disabled strategy backend class template pattern regex rule rules map manager "
    "table schema option options flag level policy reset expired changed attempts validator "
    "strength complexity encoding encoder charset list type_ kind expression callback cb "
    "handler fn func function hook"
)
# Words before "key"/"token" that make it a data-structure or pagination key.
_DATA_KEY_WORDS = _words(
    "primary partition sort foreign cache idempotency routing shard row hash range lookup "
    "dedup dedupe composite unique object map dict group message event public pub s3 bucket "
    "index sharding join natural surrogate candidate order ordering grouping distribution "
    "cluster clustering hot short sequence dynamo redis kafka record item entity table "
    "primary_key page next continuation pagination sync cursor resume request correlation "
    "trace num total input output prompt completion context cancellation cancel stop eos bos "
    "special pad unk sep cls mask max min sub subscription translation i18n ssh_public "
    "dictionary registry ordering tracking"
)


def _name_class(name: str) -> str | None:
    """'password', 'secret', 'key' (a credential that must look generated) or None."""
    parts = [p.lower() for p in _SPLIT_NAME.split(name) if p]
    parts = [p for p in parts if p not in _ORDINARY_PARTS]
    if not parts:
        return None
    joined = "".join(parts)
    if parts[-1] in _POINTER_SUFFIXES or (len(parts) > 1 and parts[-1] in ("public", "pub")):
        return None
    if "public" in parts or "publishable" in parts:
        return None
    for index, part in enumerate(parts):
        if ("key" in part or "token" in part) and index and parts[index - 1] in _DATA_KEY_WORDS:
            return None
    if any(p in _DATA_KEY_WORDS for p in parts) and not any(
        w in joined for w in ("secret", "pass", "api", "access", "auth", "private")
    ):
        return None
    if any(w in joined for w in _NOT_PASSWORD):
        joined = joined.replace("bypass", "").replace("passport", "")
    if any(_password_part(p) for p in parts) or (
        "password" in joined
    ) or (
        "passwd" in joined or joined.endswith(("pass", "pwd"))
    ):
        return "password"
    if any(any(word in p for word in _SECRET_PARTS) for p in parts):
        return "secret"
    if "key" in joined or "token" in joined:
        return "key"
    return None


def _assignments(text: str) -> Iterator[Finding]:
    for match in _ASSIGNMENT.finditer(text):
        name = match.group("name")
        group = "quoted" if match.group("quoted") is not None else "value"
        value = match.group(group).rstrip(".")
        start = match.start(group)
        if value.startswith(("-", ":")):
            continue  # the next flag of a usage line, a "::" namespace: no value here
        kind = _name_class(name)
        if kind is None:
            continue
        separator = text[match.end("name"):match.start(group)]
        if name.lower() in _PASS_VERBS and match.group("blank"):
            continue  # the verb: "pass `x=True`", "passing "--flag""
        # "NAME value" with only a blank between: a Dockerfile ENV, a config line. Only for
        # names written as identifiers or before a quoted literal (SQL's PASSWORD 'x'), never
        # for a prose word ("password reset").
        if match.group("blank") and not ("_" in name and name.upper() == name) and (
            group != "quoted"
        ):
            continue
        worded = bool(re.search(r"\s(?:is|was|are)\s", separator))
        if kind == "password":
            hit = is_password(value) if not worded else is_password(value) and not value.isalpha()
        elif kind == "secret":
            strict = any(w in name.lower() for w in _STRICT_SECRET_PARTS)
            hit = looks_random(value, uuid_counts=True, min_length=12) or (
                strict and not worded and is_password(value) and len(value) >= 10)
        else:
            env_name = "_" in name and name.upper() == name
            hit = looks_random(value, uuid_counts=env_name or any(
                w in name.lower() for w in ("api", "access", "auth", "license")))
        if hit:
            yield Finding("secret", f"{kind}-assignment", f"value of {kind}-like name",
                          start, start + len(value))


# Commands that take a password (or user:password) as an argument.
_ARG = r"[\"']?(?P<value>[^\s\"'|;&]+)"
# The lookahead on first letters lets re skip most positions at once (~1.6x faster).
_COMMANDS = re.compile(
    r"(?i)(?=[cmsdpbaholrz7unerie-])(?:"
    rf"\bcurl\b[^\n|;]*?\s(?:-u|--user|--proxy-user)\s*=?\s*[\"']?[^\s:\"']*:{_ARG}"
    rf"|\b(?:mysql|mysqldump|mysqladmin|mariadb|mysqlimport|mysqlsh)\b[^\n|;]*?\s-p"
    r"[\"']?(?P<value2>[^\s\"'\-][^\s\"'|;&]*)"
    rf"|\bsshpass\s+-p\s*{_ARG.replace('value', 'value3')}"
    r"|\b(?:docker|podman|buildah|nerdctl|oras|skopeo|helm\s+registry|az|heroku)\s+login\b"
    rf"[^\n|;]*?\s(?:-p|--password)(?:\s+|=){_ARG.replace('value', 'value4')}"
    rf"|\bredis-cli\b[^\n|;]*?\s-a\s+{_ARG.replace('value', 'value5')}"
    rf"|\bldap(?:search|modify|add|delete|passwd|whoami)\b[^\n|;]*?\s-w\s+"
    rf"{_ARG.replace('value', 'value6')}"
    r"|(?:\b(?:7z|7za)\b[^\n|;]*?\s-[pP]|\b(?:unzip|zip|unrar|rar)\b[^\n|;]*?\s(?-i:-P))"
    r"\s?[\"']?(?P<value7>[^\s\"'\-][^\s\"']*)"
    r"|\bpass(?:in|out)?\s+pass:(?P<value8>\S+)"
    rf"|\bsmbclient\b[^\n|;]*?\s-U\s+[\"']?[^\s%\"']+%{_ARG.replace('value', 'value9')}"
    rf"|\bmongo(?:sh|dump|restore|import|export)?\b[^\n|;]*?\s(?:-p|--password)\s+"
    rf"{_ARG.replace('value', 'value10')}"
    rf"|\b(?:sqlcmd|bcp|osql)\b[^\n|;]*?\s-P\s+{_ARG.replace('value', 'value11')}"
    r"|\bhtpasswd\s+-\w*b\w*\s+\S+\s+\S+\s+(?P<value12>\S+)"
    r"|\bnet\s+use\b[^\n]*?/user:\S+\s+(?P<value13>[^\s/]+)"
    r"|\brabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+(?P<value14>\S+)"
    rf"|\bssh-keygen\b[^\n|;]*?\s-N\s+{_ARG.replace('value', 'value15')}"
    r"|\becho\s+(?:-n\s+)?[\"']?(?P<value16>[^\s\"'|]+)[\"']?\s*\|\s*(?:sudo\s+-S|"
    r"(?:docker|podman|helm\s+registry)\s+login|chpasswd|passwd\s+--stdin)"
    r"|\b(?:user|role|login)\b[^\n;]{0,80}?\bidentified\s+(?:with\s+\S+\s+)?by\s+[\"']"
    r"(?P<value18>[^\"'\n]+)"
    r"|(?<![\w-])--(?:password|passwd|pass|db-password|admin-password|root-password|token|"
    r"api-key|apikey|api-token|auth-token|access-token|secret|client-secret|secret-key|"
    r"access-key|secret-access-key|private-token|bearer)(?=[=\s])(?:=|\s+)"
    r"[\"']?(?P<value17>[^\s\"'|;&]+)"
    r")"
)


# "systemd-cryptenroll(1)": a manual page named after a flag, in a SEE ALSO list.
_MAN_REFERENCE = re.compile(r"^[\w.\-]+\(\d\w*\)$")


def _commands(text: str) -> Iterator[Finding]:
    for match in _COMMANDS.finditer(text):
        group = next(g for g, v in match.groupdict().items() if v is not None)
        value = match.group(group)
        if group == "value17":
            value = value.rstrip("]),.")  # "[--password=PASSWORD]" in a usage line
            if _MAN_REFERENCE.match(value):
                continue
        if len(value) < 3 or is_placeholder(value) or is_reference(value) or value == "-":
            continue
        if value.startswith("-") or value.lower() in ("stdin", "prompt"):
            continue
        # A flag's value must look like a password: "--password Force X to prompt" and
        # "--password=PASSWORD" are a manual's words, not a secret.
        if group == "value17" and not (is_password(value) or looks_random(value)):
            continue
        start = match.start(group)
        yield Finding("secret", "command-password", "password on a command line",
                      start, start + len(value))


_HEADERS = re.compile(
    r"(?i)(?:\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?P<scheme>basic|bearer|token|digest|"
    r"apikey|api-key|sso-key|key|otp)\s+(?P<auth>[^\s\"',;]{6,})"
    r"|\b(?:x-api-key|x-auth-token|api-key|x-access-token|x-apikey|x-token|private-token|"
    r"x-goog-api-key|ocp-apim-subscription-key|x-functions-key|x-vault-token|x-api-token|"
    r"x-secret|x-client-secret)\s*:\s*[\"']?(?P<header>[^\s\"',;]{8,})"
    r"|\b(?:set-)?cookie\s*:\s*[^\n]*?\b(?:session(?:id)?|sid|connect\.sid|_session\w*|auth\w*|"
    r"token|jwt|remember_token|__Secure-\w+)=(?P<cookie>[^;\s\"']{16,}))"
)


def _headers(text: str) -> Iterator[Finding]:
    for match in _HEADERS.finditer(text):
        group = next(g for g in ("auth", "header", "cookie") if match.group(g) is not None)
        value = match.group(group)
        if is_placeholder(value) or is_reference(value):
            continue
        if group == "auth" and match.group("scheme").lower() == "basic":
            hit = len(value) >= 8 and re.fullmatch(r"[A-Za-z0-9+/]+=*", value) is not None
        elif group == "auth":
            hit = len(value) >= 12 and looks_random(value, uuid_counts=True, min_length=12)
        else:
            hit = looks_random(value, uuid_counts=True, min_length=12)
        if hit:
            yield Finding("secret", "auth-header", "credential in an HTTP header",
                          *match.span(group))


# "my password is ...", "das Passwort lautet ...", "mi contraseña es ...".
_PASSWORD_WORDS = (
    r"passwords?|passphrase|passcode|pass ?word|pin(?: code)?|secret(?: key)?|api ?key|"
    r"access ?token|token|mot de passe|passwort|kennwort|contrase[nñ]a|clave|senha|"
    r"palavra-passe|wachtwoord|has[lł]o|l[oö]senord|passord|adgangskode|salasana|heslo|"
    r"jelsz[oó]|parola|[sş]ifre(?:m|si)?|пароль|密码|密碼|パスワード|비밀번호|كلمة المرور|סיסמה|"
    r"पासवर्ड|m[aậ]t kh[aẩ]u|kata sandi|geheimnis|segreto|секрет"
)
_CONNECTORS = (
    r"\s+(?:is|was)\s+(?:stored|kept|saved|set|given|configured)\s+(?:as|to)|"
    r"\s+(?:stored|saved|kept)\s+as|"
    r"\s*(?:[=:：]|->)|\s+(?:is|was|are|est|ist|lautet|es|era|é|è|e|to|är|er|on|jest|je|"
    r"olarak|это|—|-|là|adalah)|\s*(?:是|为|為|は|는|은|هي|है)"
)
_CJK_WORDS = r"密码|密碼|パスワード|비밀번호"
_PHRASE = re.compile(rf"(?i)(?P<word>(?<!\w)(?:{_PASSWORD_WORDS})|{_CJK_WORDS})")
# After the word: k short words ("for the billing webhook"), a connector, the value. Each
# k is tried in turn, so "the password was changed to X" is read past "was changed".
_PHRASE_TAILS = tuple(
    re.compile(rf"(?i)(?:\s+[^\s:=]{{1,14}}){{{k}}}(?:{_CONNECTORS})\s*[\"'`«“]?"
               r"(?P<value>[^\s\"'`»”]{6,})")
    for k in range(5)
)
# Words that name a generated credential rather than a password a person picks: the
# value after them must look generated ("the token=RXP95LE2XL" in a badge URL is not).
_GENERATED_WORDS = re.compile(
    r"(?i)^(?:secret(?: key)?|api ?key|access ?token|token|geheimnis|segreto|секрет)$")
# English endings of ordinary words: "the password is required / incorrect / hashed".
_WORD_ENDINGS = ("ed", "ing", "ly", "tion", "sion", "able", "ible", "ment", "ness", "ive",
                 "ous", "ful", "less", "ity", "ence", "ance", "ate", "ise", "ize", "al")


def _stated_password(value: str) -> bool:
    """A value stated after a password word: mixed characters, a long one-word
    passphrase of letters that is not an ordinary word, or a number of 6+ digits."""
    if value.isdigit():
        return len(value) >= 6
    if value.isalpha():
        return (len(value) >= 10 and value.isascii() and value.islower()
                and not value.endswith(_WORD_ENDINGS))
    return is_password(value)
# A credential word followed directly by a generated-looking value: "my secret X9f...".
_BARE = re.compile(
    r"(?i)(?<![\w.\-])(?:secret|token|api[ _]?key|access[ _]key|secret[ _]access[ _]key|"
    r"client[ _]secret|password|passwd|passphrase|private[ _]key)\s+(?P<value>[^\s\"'`]{16,})"
)
_NETRC = re.compile(r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<value>\S+)")


def _sentences(text: str) -> Iterator[Finding]:
    for word in _PHRASE.finditer(text):
        generated = _GENERATED_WORDS.match(word.group("word").lower()) is not None
        for tail in _PHRASE_TAILS:
            match = tail.match(text, word.end())
            if match is None:
                continue
            value = match.group("value").rstrip(".,;:!?)]>")
            if value.startswith(("-", ":")) or is_placeholder(value):
                continue  # a command-line flag follows the word, or a stand-in
            if looks_random(value, uuid_counts=generated, min_length=12) or (
                not generated and _stated_password(value)
            ):
                yield Finding("secret", "stated-password", "password given in a sentence",
                              match.start("value"), match.start("value") + len(value))
                break
    for match in _BARE.finditer(text):
        value = match.group("value").rstrip(".,;!?)")
        before = text[max(0, match.start() - 16):match.start()].lower()
        if "public" in before or "publishable" in before:  # a public token is shared on purpose
            continue
        if looks_random(value, min_length=16):
            yield Finding("secret", "stated-password", "credential given in a sentence",
                          match.start("value"), match.start("value") + len(value))
    for match in _NETRC.finditer(text):
        if not is_placeholder(match.group("value")):
            yield Finding("secret", "netrc-password", "password in a netrc entry",
                          *match.span("value"))


_URL_PASSWORD = re.compile(
    r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?P<user>[^\s:/@]{0,64}):(?P<value>[^\s@/]{3,128})@[^\s/]+"
)


def _urls(text: str) -> Iterator[Finding]:
    for match in _URL_PASSWORD.finditer(text):
        value = match.group("value")
        if not is_placeholder(value) and not value.startswith("$"):
            yield Finding("secret", "connection-password", "password in a connection string",
                          *match.span("value"))


_NEEDS = ("pass", "pwd", "pw", "secret", "token", "key", "credential", "creds", "auth", "cookie",
          "session", "salt", "signature", "://", " -p", " -u", " -a", " -w", " -n", "pass:",
          "login", "machine", "pin", "senha", "contrase", "clave", "mot de passe", "wachtwoord",
          "has", "l\u00f6senord",
          "passord", "adgangskode", "salasana", "heslo", "jelsz", "parola", "ifre", "кпароль",
          "пароль", "секрет", "密", "パスワード", "비밀번호", "كلمة", "סיסמה", "पासवर्ड", "kh",
          "sandi", "geheim", "segreto", "-p")


def context_findings(text: str) -> list[Finding]:
    """Every candidate credential found by its context, unfiltered for overlap."""
    lowered = text.lower()
    if not any(word in lowered for word in _NEEDS):
        return []
    found: list[Finding] = []
    for rule in (_assignments, _commands, _headers, _sentences, _urls):
        found.extend(rule(text))
    return found
