//! Experiments that reproduce the paper's tables as CSV files in `results/`.
//!
//! Each row runs in its own child process (`sketchlog table2-row ...`) under a memory cap
//! (`ulimit -v`) and a time limit, so one row that runs out of memory is recorded as such
//! and the others still run. Files are written to a temporary name and renamed.

pub mod table2;

use crate::error::{Error, Result};
use std::path::Path;

/// Writes `contents` to `path` atomically (temporary file, then rename).
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, contents).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

/// Peak resident set size of this process in MB (Linux `VmHWM`).
pub fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
