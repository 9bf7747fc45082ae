"""The predicate taxonomy: which slots hold one value at a time and which hold many.

A *single-valued* slot (``works_at``, ``lives_in``...) has one current value per subject:
a newer fact for the same subject and slot closes the older one (it is superseded, not
deleted). A *multi-valued* slot (``likes``, ``uses``...) keeps every value until one is
retracted ("I no longer use Vim") or replaced explicitly ("we switched from Postgres to
SQLite"). docs/facts.md lists the same table for users.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CATEGORY_OF",
    "PREDICATES",
    "Predicate",
    "category_of",
    "is_single",
]


@dataclass(frozen=True)
class Predicate:
    name: str
    single: bool
    meaning: str


PREDICATES: dict[str, Predicate] = {
    p.name: p
    for p in (
        Predicate("works_at", True, "the organisation the subject works for"),
        Predicate("lives_in", True, "the place the subject lives"),
        Predicate("role", True, "the subject's job title or role"),
        Predicate("uses_version", True, "the version of a component (the subject) in use"),
        Predicate("status", True, "the state of a project or task (the subject)"),
        Predicate("prefers", True, "the subject's choice within one category (favourite)"),
        Predicate("likes", False, "something the subject likes or enjoys"),
        Predicate("has", False, "something the subject owns or has"),
        Predicate("visited", False, "a place the subject has been to"),
        Predicate("uses", False, "a tool, library or service the subject uses"),
    )
}


def is_single(predicate: str) -> bool:
    """Single-valued slots; ``prefers:<category>`` slots are single-valued too."""
    base = predicate.split(":", 1)[0]
    found = PREDICATES.get(base)
    return bool(found and found.single)


# Technology categories: "switched to SQLite" replaces the subject's other database, and
# "we use SQLite" then "we use MySQL" are two databases (uses is multi-valued) unless a
# switch says otherwise. Keys are normalised names (see entities.normalise).
_CATEGORIES: dict[str, tuple[str, ...]] = {
    "database": (
        "postgres", "postgresql", "mysql", "mariadb", "sqlite", "mongodb", "mongo", "redis",
        "dynamodb", "cassandra", "oracle", "sql server", "mssql", "cockroachdb", "duckdb",
        "elasticsearch", "firestore", "supabase", "neo4j", "clickhouse", "bigquery",
        "snowflake",
    ),
    "editor": (
        "vim", "neovim", "emacs", "vscode", "vs code", "visual studio code", "sublime",
        "sublime text", "intellij", "pycharm", "atom", "nano", "helix", "zed", "cursor",
    ),
    "language": (
        "python", "rust", "go", "golang", "java", "kotlin", "typescript", "javascript",
        "ruby", "c++", "c#", "swift", "scala", "elixir", "haskell", "php", "perl", "julia",
    ),
    "cloud": ("aws", "gcp", "google cloud", "azure", "heroku", "vercel", "netlify",
              "digitalocean", "fly.io", "cloudflare"),
    "os": ("linux", "ubuntu", "debian", "fedora", "arch", "macos", "windows", "nixos"),
    "ci": ("jenkins", "github actions", "gitlab ci", "circleci", "travis", "buildkite"),
    "package manager": ("pip", "poetry", "uv", "conda", "npm", "yarn", "pnpm", "cargo"),
    "web framework": ("django", "flask", "fastapi", "rails", "express", "spring", "next.js",
                      "react", "vue", "angular", "svelte"),
    "test framework": ("pytest", "unittest", "jest", "mocha", "vitest", "nose"),
    "theme": ("dark mode", "light mode", "dark theme", "light theme"),
    "indentation": ("tabs", "spaces"),
    "drink": ("tea", "coffee", "green tea", "espresso", "matcha"),
}

CATEGORY_OF: dict[str, str] = {
    name: category for category, names in _CATEGORIES.items() for name in names
}


def category_of(name: str) -> str | None:
    """The technology (or preference) category of a normalised name, if known."""
    return CATEGORY_OF.get(name)
