//! nvtool: host tool for people building images and debugging boards.
//!
//! ```text
//! nvtool vbios [--json] FILE       images, BIT tokens and FWSEC of a VBIOS dump
//! nvtool edid [--json] FILE        an EDID's vendor, timings, CTA-861/DisplayID blocks
//! nvtool firmware [--json] FILE    sections, version, signatures and headers of a GSP-RM
//!                                  image, booter or GSP bootloader file
//! nvtool run PAYLOAD --kernel NAME --grid X,Y,Z --block X,Y,Z [--shared B] [--chip C] [--arg ..]
//!                                  one kernel on a model GPU (see `run`)
//! ```
//!
//! Exit status: 0 on success, 1 when the input is not a usable VBIOS or firmware file (the
//! reason goes to stderr on one line), 2 on a usage error.

use std::process::ExitCode;

mod edid;
mod firmware;
mod run;
mod vbios;

const USAGE: &str = "usage: nvtool vbios [--json] FILE\n       nvtool edid [--json] FILE\n       nvtool firmware [--json] FILE\n       nvtool run PAYLOAD --kernel NAME --grid X,Y,Z --block X,Y,Z [--shared BYTES] [--chip CHIP] [--arg KIND:VALUE]...";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("vbios") => vbios::run(&args[1..]),
        Some("edid") => edid::run(&args[1..]),
        Some("firmware") => firmware::run(&args[1..]),
        Some("run") => run::run(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some(other) => usage_error(&format!("unknown command '{other}'")),
        None => usage_error("no command given"),
    }
}

/// Prints `reason` and `usage` to stderr; exit status 2.
fn usage_error_with(reason: &str, usage: &str) -> ExitCode {
    eprintln!("nvtool: {reason}\nusage: {usage}");
    ExitCode::from(2)
}

/// Prints `reason` and the usage line to stderr; exit status 2.
fn usage_error(reason: &str) -> ExitCode {
    eprintln!("nvtool: {reason}\n{USAGE}");
    ExitCode::from(2)
}
