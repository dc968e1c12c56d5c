//! Running one job in a child process of `sketchlog` under caps: a memory
//! cap (`RLIMIT_AS`, so an allocation beyond it fails in the child only) and a time limit
//! (the child is killed a little after it, in case it does not stop itself).
//!
//! A child reports to its parent in JSON lines of typed reports ([`report`], [`reports`]).
//! A child never outlives its parent: it asks the kernel for SIGKILL when the parent dies
//! (`PR_SET_PDEATHSIG`), so killing `reproduce`, even with SIGKILL, leaves no orphan behind
//! (the rows it finished are already on disk; see [`crate::files::write_atomically`]).

use crate::error::{Error, Result};
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Limits on one child process.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct ProcessLimits {
    pub memory_mb: u64,
    pub time: Duration,
}

/// A cap that stopped a child.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ProcessLimit {
    Time,
    Memory,
}

/// How a child ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum End {
    Finished,
    /// Stopped by a cap: its own watchdog's, or the parent's kill at the time limit.
    Stopped(ProcessLimit),
    /// It failed otherwise; its error, or the last line of its error output.
    Failed(String),
}

/// What a child printed and how it ended.
pub struct ChildRun {
    pub end: End,
    /// Everything it printed on stdout (also when stopped: how far it got).
    pub stdout: String,
    pub wall_s: f64,
    /// Its peak resident memory as last seen by the parent (`VmHWM`), in MB: known also for
    /// a child killed at the time limit. (Not the kernel's `ru_maxrss` from `wait4`: a child
    /// started by `fork` or `posix_spawn` inherits the parent's high-water mark in it.)
    pub peak_rss_mb: Option<f64>,
}

/// Prints `line` as one JSON line on stdout: how a child reports to its parent, as it goes.
pub fn report<T: serde::Serialize>(line: &T) {
    println!(
        "{}",
        serde_json::to_string(line).expect("reports are plain data")
    );
}

/// The reports in a child's stdout, in order (lines that are not reports are skipped).
pub fn reports<T: serde::de::DeserializeOwned>(stdout: &str) -> impl Iterator<Item = T> + '_ {
    stdout.lines().filter_map(|l| serde_json::from_str(l).ok())
}

/// The peak resident memory of a running process, in MB.
fn peak_rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The running executable (children are the same `sketchlog`).
pub fn own_exe() -> Result<std::path::PathBuf> {
    std::env::current_exe().map_err(|e| Error::bad_input(format!("own executable: {e}")))
}

/// Makes the calling process die with its parent and caps its address space at `bytes`.
/// Runs in the child between `fork` and `exec`, so it only makes async-signal-safe calls.
fn die_with_parent_and_cap(parent: libc::pid_t, bytes: u64) -> std::io::Result<()> {
    // SAFETY: prctl, getppid and setrlimit are async-signal-safe system calls on plain data.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // The parent may have died before the request took effect.
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        let limit = libc::rlimit {
            rlim_cur: bytes,
            rlim_max: bytes,
        };
        if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The hard limit on this process's address space that its children inherit, in bytes
/// (`None`: unlimited). A child cannot raise its own limit above it.
fn inherited_address_space() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0;
    (ok && limit.rlim_max != libc::RLIM_INFINITY).then_some(limit.rlim_max)
}

/// A child's address-space cap: the memory cap plus the main thread's reserved stack
/// ([`crate::limits::STACK_BYTES`]), so that the heap gets the whole cap; clamped to the
/// limit this process inherited (said once on standard error).
fn address_space_cap(caps: ProcessLimits) -> u64 {
    let wanted = caps
        .memory_mb
        .saturating_mul(1 << 20)
        .saturating_add(crate::limits::STACK_BYTES as u64);
    match inherited_address_space() {
        Some(hard) if hard < wanted => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!(
                    "note: jobs run under the inherited address-space limit, {} MB, below their cap of {} MB plus {} MB of stack",
                    hard >> 20,
                    caps.memory_mb,
                    crate::limits::STACK_BYTES >> 20
                )
            });
            hard
        }
        _ => wanted,
    }
}

/// Runs `sketchlog ARGS..` under `caps` (`address_space_cap`). A cap the system refuses
/// to set is bad input, located at `--memory-mb`.
pub fn run(args: &[String], caps: ProcessLimits) -> Result<ChildRun> {
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    let bytes = address_space_cap(caps);
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let mut command = Command::new(own_exe()?);
    command
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the closure only makes async-signal-safe calls (see above).
    unsafe {
        command.pre_exec(move || die_with_parent_and_cap(parent, bytes));
    }
    let mut child = command.spawn().map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM | libc::EINVAL) => Error {
            location: Some("--memory-mb".into()),
            ..Error::bad_input(format!(
                "a job's memory cap ({} MB of address space) cannot be set: {e}",
                bytes >> 20
            ))
        },
        _ => Error::internal(format!("starting a child process: {e}")),
    })?;
    // Read both pipes while it runs, so a chatty child never blocks on a full pipe.
    let mut out_pipe = child.stdout.take().expect("piped");
    let mut err_pipe = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let deadline = caps.time + Duration::from_secs(30);
    let mut peak = None;
    let mut polls = 0u32;
    let status = loop {
        if polls.is_multiple_of(20) {
            peak = peak_rss_mb(child.id()).or(peak);
        }
        polls += 1;
        if let Some(s) = child
            .try_wait()
            .map_err(|e| Error::internal(format!("waiting for a child process: {e}")))?
        {
            break Some(s);
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let stopped = reports::<Stopped>(&stdout).last().map(|s| s.by);
    let end = match (status, stopped) {
        (None, _) => End::Stopped(ProcessLimit::Time),
        (Some(_), Some(by)) => End::Stopped(by),
        (Some(s), None) if s.success() => End::Finished,
        // An allocation beyond the address-space cap failed: Rust prints that and aborts
        // (its panics are caught and exit with 3). Any other abort is a failure.
        (Some(s), None)
            if s.signal() == Some(libc::SIGABRT) && stderr.contains(ALLOCATION_FAILED) =>
        {
            End::Stopped(ProcessLimit::Memory)
        }
        // Its error as it reported it; else (a panic, an abort) the last line it printed.
        (Some(_), None) => End::Failed(match reports::<Failure>(&stdout).last() {
            Some(failure) => failure.error,
            None => stderr.lines().last().unwrap_or("").to_string(),
        }),
    };
    Ok(ChildRun {
        end,
        stdout,
        wall_s: started.elapsed().as_secs_f64(),
        peak_rss_mb: peak,
    })
}

/// What Rust's allocation-failure handler prints before it aborts.
const ALLOCATION_FAILED: &str = "memory allocation of";

/// A child's report that its watchdog stopped it at a limit inside an iteration.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stopped {
    by: ProcessLimit,
}

/// A child's report of the error it failed with (its one-line form).
#[derive(serde::Serialize, serde::Deserialize)]
struct Failure {
    error: String,
}

/// Reports to the parent the error this child failed with, and passes it on.
pub fn report_failure<T>(outcome: Result<T>) -> Result<T> {
    if let Err(e) = &outcome {
        report(&Failure {
            error: e.to_string(),
        });
    }
    outcome
}

/// Reports to the parent that this child's own watchdog stopped it at `cap`.
pub fn report_stop(cap: ProcessLimit) {
    report(&Stopped { by: cap });
}
