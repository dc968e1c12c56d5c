//! Compiling generated C with a timing harness, running it on inputs, and reading back its
//! output. The compiler is `$CC` or `cc` (as the `cc` crate finds it), with `-O3
//! -march=native -fopenmp` unless other flags are given.

use super::emit::program_c;
use crate::error::{Error, Result};
use crate::rise::term::Term;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;

/// How to compile and run.
#[derive(Clone, Debug)]
pub struct COptions {
    pub flags: Vec<String>,
    /// OpenMP threads (`OMP_NUM_THREADS`); with more than one, `OMP_WAIT_POLICY=active` and
    /// `OMP_PROC_BIND=spread` are set too.
    pub threads: usize,
    /// Timed runs after one warm-up run.
    pub runs: usize,
}

impl Default for COptions {
    fn default() -> COptions {
        COptions {
            flags: ["-O3", "-march=native", "-fopenmp"]
                .map(String::from)
                .to_vec(),
            threads: 1,
            runs: 1,
        }
    }
}

/// A compiled program: its executable and the float counts of its inputs and output.
pub struct Compiled {
    exe: PathBuf,
    inputs: Vec<usize>,
    output: usize,
    _dir: TempDir,
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

fn harness(name: &str, inputs: &[usize], output: usize) -> String {
    let params = vec!["const float *"; inputs.len()];
    let args: Vec<String> = (0..inputs.len()).map(|i| format!("in[{i}]")).collect();
    let reads: String = inputs
        .iter()
        .enumerate()
        .map(|(i, n)| {
            format!(
                "  in[{i}] = malloc({n} * sizeof(float));\n  if (fread(in[{i}], sizeof(float), {n}, f) != {n}) return 2;\n"
            )
        })
        .collect();
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <time.h>
void {name}({params}float *);
int main(int argc, char **argv) {{
  if (argc != 4) return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  float *in[{n}];
{reads}  fclose(f);
  float *out = calloc({output}, sizeof(float));
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
    )
}

/// Generates C for `program` at `sizes` and compiles it with a harness.
pub fn compile(program: &Rc<Term>, sizes: &[i64], opts: &COptions) -> Result<Compiled> {
    let name = "rise_program";
    let c = program_c(name, program, sizes)?;
    let (inputs, output) = super::emit::buffer_sizes(program, sizes)?;
    let dir = std::env::temp_dir().join(format!(
        "sketchlog-c-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let dir = TempDir(dir);
    let (src, main, exe) = (
        dir.0.join("program.c"),
        dir.0.join("main.c"),
        dir.0.join("program"),
    );
    std::fs::write(&src, &c).map_err(|e| Error::io(&src, e))?;
    std::fs::write(&main, harness(name, &inputs, output)).map_err(|e| Error::io(&main, e))?;
    let cc = compiler();
    let out = Command::new(&cc)
        .args(&opts.flags)
        .arg("-std=gnu99")
        .arg(&src)
        .arg(&main)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| {
            Error::bad_input(format!(
                "no C compiler: `{cc}` could not be started ({e}); install one (e.g. Debian's gcc) or set CC"
            ))
        })?;
    if !out.status.success() {
        return Err(Error::bad_input(format!(
            "the generated C does not compile ({cc}):\n{}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(Compiled {
        exe,
        inputs,
        output,
        _dir: dir,
    })
}

static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Compiled {
    /// Runs on `inputs` (row-major floats): the output and each timed run's milliseconds.
    pub fn run(&self, inputs: &[Vec<f32>], opts: &COptions) -> Result<(Vec<f32>, Vec<f64>)> {
        let sizes: Vec<usize> = inputs.iter().map(Vec::len).collect();
        if sizes != self.inputs {
            return Err(Error::bad_input(format!(
                "inputs of {sizes:?} floats for a program taking {:?}",
                self.inputs
            )));
        }
        let dir = self.exe.parent().unwrap_or(Path::new("."));
        let (inp, outp) = (dir.join("in.bin"), dir.join("out.bin"));
        let bytes: Vec<u8> = inputs
            .iter()
            .flatten()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        std::fs::write(&inp, bytes).map_err(|e| Error::io(&inp, e))?;
        let mut cmd = Command::new(&self.exe);
        cmd.arg(&inp).arg(&outp).arg(opts.runs.to_string());
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
        let times = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
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
        Ok((result, times))
    }
}

/// A validated, timed run.
pub struct Validation {
    pub median_ms: f64,
    /// 2 * product of the sizes (a matrix multiplication's flops) per second.
    pub gflops: f64,
    /// max |c - r| / max(|r|, 1) over the output, against the reference `r`.
    pub max_rel_error: f64,
}

/// Runs `exe` (compiled from `program` at `sizes`) on random inputs and compares it with a
/// reference: the interpreter when the program is small enough, else (two matrices, as a
/// matrix multiplication's shapes) a naive product in double precision.
pub fn validate(
    exe: &Compiled,
    program: &Rc<Term>,
    sizes: &[i64],
    opts: &COptions,
) -> Result<Validation> {
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut random = |n: usize| -> Vec<f32> {
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 40) as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect()
    };
    let inputs: Vec<Vec<f32>> = exe.inputs.iter().map(|n| random(*n)).collect();
    let (out, mut times) = exe.run(&inputs, opts)?;
    let work: f64 = sizes.iter().map(|s| *s as f64).product();
    let reference = if work <= (1 << 21) as f64 {
        interpreted(program, sizes, &inputs)?
    } else if let ([m, n, k], [a, b]) = (sizes, inputs.as_slice()) {
        naive_product(a, b, *m as usize, *n as usize, *k as usize)
    } else {
        return Err(Error::bad_input(
            "no reference for a large program that is not a matrix multiplication",
        ));
    };
    let max_rel_error = out
        .iter()
        .zip(&reference)
        .map(|(c, r)| ((c - r).abs() / r.abs().max(1.0)) as f64)
        .fold(0.0, f64::max);
    times.sort_by(|a, b| a.total_cmp(b));
    let median_ms = times.get(times.len() / 2).copied().unwrap_or(f64::NAN);
    Ok(Validation {
        median_ms,
        gflops: 2.0 * work / (median_ms * 1e6),
        max_rel_error,
    })
}

fn interpreted(program: &Rc<Term>, sizes: &[i64], inputs: &[Vec<f32>]) -> Result<Vec<f32>> {
    use crate::rise::interp::{run, Value};
    let (shapes, _) = super::emit::buffer_shapes(program, sizes)?;
    let args: Vec<Value> = inputs
        .iter()
        .zip(&shapes)
        .map(|(xs, shape)| nested(xs, shape))
        .collect();
    let v =
        run(program, sizes, &args).map_err(|e| Error::bad_input(format!("interpreter: {e}")))?;
    v.flatten_f32()
        .map_err(|e| Error::bad_input(format!("interpreter: {e}")))
}

/// Row-major floats as nested arrays of `shape`.
fn nested(xs: &[f32], shape: &[i64]) -> crate::rise::interp::Value {
    use crate::rise::interp::Value;
    match shape.split_first() {
        None => Value::F32(xs[0]),
        Some((n, rest)) => {
            let step = xs.len() / (*n as usize).max(1);
            Value::array(xs.chunks(step.max(1)).map(|c| nested(c, rest)).collect())
        }
    }
}

fn naive_product(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for l in 0..k {
            let x = a[i * k + l] as f64;
            for j in 0..n {
                c[i * n + j] += (x * b[l * n + j] as f64) as f32;
            }
        }
    }
    c
}
