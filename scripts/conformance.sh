#!/usr/bin/env bash
# egglog conformance: runs every .egg program in the tests/ folder of the published egglog
# 3.0.0 crate through `sketchlog run` and through egglog 3.0.0's own binary, under the same
# flags, and reports how many agree: with no flag, with `-j 2` and with `--no-decomp` (same
# standard output, same success or failure), and with `--to-json` (the same JSON file).
#
#   scripts/conformance.sh [--timeout SECONDS] [--out results/conformance.csv]
#
# Builds sketchlog (release) and installs egglog 3.0.0's binary into target/egglog-ref.
# Programs run in a scratch copy of the crate's tests, since some write files beside them.
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
status() { case $1 in 0) echo ok ;; 124) echo timeout ;; *) echo fail ;; esac; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/crate"
cp -r "$crate/tests" "$tmp/crate/tests"
printf 'program,flags,egglog,sketchlog,agree\n' > "$tmp/rows.csv"
total=0; agree=0
cd "$tmp/crate"
while IFS= read -r f; do
  for flags in "" "-j 2" "--no-decomp" "--to-json"; do
    total=$((total + 1))
    json="${f%.egg}.json"
    # shellcheck disable=SC2086  # the flags are words
    timeout "$timeout_s" "$ref" $flags "$f" > "$tmp/ref.out" 2> /dev/null; rc_ref=$?
    [ -f "$json" ] && mv "$json" "$tmp/ref.json"
    # shellcheck disable=SC2086
    timeout "$timeout_s" "$ours" run $flags "$f" > "$tmp/ours.out" 2> /dev/null; rc_ours=$?
    [ -f "$json" ] && mv "$json" "$tmp/ours.json"
    s_ref=$(status $rc_ref); s_ours=$(status $rc_ours)
    same=no
    # Byte-equal outputs need no normalising (one program prints 900 MB).
    if [ "$s_ref" = "$s_ours" ] && [ "$s_ref" != timeout ] \
        && { cmp -s "$tmp/ref.out" "$tmp/ours.out" \
             || cmp -s <(normalise "$tmp/ref.out") <(normalise "$tmp/ours.out"); }; then
      same=yes
      if [ "$flags" = "--to-json" ] && [ "$s_ref" = ok ] \
          && ! cmp -s "$tmp/ref.json" "$tmp/ours.json"; then
        same=no
      fi
    fi
    rm -f "$tmp/ref.json" "$tmp/ours.json"
    if [ $same = yes ]; then
      agree=$((agree + 1))
    else
      echo "DISAGREE: $f $flags (egglog $s_ref, sketchlog $s_ours)" >&2
    fi
    printf '%s,%s,%s,%s,%s\n' "$f" "$flags" "$s_ref" "$s_ours" "$same" >> "$tmp/rows.csv"
  done
done < <(find tests -name '*.egg' | sort)
cd "$root"
mkdir -p "$(dirname "$out")"
mv "$tmp/rows.csv" "$out.tmp" && mv "$out.tmp" "$out"
echo "conformance: $agree of $total runs agree ($((total / 4)) egglog 3.0.0 test programs x 4 flag sets; details in $out)"
[ "$agree" -eq "$total" ]
