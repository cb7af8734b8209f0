"""A replace rewrites the value a two-column table row keeps (`claims/table_rows.py`)."""

from __future__ import annotations

from commonplace.compiler.claims.table_rows import rewrite_row

TABLE = ["| field | value |", "|---|---|", "| stage | Negotiation |", "| close date | 2026-12-18 |",
         "| value | 48,000 EUR a year |", "| owner | Ana |"]


def rewrite(statement: str) -> list[str]:
    lines = list(TABLE)
    changed = rewrite_row(lines, set(range(len(lines))), statement, frozenset({"northwind", "renewal"}))
    return lines if changed else []


def test_a_number_changes_inside_its_cell() -> None:
    assert "| value | 52,000 EUR a year |" in rewrite("The Northwind renewal value is now 52,000 EUR a year.")
    # the sentence's full stop is not the number's
    lines = ["| field | value |", "|---|---|", "| words left | 16,500 |"]
    assert rewrite_row(lines, set(range(3)), "Starfall Chronicles words left: 12,500.", frozenset({"starfall"}))
    assert lines[2] == "| words left | 12,500 |"


def test_a_word_value_is_the_words_the_statement_adds() -> None:
    got = rewrite("The Northwind renewal is now in the Contract stage.")
    assert "| stage | Contract |" in got and "| close date | 2026-12-18 |" in got
    assert "| owner | Priya |" in rewrite("Priya is the owner of the Northwind renewal now.")
    # what the statement adds in a parenthesis or a reason is not the value
    assert "| stage | Contract |" in rewrite("The Northwind renewal is now in the Contract stage (legal review of "
                                             "the order form), because procurement signed off.")


def test_a_statement_that_names_no_key_or_gives_no_single_value_changes_nothing() -> None:
    assert rewrite("The Northwind renewal looks likely to close.") == []
    assert rewrite("The header field and value are fine.") == []  # the header row is no fact
    assert rewrite("The close date moved to 2027-01-15 or 2027-01-22.") == []  # which one is not said
    assert rewrite("The Northwind renewal owner will be decided by Ana, Priya and Tomas next week.") == []
