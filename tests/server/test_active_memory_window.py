"""Where in a long chunk the question's words are (`active_memory._around`): the part
`pick` is pointed to when several sentences share the question's words."""

from __future__ import annotations

from commonplace.server.ops.active_memory import NARROW, _snippet_of


def test_the_window_is_where_most_of_the_question_is() -> None:
    chunk = ("We talked about flowers in the garden. " * 12 + "Flowers matter to Melanie: they were part of "
             "her wedding decor. " + "The weather was fine all week. " * 30)
    got = _snippet_of("Why are flowers important to Melanie?")({"content": chunk})
    assert len(got) <= NARROW
    assert "Flowers matter to Melanie" in got, got


def test_a_short_chunk_is_its_own_window_and_a_query_of_stop_words_takes_the_start() -> None:
    assert _snippet_of("flowers")({"content": "Flowers bring joy."}) == "Flowers bring joy."
    long = "word " * 200
    assert _snippet_of("the and of")({"content": long}) == long[:NARROW]
