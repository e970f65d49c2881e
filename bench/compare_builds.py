#!/usr/bin/env python3
"""Compare the old-*.json and new-*.json runs that compare_builds.sh wrote.

For every (scenario, variant) present in both builds: the median over
processes of its per-process figure (p50 us for round trips, ns per dispatch
for record rows), the new/old ratio of those medians, and the same ratio
after dividing each process's figure by that process's raw Vulkan figure
(raw-record for record, raw-spin for reuse), which removes what moves the
whole process. Failed or unchecked records are counted, not used."""
import glob
import json
import os
import statistics
import sys

RAW = {"record": "raw-record", "reuse": "raw-spin"}


def figure(rec):
    if rec.get("scenario") == "record":
        return rec.get("per_dispatch_ns")
    return rec.get("p50_us")


def load(folder, which):
    runs = []
    for path in sorted(glob.glob(os.path.join(folder, which + "-*.json"))):
        try:
            with open(path) as f:
                runs.append(json.load(f))
        except (OSError, ValueError) as e:
            print("unreadable %s: %s" % (path, e), file=sys.stderr)
    return runs


def per_variant(runs):
    """{(scenario, variant): ([figure per process], [figure / raw per process])}"""
    out = {}
    bad = 0
    for recs in runs:
        raw = {}
        for r in recs:
            if r.get("ok") and r.get("variant") == RAW.get(r.get("scenario")):
                raw[r["scenario"]] = figure(r)
        for r in recs:
            v = figure(r)
            if not r.get("ok") or v is None:
                bad += not r.get("skipped", False)
                continue
            key = (r["scenario"], r["variant"])
            vals, norm = out.setdefault(key, ([], []))
            vals.append(v)
            base = raw.get(r["scenario"])
            if base:
                norm.append(v / base)
    return out, bad


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    folder = sys.argv[1]
    old_runs, new_runs = load(folder, "old"), load(folder, "new")
    old, old_bad = per_variant(old_runs)
    new, new_bad = per_variant(new_runs)
    dev = next((r.get("device") for recs in new_runs for r in recs), "?")
    drv = next((r.get("driver") for recs in new_runs for r in recs), "?")
    print("# Two builds side by side: %d processes each, alternating\n" % len(new_runs))
    print("device: %s, driver: %s; failed records: old %d, new %d\n" % (dev, drv, old_bad, new_bad))
    print("Per-process figure: ns per recorded dispatch (record) or round-trip p50 in us")
    print("(reuse). Median over processes, the spread (min-max), and new/old ratios of")
    print("the medians, raw and normalised by the same process's raw Vulkan variant.\n")
    print("| scenario | variant | unit | old median | old min-max | new median | new min-max "
          "| new/old | new/old normalised |")
    print("|---|---|---|--:|---|--:|---|--:|--:|")
    for key in sorted(set(old) & set(new)):
        (ov, on), (nv, nn) = old[key], new[key]
        unit = "ns" if key[0] == "record" else "us"
        r = med(nv) / med(ov)
        rn = med(nn) / med(on) if on and nn else float("nan")
        print("| %s | %s | %s | %.3g | %.3g-%.3g | %.3g | %.3g-%.3g | %.3f | %.3f |" % (
            key[0], key[1], unit, med(ov), min(ov), max(ov), med(nv), min(nv), max(nv), r, rn))
    only = sorted(set(new) - set(old))
    if only:
        print("\nonly in the new build: " + ", ".join("%s/%s" % k for k in only))
    return 0 if old_runs and new_runs else 1


if __name__ == "__main__":
    sys.exit(main())
