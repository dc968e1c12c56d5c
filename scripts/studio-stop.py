#!/usr/bin/env python3
"""How soon Stop ends a large search in `sketchlog studio`, and whether progress keeps coming.

Starts the studio on the matrix multiplication (a copy of programs/ and rules/), runs an
unguided step that grows its e-graph past --enodes e-nodes (the loop-reordered sketch with
only the splitting rules, which never find it), presses Stop (POST /api/stop) as soon as
the progress says the e-graph is that large (or --delays seconds later, one round for each,
so that the request meets each phase of the iteration under way), and times how long the
step's request takes to answer after it (with the stopped step, or with `releasing` while
egglog finishes its rebuild) and how long until the session is idle again, its state holding
the stopped step. Meanwhile it polls the progress as the page does and records the slowest
answer. Prints one CSV row per round, then the medians, to standard output.

    scripts/studio-stop.py [--binary target/release/sketchlog] [--enodes 1000000]
                           [--delays 0,2,4,6,8]
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Studio:
    def __init__(self, binary, directory):
        self.process = subprocess.Popen(
            [binary, "studio", "programs/matmul.rise:mm"],
            cwd=directory,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        url = next((w for w in line.split() if w.startswith("http://")), None)
        if url is None:
            sys.exit(f"studio-stop: no URL in the studio's first line: {line!r}")
        self.base = url.split("/#")[0]
        self.token = url.split("#token=")[1]

    def call(self, path, body=None, timeout=3600):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data)
        request.add_header("x-sketchlog-token", self.token)
        if data is not None:
            request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def close(self):
        self.process.kill()
        self.process.wait()


def step(sketches):
    return {
        "spec": {
            "target": {"kind": "sketch", "name": "reorder1"},
            "rules": ["rules/mm.rules:split"],
            "limits": {"iterations": 100, "enodes": 50_000_000, "time_s": 3600, "memory_mb": None},
            "filter": "",
        },
        "sketches": sketches,
    }


def one_round(studio, sketches, enodes, delay):
    answered = {}

    def search():
        answered["status"], answered["body"] = studio.call("/api/step", step(sketches))
        answered["at"] = time.monotonic()

    searching = threading.Thread(target=search)
    searching.start()
    slowest_poll = 0.0
    while True:
        t = time.monotonic()
        status, progress = studio.call("/api/progress", timeout=60)
        slowest_poll = max(slowest_poll, time.monotonic() - t)
        points = progress.get("points", [])
        if points and points[-1]["enodes"] >= enodes:
            break
        if not searching.is_alive():
            sys.exit(f"studio-stop: the search ended before {enodes} e-nodes: {answered}")
        time.sleep(0.05)
    until = time.monotonic() + delay
    while time.monotonic() < until:
        t = time.monotonic()
        studio.call("/api/progress", timeout=60)
        slowest_poll = max(slowest_poll, time.monotonic() - t)
        time.sleep(0.05)
    stopped = time.monotonic()
    studio.call("/api/stop", {})
    while searching.is_alive():
        t = time.monotonic()
        studio.call("/api/progress", timeout=60)
        slowest_poll = max(slowest_poll, time.monotonic() - t)
        time.sleep(0.05)
    searching.join()
    state = answered["body"]
    if answered["status"] == 202 and state.get("releasing"):
        while studio.call("/api/progress", timeout=60)[1].get("running"):
            time.sleep(0.05)
        _, state = studio.call("/api/state", timeout=60)
    elif answered["status"] != 200:
        sys.exit(f"studio-stop: the step failed: {answered}")
    idle = time.monotonic()
    outcome = state["steps"][0]["outcomes"][0]
    if outcome["stop"] != "interrupted":
        sys.exit(f"studio-stop: the search was not stopped by the request: {outcome}")
    last, before = points[-1], points[-2] if len(points) > 1 else {"seconds": 0.0}
    status, _ = studio.call("/api/remove", {"index": 0})
    if status != 200:
        sys.exit("studio-stop: the stopped step could not be removed")
    return {
        "delay_s": delay,
        "enodes_at_stop": last["enodes"],
        "enodes_final": outcome["enodes"],
        "last_iteration_s": round(last["seconds"] - before["seconds"], 3),
        "stop_to_answer_s": round(answered["at"] - stopped, 3),
        "stop_to_idle_s": round(idle - stopped, 3),
        "slowest_progress_poll_s": round(slowest_poll, 3),
    }


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip().replace(",", " ")
    except OSError:
        pass
    return platform.machine()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(REPO, "target/release/sketchlog"))
    parser.add_argument("--enodes", type=int, default=1_000_000)
    parser.add_argument("--delays", default="0,2,4,6,8")
    args = parser.parse_args()
    try:
        delays = [float(d) for d in args.delays.split(",")]
    except ValueError:
        sys.exit(f"studio-stop: --delays {args.delays}: seconds, separated by commas")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"studio-stop: --binary {args.binary}: not an executable (cargo build --release)")
    directory = tempfile.mkdtemp(prefix="studio-stop-")
    try:
        for sub in ["programs", "rules"]:
            shutil.copytree(os.path.join(REPO, sub), os.path.join(directory, sub))
        with open(os.path.join(REPO, "programs/mm.sketch")) as f:
            sketches = f.read()
        studio = Studio(args.binary, directory)
        try:
            rows = [one_round(studio, sketches, args.enodes, d) for d in delays]
        finally:
            studio.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    machine = f"{cpu_model()} ({os.cpu_count()} cores)"
    fields = list(rows[0])
    print("round," + ",".join(fields) + ",machine")
    for i, row in enumerate(rows, 1):
        print(f"{i}," + ",".join(str(row[f]) for f in fields) + f",{machine}")
    medians = {f: statistics.median(r[f] for r in rows) for f in fields}
    print("median," + ",".join(str(medians[f]) for f in fields) + f",{machine}")


if __name__ == "__main__":
    main()
