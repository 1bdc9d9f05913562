"""What capture takes out of text before it reaches the store: secrets (the bundle warnings' patterns) and pasted
bundles. Invariants over the patterns, not one example each."""

from __future__ import annotations

import pytest

from store.bundle import redact_secrets, secret_kinds
from store.capture import strip_pasted_bundles

SECRETS = [
    "AKIA" + "QWERTYUIOPASDFGH",
    "sk-" + "proj-" + "a1b2c3d4e5f6g7h8i9j0k1l2m3",
    "ghp_" + "a" * 36,
    "github_pat_" + "B" * 30,
    "xoxb-" + "1234567890-abcdefghij",
    "AIza" + "S" * 35,
    "sk_live_" + "0123456789abcdefghijKLMN",
    "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + ".c2lnbmF0dXJlLXBhcnQ",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
]
ASSIGNMENTS = ['api_key = "Zx81Lmq0Rw"', "PASSWORD: 'c0rrect-horse'", "client_secret=ab12cd34ef56gh78"]
HARMLESS = ["the token: ${TOKEN}", "password: see_the_vault", "a plain sentence about keys and secrets",
            "sk-short", "api_key = <your key here>"]


@pytest.mark.parametrize("secret", SECRETS)
@pytest.mark.parametrize("around", ["{}", "before {} after", "line one\n{}\nline three"])
def test_every_pattern_the_bundle_warns_about_is_redacted_and_nothing_is_left_to_warn_about(secret, around):
    text = around.format(secret)
    assert secret_kinds(text)  # the bundle warnings would flag it
    redacted, kinds = redact_secrets(text)
    assert kinds == secret_kinds(text)
    assert secret_kinds(redacted) == [] and secret not in redacted and "[redacted: " in redacted
    for part in around.split("{}"):
        assert part in redacted  # the words around it stay


@pytest.mark.parametrize("text", ASSIGNMENTS)
def test_a_credential_assignment_keeps_its_name_and_loses_its_value(text):
    redacted, kinds = redact_secrets(text)
    name = text.split("=")[0].split(":")[0].strip()
    value = text.replace(name, "", 1).strip(" =:'\"")
    assert kinds and secret_kinds(redacted) == [] and value not in redacted and redacted.startswith(name)


@pytest.mark.parametrize("text", HARMLESS)
def test_text_the_warnings_leave_alone_is_left_alone(text):
    assert secret_kinds(text) == []
    assert redact_secrets(text) == (text, [])


def test_a_pasted_bundle_is_replaced_by_one_line_and_the_words_around_it_stay(store):
    page = store.write_page("project:a", content="BODY OF THE HANDED PAGE", facets={"title": "t"})
    bundle = store.bundle([page["page_id"]])["text"]
    text = f"Look at this:\n{bundle}\nand this too:\n{bundle}thanks"
    cleaned, count = strip_pasted_bundles(text)
    assert count == 2
    assert "BODY OF THE HANDED PAGE" not in cleaned and "pcp-bundle v1 sha256" not in cleaned
    assert cleaned.startswith("Look at this:\n") and "and this too:\n" in cleaned and cleaned.endswith("thanks")
    assert cleaned.count(bundle.rstrip().rsplit(" ", 1)[-1]) == 2  # each named by its digest

    assert strip_pasted_bundles("no bundle here, just pcp-bundle v1 talk") == ("no bundle here, just pcp-bundle v1 talk", 0)


def test_a_pasted_continuation_goes_from_its_first_line_to_its_trailer():
    old, new = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    continuation = (f"continues pcp-bundle {old}\n\nKeep everything you already have.\n\n"
                    f"## [3] \"new page\" | page x\n```\nTHE NEW ENTRY\n```\n\npcp-bundle v1 {new} from {old}\n")
    cleaned, count = strip_pasted_bundles("before\n" + continuation + "after")
    assert count == 1 and "THE NEW ENTRY" not in cleaned and "Keep everything" not in cleaned
    assert cleaned.startswith("before\n") and cleaned.endswith("after") and new in cleaned


def _with_secret(line: str, secret: str) -> str:
    """A transcript line with `secret` added to every text a person or the model wrote in it (other lines as they are)."""
    import json

    try:
        record = json.loads(line)
    except ValueError:
        return line
    message = record.get("message") if isinstance(record, dict) else None
    if not isinstance(message, dict):
        return line
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = f"{content} (deploy key {secret})"
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                block["text"] = f"{block['text']} (deploy key {secret})"
    return json.dumps(record)


@pytest.mark.parametrize("helper", ["0", "1"])
def test_a_capture_leaves_no_secret_in_any_byte_of_the_store_whatever_path_lands_its_pages(tmp_path, monkeypatch,
                                                                                         helper):
    """Every real Claude Code transcript with a secret in every message, captured when half written (its sessions
    land in one pass) and again when whole (their pages met in the store: landed one by one, revised): the secret
    is in no byte of the store's files. With the import's helper asked for (=1, any size), none is started: it
    would plan the pages uncleaned, in another process. (The cleaning wrapped `upsert`, which the one-pass and
    planned paths never call: a capture stored the secret.)"""
    import shutil
    from pathlib import Path

    from store import Store, import_helper
    from store.capture import capture_session

    secret = "AKIA" + "ZXCVBNMASDFGHJKL"
    real = Path(__file__).resolve().parents[1] / "data" / "agents" / "claude-code"
    whole, half = tmp_path / "whole", tmp_path / "half"
    shutil.copytree(real, whole, ignore=shutil.ignore_patterns("LICENSE", "*.md"))
    files = sorted(whole.rglob("*.jsonl"))
    assert files
    for path in files:
        lines = [_with_secret(line, secret) for line in path.read_text(encoding="utf-8").splitlines()]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cut = half / path.relative_to(whole)
        cut.parent.mkdir(parents=True, exist_ok=True)
        cut.write_text("\n".join(lines[:max(1, len(lines) // 2)]) + "\n", encoding="utf-8")
    monkeypatch.setattr(import_helper, "HELPER_FROM_CHARS", 0)
    monkeypatch.setenv(import_helper.ENV, helper)
    started: list[object] = []
    monkeypatch.setattr(import_helper.ImportHelper, "__init__",
                        lambda self, *a: started.append(a) or (_ for _ in ()).throw(OSError("not in a capture")))
    db = tmp_path / "store.db"
    with Store.open(db) as st:
        first = capture_session(st, "claude-code", half)
        second = capture_session(st, "claude-code", whole)
        assert first["created"] and second["created"] + second["revised"]
        assert first["redacted"] and second["redacted"]
        st._db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    assert started == []
    for path in tmp_path.glob("store.db*"):
        data = path.read_bytes()
        assert secret.encode() not in data and secret.lower().encode() not in data, path.name
