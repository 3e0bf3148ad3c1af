#!/usr/bin/env python3
"""Plots one column of a table of docs/benchmarks.md as horizontal bars,
so that the picture shows exactly the figures the page states.

usage: plot_page_table.py PAGE SECTION COLUMN OUT.png [--label COL,...]
                          [--title TEXT] [--line 1.0]

SECTION is the heading text of the section (its first table is used),
COLUMN the header of the values (numbers; '–' rows are skipped), --label
the columns joined into each bar's label (default: every column before
COLUMN that is not numeric). Needs matplotlib (.venv/bin/python has it).
"""
import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def first_table(text, section):
    """The header and rows of the first table under the heading SECTION."""
    lines = text.splitlines()
    start = next(
        (i for i, l in enumerate(lines) if l.lstrip("#").strip() == section and l.startswith("#")),
        None,
    )
    if start is None:
        sys.exit(f"no section {section!r}")
    table = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            table.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif table:
            break
    if len(table) < 3:
        sys.exit(f"no table under {section!r}")
    return table[0], table[2:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("section")
    ap.add_argument("column")
    ap.add_argument("out")
    ap.add_argument("--label", help="columns of the label, comma-separated")
    ap.add_argument("--title", default="")
    ap.add_argument("--line", type=float, help="a reference line at this value")
    args = ap.parse_args()
    header, rows = first_table(open(args.page).read(), args.section)
    if args.column not in header:
        sys.exit(f"no column {args.column!r} in {header}")
    value = header.index(args.column)
    labels = args.label.split(",") if args.label else header[:value]
    picked = [header.index(name) for name in labels]
    names, values = [], []
    for row in rows:
        try:
            number = float(row[value].rstrip("x"))
        except ValueError:
            continue
        names.append(", ".join(row[i] for i in picked))
        values.append(number)
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(values) + 1.2))
    ax.barh(range(len(values)), values, color="#4878a8")
    ax.set_yticks(range(len(values)))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:g}", va="center", fontsize=8)
    if args.line is not None:
        ax.axvline(args.line, color="black", linewidth=0.8)
    ax.set_xlabel(args.column)
    ax.set_title(args.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)


if __name__ == "__main__":
    main()
