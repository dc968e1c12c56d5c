#!/usr/bin/env bash
# egglog conformance: runs every .egg program in the tests/ folder of the published egglog
# 3.0.0 crate through `sketchlog run` and through egglog 3.0.0's own binary, and reports how
# many agree (same standard output, same success or failure).
#
#   scripts/conformance.sh [--timeout SECONDS] [--out results/conformance.csv]
#
# Builds sketchlog (release) and installs egglog 3.0.0's binary into target/egglog-ref.
set -u
cd "$(dirname "$0")/.."
root=$(pwd)
timeout_s=300
out=results/conformance.csv
while [ $# -gt 0 ]; do
  case "$1" in
    --timeout) timeout_s=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

cargo build --release --quiet || exit 2
ref="$root/target/egglog-ref/bin/egglog"
if [ ! -x "$ref" ]; then
  cargo install egglog --version =3.0.0 --locked --root "$root/target/egglog-ref" --quiet || exit 2
fi
ours="$root/target/release/sketchlog"

crate=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -type d -name 'egglog-3.0.0' | head -n 1)
if [ -z "$crate" ]; then
  echo "egglog 3.0.0 sources not found in cargo's registry" >&2
  exit 2
fi

# `print-stats` reports timings (and lists rules sorted by time): they differ between two
# runs of egglog itself. Durations are masked and the per-rule lines compared as a set.
normalise() {
  sed -E 's/[0-9]+\.[0-9]+s\b/T/g' "$1" | grep -v 'search and apply'
  sed -E 's/[0-9]+\.[0-9]+s\b/T/g' "$1" | grep 'search and apply' | sort
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'program,egglog,sketchlog,agree\n' > "$tmp/rows.csv"
total=0; agree=0
cd "$crate"
while IFS= read -r f; do
  total=$((total + 1))
  timeout "$timeout_s" "$ref" "$f" > "$tmp/ref.out" 2> /dev/null; rc_ref=$?
  timeout "$timeout_s" "$ours" run "$f" > "$tmp/ours.out" 2> /dev/null; rc_ours=$?
  status() { case $1 in 0) echo ok ;; 124) echo timeout ;; *) echo fail ;; esac; }
  s_ref=$(status $rc_ref); s_ours=$(status $rc_ours)
  same=no
  if [ "$s_ref" = "$s_ours" ] && [ "$s_ref" != timeout ] && cmp -s <(normalise "$tmp/ref.out") <(normalise "$tmp/ours.out"); then
    same=yes; agree=$((agree + 1))
  else
    echo "DISAGREE: $f (egglog $s_ref, sketchlog $s_ours)" >&2
  fi
  printf '%s,%s,%s,%s\n' "$f" "$s_ref" "$s_ours" "$same" >> "$tmp/rows.csv"
done < <(find tests -name '*.egg' | sort)
cd "$root"
mkdir -p "$(dirname "$out")"
mv "$tmp/rows.csv" "$out.tmp" && mv "$out.tmp" "$out"
echo "conformance: $agree of $total egglog 3.0.0 test programs agree (details in $out)"
[ "$agree" -eq "$total" ]
