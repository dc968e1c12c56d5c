#!/usr/bin/env python3
"""Fills the tables of the README and of the book from results/ beside the paper's and the peers' figures.

Usage: scripts/fill-readme-tables.py [--commit BUILD=COMMIT]...
Rewrites README.md and docs/src/*.md between marker comments (`<!-- table2 -->` ... `<!-- /table2 -->`).
results/machine.txt names the machine and build of each table; --commit names a build's commit.
"""
import csv, re, pathlib, sys

PAPER4 = {
    "baseline": "0.5 s, 0.02 GB, 2, 51, 49", "blocking": "7 s, 0.3 GB, 11K, 11K, 7K",
    "vectorization": "7 s, 0.4 GB, 11K, 11K, 7K", "loop-perm": "4 s, 0.3 GB, 6K, 10K, 7K",
    "array-packing": "5 s, 0.4 GB, 9K, 10K, 7K", "cache-blocks": "5 s, 0.5 GB, 9K, 10K, 7K",
    "parallel": "5 s, 0.4 GB, 9K, 10K, 7K",
}
PAPER3 = {
    "baseline": "found, 0.5 s, 0.02 GB", "blocking": "found, >1 h, 35 GB, 4M e-nodes",
    "vectorization": "not found, >1 h, >60 GB", "loop-perm": "not found, >1 h, >60 GB",
    "array-packing": "not found, 35 min, >60 GB", "cache-blocks": "not found, 35 min, >60 GB",
    "parallel": "not found, 35 min, >60 GB",
}
PAPER5 = {
    "baseline": "-", "blocking": "7, 90", "vectorization": "7, 124", "loop-perm": "7, 104",
    "array-packing": "7-12, 121", "cache-blocks": "7-12, 121", "parallel": "7-12, 121",
}

def rows(name, run=pathlib.Path("results")):
    path = run / name
    return list(csv.DictReader(path.open())) if path.exists() else []

def table4():
    return "\n".join(
        f"| {r['goal']} | {r['sketch_guides']} | {r['found']} | {float(r['runtime_s']):.2f} s "
        f"| {r['peak_rss_mb']} MB | {r['rules_applied']} | {r['max_enodes']} | {r['max_eclasses']} "
        f"| {PAPER4[r['goal']]} |" for r in rows("table4.csv"))

def table3():
    return "\n".join(
        f"| {r['goal']} | {r['found']} | {float(r['runtime_s']):.1f} | {r['peak_rss_mb'] or '-'} "
        f"| {r['rules_applied']} | {r['max_enodes']} | {r['max_eclasses']} | {r['iterations']} "
        f"| {r['stop_reason']} | {PAPER3[r['goal']]} |" for r in rows("table3.csv"))

def table5():
    return "\n".join(
        f"| {r['goal']} | {r['sketch_guides'] or '-'} | {r['sketch_goal']} | {r['sketch_sizes']} "
        f"| {r['program_size']} | {PAPER5[r['goal']]} |" for r in rows("table5.csv"))

# The paper's Table 2: rules applied / e-nodes / e-classes of the rows it finds.
PAPER2 = {
    ("reduction", "explicit", "names"): "0.5K / 0.5K / 0.1K",
    ("reduction", "explicit", "debruijn"): "28K / 53K / 25K",
    ("reduction", "extraction", "names"): "0.1K / 0.3K / 0.2K",
    ("reduction", "extraction", "debruijn"): "0.1K / 0.2K / 0.1K",
    ("fission", "explicit", "debruijn"): "39K / 21K / 10K",
    ("fission", "extraction", "names"): "0.2K / 1K / 0.7K",
    ("fission", "extraction", "debruijn"): "0.6K / 0.6K / 0.3K",
    ("binomial", "extraction", "debruijn"): "5K / 3K / 1K",
}
# The build of egg-rise in the Table 2 column, and the one with exact free variables.
EGG_RISE = "06e47b5"
EGG_RISE_EXACT = "06e47b5+exact-free"

def key(r):
    return (r["goal"], r["substitution"], r["binding"])

def counts(r):
    """found / iterations / rules applied / e-nodes / e-classes of a row, or why not found."""
    if r["found"] == "true":
        return (f"yes / {r['iterations']} / {int(r['rules_applied']):,} / {int(r['enodes']):,} / "
                f"{int(r['eclasses']):,}")
    got = f" after {r['iterations']} iterations ({int(r['enodes']):,} e-nodes)" if r.get("enodes") else ""
    return f"**no**: {r['stop_reason']}{got}"

def egg_rise_rows(build):
    return {key(r): r for r in rows("table2-egg-rise.csv") if r["build"] == build}

def encoding(r):
    binding = "De Bruijn" if r["binding"] == "debruijn" else "names"
    return f"{r['substitution']}, {binding}"

def table2():
    peer = egg_rise_rows(EGG_RISE)
    def theirs(r):
        return counts(peer[key(r)]) if key(r) in peer else "-"
    def ours(r):
        cost = (f" / {float(r['saturation_s']) * 1000:.1f} ms / {r['peak_rss_mb']} MB"
                if r["found"] == "true" else f", {r['peak_rss_mb']} MB")
        return counts(r) + cost
    return "\n".join(
        f"| {r['goal']} | {encoding(r)} | {ours(r)} | {theirs(r)} "
        f"| {PAPER2.get(key(r), '**no**, >2000 MB')} |" for r in rows("table2.csv"))

def table2_exact():
    """The explicit De Bruijn rows: sketchlog, egg-rise as published and egg-rise with the
    free variables of sigma and phi computed exactly."""
    published, exact = egg_rise_rows(EGG_RISE), egg_rise_rows(EGG_RISE_EXACT)
    return "\n".join(
        f"| {r['goal']} | {counts(r)} | {counts(published[key(r)]) if key(r) in published else '-'} "
        f"| {counts(exact[key(r)]) if key(r) in exact else '-'} "
        f"| {PAPER2.get(key(r), '**no**, >2000 MB')} |"
        for r in rows("table2.csv") if (r["substitution"], r["binding"]) == ("explicit", "debruijn"))

def codegen():
    def ratio(r):
        x = r["ratio_vs_reference"]
        return "-" if x in ("", "NaN") else f"{x}x"
    def scalar(r):
        s = r.get("scalar_ms", "")
        return "-" if not s else f"{s} ({float(s) / float(r['median_ms']):.2f}x)"
    return "\n".join(
        f"| {r['version']} | {r['threads']} | {r['sizes']} | {r['median_ms']} ({r['min_ms']}) "
        f"| {scalar(r)} | {r['gflops']} | {r['gbytes_s']} | {ratio(r)} | {r['compared'] or '-'} "
        f"| {r['max_rel_error'] or '-'} |" for r in rows("codegen.csv"))

def harris():
    """results/harris.csv: each version beside its scalar lowering, Halide and OpenCV."""
    def peer(r, name):
        ms, ratio = r[f"{name}_ms"], r[f"ratio_vs_{name}"]
        return "-" if not ms else f"{ms} ({ratio}x)"
    return "\n".join(
        f"| {r['version']} | {r['threads']} | {r['width']} x {r['height']} "
        f"| {r['median_ms']} | {r['scalar_ms']} | {peer(r, 'halide')} | {peer(r, 'opencv')} "
        f"| {r['max_rel_error']} |" for r in rows("harris.csv"))

HARRIS_VERSIONS = ["separated-rotated", "rotated", "separated", "line-buffered", "fused"]
HARRIS_SETTINGS = [("1536", "1"), ("1536", "2"), ("4096", "1"), ("4096", "2")]

def runs():
    """results/ and results/cpus/*: each run's directory with the CPU it names (its
    machine.txt), and the instruction set when a run chose one with `--isa`."""
    out = []
    for run in [pathlib.Path("results")] + sorted(pathlib.Path("results/cpus").glob("*")):
        if not (run / "machine.txt").exists():
            continue
        made = dict(line.split(": ", 1) for line in (run / "machine.txt").read_text().splitlines())
        first = made.get("harris", next(iter(made.values())))
        cpu = first.split(", 2 cores")[0].split("; build")[0]
        isa = {"avx2": "AVX2", "avx512": "AVX-512"}.get(first.split("; ")[-1].removesuffix(" code"))
        if isa:  # `reproduce harris --isa`: another instruction set than the CPU's own
            cpu += f", {isa} code"
        out.append((run, cpu))
    return out

def harris_ratios(run):
    """A run's harris.csv: each version's ratio to Halide's schedule per (width, threads)."""
    by = {}
    for r in rows("harris.csv", run):
        if r["ratio_vs_halide"]:
            by.setdefault(r["version"], {})[(r["width"], r["threads"])] = float(r["ratio_vs_halide"])
    return by

def harris_cpus():
    """results/harris.csv and results/cpus/*/harris.csv: each version's ratio to Halide's
    schedule on every CPU measured."""
    out = []
    for run, cpu in runs():
        by = harris_ratios(run)
        for version in HARRIS_VERSIONS:
            cells = [by.get(version, {}).get(k) for k in HARRIS_SETTINGS]
            if all(c is None for c in cells):
                continue
            out.append(f"| {cpu} | {version} | "
                       + " | ".join("-" if c is None else f"{c:.2f}x" for c in cells) + " |")
    return "\n".join(out)

def spread(values, unit, digits=2):
    """`lo-hi unit` of values (ratios: `lox-hix`), or one value when they round alike."""
    lo, hi = (f"{v:.{digits}f}" for v in (min(values), max(values)))
    if lo == hi:
        return lo + unit
    return f"{lo}x-{hi}x" if unit == "x" else f"{lo}-{hi}{unit}"

def cpus():
    """The headline measures of every run in results/ and results/cpus/*, a column per CPU."""
    cols = runs()
    def timed_guides(run):  # versions timed in all four settings (a strategy's C is a guide's)
        return {v: r for v, r in harris_ratios(run).items() if len(r) == len(HARRIS_SETTINGS)
                and not v.endswith(("-strategy", "-mixed"))}
    def harris_best(run):
        by = timed_guides(run)
        if not by:
            return "-"
        best = max(by, key=lambda v: min(by[v].values()))
        return f"{best} {spread(by[best].values(), 'x')}"
    def harris_count(run):
        by = timed_guides(run)
        return f"{sum(min(r.values()) >= 1.2 for r in by.values())} of {len(by)}" if by else "-"
    def steps_cell(run):
        rs = rows("steps.csv", run)
        if not rs:
            return "-"
        worst, median, failed = ratio_spread(rs)
        return f"{worst['ratio_vs_scalar']}x, {median}x ({len(rs)} rows{f', {failed} failed' if failed else ''})"
    def gemm(run):
        by = {r["threads"]: r["ratio_vs_reference"] for r in rows("codegen.csv", run) if r["version"] == "kernel"}
        return f"{by['1']}x / {by['2']}x" if "1" in by and "2" in by else "-"
    def table4_cell(run):
        rs = [r for r in rows("table4.csv", run) if r["goal"] != "baseline"]
        return (f"{spread([float(r['runtime_s']) for r in rs], ' s')}, "
                f"{spread([float(r['peak_rss_mb']) for r in rs], ' MB', 1)}") if rs else "-"
    def processes(run):
        rs = [r for r in rows("table4-processes.csv", run) if r["goal"] != "baseline"]
        return (f"{spread([float(r['wall_s_median']) for r in rs], ' s', 3)}, "
                f"{spread([float(r['peak_rss_mb_max']) for r in rs], ' MB', 1)}") if rs else "-"
    measures = [
        ("Harris: the version fastest in its slowest setting, against Halide", harris_best),
        ("Harris: versions at 1.2x Halide or more in all four settings", harris_count),
        ("Every guide step against its scalar lowering: slowest, median", steps_cell),
        ("GEMM `kernel` against the gemm crate, 1 / 2 threads", gemm),
        ("Table 4's six searches in process: time, peak memory", table4_cell),
        ("Table 4's six searches as whole processes: median time, peak memory", processes),
    ]
    out = ["| measure | " + " | ".join(cpu for _, cpu in cols) + " |",
           "|---|" + "---|" * len(cols)]
    out += [f"| {name} | " + " | ".join(cell(run) for run, _ in cols) + " |" for name, cell in measures]
    return "\n".join(out)

def ratio_spread(rs):
    """Rows of results/steps.csv: the slowest against its scalar lowering, the median ratio
    and how many failed (no ratio)."""
    timed = sorted((r for r in rs if r["ratio_vs_scalar"]), key=lambda r: float(r["ratio_vs_scalar"]))
    if not timed:  # every row of a guide failed (its search, or each step's C)
        return {"ratio_vs_scalar": "-", "step": "-", "sizes": "-"}, "-", len(rs)
    return timed[0], timed[len(timed) // 2]["ratio_vs_scalar"], len(rs) - len(timed)

def steps():
    """results/steps.csv, a row per guide: its steps, rows, the slowest step against its scalar
    lowering and the median ratio."""
    by_guide = {}
    for r in rows("steps.csv"):
        by_guide.setdefault(r["guide"], []).append(r)
    out = []
    for guide, rs in by_guide.items():
        worst, median, failed = ratio_spread(rs)
        out.append(
            f"| {guide} | {len({r['step'] for r in rs})} | {len(rs)}{f' ({failed} failed)' if failed else ''} "
            f"| {worst['ratio_vs_scalar']}x ({worst['step']}, {worst['sizes']}) | {median}x |")
    return "\n".join(out)

def sweep():
    def cell(x):
        return x if x else "-"
    return "\n".join(
        f"| {r['tile']} | {r['width']} | {r['found']} | {r['steps_found']}/{r['steps']} "
        f"| {r['search_s']} | {cell(r['max_enodes'])} | {cell(r['gflops'])} "
        f"| {cell(r['ratio_vs_reference'])} | {r['stop']} |" for r in rows("tiles.csv"))

def shine():
    return "\n".join(
        f"| {r['test']} | {r['goal']} | {r['scala_found']} | {r['found']} | {r['iterations'] or '-'} "
        f"| {r['enodes'] or '-'} | {r['time_s']} | {r['peak_rss_mb'] or '-'} | {r['scala_note']} |"
        for r in rows("shine.csv"))

def egglog_peer():
    """`sketchlog run` beside egglog's binary (scripts/egglog-peer.py)."""
    return "\n".join(
        f"| {r['program']} | {r['egglog_s']} s, {r['egglog_rss_mb']} MB "
        f"| {r['sketchlog_s']} s, {r['sketchlog_rss_mb']} MB "
        f"| {r['time_ratio_of_rounds']}x | {r['rss_ratio']}x |" for r in rows("egglog-peer.csv"))

def auto():
    """A row per target: the guide `guide-auto` found beside the written guide (or the
    unguided search), from results/auto.csv."""
    by_target = {}
    for r in rows("auto.csv"):
        by_target.setdefault(r["target"], {})[r["guide"]] = r
    out = []
    for target, g in by_target.items():
        a, kind = g.get("auto"), "written" if "written" in g else "unguided"
        w = g.get(kind)
        if not a or not w:
            continue
        found = lambda r: "yes" if r["found"] == "true" else f"**no** ({r['found'][7:-1]})"
        steps = a["rule_sets"].split(" > ")
        sets = f"{steps[0]} (each)" if len(steps) > 2 and len(set(steps)) == 1 else a["rule_sets"]
        same = ", the same sets" if kind == "written" and w["rule_sets"] == a["rule_sets"] else ""
        out.append(
            f"| {target} | {found(a)}: {a['steps']} steps, {sets} | {a['largest_enodes'] or '-'} "
            f"| {a['guide_time_s'] or '-'} | {a['search_s'] or '-'} ({a['trials'] or '-'} trials), {a['peak_rss_mb'] or '-'} MB "
            f"| {kind}: {found(w)}, {w['steps'] or '-'} steps{same}, {w['largest_enodes'] or '-'} e-nodes, "
            f"{w['guide_time_s'] or '-'} s, {w['peak_rss_mb'] or '-'} MB |")
    return "\n".join(out)

def elevate():
    """results/elevate.csv: a row per version and approach, beside the Elevate figure the paper
    gives for the version."""
    cell = lambda x: x if x else "-"
    return "\n".join(
        f"| {r['version']} | {r['approach']} | {r['lines']} | {cell(r['rewrite_steps'])} "
        f"| {cell(r['rule_applications'])} | {cell(r['enodes'])} | {r['time_s']} | {r['peak_rss_mb']} "
        f"| {cell(r['same_c_as_guide'])} | {cell(r['paper_steps'])} |" for r in rows("elevate.csv"))

def machine():
    """Which machine and build made each table's committed rows (results/machine.txt), with the
    commit of each build given as --commit BUILD=COMMIT."""
    path = pathlib.Path("results/machine.txt")
    lines = path.read_text().splitlines() if path.exists() else []
    commits = dict(a.split("=", 1) for i, a in enumerate(sys.argv)
                   if i > 0 and sys.argv[i - 1] == "--commit")
    made = {}
    for line in lines:
        table, rest = line.split(": ", 1)
        made.setdefault(rest, []).append(table)
    out = ["The committed rows were made by `reproduce` (`results/machine.txt`):"]
    for rest, tables in sorted(made.items(), key=lambda kv: kv[1]):
        where, build = rest.split("; build ")
        at = f", commit `{commits[build]}`" if build in commits else ""
        out.append(f"- {', '.join(tables)}: {where} (build `{build}`{at})")
    return "\n".join(out)

def fuzz():
    """results/fuzz.txt (the shards of one fuzz run, each a table), summed per kind of input."""
    names = {"rise": "`.rise` files", "sketch": "`.sketch` files", "rules": "`.rules` files",
             "guide": "`.guide` files", "cost": "`.cost` files", "egg": "`.egg` programs",
             "elevate": "`.elevate` files",
             "include graphs": "`.egg` include graphs",
             "REPL sessions": "REPL sessions (`run` on standard input)",
             "low-level programs (bench-c)":
                 "low-level programs through `bench-c` (C compiled, run, validated)"}
    sums = {}
    for line in pathlib.Path("results/fuzz.txt").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not line.startswith("| ") or cells[0] == "input":
            continue
        total = sums.setdefault(cells[0], [0] * (len(cells) - 1))
        for i, c in enumerate(cells[1:]):
            total[i] += int(c)
    rows = list(sums.items()) + [("all", [sum(col) for col in zip(*sums.values())])]
    return "\n".join(f"| {names.get(k, k)} | " + " | ".join(f"{n:,}" for n in v) + " |"
                     for k, v in rows)

def studio_stop():
    """results/studio-stop.csv (scripts/studio-stop.py): how soon the studio's Stop answers on a
    large search, a row per round, with the machine it ran on."""
    rs = [r for r in rows("studio-stop.csv") if r["round"] != "median"]
    body = "\n".join(
        f"| {r['delay_s']} | {int(r['enodes_at_stop']):,} | {int(r['enodes_final']):,} "
        f"| {r['last_iteration_s']} | {r['stop_to_answer_s']} | {r.get('stop_to_idle_s', '-')} "
        f"| {r['slowest_progress_poll_s']} |"
        for r in rs)
    machines = sorted({r["machine"] for r in rs})
    return body + f"\n\nMeasured on {', '.join(machines)}, release build." if rs else body

FILLS = [("table2", table2), ("table2-exact", table2_exact), ("table4", table4), ("table3", table3), ("table5", table5),
         ("codegen", codegen), ("harris", harris), ("harris-cpus", harris_cpus), ("cpus", cpus), ("steps", steps), ("sweep", sweep), ("shine", shine),
         ("egglog-peer", egglog_peer), ("auto", auto), ("elevate", elevate), ("fuzz", fuzz), ("studio-stop", studio_stop),
         ("machine", machine)]

for page in [pathlib.Path("README.md")] + sorted(pathlib.Path("docs/src").glob("*.md")):
    text = page.read_text()
    for marker, fill in FILLS:
        if f"<!-- {marker} -->" in text:
            body = fill()
            text = re.sub(
                rf"(<!-- {marker} -->\n).*?(<!-- /{marker} -->)",
                lambda m: m.group(1) + body + "\n" + m.group(2), text, flags=re.S)
    page.write_text(text)
