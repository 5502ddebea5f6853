//! `cargo xtask bench`'s boot comparison (issue 16): the main job (the example application on
//! a model GH100, PVH, q35) against Debian's Linux reaching a busybox init, under the same QEMU
//! with the same machine, memory and CPU count, each run N times; medians of wall time from
//! starting QEMU. A measurement, never a test: it asserts nothing about the numbers, only that
//! every run got where it was timed to (a run that did not fails the bench).
//!
//! - Linux: Debian's kernel and busybox-static (`scripts/fetch-linux-reference.sh`), an
//!   initramfs built here whose `/init` mounts devtmpfs, prints [`LINUX_MARKER`] on the serial
//!   port and powers off; timed to the marker line.
//! - The unikernel: timed to its first GPU result (the first `app: NAME: ok, ...` line) and to
//!   QEMU's exit (the whole job, exit 33); its own timeline (`*.timeline.json`) gives the guest's
//!   view of the same stages.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use crate::bench::median;
use crate::qemu::{self, Boot, Machine, QemuProcess, Serial, SocketListener, Vm};
use crate::timeline;
use crate::util::{display_path, error, logs_dir, target_dir, workspace_root, Context, Result};

/// What the reference's `/init` prints once it runs.
pub const LINUX_MARKER: &str = "linux-ref: init reached";
/// The machine both boot on.
const MEMORY: &str = "512M";
const CPUS: u32 = 1;

/// The reference's `/init`: busybox's shell, devtmpfs for the serial device, the marker, off.
fn init_script() -> String {
    format!(
        "#!/bin/busybox sh\n/bin/busybox mount -t devtmpfs dev /dev\necho \"{LINUX_MARKER}\" > /dev/ttyS0\n/bin/busybox poweroff -f\n"
    )
}

/// One timed boot: when the first line `marker` accepts arrived, and when QEMU exited.
struct Timed {
    marker_ms: Option<f64>,
    exit_ms: Option<f64>,
    exit_code: Option<i32>,
    lines: Vec<String>,
}

fn timed_boot(tag: &str, boot: Boot, log: &Path, marker: impl Fn(&str) -> bool, timeout: Duration) -> Result<Timed> {
    let socket = SocketListener::bind(tag)?;
    let mut vm = Vm::new(Machine::Q35, boot, Serial::Socket(socket.path().to_path_buf()));
    vm.memory = MEMORY.to_string();
    vm.cpus = CPUS;
    let mut cmd = vm.command();
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let started = Instant::now();
    let deadline = started + timeout;
    let mut qemu = QemuProcess::spawn(cmd)?;
    let stream = socket.accept(&mut qemu, started + Duration::from_secs(30), "serial")?;
    let lines_rx = qemu::spawn_serial_reader(stream, log)?;
    let ms = |at: Instant| at.duration_since(started).as_secs_f64() * 1000.0;
    let mut timed = Timed { marker_ms: None, exit_ms: None, exit_code: None, lines: Vec::new() };
    loop {
        match lines_rx.recv_timeout(Duration::from_millis(20)) {
            Ok(line) => {
                if timed.marker_ms.is_none() && marker(&line) {
                    timed.marker_ms = Some(ms(Instant::now()));
                }
                timed.lines.push(line);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                let status = qemu.wait_until(Some(Instant::now() + Duration::from_secs(10)))?;
                timed.exit_ms = status.map(|_| ms(Instant::now()));
                timed.exit_code = status.and_then(|s| s.code());
                break;
            }
        }
        if let Some(status) = qemu.try_wait()? {
            timed.exit_ms = Some(ms(Instant::now()));
            timed.exit_code = status.code();
            while let Ok(line) = lines_rx.recv_timeout(Duration::from_millis(200)) {
                if timed.marker_ms.is_none() && marker(&line) {
                    timed.marker_ms = Some(ms(Instant::now()));
                }
                timed.lines.push(line);
            }
            break;
        }
        if Instant::now() >= deadline {
            break;
        }
    }
    drop(qemu);
    Ok(timed)
}

/// The first GPU result on the serial port: `app: NAME: ok, ...`.
fn is_first_result(line: &str) -> bool {
    line.split_once("app: ")
        .is_some_and(|(_, rest)| rest.split_once(": ok, ").is_some_and(|(name, _)| !name.contains(' ')))
}

/// The reference's kernel, busybox and versions, fetched by the script.
fn linux_reference() -> Result<(PathBuf, PathBuf, String)> {
    crate::util::run_status(
        std::process::Command::new("bash")
            .arg(workspace_root().join("scripts").join("fetch-linux-reference.sh"))
            .current_dir(workspace_root()),
    )?;
    let dir = target_dir().join("linux-ref");
    let busybox = std::fs::read(dir.join("busybox")).context("target/linux-ref/busybox")?;
    let version = std::fs::read_to_string(dir.join("VERSION")).context("target/linux-ref/VERSION")?;
    let version = version.lines().filter_map(|l| l.split_once("Version: ").map(|(_, v)| v.trim())).collect::<Vec<_>>();
    let kernel_version = version.first().copied().unwrap_or("?").to_string();
    let init = init_script();
    let archive = crate::modules::cpio_newc_tree(&[
        ("bin", 0o040755, &[]),
        ("dev", 0o040755, &[]),
        ("bin/busybox", 0o100755, &busybox),
        ("init", 0o100755, init.as_bytes()),
    ]);
    let initrd = dir.join("initrd.cpio");
    std::fs::write(&initrd, archive).with_context(|| format!("writing {}", initrd.display()))?;
    Ok((dir.join("vmlinuz"), initrd, kernel_version))
}

pub struct Options {
    pub kernel: PathBuf,
    pub runs: usize,
    pub timeout: Duration,
}

pub fn run(opts: &Options) -> Result<()> {
    qemu::check_installed()?;
    if opts.runs == 0 {
        return Err(error("--runs must be at least 1"));
    }
    let (vmlinuz, linux_initrd, linux_version) = linux_reference()?;
    let mut modules = crate::modules::with_symbol_map(&opts.kernel, &[])?;
    modules.extend(crate::modules::firmware_modules(&["gh100"])?);
    modules.extend(crate::payloads::modules()?);
    let initrd = crate::modules::pvh_initrd(&modules, "bench-app")?;
    let logs = logs_dir()?;
    println!(
        "bench boot: q35, -m {MEMORY} -smp {CPUS}, TCG, {} run(s) each; Debian's Linux {linux_version} to a busybox init, \
         and the main job (the example application on a model GH100, PVH)",
        opts.runs
    );

    let mut linux_ms = Vec::new();
    let mut first_ms = Vec::new();
    let mut job_ms = Vec::new();
    let mut guest: Vec<(&str, Vec<f64>)> =
        ["platform ready", "GSP-RM up", "GPU opened", "first result", "application finished"]
            .into_iter()
            .map(|s| (s, Vec::new()))
            .collect();
    let mut failures = Vec::new();
    for run in 1..=opts.runs {
        let log = logs.join(format!("bench-linux-{run}.log"));
        let boot = Boot::Pvh {
            kernel: vmlinuz.clone(),
            cmdline: "console=ttyS0 panic=-1".into(),
            initrd: Some(linux_initrd.clone()),
        };
        let t = timed_boot(&format!("bench-linux-{run}"), boot, &log, |l| l.contains(LINUX_MARKER), opts.timeout)?;
        match t.marker_ms {
            Some(ms) => {
                println!("  linux run {run}: init at {ms:7.0} ms");
                linux_ms.push(ms);
            }
            None => failures.push(format!("linux run {run}: no '{LINUX_MARKER}' line (log {})", display_path(&log))),
        }

        let log = logs.join(format!("bench-app-{run}.log"));
        let boot = Boot::Pvh { kernel: opts.kernel.clone(), cmdline: "app".into(), initrd: Some(initrd.clone()) };
        let t = timed_boot(&format!("bench-app-{run}"), boot, &log, is_first_result, opts.timeout)?;
        let _ = timeline::save(&log, t.lines.iter().map(String::as_str));
        match (t.marker_ms, t.exit_ms, t.exit_code) {
            (Some(first), Some(exit), Some(33)) => {
                println!("  app run {run}:   first result at {first:7.0} ms, exit at {exit:7.0} ms");
                first_ms.push(first);
                job_ms.push(exit);
                let phases = timeline::phases(t.lines.iter().map(String::as_str)).unwrap_or_default();
                if let Some(app) = phases.iter().find(|p| p.name == "application") {
                    for (stage, values) in &mut guest {
                        if let Some(ms) = app.ms(stage) {
                            values.push(ms);
                        }
                    }
                }
            }
            (first, _, code) => failures.push(format!(
                "app run {run}: first result {first:?}, QEMU exit {code:?} (expected 33; log {})",
                display_path(&log)
            )),
        }
    }
    let linux = median(&mut linux_ms);
    let first = median(&mut first_ms);
    let job = median(&mut job_ms);
    let ratio = |v: Option<f64>| match (v, linux) {
        (Some(v), Some(l)) if l > 0.0 => format!("{:6.1}% of Linux", v / l * 100.0),
        _ => "  (no ratio)".into(),
    };
    let show = |v: Option<f64>| v.map_or_else(|| "      -".into(), |v| format!("{v:7.0}"));
    println!("bench boot: Linux {linux_version} to busybox init      {} ms (wall, median)", show(linux));
    println!("bench boot: first GPU result                  {} ms  {}  (target 5%)", show(first), ratio(first));
    println!("bench boot: whole main job                    {} ms  {}  (target 20%)", show(job), ratio(job));
    let guest_line: Vec<String> =
        guest.iter_mut().filter_map(|(stage, values)| median(values).map(|m| format!("{stage} {m:.0} ms"))).collect();
    println!("bench boot: the kernel's timeline (guest time, median): {}", guest_line.join(", "));
    if failures.is_empty() {
        Ok(())
    } else {
        Err(error(failures.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_result_is_an_example_report() {
        assert!(is_first_result("[  1259 ms] INFO  app: vector_add: ok, 100003 f32 additions (764795 us)"));
        assert!(!is_first_result("[  1259 ms] INFO  app: GH100: running 6 examples"));
        assert!(!is_first_result("[ 15649 ms] INFO  app: managed stats: ok, x"));
        assert!(!is_first_result("[  7196 ms] INFO  app: 6 passed, 0 failed"));
    }

    #[test]
    fn the_reference_init_prints_the_marker_to_the_serial_port_and_powers_off() {
        let init = init_script();
        assert!(init.starts_with("#!/bin/busybox sh\n"));
        assert!(init.contains(&format!("echo \"{LINUX_MARKER}\" > /dev/ttyS0")));
        assert!(init.trim_end().ends_with("poweroff -f"));
    }
}
