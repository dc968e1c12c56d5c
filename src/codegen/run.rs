//! Compiling generated C with a timing harness, running it on inputs, reading back its
//! output, and checking it against the program's meaning ([`validate`]).
//!
//! The C compiler is found by the `cc` crate as Rust build scripts find it: `CC` (or `cc`),
//! with `CFLAGS` added, at `-O3`; the OpenMP flag is the compiler family's (GCC and Clang:
//! `-fopenmp`, with `-fno-math-errno`), and the program's own flags default to
//! `-march=native`.

use super::emit::{lowered_c, Lowering};
use super::target::Target;
use crate::error::{Error, Result};
use crate::rise::term::Term;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// How to compile and run.
#[derive(Clone, Debug)]
pub struct COptions {
    /// Flags after the compiler's own (`-O3`, `CFLAGS`) and OpenMP's.
    pub flags: Vec<String>,
    /// OpenMP threads (`OMP_NUM_THREADS`); with more than one, `OMP_WAIT_POLICY=active` and
    /// `OMP_PROC_BIND=spread` are set too.
    pub threads: usize,
    /// Timed runs after one warm-up run.
    pub runs: usize,
    /// The largest max relative error [`validate`] accepts.
    pub tolerance: f64,
    pub lowering: Lowering,
    /// The machine the C is generated for (the flags must let the compiler target it).
    pub target: Target,
}

impl Default for COptions {
    fn default() -> COptions {
        COptions {
            flags: vec!["-march=native".into()],
            threads: 1,
            runs: 1,
            tolerance: 1e-3,
            lowering: Lowering::Vector,
            target: Target::native(),
        }
    }
}

impl COptions {
    /// The same options for the scalar lowering.
    pub fn scalar(&self) -> COptions {
        COptions {
            lowering: Lowering::Scalar,
            ..self.clone()
        }
    }
}

/// A compiled program: its executable, sizes, the float counts of its inputs and output,
/// the output's shape and its arithmetic operations per run.
pub struct Compiled {
    exe: PathBuf,
    sizes: Vec<i64>,
    inputs: Vec<usize>,
    input_shapes: Vec<Vec<i64>>,
    output: usize,
    output_shape: Vec<i64>,
    pub flops: f64,
    _dir: tempfile::TempDir,
}

/// The system C compiler as the `cc` crate finds it (honouring `CC` and `CFLAGS`), at `-O3`,
/// with its family's OpenMP flag.
fn compiler() -> Result<std::process::Command> {
    let target = env!("SKETCHLOG_TARGET");
    let tool = cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(3)
        .debug(false)
        .warnings(false)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .try_get_compiler()
        .map_err(|e| Error::bad_input(format!("no C compiler: {e}")))?;
    let mut cmd = tool.to_command();
    if tool.is_like_gnu() || tool.is_like_clang() {
        // `<math.h>` functions without `errno`, so that loops calling them vectorise.
        cmd.arg("-fopenmp").arg("-fno-math-errno");
    }
    Ok(cmd)
}

/// Compiles C `sources` into `out` with `opts`' flags (and `extra` ones, such as `-shared`),
/// linking the maths library: a located error when the compiler is missing or refuses them.
pub(super) fn build(
    opts: &COptions,
    sources: &[&std::path::Path],
    out: &std::path::Path,
    extra: &[&str],
) -> Result<()> {
    let mut cmd = compiler()?;
    let cc = cmd.get_program().to_string_lossy().into_owned();
    let done = cmd
        .args(&opts.flags)
        .args(extra)
        .arg("-std=gnu99")
        .args(sources)
        .arg("-o")
        .arg(out)
        .args(libraries())
        .output()
        .map_err(|e| {
            Error::bad_input(format!(
                "no C compiler: `{cc}` could not be started ({e}); install one (e.g. Debian's gcc) or set CC"
            ))
        })?;
    if !done.status.success() {
        return Err(Error::bad_input(format!(
            "the generated C does not compile ({cc}):\n{}",
            String::from_utf8_lossy(&done.stderr)
        )));
    }
    Ok(())
}

/// The libraries generated C links: the maths library, and glibc's vector maths library
/// where it has functions the C may call ([`super::preamble::vector_math`]).
fn libraries() -> &'static [&'static str] {
    match super::preamble::libmvec_functions().is_empty() {
        true => &["-lm"],
        false => &["-lm", "-lmvec"],
    }
}

/// Bytes from which numpy advises an array onto huge pages (and so does the harness).
const NUMPY_HUGE_PAGES: i64 = 4 << 20;

fn harness(name: &str, inputs: &[usize], output: usize) -> String {
    let params = vec!["const float *"; inputs.len()];
    let args: Vec<String> = (0..inputs.len()).map(|i| format!("in[{i}]")).collect();
    let reads: String = inputs
        .iter()
        .enumerate()
        .map(|(i, n)| {
            format!(
                "  in[{i}] = floats({n});\n  if (!in[{i}] || fread(in[{i}], sizeof(float), {n}, f) != {n}) return 2;\n"
            )
        })
        .collect();
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/mman.h>
void {name}({params}float *);
/* Zeroed and cache-line aligned, as a caller of a numerical kernel would pass them; arrays
   of 4 MB or more on huge pages, as numpy allocates its arrays. */
{floats}int main(int argc, char **argv) {{
  if (argc != 4) return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  float *in[{n}];
{reads}  fclose(f);
  float *out = floats({output});
  if (!out) return 2;
  int runs = atoi(argv[3]);
  {name}({args}out);
  for (int r = 0; r < runs; r++) {{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    {name}({args}out);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.6f\n", (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
  }}
  f = fopen(argv[2], "wb");
  if (!f || fwrite(out, sizeof(float), {output}, f) != {output}) return 2;
  fclose(f);
  return 0;
}}
"#,
        params = params.iter().map(|p| format!("{p}, ")).collect::<String>(),
        args = args.iter().map(|a| format!("{a}, ")).collect::<String>(),
        n = inputs.len().max(1),
        floats = super::preamble::allocator("floats", NUMPY_HUGE_PAGES),
    )
}

/// A program's C at given sizes, with its buffers' shapes and a temporary directory to
/// compile it in.
pub(super) struct Generated {
    pub name: &'static str,
    pub c: String,
    pub flops: f64,
    pub input_shapes: Vec<Vec<i64>>,
    pub output_shape: Vec<i64>,
    pub dir: tempfile::TempDir,
}

impl Generated {
    pub fn new(program: &Rc<Term>, sizes: &[i64], opts: &COptions) -> Result<Generated> {
        let name = "rise_program";
        let generated = lowered_c(name, program, sizes, opts.lowering, opts.target)?;
        let (input_shapes, output_shape) = super::emit::buffer_shapes(program, sizes)?;
        let dir = tempfile::Builder::new()
            .prefix("sketchlog-c-")
            .tempdir()
            .map_err(|e| Error::io(&std::env::temp_dir(), e))?;
        let src = dir.path().join("program.c");
        std::fs::write(&src, &generated.c).map_err(|e| Error::io(&src, e))?;
        Ok(Generated {
            name,
            c: generated.c,
            flops: generated.flops,
            input_shapes,
            output_shape,
            dir,
        })
    }

    /// The path of the program's C.
    pub fn source(&self) -> PathBuf {
        self.dir.path().join("program.c")
    }

    /// Floats in each input, and in the output.
    pub fn counts(&self) -> (Vec<usize>, usize) {
        let count = |s: &Vec<i64>| s.iter().product::<i64>() as usize;
        let inputs = self.input_shapes.iter().map(count).collect();
        (inputs, count(&self.output_shape))
    }
}

/// Generates C for `program` at `sizes` and compiles it with a harness.
pub fn compile(program: &Rc<Term>, sizes: &[i64], opts: &COptions) -> Result<Compiled> {
    Unbuilt::new(program, sizes, opts)?.build(opts)
}

/// [`compile`] in `opts`' lowering and in its scalar one (`opts.scalar()`), the two compilers
/// running at once.
pub fn compile_with_scalar(
    program: &Rc<Term>,
    sizes: &[i64],
    opts: &COptions,
) -> Result<(Compiled, Compiled)> {
    let scalar_opts = opts.scalar();
    let ours = Unbuilt::new(program, sizes, opts)?;
    let scalar = Unbuilt::new(program, sizes, &scalar_opts)?;
    std::thread::scope(|s| {
        let scalar = s.spawn(|| scalar.build(&scalar_opts));
        let ours = ours.build(opts);
        let scalar = scalar
            .join()
            .expect("the C compiler's thread does not panic");
        Ok((ours?, scalar?))
    })
}

/// A program's C and harness, written out, not compiled yet.
struct Unbuilt {
    generated: Generated,
    main: PathBuf,
    sizes: Vec<i64>,
    inputs: Vec<usize>,
    output: usize,
}

impl Unbuilt {
    fn new(program: &Rc<Term>, sizes: &[i64], opts: &COptions) -> Result<Unbuilt> {
        let generated = Generated::new(program, sizes, opts)?;
        let (inputs, output) = generated.counts();
        let main = generated.dir.path().join("main.c");
        let harness = harness(generated.name, &inputs, output);
        std::fs::write(&main, harness).map_err(|e| Error::io(&main, e))?;
        Ok(Unbuilt {
            generated,
            main,
            sizes: sizes.to_vec(),
            inputs,
            output,
        })
    }

    fn build(self, opts: &COptions) -> Result<Compiled> {
        let generated = self.generated;
        let exe = generated.dir.path().join("program");
        build(opts, &[&generated.source(), &self.main], &exe, &[])?;
        Ok(Compiled {
            exe,
            sizes: self.sizes,
            inputs: self.inputs,
            input_shapes: generated.input_shapes,
            output: self.output,
            output_shape: generated.output_shape,
            flops: generated.flops,
            _dir: generated.dir,
        })
    }
}

impl Compiled {
    /// The array shapes of the program's inputs and of its output.
    pub fn shapes(&self) -> (&[Vec<i64>], &[i64]) {
        (&self.input_shapes, &self.output_shape)
    }

    /// Runs on `inputs` (row-major floats): the output and each timed run's milliseconds.
    pub fn run(&self, inputs: &[Vec<f32>], opts: &COptions) -> Result<(Vec<f32>, Vec<f64>)> {
        let inp = self.exe.with_file_name("in.bin");
        write_inputs(&inp, inputs)?;
        let times = self.run_file(&inp, input_counts(inputs), opts)?;
        Ok((self.output()?, times))
    }

    /// Runs on `expected`'s inputs, written to a file once for every program that runs on
    /// them: each timed run's milliseconds (the output is not read).
    pub fn time(&self, expected: &Expected, opts: &COptions) -> Result<Vec<f64>> {
        let counts = input_counts(&expected.inputs);
        self.run_file(expected.input_file()?, counts, opts)
    }

    /// Runs on the inputs in the file `inp` (`counts` floats each): each timed run's
    /// milliseconds. The output is left in the file [`Compiled::output`] reads.
    fn run_file(&self, inp: &Path, counts: Vec<usize>, opts: &COptions) -> Result<Vec<f64>> {
        if counts != self.inputs {
            return Err(Error::bad_input(format!(
                "inputs of {counts:?} floats for a program taking {:?}",
                self.inputs
            )));
        }
        let mut cmd = std::process::Command::new(&self.exe);
        cmd.arg(inp)
            .arg(self.output_file())
            .arg(opts.runs.to_string());
        cmd.env("OMP_NUM_THREADS", opts.threads.to_string());
        if opts.threads > 1 {
            cmd.env("OMP_WAIT_POLICY", "active")
                .env("OMP_PROC_BIND", "spread");
        }
        let out = cmd
            .output()
            .map_err(|e| Error::bad_input(format!("running the compiled program: {e}")))?;
        if !out.status.success() {
            return Err(Error::bad_input(format!(
                "the compiled program failed ({})",
                out.status
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect())
    }

    /// Where a run writes its output.
    fn output_file(&self) -> PathBuf {
        self.exe.with_file_name("out.bin")
    }

    /// The output of the last run.
    fn output(&self) -> Result<Vec<f32>> {
        let outp = self.output_file();
        let raw = std::fs::read(&outp).map_err(|e| Error::io(&outp, e))?;
        let result: Vec<f32> = raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if result.len() != self.output {
            return Err(Error::bad_input(
                "the compiled program wrote a short output",
            ));
        }
        Ok(result)
    }
}

fn input_counts(inputs: &[Vec<f32>]) -> Vec<usize> {
    inputs.iter().map(Vec::len).collect()
}

/// Writes `inputs` to `path` as the harness reads them: the floats of each input in turn,
/// little-endian.
fn write_inputs(path: &Path, inputs: &[Vec<f32>]) -> Result<()> {
    let bytes: Vec<u8> = inputs
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))
}

/// A validated, timed run.
#[derive(Debug)]
pub struct Validation {
    /// Every timed run's milliseconds, sorted.
    pub times_ms: Vec<f64>,
    pub median_ms: f64,
    /// The program's arithmetic operations per second (counted in the generated code).
    pub gflops: f64,
    /// The inputs read and the output written once, per second: the traffic no version of
    /// the program avoids (what bounds a memory-bound program such as a matrix-vector product).
    pub gbytes: f64,
    /// max |c - r| / max(|r|, 1) over the compared elements, against the interpreter's `r`.
    pub max_rel_error: f64,
    /// Output elements compared with the interpreter: all of them, or a sample.
    pub compared: usize,
    /// The run's output.
    pub output: Vec<f32>,
}

/// Programs with at most this many arithmetic operations are interpreted whole; larger ones
/// on [`STRETCHES`] stretches of [`STRETCH`] consecutive output elements at random places,
/// plus the first and the last element (the interpreter computes only what those depend
/// on). Consecutive elements span vector lanes and share a tile: a blocked program computes
/// a whole tile to give one of its elements, so a stretch costs about what one element does.
const INTERPRET_WHOLE: f64 = (1u64 << 22) as f64;
const STRETCHES: usize = 12;
const STRETCH: usize = 8;

/// The program's meaning on random inputs, what every run of its compiled form is checked
/// against: the interpreter's value of every output element for a small program, else of a
/// sample (the first and last element and random stretches). Computed once and shared by the
/// runs with each thread count.
pub struct Expected {
    /// The inputs (row-major), uniform in [-1, 1), from a fixed seed.
    pub inputs: Vec<Vec<f32>>,
    /// The output elements compared (row-major positions).
    positions: Vec<usize>,
    /// The interpreter's value at each position.
    values: Vec<f32>,
    /// The inputs in a file, as the harness reads them, once a run asked for it.
    file: std::sync::OnceLock<(tempfile::TempDir, PathBuf)>,
}

impl Expected {
    /// The interpreter's output elements for `exe`'s program on fresh random inputs.
    pub fn of(exe: &Compiled, program: &Rc<Term>) -> Result<Expected> {
        let mut rng = fastrand::Rng::with_seed(INPUT_SEED);
        let inputs = random_inputs(&mut rng, &exe.inputs);
        let positions: Vec<usize> = if exe.flops <= INTERPRET_WHOLE {
            (0..exe.output).collect()
        } else {
            let mut p = vec![0, exe.output - 1];
            for _ in 0..STRETCHES {
                let start = rng.usize(..exe.output.saturating_sub(STRETCH).max(1));
                p.extend((start..exe.output).take(STRETCH));
            }
            p
        };
        let values = interpreted(program, &exe.sizes, &inputs, &positions)?;
        Ok(Expected {
            inputs,
            positions,
            values,
            file: std::sync::OnceLock::new(),
        })
    }

    /// The file of the inputs, written the first time it is asked for.
    fn input_file(&self) -> Result<&Path> {
        if self.file.get().is_none() {
            let dir = tempfile::Builder::new()
                .prefix("sketchlog-inputs-")
                .tempdir()
                .map_err(|e| Error::io(&std::env::temp_dir(), e))?;
            let path = dir.path().join("in.bin");
            write_inputs(&path, &self.inputs)?;
            let _ = self.file.set((dir, path));
        }
        Ok(&self.file.get().expect("written above").1)
    }
}

/// The seed of the random inputs programs are checked on.
const INPUT_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// Inputs of `counts` floats each, uniform in [-1, 1), from `rng`.
fn random_inputs(rng: &mut fastrand::Rng, counts: &[usize]) -> Vec<Vec<f32>> {
    (counts.iter())
        .map(|n| (0..*n).map(|_| rng.f32() * 2.0 - 1.0).collect())
        .collect()
}

/// Inputs of `counts` floats each, uniform in [-1, 1), the same for the same counts: what
/// [`Expected::of`] checks a program on.
pub fn checking_inputs(counts: &[usize]) -> Vec<Vec<f32>> {
    random_inputs(&mut fastrand::Rng::with_seed(INPUT_SEED), counts)
}

/// The program's output at `sizes` on row-major `inputs`, by the interpreter, flattened.
pub fn interpret(program: &Rc<Term>, sizes: &[i64], inputs: &[Vec<f32>]) -> Result<Vec<f32>> {
    use crate::rise::interp::run;
    Ok(run(program, sizes, &interpreter_args(program, sizes, inputs)?)?.flatten_f32()?)
}

/// Row-major `inputs` as the interpreter's arrays of the program's parameter shapes.
fn interpreter_args(
    program: &Rc<Term>,
    sizes: &[i64],
    inputs: &[Vec<f32>],
) -> Result<Vec<crate::rise::interp::Value>> {
    let (shapes, _) = super::emit::buffer_shapes(&super::with_parameters(program), sizes)?;
    let args = inputs.iter().zip(&shapes).map(|(xs, shape)| {
        let shape: Vec<usize> = shape.iter().map(|n| *n as usize).collect();
        crate::rise::interp::Value::from_f32s(Rc::new(xs.clone()), &shape)
    });
    Ok(args.collect())
}

/// Runs `exe` on random inputs and compares its output with the program's meaning, the
/// interpreter's, at the size it ran ([`Expected`]). A max relative error above the
/// tolerance is an error (exit 1) naming the worst element.
pub fn validate(exe: &Compiled, program: &Rc<Term>, opts: &COptions) -> Result<Validation> {
    check(exe, &Expected::of(exe, program)?, opts)
}

/// Runs `exe` on `expected`'s inputs and compares its output with `expected`'s values.
pub fn check(exe: &Compiled, expected: &Expected, opts: &COptions) -> Result<Validation> {
    let counts = input_counts(&expected.inputs);
    let mut times = exe.run_file(expected.input_file()?, counts, opts)?;
    let output = exe.output()?;
    let (mut worst, mut max_rel_error) = (0, 0.0f64);
    for (&p, &r) in expected.positions.iter().zip(&expected.values) {
        let e = ((output[p] - r).abs() / r.abs().max(1.0)) as f64;
        if e > max_rel_error || e.is_nan() {
            (worst, max_rel_error) = (p, if e.is_nan() { f64::INFINITY } else { e });
        }
    }
    if max_rel_error > opts.tolerance {
        let at = expected.positions.iter().position(|&p| p == worst);
        let r = expected.values[at.unwrap_or(0)];
        return Err(Error::check_failed(format!(
            "the compiled program's output differs from the program's meaning: out{} is {} where the interpreter gives {r} (relative error {max_rel_error:.2e}, above the tolerance {:e})",
            index_of(worst, &exe.output_shape),
            output[worst],
            opts.tolerance
        )));
    }
    times.sort_by(f64::total_cmp);
    let median_ms = times.get(times.len() / 2).copied().unwrap_or(f64::NAN);
    let bytes = 4.0 * (exe.inputs.iter().sum::<usize>() + exe.output) as f64;
    Ok(Validation {
        median_ms,
        gflops: exe.flops / (median_ms * 1e6),
        gbytes: bytes / (median_ms * 1e6),
        times_ms: times,
        max_rel_error,
        compared: expected.positions.len(),
        output,
    })
}

/// `[i][j]..` of row-major position `flat` in an array of `shape`.
fn index_of(mut flat: usize, shape: &[i64]) -> String {
    let mut index = vec![0; shape.len()];
    for (d, n) in shape.iter().enumerate().rev() {
        let n = (*n as usize).max(1);
        index[d] = flat % n;
        flat /= n;
    }
    index.iter().map(|i| format!("[{i}]")).collect()
}

/// The interpreter's output elements at row-major `positions`.
fn interpreted(
    program: &Rc<Term>,
    sizes: &[i64],
    inputs: &[Vec<f32>],
    positions: &[usize],
) -> Result<Vec<f32>> {
    use crate::rise::interp::run;
    if positions.len() > 1 && positions.iter().enumerate().all(|(i, p)| i == *p) {
        return interpret(program, sizes, inputs);
    }
    let args = interpreter_args(program, sizes, inputs)?;
    // A fresh evaluation for each stretch of consecutive elements (and for the first and the
    // last): what the lazy interpreter keeps while computing them (its memoised intermediate
    // arrays, such as a tile) is dropped before the next.
    let mut values = vec![];
    let mut rest = positions;
    while !rest.is_empty() {
        let n = 1 + rest.windows(2).take_while(|w| w[1] == w[0] + 1).count();
        let v = run(program, sizes, &args)?;
        for p in &rest[..n] {
            values.push(v.at_flat(*p)?);
        }
        rest = &rest[n..];
    }
    Ok(values)
}
