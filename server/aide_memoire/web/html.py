"""HTML building blocks. Every value from the store goes through ``esc``; held text is
shown only by ``held`` (escaped, in a <pre>, with a note), never as markup or links."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from starlette.responses import HTMLResponse

from .security import PREFIX

__all__ = ["esc", "form", "held", "highlighted", "link", "page", "table", "url", "when"]

NAV = [("Memories", "/"), ("Timeline", "/timeline"), ("Review", "/review"),
       ("Health", "/health"), ("Entities", "/entities"), ("Injected", "/injected")]
HELD_NOTE = ("Stored text, shown as inert text. It may contain instructions: "
             "they are data, not orders.")


def esc(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M")


def url(path: str, **params: object) -> str:
    """A page URL under /ui with the non-empty query parameters (escape it when used)."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "", False)})
    return f"{PREFIX}{path}" + (f"?{query}" if query else "")


def memory_url(namespace: str, memory_id: str) -> str:
    return f"{PREFIX}/m/{quote(namespace, safe='')}/{quote(memory_id, safe='')}"


def link(href: str, text: object) -> str:
    return f'<a href="{esc(href)}">{esc(text)}</a>'


def held(text: str | None, *, label: str = "Text") -> str:
    if text is None:
        return '<p class="muted">(no text: deleted)</p>'
    return (f'<figure class="held"><figcaption>{esc(label)} <span class="note">'
            f'{esc(HELD_NOTE)}</span></figcaption><pre>{esc(text)}</pre></figure>')


def highlighted(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """Held text with the given (start, end, label) spans marked; still only escaped text."""
    out, pos = [], 0
    for start, end, label in sorted(s for s in spans if 0 <= s[0] < s[1] <= len(text)):
        if start < pos:
            continue
        out.append(esc(text[pos:start]))
        out.append(f'<mark title="{esc(label)}">{esc(text[start:end])}</mark>')
        pos = end
    out.append(esc(text[pos:]))
    return (f'<figure class="held"><figcaption>Held text <span class="note">{esc(HELD_NOTE)}'
            f'</span></figcaption><pre>{"".join(out)}</pre></figure>')


def pretty(data: Any) -> str:
    return f"<pre class=\"json\">{esc(json.dumps(data, indent=2, default=str))}</pre>"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, caption: str = "") -> str:
    """A table of already-escaped cells."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    if not body:
        return '<p class="muted">Nothing here.</p>'
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in headers)
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def form(action: str, csrf: str, fields: str, button: str, *,
         cls: str = "", confirm: str = "") -> str:
    """A POST form with the session's CSRF token; ``fields`` is escaped HTML."""
    data = f' data-confirm="{esc(confirm)}"' if confirm else ""
    return (f'<form method="post" action="{esc(action)}" class="{esc(cls)}"{data}>'
            f'<input type="hidden" name="csrf" value="{esc(csrf)}">{fields}'
            f'<button type="submit">{esc(button)}</button></form>')


def select(name: str, label: str, options: Sequence[str], chosen: str, *,
           blank: str = "any") -> str:
    opts = [f'<option value="">{esc(blank)}</option>'] if blank else []
    opts += [f'<option value="{esc(o)}"{" selected" if o == chosen else ""}>{esc(o)}</option>'
             for o in options]
    return (f'<span class="fld"><label for="f-{esc(name)}">{esc(label)}</label>'
            f'<select id="f-{esc(name)}" name="{esc(name)}">{"".join(opts)}</select></span>')


def field(name: str, label: str, value: object = "", *, kind: str = "text") -> str:
    return (f'<span class="fld"><label for="f-{esc(name)}">{esc(label)}</label><input '
            f'id="f-{esc(name)}" type="{esc(kind)}" name="{esc(name)}" '
            f'value="{esc(value)}"></span>')


def flash(params: Mapping[str, str]) -> str:
    """A message handed over in a redirect's query (?ok= or ?error=), shown escaped."""
    if params.get("error"):
        return f'<p class="error" role="alert">{esc(params["error"])}</p>'
    if params.get("ok"):
        return f'<p class="ok" role="status">{esc(params["ok"])}</p>'
    return ""


def page(title: str, body: str, *, current: str = "/", status_code: int = 200,
         refresh: int | None = None) -> HTMLResponse:
    mark = ' aria-current="page"'
    nav = "".join(
        f'<li><a href="{esc(PREFIX + path)}"{mark if path == current else ""}>'
        f"{esc(name)}</a></li>" for name, path in NAV)
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        + (f'<meta http-equiv="refresh" content="{refresh}">' if refresh else "")
        + f"<title>{esc(title)} - aide-memoire</title>"
        f'<link rel="stylesheet" href="{PREFIX}/static/style.css">'
        f'<script src="{PREFIX}/static/app.js" defer></script></head><body>'
        '<a class="skip" href="#main">Skip to content</a>'
        f'<header><span class="brand">aide-memoire</span><nav aria-label="Pages"><ul>{nav}'
        f'</ul></nav></header><main id="main" tabindex="-1"><h1>{esc(title)}</h1>{body}</main>'
        "</body></html>"
    )
    return HTMLResponse(html, status_code=status_code)
