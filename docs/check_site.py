"""Check a built HTML site: it loads nothing from outside, and its internal links resolve.

Usage: ``python docs/check_site.py [docs/_build/html]`` (``make docs`` runs it).

* **offline** — no page, stylesheet or script loads a resource from another
  host: every ``src`` of ``<script>``, ``<img>``, ``<iframe>``, ``<source>``,
  ``<video>``, ``<audio>``, ``<embed>``, ``<object data>``, every ``href`` of
  ``<link>`` and every ``url(...)`` / ``@import`` of a stylesheet is a
  relative path, and no inline script names a URL it could fetch.  Links a
  reader follows (``<a href="https://...">``) load nothing and are allowed.
* **internal links** — every relative ``href`` / ``src`` names a file of the
  site, and every ``#fragment`` an ``id`` (or ``name``) in the page it points
  at.

Exit status 0 when both hold, 1 otherwise (each problem printed on its line).
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

# Tag -> attributes whose value the browser fetches while showing the page.
LOADING_ATTRIBUTES = {
    "script": ("src",), "img": ("src", "srcset"), "iframe": ("src",), "source": ("src", "srcset"),
    "video": ("src", "poster"), "audio": ("src",), "embed": ("src",), "object": ("data",), "link": ("href",),
    "input": ("src",), "track": ("src",),
}
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)
# A URL inside inline JavaScript or CSS that a browser could request.
URL_IN_CODE = re.compile(r"""(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s"'`)]*""", re.IGNORECASE)
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)""", re.IGNORECASE)
# Schemes that name no file of the site.
NON_FILE_SCHEMES = ("mailto:", "javascript:", "data:", "tel:")


class _Page(HTMLParser):
    """Collects a page's ids, its loaded resources, its links and its inline code."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.loads, self.links, self.inline = set(), [], [], []
        self._in = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for attr in LOADING_ATTRIBUTES.get(tag, ()):
            value = attrs.get(attr)
            if value:
                # A <link rel="canonical"> or similar names a page, it loads nothing.
                rel = (attrs.get("rel") or "").lower()
                if tag == "link" and not any(r in rel for r in ("stylesheet", "preload", "icon", "modulepreload",
                                                                "manifest", "prefetch")):
                    self.links.append(value)
                    continue
                for item in (value.split(",") if attr == "srcset" else [value]):
                    self.loads.append((tag, item.strip().split(" ")[0]))
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag in ("script", "style"):
            self._in = tag
        if attrs.get("style"):
            self.inline.append(("style attribute", attrs["style"]))

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in and data.strip():
            self.inline.append((self._in, data))


def _parse(path):
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def check(site):
    """Return the list of problems of the site under ``site`` (empty when it passes)."""
    site = Path(site).resolve()
    # Pages only: _static holds the theme's Jinja templates (*.html), not pages.
    pages = {p: _parse(p) for p in sorted(site.rglob("*.html")) if "_static" not in p.relative_to(site).parts}
    problems = []
    for path, page in pages.items():
        rel = path.relative_to(site)
        for tag, url in page.loads:
            if EXTERNAL.match(url):
                problems.append(f"{rel}: <{tag}> loads {url} from outside")
        for kind, code in page.inline:
            for url in URL_IN_CODE.findall(code):
                if not url.startswith(("http://www.w3.org/", "https://www.w3.org/")):  # XML namespaces
                    problems.append(f"{rel}: inline {kind} names {url}")
        for url in [u for _, u in page.loads] + page.links:
            problems += _internal_link_problems(site, path, url, pages)
    for css in sorted(site.rglob("*.css")):
        text = css.read_text(encoding="utf-8", errors="replace")
        for match in CSS_URL.finditer(text):
            url = match.group(1) or match.group(2)
            if EXTERNAL.match(url):
                problems.append(f"{css.relative_to(site)}: loads {url} from outside")
    return problems


def _internal_link_problems(site, page_path, url, pages):
    if not url or EXTERNAL.match(url) or url.lower().startswith(NON_FILE_SCHEMES):
        return []
    parts = urlsplit(url)
    if parts.scheme:  # another scheme (http: without //, ...): not a file of the site
        return []
    rel = page_path.relative_to(site)
    target = (page_path.parent / unquote(parts.path)).resolve() if parts.path else page_path
    if target.is_dir():
        target = target / "index.html"
    if site not in target.parents and target != site:
        return [f"{rel}: {url} points outside the site"]
    if not target.exists():
        return [f"{rel}: {url} names a missing file"]
    if parts.fragment and target.suffix == ".html":
        page = pages.get(target) or _parse(target)
        if unquote(parts.fragment) not in page.ids:
            return [f"{rel}: {url} names a missing anchor"]
    return []


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    site = Path(argv[0] if argv else Path(__file__).resolve().parent / "_build" / "html")
    if not (site / "index.html").is_file():
        print(f"check_site: no built site at {site}", file=sys.stderr)
        return 1
    problems = check(site)
    for problem in problems:
        print(problem)
    n_pages = sum(1 for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)
    verdict = "FAILED" if problems else "ok"
    print(f"check_site: {n_pages} pages, {len(problems)} problems (offline resources, internal links): {verdict}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
