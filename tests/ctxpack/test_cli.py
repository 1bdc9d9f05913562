"""The `ctxpack` command line: in-process through ctxpack.cli.main(argv) -> int, plus a few
subprocess runs of `python -m ctxpack` for real stdin/stdout handling and exit codes."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxpack import ContextPack, ContextPackDelta, apply_delta

from ctxpack_helpers import ERROR_CODES, canon, fix_byte_count

cli = pytest.importorskip("ctxpack.cli")

REPO = Path(__file__).resolve().parents[2]

BASE_TEXT = "Meeting notes\nalice: hello, 紧致性 😀\nbob: a line with a CR\r inside\n"
TARGET_TEXT = BASE_TEXT + "carol: one more line\ndave: and another 🇫🇷\n"


class Result:
    def __init__(self, rc: int, out: bytes, err: str) -> None:
        self.rc, self.out, self.err = rc, out, err

    def __repr__(self) -> str:  # shown by pytest on failure
        return f"Result(rc={self.rc!r}, out={self.out[:300]!r}, err={self.err[:500]!r})"


@pytest.fixture
def run(monkeypatch):
    """Run ctxpack.cli.main(argv) in-process with byte-level stdin/stdout/stderr."""

    def _run(*argv: str, stdin: bytes = b"") -> Result:
        out_buf, err_buf = io.BytesIO(), io.BytesIO()
        fake_in = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        fake_out = io.TextIOWrapper(out_buf, encoding="utf-8", write_through=True)
        fake_err = io.TextIOWrapper(err_buf, encoding="utf-8", write_through=True)
        monkeypatch.setattr(sys, "stdin", fake_in)
        monkeypatch.setattr(sys, "stdout", fake_out)
        monkeypatch.setattr(sys, "stderr", fake_err)
        try:
            rc = cli.main(list(argv))
        except SystemExit as exc:  # tolerated, but main() should return the status
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        fake_out.flush()
        fake_err.flush()
        result = Result(rc, out_buf.getvalue(), err_buf.getvalue().decode("utf-8", "replace"))
        monkeypatch.undo()
        return result

    return _run


def _one_line_error(result: Result, code: str) -> None:
    assert result.rc == 1, result
    assert "Traceback" not in result.err, result
    lines = result.err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].strip(), result
    assert code in lines[0], result
    assert result.out == b"", result


@pytest.fixture
def files(tmp_path):
    base_txt = tmp_path / "body.txt"
    target_txt = tmp_path / "body2.txt"
    base_txt.write_bytes(BASE_TEXT.encode())
    target_txt.write_bytes(TARGET_TEXT.encode())
    return tmp_path, base_txt, target_txt


def test_main_returns_an_int(run):
    result = run("selftest")
    assert result.rc == 0, result
    assert isinstance(cli.main(["selftest"]), int)


# --- pack --------------------------------------------------------------------------


def test_pack_file_to_file(run, files):
    tmp, base_txt, _ = files
    out = tmp / "pack.json"
    result = run("pack", "--input", str(base_txt), "--out", str(out))
    assert result.rc == 0, result
    assert result.out == b""
    data = out.read_bytes()
    assert data == ContextPack.from_content(BASE_TEXT).to_bytes()
    assert not data.endswith(b"\n")
    assert ContextPack.from_bytes(data).content == BASE_TEXT


def test_pack_stdin_to_stdout_by_default(run):
    result = run("pack", stdin=TARGET_TEXT.encode())
    assert result.rc == 0, result
    assert result.out == ContextPack.from_content(TARGET_TEXT).to_bytes()


def test_pack_explicit_dashes(run):
    result = run("pack", "--input", "-", "--out", "-", stdin=b"hello\nworld\n")
    assert result.rc == 0, result
    assert result.out == (
        b'{"byte_count":180,"chunk_bytes":["aGVsbG8Kd29ybGQK"],'
        b'"digest":"sha256:6690723525f847908acf0ab86eb03517ca9831fa1883d450a63e2e33b366f4f2",'
        b'"schema":"ctxpack.pack.v1","total_bytes":12}'
    )


def test_pack_max_chunk_bytes(run):
    result = run("pack", "--max-chunk-bytes", "8", stdin="ab\n紧致性😀x紧致性😀x\nend".encode())
    assert result.rc == 0, result
    assert json.loads(result.out)["chunk_bytes"] == ["YWIK", "57Sn6Ie0", "5oCn8J+YgHg=", "57Sn6Ie0", "5oCn8J+YgHg=", "Cg==", "ZW5k"]
    assert result.out == ContextPack.from_content("ab\n紧致性😀x紧致性😀x\nend", max_chunk_bytes=8).to_bytes()


def test_pack_keeps_cr_and_crlf(run):
    text = "a\r\nb\rc\n\r\n\r"
    result = run("pack", "--max-chunk-bytes", "4", stdin=text.encode())
    assert result.rc == 0, result
    pack = ContextPack.from_bytes(result.out)
    assert pack.content == text
    assert b"".join(pack.chunks) == text.encode()


def test_pack_empty_input(run):
    result = run("pack", stdin=b"")
    assert result.rc == 0, result
    assert result.out == ContextPack.from_content("").to_bytes()


@pytest.mark.parametrize("bad", [b"\xff\xfe", b"ok\n\x80", "紧".encode()[:2], b"\xed\xa0\x80"])
def test_pack_invalid_utf8_input(run, bad):
    _one_line_error(run("pack", stdin=bad), "utf8")


def test_pack_utf8_bom_is_content(run):
    # strict UTF-8 decoding (not utf-8-sig): a BOM is a character of the text
    result = run("pack", stdin=b"\xef\xbb\xbfhi\n")
    assert result.rc == 0, result
    assert ContextPack.from_bytes(result.out).content == "\ufeffhi\n"


def test_pack_max_chunk_bytes_below_4(run):
    _one_line_error(run("pack", "--max-chunk-bytes", "3", stdin=b"hello\n"), "chunk_size")


# --- delta / apply ---------------------------------------------------------------------


@pytest.fixture
def packs(run, files):
    tmp, base_txt, target_txt = files
    base_json, target_json = tmp / "pack.json", tmp / "pack2.json"
    assert run("pack", "--input", str(base_txt), "--out", str(base_json), "--max-chunk-bytes", "16").rc == 0
    assert run("pack", "--input", str(target_txt), "--out", str(target_json), "--max-chunk-bytes", "16").rc == 0
    return tmp, base_txt, target_txt, base_json, target_json


def test_delta_and_apply_on_files(run, packs):
    tmp, base_txt, target_txt, base_json, target_json = packs
    delta_json, rebuilt_json = tmp / "delta.json", tmp / "rebuilt.json"
    result = run("delta", "--base", str(base_json), "--target", str(target_json), "--out", str(delta_json))
    assert result.rc == 0, result
    base = ContextPack.from_bytes(base_json.read_bytes())
    target = ContextPack.from_bytes(target_json.read_bytes())
    assert delta_json.read_bytes() == ContextPackDelta.between(base, target).to_bytes()
    assert ContextPackDelta.from_bytes(delta_json.read_bytes()).kept_chunks > 0

    result = run("apply", "--base", str(base_json), "--delta", str(delta_json), "--out", str(rebuilt_json))
    assert result.rc == 0, result
    assert rebuilt_json.read_bytes() == target_json.read_bytes()

    result = run("apply", "--base", str(base_json), "--delta", str(delta_json), "--out", str(rebuilt_json), "--check", str(target_txt))
    assert result.rc == 0, result
    assert rebuilt_json.read_bytes() == target_json.read_bytes()


def test_delta_and_apply_through_stdin_stdout(run, packs):
    tmp, base_txt, target_txt, base_json, target_json = packs
    result = run("delta", "--base", "-", "--target", str(target_json), stdin=base_json.read_bytes())
    assert result.rc == 0, result
    delta_bytes = result.out
    base = ContextPack.from_bytes(base_json.read_bytes())
    target = ContextPack.from_bytes(target_json.read_bytes())
    assert delta_bytes == ContextPackDelta.between(base, target).to_bytes()
    result = run("delta", "--base", str(base_json), "--target", "-", "--out", "-", stdin=target_json.read_bytes())
    assert result.out == delta_bytes

    result = run("apply", "--base", str(base_json), "--delta", "-", stdin=delta_bytes)
    assert result.rc == 0, result
    assert result.out == target_json.read_bytes()
    assert not result.out.endswith(b"\n")
    (tmp / "delta.json").write_bytes(delta_bytes)
    result = run("apply", "--base", "-", "--delta", str(tmp / "delta.json"), "--out", "-", "--check", str(target_txt), stdin=base_json.read_bytes())
    assert result.rc == 0, result
    assert result.out == target_json.read_bytes()


def test_apply_check_reads_stdin(run, packs):
    tmp, base_txt, target_txt, base_json, target_json = packs
    delta_json = tmp / "delta.json"
    assert run("delta", "--base", str(base_json), "--target", str(target_json), "--out", str(delta_json)).rc == 0
    out = tmp / "rebuilt.json"
    result = run("apply", "--base", str(base_json), "--delta", str(delta_json), "--out", str(out), "--check", "-", stdin=TARGET_TEXT.encode())
    assert result.rc == 0, result
    result = run("apply", "--base", str(base_json), "--delta", str(delta_json), "--out", str(out), "--check", "-", stdin=BASE_TEXT.encode())
    assert result.rc == 1, result


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(BASE_TEXT, id="base-text"),
        pytest.param(TARGET_TEXT + "\n", id="extra-newline"),
        pytest.param(TARGET_TEXT.replace("\r", ""), id="cr-dropped"),
        pytest.param(TARGET_TEXT.replace("\n", "\r\n"), id="crlf"),
        pytest.param("", id="empty"),
    ],
)
def test_apply_check_mismatch(run, packs, other):
    tmp, base_txt, target_txt, base_json, target_json = packs
    delta_json = tmp / "delta.json"
    assert run("delta", "--base", str(base_json), "--target", str(target_json), "--out", str(delta_json)).rc == 0
    check = tmp / "other.txt"
    check.write_bytes(other.encode())
    out = tmp / "rebuilt.json"
    result = run("apply", "--base", str(base_json), "--delta", str(delta_json), "--out", str(out), "--check", str(check))
    assert result.rc == 1, result
    assert not out.exists(), "a failed --check must not leave a usable-looking rebuilt pack behind"
    assert "Traceback" not in result.err
    assert result.err.strip(), result
    assert len(result.err.strip("\n").split("\n")) == 1, result


def test_apply_wrong_base(run, packs):
    tmp, base_txt, target_txt, base_json, target_json = packs
    delta_json = tmp / "delta.json"
    assert run("delta", "--base", str(base_json), "--target", str(target_json), "--out", str(delta_json)).rc == 0
    _one_line_error(run("apply", "--base", str(target_json), "--delta", str(delta_json), "--out", "-"), "base_mismatch")
    out = tmp / "rebuilt.json"
    _one_line_error(run("apply", "--base", str(target_json), "--delta", str(delta_json), "--out", str(out)), "base_mismatch")
    assert not out.exists()


def test_apply_forged_delta(run, packs):
    tmp, base_txt, target_txt, base_json, target_json = packs
    base = ContextPack.from_bytes(base_json.read_bytes())
    target = ContextPack.from_bytes(target_json.read_bytes())
    obj = json.loads(ContextPackDelta.between(base, target).to_bytes())
    obj["new_chunks"] = obj["new_chunks"][::-1]
    forged = tmp / "forged.json"
    forged.write_bytes(canon(obj))
    _one_line_error(run("apply", "--base", str(base_json), "--delta", str(forged)), "target_mismatch")
    obj = json.loads(ContextPackDelta.between(base, target).to_bytes())
    obj["kept_chunks"] = len(base.chunks) + 1
    forged.write_bytes(canon(obj))
    _one_line_error(run("apply", "--base", str(base_json), "--delta", str(forged)), "kept_chunks")


def test_delta_with_tampered_pack(run, packs):
    tmp, base_txt, target_txt, base_json, target_json = packs
    data = bytearray(target_json.read_bytes())
    data[data.index(b'"chunk_bytes":["') + 17] ^= 0x01
    bad = tmp / "bad.json"
    bad.write_bytes(bytes(data))
    _one_line_error(run("delta", "--base", str(base_json), "--target", str(bad)), "digest_mismatch")


# --- verify -----------------------------------------------------------------------------


def _verify_fields(out: bytes, pack: ContextPack) -> None:
    text = out.decode("utf-8")
    assert pack.digest in text
    numbers = [int(n) for n in re.findall(r"(?<![0-9a-f])\d+(?![0-9a-f])", text.replace(pack.digest, ""))]
    for value in (len(pack.chunks), pack.total_bytes, pack.byte_count):
        assert value in numbers, (value, text)
    for word in ("chunks", "total_bytes", "byte_count"):
        assert word in text, text


def test_verify_file(run, packs):
    tmp, base_txt, target_txt, base_json, target_json = packs
    result = run("verify", "--pack", str(target_json))
    assert result.rc == 0, result
    _verify_fields(result.out, ContextPack.from_bytes(target_json.read_bytes()))


def test_verify_stdin_by_default(run):
    pack = ContextPack.from_content("ab\n紧致性😀x紧致性😀x\nend", max_chunk_bytes=8)
    result = run("verify", stdin=pack.to_bytes())
    assert result.rc == 0, result
    _verify_fields(result.out, pack)
    result = run("verify", "--pack", "-", stdin=pack.to_bytes())
    assert result.rc == 0, result
    _verify_fields(result.out, pack)


def test_verify_tampered_pack(run, packs):
    tmp, base_txt, target_txt, base_json, target_json = packs
    data = target_json.read_bytes()
    tampered = data.replace(b'"total_bytes":', b'"total_bytes":1', 1)
    _one_line_error(run("verify", stdin=tampered), "total_bytes")
    digest_pos = data.index(b'"digest":"sha256:') + len(b'"digest":"sha256:')
    flipped = data[:digest_pos] + (b"0" if data[digest_pos : digest_pos + 1] != b"0" else b"1") + data[digest_pos + 1 :]
    _one_line_error(run("verify", stdin=flipped), "digest_mismatch")
    _one_line_error(run("verify", stdin=data[:-1]), "invalid_json")
    _one_line_error(run("verify", stdin=data + b"\n"), "non_canonical")


@pytest.mark.parametrize(
    "data,code",
    [
        pytest.param(b"", "invalid_json", id="empty"),
        pytest.param(b"hello", "invalid_json", id="text"),
        pytest.param(b"\xff", "invalid_json", id="binary"),
        pytest.param(b"[]", "invalid_json", id="array"),
        pytest.param(b"{}", "fields", id="empty-object"),
        pytest.param(b'{"a\\nb":1}', "fields", id="newline-in-key"),
        pytest.param(b'{"byte_count":1,"chunk_bytes":[],"digest":"x","schema":"evil\\nschema\\r\\nX","total_bytes":0}', "schema", id="newline-in-schema"),
    ],
)
def test_verify_malformed(run, data, code):
    _one_line_error(run("verify", stdin=data), code)


def test_verify_every_error_message_is_one_line_with_its_code(run):
    # chunk strings with newlines/escapes must not break the one-line error message
    obj = {"chunk_bytes": ["YWJj\nZGVm"], "digest": "sha256:" + "0" * 64, "schema": "ctxpack.pack.v1", "total_bytes": 6}
    fix_byte_count(obj)
    result = run("verify", stdin=canon(obj))
    _one_line_error(result, "base64")
    assert [c for c in ERROR_CODES if re.search(rf"\b{c}\b", result.err)] == ["base64"], result


def test_verify_missing_file(run, tmp_path):
    result = run("verify", "--pack", str(tmp_path / "nope.json"))
    assert result.rc in (1, 2), result
    assert "Traceback" not in result.err
    assert len(result.err.strip("\n").split("\n")) == 1, result


# --- usage errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param((), id="no-subcommand"),
        pytest.param(("frobnicate",), id="unknown-subcommand"),
        pytest.param(("pack", "--bogus"), id="unknown-option"),
        pytest.param(("pack", "--max-chunk-bytes", "abc"), id="non-integer-option"),
        pytest.param(("delta", "--target", "x.json"), id="delta-missing-base"),
        pytest.param(("apply", "--base", "x.json"), id="apply-missing-delta"),
        pytest.param(("measure", "--rounds", "many"), id="rounds-not-int"),
        pytest.param(("verify", "extra-positional"), id="extra-positional"),
    ],
)
def test_usage_errors_exit_2(run, argv):
    result = run(*argv)
    assert result.rc == 2, result
    assert "Traceback" not in result.err
    assert result.out == b""


# --- measure -------------------------------------------------------------------------------

ROW_PATTERNS = {
    "raw": r"raw",
    "full": r"full",
    "deltas": r"delta",
    "gzip": r"gzip",
}


def parse_measure(out: bytes) -> dict[str, tuple[int, float | None]]:
    """Find the four table rows by keyword and take the first byte figure and the % change."""
    rows: dict[str, tuple[int, float | None]] = {}
    for line in out.decode("utf-8").splitlines():
        low = line.lower()
        for key, pattern in ROW_PATTERNS.items():
            if key in rows or not re.search(pattern, low):
                continue
            if key == "full" and "delta" in low:
                continue
            # drop "-9" of "gzip -9" before looking for numbers
            cleaned = re.sub(r"gzip\s*-\s*9", "gzip", line, flags=re.IGNORECASE)
            number = re.search(r"(?<![\w.%+-])(\d{1,3}(?:,\d{3})+|\d+)(?![\d.%])", cleaned)
            pct = re.search(r"([+\-\u2212]?\d+(?:\.\d+)?)\s*%", cleaned)
            if number:
                value = int(number.group(1).replace(",", ""))
                change = float(pct.group(1).replace("\u2212", "-")) if pct else None
                rows[key] = (value, change)
    return rows


def test_measure_builtin_table(run):
    result = run("measure")
    assert result.rc == 0, result
    rows = parse_measure(result.out)
    assert set(rows) == {"raw", "full", "deltas", "gzip"}, result.out.decode()
    raw, full, deltas, gz = (rows[k][0] for k in ("raw", "full", "deltas", "gzip"))
    # 40 utterances of 120-200 bytes each, re-sent cumulatively: tens of thousands of bytes
    assert 40 * 41 // 2 * 120 <= raw <= 40 * 41 // 2 * 200 + 40 * 200, raw
    assert full > raw
    assert deltas <= 0.25 * raw, (deltas, raw)
    assert gz < raw
    for key in ("full", "deltas", "gzip"):
        change = rows[key][1]
        assert change is not None, (key, result.out.decode())
        assert change == pytest.approx((rows[key][0] - raw) / raw * 100, abs=0.06), key
    assert rows["deltas"][1] <= -75.0


def test_measure_builtin_is_deterministic(run):
    assert run("measure").out == run("measure").out


def test_measure_rounds_option(run):
    result = run("measure", "--rounds", "5")
    assert result.rc == 0, result
    rows5 = parse_measure(result.out)
    rows40 = parse_measure(run("measure").out)
    assert rows5["raw"][0] < rows40["raw"][0]


def _expected_measure(lines: list[str], max_chunk_bytes: int = 512) -> dict[str, int]:
    raw = full = deltas = gz = 0
    previous = None
    text = ""
    for line in lines:
        text += line
        data = text.encode()
        pack = ContextPack.from_content(text, max_chunk_bytes)
        raw += len(data)
        full += len(pack.to_bytes())
        deltas += len(pack.to_bytes()) if previous is None else len(ContextPackDelta.between(previous, pack).to_bytes())
        gz += len(gzip.compress(data, compresslevel=9, mtime=0))
        previous = pack
    return {"raw": raw, "full": full, "deltas": deltas, "gzip": gz}


def test_measure_input_file_exact_figures(run, tmp_path):
    lines = [f"speaker{i % 3}: utterance number {i} with 紧致性 and 😀 here\n" for i in range(12)]
    transcript = tmp_path / "transcript.txt"
    transcript.write_bytes("".join(lines).encode())
    result = run("measure", "--input", str(transcript))
    assert result.rc == 0, result
    rows = parse_measure(result.out)
    expected = _expected_measure(lines)
    assert rows["raw"][0] == expected["raw"], result.out.decode()
    assert rows["full"][0] == expected["full"], result.out.decode()
    assert rows["deltas"][0] == expected["deltas"], result.out.decode()
    # gzip framing may differ (e.g. a file name in the header): allow a few bytes per round
    assert abs(rows["gzip"][0] - expected["gzip"]) <= 32 * len(lines), (rows["gzip"], expected["gzip"])

    result = run("measure", "--input", str(transcript), "--rounds", "4")
    assert result.rc == 0, result
    rows = parse_measure(result.out)
    expected = _expected_measure(lines[:4])
    assert rows["raw"][0] == expected["raw"]
    assert rows["full"][0] == expected["full"]
    assert rows["deltas"][0] == expected["deltas"]


def test_measure_input_from_stdin(run, tmp_path):
    lines = ["alice: first\n", "bob: second 紧致性\n", "carol: third 😀\n"]
    result = run("measure", "--input", "-", stdin="".join(lines).encode())
    assert result.rc == 0, result
    rows = parse_measure(result.out)
    expected = _expected_measure(lines)
    assert (rows["raw"][0], rows["full"][0], rows["deltas"][0]) == (expected["raw"], expected["full"], expected["deltas"])


def test_measure_input_invalid_utf8(run, tmp_path):
    transcript = tmp_path / "bad.txt"
    transcript.write_bytes(b"fine\n\xff\n")
    _one_line_error(run("measure", "--input", str(transcript)), "utf8")


# --- selftest --------------------------------------------------------------------------------


def test_selftest_in_process(run):
    result = run("selftest")
    assert result.rc == 0, result
    lines = result.out.decode().strip().splitlines()
    assert len(lines) >= 15  # one line per check; the spec has ~15 rules
    assert "Traceback" not in result.err
    # "selftest exercises every rule above": every error code is named by some check
    out = result.out.decode()
    missing = sorted(code for code in ERROR_CODES if not re.search(rf"\b{code}\b", out))
    assert missing == [], missing


# --- subprocess runs -----------------------------------------------------------------------


def _proc(*args: str, stdin: bytes = b"", cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONIOENCODING", None)
    return subprocess.run(
        [sys.executable, "-m", "ctxpack", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd or REPO,
        env=env,
        timeout=120,
    )


def test_subprocess_selftest():
    proc = _proc("selftest")
    assert proc.returncode == 0, proc.stderr.decode()
    assert len(proc.stdout.decode().strip().splitlines()) >= 15
    assert b"Traceback" not in proc.stderr


def test_subprocess_pack_verify_delta_apply_pipeline(tmp_path):
    text = "title\r\nline one 紧致性\nline two 😀\rend"
    proc = _proc("pack", stdin=text.encode())
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == ContextPack.from_content(text).to_bytes()
    base = proc.stdout

    proc = _proc("verify", stdin=base)
    assert proc.returncode == 0, proc.stderr.decode()
    _verify_fields(proc.stdout, ContextPack.from_bytes(base))

    target_text = text + "\nappended line\n"
    (tmp_path / "target.txt").write_bytes(target_text.encode())
    proc = _proc("pack", "--input", str(tmp_path / "target.txt"), "--out", str(tmp_path / "target.json"))
    assert proc.returncode == 0 and proc.stdout == b""
    proc = _proc("delta", "--base", "-", "--target", str(tmp_path / "target.json"), stdin=base)
    assert proc.returncode == 0, proc.stderr.decode()
    delta = proc.stdout
    (tmp_path / "base.json").write_bytes(base)
    proc = _proc("apply", "--base", str(tmp_path / "base.json"), "--delta", "-", "--check", str(tmp_path / "target.txt"), stdin=delta)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == (tmp_path / "target.json").read_bytes()
    assert ContextPack.from_bytes(proc.stdout).content == target_text
    # mismatching --check: exit 1
    (tmp_path / "other.txt").write_bytes(target_text.replace("\r", "").encode())
    proc = _proc("apply", "--base", str(tmp_path / "base.json"), "--delta", "-", "--check", str(tmp_path / "other.txt"), stdin=delta)
    assert proc.returncode == 1
    assert b"Traceback" not in proc.stderr


def test_subprocess_tampered_and_malformed_exit_1():
    data = bytearray(ContextPack.from_content("hello\nworld\n").to_bytes())
    data[data.index(b"aGVs")] = ord("b")
    proc = _proc("verify", stdin=bytes(data))
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert "Traceback" not in err
    assert len(err.strip("\n").split("\n")) == 1 and "digest_mismatch" in err, err
    assert proc.stdout == b""

    proc = _proc("verify", stdin=b"\x00\x01 not json")
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert "Traceback" not in err and "invalid_json" in err and len(err.strip("\n").split("\n")) == 1, err


def test_subprocess_usage_error_exit_2():
    proc = _proc("nonsense")
    assert proc.returncode == 2
    assert b"Traceback" not in proc.stderr
    proc = _proc()
    assert proc.returncode == 2


def test_console_script_if_installed():
    exe = Path(sys.executable).parent / "ctxpack"
    if not exe.exists():
        found = shutil.which("ctxpack")
        if not found:
            pytest.skip("ctxpack console script not installed in this environment")
        exe = Path(found)
    proc = subprocess.run([str(exe), "pack"], input=b"hello\nworld\n", capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == ContextPack.from_content("hello\nworld\n").to_bytes()


def test_measure_table_is_readable_text(run):
    out = run("measure").out.decode()
    assert out.strip()
    parsed = parse_measure(out.encode())
    assert parsed["deltas"][0] < parsed["full"][0]


def test_apply_result_equals_library(run, packs):
    tmp, base_txt, target_txt, base_json, target_json = packs
    base = ContextPack.from_bytes(base_json.read_bytes())
    target = ContextPack.from_bytes(target_json.read_bytes())
    delta = ContextPackDelta.between(base, target)
    result = run("apply", "--base", str(base_json), "--delta", "-", stdin=delta.to_bytes())
    assert result.out == apply_delta(base, delta).to_bytes() == target.to_bytes()


def test_measure_lines_end_only_at_lf(run, tmp_path):
    """A transcript line ends after each LF only (CR, U+0085, U+2028 stay inside the line)."""
    lines = ["alice: one\r two\n", "bob: three\x85four\u2028five\n", "carol: last line without LF"]
    transcript = tmp_path / "t.txt"
    transcript.write_bytes("".join(lines).encode())
    result = run("measure", "--input", str(transcript))
    assert result.rc == 0, result
    rows = parse_measure(result.out)
    expected = _expected_measure(lines)
    assert rows["raw"][0] == expected["raw"], result.out.decode()
    assert rows["deltas"][0] == expected["deltas"], result.out.decode()


def test_measure_builtin_utterances_are_120_to_200_bytes(run):
    """raw(r) - raw(r-1) is the text of round r, so consecutive differences give each utterance's size."""
    raws = [0]
    for rounds in range(1, 41):
        result = run("measure", "--rounds", str(rounds))
        assert result.rc == 0, result
        raws.append(parse_measure(result.out)["raw"][0])
    round_sizes = [raws[r] - raws[r - 1] for r in range(1, 41)]
    utterances = [round_sizes[i] - round_sizes[i - 1] for i in range(1, 40)]
    assert all(120 <= n <= 200 for n in utterances), utterances
    # round 1 is the title line plus the first utterance
    assert round_sizes[0] > 120
    assert raws[40] == parse_measure(run("measure").out)["raw"][0]
