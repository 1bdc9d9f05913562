"""Issue 34: search over conversations, through the Python API and the real ChatGPT importer.

- Time as people say it: relative time is read against the message's own date, and a question naming
  a day finds what a message tells of that day.
- Sessions, then messages: a conversation lifts its messages by what its *visible* messages hold; a
  message suppressed in the session's context, tombstoned, in another scope or erased lifts nothing.
- Chatter: a pleasantry that shares a word with the question ranks below content.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone

import pcpstore_helpers as h
import pytest

from store import analysis

SCOPE = "chat:test"
OTHER = "chat:other"
QUESTION = "Tell me about the old lighthouse"


def _export(path, conversations):
    """A ChatGPT-shaped export: conversations as (id, day, [(author, text), ...]), turns chained."""
    items = []
    for conv_id, day, turns in conversations:
        start = datetime(day.year, day.month, day.day, 15, tzinfo=timezone.utc).timestamp()
        mapping = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
        parent = "root"
        for i, (author, text) in enumerate(turns):
            node = f"{conv_id}-m{i}"
            mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
                "id": node, "author": {"role": "user" if author == "user" else "assistant"},
                "create_time": start + i, "content": {"content_type": "text", "parts": [text]}}}
            mapping[parent]["children"].append(node)
            parent = node
        items.append({"id": conv_id, "conversation_id": conv_id, "title": f"Chat {conv_id}", "create_time": start,
                      "mapping": mapping, "current_node": parent})
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def _import(store, tmp_path, conversations, name="export.json", namespace=SCOPE):
    from store.adapters import import_chatgpt

    import_chatgpt(store, _export(tmp_path / name, conversations), namespace=namespace)


def _page_of(store, text, namespace=SCOPE):
    hits = store.search_pages(text, mode="exact", scopes=[namespace], limit=5)["hits"]
    assert len(hits) == 1, (text, hits)
    return hits[0]["page_id"]


def _score(hits, page_id):
    return next(x["score"] for x in hits if x["page_id"] == page_id)


# --- time as people say it ----------------------------------------------------------------------------

def test_relative_time_is_read_against_the_day_it_was_said():
    start = date(2023, 1, 1)
    for i in range(400):  # every weekday, month end and year end
        said = start + timedelta(days=i)
        stamp = said.isoformat() + "T10:00:00Z"
        day = lambda d: (d.year, d.month, d.day)  # noqa: E731
        assert analysis.event_dates("Yesterday I met some artists in Boston", stamp) == [day(said - timedelta(days=1))]
        assert analysis.event_dates("昨天我们去了公园", stamp) == [day(said - timedelta(days=1))]
        assert analysis.event_dates("前天", stamp) == [day(said - timedelta(days=2))]
        assert analysis.event_dates("We went two days ago", stamp) == [day(said - timedelta(days=2))]
        friday = analysis.event_dates("I finished it last Friday", stamp)
        assert len(friday) == 1
        fri = date(*friday[0])  # type: ignore[arg-type]
        assert fri.weekday() == 4 and 1 <= (said - fri).days <= 7
        week = [date(*d) for d in analysis.event_dates("Last week was busy", stamp)]  # type: ignore[arg-type]
        assert len(week) == 7 and week[0].weekday() == 0 and week[-1] < said - timedelta(days=said.weekday())
        assert [date(*d) for d in analysis.event_dates("上周很忙", stamp)] == week  # type: ignore[arg-type]
        last_month = analysis.event_dates("Last month I moved", stamp)
        assert last_month == [((said.replace(day=1) - timedelta(days=1)).year,
                               (said.replace(day=1) - timedelta(days=1)).month, None)]
        assert analysis.event_dates("this morning I ran", stamp) == []  # the day of speaking itself
        assert analysis.event_dates("Thanks, talk soon. Bye!", stamp) == []


def test_a_question_naming_a_day_finds_what_a_message_tells_of_it(store, tmp_path):
    chats = [
        ("c1", date(2023, 10, 3), [("user", "Calvin: Hi Sam, how was your week?"), ("bot", "Sam: Busy! Thanks, Calvin."),
                                   ("user", "Calvin: Will do. Thanks for everything, Sam. Talk soon. Bye!")]),
        ("c2", date(2023, 10, 4), [("user", "Calvin: Yesterday I met some artists in Boston."),
                                   ("bot", "Sam: Sounds fun, Calvin!")]),
        ("c3", date(2023, 9, 1), [("user", "Calvin: I love the city at night."), ("bot", "Sam: Me too, Calvin.")]),
    ]
    _import(store, tmp_path, chats)
    boston = _page_of(store, "artists in Boston")
    hits = store.search_pages("Which city was Calvin at on October 3, 2023?", limit=10)["hits"]
    assert hits[0]["page_id"] == boston, [x["snippet"][:60] for x in hits]
    # The day's boost lifts no message holding none of the question's other words above one that holds some: those
    # come after, what was said on the day named (or tells of it) only, small talk last.
    quiet = store.search_pages("Which city was Calvin at on October 3, 2023?", limit=50)["hits"]
    holds = [("Calvin" in x["snippet"] or "city" in x["snippet"]) for x in quiet]
    assert holds == sorted(holds, reverse=True) and False in holds, [x["snippet"][:60] for x in quiet]
    assert {x["date"][:10] for x, held in zip(quiet, holds, strict=True) if not held} == {"2023-10-03"}
    cjk = [("z1", date(2024, 3, 6), [("user", "昨天我在杭州开会。"), ("bot", "好的，谢谢！")])]
    _import(store, tmp_path, cjk, name="cjk.json")
    hangzhou = _page_of(store, "杭州开会")
    assert store.search_pages("2024年3月5日在哪里开会", limit=3)["hits"][0]["page_id"] == hangzhou


# --- chatter and kinds --------------------------------------------------------------------------------

def test_a_pleasantry_sharing_a_word_ranks_below_content(store, tmp_path):
    chats = [("h1", date(2023, 5, 1), [
        ("user", "Maria: My knee injury is acting up again, and the doctor found an allergy too."),
        ("bot", "John: No problem, Maria!"),
        ("user", "Maria: Thanks John, you are the best."),
        ("bot", "John: No problem at all, Maria."),
        ("user", "Maria: We should plan the trip."),
        ("bot", "John: Sure Maria, next week."),
    ])]
    _import(store, tmp_path, chats)
    knee = _page_of(store, "knee injury")
    hits = store.search_pages("What are Maria's health problems?", limit=5)["hits"]
    assert hits[0]["page_id"] == knee, [x["snippet"][:50] for x in hits]


# --- sessions, then messages: only what the session may see lifts a conversation ----------------------

def _two_conversations(store, tmp_path):
    """Two conversations holding the same message; the first also holds `extra`, rich in the question's words."""
    same = "Sam: I keep thinking about the old lighthouse."
    filler = [("user", f"Sam: note {i} about groceries and the weather") for i in range(6)]
    extra = "Ann: The old lighthouse tour, the lighthouse keeper, the lighthouse museum yesterday!"
    # `extra` first and `same` last: no reply link joins them, only the conversation does.
    chats = [("a", date(2023, 6, 10), [("user", extra), *filler, ("bot", same)]),
             ("b", date(2023, 6, 10), [*filler, ("bot", same)])]
    _import(store, tmp_path, chats)
    hits = store.search_pages(same, mode="exact", limit=5)["hits"]
    assert len(hits) == 2
    return [x["page_id"] for x in hits], _page_of(store, "lighthouse keeper")


def test_a_conversation_lifts_its_messages_by_what_its_visible_messages_hold(store, tmp_path):
    (m1, m2), extra = _two_conversations(store, tmp_path)
    owner = store.search_pages(QUESTION, limit=20)["hits"]
    assert _score(owner, m1) != _score(owner, m2)  # the conversation holding `extra` lifts its copy
    model = h.model(store, {SCOPE: {"search", "read", "suppress"}})
    model.suppress_pages([extra], context_id="ctx", reason="not this one")
    hidden = model.search_pages(QUESTION, limit=20, context_id="ctx")["hits"]
    assert extra not in [x["page_id"] for x in hidden]
    assert _score(hidden, m1) == _score(hidden, m2)  # the suppressed message's words lift nothing


def test_an_erased_message_lifts_nothing_and_its_dates_go_with_it(store, tmp_path, db_path):
    (m1, m2), extra = _two_conversations(store, tmp_path)
    rev_pk = store._db.execute_sql("SELECT head FROM page WHERE page_id = ?", [extra]).fetchone()[0]
    told = "scope : zd20230609"  # "yesterday", said on 10 June 2023

    def dated() -> list[int]:
        return [r[0] for r in store._db.execute_sql(
            "SELECT rowid FROM revision_terms WHERE revision_terms MATCH ?", [told]).fetchall()]

    assert rev_pk in dated()
    store.delete_page(extra, "erase the lighthouse note")
    assert rev_pk not in dated()
    model = h.model(store, {SCOPE: {"search", "read"}})
    hits = model.search_pages(QUESTION, limit=20)["hits"]
    assert extra not in [x["page_id"] for x in hits]
    assert _score(hits, m1) == _score(hits, m2)


def test_hidden_messages_change_nothing_for_a_restricted_session(store, tmp_path):
    """Hits, order and scores of a session granted one scope stay the same when messages it may not see
    are added: a tombstoned message in its conversation and a whole conversation in another scope."""
    (m1, _m2), _extra = _two_conversations(store, tmp_path)
    model = h.model(store, {SCOPE: {"search", "read"}})
    questions = [QUESTION, "What did Ann see yesterday on 9 June 2023?", "Which sports does Sam do?"]
    before = [model.search_pages(q, limit=50) for q in questions]
    assert before[0]["hits"]
    assert _score(before[0]["hits"], m1) > _score(before[0]["hits"], _m2)  # the conversation lift is on
    conv = store._db.execute_sql(
        "SELECT cp.page_id FROM relation x JOIN page cp ON cp.id = x.from_page_id JOIN page p ON p.id = x.to_page_id "
        "WHERE p.page_id = ? AND x.relation_type = 'contains'", [m1]).fetchone()[0]
    gone = store.write_page(SCOPE, content="Sam: lighthouse lighthouse hike yesterday, the old lighthouse again",
                            observed_at="2023-06-10T15:00:00Z")
    store.link_pages(conv, "contains", gone["page_id"])
    store.tombstone_page(gone["page_id"], "withdrawn")
    _import(store, tmp_path, [("o", date(2023, 6, 10), [("user", "Sam: the old lighthouse, lighthouse, hike")] * 3)],
            name="other.json", namespace=OTHER)
    owner = store.search_pages(QUESTION, limit=50, filters={"lifecycle_status": ["active", "tombstoned"]})["hits"]
    assert {x["namespace"] for x in owner} == {SCOPE, OTHER}
    assert [model.search_pages(q, limit=50) for q in questions] == before


def test_a_hit_names_its_conversation(store, tmp_path):
    """A message's hit names the conversation page that contains it (the conversation's own hit, and a page
    no conversation contains, name none); a tombstoned conversation is not named."""
    (m1, m2), extra = _two_conversations(store, tmp_path)
    note = store.write_page(SCOPE, content="A note on the old lighthouse, in no conversation.")["page_id"]
    hits = {x["page_id"]: x for x in store.search_pages(QUESTION, limit=50)["hits"]}
    convs = {}
    for message in (m1, m2, extra):
        row = store._db.execute_sql(
            "SELECT cp.page_id FROM relation x JOIN page cp ON cp.id = x.from_page_id JOIN page p ON p.id = x.to_page_id "
            "WHERE p.page_id = ? AND x.relation_type = 'contains'", [message]).fetchone()
        convs[message] = row[0]
        assert hits[message]["conversation"] == row[0]
    assert convs[m1] == convs[extra] != convs[m2]
    assert hits[note]["conversation"] is None
    store.tombstone_page(convs[m2], "withdrawn")
    again = {x["page_id"]: x for x in store.search_pages(QUESTION, limit=50)["hits"]}
    assert again[m2]["conversation"] is None and again[m1]["conversation"] == convs[m1]


@pytest.mark.parametrize("question,instance", [("What sports does Maria play?", "volleyball"),
                                                ("What is her favourite colour?", "color")])
def test_words_that_differ_still_meet(store, tmp_path, question, instance):
    chats = [("w1", date(2023, 5, 2), [
        ("user", "Maria: I joined a volleyball team and my favorite color is teal."),
        *[("bot", f"John: Maria, the garden note {i} needs water.") for i in range(5)],
    ])]
    _import(store, tmp_path, chats)
    page = _page_of(store, instance)
    assert store.search_pages(question, limit=3)["hits"][0]["page_id"] == page


@pytest.mark.parametrize("question,said", [
    ("How was the roadtrip to the coast?", "Ann: The road trip to the coast was fine."),
    ("How does Ann de-stress?", "Ann: Dancing is how I destress after work."),
])
def test_words_written_together_or_apart_meet(store, tmp_path, question, said):
    """A word written as one, as two or with a hyphen ("roadtrip" / "road trip", "destress" / "de-stress")
    meets its other form; distractors hold the question's other words but not that one."""
    chats = [("c1", date(2023, 5, 2), [
        ("user", said),
        *[("bot", f"Bob: Ann, the coast {i} was grey, the coast was cold; the stress of the garden {i}.") for i in range(8)],
    ])]
    _import(store, tmp_path, chats)
    page = _page_of(store, said.split(": ", 1)[1])
    assert store.search_pages(question, limit=3)["hits"][0]["page_id"] == page


def test_a_compound_only_a_hidden_scope_holds_changes_nothing_for_a_restricted_session(store, tmp_path):
    """The joined or split form a question's word may stand for is looked up only among the terms of the
    scopes the session may search: a hidden scope holding it changes no hit, order or score."""
    _import(store, tmp_path, [("c1", date(2023, 5, 2), [
        ("user", "Ann: The trip to the coast was long."), ("bot", "Bob: A trip with the dog, Ann?")])])
    model = h.model(store, {SCOPE: {"search", "read"}})
    questions = ["How was the roadtrip to the coast?", "How was the road trip to the coast?"]
    before = [model.search_pages(q, limit=20) for q in questions]
    assert before[0]["hits"] and before[1]["hits"]
    _import(store, tmp_path, [("o1", date(2023, 5, 3), [("user", "Sam: our road trip, the roadtrip, road trips")] * 3)],
            name="other.json", namespace=OTHER)
    assert len(store.search_pages("roadtrip", mode="exact", limit=20)["hits"]) >= 3
    assert [model.search_pages(q, limit=20) for q in questions] == before
