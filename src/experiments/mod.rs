//! Experiments that reproduce the paper's tables as CSV files in `results/`.
//!
//! Each row runs in its own child process (`sketchlog table2-row ...`) under a memory cap
//! (`ulimit -v`) and a time limit, so one row that runs out of memory is recorded as such
//! and the others still run. Files are written to a temporary name and renamed.

pub mod table2;
