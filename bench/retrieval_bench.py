#!/usr/bin/env python3
"""Does search answer questions? Recall of `Store.search_pages` beside bare FTS5 bm25-OR, same run.

    python bench/retrieval_bench.py                       # LoCoMo dev files + the CJK/mixed set
    python bench/retrieval_bench.py --set locomo --files 26,30 --misses 5
    python bench/retrieval_bench.py --set cjk --also-restricted --json

Two sets (`--set locomo|cjk|all`, default all):

locomo  Each LoCoMo conversation file in the data directory (default
        <repo>/../shared/data/retrieval/locomo-dev, see SOURCES.md there; LoCoMo is CC BY-NC and
        never copied into the repository) goes into a store of its own through the real ChatGPT
        importer: the bench writes a ChatGPT-export-shaped conversations.json in a temporary
        directory (one conversation per LoCoMo session, titled by the session, turns chained
        parent to child, speaker_a as `user` and speaker_b as `assistant`, message text
        "<speaker>: <text>" plus " [shares a photo: <blip_caption>]" when the turn has one,
        create_time from the session's date) and runs `store.adapters.import_chatgpt` on it, as
        `pcp import chatgpt` does. Every question of categories 1-4 is searched exactly as asked,
        `search_pages(question, mode=--mode, limit=k)` as the owner; a question is found when one
        of its evidence turns' message pages is among the first k hits (conversation pages count
        as misses). Evidence ids map to pages through the node ids the importer keeps in each
        message page's source ref. The baseline, in the same run: one FTS5 table (the same
        pysqlite3 library the store uses, default unicode61 tokenizer) over the same message
        texts, queried with the question's words OR-ed, ORDER BY bm25 LIMIT k.

cjk     tests/data/retrieval/cjk_mixed.jsonl (our own Chinese, Japanese and mixed
        Chinese/English set; format in tests/data/retrieval/README.md): every page written with
        write_page into one scope of a fresh store, every question searched as asked; recall@1
        and recall@k beside the same bare bm25-OR baseline over title + text.

--also-restricted repeats each search as a model-client session granted search and read on
exactly the scopes the set's pages live in (AccessSession.model_client), reports its recall,
and counts the questions whose hit list (page ids, in order) differs from the owner's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "retrieval" / "locomo-dev"
CJK_SET = ROOT / "tests" / "data" / "retrieval" / "cjk_mixed.jsonl"
DEFAULT_HELD_OUT = "42,43"
DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%H:%M on %d %B, %Y", "%d %B, %Y", "%d %B %Y")
_WORD = re.compile(r"[^\W_]+")
_SESSION_KEY = re.compile(r"session_(\d+)")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def sqlite_module() -> Any:
    import peewee

    return peewee.sqlite3  # pysqlite3 when installed: the library the store runs on


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    xs = sorted(values)
    return xs[max(0, math.ceil(q * len(xs)) - 1)]


# --------------------------------------------------------------------------- bare baseline

class Bare:
    """One in-memory FTS5 table (default tokenizer) over the same texts; bm25 over the words OR-ed."""

    def __init__(self, texts: Iterable[tuple[str, str]]) -> None:
        self.conn = sqlite_module().connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
        self.keys: list[str] = []
        rows = []
        for key, text in texts:
            self.keys.append(key)
            rows.append((len(self.keys), text))
        self.conn.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", rows)

    def search(self, question: str, k: int) -> list[str]:
        words = list(dict.fromkeys(w.lower() for w in _WORD.findall(question)))
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, k))
        return [self.keys[r[0] - 1] for r in rows]


# --------------------------------------------------------------------------- scoring

@dataclass
class Question:
    group: str  # a LoCoMo file or the CJK set
    category: str
    text: str
    targets: set[str]  # page ids (store) that answer it
    bare_targets: set[str]  # keys in the bare table that answer it
    evidence: list[str] = field(default_factory=list)
    date_named: bool = False  # a temporal (category 2) question that names a date ("in May 2022", "on 3 June")


@dataclass
class Outcome:
    rank_store: int | None = None  # 1-based rank of the first target hit, None when not in the top k
    rank_bare: int | None = None
    rank_restricted: int | None = None
    restricted_same: bool | None = None
    ms_store: float = 0.0
    ms_bare: float = 0.0
    error: str | None = None
    top_store: list[dict] = field(default_factory=list)


def first_rank(ids: list[str], targets: set[str]) -> int | None:
    return next((i + 1 for i, x in enumerate(ids) if x in targets), None)


DEPTHS = (5, 10, 20)  # recall@k reported for each (one search of max(k, 20) hits per question)


def run_questions(st: Any, restricted: Any, bare: Bare, questions: list[Question], mode: str, k: int) -> list[Outcome]:
    from store import PcpError

    k = max(k, *DEPTHS)
    out = []
    for i, q in enumerate(questions):
        o = Outcome()
        order = ("store", "bare") if i % 2 == 0 else ("bare", "store")  # take turns against machine noise
        for who in order:
            t0 = time.perf_counter()
            if who == "store":
                try:
                    hits = st.search_pages(q.text, mode=mode, limit=k)["hits"]
                except PcpError as exc:
                    hits, o.error = [], f"{exc.code}: {exc}"
                o.ms_store = (time.perf_counter() - t0) * 1000
                ids = [h["page_id"] for h in hits][:k]
                o.rank_store = first_rank(ids, q.targets)
                o.top_store = hits[:3]
            else:
                keys = bare.search(q.text, k)
                o.ms_bare = (time.perf_counter() - t0) * 1000
                o.rank_bare = first_rank(keys, q.bare_targets)
        if restricted is not None:
            try:
                r_hits = restricted.search_pages(q.text, mode=mode, limit=k)["hits"]
            except PcpError:
                r_hits = []
            r_ids = [h["page_id"] for h in r_hits][:k]
            o.rank_restricted = first_rank(r_ids, q.targets)
            o.restricted_same = r_ids == ids
        out.append(o)
    return out


def recall(outcomes: list[Outcome], attr: str, k: int) -> float:
    if not outcomes:
        return float("nan")
    return sum(1 for o in outcomes if (getattr(o, attr) or k + 1) <= k) / len(outcomes)


def summary(outcomes: list[Outcome], k: int, restricted: bool) -> dict:
    s: dict[str, Any] = {"questions": len(outcomes)}
    for depth in sorted({*DEPTHS, k}):
        s[f"store_recall@{depth}"] = recall(outcomes, "rank_store", depth)
        s[f"bare_recall@{depth}"] = recall(outcomes, "rank_bare", depth)
    s.update({
        "store_recall@1": recall(outcomes, "rank_store", 1),
        "bare_recall@1": recall(outcomes, "rank_bare", 1),
        "store_ms_p50": pct([o.ms_store for o in outcomes], .5),
        "store_ms_p95": pct([o.ms_store for o in outcomes], .95),
        "bare_ms_p50": pct([o.ms_bare for o in outcomes], .5),
        "errors": sum(1 for o in outcomes if o.error),
    })
    if restricted:
        s[f"restricted_recall@{k}"] = recall(outcomes, "rank_restricted", k)
        s["restricted_differs"] = sum(1 for o in outcomes if o.restricted_same is False)
    return s


# --------------------------------------------------------------------------- LoCoMo as a ChatGPT export

def session_time(value: Any) -> float | None:
    """Epoch seconds of a session's date (UTC), or None when it does not parse."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = " ".join(value.split())
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc).timestamp()
        except ValueError:
            continue
    return None


def turn_text(turn: dict) -> str:
    text = f"{turn.get('speaker', '')}: {turn.get('text', '')}"
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        text += f" [shares a photo: {caption}]"
    return text


def locomo_export(data: dict, stem: str) -> tuple[list[dict], dict[str, str], dict[str, str], list[str]]:
    """(conversations.json items, dia_id -> node id, dia_id -> message text, warnings)."""
    speaker_a, speaker_b = data.get("speaker_a"), data.get("speaker_b")
    roles = {speaker_a: "user", speaker_b: "assistant"}
    sessions = sorted(
        (int(m.group(1)), value) for key, value in data.items()
        if (m := _SESSION_KEY.fullmatch(key)) and isinstance(value, list) and value
    )
    conversations, node_of, text_of, warnings = [], {}, {}, []
    for n, turns in sessions:
        start = session_time(data.get(f"session_{n}_date_time"))
        if start is None:
            warnings.append(f"session {n}: date {data.get(f'session_{n}_date_time')!r} not understood; no create_time")
        conv_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"locomo/{stem}/session_{n}"))
        root = str(uuid.uuid5(uuid.NAMESPACE_URL, f"locomo/{stem}/session_{n}/root"))
        mapping: dict[str, dict] = {root: {"id": root, "message": None, "parent": None, "children": []}}
        parent = root
        for i, turn in enumerate(turns):
            dia = str(turn.get("dia_id") or f"session_{n}#{i}")
            node = str(uuid.uuid5(uuid.NAMESPACE_URL, f"locomo/{stem}/{dia}"))
            if dia in node_of:
                warnings.append(f"turn id {dia} occurs twice; the later turn keeps it")
            node_of[dia] = node
            text = turn_text(turn)
            text_of[dia] = text
            role = roles.get(turn.get("speaker"))
            if role is None:
                warnings.append(f"turn {dia}: speaker {turn.get('speaker')!r} is neither speaker_a nor speaker_b")
                role = "user"
            mapping[node] = {
                "id": node, "parent": parent, "children": [],
                "message": {
                    "id": node, "author": {"role": role, "name": None, "metadata": {}},
                    "create_time": None if start is None else start + i,
                    "content": {"content_type": "text", "parts": [text]},
                    "status": "finished_successfully", "end_turn": True, "weight": 1.0,
                    "metadata": {}, "recipient": "all",
                },
            }
            mapping[parent]["children"].append(node)
            parent = node
        conversations.append({
            "id": conv_id, "conversation_id": conv_id, "title": f"Session {n}",
            "create_time": start, "update_time": None if start is None else start + len(turns),
            "mapping": mapping, "current_node": parent,
        })
    return conversations, node_of, text_of, warnings


def message_pages(st: Any) -> tuple[dict[str, str], int, list[str]]:
    """node id -> page id of every imported message page (from its source ref), conversation page
    count, and the scopes the pages live in; through list_pages and read_pages like any client."""
    page_ids, scopes, cursor = [], set(), None
    while True:
        res = st.list_pages(limit=100, after=cursor)
        page_ids += [p["page_id"] for p in res["pages"]]
        scopes.update(p["namespace"] for p in res["pages"])
        cursor = res["next_cursor"]
        if not cursor:
            break
    node_page, conversations = {}, 0
    for i in range(0, len(page_ids), 20):
        for r in st.read_pages(page_ids[i:i + 20], projections=["manifest"])["results"]:
            rev = r["revision"]
            nodes = [ref["locator"]["node_id"] for ref in rev["source_refs"]
                     if isinstance(ref.get("locator"), dict) and ref["locator"].get("node_id")]
            if nodes:
                node_page[nodes[0]] = rev["page_id"]
            else:
                conversations += 1
    return node_page, conversations, sorted(scopes)


def evidence_ids(evidence: Any) -> list[str]:
    items = evidence if isinstance(evidence, list) else [evidence]
    return [t for e in items if isinstance(e, str) for t in re.split(r"[;,\s]+", e) if t]


def run_locomo(args: argparse.Namespace, work: Path) -> dict:
    from store import AccessSession, Store
    from store.adapters import import_chatgpt
    from store.analysis import dates_named

    data_dir = Path(args.data).expanduser() if args.data else DEFAULT_DATA
    if not data_dir.is_dir():
        log(f"LoCoMo: no data directory {data_dir} (give --data DIR); skipped")
        return {"skipped": f"no data directory {data_dir}"}
    sources = next((p for p in (data_dir / "SOURCES.md", data_dir.parent / "SOURCES.md") if p.exists()), None)
    log(f"LoCoMo data: {data_dir} ({'provenance and licence: ' + str(sources) if sources else 'no SOURCES.md found'})")
    files = sorted(data_dir.glob("*.json"), key=lambda p: (len(p.stem), p.stem))
    if args.files:
        wanted = [f.strip() for f in args.files.split(",") if f.strip()]
        files = [p for p in files if p.stem in wanted]
        missing = sorted(set(wanted) - {p.stem for p in files})
        if missing:
            log(f"  no such file(s) in {data_dir}: {', '.join(missing)}")
    categories = {c.strip() for c in args.categories.split(",") if c.strip()}
    held_out = {f.strip() for f in args.held_out.split(",") if f.strip()}
    per_file: dict[str, dict] = {}
    all_q: list[Question] = []
    all_o: list[Outcome] = []
    for path in files:
        stem = path.stem
        data = json.loads(path.read_text(encoding="utf-8"))
        conversations, node_of, text_of, warnings = locomo_export(data, stem)
        folder = work / f"locomo-{stem}"
        folder.mkdir()
        export = folder / "conversations.json"
        export.write_text(json.dumps(conversations, ensure_ascii=False), encoding="utf-8")
        st = Store.open(folder / "store.db")
        t0 = time.perf_counter()
        report = import_chatgpt(st, export)
        import_s = time.perf_counter() - t0
        if args.semantic:
            st.set_semantic(True)
        node_page, n_conv_pages, scopes = message_pages(st)
        page_of = {dia: node_page[node] for dia, node in node_of.items() if node in node_page}
        questions, unmapped, no_evidence = [], [], 0
        for qa in data.get("qa", []):
            category = str(qa.get("category"))
            if category not in categories or not isinstance(qa.get("question"), str):
                continue
            ev = evidence_ids(qa.get("evidence"))
            unmapped += [e for e in ev if e not in page_of]
            targets = {page_of[e] for e in ev if e in page_of}
            no_evidence += not targets
            questions.append(Question(stem, category, qa["question"], targets, {e for e in ev if e in text_of}, ev,
                                      category == "2" and bool(dates_named(qa["question"]))))
        bare = Bare(text_of.items())
        restricted = None
        if args.also_restricted:
            restricted = st.with_session(AccessSession.model_client(
                "retrieval-bench", {ns: ["search", "read"] for ns in scopes}))
        outcomes = run_questions(st, restricted, bare, questions, args.mode, args.k)
        st.close()
        by_cat = {c: summary([o for o, q in zip(outcomes, questions, strict=False) if q.category == c], args.k, restricted is not None)
                  for c in sorted(categories) if any(q.category == c for q in questions)}
        per_file[stem] = {
            "held_out": stem in held_out,
            "sessions": len(conversations), "turns": len(text_of),
            "imported": {"conversations": report.conversations, "messages": report.messages,
                         "conversation_pages": n_conv_pages, "seconds": round(import_s, 2)},
            "scopes": len(scopes),
            "questions_without_evidence_turn": no_evidence,
            "unmapped_evidence_ids": unmapped,
            "warnings": warnings,
            "by_category": by_cat,
            "overall": summary(outcomes, args.k, restricted is not None),
        }
        log(f"  {stem}: {len(conversations)} sessions, {len(text_of)} turns imported in {import_s:.1f} s, "
            f"{len(questions)} questions; recall@{args.k} store {per_file[stem]['overall'][f'store_recall@{args.k}']:.1%}"
            f" bare {per_file[stem]['overall'][f'bare_recall@{args.k}']:.1%}")
        if args.misses:
            print_misses(stem, questions, outcomes, text_of, args.misses, args.k)
        all_q += questions
        all_o += outcomes
    restricted_on = bool(args.also_restricted)
    groups = {
        "tune": [o for o, q in zip(all_o, all_q, strict=False) if q.group not in held_out],
        "held_out": [o for o, q in zip(all_o, all_q, strict=False) if q.group in held_out],
        "overall": all_o,
        "date_named": [o for o, q in zip(all_o, all_q, strict=False) if q.date_named],
    }
    by_cat_all = {c: summary([o for o, q in zip(all_o, all_q, strict=False) if q.category == c], args.k, restricted_on)
                  for c in sorted(categories) if any(q.category == c for q in all_q)}
    return {
        "data": str(data_dir), "sources": str(sources) if sources else None, "mode": args.mode, "k": args.k,
        "categories": sorted(categories), "held_out_files": sorted(held_out),
        "files": per_file, "by_category": by_cat_all,
        "groups": {name: summary(outs, args.k, restricted_on) for name, outs in groups.items() if outs},
    }


def print_misses(stem: str, questions: list[Question], outcomes: list[Outcome], text_of: dict[str, str],
                 limit: int, k: int) -> None:
    missed = [(q, o) for q, o in zip(questions, outcomes, strict=False) if o.rank_store is None]
    log(f"  {stem}: {len(missed)} missed by the store; the first {min(limit, len(missed))}:")
    for q, o in missed[:limit]:
        bare_note = f"bare rank {o.rank_bare}" if o.rank_bare else "bare missed too"
        log(f"    [cat {q.category}] {q.text}   ({bare_note}{'; ' + o.error if o.error else ''})")
        for e in q.evidence[:3]:
            log(f"        evidence {e}: {text_of.get(e, '(not in the conversation)')[:140]}")
        for h in o.top_store:
            log(f"        hit {h.get('matched_by', '')} {h.get('title', '')[:110]!r}")


# --------------------------------------------------------------------------- the CJK / mixed set

def load_set(path: Path) -> tuple[dict[str, dict], list[dict]]:
    pages, questions = {}, []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)
        if obj["kind"] == "page":
            pages[obj["id"]] = obj
        elif obj["kind"] == "question":
            questions.append(obj)
    return pages, questions


def run_cjk(args: argparse.Namespace, work: Path) -> dict:
    from store import AccessSession, Store

    path = Path(args.cjk_file)
    pages, raw_questions = load_set(path)
    namespace = "retrieval:cjk-mixed"
    st = Store.open(work / "cjk.db")
    st.create_scope(namespace, display_name="CJK and mixed retrieval set")
    if args.semantic:
        st.set_semantic(True)
    page_id = {}
    for key, page in pages.items():
        res = st.write_page(namespace, content=page["text"], media_type="text/markdown",
                            facets={"title": page["title"]})
        page_id[key] = res["page_id"] if "page_id" in res else res["revision"]["page_id"]
    questions = [Question("cjk", q.get("lang", "?"), q["question"], {page_id[t] for t in q["targets"]},
                          set(q["targets"]), list(q["targets"])) for q in raw_questions]
    bare = Bare((key, f"{p['title']}\n{p['text']}") for key, p in pages.items())
    restricted = None
    if args.also_restricted:
        restricted = st.with_session(AccessSession.model_client("retrieval-bench", {namespace: ["search", "read"]}))
    outcomes = run_questions(st, restricted, bare, questions, args.mode, args.k)
    st.close()
    if args.misses:
        text_of = {key: f"{p['title']} / {p['text']}" for key, p in pages.items()}
        print_misses("cjk", questions, outcomes, text_of, args.misses, args.k)
    langs = sorted({q.category for q in questions})
    return {
        "file": str(path), "pages": len(pages), "questions": len(questions),
        "distractors": len(set(pages) - {t for q in raw_questions for t in q["targets"]}),
        "mode": args.mode, "k": args.k,
        "by_lang": {lang: summary([o for o, q in zip(outcomes, questions, strict=False) if q.category == lang], args.k,
                                  restricted is not None) for lang in langs},
        "overall": summary(outcomes, args.k, restricted is not None),
    }


# --------------------------------------------------------------------------- report

def _depths(k: int) -> list[int]:
    return sorted({*DEPTHS, k})


def _row(label: str, s: dict, k: int, restricted: bool, at1: bool = False) -> str:
    cells = f"{label:<22} {s['questions']:>5}"
    if at1:
        cells += f" {s['store_recall@1']:>8.1%} {s['bare_recall@1']:>8.1%}"
    for depth in _depths(k):
        cells += f" {s[f'store_recall@{depth}']:>9.1%} {s[f'bare_recall@{depth}']:>8.1%}"
    if restricted:
        cells += f" {s[f'restricted_recall@{k}']:>10.1%} {s['restricted_differs']:>8}"
    cells += f" {s['store_ms_p50']:>8.1f} {s['store_ms_p95']:>8.1f} {s['bare_ms_p50']:>7.2f}"
    if s["errors"]:
        cells += f"  ({s['errors']} errors)"
    return cells


def _header(k: int, restricted: bool, at1: bool = False) -> str:
    h = f"{'':<22} {'n':>5}"
    if at1:
        h += f" {'store@1':>8} {'bare@1':>8}"
    for depth in _depths(k):
        h += f" {f'store@{depth}':>9} {f'bare@{depth}':>8}"
    if restricted:
        h += f" {f'restr.@{k}':>10} {'differ':>8}"
    h += f" {'ms p50':>8} {'ms p95':>8} {'bare ms':>7}"
    return h


def print_report(result: dict, restricted: bool) -> None:
    loc = result.get("locomo")
    if loc and "files" in loc:
        k = loc["k"]
        print(f"\nLoCoMo recall@5/10/20, mode {loc['mode']!r}{' with the semantic channel' if result.get('semantic') else ''}, categories {','.join(loc['categories'])} "
              f"(store = search_pages as the owner; bare = FTS5 bm25 over the question's words OR-ed)")
        print(_header(k, restricted))
        for stem, f in loc["files"].items():
            tag = "held out" if f["held_out"] else "tune"
            for c, s in f["by_category"].items():
                print(_row(f"{stem} cat {c}", s, k, restricted))
            print(_row(f"{stem} all ({tag})", f["overall"], k, restricted))
            notes = []
            if f["questions_without_evidence_turn"]:
                notes.append(f"{f['questions_without_evidence_turn']} question(s) name no turn of the conversation (always missed)")
            if f["unmapped_evidence_ids"]:
                notes.append(f"evidence ids not in the conversation: {', '.join(map(repr, f['unmapped_evidence_ids']))}")
            notes += f["warnings"][:3]
            for n in notes:
                print(f"{'':<6}note: {n}")
        print()
        for c, s in loc["by_category"].items():
            print(_row(f"all files cat {c}", s, k, restricted))
        for name, s in loc["groups"].items():
            label = {"tune": "tune files", "held_out": "held-out files", "overall": "OVERALL",
                     "date_named": "date-named (cat 2)"}[name]
            print(_row(label, s, k, restricted))
        dated = loc["groups"].get("date_named")
        if dated:
            found = round(dated[f"store_recall@{k}"] * dated["questions"])
            bare = round(dated[f"bare_recall@{k}"] * dated["questions"])
            print(f"  date-named questions (category 2 naming a day, month or year): {found} of {dated['questions']} "
                  f"found in the first {k} (bare {bare})")
        print(f"  held-out files: {', '.join(loc['held_out_files'])}; tune: the others")
    elif loc:
        print(f"\nLoCoMo: {loc['skipped']}")
    cjk = result.get("cjk")
    if cjk:
        k = cjk["k"]
        print(f"\nCJK / mixed set ({cjk['pages']} pages, {cjk['questions']} questions, {cjk['distractors']} "
              f"distractor pages), mode {cjk['mode']!r}")
        print(_header(k, restricted, at1=True))
        for lang, s in cjk["by_lang"].items():
            print(_row(f"cjk lang {lang}", s, k, restricted, at1=True))
        print(_row("cjk OVERALL", cjk["overall"], k, restricted, at1=True))


def main(argv: list[str] | None = None) -> int:
    from store import SEARCH_MODES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=("locomo", "cjk", "all"), default="all", help="which set (default all)")
    parser.add_argument("--data", metavar="DIR", help=f"LoCoMo files (default {DEFAULT_DATA})")
    parser.add_argument("--files", metavar="A,B", help="only these LoCoMo files (stems, e.g. 26,30)")
    parser.add_argument("--held-out", default=DEFAULT_HELD_OUT, metavar="A,B",
                        help=f"files reported as held out (default {DEFAULT_HELD_OUT}); the rest are the tune set")
    parser.add_argument("--categories", default="1,2,3,4", help="LoCoMo question categories (default 1,2,3,4)")
    parser.add_argument("--mode", default="auto", choices=SEARCH_MODES, help="search mode (default auto)")
    parser.add_argument("-k", "--k", type=int, default=10, help="hits per search and the k of recall@k (default 10)")
    parser.add_argument("--cjk-file", default=str(CJK_SET), help=argparse.SUPPRESS)
    parser.add_argument("--also-restricted", action="store_true",
                        help="repeat as a model session granted only the set's scopes")
    parser.add_argument("--misses", type=int, default=0, metavar="N", help="print N missed questions per file")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--dir", help="parent directory for the temporary stores")
    parser.add_argument("--semantic", action="store_true",
                        help="turn each store's semantic channel on (pcp semantic on; needs pcp[semantic])")
    args = parser.parse_args(argv)
    if args.k < 1:
        parser.error("-k must be at least 1")
    sqlite3 = sqlite_module()
    log(f"retrieval bench: Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version} ({sqlite3.__name__}), "
        f"{os.cpu_count()} CPUs, {datetime.now().isoformat(timespec='seconds')}")
    result: dict = {"mode": args.mode, "k": args.k, "semantic": bool(args.semantic)}
    with tempfile.TemporaryDirectory(prefix="retrieval_bench_", dir=args.dir) as tmp:
        work = Path(tmp)
        if args.set in ("locomo", "all"):
            result["locomo"] = run_locomo(args, work)
        if args.set in ("cjk", "all"):
            result["cjk"] = run_cjk(args, work)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1, default=str))
    else:
        print_report(result, args.also_restricted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
