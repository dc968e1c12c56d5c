#!/usr/bin/env python3
"""Table 2's efficient encoding beside egg-rise, in one run, interleaved.

Usage: scripts/table2-peer.py EGG_RISE_BINARY [SKETCHLOG_BINARY] [--rounds N]
(SKETCHLOG_BINARY defaults to the release build's, target/release/sketchlog)

egg-rise is Bastacyclop/egg-rise at 06e47b5 built against Bastacyclop/egg at 748d8ae
(reference-implementations.md A.0). Each round runs, for each goal, egg-rise and then
`sketchlog table2-row GOAL` (extraction-based substitution, De Bruijn indices); the
saturation time is what each program reports (egg-rise's runner total, sketchlog's
iterations with their snapshots), the peak RSS is the whole process's, from /usr/bin/time.
Prints the medians and their ratios as a Markdown table, and the median of the rounds' time
ratios (each round's runs are a moment apart, so it is less moved by the machine's drift).
"""
import json
import re
import statistics
import subprocess
import sys

GOALS = [
    ("reduction", "lambda-compose-many"),
    ("fission", "map-fission-fusion"),
    ("binomial", "base-to-scanline"),
]


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
    out, rss = timed([binary, "table2-row", goal])
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
