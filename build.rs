//! Build-time settings of the `sketchlog` binary: passes the target triple to the crate, for
//! finding the C compiler with the `cc` crate at run time (`cc::Build` needs the target, which
//! cargo gives only to build scripts).
fn main() {
    let target = std::env::var("TARGET").expect("cargo sets TARGET for build scripts");
    println!("cargo:rustc-env=SKETCHLOG_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}
