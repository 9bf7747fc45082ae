# ruff: noqa: E501 - corpus templates are data: one realistic line each reads best
"""Write the adversarial screening corpora (``*.jsonl`` beside this file), seeded.

The corpora are composed from CLASSES of real-world input, not from the screen's rules:
where credentials live (config formats, shells, code, HTTP, chat) x which field of a
memory carries them x the words around them; what ordinary engineering notes that merely
look like secrets say; what an attacker wants an agent to do x how the order is
disguised; and what ordinary imperative notes tell a person. The class lists below were
written from that outside view and are kept apart from the rule tables in
``aide_memoire.engine.trust``.

Each line: ``{"id", "corpus", "class", "format", "field", "text", "half"}``. ``half`` is
``tune`` or ``holdout`` by a fixed hash of the text: rules may be tuned on the first
only; tests and bench/screen.py report both.

    python -m tests.trust.corpora.generate      # from the repository root: rewrites the files
"""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Callable

from tests.trust.corpora.attacks import imperatives, injections
from tests.trust.corpora.common import _ALNUM, _B64, _HEX, _URLSAFE, HERE, SEED, Gen, half_of, place

# -- secrets: value makers (credential shapes seen in the wild, by family) -------------

def _secret_values(g: Gen) -> dict[str, Callable[[], str]]:
    c = g.chars
    return {
        "aws-key-id": lambda: "AKIA" + c(string.ascii_uppercase + "234567", 16),
        "aws-secret": lambda: c(_B64, 40),
        "github-classic": lambda: "ghp_" + c(_ALNUM, 36),
        "github-fine": lambda: "github_pat_" + c(_ALNUM, 22) + "_" + c(_ALNUM, 59),
        "gitlab": lambda: "glpat-" + c(_URLSAFE, 20),
        "slack-bot": lambda: f"xoxb-{c(string.digits, 12)}-{c(string.digits, 13)}-{c(_ALNUM, 24)}",
        "stripe-live": lambda: "sk_live_" + c(_ALNUM, 32),
        "google-api": lambda: "AIza" + c(_URLSAFE, 35),
        "openai-proj": lambda: "sk-proj-" + c(_URLSAFE, 64),
        "anthropic": lambda: "sk-ant-api03-" + c(_URLSAFE, 93) + "AA",
        "mapbox-secret": lambda: "sk.eyJ1Ijoi" + c(_URLSAFE, 30) + "." + c(_URLSAFE, 22),
        "atlassian": lambda: "ATATT3xFfGF0" + c(_URLSAFE, 180) + "=" + c(_HEX.upper(), 8),
        "okta": lambda: "00" + c(_URLSAFE, 40),
        "npm": lambda: "npm_" + c(_ALNUM, 36),
        "pypi": lambda: "pypi-AgEIcHlwaS5vcmc" + c(_URLSAFE, 60),
        "sendgrid": lambda: "SG." + c(_URLSAFE, 22) + "." + c(_URLSAFE, 43),
        "twilio-auth": lambda: c(_HEX, 32),
        "heroku": lambda: "-".join(c(_HEX, n) for n in (8, 4, 4, 4, 12)),
        "datadog": lambda: c(_HEX, 32),
        "docker-hub": lambda: "dckr_pat_" + c(_URLSAFE, 27),
        "huggingface": lambda: "hf_" + c(_ALNUM, 34),
        "digitalocean": lambda: "dop_v1_" + c(_HEX, 64),
        "vault": lambda: "hvs." + c(_URLSAFE, 90),
        "jwt": lambda: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + c(_URLSAFE, 60) + "." + c(_URLSAFE, 43),
        "django-secret": lambda: "django-insecure-" + c(_ALNUM + "!@#%^&*(-_=+)", 50),
        "rails-base": lambda: c(_HEX, 128),
        "laravel": lambda: "base64:" + c(_B64, 43) + "=",
        "fernet": lambda: c(_URLSAFE, 43) + "=",
        "azure-secret": lambda: c(_ALNUM, 3) + "8Q~" + c(_URLSAFE + ".~", 34),
        "generic-hex": lambda: c(_HEX, 40 + 8),
        "generic-b64": lambda: c(_B64, 32) + "==",
        "password": g.password,
    }


def _pem(g: Gen, kind: str = "RSA PRIVATE KEY", escaped: bool = False) -> str:
    body = "\n".join(g.chars(_B64, 64) for _ in range(6))
    text = f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"
    return text.replace("\n", "\\n") if escaped else text


def _putty(g: Gen) -> str:
    return ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy@build\n"
            f"Public-Lines: 2\n{g.chars(_B64, 64)}\n{g.chars(_B64, 20)}\nPrivate-Lines: 1\n"
            f"{g.chars(_B64, 44)}\nPrivate-MAC: {g.chars(_HEX, 64)}")


def _service_account(g: Gen, with_id: bool) -> str:
    doc: dict[str, str] = {"type": "service_account", "project_id": "acme-prod-4411"}
    if with_id:
        doc["private_key_id"] = g.chars(_HEX, 40)
    doc["private_key"] = _pem(g, "PRIVATE KEY") + "\n"
    doc["client_email"] = "ingest@acme-prod-4411.iam.gserviceaccount.com"
    doc["client_id"] = g.chars(string.digits, 21)
    return json.dumps(doc, indent=2)


# (format, builder of text from a value); names are ones real projects use.
def _secret_formats(g: Gen) -> list[tuple[str, str, Callable[[Callable[[], str]], str]]]:
    pw = g.password
    env = ["PGPASSWORD", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASS", "ADMIN_PASS",
           "SMTP_PASSWORD", "MAIL_PASS", "RABBITMQ_DEFAULT_PASS", "KEYCLOAK_ADMIN_PASSWORD",
           "GF_SECURITY_ADMIN_PASSWORD", "MINIO_ROOT_PASSWORD", "ELASTIC_PASSWORD", "DB_PASSWD",
           "LDAP_BIND_PW", "SFTP_PWD", "WIFI_PASSPHRASE", "KEYSTORE_PASS"]
    secret_env = ["SECRET_KEY_BASE", "DJANGO_SECRET_KEY", "JWT_SECRET", "SESSION_SECRET",
                  "APP_SECRET", "NEXTAUTH_SECRET", "COOKIE_SECRET", "WEBHOOK_SIGNING_SECRET",
                  "AUTH0_CLIENT_SECRET", "OAUTH_CLIENT_SECRET", "ENCRYPTION_KEY", "MASTER_KEY"]
    token_env = ["DATADOG_API_KEY", "HEROKU_API_KEY", "CLOUDFLARE_API_TOKEN", "SNYK_TOKEN",
                 "SENTRY_AUTH_TOKEN", "CODECOV_TOKEN", "ALGOLIA_ADMIN_KEY", "MAILGUN_API_KEY",
                 "PAGERDUTY_TOKEN", "NEW_RELIC_LICENSE_KEY", "TWILIO_AUTH_TOKEN", "ROLLBAR_ACCESS_TOKEN"]
    users = ["deploy", "admin", "ci", "svc_backup", "alice", "root"]
    hosts = ["db.internal", "10.0.4.12", "pg-prod.acme.io", "redis.local", "mq.svc.cluster.local"]
    return [
        ("dotenv", "password-name", lambda v: f"{g.pick(env)}={pw()}"),
        ("dotenv-quoted", "password-name", lambda v: f'{g.pick(env)}="{pw()}"'),
        ("shell-export", "password-name", lambda v: f"export {g.pick(env)}='{pw()}'"),
        ("yaml", "password-name", lambda v: f"database:\n  user: {g.pick(users)}\n  password: {pw()}"),
        ("docker-compose", "password-name",
         lambda v: f"environment:\n  - {g.pick(env)}={pw()}"),
        ("json-config", "password-name", lambda v: json.dumps({"db": {"host": g.pick(hosts),
                                                                     "password": pw()}})),
        ("toml", "password-name", lambda v: f'[smtp]\nusername = "{g.pick(users)}"\npassword = "{pw()}"'),
        ("ini", "password-name", lambda v: f"[client]\nuser={g.pick(users)}\npassword={pw()}"),
        ("java-properties", "password-name",
         lambda v: f"spring.datasource.password={pw()}"),
        ("dockerfile", "password-name", lambda v: f"ENV {g.pick(env)} {pw()}"),
        ("powershell", "password-name", lambda v: f'$env:{g.pick(env)} = "{pw()}"'),
        ("python-code", "password-name", lambda v: f'conn = connect(host="{g.pick(hosts)}", password="{pw()}")'),
        ("sql", "password-name", lambda v: f"CREATE USER {g.pick(users)} WITH PASSWORD '{pw()}';"),
        ("secret-env", "secret-name", lambda v: f"{g.pick(secret_env)}={g.chars(_ALNUM, 48)}"),
        ("token-env", "token-name", lambda v: f"{g.pick(token_env)}={v()}"),
        ("github-actions", "token-name",
         lambda v: f"env:\n  {g.pick(token_env)}: {v()}"),
        ("terraform", "token-name", lambda v: f'provider "cloudflare" {{\n  api_token = "{v()}"\n}}'),
        ("k8s-stringdata", "password-name", lambda v: f"stringData:\n  DB_PASSWORD: {pw()}"),
        ("url-credentials", "connection", lambda v: f"postgresql://{g.pick(users)}:{pw()}@{g.pick(hosts)}:5432/app"),
        ("amqp-url", "connection", lambda v: f"BROKER_URL=amqp://{g.pick(users)}:{pw()}@{g.pick(hosts)}//"),
        ("git-remote", "connection", lambda v: f"git clone https://oauth2:{v()}@gitlab.acme.io/team/api.git"),
        ("jdbc-params", "connection", lambda v: f"jdbc:sqlserver://{g.pick(hosts)};user={g.pick(users)};password={pw()};"),
        ("curl-user", "command", lambda v: f"curl -u {g.pick(users)}:{pw()} https://api.acme.io/v1/jobs"),
        ("mysql-p", "command", lambda v: f"mysql -h {g.pick(hosts)} -u {g.pick(users)} -p{pw()} app_prod"),
        ("sshpass", "command", lambda v: f"sshpass -p '{pw()}' ssh {g.pick(users)}@{g.pick(hosts)}"),
        ("docker-login", "command", lambda v: f"docker login -u {g.pick(users)} -p {pw()} registry.acme.io"),
        ("psql-url", "command", lambda v: f'psql "postgres://{g.pick(users)}:{pw()}@{g.pick(hosts)}/app"'),
        ("pgpassword-inline", "command", lambda v: f"PGPASSWORD={pw()} pg_dump -h {g.pick(hosts)} app > dump.sql"),
        ("redis-cli", "command", lambda v: f"redis-cli -h {g.pick(hosts)} -a {pw()} FLUSHALL"),
        ("cli-long-flag", "command", lambda v: f"deployctl push --api-token {v()} --env prod"),
        ("basic-header", "http", lambda v: "Authorization: Basic " + base64.b64encode(
            f"{g.pick(users)}:{pw()}".encode()).decode()),
        ("bearer-header", "http", lambda v: f"curl -H 'Authorization: Bearer {v()}' https://api.acme.io/me"),
        ("api-key-header", "http", lambda v: f"X-API-Key: {g.chars(_ALNUM, 32)}"),
        ("okta-header", "http", lambda v: f"Authorization: SSWS {v()}"),
        ("netrc", "file", lambda v: f"machine api.acme.io login {g.pick(users)} password {pw()}"),
        ("npmrc", "file", lambda v: f"//registry.npmjs.org/:_authToken={v()}"),
        ("aws-credentials-file", "pair",
         lambda v: f"[default]\naws_access_key_id = {_secret_values(g)['aws-key-id']()}\n"
                   f"aws_secret_access_key = {g.chars(_B64, 40)}"),
        ("aws-pair-spaces", "pair",
         lambda v: f"aws_access_key_id {_secret_values(g)['aws-key-id']()} aws_secret_access_key "
                   f"{g.chars(_B64, 40)}"),
        ("key-id-and-secret", "pair",
         lambda v: f"client_id: {g.chars(_HEX, 20)}\nclient_secret: {g.chars(_URLSAFE, 40)}"),
        ("chat-en", "sentence", lambda v: f"my {g.pick(['wifi', 'vpn', 'laptop', 'db'])} password is {pw()}"),
        ("chat-secret-random", "sentence", lambda v: f"fyi my secret {g.chars(_ALNUM, 40)}"),
        ("chat-fr", "sentence", lambda v: f"mon mot de passe est {pw()} pour le serveur"),
        ("chat-de", "sentence", lambda v: f"Das Passwort lautet {pw()}"),
        ("chat-es", "sentence", lambda v: f"mi contraseña es {pw()}"),
        ("chat-pt", "sentence", lambda v: f"a senha do banco é {pw()}"),
        ("chat-nl", "sentence", lambda v: f"het wachtwoord is {pw()}"),
        ("chat-ru", "sentence", lambda v: f"пароль от сервера: {pw()}"),
        ("chat-zh", "sentence", lambda v: f"数据库密码是 {pw()}"),
        ("vendor-inline", "vendor", lambda v: f"use this one: {v()}"),
        ("vendor-log", "vendor", lambda v: f"2026-11-30T10:04:11Z DEBUG client init token={v()} ok"),
        ("pem", "structured", lambda v: _pem(g, g.pick(["RSA PRIVATE KEY", "PRIVATE KEY",
                                                         "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"]))),
        ("putty", "structured", lambda v: _putty(g)),
        ("service-account", "structured", lambda v: _service_account(g, with_id=True)),
        ("service-account-no-id", "structured", lambda v: _service_account(g, with_id=False)),
        ("zero-width-split", "disguise", lambda v: (lambda s: s[:6] + "\u200b" + s[6:])(v())),
        ("entity-encoded", "disguise", lambda v: "token: " + "".join(
            f"&#{ord(ch)};" if i % 3 == 0 else ch for i, ch in enumerate(v()))),
    ]


_VENDOR_FOR_TOKEN = ["github-classic", "github-fine", "gitlab", "slack-bot", "stripe-live",
                     "google-api", "openai-proj", "anthropic", "mapbox-secret", "atlassian",
                     "npm", "pypi", "sendgrid", "docker-hub", "huggingface", "digitalocean",
                     "vault", "jwt", "heroku", "datadog", "twilio-auth"]


def secrets(g: Gen) -> list[dict[str, str]]:
    values = _secret_values(g)
    formats = _secret_formats(g)
    contexts = ["", "Note for later: ", "From the incident channel: ", "Setup step 3 - ",
                "(pasted from the wiki) ", "reminder: "]
    fields = ["content"] * 6 + ["metadata", "metadata", "source", "speaker", "tags", "context"]
    out: list[dict[str, str]] = []
    for round_ in range(3):
        for fmt, cls, build in formats:
            vendor = g.pick(_VENDOR_FOR_TOKEN)
            text = build(values[vendor])
            field = g.pick(fields) if round_ else "content"
            if field == "tags" and len(text) > 64:
                field = "content"
            text = (g.pick(contexts) + text) if field in ("content", "context") else text
            field, value = place(g, text, field)
            out.append({"class": cls, "format": fmt if cls != "vendor" else f"{fmt}:{vendor}",
                        "field": field, "text": value})
    return out


# -- ordinary notes that look like secrets ------------------------------------------------

def lookalikes(g: Gen) -> list[dict[str, str]]:
    sha: Callable[[], str] = lambda: g.chars(_HEX, 40)  # noqa: E731
    uuid: Callable[[], str] = lambda: "-".join(g.chars(_HEX, n) for n in (8, 4, 4, 4, 12))  # noqa: E731
    templates: list[tuple[str, Callable[[], str]]] = [
        ("object-key", lambda: "The `api_key` field is required in the request body; `password` is optional."),
        ("object-key", lambda: f"Set `{g.pick(['secret_key', 'auth_token', 'password'])}` in settings.py from the environment, never inline."),
        ("partition-key", lambda: f"partition_key: {g.pick(['tenant_id', 'org_id', 'account_id'])}, sort_key: created_at"),
        ("partition-key", lambda: "The DynamoDB table uses PK=USER#{id} and SK=ORDER#{ts}; partition key is user_id."),
        ("primary-key", lambda: f"primary_key = ('{g.pick(['order_id', 'id'])}',) and foreign_key orders.user_id -> users.id"),
        ("cache-key", lambda: f"cache_key = f\"user:{{user_id}}:profile\" with a TTL of {g.rng.randrange(30, 600)}s"),
        ("commit-hash", lambda: f"Fixed in commit {sha()} (see PR #{g.rng.randrange(100, 9999)})."),
        ("commit-hash", lambda: f"git revert {sha()[:12]} broke the key rotation job; reverted again."),
        ("uuid", lambda: f"request_id={uuid()} failed with 502 after 30s"),
        ("uuid", lambda: f"The token for tenant {uuid()} expired; user re-logged in."),
        ("pwd-path", lambda: f"pwd={g.pick(['/home/ci/build', '/srv/app', '/tmp/work'])} when the job started"),
        ("pwd-path", lambda: "cd $(pwd)/scripts && ./deploy.sh"),
        ("placeholder", lambda: "export API_TOKEN=<your-token> before running the CLI"),
        ("placeholder", lambda: "DB_PASSWORD=changeme in .env.example; override it locally"),
        ("placeholder", lambda: "Authorization: Bearer <access-token>"),
        ("placeholder", lambda: "GITHUB_TOKEN=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx in the template"),
        ("placeholder", lambda: "password: \"********\" (masked in the dashboard)"),
        ("env-reference", lambda: "PGPASSWORD=${DB_PASSWORD} psql -h db.internal app"),
        ("env-reference", lambda: "password = os.environ[\"DB_PASSWORD\"]"),
        ("env-reference", lambda: "curl -u $CI_USER:$CI_TOKEN https://ci.acme.io/api"),
        ("env-reference", lambda: "echo \"$REGISTRY_PASSWORD\" | docker login -u ci --password-stdin"),
        ("env-reference", lambda: "token: ${{ secrets.DEPLOY_TOKEN }}"),
        ("secret-pointer", lambda: "SECRET_NAME=prod/db/credentials in AWS Secrets Manager"),
        ("secret-pointer", lambda: "DB_SECRET_ARN=arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod-db-AbCdEf"),
        ("secret-pointer", lambda: "The SSH key lives at ~/.ssh/id_ed25519; KEY_FILE=/etc/app/tls.key"),
        ("secret-pointer", lambda: "API key is in 1Password under 'Stripe prod'; ask ops."),
        ("config-about-secrets", lambda: f"PASSWORD_MIN_LENGTH={g.rng.randrange(8, 16)} and KEY_ROTATION_DAYS=90"),
        ("config-about-secrets", lambda: "JWT_EXPIRY=3600, TOKEN_URL=https://auth.acme.io/oauth/token"),
        ("config-about-secrets", lambda: f"max_tokens={g.pick(['256', '1024', '4096'])}, temperature=0.2"),
        ("config-about-secrets", lambda: "SESSION_TIMEOUT=30m; the session cookie is HttpOnly and Secure"),
        ("prose", lambda: f"Password reset emails take {g.rng.randrange(1, 10)} minutes; the token is valid for 1 hour."),
        ("prose", lambda: "The secret to fast builds is caching node_modules between jobs."),
        ("prose", lambda: "Rotate the API key every quarter and revoke the old one the same day."),
        ("prose", lambda: "The password policy requires twelve characters and one symbol."),
        ("prose", lambda: "Keyboard shortcut: ctrl+k opens the command palette."),
        ("digest", lambda: f"image digest sha256:{g.chars(_HEX, 64)}"),
        ("digest", lambda: f"ETag: \"{g.chars(_HEX, 32)}\" on the uploaded artifact"),
        ("checksum", lambda: f"md5sum of the release tarball: {g.chars(_HEX, 32)}"),
        ("public-key", lambda: f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.chars(_B64, 43)} deploy@ci"),
        ("public-key", lambda: f"Mapbox public token pk.eyJ1IjoiYWNtZSIsImEiOiJ{g.chars(_URLSAFE, 20)}"),
        ("port-flags", lambda: "docker run -p 8080:80 -v $(pwd):/app nginx"),
        ("port-flags", lambda: "ssh -p 2222 deploy@bastion && mkdir -p /srv/app"),
        ("prompting-flag", lambda: "mysql -u root -p app_dev (it prompts for the password)"),
        ("empty-pass", lambda: "ssh-keygen -t ed25519 -N '' -f ./deploy_key"),
        ("pagination", lambda: f"next_page_token={g.chars(_URLSAFE, 40)} returned by the list call"),
        ("idempotency", lambda: f"Idempotency-Key: {uuid()} on every POST"),
        ("build-id", lambda: f"build {g.chars(_HEX, 40)} passed on main"),
        ("base64-text", lambda: "The fixture is base64 'aGVsbG8gd29ybGQ=' (hello world)."),
        ("csrf-field", lambda: "The form posts csrf_token and the server checks it against the session."),
        ("password-hash-col", lambda: "users.password_hash stores bcrypt with cost 12"),
        ("auth-domain", lambda: "AUTH_DOMAIN=acme-dev.eu.auth0.com and CLIENT_ID=web-frontend"),
        ("hashed-example", lambda: f"$2b$12${g.chars(_ALNUM + './', 53)} is how bcrypt hashes look in the table"),
    ]
    fields = ["content"] * 5 + ["metadata", "source", "tags"]
    out: list[dict[str, str]] = []
    while len(out) < 100:
        cls, build = templates[len(out) % len(templates)]
        text = build()
        field = g.pick(fields) if len(out) >= len(templates) else "content"
        if field == "tags" and (len(text) > 64 or "," in text):
            field = "content"
        field, value = place(g, text, field)
        out.append({"class": cls, "format": cls, "field": field, "text": value})
    return out


def build() -> dict[str, list[dict[str, str]]]:
    g = Gen(SEED)
    corpora = {"secrets": secrets(g), "lookalikes": lookalikes(g),
               "injections": injections(g), "imperatives": imperatives(g)}
    for name, rows in corpora.items():
        for number, row in enumerate(rows):
            row["id"] = f"{name}-{number:03d}"
            row["corpus"] = name
            row["half"] = half_of(row["text"])
    return corpora


def main() -> None:
    for name, rows in build().items():
        with (HERE / f"{name}.jsonl").open("w", encoding="utf-8") as fp:
            for row in rows:
                fp.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
