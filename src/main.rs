/// The allocator of egglog's own binary: `sketchlog run` allocates as it does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // Transparent huge pages for egglog's programs, as its own binary has them; not for
    // sketchlog's searches, which ran faster without them (docs/src/performance.md) and whose
    // small ones held a few MB of huge pages they hardly used. Decided on the raw arguments,
    // before the command line is parsed: parsing it first touched 2 MB of huge pages.
    if std::env::args_os().nth(1).is_none_or(|c| c != "run") {
        // SAFETY: PR_SET_THP_DISABLE takes integer arguments and touches no memory of ours.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }
    std::process::exit(sketchlog::cli::main());
}
