# Sourced by the short H200 scripts (run_coop_h200.sh, run_resident_h200.sh)
# after they set $out and status=0: step NAME CMD... runs CMD bounded by
# 240 s with its output in $out/NAME.txt, and adds one line to
# $out/summary.txt; a failing step prints its tail and sets status=1.
step() {
  local name=$1
  shift
  local t0=$SECONDS
  timeout 240 "$@" > "$out/$name.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc ($((SECONDS - t0)) s)" | tee -a "$out/summary.txt"
  [ $rc -eq 0 ] || { tail -25 "$out/$name.txt"; status=1; }
}
