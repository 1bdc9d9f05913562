"""pcp-core.md §3 errors and §8 limits; Store.open failures."""

from __future__ import annotations

import os

import pytest

import pcpstore_helpers as h
from pcpstore_helpers import raises_code


def test_error_classes():
    import store

    pairs = {"NotFound": "not_found", "Forbidden": "forbidden", "Conflict": "conflict", "Invalid": "invalid",
             "Cycle": "cycle", "LimitExceeded": "limit", "Unsupported": "unsupported"}
    for name in pairs:
        cls = getattr(store, name)
        assert issubclass(cls, store.PcpError)
        assert issubclass(store.PcpError, Exception)


def test_raised_errors_use_their_subclass(store):
    import store as S

    p = h.write(store, "project:e", "x")
    with pytest.raises(S.NotFound):
        store.read_pages(["pg_01ARZ3NDEKTSV4RRFFQ69G5FAV"])
    store.revise_page(p["page_id"], p["revision_id"], content="y")
    with pytest.raises(S.Conflict):
        store.revise_page(p["page_id"], p["revision_id"], content="z")
    with pytest.raises(S.Invalid):
        store.write_page("project:e", content="x", observed_at="nope")
    with pytest.raises(S.Unsupported):
        store.search_pages("x", mode="vector")


# --------------------------------------------------------------------------- limits


def test_payload_at_limit_is_accepted_and_above_is_limit(store, db_path):
    big = "word " * 200_000
    assert len(big) == 1_000_000
    ok = h.write(store, "project:e", big)
    assert ok["created"] is True
    before = h.counts(db_path)
    with raises_code("limit") as box:
        h.write(store, "project:e", big + "x")
    assert "1000000" in box.value.message.replace(",", "").replace("_", "").replace(" ", "")
    from store import LimitExceeded

    assert isinstance(box.value, LimitExceeded)
    assert h.counts(db_path) == before
    with raises_code("limit"):
        store.revise_page(ok["page_id"], ok["revision_id"], content="b" * 1_000_001)
    with raises_code("limit"):
        store.ingest_event({"content": "c" * 1_000_001}, "project:e", "big")
    assert h.counts(db_path) == before


def test_namespace_length(store, db_path):
    ns200 = "project:" + "n" * 192
    assert len(ns200) == 200
    h.write(store, ns200, "x")
    before = h.counts(db_path)
    for bad in ("project:" + "n" * 193, ""):
        with raises_code("invalid") as box:
            h.write(store, bad, "x")
        if bad:
            assert "200" in box.value.message
    assert h.counts(db_path) == before


def test_relation_type_length(store, db_path):
    a = h.write(store, "project:e", "a")
    b = h.write(store, "project:e", "b")
    store.link_pages(a["page_id"], "r" * 80, b["page_id"])
    before = h.counts(db_path)
    with raises_code("invalid"):
        store.link_pages(a["page_id"], "r" * 81, b["page_id"])
    with raises_code("invalid"):
        store.write_page("project:e", content="c", relations=[{"relation_type": "r" * 81, "to": a["page_id"]}])
    assert h.counts(db_path) == before


def test_provenance_inputs_limit(store, db_path):
    res = [h.write(store, "project:inputs", f"input {i}") for i in range(257)]
    revs = [r["revision_id"] for r in res]
    before = h.counts(db_path)
    with raises_code("limit") as box:
        h.write(store, "project:e", "too many inputs",
                provenance=[{"operation": "derive", "input_revision_ids": revs}])
    assert "256" in box.value.message
    assert h.counts(db_path) == before
    ok = h.write(store, "project:e", "just enough inputs",
                 provenance=[{"operation": "derive", "input_revision_ids": revs[:256]}])
    ev = [e for e in h.env(store, ok["page_id"])["provenance"] if e["operation"] == "derive"][0]
    assert ev["input_revision_ids"] == revs[:256]


@pytest.mark.parametrize("ts", ["yesterday", "2026-13-45T00:00:00.000Z", "2026-01-01 00:00", "12345"])
def test_bad_timestamp_is_invalid(store, db_path, ts):
    before = h.counts(db_path)
    with raises_code("invalid"):
        h.write(store, "project:e", "x", observed_at=ts)
    with raises_code("invalid"):
        store.ingest_event({"content": "x", "observed_at": ts}, "project:e", "ts-key")
    assert h.counts(db_path) == before


def test_other_offsets_are_normalized(store):
    r = h.write(store, "project:e", "x", observed_at="2026-01-01T02:00:00.000+02:00")
    assert h.env(store, r["page_id"])["observed_at"] == "2026-01-01T00:00:00.000Z"


@pytest.mark.parametrize("facets", ["not json {", ["a", "list"], 42, {"title": {1, 2}}, {"x": object()}])
def test_bad_facets_are_invalid(store, db_path, facets):
    before = h.counts(db_path)
    with raises_code("invalid"):
        h.write(store, "project:e", "x", facets=facets)
    assert h.counts(db_path) == before


def test_bad_source_refs_are_invalid(store, db_path):
    before = h.counts(db_path)
    with raises_code("invalid"):
        store.write_page("project:e", source_refs=[{"locator": "no uri"}])
    with raises_code("invalid"):
        store.write_page("project:e", source_refs=[{"uri": ""}])
    assert h.counts(db_path) == before


def test_error_messages_are_one_line(store):
    p = h.write(store, "project:e", "x")
    calls = [
        lambda: store.read_pages(["pg_01ARZ3NDEKTSV4RRFFQ69G5FAV"]),
        lambda: h.write(store, "project:e", "x", observed_at="nope"),
        lambda: store.search_pages("x", mode="vector"),
        lambda: store.link_pages(p["page_id"], "derived_from", p["page_id"]),
    ]
    from store import PcpError

    for call in calls:
        with pytest.raises(PcpError) as info:
            call()
        assert "\n" not in info.value.message
        assert info.value.code in h.ERROR_CODES
        assert info.value.message in str(info.value) or info.value.code in str(info.value)


# --------------------------------------------------------------------------- Store.open


def _open_error(path):
    from store import PcpError, Store

    try:
        st = Store.open(path)
    except PcpError as exc:
        return exc
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"Store.open raised {type(exc).__name__} instead of PcpError: {exc}")
    st.close()
    pytest.fail("Store.open succeeded")


def test_open_directory_cannot_be_created(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a regular file")
    exc = _open_error(blocker / "sub" / "s.db")
    assert exc.code in h.ERROR_CODES and exc.code == "invalid"
    assert "\n" not in exc.message and exc.message.strip()


def test_open_corrupt_file(tmp_path):
    bad = tmp_path / "corrupt.db"
    bad.write_bytes(os.urandom(8192))
    exc = _open_error(bad)
    assert exc.code == "invalid"
    assert "\n" not in exc.message and exc.message.strip()


def test_open_text_file(tmp_path):
    bad = tmp_path / "notes.db"
    bad.write_text("just some notes, not a database\n" * 100)
    exc = _open_error(bad)
    assert exc.code == "invalid"
    assert "\n" not in exc.message


def test_open_directory_path(tmp_path):
    d = tmp_path / "adir"
    d.mkdir()
    exc = _open_error(d)
    assert exc.code == "invalid"
    assert "\n" not in exc.message


def test_open_read_only_file(tmp_path):
    from store import Store

    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("running as root: file permissions are not enforced, a read-only file cannot be made")
    path = tmp_path / "ro.db"
    st = Store.open(path)
    h.write(st, "project:ro", "x")
    st.close()
    for suffix in ("-wal", "-shm"):
        p = tmp_path / ("ro.db" + suffix)
        if p.exists():
            p.unlink()
    os.chmod(path, 0o444)
    os.chmod(tmp_path, 0o555)
    try:
        exc = _open_error(path)
        assert exc.code == "invalid"
        assert "\n" not in exc.message
    finally:
        os.chmod(tmp_path, 0o755)
        os.chmod(path, 0o644)


def test_open_default_path_uses_env(tmp_path, monkeypatch):
    from store import Store

    target = tmp_path / "env" / "ctx.db"
    monkeypatch.setenv("PCP_DB", str(target))
    st = Store.open(None)
    try:
        assert str(st.path) == str(target)
        assert target.exists()
    finally:
        st.close()
