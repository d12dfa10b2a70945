//! The `mavsitl` command: parse the command line and hand over to the library.

use std::process::ExitCode;

use clap::Parser;

mod cli;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    cli::init_logging(args.verbose);
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", e.message);
            if let Some(hint) = &e.hint {
                eprintln!("hint: {hint}");
            }
            ExitCode::from(e.code)
        }
    }
}
