#!/usr/bin/env python3
"""Check vkc profile traces (Chrome trace-event JSON) written by test_profile.

Valid JSON; every event has the fields the format needs (complete events
"X": name, cat, ph, pid, tid, ts, dur; metadata "M": name, pid, tid, args);
every GPU event lies inside its submission's GPU span, and that span inside
the submission's CPU interval (the vkQueueSubmit call's start to the end of
the vkc_wait that saw it complete, when there is one), within the clock's
error bound plus 1 ms (test_profile.c says why)."""
import json
import sys

TOL_US = 1000.0


def check(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    other = doc["otherData"]
    tol = TOL_US + other["clock_error_ns"] / 1000.0
    assert isinstance(doc["vkcStats"], list) and doc["vkcStats"], "no statistics"
    sub_gpu, sub_cpu, waits, gpu = {}, {}, {}, []
    names = {}
    for e in events:
        for k in ("name", "ph", "pid", "tid"):
            assert k in e, f"{path}: event without {k}: {e}"
        if e["ph"] == "M":
            assert "args" in e, e
            if e["name"] == "thread_name":
                names[e["tid"]] = e["args"]["name"]
            continue
        assert e["ph"] == "X", e
        for k in ("cat", "ts", "dur", "args"):
            assert k in e, f"{path}: event without {k}: {e}"
        assert e["dur"] >= 0, e
        v = e["args"]["submission"]
        span = (e["ts"], e["ts"] + e["dur"])
        if e["cat"] == "submission":
            sub_gpu[v] = span
        elif e["cat"] == "submit":
            sub_cpu[v] = span
        elif e["cat"] == "wait":
            waits[v] = span
        if e["args"]["gpu"]:
            gpu.append((e, v, span))
    for tid in {e["tid"] for e in events if e["ph"] == "X"}:
        assert tid in names, f"{path}: lane {tid} has no thread_name"
    assert sub_gpu, f"{path}: no GPU submissions"
    for e, v, (a, b) in gpu:
        s = sub_gpu[v]
        assert s[0] <= a + 1e-3 and b <= s[1] + 1e-3, f"{path}: {e} outside submission {s}"
    for v, (a, b) in sub_gpu.items():
        c = sub_cpu[v]
        assert a + tol >= c[0], f"{path}: submission {v} starts {c[0] - a} us before its submit"
        if v in waits:
            w = waits[v]
            assert b <= w[1] + tol, f"{path}: submission {v} ends {b - w[1]} us after its wait"
    print(f"{path}: {len(events)} events, {len(sub_gpu)} submissions, "
          f"utilisation {other['utilisation']:.3f}, clock {other['clock']}: ok")


for p in sys.argv[1:]:
    check(p)
