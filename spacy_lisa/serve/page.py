"""The demo page at ``GET /``: a text box whose sentences come back drawn by the render
view (:func:`spacy_lisa.render`), with a table of every frame's predicate, roleset,
lemma and roles.

The page loads nothing from the network: its CSS and script are inline, the script is
allowed by a per-response nonce in the Content-Security-Policy, and it only talks to
the server it came from (``connect-src 'self'``). Without JavaScript the form still
works: it sends ``GET /?text=...`` and the server draws the frames into the page.
"""

from __future__ import annotations

import secrets
from functools import lru_cache
from typing import Dict, Optional, Tuple

from jinja2 import Environment, StrictUndefined, Template
from markupsafe import Markup

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>spacy-lisa · {{ model }}</title>
<style>
body { margin: 24px; font: 15px/1.4 system-ui, sans-serif; color: #222; background: #fff; }
header h1 { font-size: 20px; margin: 0 0 4px; }
header p, footer { color: #666; margin: 0 0 12px; font-size: 13px; }
#lisa-form textarea { width: 100%; max-width: 900px; box-sizing: border-box; font: inherit;
  padding: 8px; border: 1px solid #bbb; border-radius: 4px; }
#lisa-form button { margin-top: 8px; padding: 6px 18px; font: inherit; cursor: pointer; }
#lisa-status { margin: 10px 0; min-height: 1.4em; }
#lisa-status.error { color: #b00020; }
.demo-frames { border-collapse: collapse; margin: 8px 0 24px; font-size: 13px; }
.demo-frames th, .demo-frames td { border: 1px solid #ddd; padding: 3px 8px; text-align: left;
  vertical-align: top; }
.demo-frames th { background: #f4f4f4; }
.demo-role { display: inline-block; margin: 1px 6px 1px 0; }
.demo-role b { font-weight: 600; }
</style>
</head>
<body>
<header>
<h1>spacy-lisa: who did what to whom</h1>
<p>{{ model }} {{ version }} · semantic role labelling ·
<a href="docs">API docs</a> · <a href="health">health</a> · <a href="metrics">metrics</a></p>
</header>
<form id="lisa-form" method="get" action="">
<label for="lisa-text">Text (one or more sentences)</label><br>
<textarea id="lisa-text" name="text" rows="4" maxlength="{{ max_chars }}" required>
{{- text }}</textarea><br>
<button id="lisa-submit" type="submit">Label</button>
</form>
<div id="lisa-status" role="status"{% if error %} class="error"{% endif %}>{{ status }}</div>
<div id="lisa-result" data-state="{{ state }}">{{ fragment }}</div>
<footer>Roles are coloured by label; the predicate is marked V and its row is headed by
its roleset; the arcs above each sentence are the parse the model used.</footer>
<script nonce="{{ nonce }}">
(() => {
  const form = document.getElementById("lisa-form");
  const box = document.getElementById("lisa-text");
  const button = document.getElementById("lisa-submit");
  const status = document.getElementById("lisa-status");
  const result = document.getElementById("lisa-result");
  const cell = (row, text, tag = "td") => {
    const el = document.createElement(tag);
    el.textContent = text;
    row.appendChild(el);
    return el;
  };
  // a table under each doc: predicate, roleset, lemma and roles of every frame, read
  // from the data-* attributes the render view puts on its rows
  const tables = () => {
    for (const figure of result.querySelectorAll(".lisa-doc")) {
      const frames = figure.querySelectorAll(".lisa-frame");
      if (!frames.length) continue;
      const table = document.createElement("table");
      table.className = "demo-frames";
      const head = table.createTHead().insertRow();
      for (const name of ["predicate", "roleset", "lemma", "roles"]) cell(head, name, "th");
      const body = table.createTBody();
      for (const frame of frames) {
        const row = body.insertRow();
        row.dataset.frame = frame.dataset.frame;
        cell(row, frame.dataset.predicate || "");
        cell(row, frame.dataset.roleset || "-");
        cell(row, frame.dataset.lemma || "-");
        const roles = cell(row, "");
        for (const role of frame.querySelectorAll(".lisa-role")) {
          const span = document.createElement("span");
          span.className = "demo-role";
          span.dataset.roleLabel = role.dataset.roleLabel;
          const label = document.createElement("b");
          label.textContent = role.dataset.roleLabel + ": ";
          span.appendChild(label);
          // a role cell's title is "LABEL: text"
          const text = role.title.slice(role.dataset.roleLabel.length + 2);
          span.appendChild(document.createTextNode(text));
          roles.appendChild(span);
        }
      }
      figure.appendChild(table);
    }
  };
  const show = (state, message, isError) => {
    result.dataset.state = state;
    status.textContent = message;
    status.classList.toggle("error", Boolean(isError));
  };
  tables();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = box.value;
    button.disabled = true;
    show("loading", "Labelling…", false);
    try {
      const response = await fetch("v1/render", {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({text}),
      });
      const body = await response.text();
      if (!response.ok) {
        let message = `HTTP ${response.status}`;
        try { message = JSON.parse(body).message || message; } catch (_) { /* not JSON */ }
        result.replaceChildren();
        show("error", message, true);
        return;
      }
      // the render view's own markup: every value in it is escaped by the server
      result.innerHTML = body;
      tables();
      const n = result.querySelectorAll(".lisa-frame").length;
      show("done", `${n} frame(s)`, false);
      history.replaceState(null, "", "?text=" + encodeURIComponent(text));
    } catch (err) {
      show("error", `The request failed: ${err}`, true);
    } finally {
      button.disabled = false;
    }
  });
})();
</script>
</body>
</html>
"""


FRAME_ROW = 'class="lisa-row lisa-frame"'  # one per frame in the render view's markup


@lru_cache(maxsize=1)
def _template() -> Template:
    env = Environment(autoescape=True, undefined=StrictUndefined, keep_trailing_newline=True)
    return env.from_string(PAGE)


def content_security_policy(nonce: str) -> str:
    """Nothing from elsewhere: inline styles (the render view's scoped CSS), this
    response's script, and requests to this server only."""
    return (
        "default-src 'none'; style-src 'unsafe-inline'; "
        f"script-src 'nonce-{nonce}'; connect-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'self'"
    )


def demo_page(
    *,
    model: str,
    version: str,
    max_chars: int,
    text: str = "",
    fragment: Optional[str] = None,
    error: Optional[str] = None,
) -> Tuple[str, Dict[str, str]]:
    """The page (with ``fragment``, the render view of ``text``, or ``error`` shown) and
    its headers."""
    nonce = secrets.token_urlsafe(16)
    if error is not None:
        state, status = "error", error
    elif fragment is not None:
        n_frames = fragment.count(FRAME_ROW)
        state, status = "done", f"{n_frames} frame(s)"
    else:
        state, status = "empty", ""
    html = _template().render(
        model=model,
        version=version,
        max_chars=max_chars,
        text=text,
        # the render view's markup, escaped by its own templates
        fragment=Markup(fragment or ""),
        status=status,
        state=state,
        error=error is not None,
        nonce=nonce,
    )
    headers = {
        "Content-Security-Policy": content_security_policy(nonce),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    return html, headers


__all__ = ["content_security_policy", "demo_page"]
