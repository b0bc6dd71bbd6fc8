"""Render a significance report (pairs, p-values, clusters) as Markdown, CSV and LaTeX."""

from __future__ import annotations

import csv
import io
from typing import Any

from leaderboard.tables.exports import csv_safe, latex_escape, md_escape


def _p(value: float) -> str:
    return f"{value:.4g}"


def _subject(report: dict[str, Any]) -> str:
    """Return what the report is about: its "caption" (the titles) if given, else the slugs."""
    return str(report.get("caption") or f"{report['task']} {report['subtask']} ({report['set']})")


def _title(report: dict[str, Any]) -> str:
    samples = f", {report['samples']:,} samples, seed {report['seed']}" if report["samples"] else ""
    return (
        f"{report['measure']}: {report['method']}{samples}; {report['correction']} correction, "
        f"alpha {report['alpha']}"
    )


def to_markdown(report: dict[str, Any]) -> str:
    """Return the pairs as a Markdown table and the clusters as a numbered list."""
    lines = [
        f"Significance of {md_escape(_subject(report))}, {md_escape(_title(report))}",
        "",
        "| A | B | A − B | p | p (adjusted) | significant |",
        "|---|---|---:|---:|---:|---|",
    ]
    for pair in report["pairs"]:
        lines.append(
            f"| {md_escape(pair['a'])} | {md_escape(pair['b'])} | {pair['diff']:.6g} | "
            f"{_p(pair['p'])} | {_p(pair['p_adjusted'])} | {'yes' if pair['significant'] else 'no'} |"
        )
    lines += [
        "",
        "Clusters (a run starts a cluster when significantly worse than all of the one above):",
        "",
    ]
    for n, group in enumerate(report["clusters"], 1):
        lines.append(f"{n}. " + ", ".join(md_escape(label) for label in group))
    return "\n".join(lines) + "\n"


def to_csv(report: dict[str, Any]) -> str:
    """Return one CSV line per pair, with its cluster numbers."""
    cluster_of = {label: n for n, group in enumerate(report["clusters"], 1) for label in group}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["a", "b", "diff", "p", "p_adjusted", "significant", "cluster_a", "cluster_b"])
    for pair in report["pairs"]:
        writer.writerow(
            [
                csv_safe(pair["a"], text=True),
                csv_safe(pair["b"], text=True),
                repr(pair["diff"]),
                repr(pair["p"]),
                repr(pair["p_adjusted"]),
                "true" if pair["significant"] else "false",
                cluster_of[pair["a"]],
                cluster_of[pair["b"]],
            ]
        )
    return out.getvalue()


def to_latex(report: dict[str, Any]) -> str:
    """Return the adjusted p-value matrix as a LaTeX table (upper triangle, significant bold)."""
    labels = report["runs"]
    by_pair = {(p["a"], p["b"]): p for p in report["pairs"]}
    head = " & ".join(["", *(latex_escape(label) for label in labels[1:])]) + r" \\"
    body = []
    for a in labels[:-1]:
        cells = [latex_escape(a)]
        for b in labels[1:]:
            pair = by_pair.get((a, b))
            if pair is None:
                cells.append("")
            else:
                text = _p(pair["p_adjusted"])
                cells.append(rf"\textbf{{{text}}}" if pair["significant"] else text)
        body.append(" & ".join(cells) + r" \\")
    caption = latex_escape(
        f"{_subject(report)}: adjusted p-values of {_title(report)}; bold: significant."
    )
    columns = "l" + "r" * (len(labels) - 1)
    return "\n".join(
        [
            r"\begin{table}[t]",
            r"\centering",
            r"\small",
            rf"\begin{{tabular}}{{{columns}}}",
            r"\hline",
            head,
            r"\hline",
            *body,
            r"\hline",
            r"\end{tabular}",
            rf"\caption{{{caption}}}",
            r"\end{table}",
            "",
        ]
    )
