"""Security tests: who may reach which route, hostile text everywhere, API fuzzing.

Shared here: an HTML scanner that finds anything a page could execute, and a pdflatex runner
(also used by tests/unit/test_latex_compile.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

_VOID = frozenset(
    "area base br col embed hr img input link meta source track wbr".split()  # noqa: SIM905
)
_URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "xlink:href", "data"})


@dataclass
class Text:
    """A text node or attribute value, with the elements it sits in (innermost last)."""

    value: str
    ancestors: list[tuple[str, dict[str, str | None]]]


class PageScan(HTMLParser):
    """Parse a page; record what could run (scripts, handlers, javascript: URLs) and its texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.dangers: list[str] = []
        self.texts: list[Text] = []
        self.stack: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Check one opening tag and its attributes."""
        # A script file of the site's own (/static/..., which the CSP allows) is no injection.
        own_script = tag == "script" and (dict(attrs).get("src") or "").startswith("/static/")
        if tag in ("script", "iframe", "object", "embed", "frame", "base") and not own_script:
            self.dangers.append(f"<{tag}> element")
        for name, value in attrs:
            if name.startswith("on"):
                self.dangers.append(f"event handler attribute {name}={value!r} on <{tag}>")
            if name == "style" and value and "expression" in value.lower():
                self.dangers.append(f"style expression on <{tag}>")
            compact = "".join((value or "").split()).lower()
            if name in _URL_ATTRIBUTES and compact.startswith(("javascript:", "vbscript:")):
                self.dangers.append(f"{name}={value!r} on <{tag}>")
            if value:
                self.texts.append(Text(value, [*self.stack, (tag, dict(attrs))]))
        if tag not in _VOID:
            self.stack.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Check a self-closing tag."""
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        """Close the innermost open element of this name."""
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        """Record a text node with its ancestors."""
        if data.strip():
            self.texts.append(Text(data, list(self.stack)))

    def contains(self, needle: str) -> bool:
        """Return whether some text node or attribute value holds ``needle`` as shown."""
        return any(needle in t.value for t in self.texts)


def scan(html: str) -> PageScan:
    """Return the scan of a page."""
    page = PageScan()
    page.feed(html)
    page.close()
    return page


def pdflatex() -> str:
    """Return the pdflatex command, or skip (fail under CI=true) when it or booktabs is missing."""
    found = shutil.which("pdflatex")
    reason = "pdflatex is not installed (Debian: texlive-latex-base texlive-latex-recommended)"
    if found is not None and shutil.which("kpsewhich"):
        probe = subprocess.run(
            ["kpsewhich", "booktabs.sty"], capture_output=True, text=True, check=False
        )
        if probe.returncode != 0 or not probe.stdout.strip():
            found, reason = None, "booktabs.sty is missing (Debian: texlive-latex-recommended)"
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; CI=true requires it")
        pytest.skip(reason)
    return found


#: A minimal article that the exports are pasted into (they need only booktabs).
PREAMBLE = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\usepackage{booktabs}
"""


def compile_latex(
    body: str, workdir: Path, name: str, declare: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Compile ``body`` inside a minimal document with pdflatex; return the finished process.

    ``declare`` maps characters the fonts lack (e.g. Arabic letters in a team name) to LaTeX
    to print instead, so that only the exports' own syntax is on trial.
    """
    command = pdflatex()
    declarations = "".join(
        rf"\DeclareUnicodeCharacter{{{ord(ch):04X}}}{{{text}}}" + "\n"
        for ch, text in sorted((declare or {}).items())
    )
    source = workdir / f"{name}.tex"
    source.write_text(
        PREAMBLE + declarations + "\\begin{document}\n" + body + "\n\\end{document}\n",
        encoding="utf-8",
    )
    return subprocess.run(
        [command, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", source.name],
        cwd=workdir,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=120,
        check=False,
    )
