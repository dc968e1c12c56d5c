#!/usr/bin/env python3
"""`sketchlog run` beside egglog 3.0.0's own binary, on egglog's heaviest test programs.

Usage: scripts/egglog-peer.py [--programs N] [--rounds R] [--out results/egglog-peer.csv]

The programs are the `.egg` files of the `tests/` folder of the published egglog 3.0.0 crate
(in cargo's registry after a build), run in a scratch copy of that folder (some write files
beside them). A first pass runs egglog's binary once on each and keeps the N slowest
(default 10) that finish within a minute; then each round runs, program by program, egglog's
binary and `sketchlog run` on it, one after the other. Reports the medians of whole-process
wall time and peak RSS (from /usr/bin/time), their ratios, and the median of the rounds'
time ratios (each round's two runs are a moment apart, so it is less moved by the machine's
drift), as a Markdown table and as CSV (written to a temporary file, then renamed).

egglog's binary is installed into target/egglog-ref (as scripts/conformance.sh does) when it
is not there; sketchlog's is the release build's.
"""
import csv
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
EGGLOG = ROOT / "target/egglog-ref/bin/egglog"
SKETCHLOG = ROOT / "target/release/sketchlog"


def egglog_tests():
    """The tests/ folder of egglog 3.0.0 in cargo's registry."""
    home = pathlib.Path(os.environ.get("CARGO_HOME", pathlib.Path.home() / ".cargo"))
    for crate in sorted((home / "registry/src").glob("*/egglog-3.0.0")):
        return crate / "tests"
    sys.exit("egglog 3.0.0 sources not found in cargo's registry (build sketchlog first)")


def ensure_binaries():
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    if not EGGLOG.exists():
        subprocess.run(
            ["cargo", "install", "egglog", "--version", "=3.0.0", "--locked",
             "--root", str(ROOT / "target/egglog-ref"), "--quiet"],
            check=True,
        )


def timed(cmd, cwd, timeout=None):
    """Wall seconds and peak RSS (MB) of a whole process; None if it failed or timed out."""
    start = time.perf_counter()
    try:
        p = subprocess.run(
            ["/usr/bin/time", "-f", "RSS_KB %M"] + cmd,
            cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    wall = time.perf_counter() - start
    rss = re.search(r"RSS_KB (\d+)", p.stderr)
    if p.returncode != 0 or not rss:
        return None
    return wall, int(rss.group(1)) / 1024


def write_csv(path, header, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    os.replace(tmp, path)


def main():
    args = sys.argv[1:]

    def option(name, default, kind=int):
        if name in args:
            i = args.index(name)
            value = kind(args[i + 1])
            del args[i : i + 2]
            return value
        return default

    n = option("--programs", 10)
    rounds = option("--rounds", 3)
    out = ROOT / option("--out", "results/egglog-peer.csv", str)
    if args:
        sys.exit(f"unknown arguments: {' '.join(args)}")
    ensure_binaries()
    with tempfile.TemporaryDirectory() as scratch:
        tests = pathlib.Path(scratch) / "tests"
        shutil.copytree(egglog_tests(), tests)
        first = {}
        for egg in sorted(tests.glob("*.egg")):
            run = timed([str(EGGLOG), egg.name], tests, timeout=60)
            if run:
                first[egg.name] = run[0]
        heaviest = sorted(first, key=first.get, reverse=True)[:n]
        runs = {p: ([], []) for p in heaviest}
        for r in range(rounds):
            for p in heaviest:
                runs[p][0].append(timed([str(EGGLOG), p], tests))
                runs[p][1].append(timed([str(SKETCHLOG), "run", p], tests))
            print(f"round {r + 1} of {rounds} done", file=sys.stderr)
    header = ["program", "egglog_s", "egglog_rss_mb", "sketchlog_s", "sketchlog_rss_mb",
              "time_ratio", "rss_ratio", "time_ratio_of_rounds"]
    rows = []
    for p in heaviest:
        theirs, ours = runs[p]
        if None in theirs or None in ours:
            print(f"{p}: a run failed", file=sys.stderr)
            continue
        (et, er), (st, sr) = ([statistics.median(x) for x in zip(*k)] for k in (theirs, ours))
        per_round = statistics.median(o[0] / t[0] for t, o in zip(theirs, ours))
        rows.append([p, f"{et:.3f}", f"{er:.1f}", f"{st:.3f}", f"{sr:.1f}",
                     f"{st / et:.2f}", f"{sr / er:.2f}", f"{per_round:.2f}"])
    write_csv(out, header, rows)
    print(f"{rounds} rounds, medians; the {len(rows)} slowest of egglog 3.0.0's tests/")
    print("| program | egglog | sketchlog run | time ratio | RSS ratio |")
    print("|---|---|---|---|---|")
    for p, et, er, st, sr, tr, rr, _ in rows:
        print(f"| {p} | {et} s, {er} MB | {st} s, {sr} MB | {tr}x | {rr}x |")


if __name__ == "__main__":
    main()
