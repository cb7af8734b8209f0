"""The catalogue holds at least 100 hand-written hostile cases, each with its expected
answer, and every category is exercised (see hostile_cases.py for the data)."""

from __future__ import annotations

import hostile_cases as hc


def test_catalogue_has_at_least_100_cases() -> None:
    sizes = {name: len(cases) for name, cases in hc.CATEGORIES.items()}
    print("\n" + "\n".join(f"{name:20} {n:4}" for name, n in sizes.items()) + f"\n{'total':20} {sum(sizes.values()):4}")
    assert sum(sizes.values()) >= 100, sizes
    assert all(n > 0 for n in sizes.values()), sizes


def test_case_ids_are_unique_within_each_category() -> None:
    for name, cases in hc.CATEGORIES.items():
        ids = [c.id if hasattr(c, "id") else (c[0] if isinstance(c, tuple) else c) for c in cases]
        assert len(ids) == len(set(ids)), name
