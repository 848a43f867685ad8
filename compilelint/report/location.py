"""Where a finding is, as every format prints it: `path:row:col`, or in a notebook
`path:cell N:row:col` with the row counted inside the cell (Ruff's notation)."""
from __future__ import annotations

from typing import Tuple


def cell_of(finding) -> Tuple[int, int, int]:
    """(cell number or 0, row, end row), rows counted inside the cell for a notebook."""
    span = finding.span
    if not finding.cell:
        return 0, span.row, span.end_row
    number, first_row = finding.cell
    return number, span.row - first_row + 1, span.end_row - first_row + 1


def where(finding, *, with_path: bool = True, column: bool = True) -> str:
    cell, row, _ = cell_of(finding)
    parts = [finding.path] if with_path else []
    if cell:
        parts.append(f"cell {cell}")
    parts.append(str(row))
    if column:
        parts.append(str(finding.span.col))
    return ":".join(parts)
