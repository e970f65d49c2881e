#!/usr/bin/env python3
"""Combine vkc-bench and CUDA/PyTorch reference JSON into one markdown table.

    python3 bench/combine.py vkc.json cuda.json [torch.json ...] > combined.md

Every input is an array of records in vkc-bench's schema (scenario, variant,
baseline, device, driver, iterations, p50_us, p95_us, p99_us,
per_dispatch_ns, gpu_per_dispatch_ns, gbps, ok, note, source). Rows are
grouped by scenario; the ratio column divides by the record named in
"baseline" (a raw Vulkan row of vkc-bench): for times < 1 is faster, for
GB/s > 1 is faster. A closing section checks the targets of issues 5 and 13.
"""
import json
import re
import sys


def load(paths):
    recs = []
    for p in paths:
        try:
            with open(p) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print("combine: skipping %s: %s" % (p, e), file=sys.stderr)
            continue
        for r in data:
            r.setdefault("source", "vkc-bench")
            recs.append(r)
    return recs


def key(r):
    return "%s/%s" % (r["scenario"], r["variant"])


def metric(r):
    """(value, kind): GB/s, ns per dispatch, or p50 us."""
    if r.get("gbps"):
        return r["gbps"], "gbps"
    if r.get("per_dispatch_ns"):
        return r["per_dispatch_ns"], "ns"
    if r.get("p50_us"):
        return r["p50_us"], "us"
    return None, None


def ratio(r, base):
    if not base or not r.get("ok") or not base.get("ok"):
        return None
    for field in ("gbps", "per_dispatch_ns", "p50_us"):
        a, b = r.get(field), base.get(field)
        if a and b:
            return a / b
    return None


def fmt(v, f="%.2f"):
    return "-" if v is None else f % v


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    recs = load(argv[1:])
    if not recs:
        print("combine: no records", file=sys.stderr)
        return 1
    vk = {key(r): r for r in recs if r["source"] == "vkc-bench"}
    devices = sorted({"%s (%s: %s)" % (r["device"], r["source"], r["driver"]) for r in recs})
    print("# vkc-bench combined with the CUDA/PyTorch reference\n")
    for d in devices:
        print("- %s" % d)
    print()
    print("| scenario | source | variant | iters | p50 us | p95 us | p99 us | ns/dispatch "
          "| GPU ns/disp | GB/s | ratio | ok | note |")
    print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|")
    order = []
    for r in recs:
        if r["scenario"] not in order:
            order.append(r["scenario"])
    for sc in order:
        for r in recs:
            if r["scenario"] != sc:
                continue
            base = vk.get(r.get("baseline") or "")
            q = ratio(r, base)
            qs = "1 (base)" if base is r else ("-" if q is None else "%.2fx" % q)
            ok = "skip" if r.get("skipped") else ("yes" if r.get("ok") else "NO")
            pd = fmt(r.get("per_dispatch_ns"), "%.0f")
            if r.get("per_dispatch_p95_ns") is not None and r.get("per_dispatch_ns") is not None:
                pd += " (p95 %.0f, p99 %.0f)" % (r["per_dispatch_p95_ns"], r["per_dispatch_p99_ns"])
            print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                sc, r["source"], r["variant"], r.get("iterations") or 0, fmt(r.get("p50_us")),
                fmt(r.get("p95_us")), fmt(r.get("p99_us")), pd,
                fmt(r.get("gpu_per_dispatch_ns"), "%.0f"), fmt(r.get("gbps"), "%.1f"), qs, ok,
                (r.get("note") or "").replace("|", "/")))
    print()
    targets(recs)
    return 0


def find(recs, scenario, variant_prefix, source=None):
    """The record of a scenario whose variant starts with the prefix; for
    sweeps (K=...) the one with the largest x."""
    best = None
    for r in recs:
        if r["scenario"] != scenario or not r["variant"].startswith(variant_prefix):
            continue
        if r["variant"] == variant_prefix and r.get("ok") and (not source or r["source"] == source):
            return r  # an exact name beats longer names that share the prefix
        if source and r["source"] != source:
            continue
        if not r.get("ok"):
            continue
        if best is None or (r.get("x") or 0) > (best.get("x") or 0):
            best = r
    return best


def best_fixture(rec):
    """A copy of a chain row's record with fixture_ns, the p50 ns per
    dispatch of its fastest fixture (from its note); None without one."""
    m = rec and re.search(r"fixtures, p50 ns/dispatch each: ([0-9 ]+)", rec.get("note") or "")
    if not m:
        return None
    return dict(rec, fixture_ns=min(float(v) for v in m.group(1).split()))


def targets(recs):
    print("## Targets (issues 5, 13 and 17)\n")
    rows = []

    def row(name, ours, theirs, field, goal, cmp):
        # A goal that was not measured is not met.
        missing = "not measured" if cmp is None else "MISSED (not measured)"
        if not ours or not theirs:
            rows.append((name, "-", "-", "-", goal, missing))
            return
        a, b = ours.get(field), theirs.get(field)
        if a is None or b is None:
            rows.append((name, "-", "-", "-", goal, missing))
            return
        # A row whose goal is only to report a figure never says "met".
        result = "report" if cmp is None else ("met" if cmp(a, b) else "MISSED")
        rows.append((name, "%s %s = %.3g" % (ours["source"], ours["variant"], a),
                     "%s %s = %.3g" % (theirs["source"], theirs["variant"], b), "%.3f" % (a / b),
                     goal, result))

    def tail_row(name, r, report=False):
        goal = "report" if report else "ratio <= 1.5"
        if r and r.get("p50_us") and r.get("p99_us"):
            result = "report" if report else (
                "met" if r["p99_us"] <= 1.5 * r["p50_us"] else "MISSED")
            rows.append((name, "%s p99 = %.3g" % (r["variant"], r["p99_us"]),
                         "p50 = %.3g" % r["p50_us"], "%.3f" % (r["p99_us"] / r["p50_us"]), goal,
                         result))
        else:
            rows.append((name, "-", "-", "-", goal, "not measured"))

    cuda_rt = find(recs, "reuse", "cuda-launch-sync-spin")
    # Every pass must meet it: the driver's fast and slow modes differ between passes.
    for sc, label in (("reuse", ""), ("reuse-pass2", ", second pass")):
        rt = find(recs, sc, "vkc-default") or find(recs, sc, "vkc-spin-then-block")
        if sc == "reuse":
            vkc_rt = rt
        elif not rt:
            continue
        # Which mode NVIDIA's driver was in: in its slow mode fences and
        # timeline signals come 30-40 us late, so a raw fence spin takes
        # three times the shader's own sequence word (BENCHMARKS.md).
        row("driver mode%s: raw fence spin vs raw host-polled sequence word" % label,
            find(recs, sc, "raw-spin"), find(recs, sc, "raw-seqpoll"), "p50_us",
            "report (above 2: the slow mode)", None)
        row("round trip p50 (vkc default wait%s) vs CUDA launch+sync" % label, rt, cuda_rt,
            "p50_us", "ratio <= 1", lambda a, b: a <= b)
        tail_row("round trip p99 / p50 (vkc default wait%s)" % label, rt)
        row("round trip p50 (vkc default wait%s) vs raw host-polled sequence word" % label, rt,
            find(recs, sc, "raw-seqpoll"), "p50_us", "report", None)
        # Armed submission (src/arm.c): vkc's default against itself without
        # it, and against raw Vulkan's pre-submitted copy behind a host gate.
        row("round trip p50 (vkc default wait%s) vs the same unarmed (VKC_ARM=0)" % label, rt,
            find(recs, sc, "vkc-default-unarmed"), "p50_us", "report", None)
        row("round trip p50 (vkc default wait%s) vs raw gated copy armed in the window" % label,
            rt, find(recs, sc, "raw-seqpoll-gated-arm"), "p50_us", "report", None)
        # Armed 512 deep (2026-12-03) against one copy ahead, and against its
        # raw twin: 256 copies ahead, re-armed 128 at a time.
        row("round trip p50 (vkc default wait%s) vs the same one copy ahead (VKC_ARM_DEPTH=1)"
            % label, rt, find(recs, sc, "vkc-default-arm-depth-1"), "p50_us", "report", None)
        # A DEVICE buffer in host-visible memory that the host never reads
        # (2026-12-03, fourth session): no host barrier; mapped: with it.
        row("round trip p50 (vkc default wait%s) vs the same with x's mapping handed out "
            "(a host barrier per round trip)" % label, rt,
            find(recs, sc, "vkc-default-mapped"), "p50_us", "report", None)
        # Raw copies behind a spinning gate dispatch (2026-12-03, job H):
        # with the event that holds a copy once a bounded spin gives up, and
        # the unbounded spin alone (no vkc form: it keeps a GPU thread busy
        # while nothing opens it).
        row("round trip p50 (vkc default wait%s) vs raw spin-gated copies with events" % label,
            rt, find(recs, sc, "raw-seqpoll-store-spin+evented-deep"), "p50_us", "report", None)
        for v in ("raw-seqpoll-store-spin+evented-deep", "raw-seqpoll-store-spingate-deep"):
            tail_row("round trip p99 / p50 (%s%s)" % (v, label), find(recs, sc, v), report=True)
        row("round trip p50 (vkc default wait%s) vs raw gated copies armed deep" % label, rt,
            find(recs, sc, "raw-seqpoll-store-gated-deep+lead+cond+inv"), "p50_us", "report",
            None)
        tail_row("round trip p99 / p50 (raw gated copies armed deep%s)" % label,
                 find(recs, sc, "raw-seqpoll-store-gated-deep+lead+cond+inv"), report=True)
        # The completion epilogue (src/epilogue.c): vkc-default's kernel is
        # built from GLSL; the same kernel from SPIR-V gets it spliced into
        # its module (src/spirv_epilogue.c; before 2026-12-06's seventeenth
        # session it kept the marker).
        spv = find(recs, sc, "vkc-default-spirv")
        row("round trip p50 (vkc default wait%s, kernel from SPIR-V) vs CUDA "
            "launch+sync" % label, spv, cuda_rt, "p50_us", "ratio <= 1", lambda a, b: a <= b)
        row("round trip p50 (vkc default wait%s) vs the same without the epilogue "
            "(VKC_EPILOGUE=0)" % label, rt, find(recs, sc, "vkc-default-noepilogue"), "p50_us",
            "report", None)
        row("round trip p50 (vkc default wait%s) vs raw gated copy armed, lead barrier, no "
            "marker" % label, rt, find(recs, sc, "raw-seqpoll-gated-arm+lead"), "p50_us",
            "report", None)
        # Issue 13, second round: the timeline signalled every Nth submit only.
        row("round trip p50 (vkc default wait%s) vs the same with a signal per submit" % label,
            rt, find(recs, sc, "vkc-default-signal-every-1"), "p50_us", "report", None)
        for n in (8, 64):
            row("round trip p50 (raw seqpoll, timeline every %d%s) vs raw seqpoll" % (n, label),
                find(recs, sc, "raw-seqpoll+timeline-every-%d" % n),
                find(recs, sc, "raw-seqpoll"), "p50_us", "report", None)
    row("round trip p50 (vkc default wait) vs one-node CUDA graph", vkc_rt,
        find(recs, "reuse", "cuda-graph-1node"), "p50_us", "report the gap", None)
    # VKC_WAIT_SPIN spins on the timeline, as raw's fence spin does on its
    # fence: its goal is raw's figure; the goal against CUDA is the
    # default wait's (above). The two rows that took turns in chunks
    # (-turns, since the eighteenth session) see the same driver modes; the
    # rows run one after the other did not (Z20: raw 20.0 us, vkc 41.0 in
    # the slow mode). Every pass that has them counts; older runs' JSON
    # has only the separate rows.
    for sc, label in (("reuse", ""), ("reuse-pass2", ", second pass")):
        ours, theirs = find(recs, sc, "vkc-spin-turns"), find(recs, sc, "raw-spin-turns")
        if not ours and sc == "reuse":
            ours, theirs = find(recs, sc, "vkc-spin"), find(recs, sc, "raw-spin")
            label = " (rows run one after the other)"
        elif not ours:
            continue
        row("round trip p50 (vkc spin on the timeline%s) vs raw fence spin" % label, ours, theirs,
            "p50_us", "ratio <= 1", lambda a, b: a <= b)
    row("round trip p50 (vkc spin on the timeline) vs CUDA launch+sync",
        find(recs, "reuse", "vkc-spin"), find(recs, "reuse", "cuda-launch-sync-spin"), "p50_us",
        "report", None)
    row("chain ns/dispatch: vkc vs CUDA graph", find(recs, "chain", "vkc-seq K="),
        find(recs, "chain", "cuda-graph K"), "per_dispatch_ns", "report", None)
    # Like for like: the raw rows spin on their fence throughout; vkc's
    # default wait blocks after 10 ms (reported beside it). The best raw
    # barrier is the fastest of the run's three forms (memory, buffer,
    # synchronization2) at the largest K. A row of one fixture (buffer,
    # pipeline, recording) measured where its memory landed: the same in
    # every process of one history (to 0.05%), 3.4% apart between rows of
    # equal work (H100, Z46). Each row now goes round four fixtures and
    # notes each one's p50 (tools/bench_dispatch.c, chain_row).
    raw_bars = [r for r in (find(recs, "chain", "raw-barrier-%s K=" % f)
                            for f in ("memory", "buffer", "sync2")) if r]
    best_bar = min(raw_bars, key=lambda r: r.get("per_dispatch_ns") or float("inf"),
                   default=None)
    row("chain ns/dispatch: vkc (waiting spinning, as raw does) vs best raw barrier",
        find(recs, "chain", "vkc-seq-spinning K="), best_bar,
        "per_dispatch_ns", "ratio <= 1", lambda a, b: a <= b)
    row("chain ns/dispatch: vkc default wait vs best raw barrier",
        find(recs, "chain", "vkc-seq K="), best_bar, "per_dispatch_ns", "report", None)
    # The same without the placement: each row's fastest fixture (its note).
    raw_fix = [r for r in (best_fixture(r) for r in raw_bars) if r]
    row("chain ns/dispatch, fastest fixture of each row: vkc (waiting spinning) vs best raw "
        "barrier", best_fixture(find(recs, "chain", "vkc-seq-spinning K=")),
        min(raw_fix, key=lambda r: r["fixture_ns"], default=None), "fixture_ns", "report", None)
    # Beside the barrier form vkc records (synchronization2), and beside its
    # own copy begun with SIMULTANEOUS_USE (as every copy was before be5ad5f;
    # 3-4% slower on the H200, BENCHMARKS.md, twentieth session).
    row("chain ns/dispatch: vkc (waiting spinning) vs raw synchronization2 barrier",
        find(recs, "chain", "vkc-seq-spinning K="), find(recs, "chain", "raw-barrier-sync2 K="),
        "per_dispatch_ns", "report", None)
    row("chain ns/dispatch: vkc (waiting spinning) vs the same with SIMULTANEOUS_USE "
        "(VKC_SIMULTANEOUS_USE=1)", find(recs, "chain", "vkc-seq-spinning K="),
        find(recs, "chain", "vkc-seq-spinning-simul K="), "per_dispatch_ns", "report", None)
    row("independent ns/dispatch: vkc vs raw Vulkan", find(recs, "independent", "vkc-seq"),
        find(recs, "independent", "raw-no-barriers"), "per_dispatch_ns", "ratio <= 1.25",
        lambda a, b: a <= 1.25 * b)
    row("copy GB/s: vkc default grid vs one thread per element",
        find(recs, "bandwidth", "vkc-copy-default"), find(recs, "bandwidth", "raw-copy-1per"),
        "gbps", "ratio >= 0.99", lambda a, b: a >= 0.99 * b)
    row("copy GB/s: vkc default grid vs PyTorch copy", find(recs, "bandwidth", "vkc-copy-default"),
        find(recs, "bandwidth", "torch-copy"), "gbps", "ratio >= 1", lambda a, b: a >= b)
    row("triad GB/s: vkc default grid vs PyTorch copy", find(recs, "bandwidth", "vkc-triad-default"),
        find(recs, "bandwidth", "torch-copy"), "gbps", "ratio >= 1", lambda a, b: a >= b)
    row("triad GB/s: vkc default grid vs one thread per element",
        find(recs, "bandwidth", "vkc-triad-default"), find(recs, "bandwidth", "raw-triad-1per"),
        "gbps", "ratio >= 0.99", lambda a, b: a >= 0.99 * b)
    row("record ns/dispatch: vkc sequence vs raw Vulkan", find(recs, "record", "vkc-seq-dispatch"),
        find(recs, "record", "raw-record"), "per_dispatch_ns", "ratio <= 1.10",
        lambda a, b: a <= 1.10 * b)
    row("record ns/dispatch, a chain of one kernel on one buffer: vkc (bound state kept) vs raw",
        find(recs, "record", "vkc-seq-dispatch-chain"), find(recs, "record", "raw-record-chain"),
        "per_dispatch_ns", "report", None)
    # What vkc's chain recording costs beyond the driver's price of the same
    # calls (a synchronization2 barrier, the state bound once), and that
    # price in each barrier form.
    row("record ns/dispatch, chain: vkc vs raw making vkc's calls (sync2 barrier + dispatch)",
        find(recs, "record", "vkc-seq-dispatch-chain"),
        find(recs, "record", "raw-record-chain-bound-sync2"), "per_dispatch_ns", "report", None)
    row("record ns/dispatch, chain, state bound: synchronization2 barrier vs vkCmdPipelineBarrier",
        find(recs, "record", "raw-record-chain-bound-sync2"),
        find(recs, "record", "raw-record-chain-bound"), "per_dispatch_ns", "report", None)
    enq = find(recs, "record", "vkc-immediate-enqueue")
    rows.append(("immediate-mode enqueue ns", enq and "%.0f" % enq["per_dispatch_ns"] or "-",
                 "100", "-", "< 100 ns",
                 "-" if not enq else ("met" if enq["per_dispatch_ns"] < 100 else "MISSED")))
    fused8 = [r for r in recs if r["scenario"] == "fusion" and r["variant"] == "vkc-fused L=8"]
    tc8 = [r for r in recs if r["scenario"] == "fusion" and r["variant"] == "torch-compile L=8"]
    row("fused 8-step chain p50: vkc vs torch.compile", fused8[0] if fused8 else None,
        tc8[0] if tc8 else None, "p50_us", "report", None)
    # Issue 17: the resident round trip (vkc's default ack placement).
    res = find(recs, "resident", "vkc-resident-roundtrip")
    if res and res.get("p50_us") and res.get("p99_us"):
        for name, v, lim in (("p50", res["p50_us"], 3.0), ("p99", res["p99_us"], 5.0)):
            rows.append(("resident round trip %s (%s)" % (name, res["variant"]), "%.2f us" % v,
                         "%g us" % lim, "%.3f" % (v / lim), "<= %g us" % lim,
                         "met" if v <= lim else "MISSED"))
    else:
        rows.append(("resident round trip p50 / p99", "-", "3 / 5 us", "-", "<= 3 / 5 us",
                     "MISSED (not measured)"))
    row("resident round trip p50 vs one-node CUDA graph", res,
        find(recs, "reuse", "cuda-graph-1node"), "p50_us", "ratio <= 0.5",
        lambda a, b: a <= 0.5 * b)
    sweep_rows(recs, rows)
    print("| target | ours | reference | ratio | goal | result |")
    print("|---|---|---|--:|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s | %s | %s |" % r)


def sweep(recs, scenario, prefix, source=None):
    """{x: record} of a sweep's ok records whose variant is "prefix x_name=x"."""
    out = {}
    for r in recs:
        if r["scenario"] != scenario or not r.get("ok") or r.get("x") is None:
            continue
        if source and r["source"] != source:
            continue
        head, _, point = r["variant"].rpartition(" ")
        if head == prefix and point.endswith("=%g" % r["x"]):
            out[r["x"]] = r
    return out


def sweep_rows(recs, rows):
    """Goals of issue 13 that must hold at every point of a sweep: the worst
    point decides; a point measured on one side only counts as missed."""

    def worst(name, ours, theirs, field, limit, lower_better, xmin=None, ours_only=False):
        xs = sorted(x for x in (set(ours) if ours_only else set(ours) | set(theirs))
                    if xmin is None or x >= xmin)
        goal = "ratio %s %g at every point" % ("<=" if lower_better else ">=", limit)
        if not xs:
            rows.append((name, "-", "-", "-", goal, "MISSED (not measured)"))
            return
        bad, worst_q, worst_x = [], None, None
        for x in xs:
            a, b = ours.get(x), theirs.get(x)
            if not a or not b or a.get(field) is None or not b.get(field):
                bad.append("%g: not measured" % x)
                continue
            q = a[field] / b[field]
            if worst_q is None or (q > worst_q if lower_better else q < worst_q):
                worst_q, worst_x = q, x
            if (q > limit) if lower_better else (q < limit):
                bad.append("%g: %.3f" % (x, q))
        some = next(iter(ours.values()), None) or next(iter(theirs.values()))
        xn = some["variant"].rpartition(" ")[2].split("=")[0]
        rows.append((name, "worst at %s=%s" % (xn, "-" if worst_x is None else "%g" % worst_x),
                     "%d points" % len(xs), "-" if worst_q is None else "%.3f" % worst_q, goal,
                     "met" if not bad else "MISSED (%s)" % ", ".join(bad[:6])))

    built = sweep(recs, "fusion", "vkc-builder")
    worst("fusion p50: vkc's builder vs torch.compile (float, out of place)", built,
          sweep(recs, "fusion", "torch-compile"), "p50_us", 1.0, True)
    worst("fusion p50: vkc's builder vs the hand-written vec4 raw kernel", built,
          sweep(recs, "fusion", "raw-vec4"), "p50_us", 1.03, True)
    # Which mode NVIDIA's driver was in during the batch scenario: in its
    # slow mode each timeline signal costs 17-55 us, so batches of one that
    # signal every submit (VKC_IMM_MARKER=0) take several times those that
    # do not (the default's repeats); ~1 in the fast mode (BENCHMARKS.md,
    # fourteenth session, job Z13).
    sig = sweep(recs, "batch", "vkc-immediate-unmarked").get(1)
    quiet = sweep(recs, "batch", "vkc-immediate-spirv").get(1)
    if sig and quiet and sig.get("p50_us") and quiet.get("p50_us"):
        rows.append(("driver mode in the batch scenario: a signal every submit vs none "
                     "(vkc-immediate-unmarked vs vkc-immediate-spirv, K=1)",
                     "%.3g us" % sig["p50_us"], "%.3g us" % quiet["p50_us"],
                     "%.3f" % (sig["p50_us"] / quiet["p50_us"]),
                     "report (above 2: the slow mode)", "report"))
    # Every batch recorded, each fresh submit's signal chosen from the
    # driver's mode (VKC_SIGNAL_ADAPT=1, the default on a GPU since the
    # twenty-fourth session) vs always signalling (VKC_SIGNAL_ADAPT=0): in
    # NVIDIA's slow mode each signal cost 40-45 us (job Z36). Two batches taking turns, an open batch held while it starts a
    # kept one (the default) vs never held (VKC_IMM_HOLD_NS=0): in that mode
    # the idle flush cut bursts of 256 at their 128th (job Z26).
    pairs = (("vkc-immediate-rerecord-adapt", "vkc-immediate-rerecord-signal", (1, 16, 256, 1024),
              "every batch recorded, K=%d: signals chosen from the driver's mode "
              "(VKC_SIGNAL_ADAPT=1) vs every fresh submit signalling (=0)"),
             ("vkc-immediate-alternate", "vkc-immediate-alternate-hold0", (256, 1024),
              "two batches taking turns, K=%d: held while it starts a kept batch vs never "
              "held (VKC_IMM_HOLD_NS=0)"))
    for new_row, old_row, ks, what in pairs:
        news, olds = sweep(recs, "batch", new_row), sweep(recs, "batch", old_row)
        for k in ks:
            a, b = news.get(k), olds.get(k)
            if a and b and a.get("p50_us") and b.get("p50_us"):
                rows.append(("immediate mode, " + what % k,
                             "%.3g us" % a["p50_us"], "%.3g us" % b["p50_us"],
                             "%.3f" % (a["p50_us"] / b["p50_us"]), "report", "report"))
    imm = sweep(recs, "batch", "vkc-immediate")
    worst("immediate mode: vkc vs raw record + submit of the same batch", imm,
          sweep(recs, "batch", "raw-record-submit"), "p50_us", 1.0, True)
    worst("immediate mode ns/dispatch from K=16: vkc vs CUDA stream launches", imm,
          sweep(recs, "batch", "cuda-stream"), "per_dispatch_ns", 1.0, True, xmin=16)
    # The same goals with every batch recorded (VKC_IMM_REUSE=0; the rows
    # above repeat one batch, which vkc submits again as recorded), and with
    # two batches taking turns (a frame's flushes: each repeats the batch
    # before the last, which vkc keeps recorded too).
    # Batches for an idle queue whole (VKC_IMM_SPLIT=1) and in two pieces
    # (rows for K = 16..1024 only); a kernel from SPIR-V, whose batches carry
    # the epilogue spliced into its module (K = 1..64 only).
    for variant, what in (("vkc-immediate-rerecord", "every batch recorded"),
                          ("vkc-immediate-alternate", "two batches taking turns"),
                          ("vkc-immediate-whole", "whole (VKC_IMM_SPLIT=1)"),
                          ("vkc-immediate-rerecord-whole", "every batch recorded, whole"),
                          ("vkc-immediate-rerecord-split2", "every batch recorded, in two pieces"),
                          ("vkc-immediate-spirv", "a kernel from SPIR-V")):
        rows_of = sweep(recs, "batch", variant)
        if not rows_of:
            continue
        # the experiments' rows cover part of the sweep: rated where they ran
        part = variant.endswith(("-whole", "-split2", "-spirv"))
        worst("immediate mode, %s: vkc vs raw record + submit" % what, rows_of,
              sweep(recs, "batch", "raw-record-submit"), "p50_us", 1.0, True, ours_only=part)
        worst("immediate mode, %s, ns/dispatch from K=16: vkc vs CUDA stream" % what,
              rows_of, sweep(recs, "batch", "cuda-stream"), "per_dispatch_ns", 1.0, True, xmin=16,
              ours_only=part)
    # vkc-bench's "vkc-cooperative K=..." records (the largest K); the note
    # says which form ran: the fallback (one dispatch per step) is no
    # cooperative figure, whatever its time.
    coop = find(recs, "chain", "vkc-cooperative")
    if coop and coop.get("per_dispatch_ns"):
        fallback = "FALLBACK" in (coop.get("note") or "")
        ok = coop["per_dispatch_ns"] <= 1330 and not fallback
        rows.append(("serial chain: vkc cooperative dispatch ns/step (%s)" % coop["variant"],
                     "%.0f" % coop["per_dispatch_ns"], "1330",
                     "%.3f" % (coop["per_dispatch_ns"] / 1330), "<= 1330 ns",
                     "met" if ok else "MISSED (the fallback ran)" if fallback else "MISSED"))
    else:
        rows.append(("serial chain: vkc cooperative dispatch ns/step", "-", "1330", "-",
                     "<= 1330 ns", "MISSED (not measured)"))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
