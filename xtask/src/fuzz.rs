//! `cargo xtask fuzz [--seconds N] [TARGET...]`: coverage-guided fuzzing of every parser that
//! takes outside bytes, with libFuzzer (the `libfuzzer-sys` crate) on stable Rust.
//!
//! 1. Seeds: `fuzz-seeds` (the `tests` crate) writes each target's seeds, taken from the real
//!    artifacts, to `target/fuzz/seeds/TARGET/`, and says each target's `-max_len`.
//! 2. Build: the `fuzz/` crate in release with overflow checks and debug assertions, and with the
//!    SanitizerCoverage flags `cargo fuzz build --sanitizer none` passes (no sanitizer: ASan needs
//!    nightly), for the host triple so that build scripts and proc macros stay uninstrumented,
//!    into `target/fuzz/build`.
//! 3. Run: each target for N seconds over `target/fuzz/corpus/TARGET/` (kept between runs) and
//!    its seeds. A crash, a timeout (10 s on one input) or running out of memory is written to
//!    `target/fuzz/artifacts/TARGET/` and counted; the target then starts again for the rest of
//!    its time. One line per target: `fuzz TARGET: N execs, N crashes`.
//!
//! Any crash fails the command, naming the inputs and how to replay one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{cargo, command_line, error, run_status, target_dir, workspace_root, Context, Result};

/// The flags `cargo fuzz build --sanitizer none` gives rustc (cargo-fuzz 0.12, `project.rs`).
const SANCOV_FLAGS: &[&str] = &[
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "--cfg",
    "fuzzing",
    "-Cdebug-assertions",
    "-Coverflow-checks",
];

/// Restarts of one target after crashes within one run, at most.
const MAX_RESTARTS: usize = 4;

pub struct Options {
    pub seconds: u64,
    pub targets: Vec<String>,
}

/// A run's results.
pub struct Report {
    pub outcomes: Vec<Outcome>,
    /// Sources of seeds that were not there (`missing TARGET: why` lines of `fuzz-seeds`).
    pub missing_seeds: Vec<String>,
}

/// One target's result.
pub struct Outcome {
    pub target: String,
    pub execs: u64,
    pub crashes: Vec<PathBuf>,
}

fn fuzz_root() -> PathBuf {
    target_dir().join("fuzz")
}

/// The targets: the files of `fuzz/fuzz_targets/`, by name.
pub fn all_targets() -> Result<Vec<String>> {
    let dir = workspace_root().join("fuzz/fuzz_targets");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".rs")).map(str::to_owned))
        .collect();
    names.sort();
    Ok(names)
}

fn host_triple() -> Result<String> {
    let out = Command::new("rustc").arg("-vV").output().context("running rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        .ok_or_else(|| error("rustc -vV does not name the host triple"))
}

/// What `fuzz-seeds` wrote: each target's `-max_len`, and the seed sources that were missing.
struct SeedsWritten {
    max_len: Vec<(String, usize)>,
    missing: Vec<String>,
}

/// Writes the seeds.
fn write_seeds(targets: &[String]) -> Result<SeedsWritten> {
    let seeds = fuzz_root().join("seeds");
    let _ = std::fs::remove_dir_all(&seeds);
    let mut cmd = cargo();
    cmd.args(["run", "-q", "-p", "tests", "--bin", "fuzz-seeds", "--"]).arg(&seeds).args(targets);
    eprintln!("xtask: running {}", command_line(&cmd));
    let out = cmd.stderr(Stdio::inherit()).output().with_context(|| format!("starting {}", command_line(&cmd)))?;
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    if !out.status.success() {
        return Err(error(format!("{} failed ({})", command_line(&cmd), out.status)));
    }
    let mut max_len = Vec::new();
    let missing = text.lines().filter_map(|l| l.strip_prefix("missing ")).map(str::to_owned).collect();
    for line in text.lines() {
        // "seeds TARGET: N (max_len M)"
        let Some(rest) = line.strip_prefix("seeds ") else { continue };
        let Some((name, rest)) = rest.split_once(": ") else { continue };
        let len = rest
            .split_once("max_len ")
            .and_then(|(_, m)| m.trim_end_matches(')').parse().ok())
            .ok_or_else(|| error(format!("fuzz-seeds: no max_len in '{line}'")))?;
        max_len.push((name.to_owned(), len));
    }
    Ok(SeedsWritten { max_len, missing })
}

fn build(targets: &[String], triple: &str) -> Result<PathBuf> {
    let build_dir = fuzz_root().join("build");
    let mut cmd = cargo();
    cmd.args(["build", "--release", "--manifest-path", "fuzz/Cargo.toml", "--target", triple, "--target-dir"])
        .arg(&build_dir);
    for t in targets {
        cmd.args(["--bin", t]);
    }
    let mut flags = std::env::var("RUSTFLAGS").unwrap_or_default();
    for f in SANCOV_FLAGS {
        flags.push(' ');
        flags.push_str(f);
    }
    cmd.env("RUSTFLAGS", flags.trim());
    run_status(&mut cmd)?;
    Ok(build_dir.join(triple).join("release"))
}

/// The inputs libFuzzer left for crashes, timeouts, out-of-memory and leaks (not `slow-unit-*`:
/// those only ran longer than the others).
fn artifacts(dir: &Path) -> BTreeSet<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    ["crash-", "timeout-", "oom-", "leak-"].iter().any(|k| name.starts_with(k))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `stat::number_of_executed_units: N` of libFuzzer's final statistics (or the last `#N` status
/// line, when it crashed before printing them).
fn executed_units(log: &str) -> u64 {
    if let Some(n) = log.lines().rev().find_map(|l| l.strip_prefix("stat::number_of_executed_units:")) {
        return n.trim().parse().unwrap_or(0);
    }
    log.lines()
        .rev()
        .find_map(|l| l.strip_prefix('#').and_then(|r| r.split_whitespace().next()).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn fuzz_one(bin_dir: &Path, target: &str, max_len: usize, seconds: u64) -> Result<Outcome> {
    let root = fuzz_root();
    let corpus = root.join("corpus").join(target);
    let seeds = root.join("seeds").join(target);
    let artifact_dir = root.join("artifacts").join(target);
    let logs = root.join("logs");
    for dir in [&corpus, &artifact_dir, &logs] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let before = artifacts(&artifact_dir);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut execs = 0;
    let mut log_text = String::new();
    for attempt in 0..=MAX_RESTARTS {
        let left = deadline.saturating_duration_since(Instant::now()).as_secs();
        if left == 0 && attempt > 0 {
            break;
        }
        let mut cmd = Command::new(bin_dir.join(target));
        cmd.arg(format!("-max_total_time={}", left.max(1)))
            .arg(format!("-max_len={max_len}"))
            .arg("-timeout=10")
            .arg("-rss_limit_mb=4096")
            .arg("-print_final_stats=1")
            .arg(format!("-artifact_prefix={}/", artifact_dir.display()))
            .arg(&corpus)
            .arg(&seeds);
        let out = cmd.output().with_context(|| format!("starting {}", command_line(&cmd)))?;
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        execs += executed_units(&text);
        log_text.push_str(&text);
        if out.status.success() {
            break;
        }
        if artifacts(&artifact_dir).len() == before.len() {
            std::fs::write(logs.join(format!("{target}.log")), &log_text)?;
            return Err(error(format!(
                "fuzz target {target} failed ({}) without leaving an input; see {}",
                out.status,
                logs.join(format!("{target}.log")).display()
            )));
        }
    }
    std::fs::write(logs.join(format!("{target}.log")), &log_text)?;
    let crashes = artifacts(&artifact_dir).difference(&before).cloned().collect();
    Ok(Outcome { target: target.to_owned(), execs, crashes })
}

/// Runs the targets; prints one line per target and fails on any crash.
pub fn run(opts: &Options) -> Result<Report> {
    let all = all_targets()?;
    for t in &opts.targets {
        if !all.contains(t) {
            return Err(error(format!("no fuzz target '{t}' (targets: {})", all.join(", "))));
        }
    }
    let targets = if opts.targets.is_empty() { all } else { opts.targets.clone() };
    let SeedsWritten { max_len, missing: missing_seeds } = write_seeds(&targets)?;
    let bin_dir = build(&targets, &host_triple()?)?;
    let mut outcomes = Vec::new();
    for t in &targets {
        let len = max_len.iter().find(|(n, _)| n == t).map(|(_, l)| *l).unwrap_or(64 << 10);
        let outcome = fuzz_one(&bin_dir, t, len, opts.seconds)?;
        println!("fuzz {}: {} execs, {} crashes", outcome.target, outcome.execs, outcome.crashes.len());
        outcomes.push(outcome);
    }
    let crashed: Vec<&Outcome> = outcomes.iter().filter(|o| !o.crashes.is_empty()).collect();
    if !crashed.is_empty() {
        let mut message = String::from("fuzzing found crashes:");
        for o in &crashed {
            for c in &o.crashes {
                message.push_str(&format!("\n  {}: {}", o.target, c.display()));
            }
        }
        message.push_str(&format!(
            "\nreplay one with {}/TARGET INPUT; minimise with -minimize_crash=1 -runs=10000, then add it to \
             fuzz/regressions/TARGET/ with the fix",
            fuzz_root().join("build/<triple>/release").display()
        ));
        return Err(error(message));
    }
    Ok(Report { outcomes, missing_seeds })
}
