"""A question that names a date: the date says when (the page's date), its numbers are not words to find."""

from __future__ import annotations

import pytest

from store import analysis


@pytest.mark.parametrize("question,dates", [
    ("What did we decide on 7 July, 2023?", [(2023, 7, 7)]),
    ("Who came to dinner on May 3, 2023?", [(2023, 5, 3)]),
    ("May 5th: what happened?", [(None, 5, 5)]),
    ("May I ask what happened in August 2023?", [(2023, 8, None)]),
    ("What happened in June?", [(None, 6, None)]),
    ("the plan from the 3rd of June", [(None, 6, 3)]),
    ("what did we do in 2022", [(2022, None, None)]),
    ("2023年3月5日讨论了什么", [(2023, 3, 5)]),
    ("去年3月的决定", [(None, 3, None)]),
    ("may we march on", []),
])
def test_dates_named(question, dates):
    assert analysis.dates_named(question) == dates
    assert analysis.months_named(question) == sorted({(y, m) for y, m, _ in dates}, key=lambda f: (f[0] or 0, f[1] or 0))


def test_without_dates_blanks_the_day_and_year_but_keeps_the_month_word():
    question = "What did Maria plan on the evening of 7 July, 2023?"
    stripped = analysis.without_dates(question)
    assert len(stripped) == len(question)
    assert "7" not in stripped and "2023" not in stripped and "July" in stripped and "Maria" in stripped
    assert analysis.without_dates("How many 7 day weeks?") == "How many 7 day weeks?"  # no date, nothing blanked


def test_a_named_day_favours_that_days_page_and_its_numbers_match_nothing(store):
    same_words = "We planned the garden party with the neighbours."
    other_day = store.write_page("project:d", content=same_words, observed_at="2023-07-21T10:00:00Z")["page_id"]
    that_day = store.write_page("project:d", content=same_words, observed_at="2023-07-07T10:00:00Z")["page_id"]
    other_month = store.write_page("project:d", content=same_words, observed_at="2023-09-07T10:00:00Z")["page_id"]
    # A page that holds only the day's number and the year as words.
    numbers = store.write_page("project:d", content="Session 7 of 2023: party",
                               observed_at="2024-01-02T10:00:00Z")["page_id"]
    ids = [x["page_id"] for x in store.search_pages("What party did we plan on 7 July, 2023?")["hits"]]
    assert ids[:3] == [that_day, other_day, other_month], ids
    assert ids.index(numbers) == 3
    # Without the day, the month's pages tie on words and date; newest first.
    ids = [x["page_id"] for x in store.search_pages("What party did we plan in July 2023?")["hits"]]
    assert set(ids[:2]) == {that_day, other_day}


def test_a_question_of_only_a_date_still_finds_it_as_words(store):
    page = store.write_page("project:d", content="Release 2023 notes")["page_id"]
    assert [x["page_id"] for x in store.search_pages("2023")["hits"]] == [page]
