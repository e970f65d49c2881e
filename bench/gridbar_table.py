#!/usr/bin/env python3
"""The markdown table of issue 13's grid barrier variants from passes of
`vkc-bench --scenario gridbar --json FILE` (bench/h200_gridbar.sh).

    bench/gridbar_table.py pass1.json pass2.json ... > gridbar.md

One line per variant and kind (raw-persistent: the raw kernel, tools/shaders/
persist_chain.comp; vkc-cooperative: vkc_seq_dispatch_cooperative with the
variant's VKC_GRID_BARRIER define). Figures are medians over the passes of
each pass's figure: ns per step at the p50, p95 and p99 of the submissions
(wall clock, one submission = K steps), the GPU's ns per step from
timestamps (raw rows only), and the spread of the p50 over passes. The
ratios divide the p50 by the first barrier (VKC_GRID_BARRIER=0) of the same kind and, for vkc, by
the raw kernel with the same barrier. A row counts only the passes where
its own chain's result checked out (ok); "ok" says how many did."""
import json
import re
import statistics
import sys

from combine import fmt  # bench/combine.py: the script's folder is on sys.path

TARGET_NS = 1330.0  # issue 13: CUDA grid.sync class, per dependent step
KINDS = ("raw-persistent", "vkc-cooperative")
ROW = re.compile(r"^(%s)(\S*) K=(\d+)$" % "|".join(KINDS))
GRID = re.compile(r"(\d+) workgroups of (\d+)")


def load(paths):
    """{(kind, suffix, K): [record per pass]} in first-seen order, and notes."""
    rows, notes = {}, []
    for path in paths:
        try:
            with open(path) as f:
                recs = json.load(f)
        except (OSError, ValueError) as e:
            notes.append("unreadable %s: %s" % (path, e))
            continue
        for r in recs:
            if r.get("scenario") != "gridbar":
                continue
            m = ROW.match(r.get("variant", ""))
            if not m:
                continue
            rows.setdefault((m.group(1), m.group(2), int(m.group(3))), []).append(r)
    return rows, notes


def med(values):
    values = [v for v in values if v is not None and v >= 0]
    return statistics.median(values) if values else None


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    rows, notes = load(argv[1:])
    if not rows:
        print("no gridbar records in %s" % " ".join(argv[1:]), file=sys.stderr)
        return 1
    fig = {}
    for key, recs in rows.items():
        good = [r for r in recs if r.get("ok") and not r.get("skipped")]
        k = key[2]

        def per_step(field):
            return med([r[field] * 1e3 / k for r in good if r.get(field) is not None])

        p50s = [r["p50_us"] * 1e3 / k for r in good if r.get("p50_us") is not None]
        fig[key] = {
            "ok": "%d/%d" % (len(good), len(recs)),
            "p50": med(p50s),
            "p95": per_step("p95_us"),
            "p99": per_step("p99_us"),
            "gpu": med([r.get("gpu_per_dispatch_ns") for r in good]),
            "spread": (max(p50s) - min(p50s)) if len(p50s) > 1 else None,
            "note": (good or recs)[-1].get("note", ""),
            "failed": [r.get("note", "") for r in recs if not r.get("ok")],
        }
    first = next(iter(rows.values()))[0]
    print("# Grid barrier variants (issue 13)\n")
    print("device: %s; driver: %s; %d pass(es); target <= %.0f ns per step\n"
          % (first.get("device"), first.get("driver"), len(argv) - 1, TARGET_NS))
    print("| kind | barrier | K | grid | ns/step p50 | p95 | p99 | GPU ns/step | spread | "
          "vs first | vs raw | target | ok |")
    print("|---|---|--:|---|--:|--:|--:|--:|--:|--:|--:|---|---|")
    seen = list(fig)
    for key in sorted(seen, key=lambda x: (KINDS.index(x[0]), seen.index(x))):
        f = fig[key]
        kind, suffix, k = key
        today = fig.get((kind, "", k), {}).get("p50")
        raw = fig.get(("raw-persistent", suffix, k), {}).get("p50")
        p50 = f["p50"]
        vs_today = p50 / today if p50 and today else None
        vs_raw = p50 / raw if p50 and raw and kind != "raw-persistent" else None
        target = "-" if p50 is None else ("yes" if p50 <= TARGET_NS else "no")
        g = GRID.search(f["note"])
        grid = "%sx%s" % g.groups() if g else "?"
        if "FALLBACK" in f["note"]:
            grid += " FALLBACK"
        ns = [fmt(f[n], "%.0f") for n in ("p50", "p95", "p99", "gpu", "spread")]
        print("| %s | %s | %d | %s | %s | %s | %s | %s |"
              % (kind, suffix or "first (0)", k, grid, " | ".join(ns), fmt(vs_today, "%.2fx"),
                 fmt(vs_raw, "%.2fx"), target + " | " + f["ok"]))
    print("\nvs first: the p50 over the first barrier (VKC_GRID_BARRIER=0) of the same kind "
          "(< 1 is faster); "
          "vs raw: vkc over the raw kernel with the same barrier; spread: the largest "
          "minus the smallest pass's p50; grid: workgroups x invocations (FALLBACK: vkc "
          "ran one dispatch per step, so the row does not measure the barrier).\n")
    for key, f in fig.items():
        for n in f["failed"]:
            print("- FAILED %s%s K=%d: %s" % (key[0], key[1], key[2], n))
    print("\nNotes (last pass): ")
    for key, f in fig.items():
        if not key[1]:
            print("- %s K=%d: %s" % (key[0], key[2], f["note"]))
    for n in notes:
        print("- %s" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
