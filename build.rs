//! Build-time settings of the `sketchlog` binary.
//!
//! - Passes the target triple to the crate, for finding the C compiler with the `cc` crate at
//!   run time (`cc::Build` needs the target, which cargo gives only to build scripts).
//! - In release builds linked by lld (Rust's default linker on x86_64 Linux since 1.90), places
//!   the functions that sketchlog's searches run together at the start of the code
//!   (`scripts/hot-symbols.txt`, written by `scripts/hot-symbols.py`): a small search then has
//!   a few megabytes of code resident instead of pages scattered over the whole binary; and
//!   packs the relative relocations (DT_RELR, which needs glibc 2.36 or later where the
//!   binary runs). `SKETCHLOG_NO_SYMBOL_ORDER=1`, or a linker of one's own, turns both off.
fn main() {
    let target = std::env::var("TARGET").expect("cargo sets TARGET for build scripts");
    println!("cargo:rustc-env=SKETCHLOG_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SKETCHLOG_NO_SYMBOL_ORDER");
    let symbols = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hot-symbols.txt");
    println!("cargo:rerun-if-changed={}", symbols.display());
    if linked_by_default_lld(&target)
        && std::env::var("PROFILE").as_deref() == Ok("release")
        && std::env::var_os("SKETCHLOG_NO_SYMBOL_ORDER").is_none()
        && symbols.exists()
    {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            symbols.display()
        );
        // Names of functions this build no longer has are skipped without a word.
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
        // Relative relocations packed (DT_RELR, glibc 2.36+): the loader reads a few
        // kilobytes at start-up instead of 220 KB of relocation entries.
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the binary is linked by the toolchain's own lld: the default on x86_64 Linux (GNU)
/// unless a linker is chosen in the environment or in the flags.
fn linked_by_default_lld(target: &str) -> bool {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    target == "x86_64-unknown-linux-gnu"
        && rustc_minor().is_some_and(|minor| minor >= 90)
        && std::env::var_os("RUSTC_LINKER").is_none()
        && !flags.contains("linker")
        && !flags.contains("link-self-contained")
}

/// The minor version of the compiler building the crate (`1.MINOR.patch`).
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC")?;
    let out = std::process::Command::new(rustc).arg("-V").output().ok()?;
    let version = String::from_utf8(out.stdout).ok()?;
    version
        .split_whitespace()
        .nth(1)?
        .split('.')
        .nth(1)?
        .parse()
        .ok()
}
