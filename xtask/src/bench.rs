//! Boot timing under QEMU: wall time from starting QEMU to its exit, PVH path, over N runs,
//! with the kernel's own `platform ready in N ms` beside it. A measurement, never a test: it
//! asserts nothing about the numbers, only that each run exited 33.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::klog;
use crate::qemu::{self, Boot, Machine, QemuProcess, Serial, Vm};
use crate::util::{display_path, error, logs_dir, Result};

pub struct Options {
    pub kernel: PathBuf,
    pub runs: usize,
    pub machine: Machine,
    pub cmdline: String,
    pub memory: String,
    pub cpus: u32,
    pub timeout: Duration,
    pub extra: Vec<String>,
}

pub fn run(opts: &Options) -> Result<()> {
    qemu::check_installed()?;
    if opts.runs == 0 {
        return Err(error("--runs must be at least 1"));
    }
    println!(
        "bench-boot: PVH {}, {} run(s), -m {} -smp {}, kernel {}, command line '{}'",
        opts.machine.qemu_name(),
        opts.runs,
        opts.memory,
        opts.cpus,
        display_path(&opts.kernel),
        opts.cmdline
    );
    let mut wall_ms = Vec::new();
    let mut ready_ms = Vec::new();
    let mut failures = 0;
    for run in 1..=opts.runs {
        let log = logs_dir()?.join(format!("bench-boot-{run}.log"));
        let boot = Boot::Pvh { kernel: opts.kernel.clone(), cmdline: opts.cmdline.clone(), initrd: None };
        let mut vm = Vm::new(opts.machine, boot, Serial::File(log.clone()));
        vm.memory = opts.memory.clone();
        vm.cpus = opts.cpus;
        vm.extra = opts.extra.clone();
        let mut cmd = vm.command();
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::inherit());

        let started = Instant::now();
        let mut qemu = QemuProcess::spawn(cmd)?;
        let status = qemu.wait_until(Some(started + opts.timeout))?;
        let elapsed = started.elapsed();
        drop(qemu);

        let serial = std::fs::read_to_string(&log).unwrap_or_default();
        let ready = serial.lines().find_map(klog::parse_platform_ready);
        let ready_note =
            ready.map(|ms| format!("platform ready in {ms} ms")).unwrap_or_else(|| "no 'platform ready' line".into());
        let ms = elapsed.as_secs_f64() * 1000.0;
        match status {
            None => {
                failures += 1;
                println!(
                    "  run {run}: timed out after {} s ({ready_note}); log {}",
                    opts.timeout.as_secs(),
                    display_path(&log)
                );
            }
            Some(status) => {
                let verdict = klog::describe_exit(status.code());
                match verdict {
                    Ok(()) => {
                        println!("  run {run}: {ms:8.0} ms  ({ready_note})");
                        wall_ms.push(ms);
                        if let Some(ready) = ready {
                            ready_ms.push(ready as f64);
                        }
                    }
                    Err(why) => {
                        failures += 1;
                        println!("  run {run}: {ms:8.0} ms  FAILED: {why}; log {}", display_path(&log));
                    }
                }
            }
        }
    }
    if let Some(median_wall) = median(&mut wall_ms) {
        let ready = median(&mut ready_ms).map(|m| format!("; median platform ready {m:.0} ms")).unwrap_or_default();
        println!(
            "bench-boot: median {median_wall:.0} ms from QEMU start to exit over {} good run(s){ready}",
            wall_ms.len()
        );
    }
    if failures > 0 {
        Err(error(format!("{failures} of {} run(s) did not exit 33", opts.runs)))
    } else {
        Ok(())
    }
}

/// The median (mean of the middle two for an even count).
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 })
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn medians() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [3.0]), Some(3.0));
        assert_eq!(median(&mut [5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
