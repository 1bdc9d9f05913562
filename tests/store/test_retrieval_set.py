"""Shape of the CJK / mixed retrieval set that bench/retrieval_bench.py measures (not its recall)."""

from __future__ import annotations

import json
import re
from pathlib import Path

SET = Path(__file__).resolve().parents[1] / "data" / "retrieval" / "cjk_mixed.jsonl"
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
LANGS = {"zh", "ja", "mixed"}


def _records() -> list[dict]:
    return [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]


def _units(text: str) -> set[str]:
    """Latin words of 3+ letters and CJK character pairs: what 'sharing words' means here."""
    units = {w.casefold() for w in re.findall(r"[A-Za-z][A-Za-z0-9]{2,}", text)}
    for run in re.findall(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+", text):
        units.update(run[i:i + 2] for i in range(len(run) - 1))
    return units


def test_records_are_well_formed() -> None:
    for rec in _records():
        assert rec["kind"] in ("page", "question"), rec
        assert rec["lang"] in LANGS, rec
        if rec["kind"] == "page":
            assert set(rec) == {"kind", "id", "lang", "title", "text"}, rec
            assert rec["title"].strip() and rec["text"].strip(), rec
        else:
            assert set(rec) == {"kind", "id", "lang", "question", "targets"}, rec
            assert rec["question"].strip() and rec["targets"], rec
        text = rec.get("title", "") + rec.get("text", "") + rec.get("question", "")
        assert CJK.search(text), f"{rec['id']} has no CJK text"
        if rec["lang"] == "mixed":
            assert re.search(r"[A-Za-z]{2,}", text), f"{rec['id']} is marked mixed but has no Latin word"


def test_ids_unique_and_targets_exist() -> None:
    records = _records()
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    pages = {r["id"] for r in records if r["kind"] == "page"}
    questions = [r for r in records if r["kind"] == "question"]
    assert len(questions) >= 30
    for q in questions:
        missing = set(q["targets"]) - pages
        assert not missing, (q["id"], missing)
    texts = [q["question"] for q in questions]
    assert len(texts) == len(set(texts)), "a question occurs twice"
    assert {q["lang"] for q in questions} == LANGS


def test_enough_distractors_that_share_words_with_targets() -> None:
    records = _records()
    pages = {r["id"]: r for r in records if r["kind"] == "page"}
    targets = {t for r in records if r["kind"] == "question" for t in r["targets"]}
    distractors = set(pages) - targets
    assert len(distractors) >= 60
    target_units = set().union(*(_units(pages[t]["title"] + pages[t]["text"]) for t in targets))
    lonely = sorted(d for d in distractors if not _units(pages[d]["title"] + pages[d]["text"]) & target_units)
    assert not lonely, f"distractors sharing no word with any target: {lonely}"
    # and the pages a question should find are not trivially alone with its words
    for r in records:
        if r["kind"] != "question":
            continue
        q_units = _units(r["question"])
        rivals = [d for d in distractors if _units(pages[d]["title"] + pages[d]["text"]) & q_units]
        assert rivals, f"{r['id']}: no distractor shares a word with the question"
