"""The HTML macro templates/tables/table.html: structure, escaping, dir="auto", sub and strong."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

import jinja2
from markupsafe import Markup

from leaderboard.tables import Table
from tests.helpers.tables import HOSTILE, RLO, cqa_table, hostile_tables, sts_table, trec_table
from tests.shared_data import REPO_ROOT

VOID = {"br", "hr", "img", "input", "meta", "link", "col", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node] = field(default_factory=list)
    text: str = ""

    def all(self, tag: str) -> list[Node]:
        found = []
        for child in self.children:
            if child.tag == tag:
                found.append(child)
            found.extend(child.all(tag))
        return found

    def content(self) -> str:
        return self.text + "".join(child.content() for child in self.children)


class TreeBuilder(HTMLParser):
    """Build a strict tree: every start tag must be closed by the same end tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        # Keep text in order relative to children by attaching it as a text child.
        self.stack[-1].children.append(Node("#text", {}, text=data))


def render(table: Table) -> Markup:
    env = jinja2.Environment(
        autoescape=True, loader=jinja2.FileSystemLoader(REPO_ROOT / "templates")
    )
    macro = env.get_template("tables/table.html").module.render_table  # type: ignore[attr-defined]
    result: Markup = macro(table)
    return result


def parse(html: str) -> Node:
    builder = TreeBuilder()
    builder.feed(html)
    builder.close()
    assert builder.stack == [builder.root], "unclosed elements"
    return builder.root


def width(row: Node) -> int:
    return sum(
        int(cell.attrs.get("colspan") or 1) for cell in row.children if cell.tag in ("td", "th")
    )


def check_grid(table: Table, doc: Node) -> None:
    """Every body row has one cell per column; header rows add up with rowspan/colspan."""
    expected = len(table.lead_columns) + len(table.columns) + len(table.trail_columns)
    main = doc.all("table")[0]
    body_rows = main.all("tbody")[0].all("tr")
    assert len(body_rows) == len(table.rows)
    assert all(width(row) == expected for row in body_rows)
    head_rows = main.all("thead")[0].all("tr")
    if table.grouped:
        assert len(head_rows) == 2
        spanning = [c for c in head_rows[0].children if c.attrs.get("rowspan") == "2"]
        assert width(head_rows[0]) == expected
        assert width(head_rows[1]) + len(spanning) == expected
    else:
        assert len(head_rows) == 1 and width(head_rows[0]) == expected


def test_cqa_mock_html() -> None:
    table = cqa_table()
    html = str(render(table))
    doc = parse(html)
    check_grid(table, doc)
    rows = doc.all("tbody")[0].all("tr")
    aurora = rows[1]
    assert aurora.attrs["class"] == "row-run row-bold"
    cells = [c for c in aurora.children if c.tag in ("td", "th")]
    assert cells[0].content() == "1"
    assert cells[1].tag == "th" and cells[1].attrs["scope"] == "row"
    assert cells[1].attrs["dir"] == "auto"
    assert cells[1].content() == "Aurora-primary"
    map_cell = cells[2]
    strong = map_cell.all("strong")[0]
    sub = strong.all("sub")[0]
    assert sub.content() == "1" and strong.content() == "71.421"
    assert '<strong>71.42<sub class="rank">1</sub></strong>' in html
    contrastive = [c for c in rows[0].children if c.tag in ("td", "th")]
    assert not rows[0].all("strong") and not rows[0].all("sub")
    assert contrastive[0].content() == ""
    baseline = [c for c in rows[5].children if c.tag in ("td", "th")]
    assert [c.content() for c in baseline[5:]] == ["—", "—", "—", "—"]
    assert "na" in (baseline[5].attrs["class"] or "")
    notes = doc.all("ul")[0].all("li")
    assert [li.content() for li in notes] == list(table.footnotes)
    assert doc.all("caption")[0].content() == "semeval2016-task3 A (test)"


def test_trec_mock_html_has_two_header_rows_with_colspan() -> None:
    table = trec_table()
    html = str(render(table))
    doc = parse(html)
    check_grid(table, doc)
    head = doc.all("thead")[0].all("tr")
    groups = [c for c in head[0].children if c.attrs.get("scope") == "colgroup"]
    assert [(g.content(), g.attrs["colspan"]) for g in groups] == [
        ("Automatic", "3"),
        ("Lenient", "3"),
        ("Manual", "3"),
    ]
    metas = [c for c in head[0].children if c.attrs.get("rowspan") == "2"]
    assert [m.content() for m in metas] == ["Team", "Run"]
    assert [c.content() for c in head[1].children if c.tag == "th"] == ["MAP", "R-Prec", "MRR"] * 3
    # Bold value then its subindex outside the bold, as in the mock "**0.6120**₁".
    assert '<strong>0.6120</strong><sub class="rank">1</sub>' in html
    first = [c for c in doc.all("tbody")[0].all("tr")[0].children if c.tag in ("td", "th")]
    assert [c.attrs.get("dir") for c in first[:2]] == ["auto", "auto"]
    assert first[1].content() == "aur-l2r (contrastive)"


def test_sts_mock_html_markers_and_summary() -> None:
    table = sts_table()
    doc = parse(str(render(table)))
    check_grid(table, doc)
    rows = doc.all("tbody")[0].all("tr")
    dune = [c for c in rows[2].children if c.tag in ("td", "th")]
    assert [dune[0].content(), dune[1].content(), dune[-2].content()] == ["Dune", "run1*", "3*"]
    assert dune[1].all("span")[0].attrs["class"] == "marker"
    baseline = [c for c in rows[6].children if c.tag in ("td", "th")]
    assert (baseline[0].content(), baseline[-2].content()) == ("baseline†", "6†")
    assert "row-late" in (rows[2].attrs["class"] or "")
    assert not doc.all("strong") and not doc.all("sub")
    summary = doc.all("table")[1]
    assert summary.all("caption")[0].content() == "Summary"
    summary_rows = summary.all("tbody")[0].all("tr")
    assert [c.content() for c in summary_rows[0].children] == [
        "ALL",
        "0.77469",
        "0.76402",
        "0.01067",
    ]


def test_hostile_strings_are_escaped_everywhere_in_html() -> None:
    for table in hostile_tables():
        html = str(render(table))
        doc = parse(html)  # a stray tag from user text would break the strict tree
        check_grid(table, doc)
        assert not doc.all("script")
        assert "<script>" not in html
        assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
        assert "O&#39;Brien &#34;the&#34; team" in html
        assert "R&amp;D 100% $5 #1 _x_ {y} ~z^" in html
        assert "W" * 10_240 in html
        # User text keeps its characters (RLO included) but sits in an isolating <bdi>
        # inside a dir="auto" cell.
        bdis = doc.all("bdi")
        texts = {b.content() for b in bdis}
        assert any(text.startswith(HOSTILE["rlo"]) for text in texts) and RLO in HOSTILE["rlo"]
        for row in doc.all("tbody")[0].all("tr"):
            for cell in row.children:
                if cell.all("bdi"):
                    assert cell.attrs.get("dir") == "auto"
        user_cells = [c for r in doc.all("tbody")[0].all("tr") for c in r.children if c.all("bdi")]
        per_row = {"semeval-cqa": 1, "sts": 2, "trec": 2}[table.style]
        assert len(user_cells) == per_row * len(table.rows)


def test_template_never_marks_user_text_safe() -> None:
    source = (REPO_ROOT / "templates" / "tables" / "table.html").read_text(encoding="utf-8")
    assert "|safe" not in source.replace(" ", "")
    assert "<script" not in source and "style=" not in source and "<style" not in source
