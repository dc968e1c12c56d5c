//! Experiments that reproduce the paper's tables and figures as CSV (and SVG) files in
//! `results/`: Table 2 (lambda-calculus encodings, [`table2`]) and the matrix
//! multiplication case study's Tables 3, 4, 5 and Figure 16 ([`matmul`], [`plot`]), the
//! generated C's performance ([`codegen`]), the Harris corner detector beside Halide and
//! OpenCV ([`harris`]), every guide step's C beside its scalar lowering ([`steps`]), the
//! Rise project's own tests ([`shine`]), the guides found automatically beside the
//! written ones ([`auto`]), and Elevate's strategies beside the guides ([`elevate`]).
//!
//! Each row runs in its own child process of `sketchlog` ([`crate::cluster::child`]) under a memory cap
//! (`RLIMIT_AS`, set by the child) and a time limit, so a row that runs out of memory is recorded as such and
//! the others still run. Files are written to a temporary name and renamed.
//!
//! The paper's inputs (`programs/`, `rules/`) are read from [`inputs_dir`], whatever the
//! working directory.

pub mod auto;
pub mod codegen;
pub mod elevate;
pub mod harris;
pub mod jobs;
pub mod matmul;
pub mod plot;
pub mod reproduce;
pub mod scale;
pub mod shine;
pub mod steps;
pub mod sweep;
pub mod table2;

use crate::cluster::child::{End, ProcessLimit};
use crate::egraph::saturate::StopReason;
use std::path::{Path, PathBuf};

/// How a row's child ended, as the tables write it.
pub trait Reason {
    /// The stop reason written for a child whose own result is missing: the cap that
    /// stopped it, else an error.
    fn reason(&self) -> StopReason;
}

impl Reason for End {
    fn reason(&self) -> StopReason {
        match self {
            End::Stopped(ProcessLimit::Time) => StopReason::TimeLimit,
            End::Stopped(ProcessLimit::Memory) => StopReason::MemoryLimit,
            End::Finished | End::Failed(_) => StopReason::Error,
        }
    }
}

/// The directory holding the paper's inputs (`programs/`, `rules/`): `SKETCHLOG_INPUTS` if
/// set, else the working directory if it holds them (a checkout, possibly edited), else the
/// checkout sketchlog was built from. Child processes inherit the choice through the
/// environment.
pub fn inputs_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("SKETCHLOG_INPUTS") {
            return dir.into();
        }
        // Empty: paths stay relative to the working directory, as the user wrote them.
        let here = PathBuf::new();
        match Path::new("programs").is_dir() && Path::new("rules").is_dir() {
            true => here,
            false => PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        }
    })
    .clone()
}

/// A path under [`inputs_dir`]: `input("rules/table2.rules")`.
pub fn input(relative: impl AsRef<Path>) -> PathBuf {
    inputs_dir().join(relative)
}

/// A CSV cell of a figure that may not apply: empty where it does not.
pub fn cell<T>(x: Option<T>, show: impl Fn(T) -> String) -> String {
    x.map_or_else(String::new, show)
}

pub use crate::codegen::measure::median;
