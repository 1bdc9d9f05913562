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


def test_without_dates_blanks_the_whole_date():
    question = "What did Maria plan on the evening of 7 July, 2023?"
    stripped = analysis.without_dates(question)
    assert len(stripped) == len(question)
    assert "7" not in stripped and "2023" not in stripped and "July" not in stripped and "Maria" in stripped
    assert "March" in analysis.without_dates("March on!")  # not a date: a word
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


# --- date ranges as people say them (issue 34) ---------------------------------------------------------

def _days(first, last, year=2023):
    from datetime import date, timedelta

    a, b = date(year, *first), date(year, *last)
    return [((a + timedelta(days=i)).year, (a + timedelta(days=i)).month, (a + timedelta(days=i)).day)
            for i in range((b - a).days + 1)]


@pytest.mark.parametrize("question,dates", [
    ("Where was John between August 11 and August 15 2023?", _days((8, 11), (8, 15))),
    ("What did we do from May 3 to 5, 2023?", _days((5, 3), (5, 5))),
    ("Where was Tim in the week before 16 November 2023?", _days((11, 9), (11, 15))),
    ("What happened two weeks after June 1, 2023?", _days((6, 9), (6, 15))),
    ("What happened the day after 3 June 2023?", [(2023, 6, 4)]),
    # 16 November 2023 is a Thursday: the weekend before it is the 11th and 12th, the week of it Monday to Sunday.
    ("What did she do the weekend before 16 November 2023?", [(2023, 11, 11), (2023, 11, 12)]),
    ("What did she do the week of 16 November 2023?", _days((11, 13), (11, 19))),
    ("What happened the month before 3 June 2023?", [(2023, 5, None)]),
    ("What happened in early June 2023?", _days((6, 1), (6, 10))),
    ("What happened in mid-June 2023?", _days((6, 11), (6, 20))),
    ("What happened at the end of February 2024?", _days((2, 21), (2, 29), 2024)),
    ("What happened in the last week of February 2024?", _days((2, 23), (2, 29), 2024)),
    ("What happened on the first weekend of May 2023?", [(2023, 5, 6), (2023, 5, 7)]),
    ("Which country was Tim visiting in the second week of November?",
     [(None, 11, d) for d in range(8, 15)]),
    ("2023年3月上旬发生了什么", _days((3, 1), (3, 10))),
    ("3月5日到3月7日在哪里", [(None, 3, 5), (None, 3, 6), (None, 3, 7)]),
    ("Was the first half of September 2022 a good month?", _days((9, 1), (9, 15), 2022)),
    ("What did Joanna do in the second half of 2023?", [(2023, m, None) for m in range(7, 13)]),
    ("What did Joanna do in early 2023?", [(2023, m, None) for m in range(1, 5)]),
    ("What state did Joanna visit in summer 2021?", [(2021, 6, None), (2021, 7, None), (2021, 8, None)]),
    ("Where did we ski in the winter of 2022?", [(2022, 12, None), (2023, 1, None), (2023, 2, None)]),
    ("2023年夏天去了哪里", [(2023, 6, None), (2023, 7, None), (2023, 8, None)]),
    ("2023年上半年做了什么", [(2023, m, None) for m in range(1, 7)]),
    ("What did we do between 30 December and 2 January?",
     sorted([(None, 1, 1), (None, 1, 2), (None, 12, 30), (None, 12, 31)], key=lambda f: (f[1], f[2]))),
])
def test_a_range_names_every_day_it_covers_and_not_its_ends_alone(question, dates):
    assert analysis.dates_named(question) == dates


def test_the_words_of_a_range_and_a_month_name_are_not_searched():
    for question in ("Where was Tim in the week before 16 November 2023?",
                     "Which tournament did Nate win in the beginning of November 2022?",
                     "Where was John between August 11 and August 15 2023?"):
        left = analysis.without_dates(question)
        assert len(left) == len(question)
        for word in ("week", "before", "beginning", "between", "November", "August", "16", "2023", "11"):
            assert word not in left, (question, left)
    assert "tournament" in analysis.without_dates("Which tournament did Nate win in the beginning of November 2022?")
    # A season stays a word ("last summer" may be told of another summer than the calendar's); its year does not.
    assert analysis.without_dates("What state did Joanna visit in summer 2021?") == "What state did Joanna visit in summer     ?"
    assert analysis.without_dates("2023年上半年做了什么") == "        做了什么"


def test_a_day_inside_a_named_range_ranks_first(store):
    words = "Tim went to a castle in the hills."
    inside = store.write_page("project:d", content=words, observed_at="2023-08-13T10:00:00Z")["page_id"]
    outside = store.write_page("project:d", content=words, observed_at="2023-08-20T10:00:00Z")["page_id"]  # newer: first on a tie
    newer = store.write_page("project:d", content=words, observed_at="2023-09-13T10:00:00Z")["page_id"]
    ids = [x["page_id"] for x in store.search_pages("Where did Tim go between August 11 and August 15 2023?")["hits"]]
    assert ids == [inside, outside, newer]


def test_a_message_telling_of_last_weekend_is_found_by_the_weekend_named(store):
    # Said on Thursday 20 July 2023: "last weekend" is the 15th and 16th. The other page was said on Monday the
    # 17th (the day the question names as the end of its range, not inside it) and tells of the weekend after.
    told = store.write_page("project:d", content="Caroline: Last weekend I joined a mentorship program.",
                            observed_at="2023-07-20T10:00:00Z")["page_id"]
    said_on_17 = store.write_page("project:d", content="Caroline: This weekend I joined a mentorship program.",
                                  observed_at="2023-07-17T10:00:00Z")["page_id"]
    ids = [x["page_id"] for x in store.search_pages(
        "What program did Caroline join the weekend before 17 July 2023?")["hits"]]
    assert ids[:2] == [told, said_on_17]


def test_a_month_named_in_the_question_is_when_not_a_word(store):
    in_august = store.write_page("project:d", content="John: I was at a charity event with friends.",
                                 observed_at="2023-08-12T10:00:00Z")["page_id"]
    names_august = store.write_page("project:d", content="John: Last August I went to a charity event.",
                                    observed_at="2023-12-08T10:00:00Z")["page_id"]
    ids = [x["page_id"] for x in store.search_pages("What charity event did John go to in August 2023?")["hits"]]
    assert ids[:2] == [in_august, names_august]


def test_a_text_telling_of_the_named_day_ranks_above_one_only_said_on_it(store):
    told = store.write_page("project:d", content="Calvin: Yesterday I met some artists in Boston.",
                            observed_at="2023-10-04T10:00:00Z")["page_id"]
    said = store.write_page("project:d", content="Calvin: I love meeting artists in Boston.",
                            observed_at="2023-10-03T10:00:00Z")["page_id"]  # newer: first on a tie
    ids = [x["page_id"] for x in store.search_pages("Which artists did Calvin meet in Boston on October 3, 2023?")["hits"]]
    assert ids[:2] == [told, said]
    # A range names the day too.
    ids = [x["page_id"] for x in store.search_pages(
        "Which artists did Calvin meet in Boston between October 2 and October 3, 2023?")["hits"]]
    assert ids[:2] == [told, said]


def test_a_question_of_many_ranges_names_a_bounded_number_of_days(store):
    question = " ".join(f"between January 1 and January 31 {y}" for y in range(1950, 2000))[:2000]
    named = analysis.dates_named(question)
    assert len(named) == 366 and named[0] == (1950, 1, 1)
    page = store.write_page("project:d", content="January notes", observed_at="1950-01-03T10:00:00Z")["page_id"]
    assert [x["page_id"] for x in store.search_pages(question, limit=5)["hits"]] == [page]


def test_a_season_of_a_year_favours_its_months(store):
    july = store.write_page("project:d", content="We hiked the ridge trail.", observed_at="2021-07-10T10:00:00Z")["page_id"]
    november = store.write_page("project:d", content="We hiked the ridge trail.",
                                observed_at="2021-11-10T10:00:00Z")["page_id"]  # newer: first on a tie
    ids = [x["page_id"] for x in store.search_pages("Which trail did we hike in summer 2021?")["hits"]]
    assert ids == [july, november]
    ids = [x["page_id"] for x in store.search_pages("2021年夏天我们走了哪条trail")["hits"]]
    assert ids[0] == july


def test_a_question_of_dates_alone_searches_their_words_not_their_numbers(store):
    """Nothing but a date left: the month's name is looked for, never the day and year as numbers (which match
    any text with a number in it)."""
    numbers = store.write_page("project:d", content="Bought 5 pots and 10 bags of soil; the kit was 2026 edition.",
                               observed_at="2024-01-20T10:00:00Z")["page_id"]
    march = store.write_page("project:d", content="The March planting went well.",
                             observed_at="2024-01-21T10:00:00Z")["page_id"]
    for question in ("March 5, 2026", "between March 1 and March 10, 2026", "early March 2026"):
        ids = [x["page_id"] for x in store.search_pages(question)["hits"]]
        assert numbers not in ids and ids == [march], question
    # A query of numbers alone is still searched as it is.
    assert [x["page_id"] for x in store.search_pages("2026")["hits"]] == [numbers]
