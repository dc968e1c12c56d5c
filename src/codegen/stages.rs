//! Where a program's time goes, stage by stage: generated C with a clock around each stored
//! stage (`codegen --stages`, `bench-c --stages`).
//!
//! A stage is a value the C stores in a buffer of its own before reading it (a `toMem`, a
//! strip's grayscale image, a row of column sums): each of [`STAGE_FLOATS`] floats or more is
//! timed, each time its loops run, by `CLOCK_MONOTONIC` around them, the times added up over
//! the calls of the program and over its threads. A stage stored inside another one's loops
//! is timed within it too (its [`Stage::depth`] says how deep). The program writes the sums
//! when its process exits, to the file that `RISE_STAGES` names.

use crate::error::{Error, Result};
use std::path::Path;

/// Buffers of fewer floats are not timed: a clock read costs some 20 ns, about what storing
/// a few hundred floats takes.
pub const STAGE_FLOATS: i64 = 1024;

/// A timed stage: the buffer it is stored in, the buffer's type (at the program's sizes) and
/// how many timed stages enclose it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    pub buffer: String,
    pub ty: String,
    pub depth: usize,
}

/// A stage's time in a run of the program ([`read`]).
#[derive(Clone, Debug, PartialEq)]
pub struct StageTime {
    pub stage: Stage,
    /// Milliseconds a call of the program, summed over its threads.
    pub ms_per_call: f64,
    /// How many times a call runs the stage's loops.
    pub runs_per_call: f64,
}

/// The C that times `count` stages: `rise_stage_now()` (milliseconds), `rise_stage_done(k,
/// t0)` (adds the time since `t0` to stage `k`), the count of the program's calls
/// (`rise_stage_calls`, which the program's first statement increments) and, when the process
/// exits, the sums written to the file `RISE_STAGES` names: `calls N`, then a line `K MS
/// RUNS` a stage.
pub fn preamble(count: usize) -> String {
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double rise_stage_ms[{count}];
static long rise_stage_runs[{count}], rise_stage_calls;
static double rise_stage_now(void) {{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}}
static void rise_stage_done(int k, double t0) {{
  double ms = rise_stage_now() - t0;
  #pragma omp atomic
  rise_stage_ms[k] += ms;
  #pragma omp atomic
  rise_stage_runs[k] += 1;
}}
__attribute__((destructor)) static void rise_stages_write(void) {{
  const char *path = getenv("RISE_STAGES");
  FILE *f = path ? fopen(path, "w") : NULL;
  if (!f) return;
  fprintf(f, "calls %ld\n", rise_stage_calls);
  for (int k = 0; k < {count}; k++) fprintf(f, "%d %.6f %ld\n", k, rise_stage_ms[k], rise_stage_runs[k]);
  fclose(f);
}}

"#
    )
}

/// The statement that counts a call, first in the program's body.
pub const COUNT_CALL: &str = "  rise_stage_calls++;\n";

/// The stages' times from the file a run of the program wrote ([`preamble`]), per call.
pub fn read(path: &Path, stages: &[Stage]) -> Result<Vec<StageTime>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let bad = || Error::internal(format!("{}: not a stage report", path.display()));
    let mut lines = text.lines();
    let calls: f64 = lines
        .next()
        .and_then(|l| l.strip_prefix("calls "))
        .and_then(|n| n.parse().ok())
        .ok_or_else(bad)?;
    let calls = calls.max(1.0);
    let mut times = vec![];
    for (line, stage) in lines.zip(stages) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, ms, runs] = fields[..] else {
            return Err(bad());
        };
        let (ms, runs): (f64, f64) = (
            ms.parse().map_err(|_| bad())?,
            runs.parse().map_err(|_| bad())?,
        );
        times.push(StageTime {
            stage: stage.clone(),
            ms_per_call: ms / calls,
            runs_per_call: runs / calls,
        });
    }
    if times.len() != stages.len() {
        return Err(bad());
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_read_per_call_and_a_malformed_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stages.txt");
        let stage = |buffer: &str| Stage {
            buffer: buffer.into(),
            ty: "1024.f32".into(),
            depth: 0,
        };
        let stages = [stage("buf1"), stage("buf2")];
        std::fs::write(&path, "calls 4\n0 8.0 4\n1 2.0 40\n").unwrap();
        let times = read(&path, &stages).unwrap();
        assert_eq!((times[0].ms_per_call, times[0].runs_per_call), (2.0, 1.0));
        assert_eq!((times[1].ms_per_call, times[1].runs_per_call), (0.5, 10.0));
        for text in [
            "0 8.0 4\n",
            "calls 4\n0 8.0\n1 2.0 40\n",
            "calls 4\n0 8.0 4\n",
        ] {
            std::fs::write(&path, text).unwrap();
            assert!(read(&path, &stages).is_err(), "{text}");
        }
    }
}
