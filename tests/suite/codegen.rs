//! C code generation: generated programs compile, run and agree with the interpreter.

use crate::common;

use common::{assert_close, def, matmul, term, Rng};
use sketchlog::codegen::emit::{lowered_c, program_c, Lowering};
use sketchlog::codegen::run::{
    check, compile, compile_with_scalar, COptions, Expected, RoundLength,
};
use sketchlog::codegen::sequential;
use sketchlog::codegen::target::Target;
use sketchlog::rise::term::Term;
use std::rc::Rc;

fn compiles_and_computes_matmul(name: &str, (m, n, k): (usize, usize, usize)) {
    let p = def("programs/matmul-lowlevel.rise", name);
    let sizes = [m as i64, n as i64, k as i64];
    let opts = COptions::default();
    let exe = compile(&p, &sizes, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut rng = Rng(3);
    let (a, b) = (rng.f32s(m * k), rng.f32s(k * n));
    let (out, times) = exe.run(&[a.clone(), b.clone()], &opts).unwrap();
    assert_eq!(times.len(), 1);
    assert_close(&out, &matmul(&a, &b, m, n, k), 1e-4);
}

#[test]
fn baseline_compiles_and_computes_the_product() {
    compiles_and_computes_matmul("baseline", (64, 32, 96));
}

#[test]
fn parallel_rows_compile_with_an_omp_loop() {
    let p = def("programs/matmul-lowlevel.rise", "parallelRows");
    let c = program_c("mm", &p, &[32, 32, 32]).unwrap().c;
    assert!(c.contains("#pragma omp parallel for"), "{c}");
    compiles_and_computes_matmul("parallelRows", (32, 64, 8));
}

#[test]
fn a_high_level_map_is_an_error_naming_it() {
    let p = def("programs/matmul.rise", "mm");
    let err = program_c("mm", &p, &[32, 32, 32]).unwrap_err().to_string();
    assert!(err.contains("high-level primitive `reduce`"), "{err}");
    assert!(err.contains(" in `"), "{err}");
}

/// The program a goal's guide finds, lowered to sequential loops where it says nothing else.
fn found(goal: &str) -> std::rc::Rc<sketchlog::rise::term::Term> {
    let g = sketchlog::guide::parse::load_guide(format!("programs/{goal}.guide").as_ref()).unwrap();
    let steps = sketchlog::guide::run(&g, |_, _| {}, |_, _| {}).unwrap();
    sequential(steps.last().unwrap().term.as_ref().unwrap())
}

/// The C of a goal's found program at 64^3.
fn found_c(goal: &str) -> String {
    program_c("mm", &found(goal), &[64, 64, 64]).unwrap().c
}

/// Compiles a goal's found program and checks it at a square and a non-square size.
fn found_program_computes_the_product(goal: &str) {
    let p = found(goal);
    for (m, n, k) in [(64, 64, 64), (64, 32, 96)] {
        let sizes = [m as i64, n as i64, k as i64];
        let opts = COptions {
            threads: 2,
            ..COptions::default()
        };
        let exe = compile(&p, &sizes, &opts).unwrap_or_else(|e| panic!("{goal}: {e}"));
        let mut rng = Rng(5);
        let (a, b) = (rng.f32s(m * k), rng.f32s(k * n));
        let (out, _) = exe.run(&[a.clone(), b.clone()], &opts).unwrap();
        assert_close(&out, &matmul(&a, &b, m, n, k), 1e-4);
    }
}

#[test]
fn found_baseline_and_blocking_compile_and_compute_the_product() {
    found_program_computes_the_product("baseline");
    found_program_computes_the_product("blocking");
}

#[test]
fn found_vectorization_and_loop_perm_compile_and_compute_the_product() {
    found_program_computes_the_product("vectorization");
    found_program_computes_the_product("loop-perm");
}

#[test]
fn found_packing_versions_compile_and_compute_the_product() {
    for goal in [
        "array-packing",
        "cache-blocks",
        "parallel",
        "kernel",
        "parallel-packed",
    ] {
        found_program_computes_the_product(goal);
    }
}

#[test]
fn reproduce_codegen_writes_every_version_validated_beside_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let status = common::sketchlog(&[])
        .args(["reproduce", "codegen", "--size", "32", "--dir"])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let csv = std::fs::read_to_string(dir.path().join("codegen.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    // 7 matrix products, the register-blocked kernel and parallel-packed, 4 matrix-vector
    // products, 2 binomial filters, 4 separable convolutions, on 1 and 2 threads, and the
    // reference GEMM on each.
    assert_eq!(rows.len(), 40, "{csv}");
    for r in rows.iter().filter(|r| !r[0].starts_with("reference")) {
        let err: f64 = r[col("max_rel_error")].parse().unwrap();
        assert!(err < 1e-3, "{r:?}");
        // Each version's scalar lowering is validated and timed beside it.
        let scalar: f64 = r[col("scalar_ms")].parse().unwrap();
        assert!(scalar > 0.0, "{r:?}");
    }
    // Every matrix product computes the reference's product, so it has a ratio to it; the
    // stencils do not (an empty cell).
    for r in &rows {
        let cell = r[col("ratio_vs_reference")];
        let ratio: Option<f64> = (!cell.is_empty()).then(|| cell.parse().unwrap());
        let stencil = r[0].starts_with("binomial") || r[0].starts_with("separable");
        assert_eq!(!stencil, ratio.is_some(), "{r:?}");
        assert!(ratio.is_none_or(f64::is_finite), "{r:?}");
    }
    // The flop count comes from the program: 2 m n k for a product, 2 m k for mv-blocking.
    let flops = |version: &str| rows.iter().find(|r| r[0] == version).unwrap()[col("flops")];
    assert_eq!(flops("baseline"), (2 * 32 * 32 * 32).to_string());
    assert_eq!(flops("mv-blocking"), (2 * 128 * 128).to_string());
}

#[test]
fn validation_rejects_a_program_that_computes_something_else() {
    // The C of a matrix product, checked against a product with B transposed (the same
    // buffer sizes): never accepted, however the programs are shaped.
    let p = def("programs/matmul-lowlevel.rise", "baseline");
    let transposed = sequential(&common::term(
        "nfun m n k => fun (a : m.k.f32) (b : n.k.f32) => \
           map (fun ak => map (fun bk => reduce add 0.0 (map (fun x => mul (fst x) (snd x)) (zip ak bk))) b) a",
    ));
    let opts = COptions::default();
    let exe = compile(&p, &[16, 16, 16], &opts).unwrap();
    let err = sketchlog::codegen::run::validate(&exe, &transposed, &opts).unwrap_err();
    assert_eq!(err.exit_code(), 1, "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("out[") && msg.contains("above the tolerance"),
        "{msg}"
    );
    // Against its own meaning it passes, with every element compared.
    let ok = sketchlog::codegen::run::validate(&exe, &p, &opts).unwrap();
    assert_eq!(ok.compared, 256);
}

#[test]
fn a_large_program_that_is_not_a_product_is_checked_on_sampled_elements() {
    // 1024 x 1024 binomial filter: too large to interpret whole, so the interpreter computes
    // only the sampled output elements (and what they depend on).
    let p = sequential(&def("programs/binomial.rise", "start"));
    let opts = COptions::default();
    let exe = compile(&p, &[1024, 1024], &opts).unwrap();
    let r = sketchlog::codegen::run::validate(&exe, &p, &opts).unwrap();
    assert!(
        r.compared < r.output.len() && r.compared > 50,
        "{}",
        r.compared
    );
    assert!(r.max_rel_error < 1e-5, "{}", r.max_rel_error);
}

/// `bench-c --validate` checks at each thread count without timing; at sizes that divide
/// no tile, and with timing flags refused.
#[test]
fn bench_c_validates_without_timing() {
    let out = common::output(&[
        "bench-c",
        "programs/mv.rise:mv",
        "--sizes",
        "101,37",
        "--threads",
        "1,2",
        "--validate",
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert_eq!(
        said.matches("valid, max relative error").count(),
        2,
        "{said}"
    );
    assert!(!said.contains("median"), "{said}");
    let out = common::output(&[
        "bench-c",
        "programs/mv.rise:mv",
        "--validate",
        "--rounds",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// A build that times its stages (`COptions::stages`) computes the same product and reports
/// each stored stage, its loops run once a call; the C of a build that does not has no clock.
#[test]
fn a_build_timing_its_stages_reports_each_stored_stage() {
    let p = found("array-packing");
    let sizes = [64, 64, 64];
    let opts = COptions {
        stages: true,
        runs: 3,
        ..COptions::default()
    };
    let exe = compile(&p, &sizes, &opts).unwrap();
    let mut rng = Rng(5);
    let (a, b) = (rng.f32s(64 * 64), rng.f32s(64 * 64));
    let (out, _) = exe.run(&[a.clone(), b.clone()], &opts).unwrap();
    assert_close(&out, &matmul(&a, &b, 64, 64, 64), 1e-4);
    let stages = exe.stage_times().unwrap();
    assert!(!stages.is_empty());
    for s in &stages {
        assert_eq!(s.stage.depth, 0, "{s:?}");
        assert_eq!(s.runs_per_call, 1.0, "{s:?}");
        assert!(s.ms_per_call >= 0.0, "{s:?}");
    }
    let target = (Lowering::Vector, Target::native());
    let staged = sketchlog::codegen::emit::lowered_c_staged("mm", &p, &sizes, target, true);
    let staged = staged.unwrap();
    assert_eq!(staged.stages.len(), stages.len());
    assert_eq!(
        staged.c.matches("rise_stage_done(").count(),
        stages.len() + 1
    );
    assert!(!program_c("mm", &p, &sizes)
        .unwrap()
        .c
        .contains("rise_stage"));
}

/// `bench-c --stages` prints, at each thread count, each stored stage's time and what is
/// outside the stages.
#[test]
fn bench_c_prints_where_the_time_goes_stage_by_stage() {
    let out = common::output(&[
        "bench-c",
        "programs/array-packing.guide",
        "--size",
        "64",
        "--threads",
        "1,2",
        "--rounds",
        "1",
        "--runs",
        "1",
        "--stages",
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert_eq!(said.matches("    stages (").count(), 2, "{said}");
    assert_eq!(said.matches("outside the stages: ").count(), 2, "{said}");
    assert!(said.contains("its loops run once a run"), "{said}");
}

/// `bench-c --peer`: the command runs once per round with the sizes and threads in its
/// environment, and its printed times are reported beside the program's; a peer that fails
/// or prints no time is an error at the flag.
#[test]
fn bench_c_times_a_peer_command_in_its_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("rounds");
    let peer = format!(
        "echo \"$SKETCHLOG_SIZES $OMP_NUM_THREADS\" >> {}; echo 'a peer at work'; echo 4.0; echo 6.0",
        log.display()
    );
    let bench = |peer: &str| {
        common::output(&[
            "bench-c",
            "programs/mv.rise:mv",
            "--sizes",
            "64,32",
            "--threads",
            "1,2",
            "--rounds",
            "3",
            "--runs",
            "1",
            "--peer",
            peer,
        ])
    };
    let out = bench(&peer);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert_eq!(
        said.matches("interleaved: median 6.000 ms").count(),
        2,
        "{said}"
    );
    let rounds = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        rounds.lines().collect::<Vec<_>>(),
        ["64,32 1", "64,32 1", "64,32 1", "64,32 2", "64,32 2", "64,32 2"]
    );
    for (peer, says) in [("exit 3", "failed"), ("echo none", "printed no time")] {
        let out = bench(peer);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(says) && err.contains("--peer"), "{err}");
    }
}

/// `--sizes` by name: the same C as by position; an unknown or missing name is an error at
/// the flag that lists the program's sizes.
#[test]
fn sizes_may_be_given_by_name() {
    let c = |sizes: &str| common::output(&["codegen", "programs/mv.rise:mv", "--sizes", sizes]);
    let (named, positional) = (c("k=32,m=64"), c("64,32"));
    assert!(named.status.success());
    assert_eq!(named.stdout, positional.stdout);
    for (sizes, says) in [
        ("m=64,q=3", "no size `q`"),
        ("m=64", "no value for the size `k`"),
        ("m=64,32", "by name"),
    ] {
        let out = c(sizes);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(says) && err.starts_with("command line:1:"),
            "{err}"
        );
    }
}

#[test]
fn the_tolerance_is_a_checked_argument() {
    let out = common::sketchlog(&[])
        .args([
            "bench-c",
            "programs/matmul-lowlevel.rise:baseline",
            "--tolerance",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("out of range"));
}

#[test]
fn matrix_vector_guides_compile_to_vector_code_and_validate() {
    for goal in [
        "mv-blocking",
        "mv-blocking-columns",
        "mv-parallel",
        "mv-kernel",
    ] {
        let p = found(goal);
        let c = program_c("mv", &p, &[256, 256]).unwrap().c;
        // mv-blocking accumulates 32 rows in one vector variable (its lanes read A 256 floats
        // apart, so it is updated by the float), each row's a line of floats at a time (a
        // loop of `line` iterations); mv-blocking-columns one float of each row at a time;
        // mv-parallel loads contiguous floats of a row, mv-kernel contiguous floats of four
        // rows into one accumulator of 4 x 16 floats held in vector variables.
        let line = sketchlog::machine::native_line();
        let line_loop = format!(" < {line}; ");
        match goal {
            "mv-blocking" => {
                assert!(c.contains("f32x32 acc"), "{c}");
                assert!(c.contains(&line_loop), "{c}");
            }
            "mv-blocking-columns" => {
                assert!(c.contains("f32x32 acc"), "{c}");
                assert!(!c.contains(&line_loop), "{c}");
            }
            "mv-kernel" => {
                let acc = register_accumulators(&c);
                assert_eq!(acc.len(), 1, "{c}");
                assert!(only_in_registers(&c, &acc[0]), "{c}");
                assert!(c.contains("i1) * 1024 + "), "four rows of 256 a step: {c}");
            }
            _ => assert!(c.contains("*(f32x"), "{c}"),
        }
        let opts = COptions {
            threads: 2,
            ..COptions::default()
        };
        let exe = compile(&p, &[256, 256], &opts).unwrap();
        let r = sketchlog::codegen::run::validate(&exe, &p, &opts).unwrap();
        assert!(r.max_rel_error < 1e-4, "{goal}: {}", r.max_rel_error);
        // And the program the guide found still means the input's product (its partial sums
        // reassociate the additions, within rounding).
        let mut rng = Rng(11);
        let (a, v) = (rng.f32s(256 * 256), rng.f32s(256));
        let (out, _) = exe.run(&[a.clone(), v.clone()], &opts).unwrap();
        assert_close(&out, &matmul(&a, &v, 256, 1, 256), 1e-4);
    }
    assert!(program_c("mv", &found("mv-parallel"), &[256, 256])
        .unwrap()
        .c
        .contains("#pragma omp parallel for"));
}

/// mv-blocking-columns reduces 32 rows column by column: at rows of 4096 floats its 32 reads
/// a step are 16 KB apart, in one set of the level-1 data cache, and the generator says so (at
/// rows of 4000 floats they are not, and it says nothing); mv-blocking, which reads a line of
/// each row at a time, is not remarked on. So is the naive product's column of B at rows of
/// 1024, and a result written column by column into rows of 1024. `codegen` prints the remark
/// as a note on standard error.
#[test]
fn accesses_whose_lines_share_a_cache_set_are_remarked_on() {
    let l1 = sketchlog::machine::cache::Cache::l1_data();
    let remarks = |p: &Rc<Term>, sizes: &[i64]| program_c("p", p, sizes).unwrap().remarks;
    // Accesses `stride` bytes apart by a loop of `lines` iterations: one remark saying `what`
    // where this machine's cache puts their lines in one set, none elsewhere.
    let expect = |found: &[String], (stride, lines): (i64, i64), what: &str| {
        let shares = stride % l1.way_bytes() == 0 && lines > l1.ways;
        assert_eq!(found.len(), usize::from(shares), "{found:?}");
        assert!(found.iter().all(|r| r.contains(what)), "{found:?}");
    };
    let blocked = found("mv-blocking-columns");
    let at_4096 = remarks(&blocked, &[4096, 4096]);
    expect(
        &at_4096,
        (16384, 32),
        "reads `x0` 16384 bytes apart, one line per iteration: its 32 lines fall into one set",
    );
    // It names the schedule that avoids it: the reduction over k in chunks of a line.
    assert!(at_4096
        .iter()
        .all(|r| r.contains("in chunks of a line inside this one")));
    assert_eq!(remarks(&blocked, &[4000, 4000]), Vec::<String>::new());
    let by_lines = remarks(&found("mv-blocking"), &[4096, 4096]);
    assert_eq!(by_lines, Vec::<String>::new());
    let parallel = remarks(&found("mv-parallel"), &[4096, 4096]);
    assert_eq!(parallel, Vec::<String>::new());
    let naive = common::lowered("programs/baseline.guide");
    let at_1024 = remarks(&naive, &[1024, 1024, 1024]);
    expect(&at_1024, (4096, 1024), "reads `x1` 4096 bytes apart");
    // A result written column by column: its lines, rows of 1024 floats apart.
    let transposed = term("nfun n => fun (x : n.n.f32) => transpose (mapSeq (fun r => mapSeq (fun y => mul y 2.0) r) x)");
    expect(
        &remarks(&transposed, &[1024]),
        (4096, 1024),
        "writes `out` 4096 bytes apart",
    );
    assert_eq!(remarks(&transposed, &[1040]), Vec::<String>::new());
    let out = common::output(&[
        "codegen",
        "programs/mv-blocking-columns.guide",
        "--sizes",
        "4096,4096",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err.matches("note: the loop over").count(),
        at_4096.len(),
        "{err}"
    );
    // `--deny-remarks` refuses the remarked program (exit 1, no C written) and passes the
    // program that reads a line of each row at a time.
    let dir = tempfile::tempdir().unwrap();
    let denied = |guide: &str| {
        let c = dir.path().join("mv.c");
        let out = common::output(&[
            "codegen",
            guide,
            "--sizes",
            "4096,4096",
            "--deny-remarks",
            "-o",
            c.to_str().unwrap(),
        ]);
        (
            out.status.code(),
            c.exists(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, written, err) = denied("programs/mv-blocking-columns.guide");
    if at_4096.is_empty() {
        assert_eq!((code, written), (Some(0), true), "{err}");
    } else {
        assert_eq!((code, written), (Some(1), false), "{err}");
        assert!(err.contains("--deny-remarks refuses it"), "{err}");
    }
    let (code, written, err) = denied("programs/mv-blocking.guide");
    assert_eq!((code, written), (Some(0), true), "{err}");
}

/// The accumulators a reduction keeps in vector variables, one per machine vector of its
/// floats (`f32x8 acc5_0, acc5_1;` with AVX): their names (`acc5`).
fn register_accumulators(c: &str) -> Vec<String> {
    c.lines()
        .filter_map(|l| l.trim_start().strip_prefix("f32x"))
        .filter_map(|l| {
            Some(
                l.split_whitespace()
                    .nth(1)?
                    .strip_suffix("_0,")?
                    .to_string(),
            )
        })
        .filter(|name| name.starts_with("acc"))
        .collect()
}

/// Is the register accumulator `name` only ever named as vector variables (never addressed
/// as memory, never read or written by a float)?
fn only_in_registers(c: &str, name: &str) -> bool {
    !c.contains(&format!("{name}["))
}

#[test]
fn the_parallel_kernel_updates_whole_vectors_in_registers() {
    let c = found_c("parallel");
    // The unrolled reduction's accumulator (a 32-float tile row) is held in vector variables
    // updated as wholes: no lane loops are left, and it is never addressed as memory.
    let acc = register_accumulators(&c);
    assert_eq!(acc.len(), 1, "{c}");
    assert!(only_in_registers(&c, &acc[0]), "{c}");
    assert!(!c.contains("omp simd"), "{c}");
}

#[test]
fn the_register_blocked_kernel_accumulates_its_tile_in_registers() {
    let c = found_c("kernel");
    // One accumulator, the tile (8 x 32 floats with AVX-512, 4 x 16 with AVX2), in vector
    // variables updated in place over all of k (`acc5_3 = ((acc5_3) + ...`), the loops over
    // its rows and vectors unrolled to name them.
    let acc = register_accumulators(&c);
    assert_eq!(acc.len(), 1, "{c}");
    let name = &acc[0];
    assert!(only_in_registers(&c, name), "{c}");
    let updates = c
        .lines()
        .filter(|l| l.trim_start().starts_with(&format!("{name}_")) && l.contains(" + "))
        .filter(|l| l.contains(&format!("(({name}_")));
    // One update per vector variable: the whole tile each step.
    let declaration = c
        .lines()
        .find(|l| l.contains(&format!(" {name}_0,")))
        .unwrap();
    assert_eq!(
        updates.count(),
        declaration.matches(&format!("{name}_")).count(),
        "{c}"
    );
    assert!(
        !c.contains(&format!("{name}_next")),
        "updated in place: {c}"
    );
}

/// `blocking` reduces k in blocks of 4, each block's reduction starting from the 32 x 32
/// accumulator (in memory) and written back into it: the block accumulates in the
/// accumulator itself, with no copy in and out and no second accumulator to swap.
#[test]
fn a_reduction_chained_onto_its_destination_accumulates_in_it() {
    let c = found_c("blocking");
    let arrays: Vec<&str> = c
        .lines()
        .filter(|l| l.trim_start().starts_with("float acc"))
        .collect();
    assert_eq!(arrays.len(), 1, "{c}");
    assert!(!c.contains("_next"), "{c}");
    found_program_computes_the_product("blocking");
}

/// A reduction that starts from its destination but whose input reads the destination too
/// (each step adds the accumulator's value before the block) is not run in the destination:
/// the block's steps would read what they had written. 8 steps of 5x: 5^8 times the input.
#[test]
fn a_reduction_whose_input_reads_its_destination_keeps_its_own_accumulator() {
    let p = sequential(&term(
        "fun (x : 8.4.f32) (init : 1024.f32) => reduceSeq (fun acc row => reduceSeq (fun a y => map (fun p => add (fst p) (snd p)) (zip a y)) acc (map (fun z => acc) row)) init x",
    ));
    let c = program_c("p", &p, &[]).unwrap().c;
    assert!(c.contains("_next"), "{c}");
    let opts = COptions::default();
    let exe = compile(&p, &[], &opts).unwrap();
    let init: Vec<f32> = (0..1024).map(|i| (i % 3) as f32 * 0.5).collect();
    let (out, _) = exe.run(&[vec![1.0; 32], init.clone()], &opts).unwrap();
    let expected: Vec<f32> = init.iter().map(|v| v * 390_625.0).collect();
    assert_close(&out, &expected, 1e-6);
}

#[test]
fn tiles_are_written_through_the_output_layout_not_copied() {
    // Both found programs end in layout primitives over their map of tiles (`map join
    // (transpose (map tile ..))`, the kernel's with one transpose more): each tile is written
    // where it lands in the output (a layout view of the destination), not into a stack
    // buffer of rows that is copied out after the loop.
    for goal in ["parallel", "kernel"] {
        let c = found_c(goal);
        let copied = c.lines().any(|l| l.contains("out[") && l.contains("= buf"));
        assert!(!copied, "{goal}: {c}");
        assert!(
            c.contains("&out["),
            "{goal}: whole vectors into the output: {c}"
        );
    }
}

#[test]
fn parallel_packed_reads_a_only_to_pack_it() {
    // `parallel` broadcasts A's elements straight from the input, a row of A (k floats) apart
    // from one tile row to the next; `parallel-packed` copies A's row blocks once, k
    // outermost, and its kernel broadcasts from that copy.
    let reads_of_a = |goal: &str| {
        let c = found_c(goal);
        c.lines().filter(|l| l.contains("x0[")).count()
    };
    assert_eq!(reads_of_a("parallel-packed"), 1);
    assert!(reads_of_a("parallel") > 1);
}

#[test]
fn a_transposing_copy_reads_whole_cache_lines() {
    // `parallel-packed` copies A (m.k) into blocks k-major: contiguous along k in A, 32
    // floats apart in the copy. The copy runs in blocks of 16 elements of k (a cache line of
    // A), the innermost loop reading them one after the other.
    let c = found_c("parallel-packed");
    let (above, index) = first_read(&c, "x0");
    assert!(above[0].contains(" < 16; "), "{c}");
    assert!(
        index.contains(&format!("+ {}]", loop_var(above[0]))),
        "unit stride along the block: {c}"
    );
}

/// The lines above the first one of `c` that reads `array`, nearest first, and that line
/// from the read on.
fn first_read<'c>(c: &'c str, array: &str) -> (Vec<&'c str>, &'c str) {
    let lines: Vec<&str> = c.lines().collect();
    let read = format!("{array}[");
    let at = lines.iter().position(|l| l.contains(&read)).unwrap();
    let above = lines[..at].iter().rev().map(|l| l.trim()).collect();
    (above, &lines[at][lines[at].find(&read).unwrap()..])
}

/// The variable of a loop header `for (long i3 = 0; ...`.
fn loop_var(header: &str) -> &str {
    header.split_whitespace().nth(2).unwrap()
}

#[test]
fn a_packing_copy_reads_its_source_in_address_order() {
    // `parallel` copies B (k.n) into column blocks of 32: a row of a block is 32 floats of a
    // row of B. The copy's outer loop runs over B's rows (64 floats apart at 64^3) and the
    // inner one over the blocks (32 floats apart), so B is read from start to end.
    let c = found_c("parallel");
    let (above, index) = first_read(&c, "x1");
    let (inner, outer) = (loop_var(above[0]), loop_var(above[1]));
    assert!(index.contains(&format!("({outer}) * 64")), "{c}");
    assert!(index.contains(&format!("({inner}) * 32")), "{c}");
    assert!(above[2].contains("omp parallel for"), "{c}");
}

#[test]
fn a_large_output_is_stored_past_the_cache_and_a_large_buffer_allocated_once() {
    // At 1024^3 the output (4 MB) is larger than a core's cache: its whole vectors are
    // stored past it, and the parallel loop storing them ends in a fence in each thread.
    // The packed copy of B (4 MB) is allocated when the program is loaded.
    let p = found("parallel");
    let c = program_c("mm", &p, &[1024, 1024, 1024]).unwrap().c;
    assert!(c.contains("rise_buffer(1048576)"), "{c}");
    assert!(c.contains("_stream_ps("), "{c}");
    let stores = c.lines().filter(|l| l.contains("rise_stream")).count();
    assert!(stores > 2, "{c}");
    let body = &c[c.find("void mm(").unwrap()..];
    let region = &body[body.find("#pragma omp parallel\n").unwrap()..];
    let nowait = region.find("#pragma omp for nowait").unwrap();
    let fence = region.find("rise_fence();").unwrap();
    assert!(nowait < region.find("rise_stream").unwrap());
    assert!(region.find("rise_stream").unwrap() < fence, "{c}");
    // A small output stays in the cache.
    let small = program_c("mm", &p, &[64, 64, 64]).unwrap().c;
    assert!(!small.contains("rise_stream") && !small.contains("rise_buffer"));
    // Streamed, on two threads, the program computes its meaning (the interpreter's
    // sampled elements recurse deeply at this size: the command line's stack).
    let opts = COptions {
        threads: 2,
        ..COptions::default()
    };
    let exe = compile(&p, &[1024, 1024, 1024], &opts).unwrap();
    let error = std::thread::Builder::new()
        .stack_size(sketchlog::limits::STACK_BYTES)
        .spawn(move || {
            let p = found("parallel");
            sketchlog::codegen::run::validate(&exe, &p, &opts).map(|r| r.max_rel_error)
        })
        .unwrap()
        .join()
        .unwrap()
        .unwrap();
    assert!(error < 1e-5, "{error}");
}

/// Compiles a program (lowered where it says nothing) and compares it with the interpreter.
fn agrees_with_the_interpreter(path: &str, name: &str, sizes: &[i64]) {
    let p = sequential(&def(path, name));
    let opts = COptions::default();
    let exe = compile(&p, sizes, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let r = sketchlog::codegen::run::validate(&exe, &p, &opts).unwrap();
    assert!(r.max_rel_error < 1e-5, "{name}: {}", r.max_rel_error);
}

#[test]
fn slide_and_both_binomial_filters_agree_with_the_interpreter() {
    for name in ["start", "goal"] {
        agrees_with_the_interpreter("programs/binomial.rise", name, &[30, 17]);
    }
}

/// The separable convolution's lowered versions read clamped borders (`padClamp`): each
/// agrees with the interpreter at sizes where the interior is empty, small and most of the
/// image, in both lowerings.
#[test]
fn clamped_stencils_agree_with_the_interpreter_at_every_size() {
    let file = "programs/shine/separable.rise";
    for name in [
        "base-seq",
        "factorised-seq",
        "separated-seq",
        "scanline-seq",
    ] {
        for sizes in [[1, 1], [2, 3], [3, 2], [5, 40], [33, 17]] {
            let p = sequential(&def(file, name));
            for lowering in [Lowering::Vector, Lowering::Scalar] {
                let opts = COptions {
                    lowering,
                    ..COptions::default()
                };
                let exe = compile(&p, &sizes, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
                let r = sketchlog::codegen::run::validate(&exe, &p, &opts).unwrap();
                assert!(
                    r.max_rel_error < 1e-5,
                    "{name} {sizes:?}: {}",
                    r.max_rel_error
                );
            }
        }
    }
}

/// The separable convolution's guided version (its horizontal pass in 16-lane blocks, the
/// rows on threads) agrees with the interpreter in both lowerings, with one or several blocks
/// a row and one or several rows; its blocks accumulate in vector variables.
#[test]
fn the_guided_separable_convolution_agrees_with_the_interpreter() {
    let p = common::lowered("programs/shine/separable-lanes.guide");
    let c = program_c("p", &p, &[64, 64]).unwrap().c;
    assert!(
        c.contains("#pragma omp parallel for") && c.contains("f32x"),
        "{c}"
    );
    // The vertical pass's three-element sums are unrolled, so the C compiler vectorises it.
    assert!(c.contains("GCC unroll 16"), "{c}");
    for sizes in [[1, 16], [3, 48], [33, 32]] {
        agrees_in_both_lowerings(&p, sizes);
    }
}

/// The interior of a clamped stencil reads without clamps: the loops are split at the
/// borders, and the dot products accumulate without storing their products first.
#[test]
fn a_stencil_interior_reads_without_clamps_or_buffers() {
    let p = sequential(&def("programs/shine/separable.rise", "base-seq"));
    let c = program_c("p", &p, &[64, 64]).unwrap().c;
    assert!(c.contains("for (long i") && c.contains(" = 1; i"), "{c}");
    let interior = c
        .lines()
        .filter(|l| l.contains("acc") && l.contains("x0[") && !l.contains('?'))
        .count();
    assert!(interior >= 1, "{c}");
    assert!(!c.contains("buf"), "{c}");
}

/// The scalar lowering has the same loops without vector types or streaming stores.
#[test]
fn the_scalar_lowering_has_no_vector_types() {
    let p = found("parallel");
    let native = Target::native();
    let vector = lowered_c("mm", &p, &[1024, 1024, 1024], Lowering::Vector, native)
        .unwrap()
        .c;
    let scalar = lowered_c("mm", &p, &[1024, 1024, 1024], Lowering::Scalar, native)
        .unwrap()
        .c;
    assert!(vector.contains("f32x") && vector.contains("rise_stream"));
    assert!(
        !scalar.contains("f32x") && !scalar.contains("rise_stream"),
        "{scalar}"
    );
    assert!(scalar.contains("omp parallel for"));
}

/// A program and its scalar lowering are one executable: each checks against the meaning
/// alone or both in one process, and timed in turn, run by run in one process, each gets
/// every run it is asked for, or as many as a round's length allows.
#[test]
fn a_program_and_its_scalar_lowering_run_in_turn_in_one_process() {
    let p = found("parallel");
    let opts = COptions {
        runs: 3,
        ..COptions::default()
    };
    let (ours, scalar) = compile_with_scalar(&p, &[64, 32, 96], &opts).unwrap();
    let expected = Expected::of(&ours, &p).unwrap();
    for exe in [&ours, &scalar] {
        let checked = check(exe, &expected, &opts).unwrap();
        assert!(checked.max_rel_error < 1e-4, "{}", checked.max_rel_error);
    }
    let (a, b) = ours.check_beside(&scalar, &expected, &opts).unwrap();
    assert!(a.max_rel_error.max(b.max_rel_error) < 1e-4);
    assert_eq!((a.times_ms.len(), b.times_ms.len()), (3, 3));
    let (a, b) = ours.time_beside(&scalar, &expected, &opts).unwrap();
    assert_eq!((a.len(), b.len()), (3, 3));
    assert!(a.iter().chain(&b).all(|ms| *ms > 0.0), "{a:?} {b:?}");
    let lasting = |ms, shortest_ms, most| COptions {
        round: Some(RoundLength {
            ms,
            shortest_ms,
            most,
        }),
        ..opts.clone()
    };
    let runs = |opts: &COptions| ours.time_beside(&scalar, &expected, opts).unwrap().0.len();
    assert_eq!(
        runs(&lasting(0.0, 0.0, 100)),
        1,
        "a round that is over after one run"
    );
    assert_eq!(
        runs(&lasting(f64::INFINITY, 0.0, 100)),
        3,
        "the runs asked for"
    );
    let fast = lasting(f64::INFINITY, f64::INFINITY, 7);
    assert_eq!(runs(&fast), 7, "a short round's runs, up to the most");
    let alone = compile(&p, &[64, 32, 96], &opts).unwrap();
    assert!(alone.time_beside(&scalar, &expected, &opts).is_err());
}

/// The C is written for the target the command line names (`--isa avx2`, or its sizes one by
/// one): AVX2's 8-float vectors and 16 registers give the register-blocked kernel a 4 x 16
/// tile of eight `f32x8` accumulators, and where this machine runs AVX2 code, the C compiled
/// for it means the product.
#[test]
fn the_command_line_names_the_target() {
    let avx2 = ["--param", "lanes=8", "--param", "registers=16"];
    let codegen = |target: &[&str]| {
        let args = [
            &["codegen", "programs/kernel.guide", "--sizes", "64,64,64"][..],
            target,
        ];
        let out = common::output(&args.concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let c = codegen(&avx2);
    let acc = register_accumulators(&c);
    assert_eq!(acc.len(), 1, "{c}");
    let declaration = c
        .lines()
        .find(|l| l.contains(&format!(" {}_0,", acc[0])))
        .unwrap();
    assert!(
        declaration.trim_start().starts_with("f32x8 "),
        "{declaration}"
    );
    assert_eq!(
        declaration.matches(&format!("{}_", acc[0])).count(),
        8,
        "{declaration}"
    );
    assert!(!c.contains("f32x16"), "{c}");
    // `--isa avx2` names the same target; a `--param` of its own wins over it.
    assert_eq!(codegen(&["--isa", "avx2"]), c);
    assert!(codegen(&["--isa", "avx2", "--param", "lanes=16"]).contains("f32x16 "));
    let odd = common::output(&["codegen", "programs/kernel.guide", "--param", "lanes=12"]);
    assert_eq!(odd.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&odd.stderr).contains("--param: `lanes` = 12"));
    if !std::arch::is_x86_feature_detected!("avx2") {
        return;
    }
    let flags = [
        "--cflags",
        "-march=x86-64-v3",
        "--validate",
        "--threads",
        "1,2",
    ];
    let sizes = ["--sizes", "37,64,29"];
    // The sizes and flags given one by one, and `--isa avx2`, which sets them all.
    for target in [
        &[&avx2[..], &flags[..2]].concat(),
        &["--isa", "avx2"][..].to_vec(),
    ] {
        let out = common::output(
            &[
                &["bench-c", "programs/kernel.guide"][..],
                target,
                &flags[2..],
                &sizes,
            ]
            .concat(),
        );
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            said.matches(": valid, ").count(),
            2,
            "{said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_missing_c_compiler_is_a_clear_error() {
    let out = common::sketchlog(&[])
        .args([
            "bench-c",
            "programs/matmul-lowlevel.rise:baseline",
            "--size",
            "8",
        ])
        .env("CC", "/nonexistent/cc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no C compiler"), "{err}");
}

#[test]
fn unsupported_programs_are_clear_errors() {
    let cases = [
        // A map that computes must be lowered first (the generator does not pick its loop).
        (
            "nfun n => fun (x : n.f32) => map (fun y => add y y) x",
            "`map` computes here",
        ),
        (
            "nfun n => fun (x : n.f32) => reduce add 0.0 x",
            "high-level primitive `reduce`",
        ),
        // A function as the program's result, its sizes shown at their values.
        (
            "nfun n => fun (x : n.f32) => (mapSeq (fun (y : f32) => y) : n.f32 -> n.f32)",
            "storing a value of type 8.f32 -> 8.f32",
        ),
    ];
    for (src, expected) in cases {
        let err = program_c("p", &common::term(src), &[8])
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{src}: {err}");
    }
}

/// A window of size 0 is refused with a message, not a division by zero.
#[test]
fn a_slide_of_size_zero_is_an_error() {
    for sp in [1, 2] {
        let p = sequential(&common::term(&format!(
            "nfun n => fun (x : n.f32) => mapSeq (mapSeq (fun y => y)) (slide<0, {sp}> x)"
        )));
        let Err(e) = program_c("p", &p, &[4]) else {
            panic!("slide<0, {sp}> was not refused")
        };
        assert!(e.to_string().contains(&format!("slide<0, {sp}>")), "{e}");
    }
}

/// The Harris corner detector: its naive lowering and the program its guide finds agree with
/// the interpreter, in both lowerings, at sizes where the borders are most of the image.
#[test]
fn harris_versions_agree_with_the_interpreter() {
    let naive = sequential(&def("programs/harris.rise", "harris"));
    let parallel = common::lowered("programs/harris-parallel.guide");
    let c = program_c("harris", &parallel, &[64, 64]).unwrap().c;
    assert!(
        c.matches("omp parallel for").count() >= 10,
        "every stage on threads: {c}"
    );
    for p in [naive, parallel] {
        for sizes in [[1, 1], [3, 5], [24, 17]] {
            agrees_in_both_lowerings(&p, sizes);
        }
    }
}

/// A 2D program's C agrees with the interpreter at `sizes`, in both lowerings, on two
/// threads (its parallel loops run as such).
fn agrees_in_both_lowerings(p: &Rc<Term>, sizes: [i64; 2]) {
    means_the_same_in_both_lowerings(p, p, sizes)
}

/// Harris in strips of 16 rows, each through the whole pipeline, the strips on threads:
/// one parallel loop, and where a strip's stage is too large for a thread's stack, a buffer
/// per thread.
#[test]
fn harris_in_strips_agrees_with_the_interpreter() {
    let strips = common::lowered("programs/harris-strips.guide");
    let c = program_c("harris", &strips, &[64, 64]).unwrap().c;
    assert_eq!(c.matches("omp parallel for").count(), 1, "{c}");
    for sizes in [[16, 1], [48, 17]] {
        agrees_in_both_lowerings(&strips, sizes);
    }
    // 20 rows of 3,304 floats: more than a stack array may hold.
    let c = program_c("harris", &strips, &[32, 3300]).unwrap().c;
    assert!(c.contains("static __thread float"), "{c}");
    agrees_in_both_lowerings(&strips, [32, 3300]);
}

/// Harris fused as Halide's schedule fuses it, in strips: a strip stores only its grayscale
/// rows (20 x 68 at 64^2), Ix and Iy (18 x 66) and one row of each sum as the response reads
/// it; no image of products or of sums. (The nine Sobel weights, an outer product in the
/// program, are an array of 9 that the C compiler folds.)
#[test]
fn harris_fused_stores_three_stages_and_agrees_with_the_interpreter() {
    let fused = common::lowered("programs/harris-fused.guide");
    let c = program_c("harris", &fused, &[64, 64]).unwrap().c;
    let sizes = declared_buffers(&c);
    assert!(!sizes.is_empty(), "{c}");
    for size in &sizes {
        assert!([1360, 1188, 64, 9].contains(size), "{sizes:?}\n{c}");
    }
    for sizes in [[16, 1], [48, 17]] {
        agrees_in_both_lowerings(&fused, sizes);
    }
}

/// Harris with line buffers: the three 3x3 sums read their products from rings of three rows
/// (3 x 66 floats at 64^2, each product computed once) and are fused into the response: per
/// output row, one row of column sums per sum (66), summed in blocks of the machine's vector
/// width; no image of products or of sums (16 x 64 a strip). Ix and Iy are
/// separated: each reads one row of 68 weighted column sums. It agrees with the interpreter,
/// borders included, and at sizes its strips and blocks do not divide.
#[test]
fn harris_line_buffered_holds_three_rows_of_products_and_agrees_with_the_interpreter() {
    let buffered = common::lowered("programs/harris-line-buffered.guide");
    let c = program_c("harris", &buffered, &[64, 64]).unwrap().c;
    let sizes = declared_buffers(&c);
    // Three rings and three rows of column sums for every copy of the strip's code (one
    // grayscale buffer each).
    let count = |n: i64| sizes.iter().filter(|s| **s == n).count();
    assert!(count(1360) > 0, "{sizes:?}\n{c}");
    assert_eq!(count(3 * 66), 3 * count(1360), "{sizes:?}\n{c}");
    assert_eq!(count(66), 3 * count(1360), "{sizes:?}\n{c}");
    assert_eq!(count(68), 2 * count(1360), "{sizes:?}\n{c}");
    let lanes = sketchlog::codegen::target::Target::native().lanes;
    for size in &sizes {
        assert!(
            [1360, 1188, 198, 68, 66, lanes].contains(size),
            "{sizes:?}\n{c}"
        );
    }
    for sizes in [[16, 16], [48, 32]] {
        agrees_in_both_lowerings(&buffered, sizes);
    }
    // Sizes that its strips and blocks do not divide, against the program it starts from.
    let harris = common::lowered("programs/harris.rise:harris");
    for sizes in [[16, 17], [37, 35]] {
        means_the_same_in_both_lowerings(&buffered, &harris, sizes);
    }
}

/// Harris with register rotation, on line buffers (`harris-rotated.guide`) and on the
/// separated version (`harris-separated-rotated.guide`): each output block's column sums are
/// computed once, as vectors, into two vectors rotated along the row (one rotation per sum,
/// in registers: `f32xN ringK_0, ringK_1;`), and the block's window sums are read from them,
/// the two windows that straddle both vectors as shuffles; no row of column sums (66 floats
/// at 64^2) is stored, and the separated version stores no products either (no ring of
/// 3 x 66). Each agrees with the program it starts from, borders included, at a height its
/// strips do not divide and at widths its blocks do not divide (the last block shifted inward,
/// its rotations first given the block that ends where it starts); a width under one block
/// is refused.
#[test]
fn harris_rotations_keep_their_column_sums_in_registers_and_agree_with_the_interpreter() {
    let harris = common::lowered("programs/harris.rise:harris");
    for (guide, rings_of_products) in [("harris-rotated", 3), ("harris-separated-rotated", 0)] {
        let rotated = common::lowered(&format!("programs/{guide}.guide"));
        let c = program_c("harris", &rotated, &[64, 64]).unwrap().c;
        let rings = c
            .lines()
            .filter(|l| l.trim_start().starts_with("f32x") && l.contains(" ring"))
            .count();
        let shuffles = c.matches("__builtin_shufflevector(ring").count();
        assert!(rings >= 3 && shuffles == 2 * rings, "{guide}:\n{c}");
        let sizes = declared_buffers(&c);
        assert!(!sizes.contains(&66), "{guide}:\n{c}");
        let products = sizes.iter().filter(|s| **s == 3 * 66).count();
        assert_eq!(products, rings_of_products * rings / 3, "{guide}:\n{c}");
        for sizes in [[16, 16], [48, 32]] {
            agrees_in_both_lowerings(&rotated, sizes);
        }
        for sizes in [[37, 48], [16, 17], [20, 40]] {
            means_the_same_in_both_lowerings(&rotated, &harris, sizes);
        }
        // At 40 wide, two blocks in the loop, then the last (at column 24) after it, still
        // from the rotations in registers.
        let c = program_c("harris", &rotated, &[64, 40]).unwrap().c;
        let shuffles = c.matches("__builtin_shufflevector(ring").count();
        assert_eq!(shuffles, 2 * 2 * rings, "{guide}:\n{c}");
        let err = program_c("harris", &rotated, &[16, 10])
            .unwrap_err()
            .to_string();
        assert!(err.contains("not one whole block"), "{guide}: {err}");
    }
}

/// Harris with its window sums separated (column sums of three rows, then three neighbouring
/// column sums) and vectorised along rows: each block of 16 columns accumulates its three
/// sums in vector registers. It agrees with the interpreter, borders included; a width that
/// is not a multiple of 16 is refused.
#[test]
fn harris_with_separated_sums_in_vectors_agrees_with_the_interpreter() {
    let separated = common::lowered("programs/harris-separated.guide");
    let c = program_c("harris", &separated, &[64, 64]).unwrap().c;
    let accumulators = c
        .lines()
        .filter(|l| l.trim_start().starts_with("f32x") && l.contains(" acc"))
        .count();
    assert!(accumulators >= 3, "three sums in vector registers:\n{c}");
    assert_eq!(
        c.matches("omp parallel").count(),
        1,
        "the strips alone on threads:\n{c}"
    );
    for sizes in [[16, 16], [48, 32]] {
        agrees_in_both_lowerings(&separated, sizes);
    }
    // Sizes that its strips of 16 rows and blocks of 16 columns do not divide: the last strip
    // and the last block of each row shifted inward, overlapping the ones before. Checked
    // against the program the guide starts from.
    let harris = common::lowered("programs/harris.rise:harris");
    for sizes in [[16, 17], [37, 35]] {
        means_the_same_in_both_lowerings(&separated, &harris, sizes);
    }
}

/// `p` compiled at `sizes` computes what `meaning` does, in both lowerings, on two threads.
fn means_the_same_in_both_lowerings(p: &Rc<Term>, meaning: &Rc<Term>, sizes: [i64; 2]) {
    for lowering in [Lowering::Vector, Lowering::Scalar] {
        let opts = COptions {
            lowering,
            threads: 2,
            ..COptions::default()
        };
        let exe = compile(p, &sizes, &opts).unwrap();
        let r = sketchlog::codegen::run::validate(&exe, meaning, &opts).unwrap();
        assert!(r.max_rel_error < 1e-5, "{sizes:?}: {}", r.max_rel_error);
    }
}

/// The sizes of the arrays a program's C declares.
fn declared_buffers(c: &str) -> Vec<i64> {
    c.split("float buf")
        .skip(1)
        .filter_map(|b| b.split(['[', ']']).nth(1)?.parse().ok())
        .collect()
}

/// A circular buffer read in order by a sequential loop is a ring of its window: `sz`
/// elements (rows of an image, or the values of a chain of stencils), never a buffer of its
/// whole input; chains, zips of circular buffers, `rotateValues` (shifted, read at constant
/// slots) and a circular buffer read by a parallel loop (in memory) agree with the
/// interpreter, in both lowerings.
#[test]
fn circular_buffers_read_in_order_are_rings_of_their_window() {
    let rows = "fun w => mapSeq (fun c => reduceSeq add 0.0 c) (transpose w)";
    let chain = "programs/shine/circular-buffering.rise";
    // Each program, the arrays it declares at the last sizes, and the sizes it runs at.
    type Case<'a> = (Rc<Term>, &'a [i64], &'a [&'a [i64]]);
    let cases: [Case; 6] = [
        (
            sequential(&def(chain, "chain-circular-buffered")),
            &[3, 2],
            &[&[1], &[5], &[1000]],
        ),
        (
            sequential(&def(chain, "circular-buffered")),
            &[4],
            &[&[1], &[7], &[300]],
        ),
        (
            term(&format!("nfun n m => fun (x : (n+2).m.f32) => iterateStream ({rows}) (circularBuffer<3, 3> (mapSeq (fun y => mul y 2.0)) x)")),
            &[3 * 40],
            &[&[1, 3], &[5, 40]],
        ),
        (
            term(&format!("nfun n m => fun (x : (n+2).m.f32) => mapSeq ({rows}) (rotateValues<3> (mapSeq (fun y => sub y 1.0)) x)")),
            &[3 * 40],
            &[&[1, 3], &[5, 40]],
        ),
        (
            term("nfun n => fun (x : (n+3).f32) => mapStream (fun p => add (reduceSeq add 0.0 (fst p)) (reduceSeq mul 1.0 (snd p))) (zip (circularBuffer<3, 3> (fun y => mul y 2.0) (drop<1> x)) (circularBuffer<3, 3> (fun y => add y 1.0) (take<n+2> x)))"),
            &[3, 3],
            &[&[1], &[100]],
        ),
        (
            term("nfun n => fun (x : (n+2).f32) => mapPar (fun w => reduceSeq add 0.0 w) (circularBuffer<3, 3> (fun y => mul y 2.0) x)"),
            &[102],
            &[&[1], &[100]],
        ),
    ];
    for (p, buffers, runs) in cases {
        let c = program_c("p", &p, runs[runs.len() - 1]).unwrap().c;
        assert_eq!(declared_buffers(&c), buffers, "{c}");
        for sizes in runs {
            for lowering in [Lowering::Vector, Lowering::Scalar] {
                let opts = COptions {
                    lowering,
                    threads: 2,
                    ..COptions::default()
                };
                let exe = compile(&p, sizes, &opts).unwrap_or_else(|e| panic!("{sizes:?}: {e}"));
                let r = sketchlog::codegen::run::validate(&exe, &p, &opts).unwrap();
                assert!(
                    r.max_rel_error < 1e-5,
                    "{sizes:?}: {}\n{c}",
                    r.max_rel_error
                );
            }
        }
    }
}

/// Windows over blocks that a size does not divide (`split<4>` of a padded row of `n + 4`),
/// read in order by a sequential loop: the loop's last iteration, whose block is shifted
/// inward, runs after the others with its ring (shifted or circular, in registers or in
/// memory) first given the block that ends where it starts. Each computes the row's sums of
/// three, in both lowerings, whether 4 divides `n` or not; under one block it is refused.
#[test]
fn windows_over_blocks_a_size_does_not_divide_are_realigned_at_the_last() {
    let sums = term(
        "nfun n => fun (x : (n+2).f32) => mapSeq (fun w => reduceSeq add 0.0 w) (slide<3, 1> x)",
    );
    for windows in [
        "rotateValues<2> (fun y => y)",
        "circularBuffer<2, 2> (fun y => y)",
        "rotateValues<2> (mapSeq (fun y => mul y 2.0))",
    ] {
        let p = term(&format!(
            "nfun n => fun (x : (n+2).f32) => join (mapSeq (fun v => mapSeq (fun w => \
             reduceSeq add 0.0 w) (slide<3, 1> (drop<2> (join v)))) ({windows} (split<4> \
             (padClamp<2, 0> x))))"
        ));
        let doubled = windows.contains("mul");
        for n in [4, 5, 7, 8, 10, 31] {
            for lowering in [Lowering::Vector, Lowering::Scalar] {
                let opts = COptions {
                    lowering,
                    threads: 1,
                    ..COptions::default()
                };
                let exe = compile(&p, &[n], &opts).unwrap_or_else(|e| panic!("{n}: {e}"));
                let meaning = match doubled {
                    true => term("nfun n => fun (x : (n+2).f32) => mapSeq (fun w => reduceSeq add 0.0 w) (slide<3, 1> (mapSeq (fun y => mul y 2.0) x))"),
                    false => sums.clone(),
                };
                let r = sketchlog::codegen::run::validate(&exe, &meaning, &opts).unwrap();
                assert!(
                    r.max_rel_error < 1e-5,
                    "{windows} at {n}: {}",
                    r.max_rel_error
                );
            }
        }
        let err = program_c("p", &p, &[3]).unwrap_err().to_string();
        assert!(err.contains("not one whole block"), "{windows}: {err}");
    }
}

/// An array built by `makeArray` of computed arrays larger than the stack allows is a
/// buffer of its own (a stack array of two million floats crashes the program).
#[test]
fn a_large_make_array_of_computed_arrays_runs() {
    agrees_with_the_interpreter(
        "programs/shine/circular-buffering.rise",
        "inlined",
        &[1 << 20],
    );
}

/// Every guide in `programs/` and `programs/shine/` is in the steps table, or has no C.
#[test]
fn the_steps_table_covers_every_guide() {
    use sketchlog::experiments::steps::{GUIDES, NOT_COMPILED};
    let mut listed: Vec<&str> = GUIDES.iter().map(|(g, _)| *g).chain(NOT_COMPILED).collect();
    listed.sort();
    let mut found = vec![];
    for dir in ["programs", "programs/shine"] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "guide") {
                let name = path.strip_prefix("programs/").unwrap().with_extension("");
                found.push(name.display().to_string());
            }
        }
    }
    found.sort();
    assert_eq!(listed, found);
}

/// The steps table's jobs: one per program the guides start from (and sizes), each guide in
/// one, in the table's order; so a step two guides reach is measured once.
#[test]
fn the_steps_table_groups_guides_by_their_program() {
    use sketchlog::experiments::steps::{groups, GUIDES};
    let groups = groups().unwrap();
    let flat: Vec<&str> = groups.iter().flatten().map(String::as_str).collect();
    let mut listed: Vec<&str> = GUIDES.iter().map(|(g, _)| *g).collect();
    assert_eq!(flat.len(), listed.len());
    listed.retain(|g| !flat.contains(g));
    assert!(listed.is_empty(), "{listed:?}");
    let group_of = |guide: &str| groups.iter().position(|g| g.iter().any(|n| n == guide));
    assert_eq!(
        group_of("harris-fused"),
        group_of("harris-line-buffered-mixed")
    );
    assert_eq!(group_of("blocking"), group_of("parallel-packed"));
    assert_ne!(group_of("blocking"), group_of("mv-kernel"));
    assert_ne!(group_of("harris-fused"), group_of("shine/separable-lanes"));
    assert_eq!(groups.len(), 4, "{groups:?}");
}

/// The steps table's rows of one guide: every step at both sizes, validated and timed in
/// both lowerings, as AVX2 code (`--isa avx2`) where the machine runs it.
#[test]
fn the_steps_table_times_every_step_in_both_lowerings() {
    use sketchlog::codegen::target::Isa;
    let isa = match Isa::Avx2.check_runs_here() {
        Ok(()) => Isa::Avx2,
        Err(_) => Isa::Native,
    };
    let rows =
        sketchlog::experiments::steps::rows("shine/separable-lanes", [16, 32], 1, 1, isa).unwrap();
    let steps: Vec<&str> = rows.iter().map(|r| r.step.as_str()).collect();
    assert_eq!(
        steps,
        [
            "goal separable.rise:scanline",
            "goal separable.rise:scanline",
            "lanes",
            "lanes",
            "lanes-parallel",
            "lanes-parallel"
        ]
    );
    for row in &rows {
        assert_eq!(row.error, None, "{row:?}");
        assert!(row.ratio_vs_scalar.is_some(), "{row:?}");
        assert!(row.max_rel_error.unwrap() < 1e-5, "{row:?}");
    }
    assert_eq!(rows[1].sizes, [32, 32]);
}

/// The C `sketchlog codegen GUIDE --param ARGS` prints, and whether `bench-c --validate` of
/// it passes.
fn guide_c_at(guide: &str, params: &[&str], sizes: &str) -> (String, bool) {
    let with = |cmd: &[&str]| {
        let mut args = cmd.to_vec();
        args.extend([guide, "--sizes", sizes]);
        for p in params {
            args.extend(["--param", p]);
        }
        common::output(&args)
    };
    let c = with(&["codegen"]);
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let valid = with(&["bench-c", "--validate", "--threads", "1,2"]);
    let text = String::from_utf8_lossy(&valid.stdout).to_string();
    let valid = valid.status.success() && text.matches(": valid").count() == 2;
    (String::from_utf8(c.stdout).unwrap(), valid)
}

#[test]
fn one_guide_vectorises_at_the_width_it_is_given() {
    for lanes in [4, 8, 16] {
        let (c, valid) = guide_c_at(
            "programs/shine/separable-lanes.guide",
            &[&format!("lanes={lanes}")],
            "h=24,w=32",
        );
        assert!(c.contains(&format!("f32x{lanes} ")), "lanes={lanes}: {c}");
        for other in [4, 8, 16].iter().filter(|l| **l != lanes) {
            assert!(!c.contains(&format!("f32x{other} ")), "lanes={lanes}: {c}");
        }
        assert!(valid, "lanes={lanes}");
    }
}

#[test]
fn the_command_line_sets_a_size_over_the_guide_and_the_guide_over_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let here = std::env::current_dir().unwrap().join("programs/shine");
    let text = std::fs::read_to_string(here.join("separable-lanes.guide")).unwrap();
    let text = text
        .replace(
            "separable.rise",
            &here.join("separable.rise").display().to_string(),
        )
        .replace(
            "separable.sketch",
            &here.join("separable.sketch").display().to_string(),
        )
        .replace(
            "../../rules",
            &here.join("../../rules").display().to_string(),
        )
        .replacen("program ", "param lanes = 4\nprogram ", 1);
    let guide = dir.path().join("four.guide");
    std::fs::write(&guide, text).unwrap();
    let guide = guide.to_str().unwrap();
    let (c, valid) = guide_c_at(guide, &[], "h=8,w=16");
    assert!(c.contains("f32x4 ") && valid, "{c}");
    let (c, valid) = guide_c_at(guide, &["lanes=8"], "h=8,w=16");
    assert!(
        c.contains("f32x8 ") && !c.contains("f32x4 ") && valid,
        "{c}"
    );
}

/// Halide's schedule of the separable blur (`scripts/separable-peer.py`) timed beside the
/// guide's C in the same rounds, where `scripts/peers.sh` has installed Halide.
#[test]
fn bench_c_times_halide_beside_a_guide() {
    let python = "target/peers/venv/bin/python";
    let has_halide = std::process::Command::new(python)
        .args(["-c", "import halide"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_halide {
        eprintln!("skipped: no Halide in {python} (scripts/peers.sh installs it)");
        return;
    }
    let out = common::output(&[
        "bench-c",
        "programs/shine/separable-lanes.guide",
        "--sizes",
        "h=64,w=128",
        "--threads",
        "1,2",
        "--rounds",
        "2",
        "--runs",
        "2",
        "--peer",
        &format!("{python} scripts/separable-peer.py"),
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        said.matches("separable-peer.py`, interleaved: median")
            .count(),
        2,
        "{said}"
    );
    assert_eq!(said.matches("thread(s): median").count(), 2, "{said}");
}

/// At sizes that a program's splits do not divide, the last block of each is shifted inward
/// and what it shares with the one before computed twice: the C still computes what the guide
/// started from. A reduction over such blocks would count the shared elements twice: it is
/// refused, naming the size and the primitive.
#[test]
fn sizes_the_program_does_not_divide_shift_the_last_block_or_are_refused() {
    let out = common::output(&[
        "bench-c",
        "programs/harris-separated.guide",
        "--validate",
        "--sizes",
        "h=37,w=100",
        "--threads",
        "1,2",
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(said.matches(": valid, ").count(), 2, "{said}");
    // The register-blocked product's blocks of columns (two of the target's vectors) are on
    // threads, each over every block of rows, and accumulate in place: the last, shifted up
    // to overlap the one before, runs after the parallel loop.
    let kernel = common::lowered("programs/kernel.guide");
    let c = program_c("kernel", &kernel, &[97, 71, 101]).unwrap().c;
    let parallel = c.split("#pragma omp parallel for\n").nth(2).unwrap();
    let mut loops = parallel.lines().take(2);
    let columns = 71 / (2 * sketchlog::machine::native_lanes());
    let rows = 97 / (sketchlog::machine::native_registers() / 4);
    assert!(
        loops.next().unwrap().contains(&format!(" < {columns}; ")),
        "{c}"
    );
    assert!(
        loops.next().unwrap().contains(&format!(" < {rows}; ")),
        "{c}"
    );
    let out = common::output(&[
        "bench-c",
        "programs/kernel.guide",
        "--validate",
        "--sizes",
        "97,71,101",
        "--threads",
        "2",
    ]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(": valid, "), "{said}");
    // mv-kernel splits its reduction over k in blocks of the vector width.
    let out = common::output(&[
        "codegen",
        "programs/mv-kernel.guide",
        "--sizes",
        "m=64,k=100",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("size 100/16 is not a whole number") && err.contains("`reduceSeq` cannot"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
