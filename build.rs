//! Build-time settings of the `sketchlog` binary: passes the target triple to the crate, for
//! finding the C compiler with the `cc` crate at run time (`cc::Build` needs the target, which
//! cargo gives only to build scripts), and lays out the code the searches run together.
use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    let target = env::var("TARGET").expect("cargo sets TARGET for build scripts");
    println!("cargo:rustc-env=SKETCHLOG_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
    order_hot_code(&target);
}

/// Passes `scripts/hot-code.order` (written by `scripts/hot-code.py`: the functions the
/// searches run, hottest first) to the linker, which places them together: the kernel maps
/// code around each page touched, so scattered code costs resident memory. Only where the
/// linker is LLD, Rust's own on x86-64 Linux from Rust 1.90 unless another is configured; the
/// option is LLD's. Names the file lists that the build lacks are skipped without a warning.
fn order_hot_code(target: &str) {
    let order = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"))
        .join("scripts")
        .join("hot-code.order");
    println!("cargo:rerun-if-changed={}", order.display());
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let path = order.to_string_lossy();
    if target != "x86_64-unknown-linux-gnu"
        || !order.is_file()
        || path.contains(',')
        || !rust_lld_links()
    {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={path}");
    println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
}

/// Whether rustc links with its own LLD: from Rust 1.90 on x86-64 Linux, unless a linker or
/// linker flavour is chosen by configuration or flags.
fn rust_lld_links() -> bool {
    if env::var_os("RUSTC_LINKER").is_some() {
        return false;
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if ["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|f| flags.contains(f))
    {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // `rustc 1.95.0 (59807616e 2026-04-14)`
    let version = String::from_utf8_lossy(&out.stdout);
    let minor = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}
