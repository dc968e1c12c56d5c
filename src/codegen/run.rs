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
use std::sync::Arc;

/// How to compile and run.
#[derive(Clone, Debug)]
pub struct COptions {
    /// Flags after the compiler's own (`-O3`, `CFLAGS`) and OpenMP's.
    pub flags: Vec<String>,
    /// OpenMP threads (`OMP_NUM_THREADS`); with more than one, `OMP_WAIT_POLICY=active` and
    /// `OMP_PROC_BIND=spread` are set too.
    pub threads: usize,
    /// Timed runs after one warm-up run: exactly these, or as many as `round` says.
    pub runs: usize,
    /// A round of timed runs that lasts a time rather than exactly `runs` runs.
    pub round: Option<RoundLength>,
    /// The largest max relative error [`validate`] accepts.
    pub tolerance: f64,
    pub lowering: Lowering,
    /// The machine the C is generated for (the flags must let the compiler target it).
    pub target: Target,
    /// Time the C's stages ([`super::stages`]; read with [`Compiled::stage_times`]).
    pub stages: bool,
}

/// A round of timed runs that lasts about `ms` milliseconds of the program's runs (one run at
/// least), and for a fast program at least [`COptions::runs`] runs and `shortest_ms`
/// milliseconds, in at most `most` runs unless more runs are asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundLength {
    pub ms: f64,
    pub shortest_ms: f64,
    pub most: usize,
}

impl Default for COptions {
    fn default() -> COptions {
        COptions {
            flags: vec!["-march=native".into()],
            threads: 1,
            runs: 1,
            round: None,
            tolerance: 1e-3,
            lowering: Lowering::Vector,
            target: Target::native(),
            stages: false,
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

/// A compiled program: its executable (which may hold its scalar lowering too: `function`
/// says which of its functions is this program), sizes, the float counts of its inputs and
/// output, the output's shape and its arithmetic operations per run.
pub struct Compiled {
    exe: Arc<Executable>,
    function: usize,
    layout: Arc<Layout>,
    pub flops: f64,
    /// The generator's remarks on its C ([`crate::codegen::emit::Generated::remarks`]).
    pub remarks: Vec<String>,
    /// The stages its C times ([`COptions::stages`]).
    stages: Vec<super::stages::Stage>,
}

/// An executable built from generated C and a harness, in its temporary directory.
struct Executable {
    path: PathBuf,
    dir: tempfile::TempDir,
}

/// The system C compiler as the `cc` crate finds it (honouring `CC` and `CFLAGS`), at `-O3`,
/// with its family's OpenMP flag. Found once a process: finding it runs the compiler.
fn compiler() -> Result<std::process::Command> {
    static TOOL: std::sync::OnceLock<std::result::Result<cc::Tool, String>> =
        std::sync::OnceLock::new();
    let tool = TOOL.get_or_init(|| {
        let target = env!("SKETCHLOG_TARGET");
        cc::Build::new()
            .target(target)
            .host(target)
            .opt_level(3)
            .debug(false)
            .warnings(false)
            .cargo_metadata(false)
            .cargo_warnings(false)
            .try_get_compiler()
            .map_err(|e| e.to_string())
    });
    let tool = tool
        .as_ref()
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

/// The `main` that runs the functions `names` (one program, or a program and its scalar
/// lowering) on the inputs in the file `argv[1]`: a warm-up run of each function `argv[4]`
/// names by index (`0`, `1`, or `01`: the two alternating, run by run, on the same arrays),
/// each from a zeroed output that it writes to `out{INDEX}.bin` in the directory `argv[2]`
/// (none when that is `-`), then timed runs, printing `INDEX MILLISECONDS` a run. The timing
/// stops ([`RoundLength`]) before a run when the first function's timed runs add up to
/// `argv[5]` milliseconds, or when there have been `argv[3]` runs and they add up to
/// `argv[6]` milliseconds or there have been `argv[7]` runs; after one run at least.
fn harness(names: &[&str], inputs: &[usize], output: usize) -> String {
    let params = vec!["const float *"; inputs.len()];
    let args: Vec<String> = (0..inputs.len()).map(|i| format!("in[{i}], ")).collect();
    let args = args.concat();
    let reads: String = inputs
        .iter()
        .enumerate()
        .map(|(i, n)| {
            format!(
                "  in[{i}] = floats({n});\n  if (!in[{i}] || fread(in[{i}], sizeof(float), {n}, f) != {n}) return 2;\n"
            )
        })
        .collect();
    let params = params.iter().map(|p| format!("{p}, ")).collect::<String>();
    let declarations: String = (names.iter())
        .map(|name| format!("void {name}({params}float *);\n"))
        .collect();
    let calls: String = (names.iter().enumerate())
        .map(|(k, name)| format!("    case {k}: {name}({args}out); break;\n"))
        .collect();
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/mman.h>
{declarations}/* Zeroed and cache-line aligned, as a caller of a numerical kernel would pass them; arrays
   of 4 MB or more on huge pages, as numpy allocates its arrays. */
{floats}static float *in[{n}], *out;
static void call(int k) {{
  switch (k) {{
{calls}  }}
}}
int main(int argc, char **argv) {{
  if (argc != 8) return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
{reads}  fclose(f);
  out = floats({output});
  if (!out) return 2;
  const char *dir = strcmp(argv[2], "-") ? argv[2] : NULL, *which = argv[4];
  int runs = atoi(argv[3]), most = atoi(argv[7]);
  double round_ms = atof(argv[5]), shortest_ms = atof(argv[6]), spent = 0;
  for (const char *k = which; *k; k++) {{
    if (dir) memset(out, 0, sizeof(float) * {output});
    call(*k - '0');
    if (!dir) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/out%c.bin", dir, *k);
    f = fopen(path, "wb");
    if (!f || fwrite(out, sizeof(float), {output}, f) != {output}) return 2;
    fclose(f);
  }}
  for (int r = 0; runs > 0; r++) {{
    if (r > 0 && (spent >= round_ms || (r >= runs && (spent >= shortest_ms || r >= most)))) break;
    for (const char *k = which; *k; k++) {{
      struct timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      call(*k - '0');
      clock_gettime(CLOCK_MONOTONIC, &t1);
      double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
      if (k == which) spent += ms;
      printf("%c %.6f\n", *k, ms);
    }}
  }}
  return 0;
}}
"#,
        n = inputs.len().max(1),
        floats = super::preamble::allocator("floats", NUMPY_HUGE_PAGES),
    )
}

/// A program's C at given sizes, with its buffers' shapes and a temporary directory to
/// compile it in.
pub(super) struct Generated {
    pub name: &'static str,
    pub code: super::emit::Generated,
    pub input_shapes: Vec<Vec<i64>>,
    pub output_shape: Vec<i64>,
    pub dir: tempfile::TempDir,
}

impl Generated {
    pub fn new(program: &Rc<Term>, sizes: &[i64], opts: &COptions) -> Result<Generated> {
        let name = "rise_program";
        let machine = (opts.lowering, opts.target);
        let generated = super::emit::lowered_c_staged(name, program, sizes, machine, opts.stages)?;
        let (input_shapes, output_shape) = super::emit::buffer_shapes(program, sizes)?;
        let dir = tempfile::Builder::new()
            .prefix("sketchlog-c-")
            .tempdir()
            .map_err(|e| Error::io(&std::env::temp_dir(), e))?;
        let src = dir.path().join("program.c");
        std::fs::write(&src, &generated.c).map_err(|e| Error::io(&src, e))?;
        Ok(Generated {
            name,
            code: generated,
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

    /// The executable of the harness for the functions `names` linked with `objects` (the
    /// program's C or objects compiled from it), in the program's directory.
    fn link(&self, names: &[&str], objects: &[&Path], opts: &COptions) -> Result<PathBuf> {
        let (inputs, output) = self.counts();
        let main = self.dir.path().join("main.c");
        std::fs::write(&main, harness(names, &inputs, output)).map_err(|e| Error::io(&main, e))?;
        let path = self.dir.path().join("program");
        let mut sources = vec![main.as_path()];
        sources.extend_from_slice(objects);
        build(opts, &sources, &path, &[])?;
        Ok(path)
    }
}

/// The name of the scalar lowering's function in an executable that holds both lowerings.
const SCALAR: &str = "rise_scalar";

/// Generates C for `program` at `sizes` and compiles it with a harness.
pub fn compile(program: &Rc<Term>, sizes: &[i64], opts: &COptions) -> Result<Compiled> {
    let generated = Generated::new(program, sizes, opts)?;
    let path = generated.link(&[generated.name], &[&generated.source()], opts)?;
    let layout = Layout::of(&generated, sizes);
    Ok(Compiled::new(
        Executable::new(path, generated.dir),
        0,
        &layout,
        generated.code,
    ))
}

/// [`compile`] in `opts`' lowering and in its scalar one (`opts.scalar()`), the two compiled
/// at once into one executable: the two [`Compiled`] run its two functions, alone or
/// alternating ([`Compiled::time_beside`]).
pub fn compile_with_scalar(
    program: &Rc<Term>,
    sizes: &[i64],
    opts: &COptions,
) -> Result<(Compiled, Compiled)> {
    let generated = Generated::new(program, sizes, opts)?;
    let scalar_opts = opts.scalar();
    let scalar = lowered_c(SCALAR, program, sizes, Lowering::Scalar, opts.target)?;
    let dir = generated.dir.path().to_path_buf();
    let scalar_c = dir.join("scalar.c");
    std::fs::write(&scalar_c, &scalar.c).map_err(|e| Error::io(&scalar_c, e))?;
    let (ours_o, scalar_o) = (dir.join("program.o"), dir.join("scalar.o"));
    let source = generated.source();
    std::thread::scope(|s| {
        let theirs = s.spawn(|| build(&scalar_opts, &[&scalar_c], &scalar_o, &["-c"]));
        let ours = build(opts, &[&source], &ours_o, &["-c"]);
        let theirs = theirs
            .join()
            .expect("the C compiler's thread does not panic");
        ours.and(theirs)
    })?;
    let path = generated.link(&[generated.name, SCALAR], &[&ours_o, &scalar_o], opts)?;
    let layout = Layout::of(&generated, sizes);
    let exe = Executable::new(path, generated.dir);
    let ours = Compiled::new(exe.clone(), 0, &layout, generated.code);
    Ok((ours, Compiled::new(exe, 1, &layout, scalar)))
}

/// A program's sizes and the float counts and shapes of its inputs and output.
struct Layout {
    sizes: Vec<i64>,
    inputs: Vec<usize>,
    input_shapes: Vec<Vec<i64>>,
    output: usize,
    output_shape: Vec<i64>,
}

impl Layout {
    fn of(generated: &Generated, sizes: &[i64]) -> Arc<Layout> {
        let (inputs, output) = generated.counts();
        Arc::new(Layout {
            sizes: sizes.to_vec(),
            inputs,
            input_shapes: generated.input_shapes.clone(),
            output,
            output_shape: generated.output_shape.clone(),
        })
    }
}

impl Executable {
    fn new(path: PathBuf, dir: tempfile::TempDir) -> Arc<Executable> {
        Arc::new(Executable { path, dir })
    }
}

impl Compiled {
    fn new(
        exe: Arc<Executable>,
        function: usize,
        layout: &Arc<Layout>,
        generated: super::emit::Generated,
    ) -> Compiled {
        Compiled {
            exe,
            function,
            layout: layout.clone(),
            flops: generated.flops,
            remarks: generated.remarks,
            stages: generated.stages,
        }
    }

    /// The time of each stage of its C, a call, over the calls of its last run (one compiled
    /// with [`COptions::stages`]).
    pub fn stage_times(&self) -> Result<Vec<super::stages::StageTime>> {
        super::stages::read(&self.stage_file(), &self.stages)
    }

    /// The file its C writes its stages' times to.
    fn stage_file(&self) -> PathBuf {
        self.exe.path.with_file_name("stages.txt")
    }

    /// The array shapes of the program's inputs and of its output.
    pub fn shapes(&self) -> (&[Vec<i64>], &[i64]) {
        (&self.layout.input_shapes, &self.layout.output_shape)
    }

    /// Runs on `inputs` (row-major floats): the output and each timed run's milliseconds.
    pub fn run(&self, inputs: &[Vec<f32>], opts: &COptions) -> Result<(Vec<f32>, Vec<f64>)> {
        let inp = self.exe.path.with_file_name("in.bin");
        write_inputs(&inp, inputs)?;
        let mut times = self.run_file(&inp, input_counts(inputs), opts, &[self], true)?;
        Ok((self.output()?, times.pop().unwrap_or_default()))
    }

    /// Runs on `expected`'s inputs, written to a file once for every program that runs on
    /// them: each timed run's milliseconds (no output is written).
    pub fn time(&self, expected: &Expected, opts: &COptions) -> Result<Vec<f64>> {
        let counts = input_counts(&expected.inputs);
        let mut times = self.run_file(expected.input_file()?, counts, opts, &[self], false)?;
        Ok(times.pop().unwrap_or_default())
    }

    /// This program and `other`, the other function of its executable (its scalar lowering,
    /// [`compile_with_scalar`]), run by run in turn in one process on the same arrays, on
    /// `expected`'s inputs: each one's timed runs' milliseconds. What varies between
    /// processes (where the arrays lie in memory, what else the machine runs) then weighs on
    /// both alike.
    pub fn time_beside(
        &self,
        other: &Compiled,
        expected: &Expected,
        opts: &COptions,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        self.beside(other, expected, opts, false)
    }

    /// [`Compiled::time_beside`], with both programs' outputs (of their warm-up runs) checked
    /// against `expected` ([`check`]): this program's validation and the other's.
    pub fn check_beside(
        &self,
        other: &Compiled,
        expected: &Expected,
        opts: &COptions,
    ) -> Result<(Validation, Validation)> {
        let (ours, theirs) = self.beside(other, expected, opts, true)?;
        let ours = self.validate(expected, ours, opts.tolerance)?;
        let theirs = other
            .validate(expected, theirs, opts.tolerance)
            .map_err(|mut e| {
                e.message = format!("the scalar lowering: {}", e.message);
                e
            })?;
        Ok((ours, theirs))
    }

    /// This program and `other` in turn in one process ([`Compiled::time_beside`]), writing
    /// their outputs if `outputs`: each one's timed runs' milliseconds.
    fn beside(
        &self,
        other: &Compiled,
        expected: &Expected,
        opts: &COptions,
        outputs: bool,
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        if !Arc::ptr_eq(&self.exe, &other.exe) {
            return Err(Error::internal(
                "programs timed in turn are two functions of one executable",
            ));
        }
        let counts = input_counts(&expected.inputs);
        let inp = expected.input_file()?;
        let mut times = self.run_file(inp, counts, opts, &[self, other], outputs)?;
        let theirs = times.pop().unwrap_or_default();
        Ok((times.pop().unwrap_or_default(), theirs))
    }

    /// Runs the functions of `programs` (of this executable) in turn on the inputs in the
    /// file `inp` (`counts` floats each): each one's timed runs' milliseconds. With
    /// `outputs`, each program's warm-up run leaves its output in its file
    /// ([`Compiled::output`]).
    fn run_file(
        &self,
        inp: &Path,
        counts: Vec<usize>,
        opts: &COptions,
        programs: &[&Compiled],
        outputs: bool,
    ) -> Result<Vec<Vec<f64>>> {
        if counts != self.layout.inputs {
            return Err(Error::bad_input(format!(
                "inputs of {counts:?} floats for a program taking {:?}",
                self.layout.inputs
            )));
        }
        let which: String = programs.iter().map(|p| p.function.to_string()).collect();
        let dir = match outputs {
            true => self.exe.dir.path().as_os_str(),
            false => std::ffi::OsStr::new("-"),
        };
        let round = opts.round.unwrap_or(RoundLength {
            ms: f64::INFINITY,
            shortest_ms: 0.0,
            most: opts.runs,
        });
        let mut cmd = std::process::Command::new(&self.exe.path);
        cmd.arg(inp)
            .arg(dir)
            .arg(opts.runs.to_string())
            .arg(&which)
            .arg(round.ms.to_string())
            .arg(round.shortest_ms.to_string())
            .arg(round.most.to_string());
        cmd.env("OMP_NUM_THREADS", opts.threads.to_string());
        if !self.stages.is_empty() {
            cmd.env("RISE_STAGES", self.stage_file());
        }
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
        let mut times = vec![vec![]; programs.len()];
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let mut words = line.split_whitespace();
            let (Some(function), Some(ms)) = (words.next(), words.next()) else {
                continue;
            };
            let k = programs
                .iter()
                .position(|p| p.function.to_string() == function);
            if let (Some(k), Ok(ms)) = (k, ms.parse()) {
                times[k].push(ms);
            }
        }
        Ok(times)
    }

    /// Where a run of this program writes its output (the harness's `out{INDEX}.bin`).
    fn output_file(&self) -> PathBuf {
        self.exe
            .dir
            .path()
            .join(format!("out{}.bin", self.function))
    }

    /// The output this program's last run that wrote one left.
    fn output(&self) -> Result<Vec<f32>> {
        let outp = self.output_file();
        let raw = std::fs::read(&outp).map_err(|e| Error::io(&outp, e))?;
        let result: Vec<f32> = raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if result.len() != self.layout.output {
            return Err(Error::bad_input(
                "the compiled program wrote a short output",
            ));
        }
        Ok(result)
    }

    /// This program's output, left by a run that wrote it, compared with `expected`'s
    /// values: an error naming the worst element when the max relative error is above
    /// `tolerance`, else the validation of the run's timed runs `times`.
    fn validate(
        &self,
        expected: &Expected,
        mut times: Vec<f64>,
        tolerance: f64,
    ) -> Result<Validation> {
        let output = self.output()?;
        let (mut worst, mut max_rel_error) = (0, 0.0f64);
        for (&p, &r) in expected.positions.iter().zip(&expected.values) {
            let e = ((output[p] - r).abs() / r.abs().max(1.0)) as f64;
            if e > max_rel_error || e.is_nan() {
                (worst, max_rel_error) = (p, if e.is_nan() { f64::INFINITY } else { e });
            }
        }
        if max_rel_error > tolerance {
            let at = expected.positions.iter().position(|&p| p == worst);
            let r = expected.values[at.unwrap_or(0)];
            return Err(Error::check_failed(format!(
                "the compiled program's output differs from the program's meaning: out{} is {} where the interpreter gives {r} (relative error {max_rel_error:.2e}, above the tolerance {tolerance:e})",
                index_of(worst, &self.layout.output_shape),
                output[worst],
            )));
        }
        times.sort_by(f64::total_cmp);
        let median_ms = times.get(times.len() / 2).copied().unwrap_or(f64::NAN);
        let bytes = 4.0 * (self.layout.inputs.iter().sum::<usize>() + self.layout.output) as f64;
        Ok(Validation {
            median_ms,
            gflops: self.flops / (median_ms * 1e6),
            gbytes: bytes / (median_ms * 1e6),
            times_ms: times,
            max_rel_error,
            compared: expected.positions.len(),
            output,
        })
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
        let inputs = random_inputs(&mut rng, &exe.layout.inputs);
        let positions: Vec<usize> = if exe.flops <= INTERPRET_WHOLE {
            (0..exe.layout.output).collect()
        } else {
            let mut p = vec![0, exe.layout.output - 1];
            for _ in 0..STRETCHES {
                let start = rng.usize(..exe.layout.output.saturating_sub(STRETCH).max(1));
                p.extend((start..exe.layout.output).take(STRETCH));
            }
            p
        };
        let values = interpreted(program, &exe.layout.sizes, &inputs, &positions)?;
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
    let mut times = exe.run_file(expected.input_file()?, counts, opts, &[exe], true)?;
    exe.validate(expected, times.pop().unwrap_or_default(), opts.tolerance)
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
