"""Bad input over MCP (issue 12 items 23, 25): every call gets an answer that starts with its contract code."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from test_mcp_server import WRITE_GRANT, connect, fails, run, seeded  # noqa: E402,F401

EDGES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]


def test_edge_timestamps_are_invalid_over_mcp(seeded):  # noqa: F811
    page = seeded["a1"]["page_id"]

    async def scenario():
        texts = []
        async with connect(seeded["db"], WRITE_GRANT, toolset="write") as s:
            for edge in EDGES:
                texts.append(await fails(s, "search_pages", {"query": "compactness", "created_after": edge}))
                texts.append(await fails(s, "ingest_event", {"namespace": "project:a", "idempotency_key": "k-" + edge,
                                                             "content": "event", "observed_at": edge}))
                texts.append(await fails(s, "suppress_pages", {"page_ids": [page], "expires_at": edge}))
        return texts

    for text in run(scenario):
        assert text.startswith("invalid: ") and "outside the years 1 to 9999" in text, text


def test_a_long_query_over_mcp_is_refused_as_limit(seeded):  # noqa: F811
    async def scenario():
        async with connect(seeded["db"], WRITE_GRANT, toolset="write") as s:
            return await fails(s, "search_pages", {"query": "compactness " * 100_000})

    text = run(scenario)
    assert text.startswith("limit: ") and len(text) < 300


def test_wrongly_typed_arguments_are_one_invalid_line(seeded):  # noqa: F811
    async def scenario():
        async with connect(seeded["db"], WRITE_GRANT, toolset="write") as s:
            return [await fails(s, "search_pages", {"query": "x", "limit": "many", "scopes": 5}),
                    await fails(s, "read_pages", {"ids": "pg_not_a_list", "max_chars": {"a": 1}})]

    for text in run(scenario):
        assert text.startswith("invalid: ") and "\n" not in text and "pydantic" not in text, text
    first = run(scenario)[0]
    assert "limit:" in first and "scopes:" in first


def _raw_session(db, lines: list[str]) -> dict:
    """Drive `pcp mcp` with raw JSON-RPC lines (the SDK client cannot send a lone surrogate); answers by id."""
    import json
    import subprocess
    import sys
    import threading
    from queue import Empty, Queue

    from test_mcp_server import CLIENT, REPO

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    proc = subprocess.Popen([sys.executable, "-m", "pcp_tui.cli", "--db", str(db), "mcp", "--client-id", CLIENT,
                             "--grant", WRITE_GRANT, "--toolset", "write"], cwd=str(REPO),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    answers: dict = {}
    try:
        proc.stdin.write((json.dumps(init) + "\n").encode())
        proc.stdin.flush()
        answers[1] = json.loads(proc.stdout.readline())
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for line in lines:
            proc.stdin.write(line.encode("ascii") + b"\n")
        proc.stdin.flush()
        wanted = {json.loads(line)["id"] for line in lines if '"id"' in line}
        queue: Queue = Queue()
        threading.Thread(target=lambda: [queue.put(raw) for raw in iter(proc.stdout.readline, b"")], daemon=True).start()
        while not wanted <= set(answers):
            try:
                message = json.loads(queue.get(timeout=30))  # an unanswered request ends the wait
            except Empty:
                break
            answers[message.get("id")] = message
    finally:
        proc.stdin.close()
        proc.wait(30)
    return answers


def test_a_request_with_a_lone_surrogate_gets_an_answer(seeded):  # noqa: F811
    lines = [
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_pages","arguments":{"query":"a\\ud800"}}}',
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_page",'
        '"arguments":{"namespace":"project:a","content":"x\\udc00y"}}}',
        '{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"\\ud800"}}',
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search_pages","arguments":{"query":"compactness"}}}',
    ]
    answers = _raw_session(seeded["db"], lines)
    for ident in (2, 3):
        result = answers[ident]["result"]
        assert result["isError"] is True and result["content"][0]["text"].startswith("invalid: ")
    assert answers[4]["error"]["message"].startswith("invalid: ")
    assert "isError" not in answers[5]["result"] or answers[5]["result"]["isError"] is False
    import store
    from test_mcp_server import CLIENT

    with store.Store.open(seeded["db"]) as st:  # refused before the store, audited like a store failure
        events = st.audit_log(principal=CLIENT, decision="failed", limit=50)["events"]
    assert {(e["operation"], e["error_code"]) for e in events} >= {("search_pages", "invalid"), ("write_page", "invalid")}
