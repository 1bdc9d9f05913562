"""Export (pcp-core.md section 7): streamed JSON Lines with a closing digest, import keeping ids, round trip."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap

import pytest

from store import AccessSession, Conflict, Forbidden, Invalid, Store


def _fill(st: Store) -> dict:
    a = st.write_page("project:alpha", content="# Alpha\nThe 有限乘积保持紧致性的证明 note.", facets={"keywords": ["math"]},
                      source_refs=[{"uri": "file:///notes/alpha.md", "locator": {"line": 3}}])
    a2 = st.revise_page(a["page_id"], a["revision_id"], content="# Alpha\nRevised text.")
    b = st.write_page("project:alpha", content="Derived summary", provenance=[
        {"operation": "derive", "input_revision_ids": [a2["revision_id"]]}])
    c = st.write_page("user:me", content="Personal preference: tabs.")
    st.link_pages(b["page_id"], "summarizes", a["page_id"])
    rel = st.link_pages(c["page_id"], "related_to", a["page_id"])
    st.unlink(rel["relation_id"], "wrong link")
    st.link_pages(c["page_id"], "supersedes", b["page_id"])
    st.archive_page(c["page_id"], "old")
    st.suppress_pages([a["page_id"]], "task:1", reason="noise")
    gone = st.write_page("project:alpha", content="to be erased")
    st.delete_page(gone["page_id"], "test erase")
    return {"a": a, "b": b, "c": c}


def _lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_export_has_header_kinds_and_a_closing_digest(tmp_path):
    st = Store.open(tmp_path / "s.db")
    _fill(st)
    result = st.export(tmp_path / "out.jsonl")
    lines = _lines(tmp_path / "out.jsonl")
    header, end = json.loads(lines[0]), json.loads(lines[-1])
    assert header["kind"] == "pcp.export.v1" and header["owner_id"] == st.owner_id
    assert header["counts"] == {"scopes": 2, "pages": 3, "revisions": 4}
    kinds = [json.loads(line)["kind"] for line in lines[1:-1]]
    for kind in ("scope", "page", "revision", "relation", "retraction", "lifecycle_event", "suppression", "receipt"):
        assert kind in kinds
    data = (tmp_path / "out.jsonl").read_bytes()
    body = data[: data.rindex(b"\n", 0, len(data) - 1) + 1]
    assert end == {"kind": "pcp.export.end", "sha256": hashlib.sha256(body).hexdigest()}
    assert result["sha256"] == end["sha256"] and result["lines"] == len(lines)
    revision = next(json.loads(l) for l in lines if json.loads(l)["kind"] == "revision")
    assert {"page_id", "revision_id", "payload", "provenance", "content_digest", "source_refs"} <= set(revision)


def test_import_into_empty_store_keeps_ids_and_round_trips(tmp_path):
    st = Store.open(tmp_path / "s.db")
    ids = _fill(st)
    st.export(tmp_path / "one.jsonl")
    other = Store.open(tmp_path / "t.db")
    report = other.import_export(tmp_path / "one.jsonl")
    assert other.owner_id == st.owner_id
    assert report["added"]["page"] == 3 and report["added"]["revision"] == 4
    read = other.read_pages([ids["a"]["page_id"]], projections=["manifest", "payload", "history", "relations"])
    original = st.read_pages([ids["a"]["page_id"]], projections=["manifest", "payload", "history", "relations"])
    assert read == original
    assert other.search_pages("紧致性", filters={"lifecycle_status": ["superseded"]}, all_revisions=True)["hits"]
    other.export(tmp_path / "two.jsonl")
    one, two = _lines(tmp_path / "one.jsonl"), _lines(tmp_path / "two.jsonl")
    assert one[1:-1] == two[1:-1]
    # Idempotent: importing again adds nothing.
    assert other.import_export(tmp_path / "one.jsonl")["added"] == {}


def test_import_refuses_a_tampered_or_truncated_file_and_writes_nothing(tmp_path):
    st = Store.open(tmp_path / "s.db")
    _fill(st)
    st.export(tmp_path / "e.jsonl")
    lines = _lines(tmp_path / "e.jsonl")
    tampered = [line.replace("Revised text", "Forged text") for line in lines]
    (tmp_path / "bad.jsonl").write_text("\n".join(tampered) + "\n", encoding="utf-8")
    (tmp_path / "short.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    target = Store.open(tmp_path / "t.db")
    for name in ("bad.jsonl", "short.jsonl"):
        with pytest.raises(Invalid):
            target.import_export(tmp_path / name)
    assert target.list_scopes()["scopes"] == []


def test_import_of_another_owner_into_a_non_empty_store_is_a_conflict(tmp_path):
    st = Store.open(tmp_path / "s.db")
    _fill(st)
    st.export(tmp_path / "e.jsonl")
    mine = Store.open(tmp_path / "mine.db")
    mine.write_page("project:mine", content="already here")
    with pytest.raises(Conflict):
        mine.import_export(tmp_path / "e.jsonl")
    assert len(mine.search_pages("")["hits"]) == 1


def test_scoped_export_holds_only_that_scope(tmp_path):
    st = Store.open(tmp_path / "s.db")
    _fill(st)
    st.export(tmp_path / "alpha.jsonl", scopes=["project:alpha"])
    objs = [json.loads(l) for l in _lines(tmp_path / "alpha.jsonl")[1:-1]]
    assert {o["namespace"] for o in objs if o["kind"] in ("scope", "page", "revision")} == {"project:alpha"}
    assert not any(o["kind"] == "relation" and o["relation_type"] == "supersedes" for o in objs)
    with pytest.raises(Invalid):
        st.export(tmp_path / "x.jsonl", scopes=["project:nope"])


def test_model_clients_cannot_export(tmp_path):
    st = Store.open(tmp_path / "s.db")
    _fill(st)
    model = st.with_session(AccessSession.model_client("m", {"*": {"search", "read", "export"}}))
    with pytest.raises(Forbidden):
        model.export(tmp_path / "e.jsonl")
    assert not (tmp_path / "e.jsonl").exists()


def test_plan_delete_names_export_files_holding_the_page(tmp_path):
    st = Store.open(tmp_path / "s.db")
    ids = _fill(st)
    st.export(tmp_path / "all.jsonl")
    st.export(tmp_path / "me.jsonl", scopes=["user:me"])
    plan = st.plan_delete(ids["a"]["page_id"])
    assert [os.path.basename(f["path"]) for f in plan["export_files"]] == ["all.jsonl"]


def test_markdown_export_writes_a_folder_per_scope(tmp_path):
    st = Store.open(tmp_path / "s.db")
    _fill(st)
    result = st.export(tmp_path / "md", format="markdown")
    folders = sorted(p.name for p in (tmp_path / "md").iterdir())
    assert folders == ["project_alpha", "user_me"]
    assert result["files"] == 3
    text = next((tmp_path / "md" / "project_alpha").glob("Alpha--*.md")).read_text(encoding="utf-8")
    assert text.startswith("---\npage_id: ") and "Revised text." in text


@pytest.mark.slow
def test_export_memory_does_not_grow_with_the_store(tmp_path):
    """Export streams: peak memory for 20,000 revisions stays close to that for 2,000."""
    script = textwrap.dedent(
        """
        import resource, sys
        from store import Store
        st = Store.open(sys.argv[1])
        st.write_pages_bulk(({"content": "word " * 200 + str(i)} for i in range(int(sys.argv[2]))), "bulk:x")
        st._db.execute_sql("PRAGMA cache_size=-2000")  # keep SQLite's own page cache out of the measure
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        st.export(sys.argv[1] + ".jsonl")
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
        """
    )
    growth = []
    for n in (2000, 20000):
        out = subprocess.run([sys.executable, "-c", script, str(tmp_path / f"m{n}.db"), str(n)],
                             capture_output=True, text=True, check=True)
        growth.append(int(out.stdout.strip()))
    # The export file of 20,000 pages is ~20 MB; a non-streaming export would grow by that much.
    assert growth[1] < growth[0] + 4_000, growth
