"""The Markdown importer on the sample Obsidian vault (tests/data/exports/vault-..., vendored) and variants of it."""

from __future__ import annotations

import shutil

import pytest

import import_helpers as h
from store import Invalid
from store.adapters import import_markdown
from store.adapters.frontmatter import FrontMatterError, parse_front_matter, split_front_matter
from store.adapters.markdown import inline_tags, mask_code, wikilinks

NS = f"notes:{h.VAULT_NAME}"
NOTES = ["Isolated note.md", "Sussudio.md", "lipsum/Alimenta.md", "lipsum/Brevissimus moenia.md",
         "lipsum/Causam mihi.md", "lipsum/Isolated note.md", "lipsum/Ne fuit.md", "lipsum/Vulnera ubera.md"]
CANVASES = ["Crazy wall 2.canvas", "Crazy wall.canvas"]

UNRESOLVED = {
    "Isolated note.md": None,
    "Sussudio.md": ["American Psycho (film)"],
    "lipsum/Alimenta.md": ["Manus", "Bacchus", "Amor", "Virtus", "Tarpeia", "Tydides", "Vita"],
    "lipsum/Brevissimus moenia.md": ["Tarpeia", "Caelum", "Vita"],
    "lipsum/Causam mihi.md": ["Dives", "Manus", "Aetna"],
    "lipsum/Isolated note.md": None,
    "lipsum/Ne fuit.md": ["Aras Teucras", "Manus", "Bacchus", "Amor", "Caelum"],
    "lipsum/Vulnera ubera.md": ["Caelum", "Tarpeia", "Vita"],
    "Crazy wall.canvas": ["Prince", "1999"],
    "Crazy wall 2.canvas": None,
}

# (relation type, from, to) between pages of the vault.
RELATIONS = {
    ("links_to", "lipsum/Alimenta.md", "Crazy wall 2.canvas"),  # [[Crazy wall 2.canvas]]
    ("links_to", "lipsum/Alimenta.md", "lipsum/Ne fuit.md"),  # [[Ne fuit#Suisque ...|Fuit]]: heading + alias
    ("links_to", "lipsum/Alimenta.md", "lipsum/Brevissimus moenia.md"),  # [[Brevissimus moenia | moenia]]
    ("links_to", "lipsum/Causam mihi.md", "lipsum/Ne fuit.md"),  # [[Ne fuit|fuit]]
    ("links_to", "lipsum/Ne fuit.md", "lipsum/Causam mihi.md"),  # [[Causam mihi | causam parentem]]
    ("links_to", "Crazy wall.canvas", "Sussudio.md"),  # a text card's [[Sussudio]]
    ("uses", "Crazy wall.canvas", "Isolated note.md"),  # file cards
    ("uses", "Crazy wall.canvas", "Sussudio.md"),
    ("uses", "Crazy wall.canvas", "Crazy wall 2.canvas"),
}


def by_path(store, scopes=(NS,)) -> dict[str, dict]:
    return {res["revision"]["facets"]["path"]: res for res in h.pages(store, scopes)}


def relations(results: dict[str, dict]) -> set[tuple[str, str, str]]:
    path_of = {res["revision"]["page_id"]: p for p, res in results.items()}
    return {(r["relation_type"], p, path_of[r["to_page_id"]])
            for p, res in results.items() for r in res["relations"]["outgoing"]}


@pytest.fixture
def vault(exports):
    return h.VAULT


@pytest.fixture
def vault_copy(vault, tmp_path):
    dest = tmp_path / h.VAULT_NAME
    shutil.copytree(vault, dest)
    return dest


def test_vault_pages_titles_and_sources(store, vault):
    report = import_markdown(store, vault)
    assert report.source == "markdown"
    assert (report.notes, report.created, report.unchanged, report.revised) == (10, 10, 0, 0)
    assert report.relations == len(RELATIONS) == 9
    assert report.skipped == []
    assert h.page_count(store) == 10

    scopes = h.scopes(store)
    assert set(scopes) == {"import:markdown", NS}
    assert scopes[NS]["parent"] == "import:markdown"
    assert scopes[NS]["display_name"] == h.VAULT_NAME
    assert scopes[NS]["page_count"] == 10

    pages = by_path(store)
    assert sorted(pages) == sorted(NOTES + CANVASES)
    for rel, res in pages.items():
        env = res["revision"]
        media = "application/json" if rel.endswith(".canvas") else "text/markdown"
        assert env["payload"]["media_type"] == media
        assert env["namespace"] == NS
        ref = env["source_refs"][0]
        assert ref["uri"] == (vault / rel).resolve().as_uri()
        assert ref["uri"].startswith("file:///")
        assert ref["locator"] == {"vault": h.VAULT_NAME, "path": rel}
        assert ref["media_type"] == media
        assert env["created_by"] == {"actor_type": "tool", "actor_id": "pcp-import-markdown"}
        assert [p["operation"] for p in env["provenance"]] == ["import"]
        assert env["observed_at"] is not None
        assert store.source_page_id(f"markdown:{h.VAULT_NAME}:{rel}") == env["page_id"]
        assert env["facets"].get("unresolved_links") == UNRESOLVED[rel], rel

    titles = {rel: res["revision"]["facets"]["title"] for rel, res in pages.items()}
    assert titles == {"Isolated note.md": "Isolated note", "Sussudio.md": "Sussudio", "lipsum/Alimenta.md": "Alimenta",
                      "lipsum/Brevissimus moenia.md": "Brevissimus moenia", "lipsum/Causam mihi.md": "Causam mihi",
                      "lipsum/Isolated note.md": "Isolated note", "lipsum/Ne fuit.md": "Ne fuit",
                      "lipsum/Vulnera ubera.md": "Vulnera ubera", "Crazy wall.canvas": "Crazy wall",
                      "Crazy wall 2.canvas": "Crazy wall 2"}
    # The payload is the note's text as it is in the file.
    body = h.read(store, [pages["Sussudio.md"]["revision"]["page_id"]], ("payload",))[0]["revision"]["payload"]["content"]
    assert body == (vault / "Sussudio.md").read_text(encoding="utf-8")


def test_vault_front_matter_and_tags(store, vault):
    import_markdown(store, vault)
    pages = by_path(store)
    sussudio = pages["Sussudio.md"]["revision"]["facets"]
    assert sussudio["front_matter"] == {
        "title": "Sussudio", "artist": "Phil Collins", "category": "music", "year": 1985,
        "url": "https://www.discogs.com/Phil-Collins-Sussudio/master/106239",
        "references": ["[[American Psycho (film)]]", "Polka Party!"],
        "chart_peaks": [{"US": 1}, {"UK": 12}],
    }
    # Inline tags only: not `(#y1985 )`, not `#1985`, not `\#hash...`, not inside a code block, not headings.
    assert sussudio["keywords"] == ["y1982", "y_1982", "y-1982", "y1982/sep", "y2000/party-over/oops/out-of-time"]
    causam = pages["lipsum/Causam mihi.md"]["revision"]["facets"]
    assert causam["front_matter"] == {"title": "Causam mihi", "author": "Ovid", "category": "literature", "year": 8,
                                      "language": "la", "description": "{{description}}"}
    assert "front_matter_raw" not in causam
    for rel in ("Isolated note.md", "lipsum/Alimenta.md", "lipsum/Ne fuit.md"):
        facets = pages[rel]["revision"]["facets"]
        assert "front_matter" not in facets and "keywords" not in facets
    # Facets are searchable: a tag and a front matter value find their note.
    sid = pages["Sussudio.md"]["revision"]["page_id"]
    assert sid in {hit["page_id"] for hit in h.hits(store, [NS], "Phil Collins", "text")}


def test_vault_links_embeds_and_unresolved(store, vault):
    import_markdown(store, vault)
    pages = by_path(store, (NS,))
    assert relations(pages) == RELATIONS
    # Embeds of media that are not in the vault: source refs by name, never relations.
    refs = pages["Sussudio.md"]["revision"]["source_refs"]
    assert [(r["uri"], r["media_type"]) for r in refs[1:]] == [("vault:Sussudio.mp3", "audio/mpeg"),
                                                               ("vault:1999.flac", "audio/flac")]
    assert all(r["locator"]["missing"] for r in refs[1:])
    assert h.outgoing(pages["Sussudio.md"]) == []
    # Links are idempotent per pair: [[Bacchus]] three times is still one unresolved name.
    assert pages["lipsum/Alimenta.md"]["revision"]["facets"]["unresolved_links"].count("Bacchus") == 1
    canvas = pages["Crazy wall.canvas"]["revision"]
    assert canvas["facets"]["kind"] == "canvas"
    assert pages["lipsum/Isolated note.md"]["relations"] == {"outgoing": [], "incoming": []}


def test_reimport_adds_nothing_and_changed_note_is_a_revision(store, vault_copy):
    first = import_markdown(store, vault_copy)
    again = import_markdown(store, vault_copy)
    assert (again.created, again.unchanged, again.revised, again.relations) == (0, 10, 0, 0)
    assert h.page_count(store) == 10

    note = vault_copy / "lipsum" / "Causam mihi.md"
    page_id = store.source_page_id(f"markdown:{h.VAULT_NAME}:lipsum/Causam mihi.md")
    note.write_text(note.read_text(encoding="utf-8") + "\nA new line with [[Alimenta]] and #novum.\n", encoding="utf-8")
    changed = import_markdown(store, vault_copy)
    assert (changed.created, changed.unchanged, changed.revised) == (0, 9, 1)
    assert changed.relations == 1  # the new link
    assert store.source_page_id(f"markdown:{h.VAULT_NAME}:lipsum/Causam mihi.md") == page_id
    res = store.read_pages([page_id], projections=["manifest", "payload", "history", "relations"])["results"][0]
    assert len(res["history"]) == 2
    assert "A new line" in res["revision"]["payload"]["content"]
    assert res["revision"]["facets"]["keywords"] == ["novum"]
    alimenta = store.source_page_id(f"markdown:{h.VAULT_NAME}:lipsum/Alimenta.md")
    assert alimenta in h.outgoing(res, "links_to")
    assert h.page_count(store) == 10 and first.created == 10


def test_namespace_puts_everything_in_one_scope(store, vault):
    calls = []
    report = import_markdown(store, vault, namespace="project:notes", progress=lambda *a: calls.append(a))
    assert report.created == 10 and report.relations == 9
    assert [c for c in calls if c[2] == "notes"] == [(n, 10, "notes") for n in range(1, 11)]
    assert [c for c in calls if c[2] == "links"] == [(n, 4, "links") for n in range(1, 5)]
    assert set(h.scopes(store)) == {"project:notes"}
    assert len(by_path(store, ("project:notes",))) == 10


def test_same_name_notes_resolve_like_obsidian(store, vault_copy):
    (vault_copy / "lipsum" / "Linker.md").write_text("In the same folder: [[Isolated note]].\n", encoding="utf-8")
    (vault_copy / "Top linker.md").write_text("Top: [[isolated NOTE|the top one]].\n", encoding="utf-8")
    far = vault_copy / "other" / "deep"
    far.mkdir(parents=True)
    (far / "Far.md").write_text(
        "Shortest path wins: [[Isolated note]]. By path: [[lipsum/Isolated note]].\n"
        "An embedded note: ![[Sussudio]]. A picture: ![[pic.png]]. A markdown link: [moenia](../../lipsum/Brevissimus%20moenia.md).\n",
        encoding="utf-8")
    (far / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (vault_copy / "unused.pdf").write_bytes(b"%PDF-1.4")
    (vault_copy / ".obsidian").mkdir()
    (vault_copy / ".obsidian" / "app.json").write_text("{}")

    report = import_markdown(store, vault_copy)
    assert report.notes == 13 and report.created == 13
    assert sorted((s["item"], s["reason"]) for s in report.skipped) == [
        ("vault:.obsidian/", "hidden folder (app settings, trash or version control), not notes"),
        ("vault:unused.pdf", "not a note; no note links to or embeds it"),
    ]
    pages = by_path(store)
    got = relations(pages) - RELATIONS
    assert got == {
        ("links_to", "lipsum/Linker.md", "lipsum/Isolated note.md"),
        ("links_to", "Top linker.md", "Isolated note.md"),
        ("links_to", "other/deep/Far.md", "Isolated note.md"),
        ("links_to", "other/deep/Far.md", "lipsum/Isolated note.md"),
        ("uses", "other/deep/Far.md", "Sussudio.md"),
        ("links_to", "other/deep/Far.md", "lipsum/Brevissimus moenia.md"),
    }
    far_refs = pages["other/deep/Far.md"]["revision"]["source_refs"]
    assert far_refs[1] == {"uri": "vault:other/deep/pic.png", "media_type": "image/png",
                           "locator": {"vault": h.VAULT_NAME, "path": "other/deep/pic.png"}}
    assert "unresolved_links" not in pages["other/deep/Far.md"]["revision"]["facets"]


def test_unparseable_front_matter_is_kept_raw(store, tmp_path):
    vault = tmp_path / "odd vault"
    vault.mkdir()
    raw = "title: Odd\nanchor: &a 1\nalias: *a"
    (vault / "Strange.md").write_text(f"---\n{raw}\n---\nBody with #tag and [[Missing]].\n", encoding="utf-8")
    (vault / "Plain.md").write_text("---\ntags: [one, '#two']\ntitle: \"Quoted: title\"\n---\ntext #three\n", encoding="utf-8")
    (vault / "Binary.md").write_bytes(b"\xff\xfe not utf-8")
    report = import_markdown(store, vault)
    assert report.created == 2
    assert [s["item"] for s in report.skipped] == ["Binary.md", "front matter of Strange.md"]
    assert report.skipped[0]["reason"].startswith("not UTF-8 text")
    assert "kept raw in facets front_matter_raw" in report.skipped[1]["reason"]
    pages = by_path(store, ("notes:odd vault",))
    odd = pages["Strange.md"]["revision"]["facets"]
    assert odd["front_matter_raw"] == raw
    assert "front_matter" not in odd
    assert odd["title"] == "Strange"  # no parsed title: the file name
    assert odd["keywords"] == ["tag"] and odd["unresolved_links"] == ["Missing"]
    plain = pages["Plain.md"]["revision"]["facets"]
    assert plain["title"] == "Quoted: title"
    assert plain["keywords"] == ["one", "two", "three"]


def test_not_a_folder(store, tmp_path):
    with pytest.raises(Invalid, match="no such folder"):
        import_markdown(store, tmp_path / "missing")
    note = tmp_path / "a.md"
    note.write_text("x")
    with pytest.raises(Invalid, match="not a folder"):
        import_markdown(store, note)


# ---------------------------------------------------------------------------------------------- the parsers


def test_front_matter_subset():
    assert split_front_matter("---\na: 1\n---\nbody") == ("a: 1", "body")
    assert split_front_matter("---\nnot closed\n") == (None, "---\nnot closed\n")
    assert parse_front_matter(
        "tags: [a, 'b c', \"d\"]  # comment\nempty:\nlist:\n  - x\n  - 2\nflag: true\nnone: ~\nzip: 007\n"
        "text: |\n  one\n  two\nnested:\n  key: value\n"
    ) == {"tags": ["a", "b c", "d"], "empty": None, "list": ["x", 2], "flag": True, "none": None, "zip": "007",
          "text": "one\ntwo\n", "nested": {"key": "value"}}
    assert parse_front_matter("related: [[Note]]\nboth: [[[A]], [[B|b]]]") == {"related": "[[Note]]",
                                                                            "both": ["[[A]]", "[[B|b]]"]}
    for bad in ("- a\n- b", "a: &x 1", "a: [open", "a:\n\tb: 1", "  a: 1\n b: 2", "just text"):
        with pytest.raises(FrontMatterError):
            parse_front_matter(bad)


def test_tags_and_wikilinks_parsers():
    text = "# Heading\n#tag1 and (#no) x#no #123 \\#no #a/b-c_d\n```\n#incode [[InCode]]\n```\n`#inline` [[ Note | alias ]]"
    masked = mask_code(text)
    assert inline_tags(masked) == ["tag1", "a/b-c_d"]
    assert wikilinks(masked) == [("links_to", "Note", "link")]
    assert wikilinks("![[a.png]] [[B#H|c]] [[#Self]] [[C\\|x]]") == [
        ("uses", "a.png", "embed"), ("links_to", "B", "link"), ("links_to", "C", "link")]


def test_front_matter_parser_never_raises_anything_else():
    import json
    import random

    rng = random.Random(7)
    pieces = list("ab: -[]{}'\"#|>\n\t,&*!\\~.01") + ["  ", "\n  ", "\n- ", ": ", "[[", "]]", "{{", "}}", "|\n"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        try:
            value = parse_front_matter(text)
        except FrontMatterError:
            continue
        assert isinstance(value, dict)
        json.dumps(value)
