"""A memory limit holds inside an iteration: the search stops firing matches once the
process reaches it, instead of finishing an iteration that triples the e-graph."""

import subprocess
import sys
import textwrap

# In a process of its own, so that its peak is this search's alone.
CHILD = textwrap.dedent("""
    import resource
    import sketchlog as sl
    r = sl.check("programs/matmul.rise:mm", "rules/mm.rules", sketch="programs/mm.sketch:lower5",
                 iterations=1000, enodes=100_000_000, time_s=600, memory_mb=300)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(r.stop, r.iterations, round(peak_mb), flush=True)
""")


def test_a_memory_limit_stops_the_iteration_it_is_reached_in():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    stop, iterations, peak_mb = out.stdout.split()
    assert stop == "memory-limit", out.stdout
    # The iteration that reaches 300 MB grows the e-graph twelvefold (to 2.4M e-nodes) and
    # would end at about 1.6 GB; cut, its matching and rebuild end a little past the limit.
    assert int(peak_mb) < 600, out.stdout
    assert int(iterations) >= 4, out.stdout
