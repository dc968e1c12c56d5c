//! sketchlog's fuzzer from the command line (see `sketchlog::fuzz`):
//!
//! ```text
//! cargo build --release
//! cargo run --release --example fuzz -- [--inputs 1000000] [--seed 1] [--start 0] [--replay N]
//!     [--binary target/release/sketchlog]
//! ```
//!
//! Prints, per kind of input, how many were accepted, rejected with a located error, or
//! failed (abort, internal error or panic, hang, unlocated error, compiled C that disagrees
//! with the interpreter, a command that changed a file it read), and exits 1 on any
//! failure. An in-process hang is reported by a
//! watchdog (60 s on one input), an in-process stack overflow by the process aborting:
//! `--replay N` runs input N alone and prints it. Command-line inputs run the binary, which
//! is timed out and judged by its exit.

use sketchlog::fuzz::{self, Binary, Corpus};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn flag(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a whole number"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed = flag(&args, "--seed", 1);
    let start = flag(&args, "--start", 0);
    let inputs = flag(&args, "--inputs", 10_000);
    let replay = args
        .iter()
        .any(|a| a == "--replay")
        .then(|| flag(&args, "--replay", 0));
    std::panic::set_hook(Box::new(|_| {}));
    let current = Arc::new(AtomicU64::new(u64::MAX));
    let watched = current.clone();
    std::thread::spawn(move || {
        let (mut last, mut since) = (u64::MAX, Instant::now());
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let now = watched.load(Ordering::Relaxed);
            if now != last {
                (last, since) = (now, Instant::now());
            } else if since.elapsed() > Duration::from_secs(60) {
                eprintln!("input {now} (seed {seed}) hangs: over 60 s");
                std::process::exit(1);
            }
        }
    });
    let worker = std::thread::Builder::new()
        .stack_size(sketchlog::limits::STACK_BYTES)
        .spawn(move || {
            let root = std::env::current_dir().expect("working directory");
            let corpus = Corpus::load(&root).expect("the project's files");
            let binary = Binary {
                path: binary_path(&root),
                root,
                deadline: fuzz::process::DEADLINE,
            };
            let dir = tempdir();
            let range = match replay {
                Some(n) => {
                    let input = corpus.input(seed, n, &dir);
                    println!("input {n} ({}):\n{input}", input.kind.name());
                    n..n + 1
                }
                None => start..start + inputs,
            };
            let started = Instant::now();
            let shown = format!("{}..{}", range.start, range.end);
            let (counts, failures) = fuzz::run(&corpus, seed, range, &dir, &binary, |n| {
                current.store(n, Ordering::Relaxed);
                if n % 100_000 == 0 && n > start {
                    eprintln!("{n} inputs, {:.0} s", started.elapsed().as_secs_f64());
                }
            });
            let _ = std::fs::remove_dir_all(&dir);
            println!(
                "| input | inputs | accepted | rejected (located) | aborts | internal errors | hangs | unlocated errors | C wrong | inputs overwritten |"
            );
            println!("|---|---|---|---|---|---|---|---|---|---|");
            for (kind, c) in &counts {
                println!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    kind.name(),
                    c.inputs,
                    c.accepted,
                    c.located,
                    c.aborts,
                    c.internal,
                    c.hangs,
                    c.unlocated,
                    c.wrong,
                    c.overwritten
                );
            }
            println!(
                "seed {seed}, inputs {shown}, {:.0} s",
                started.elapsed().as_secs_f64()
            );
            for f in failures.iter().take(20) {
                println!("FAIL input {} ({:?}): {}", f.number, f.kind, f.what);
            }
            failures.is_empty()
        })
        .expect("worker thread");
    let ok = worker.join().unwrap_or(false);
    std::process::exit(if ok { 0 } else { 1 });
}

/// The `sketchlog` binary the command-line inputs run: `--binary PATH`, else the one built
/// beside this example (`cargo build --release` first).
fn binary_path(root: &std::path::Path) -> std::path::PathBuf {
    let args: Vec<String> = std::env::args().collect();
    let given = args
        .iter()
        .position(|a| a == "--binary")
        .and_then(|i| args.get(i + 1));
    let path = match given {
        Some(p) => root.join(p),
        None => std::env::current_exe()
            .ok()
            .and_then(|e| Some(e.parent()?.parent()?.join("sketchlog")))
            .unwrap_or_default(),
    };
    if !path.is_file() {
        eprintln!(
            "no sketchlog binary at {}: run `cargo build --release` first, or pass --binary PATH",
            path.display()
        );
        std::process::exit(2);
    }
    path
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sketchlog-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}
