"""What JupyterLab's HTML sanitizer keeps of an untrusted output (JupyterLab 4's lists,
abridged to what our views use): the tags, attributes and CSS properties it allows.
``dropped(markup)`` lists what it would remove, so a test can say "this view renders
untrusted" without a browser (the browser tests check the same in JupyterLab)."""

from __future__ import annotations

from html.parser import HTMLParser

TAGS = {"a", "b", "br", "code", "details", "div", "em", "i", "img", "li", "p", "pre", "small",
        "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th",
        "thead", "tr", "u", "ul"}
ATTRIBUTES = {"class", "dir", "hidden", "lang", "style", "title"}  # on every tag
TAG_ATTRIBUTES = {"img": {"alt", "src", "width", "height"}, "details": {"open"},
                  "td": {"colspan", "rowspan"}, "th": {"colspan", "rowspan"}}
STYLES = {
    "background", "background-color", "border", "border-bottom", "border-collapse",
    "border-left", "border-radius", "border-right", "border-top", "box-sizing", "color",
    "display", "flex", "flex-direction", "flex-wrap", "align-items", "gap", "font",
    "font-family", "font-size", "font-style", "font-weight", "height", "line-height",
    "margin", "margin-bottom", "margin-left", "margin-right", "margin-top", "max-height",
    "max-width", "min-width", "overflow", "overflow-x", "overflow-y", "padding",
    "padding-bottom", "padding-left", "padding-right", "padding-top", "text-align",
    "text-decoration", "vertical-align", "white-space", "width", "word-break",
}


class _Check(HTMLParser):
    def __init__(self):
        super().__init__()
        self.dropped: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag == "script":  # scripts add behaviour where they run; the picture needs none
            self.skip += 1
            return
        if self.skip:
            return
        if tag not in TAGS:
            self.dropped.append(f"<{tag}>")
        for name, value in attrs:
            if name not in ATTRIBUTES | TAG_ATTRIBUTES.get(tag, set()):
                self.dropped.append(f"<{tag} {name}>") if not name.startswith("data-") else None
            if name == "style":
                for decl in filter(None, (d.strip() for d in (value or "").split(";"))):
                    prop = decl.split(":", 1)[0].strip().lower()
                    if prop not in STYLES:
                        self.dropped.append(f"<{tag} style {prop}>")

    def handle_endtag(self, tag):
        if tag == "script":
            self.skip -= 1


def dropped(markup: str) -> list[str]:
    """What the sanitizer would drop from ``markup`` (``data-*`` attributes and scripts,
    which only add hovering or sorting where scripts run, are not counted)."""
    check = _Check()
    check.feed(markup)
    return check.dropped
