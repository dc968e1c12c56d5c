"""Ctrl-C during a long search: the search stops cleanly and the interpreter goes on."""

import os
import signal
import subprocess
import sys
import textwrap
import time

# Each child handles Ctrl-C as an interactive interpreter does, whatever it inherits (a
# shell's background job starts with SIGINT ignored, and Python then leaves it so).
CHILD = textwrap.dedent("""
    import signal
    import sys
    import sketchlog as sl
    signal.signal(signal.SIGINT, signal.default_int_handler)
    started = []
    def progress(stats):
        if not started:
            started.append(1)
            print("started", flush=True)
    try:
        sl.check("programs/matmul.rise:mm", "rules/mm.rules", sketch="programs/mm.sketch:lower5",
                 iterations=1000, enodes=100_000_000, time_s=600, memory_mb=4000,
                 progress=progress)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    r = sl.check("programs/mv.rise:mv", "rules/mm.rules:split", sketch="programs/mv.sketch:split")
    print("alive", r.found, flush=True)
""")


def test_sigint_interrupts_a_search_and_the_interpreter_survives():
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started"
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=600)
    finally:
        if child.poll() is None:
            child.kill()
    assert out.split() == ["interrupted", "alive", "True"]
    assert child.returncode == 0



WITHIN = textwrap.dedent("""
    import signal
    import sketchlog as sl
    THRESHOLD = 20_000

    def search(progress, iterations=1000):
        return sl.check("programs/matmul.rise:mm", "rules/mm.rules",
                        sketch="programs/mm.sketch:lower5", iterations=iterations,
                        enodes=100_000_000, time_s=600, memory_mb=4000, progress=progress)

    # The search uninterrupted: the rules each iteration applies, up to the one after the
    # first that ends past THRESHOLD e-nodes (k).
    class Enough(Exception):
        pass
    whole = {}
    def record(stats):
        whole[stats["iteration"]] = stats["rules_applied"]
        if "k" in whole:
            raise Enough()
        if stats["enodes"] > THRESHOLD:
            whole["k"] = stats["iteration"]
    try:
        search(record)
    except Enough:
        pass
    k = whole["k"]

    # The same search to iteration k + 1, SIGINT arriving during it. Python's handler here
    # only counts (raising would hide iteration k + 1's figures).
    received = []
    signal.signal(signal.SIGINT, lambda sig, frame: received.append(sig))
    seen = {}
    def progress(stats):
        seen[stats["iteration"]] = stats["rules_applied"]
        if stats["iteration"] == k:
            print("started", flush=True)
    r = search(progress, iterations=k + 1)
    print(r.stop, len(received), seen.get(k + 1, -1), whole[k + 1], flush=True)
""")


def test_sigint_stops_the_iteration_it_arrives_in():
    child = subprocess.Popen([sys.executable, "-c", WITHIN], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started"
        # Into iteration k + 1's rewrites (which take seconds), past iteration k's callback.
        time.sleep(0.2)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=600)
    finally:
        if child.poll() is None:
            child.kill()
    stop, received, applied, whole = out.split()
    # The search stopped on the signal, before the iteration limit: iteration k + 1 applied
    # fewer rules than it does uninterrupted (or none, stopped before its rewrites). Python's
    # handler ran once.
    assert (stop, received) == ("interrupted", "1"), out
    assert int(applied) < int(whole), out
    assert child.returncode == 0
