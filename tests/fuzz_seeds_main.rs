//! `fuzz-seeds DIR [TARGET...]`: writes each fuzz target's seeds ([`tests::fuzz_seeds`]) to
//! `DIR/TARGET/`, one file per seed, and prints one line per target with the number of seeds
//! and, for each source of seeds that was missing, a `missing:` line.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: fuzz-seeds DIR [TARGET...]");
        return ExitCode::from(2);
    };
    let wanted: Vec<String> = args.collect();
    for target in tests::fuzz::TARGETS {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == target.name) {
            continue;
        }
        let out = std::path::Path::new(&dir).join(target.name);
        if let Err(e) = std::fs::create_dir_all(&out) {
            eprintln!("fuzz-seeds: cannot create {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
        let (seeds, missing) = tests::fuzz_seeds::seeds(target.name);
        for (name, bytes) in &seeds {
            if let Err(e) = std::fs::write(out.join(name), bytes) {
                eprintln!("fuzz-seeds: cannot write {name}: {e}");
                return ExitCode::FAILURE;
            }
        }
        println!("seeds {}: {} (max_len {})", target.name, seeds.len(), target.max_len);
        for why in missing {
            println!("missing {}: {why}", target.name);
        }
    }
    ExitCode::SUCCESS
}
