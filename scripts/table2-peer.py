#!/usr/bin/env python3
"""Table 2 beside egg-rise: its counts on every row, and the efficient encoding's time
in one run, interleaved.

Usage: scripts/table2-peer.py EGG_RISE_BINARY [SKETCHLOG_BINARY] [--rounds N]
       scripts/table2-peer.py --counts EGG_RISE_BINARY BUILD [--out FILE]
(SKETCHLOG_BINARY defaults to the release build's, target/release/sketchlog)

`--counts` runs egg-rise once on every goal with every encoding, under the paper's caps
(2 GB of address space, 240 s), and writes its figures as the rows of BUILD (a name for the
binary: `06e47b5`, or `06e47b5+exact-free` for the build with scripts/egg-rise-exact-free.patch)
in FILE (default results/table2-egg-rise.csv), keeping the other builds' rows. egg counts an
iteration in which only the goal check ran; the rows do not, as sketchlog's do not. Rules
applied are egg's: the applications that changed the e-graph. E-nodes are the canonical
e-nodes (egg's "nodes"), not its memo.

egg-rise is Bastacyclop/egg-rise at 06e47b5 built against Bastacyclop/egg at 748d8ae
(<https://github.com/Bastacyclop/egg-rise>). Each round runs, for each goal, egg-rise and then
the row's child `sketchlog job` (extraction-based substitution, De Bruijn indices); the
saturation time is what each program reports (egg-rise's runner total, sketchlog's
iterations with their snapshots), the peak RSS is the whole process's, from /usr/bin/time.
Prints the medians and their ratios as a Markdown table, and the median of the rounds' time
ratios (each round's runs are a moment apart, so it is less moved by the machine's drift).
"""
import csv
import json
import os
import pathlib
import re
import resource
import statistics
import subprocess
import sys

GOALS = [
    ("reduction", "lambda-compose-many"),
    ("fission", "map-fission-fusion"),
    ("binomial", "base-to-scanline"),
]


ENCODINGS = [
    (substitution, binding)
    for substitution in ("explicit", "extraction")
    for binding in ("names", "debruijn")
]
COUNT_COLUMNS = [
    "build", "goal", "substitution", "binding", "found", "iterations", "rules_applied",
    "enodes", "eclasses", "saturation_s", "peak_rss_mb", "stop_reason",
]
MEMORY_BYTES = 2000 * 1024 * 1024
TIME_S = 240


def capped():
    """In the child: the paper's memory cap, as address space."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def count_row(binary, goal, peer_goal, substitution, binding):
    """egg-rise's figures on one goal with one encoding, as a row of COUNT_COLUMNS."""
    peer_binding = "DeBruijn" if binding == "debruijn" else "name"
    row = {"goal": goal, "substitution": substitution, "binding": binding, "found": "false"}
    try:
        p = subprocess.run(
            ["/usr/bin/time", "-f", "RSS_KB %M", binary, peer_goal, substitution, peer_binding],
            capture_output=True, text=True, timeout=TIME_S, preexec_fn=capped,
        )
    except subprocess.TimeoutExpired:
        return {**row, "stop_reason": "time-limit"}
    out = p.stdout + p.stderr
    rss = re.search(r"RSS_KB (\d+)", p.stderr)
    row["peak_rss_mb"] = f"{int(rss.group(1)) / 1024:.1f}" if rss else ""
    if 'Stop reason: Other("Done")' not in out:
        return {**row, "stop_reason": "memory-limit" if p.returncode else "not-found"}
    size = re.search(r"Egraph size: (\d+) nodes, (\d+) classes", out)
    return {
        **row,
        "found": "true",
        # The last iteration ran the goal check alone.
        "iterations": int(re.search(r"Iterations: (\d+)", out).group(1)) - 1,
        "rules_applied": re.search(r"applied rules: (\d+)", out).group(1),
        "enodes": size.group(1),
        "eclasses": size.group(2),
        "saturation_s": f"{float(re.search(r'Total time: ([0-9.e-]+)', out).group(1)):.6f}",
        "stop_reason": "found",
    }


def counts(binary, build, out):
    """Writes egg-rise's rows as BUILD's in `out` (through a temporary file)."""
    out = pathlib.Path(out)
    kept = []
    if out.exists():
        kept = [r for r in csv.DictReader(out.open()) if r["build"] != build]
    rows = []
    for goal, peer_goal in GOALS:
        for substitution, binding in ENCODINGS:
            row = {"build": build, **count_row(binary, goal, peer_goal, substitution, binding)}
            print(",".join(str(row.get(c, "")) for c in COUNT_COLUMNS), flush=True)
            rows.append(row)
    tmp = out.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, COUNT_COLUMNS)
        w.writeheader()
        w.writerows(kept + rows)
    os.replace(tmp, out)


def timed(cmd):
    """The command's output and its peak RSS in MB."""
    p = subprocess.run(
        ["/usr/bin/time", "-f", "RSS_KB %M"] + cmd,
        capture_output=True,
        text=True,
        check=True,
    )
    rss = int(re.search(r"RSS_KB (\d+)", p.stderr).group(1)) / 1024
    return p.stdout + p.stderr, rss


def egg_rise(binary, goal):
    out, rss = timed([binary, goal, "extraction", "DeBruijn"])
    total = float(re.search(r"Total time: ([0-9.e-]+)", out).group(1))
    return total, rss


def sketchlog(binary, goal):
    # The row `reproduce table2` runs in a child process, as it runs it (`sketchlog job`).
    work = {"work": {"Table2": {"goal": goal, "substitution": "extraction", "binding": "debruijn"}},
            "caps": {"memory_mb": 2000, "time": {"secs": 240, "nanos": 0}}}
    out, rss = timed([binary, "job", json.dumps(work)])
    for line in out.splitlines():
        if line.startswith('{"Row"'):
            row = json.loads(line)["Row"]
            assert row["found"], f"sketchlog did not find {goal}"
            return row["saturation_s"], rss
    raise RuntimeError(f"no row for {goal}:\n{out}")


def release_binary():
    """The release build's binary (`cargo build --release`)."""
    return "target/release/sketchlog"


def main():
    args = sys.argv[1:]
    if args and args[0] == "--counts":
        out = "results/table2-egg-rise.csv"
        if "--out" in args:
            i = args.index("--out")
            out = args[i + 1]
            del args[i : i + 2]
        counts(args[1], args[2], out)
        return
    rounds = 7
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i : i + 2]
    peer = args[0]
    ours = args[1] if len(args) > 1 else release_binary()
    runs = {g: ([], []) for g, _ in GOALS}
    for _ in range(rounds):
        for goal, peer_goal in GOALS:
            runs[goal][0].append(egg_rise(peer, peer_goal))
            runs[goal][1].append(sketchlog(ours, goal))
    print(f"{rounds} rounds, medians")
    print(
        "| goal | egg-rise: saturation, peak RSS | sketchlog: saturation, peak RSS "
        "| ratio: time, RSS | time ratio, median of the rounds' |"
    )
    print("|---|---|---|---|---|")
    for goal, _ in GOALS:
        (pt, pr), (st, sr) = (
            [statistics.median(x) for x in zip(*runs[goal][k])] for k in (0, 1)
        )
        # The machine's speed drifts: each round's ratio compares runs a moment apart.
        per_round = statistics.median(
            s[0] / p[0] for p, s in zip(runs[goal][0], runs[goal][1])
        )
        print(
            f"| {goal} | {pt * 1e3:.2f} ms, {pr:.1f} MB | {st * 1e3:.2f} ms, {sr:.1f} MB "
            f"| {st / pt:.2f}x, {sr / pr:.2f}x | {per_round:.2f}x |"
        )


if __name__ == "__main__":
    main()
