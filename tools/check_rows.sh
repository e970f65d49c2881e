#!/bin/sh
# vkc-bench's diagnostics (ctest vkc_bench_rows): VKC_BENCH_ROWS runs only
# the named rows of the batch and chain scenarios, VKC_TIME_CALLS=1 makes
# vkc report its Vulkan calls' times, which vkc-bench prints, and
# VKC_BENCH_CHAIN_PLACES sets a chain row's fixtures. Usage:
#   check_rows.sh VKC_BENCH DIR
# Each run writes a folder of its own under DIR (several at once do not
# meet), removed where every check passed.
set -eu
bench=$1
mkdir -p "$2"
dir=$(mktemp -d "$2/run.XXXXXX")
VKC_BENCH_ROWS=vkc-immediate,raw-record-submit VKC_TIME_CALLS=1 \
  "$bench" --quick --validation --strict --scenario batch --json "$dir/rows.json" \
  > "$dir/rows.txt" 2> "$dir/rows.err"
# Exactly the two rows, at every K the scenario runs, each checked.
python3 - "$dir/rows.json" <<'PY'
import json, sys
recs = json.load(open(sys.argv[1]))
names = sorted({r["variant"].split(" K=")[0] for r in recs})
assert names == ["raw-record-submit", "vkc-immediate"], names
assert all(r["ok"] for r in recs), [r["variant"] for r in recs if not r["ok"]]
ks = sorted({r["x"] for r in recs if r["variant"].startswith("vkc-immediate")})
assert ks == [1, 4, 16, 64, 256, 1024], ks
PY
# The report: a header, and the submits among the timed calls, whose
# histogram adds up to their count.
grep -q "^vkc: VKC_TIME_CALLS: [0-9]* call sites since the last report" "$dir/rows.err"
line=$(grep "^vkc: VKC_TIME_CALLS:   vkQueueSubmit2\? at pool.c" "$dir/rows.err" | head -1)
echo "$line"
echo "$line" | awk -F'[:;,] *' '{
  for (i = 1; i <= NF; ++i) {
    if ($i ~ / calls$/) { split($i, c, " "); n = c[1] }
    if ($i ~ /^(<2|2-10|10-30|>=30) us [0-9]+$/) { split($i, h, " "); s += h[3] }
  }
  if (n < 1 || s != n) { print "histogram " s " != calls " n; exit 1 }
}'
# The chain rows, three fixtures each: every fixture checked (ok), and a
# p50 noted for each, which bench/combine.py's targets read.
VKC_BENCH_ROWS=raw-barrier-sync2,vkc-seq,vkc-seq-spinning VKC_BENCH_CHAIN_PLACES=3 \
  "$bench" --quick --validation --strict --scenario chain --json "$dir/chain.json" \
  > "$dir/chain.txt" 2>&1
python3 - "$dir/chain.json" <<'PY'
import json, re, sys
recs = [r for r in json.load(open(sys.argv[1])) if r["variant"].split(" K=")[0] in
        ("raw-barrier-sync2", "vkc-seq", "vkc-seq-spinning")]
assert len(recs) == 6, [r["variant"] for r in recs]
for r in recs:
    assert r["ok"], (r["variant"], r["note"])
    m = re.search(r"3 fixtures, p50 ns/dispatch each: (\d+) (\d+) (\d+)(;|$)", r["note"])
    assert m and all(int(v) > 0 for v in m.groups()[:3]), (r["variant"], r["note"])
PY
python3 "$(dirname "$0")/../bench/combine.py" "$dir/chain.json" > "$dir/combined.md"
grep "^| chain ns/dispatch, fastest fixture of each row: vkc (waiting spinning) vs best raw" \
  "$dir/combined.md" | grep -Eq "vkc-seq-spinning K=[0-9]+ = [0-9.e+]+ \| vkc-bench raw-barrier-sync2 K=[0-9]+ = [0-9.e+]+ \| [0-9.]+ \| report \| report \|$"
rm -rf "$dir"
echo "check_rows: ok"
