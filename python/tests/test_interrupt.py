"""Ctrl-C during a long search: the search stops cleanly and the interpreter goes on."""

import os
import signal
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import sys
    import sketchlog as sl
    started = []
    def progress(stats):
        if not started:
            started.append(1)
            print("started", flush=True)
    try:
        sl.check("programs/matmul.rise:mm", "rules/mm.rules", sketch="programs/mm.sketch:lower5",
                 iterations=1000, enodes=100_000_000, time_s=600, progress=progress)
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
