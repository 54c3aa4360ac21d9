//! The `convo` binary: everything it does is in [`cli`].

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
