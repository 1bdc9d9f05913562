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
