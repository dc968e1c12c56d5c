#!/usr/bin/env python3
"""The sketch engines side by side on the unguided blocking search (the comparison in docs/src/performance.md).

Usage: scripts/engine-table.py [SKETCHLOG_BINARY] [--caps 10000,100000,1000000]
(SKETCHLOG_BINARY defaults to the release build's, target/release/sketchlog)

For each e-node cap and each engine (scan, egglog, dataflow), runs `sketchlog bench scale
--enodes CAP --sketch-engine E` under /usr/bin/time, one run after the other, and prints a
Markdown table: per iteration of the largest cap's runs, and the cut last iteration of each
smaller cap, the rewrite step and filter of the scan's run, each engine's sketch-query time
with its share of that run's rewrite step, each engine's RSS after the iteration and each
run's peak RSS.
"""
import csv
import io
import re
import subprocess
import sys

ENGINES = ["scan", "egglog", "dataflow"]


def default_binary():
    """The release build's binary (`cargo build --release`)."""
    return "target/release/sketchlog"


def run(binary, cap, engine):
    """The run's rows (one dict per iteration) and its peak RSS in MB."""
    p = subprocess.run(
        ["/usr/bin/time", "-f", "RSS_KB %M", binary, "bench", "scale",
         "--enodes", str(cap), "--sketch-engine", engine],
        capture_output=True, text=True, check=True)
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    peak = int(re.search(r"RSS_KB (\d+)", p.stderr).group(1)) / 1024
    return rows, peak


def main():
    args = sys.argv[1:]
    caps = [10_000, 100_000, 1_000_000]
    if "--caps" in args:
        i = args.index("--caps")
        caps = [int(c) for c in args[i + 1].split(",")]
        del args[i:i + 2]
    binary = args[0] if args else default_binary()
    runs = {(cap, e): run(binary, cap, e) for cap in sorted(caps) for e in ENGINES}
    print("| cap | iteration | e-nodes | rewrite step s (scan run) | filter s (scan run) | "
          + " | ".join(f"check: {e}" for e in ENGINES)
          + " | RSS MB after: " + " / ".join(ENGINES) + " | peak RSS MB (the run) |")
    print("|" + "---|" * (7 + len(ENGINES)))
    largest = max(caps)
    for cap in sorted(caps):
        rows = {e: runs[(cap, e)][0] for e in ENGINES}
        n = min(len(r) for r in rows.values())
        # The largest cap's whole iterations from 10K e-nodes on, then each run's last one.
        first = 0 if cap == largest else n - 1
        for i in range(first, n):
            scan = rows["scan"][i]
            if int(scan["enodes"]) < 10_000:
                continue
            last = i == n - 1
            checks = " | ".join(
                f"{float(rows[e][i]['sketch_s']):.3f} s "
                f"({100 * float(rows[e][i]['sketch_s']) / max(float(rows[e][i]['rewrite_s']), 1e-9):.1f}%)"
                for e in ENGINES)
            rss = " / ".join(f"{float(rows[e][i]['rss_mb']):,.0f}" for e in ENGINES)
            peak = " / ".join(f"{runs[(cap, e)][1]:,.0f}" for e in ENGINES) if last else "-"
            label = f"{cap // 1000:,}K (cut)" if last else "-"
            print(f"| {label} | {scan['iteration']} | {int(scan['enodes']):,} | "
                  f"{float(scan['rewrite_s']):.2f} | {float(scan['filter_s']):.3f} | {checks} | "
                  f"{rss} | {peak} |")


if __name__ == "__main__":
    main()
