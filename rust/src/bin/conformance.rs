//! `mrtr-state-conformance`: the conformance adapter of the Rust crate. It speaks the line protocol
//! of `mrtr-state conformance` (docs/conformance.md) on standard input and output.

use std::process::ExitCode;

fn main() -> ExitCode {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match mrtr_state::conformance::serve(stdin, stdout) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mrtr-state-conformance: {e}");
            ExitCode::from(2)
        }
    }
}
