#!/usr/bin/env python3
"""Table 4's goals as whole processes: each goal's child job (`sketchlog job`, the process the
main job runs per goal) started again and again, the goals interleaved, and per goal the
median wall time from spawn to exit (process start, set-up and every step included) and the
median peak RSS (the process's VmHWM, as it reports it when done).

Usage: scripts/table4-processes.py [SKETCHLOG_BINARY] [--rounds N] [--out FILE]
       scripts/table4-processes.py [SKETCHLOG_BINARY] --against OTHER_BINARY [--rounds N]
(SKETCHLOG_BINARY defaults to the release build's, target/release/sketchlog; N to 15)

The first form writes FILE (default results/table4-processes.csv), naming the machine. The
second runs OTHER_BINARY's job right after each of SKETCHLOG_BINARY's, round by round, and
prints both medians and their ratios (SKETCHLOG_BINARY over OTHER_BINARY) as a Markdown table:
an A/B comparison of two builds on this machine, in the same moments.
"""
import csv
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

GOALS = ["baseline", "blocking", "vectorization", "loop-perm", "array-packing",
         "cache-blocks", "parallel"]
COLUMNS = ["goal", "rounds", "wall_s_median", "wall_s_min", "wall_s_max",
           "peak_rss_mb_median", "peak_rss_mb_max", "machine"]
ROOT = pathlib.Path(__file__).resolve().parent.parent


def job(goal):
    """The child job of a guided goal, as the main job starts it."""
    return json.dumps({"work": {"Guided": {"goal": goal}},
                       "caps": {"memory_mb": 8000, "time": {"secs": 3600, "nanos": 0}}})


def run(binary, goal):
    """One whole process: (wall seconds, peak RSS MB)."""
    start = time.perf_counter()
    p = subprocess.run([binary, "job", job(goal)], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    done = [json.loads(line)["Done"] for line in p.stdout.splitlines()
            if line.startswith('{"Done"')]
    if p.returncode != 0 or not done:
        sys.exit(f"table4-processes: {binary} failed on {goal}:\n{p.stderr}")
    return wall, done[0]["peak_rss_mb"]


def machine():
    """The CPU as results/machine.txt names it: model, family and model numbers, cores."""
    info = {}
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    return (f"{info.get('model name', '?')} (family {info.get('cpu family', '?')}, "
            f"model {info.get('model', '?')}), {os.cpu_count()} cores")


def arg(args, flag, default):
    if flag in args:
        i = args.index(flag)
        value = args[i + 1]
        del args[i:i + 2]
        return value
    return default


def main():
    args = sys.argv[1:]
    rounds = int(arg(args, "--rounds", "15"))
    out = pathlib.Path(arg(args, "--out", str(ROOT / "results" / "table4-processes.csv")))
    against = arg(args, "--against", None)
    binary = args[0] if args else str(ROOT / "target" / "release" / "sketchlog")
    binaries = [binary] + ([against] if against else [])
    figures = {(b, g): [] for b in binaries for g in GOALS}
    for _ in range(rounds):
        for goal in GOALS:
            for b in binaries:
                figures[(b, goal)].append(run(b, goal))
    median = statistics.median
    if against:
        print(f"| goal | s ({binary}) | s ({against}) | time ratio | MB | MB | RSS ratio |")
        print("|---|---|---|---|---|---|---|")
        for goal in GOALS:
            (ta, ma), (tb, mb) = [
                (median([w for w, _ in figures[(b, goal)]]),
                 median([m for _, m in figures[(b, goal)]])) for b in binaries]
            print(f"| {goal} | {ta:.4f} | {tb:.4f} | {ta / tb:.3f}x | {ma:.1f} | {mb:.1f} "
                  f"| {ma / mb:.3f}x |")
        return
    rows = []
    for goal in GOALS:
        walls = [w for w, _ in figures[(binary, goal)]]
        peaks = [m for _, m in figures[(binary, goal)]]
        rows.append([goal, rounds, f"{median(walls):.4f}", f"{min(walls):.4f}",
                     f"{max(walls):.4f}", f"{median(peaks):.1f}", f"{max(peaks):.1f}",
                     machine()])
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(rows)
    os.replace(tmp, out)
    for row in rows:
        print(",".join(map(str, row)))


if __name__ == "__main__":
    main()
