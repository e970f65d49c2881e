#!/usr/bin/env python3
"""PyTorch side of vkc-bench: the scenarios where PyTorch adds something.

    python3 torch_ref.py [--quick] [--json FILE]

Records use vkc-bench's JSON schema (source "torch-ref"):
  reuse:     torch-op-sync        one tiny in-place op + torch.cuda.synchronize()
  bandwidth: torch-copy           dst.copy_(src) over 1 GiB (device to device)
  fusion:    torch-eager L=..     L elementwise steps x = x * 0.5 + (s + 1), eager
             torch-compile L=..   the same under torch.compile
Every variant checks its result against a CPU reference (ok). Times are CPU
wall clock of the work + torch.cuda.synchronize(), like vkc-bench's; GPU
times from CUDA events go into the note.
"""
import argparse
import json
import math
import sys
import time
import traceback


def pct(sorted_ns, p):
    if not sorted_ns:
        return None
    rank = math.ceil(p / 100.0 * len(sorted_ns))
    return sorted_ns[max(0, min(len(sorted_ns) - 1, rank - 1))]


class Bench:
    def __init__(self, quick):
        import torch

        self.torch = torch
        self.quick = quick
        self.records = []
        props = torch.cuda.get_device_properties(0)
        self.device = props.name
        self.driver = "torch %s, CUDA %s" % (torch.__version__, torch.version.cuda)

    def n(self, quick, full):
        return quick if self.quick else full

    def record(self, scenario, variant, baseline, ns=None, **kw):
        r = {
            "source": "torch-ref", "scenario": scenario, "variant": variant,
            "baseline": baseline, "device": self.device, "driver": self.driver,
            "quick": self.quick, "iterations": 0, "p50_us": None, "p95_us": None,
            "p99_us": None, "mean_us": None, "min_us": None, "max_us": None,
            "per_dispatch_ns": None, "gpu_per_dispatch_ns": None, "gbps": None,
            "x": None, "x_name": "", "barriers": None, "expected_barriers": None,
            "ok": True, "skipped": False, "note": "",
        }
        if ns:
            s = sorted(ns)
            r.update(iterations=len(s), p50_us=pct(s, 50) / 1e3, p95_us=pct(s, 95) / 1e3,
                     p99_us=pct(s, 99) / 1e3, mean_us=sum(s) / len(s) / 1e3,
                     min_us=s[0] / 1e3, max_us=s[-1] / 1e3)
        r.update(kw)
        self.records.append(r)
        state = "ok" if r["ok"] else "FAILED: " + r["note"]
        print("[torch] %s %s p50 %s us %s" % (scenario, variant, r["p50_us"], state),
              file=sys.stderr)
        return r

    def time(self, fn, iters, warm):
        """Wall ns and GPU ns (events) per call of fn, synchronising each time."""
        torch = self.torch
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        wall, gpu = [], []
        for i in range(warm + iters):
            t0 = time.perf_counter_ns()
            e0.record()
            fn()
            e1.record()
            torch.cuda.synchronize()
            t1 = time.perf_counter_ns()
            if i >= warm:
                wall.append(t1 - t0)
                gpu.append(e0.elapsed_time(e1) * 1e6)
        return wall, sorted(gpu)[len(gpu) // 2]

    # ---- scenarios ------------------------------------------------------------

    def roundtrip(self):
        torch = self.torch
        x = torch.zeros(64, dtype=torch.int32, device="cuda")
        iters, warm = self.n(200, 5000), self.n(20, 200)
        wall, _ = self.time(lambda: x.add_(1), iters, warm)
        got = x.cpu()
        ok = bool((got == warm + iters).all())
        self.record("reuse", "torch-op-sync", "naive/raw-naive", wall, ok=ok,
                    note="" if ok else "x = %d, want %d" % (int(got[0]), warm + iters))

    def bandwidth(self):
        torch = self.torch
        nbytes = (16 << 20) if self.quick else (1 << 30)
        n = nbytes // 4
        src = torch.arange(n, dtype=torch.int32, device="cuda")
        dst = torch.zeros_like(src)
        R = self.n(2, 8)

        def fn():
            for _ in range(R):
                dst.copy_(src)

        wall, gpu = self.time(fn, self.n(5, 30), self.n(1, 3))
        ok = bool(torch.equal(dst, src))
        s = sorted(wall)
        per = pct(s, 50) / R
        self.record("bandwidth", "torch-copy", "bandwidth/raw-copy-1per", wall, ok=ok,
                    per_dispatch_ns=per, gpu_per_dispatch_ns=gpu / R, gbps=2 * nbytes / per,
                    note="GPU %.1f GB/s" % (2 * nbytes / (gpu / R)))
        del src, dst

    def fusion(self):
        torch = self.torch
        nbytes = (4 << 20) if self.quick else (1 << 30)
        n = nbytes // 4
        iters, warm = self.n(5, 30), self.n(1, 3)
        base = torch.rand(n, dtype=torch.float32, device="cuda")
        for L in (1, 2, 4, 8, 16):
            def chain(x, L=L):
                for s in range(L):
                    x = x * 0.5 + float(s + 1)
                return x

            variants = [("torch-eager", chain)]
            try:
                variants.append(("torch-compile", torch.compile(chain)))
            except Exception as e:  # torch.compile unavailable
                self.record("fusion", "torch-compile L=%d" % L, "fusion/raw-unfused L=%d" % L,
                            ok=False, note="torch.compile: %s" % e, x=L, x_name="steps")
            for name, fn in variants:
                variant = "%s L=%d" % (name, L)
                try:
                    out = {}

                    def run():
                        out["y"] = fn(base)

                    wall, gpu = self.time(run, iters, warm)
                    # CPU reference in float64 on both ends of the vector
                    ok, note = True, "GPU %.1f us" % (gpu / 1e3)
                    y = out["y"]
                    for sl in (slice(0, 4096), slice(n - 4096, n)):
                        ref = base[sl].double().cpu()
                        for s in range(L):
                            ref = ref * 0.5 + (s + 1)
                        if not torch.allclose(y[sl].double().cpu(), ref, rtol=1e-5, atol=1e-5):
                            ok, note = False, "result differs from the CPU reference"
                    self.record("fusion", variant, "fusion/raw-unfused L=%d" % L, wall, ok=ok,
                                note=note, x=L, x_name="steps")
                except Exception as e:
                    self.record("fusion", variant, "fusion/raw-unfused L=%d" % L, ok=False,
                                note="%s: %s" % (type(e).__name__, str(e)[:200]), x=L,
                                x_name="steps")
        del base


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda is not available")
    except Exception as e:
        print("torch_ref: %s" % e, file=sys.stderr)
        return 2
    b = Bench(a.quick)
    print("torch_ref: %s, %s" % (b.device, b.driver), file=sys.stderr)
    for step in (b.roundtrip, b.bandwidth, b.fusion):
        try:
            step()
        except Exception as e:
            traceback.print_exc()
            b.record(step.__name__, "torch", "", ok=False, note="%s: %s" % (type(e).__name__, e))
    text = json.dumps(b.records, indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    failed = sum(1 for r in b.records if not r["ok"])
    print("torch_ref: %d records, %d failed" % (len(b.records), failed), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
