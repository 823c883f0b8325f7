"""One self-contained HTML file: the page data as inline JSON, the viewer's CSS and JS inline.

No server, no network: the Content-Security-Policy allows only the page's own script and
style (by hash), no connections and images only from `data:` URLs. Untrusted text (model
outputs, env code) lives only inside the JSON block, where every `<` is written `\\u003c`,
so nothing in it can close the block or open a comment; the script draws it with
`textContent`, never as markup.
"""

from __future__ import annotations

import base64
import hashlib
import html
from importlib import resources
from typing import Any

import orjson

from spade import __version__
from spade.viewer.strings import StringTable


def _asset(name: str) -> str:
    return resources.files("spade.viewer").joinpath("assets", name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def embed_json(data: Any) -> str:
    """JSON that is safe inside `<script type="application/json">` (non-finite numbers
    become null, as JSON has none)."""
    text = orjson.dumps(data, default=str, option=orjson.OPT_NON_STR_KEYS).decode("utf-8")
    return text.replace("<", "\\u003c")


def render_page(page: dict[str, Any], strings: StringTable) -> str:
    script, style = _asset("viewer.js"), _asset("viewer.css")
    data = embed_json({**page, "spade_version": __version__, "S": strings.strings})
    policy = (
        f"default-src 'none'; script-src {_csp_hash(script)}; style-src {_csp_hash(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(str(page.get('title', 'spade')))}</title>\n"
        f"<style>{style}</style>\n</head>\n<body>\n"
        "<noscript>This report needs JavaScript to draw its tables.</noscript>\n"
        '<div id="app"></div>\n'
        f'<script type="application/json" id="spade-data">{data}</script>\n'
        f"<script>{script}</script>\n</body>\n</html>\n"
    )
