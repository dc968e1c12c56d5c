fn main() {
    std::process::exit(sketchlog::cli::main());
}
