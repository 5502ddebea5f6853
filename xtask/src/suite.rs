//! The QEMU suite: the kernel booted on each supported path and machine shape, with its in-kernel
//! tests and a PCI cross-check against QEMU.
//!
//! A case passes only if QEMU exits 33 (the kernel wrote 0x10 to isa-debug-exit), the serial log
//! has `ktest result: N passed, 0 failed` with N > 0 (consistent with the per-test lines), and,
//! unless disabled, the PCI functions the kernel printed before `waiting for host` equal the ones
//! QEMU reports over QMP `query-pci` at that moment.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use crate::klog::{self, KtestReport};
use crate::pci;
use crate::qemu::{self, Boot, Machine, QemuProcess, Serial, SocketListener, UefiFirmware, Vm};
use crate::qmp::Qmp;
use crate::util::{display_path, error, logs_dir, Context, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootPath {
    Pvh,
    GrubBios,
    GrubUefi,
}

/// One scenario.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: &'static str,
    pub machine: Machine,
    pub boot: BootPath,
    pub memory: &'static str,
    pub cpus: u32,
    pub cpu: Option<&'static str>,
    /// Extra QEMU arguments; `{nvme}` stands for a fresh raw disk image.
    pub extra: &'static [&'static str],
    /// QEMU device models the case needs; it is skipped if this QEMU lacks one.
    pub requires: &'static [&'static str],
    pub timeout: Duration,
    /// Extra kernel command-line words for this case.
    pub append: &'static str,
    /// Model chips whose GSP firmware travels as boot modules (PVH only).
    pub firmware: &'static [&'static str],
    /// The in-kernel tests this case exists for: each must run and pass here; skipped or
    /// missing fails the case (elsewhere they may skip for want of the machine they check).
    pub ktests: &'static [&'static str],
    pub expect: Expect,
}

/// What a case must show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// In-kernel tests all pass (exit 33), PCI matches QEMU.
    TestsPass,
    /// A deliberate page fault produces the full exception report and exit 35.
    PageFaultReport,
    /// The example application (`app`, with the payload modules) reports every example ok and
    /// exits 33.
    AppRuns,
    /// `probe`: every model GPU of the case's `gpu=` dumped (chip, VBIOS, the model's own count
    /// of 0 register writes), ending `probe: 0 register writes`, exit 33.
    ProbeDumps,
}

const PVH_TIMEOUT: Duration = Duration::from_secs(120);
const BIOS_TIMEOUT: Duration = Duration::from_secs(180);
/// OVMF under TCG takes tens of seconds before GRUB even starts, more on a busy machine.
const UEFI_TIMEOUT: Duration = Duration::from_secs(300);

const fn case(name: &'static str, machine: Machine, boot: BootPath) -> Case {
    let timeout = match boot {
        BootPath::Pvh => PVH_TIMEOUT,
        BootPath::GrubBios => BIOS_TIMEOUT,
        BootPath::GrubUefi => UEFI_TIMEOUT,
    };
    Case {
        name,
        machine,
        boot,
        memory: "512M",
        cpus: 1,
        cpu: None,
        extra: &[],
        requires: &[],
        timeout,
        append: "",
        firmware: &[],
        ktests: &[],
        expect: Expect::TestsPass,
    }
}

/// Every case, in the order they run.
pub fn all_cases() -> Vec<Case> {
    use BootPath::*;
    use Machine::*;
    vec![
        Case {
            append: "expect-clock=hpet expect-apic=xapic",
            ktests: &[
                "clock_source_is_the_one_the_machine_offers",
                "apic_mode_is_the_one_the_cpu_offers",
                "pit_irq0_arrives_through_the_io_apic_with_madt_overrides",
            ],
            ..case("pvh-q35", Q35, Pvh)
        },
        Case { ktests: &["pit_irq0_arrives_through_the_io_apic_with_madt_overrides"], ..case("pvh-pc", Pc, Pvh) },
        case("grub-bios-q35", Q35, GrubBios),
        case("grub-uefi-q35", Q35, GrubUefi),
        Case {
            cpus: 4,
            append: "expect-cpus=4",
            ktests: &["madt_cpu_count_matches_the_machine"],
            ..case("pvh-q35-smp4", Q35, Pvh)
        },
        Case {
            memory: "256M",
            append: "expect-mem-mib=256",
            ktests: &["usable_memory_matches_the_machine"],
            ..case("pvh-q35-mem256m", Q35, Pvh)
        },
        Case {
            memory: "4G",
            append: "expect-mem-mib=4096",
            ktests: &["usable_memory_matches_the_machine"],
            ..case("pvh-q35-mem4g", Q35, Pvh)
        },
        Case {
            cpu: Some("max"),
            cpus: 2,
            append: "expect-apic=x2apic",
            ktests: &["apic_mode_is_the_one_the_cpu_offers"],
            ..case("pvh-q35-cpu-max", Q35, Pvh)
        },
        Case {
            extra: &[
                "-device",
                "e1000e",
                "-drive",
                "if=none,id=nvme0,format=raw,file={nvme}",
                "-device",
                "nvme,serial=xtask0,drive=nvme0",
            ],
            requires: &["e1000e", "nvme"],
            ktests: &["e1000e_interrupt_arrives_by_msi", "msix_table_entries_program_through_the_bar"],
            ..case("pvh-q35-pci-devices", Q35, Pvh)
        },
        Case {
            extra: &["-device", "pcie-root-port,id=rp1,bus=pcie.0,chassis=1", "-device", "e1000e,bus=rp1"],
            requires: &["pcie-root-port", "e1000e"],
            ktests: &["e1000e_interrupt_arrives_by_msi", "msix_table_entries_program_through_the_bar"],
            ..case("pvh-q35-root-port", Q35, Pvh)
        },
        Case {
            extra: &[
                "-device",
                "pxb-pcie,id=pxb1,bus_nr=0x80,bus=pcie.0",
                "-device",
                "pcie-root-port,id=rp2,bus=pxb1,chassis=2",
                "-device",
                "e1000e,bus=rp2",
            ],
            requires: &["pxb-pcie", "pcie-root-port", "e1000e"],
            ktests: &["e1000e_interrupt_arrives_by_msi", "msix_table_entries_program_through_the_bar"],
            ..case("pvh-q35-pxb", Q35, Pvh)
        },
        Case {
            extra: &["-device", "intel-iommu"],
            append: "expect-iommu=vtd@0xfed90000",
            requires: &["intel-iommu"],
            ktests: &["acpi_names_the_machines_iommu_and_its_registers_answer"],
            ..case("pvh-q35-intel-iommu", Q35, Pvh)
        },
        Case {
            extra: &["-machine", "hpet=off"],
            append: "expect-clock=pit",
            ktests: &["clock_source_is_the_one_the_machine_offers"],
            ..case("pvh-q35-no-hpet", Q35, Pvh)
        },
        Case {
            extra: &["-machine", "acpi=off"],
            append: "expect-clock=pit",
            ktests: &["clock_source_is_the_one_the_machine_offers"],
            ..case("pvh-pc-no-acpi", Pc, Pvh)
        },
        Case {
            append: "gpu=model:gh100,model:ad102,model:ga102,model:tu102",
            memory: "1G",
            ktests: &["gpus_from_the_command_line_are_identified", "model_gpus_saw_no_unmodelled_or_rejected_accesses"],
            ..case("pvh-q35-four-model-gpus", Q35, Pvh)
        },
        Case {
            append: "gpu=model:tu102,model:ga100,model:ga102,model:ad102,model:gh100",
            firmware: &["tu102", "ga100", "ga102", "ad102", "gh100"],
            memory: "3G",
            ktests: &[
                "gsp_rm_boots_on_every_gpu_whose_firmware_is_given",
                "rm_objects_allocate_and_free_children_first_on_live_gsp",
                "gsp_suspend_and_resume_keep_rm_objects_alive",
            ],
            ..case("pvh-q35-gsp-boot", Q35, Pvh)
        },
        Case { append: "fault=pagefault", expect: Expect::PageFaultReport, ..case("pvh-q35-fault-report", Q35, Pvh) },
        Case {
            append: "probe gpu=model:gh100,model:tu102",
            expect: Expect::ProbeDumps,
            ..case("pvh-q35-probe", Q35, Pvh)
        },
        Case {
            append: "app gpu=model:gh100",
            firmware: &["gh100"],
            expect: Expect::AppRuns,
            ..case("pvh-q35-app-gh100", Q35, Pvh)
        },
        Case {
            append: "app gpu=model:ad102",
            firmware: &["ad102"],
            expect: Expect::AppRuns,
            ..case("pvh-q35-app-ad102", Q35, Pvh)
        },
        Case {
            append: "app gpu=model:ga102",
            firmware: &["ga102"],
            expect: Expect::AppRuns,
            ..case("pvh-q35-app-ga102", Q35, Pvh)
        },
        Case {
            append: "app gpu=model:ga100",
            firmware: &["ga100"],
            expect: Expect::AppRuns,
            ..case("pvh-q35-app-ga100", Q35, Pvh)
        },
        Case {
            append: "app gpu=model:tu102",
            firmware: &["tu102"],
            expect: Expect::AppRuns,
            ..case("pvh-q35-app-tu102", Q35, Pvh)
        },
    ]
}

/// How the suite runs.
#[derive(Clone, Debug)]
pub struct Options {
    pub kernel: PathBuf,
    /// Words appended to the kernel command line (after `test pci-handshake`).
    pub append: String,
    pub pci_check: bool,
    /// Overrides every case's timeout.
    pub timeout: Option<Duration>,
    /// Run only cases whose name contains one of these.
    pub only: Vec<String>,
    /// Logs and images go under target/qemu-logs/<prefix><case>.*
    pub log_prefix: String,
    /// The kernel is the selftest's fake (`xtask/fake-kernel`): each case's command line also
    /// names the ktests the case exists for (`fake-ktest=NAME`), which the fake then reports as
    /// passed, so the check that they ran is exercised.
    pub fake_ktests: bool,
}

impl Options {
    pub fn cmdline(&self) -> String {
        let mut words = vec!["test"];
        if self.pci_check {
            words.push("pci-handshake");
        }
        words.extend(self.append.split_whitespace());
        words.join(" ")
    }

    pub fn selected(&self) -> Vec<Case> {
        all_cases()
            .into_iter()
            .filter(|c| self.only.is_empty() || self.only.iter().any(|o| c.name.contains(o.as_str())))
            .collect()
    }
}

/// What one case came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass(String),
    Fail(String),
    Skip(String),
}

/// Runs the selected cases one after the other (the machines this runs on are shared, and TCG
/// is CPU-bound), printing a line per case and a summary. Err if any case failed.
pub fn run(opts: &Options) -> Result<Vec<String>> {
    let outcomes = run_outcomes(opts)?;
    let failed = outcomes.iter().filter(|(_, o)| matches!(o, Outcome::Fail(_))).count();
    if failed > 0 {
        return Err(error(format!("{failed} QEMU case(s) failed; serial logs are in {}", display_path(&logs_dir()?))));
    }
    Ok(outcomes
        .into_iter()
        .filter_map(|(name, o)| match o {
            Outcome::Skip(why) => Some(format!("QEMU case {name}: {why}")),
            _ => None,
        })
        .collect())
}

/// Runs the selected cases as [`run`] does, printing each, and returns what each came to
/// (the selftest checks why a case failed).
pub fn run_outcomes(opts: &Options) -> Result<Vec<(&'static str, Outcome)>> {
    qemu::check_installed()?;
    let cases = opts.selected();
    if cases.is_empty() {
        return Err(error(format!("no case matches {:?}; cases: {}", opts.only, case_names())));
    }
    println!(
        "qemu-suite: {} case(s), kernel {}, command line '{}'",
        cases.len(),
        display_path(&opts.kernel),
        opts.cmdline()
    );

    let modules = crate::modules::with_symbol_map(&opts.kernel, &[])?;
    let initrd = crate::modules::pvh_initrd(&modules, &format!("{}suite", opts.log_prefix))?;
    let needs_iso = cases.iter().any(|c| c.boot != BootPath::Pvh);
    let iso = if needs_iso {
        let path = crate::iso::default_path(&format!("{}suite", opts.log_prefix))?;
        crate::iso::build(&opts.kernel, &opts.cmdline(), &modules, &path).context("building the suite's GRUB ISO")?;
        Some(path)
    } else {
        None
    };

    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    let mut outcomes = Vec::new();
    for case in &cases {
        let started = Instant::now();
        let log = logs_dir()?.join(format!("{}{}.log", opts.log_prefix, case.name));
        let outcome = match missing_device(case) {
            Some(device) => Outcome::Skip(format!("this QEMU has no {device} device")),
            None => {
                run_case(case, opts, iso.as_deref(), &initrd, &log).unwrap_or_else(|e| Outcome::Fail(e.to_string()))
            }
        };
        let secs = started.elapsed().as_secs_f64();
        outcomes.push((case.name, outcome.clone()));
        match outcome {
            Outcome::Pass(summary) => {
                passed += 1;
                println!("  pass  {:<22} {secs:6.1} s  {summary}", case.name);
            }
            Outcome::Skip(why) => {
                skipped += 1;
                println!("  skip  {:<22} {:>8}  {why}", case.name, "");
            }
            Outcome::Fail(why) => {
                failed += 1;
                println!("  FAIL  {:<22} {secs:6.1} s  {why}", case.name);
                println!("        serial log: {}", display_path(&log));
                let qemu_log = log.with_extension("qemu.log");
                let qemu_output = qemu::tail(&qemu_log, 10);
                if !qemu_output.trim().is_empty() {
                    println!("        QEMU output ({}):", display_path(&qemu_log));
                    for line in qemu_output.lines() {
                        println!("        | {line}");
                    }
                }
                let serial = qemu::tail(&log, 15);
                if !serial.trim().is_empty() {
                    println!("        last serial lines:");
                    for line in serial.lines() {
                        println!("        | {}", line.trim_end_matches('\r'));
                    }
                }
            }
        }
    }
    let skipped_note = if skipped > 0 { format!(", {skipped} skipped") } else { String::new() };
    println!("qemu-suite: {passed} passed, {failed} failed{skipped_note}");
    Ok(outcomes)
}

pub fn case_names() -> String {
    all_cases().iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
}

fn missing_device(case: &Case) -> Option<&'static str> {
    case.requires.iter().copied().find(|device| !qemu::has_device(device))
}

/// Boots one case and judges it.
fn run_case(case: &Case, opts: &Options, iso: Option<&Path>, initrd: &Path, log: &Path) -> Result<Outcome> {
    let logs = logs_dir()?;
    let stem = format!("{}{}", opts.log_prefix, case.name);
    let cmdline = match case.expect {
        Expect::TestsPass if opts.fake_ktests => {
            if case.boot != BootPath::Pvh && !case.ktests.is_empty() {
                return Err(error("ktests a case exists for are only given to the fake kernel on the PVH path"));
            }
            let named: Vec<String> = case.ktests.iter().map(|k| format!("fake-ktest={k}")).collect();
            format!("{} {} {}", opts.cmdline(), case.append, named.join(" "))
        }
        Expect::TestsPass => format!("{} {}", opts.cmdline(), case.append),
        // A fault case boots without `test` and without the handshake: it must fault first.
        Expect::PageFaultReport => case.append.to_string(),
        // The application runs instead of the in-kernel tests.
        Expect::AppRuns => case.append.to_string(),
        // So does the probe, which writes nothing and exits.
        Expect::ProbeDumps => case.append.to_string(),
    };
    if case.boot != BootPath::Pvh && !case.append.is_empty() {
        return Err(error("per-case command lines are only supported on the PVH path"));
    }
    let case_initrd = if case.firmware.is_empty() {
        initrd.to_path_buf()
    } else {
        if case.boot != BootPath::Pvh {
            return Err(error("per-case firmware is only supported on the PVH path"));
        }
        let mut modules = crate::modules::with_symbol_map(&opts.kernel, &[])?;
        modules.extend(crate::modules::firmware_modules(case.firmware)?);
        if case.expect == Expect::AppRuns {
            modules.extend(crate::payloads::modules()?);
        }
        crate::modules::pvh_initrd(&modules, &stem)?
    };
    let boot = match case.boot {
        BootPath::Pvh => {
            Boot::Pvh { kernel: opts.kernel.clone(), cmdline: cmdline.trim().to_string(), initrd: Some(case_initrd) }
        }
        BootPath::GrubBios => Boot::IsoBios { iso: iso.context("no ISO was built")?.to_path_buf() },
        BootPath::GrubUefi => Boot::IsoUefi {
            iso: iso.context("no ISO was built")?.to_path_buf(),
            firmware: UefiFirmware::prepare(&logs.join(format!("{stem}.ovmf-vars.fd")))?,
        },
    };

    let serial_socket = SocketListener::bind(&format!("{stem}-serial"))?;
    let qmp_socket = SocketListener::bind(&format!("{stem}-qmp"))?;
    let mut vm = Vm::new(case.machine, boot, Serial::Socket(serial_socket.path().to_path_buf()));
    vm.memory = case.memory.to_string();
    vm.cpus = case.cpus;
    vm.cpu = case.cpu.map(str::to_string);
    vm.qmp = Some(qmp_socket.path().to_path_buf());
    let nvme_image = logs.join(format!("{stem}.nvme.img"));
    if case.extra.iter().any(|a| a.contains("{nvme}")) {
        let image = fs::File::create(&nvme_image).with_context(|| format!("creating {}", nvme_image.display()))?;
        image.set_len(1 << 20)?;
    }
    vm.extra = case.extra.iter().map(|a| a.replace("{nvme}", &nvme_image.to_string_lossy())).collect();

    let qemu_log_path = log.with_extension("qemu.log");
    let qemu_log = fs::File::create(&qemu_log_path)?;
    let mut cmd = vm.command();
    cmd.stdin(Stdio::null()).stdout(qemu_log.try_clone()?).stderr(qemu_log);
    fs::write(log.with_extension("cmdline"), crate::util::command_line(&cmd) + "\n")?;

    let started = Instant::now();
    let deadline = started + opts.timeout.unwrap_or(case.timeout);
    let mut qemu = QemuProcess::spawn(cmd)?;
    let connect_by = Instant::now() + Duration::from_secs(30);
    let serial = serial_socket.accept(&mut qemu, connect_by, "serial")?;
    let mut serial_input = serial.try_clone()?;
    let lines = qemu::spawn_serial_reader(serial, log)?;
    let qmp_stream = qmp_socket.accept(&mut qemu, connect_by, "QMP")?;
    let mut qmp = Qmp::handshake(qmp_stream).context("QMP")?;

    let mut seen: Vec<String> = Vec::new();
    let mut pci_verdict: Option<std::result::Result<usize, String>> = None;
    let mut exit = None;
    let mut timed_out = false;
    loop {
        match lines.recv_timeout(Duration::from_millis(50)) {
            Ok(line) => {
                let handshake = klog::parse_scan_complete(&line).filter(|s| s.waiting_for_host);
                seen.push(line);
                if let Some(scan) = handshake {
                    if pci_verdict.is_none() {
                        pci_verdict = Some(check_pci(
                            &mut qmp,
                            &seen,
                            scan.functions,
                            &logs.join(format!("{stem}.query-pci.json")),
                        ));
                    }
                    // Any byte lets the kernel go on, whatever the check said.
                    serial_input.write_all(b"\n").context("answering the kernel's PCI handshake")?;
                }
                continue;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // QEMU closed the serial connection: it is exiting.
                exit = qemu.wait_until(Some(Instant::now() + Duration::from_secs(10)))?;
                break;
            }
        }
        if let Some(status) = qemu.try_wait()? {
            exit = Some(status);
            // Take what the reader still has.
            while let Ok(line) = lines.recv_timeout(Duration::from_millis(500)) {
                seen.push(line);
            }
            break;
        }
        if Instant::now() >= deadline {
            timed_out = true;
            break;
        }
    }
    drop(qemu);
    drop(qmp);
    let timeline = crate::timeline::save(log, seen.iter().map(String::as_str));

    if case.expect == Expect::PageFaultReport {
        return Ok(judge_fault_report(&seen, exit.and_then(|s| s.code()), timed_out));
    }
    if case.expect == Expect::ProbeDumps {
        return Ok(judge_probe(case.append, &seen, exit.and_then(|s| s.code()), timed_out));
    }
    if case.expect == Expect::AppRuns {
        let outcome = judge_app(&seen, exit.and_then(|s| s.code()), timed_out);
        return Ok(match (outcome, timeline) {
            (Outcome::Pass(summary), Ok(Some(path))) => match judge_timeline(&seen) {
                Ok(stages) => Outcome::Pass(format!("{summary}; {stages} ({})", display_path(&path))),
                Err(why) => Outcome::Fail(format!("boot timeline: {why}")),
            },
            (Outcome::Pass(_), Ok(None)) => Outcome::Fail("the kernel printed no boot timeline".into()),
            (Outcome::Pass(_), Err(e)) => Outcome::Fail(format!("boot timeline: {e}")),
            (other, _) => other,
        });
    }
    if let Err(e) = &timeline {
        return Ok(Outcome::Fail(format!("boot timeline: {e}")));
    }
    let mut problems = Vec::new();
    if timed_out {
        let last = seen.iter().rev().find(|l| !l.trim().is_empty()).map(String::as_str).unwrap_or("(no serial output)");
        problems.push(format!(
            "timed out after {} s; last serial line: {}",
            opts.timeout.unwrap_or(case.timeout).as_secs(),
            last.trim()
        ));
    } else if exit.is_none() {
        problems.push("QEMU closed its serial port but did not exit".into());
    } else if let Err(why) = klog::describe_exit(exit.and_then(|s| s.code())) {
        problems.push(why);
    }
    let report = KtestReport::from_lines(seen.iter().map(String::as_str));
    let verdict = report.verdict();
    if let Err(why) = &verdict {
        if !timed_out || report.result.is_some() || !report.failed.is_empty() {
            problems.push(why.clone());
        }
    }
    problems.extend(required_ktest_problems(&seen, case.ktests));
    problems.extend(acpi_problems(&seen, case.extra.iter().any(|a| a.contains("acpi=off"))));
    let pci_summary = if opts.pci_check {
        match pci_verdict {
            Some(Ok(n)) => format!(", {n} PCI functions match QEMU"),
            Some(Err(why)) => {
                problems.push(why);
                String::new()
            }
            None => {
                problems.push("the kernel never printed 'pci: scan complete, N functions; waiting for host' (PCI cross-check not done)".into());
                String::new()
            }
        }
    } else {
        String::new()
    };
    let ready = seen
        .iter()
        .find_map(|l| klog::parse_platform_ready(l))
        .map(|ms| format!(", platform ready in {ms} ms"))
        .unwrap_or_default();

    if problems.is_empty() {
        let tests = verdict.unwrap_or(0);
        let skipped = match report.result {
            Some((_, _, Some(n))) if n > 0 => format!(" ({n} skipped)"),
            _ => String::new(),
        };
        Ok(Outcome::Pass(format!("{tests} tests passed{skipped}{pci_summary}{ready}")))
    } else {
        Ok(Outcome::Fail(problems.join("; ")))
    }
}

/// What is wrong with the kernel's reading of the ACPI tables: on a machine with ACPI the log
/// must show the tables found and a MADT read (`acpi: MADT: N CPUs ...`), and no fallback to running
/// without them; a case that turns ACPI off must show the kernel noticing.
fn acpi_problems(seen: &[String], acpi_off: bool) -> Vec<String> {
    let without = seen.iter().any(|l| l.contains("booting without ACPI"));
    let madt = seen.iter().any(|l| l.contains("MADT: ") && l.contains(" CPUs ("));
    match (acpi_off, without, madt) {
        (true, true, _) | (false, false, true) => Vec::new(),
        (true, false, _) => vec!["ACPI is off but the kernel never said 'booting without ACPI'".into()],
        (false, true, _) => vec!["the machine has ACPI tables but the kernel booted without them".into()],
        (false, false, false) => vec!["the kernel never reported the MADT it read ('acpi: MADT: N CPUs ...')".into()],
    }
}

/// What is wrong with the ktests a case exists for: each must have run and passed
/// (`ktest NAME ... ok (T ms)`); one that was skipped, failed or never ran is named with what the log
/// says of it.
fn required_ktest_problems(seen: &[String], names: &[&str]) -> Vec<String> {
    names
        .iter()
        .filter_map(|name| {
            let marker = format!("ktest {name} ... ");
            let Some(rest) = seen.iter().find_map(|l| l.split_once(marker.as_str()).map(|(_, r)| r.trim())) else {
                return Some(format!("ktest {name}, which this case exists for, did not run"));
            };
            if rest == "ok" || rest.starts_with("ok (") {
                None
            } else {
                Some(format!("ktest {name}, which this case exists for, did not pass: {rest}"))
            }
        })
        .collect()
}

/// A deliberate #PF must end the run with exit 35 and a report naming the vector, the faulting
/// address, the registers and a symbolized backtrace (from the `kernel.sym` module).
/// The application's report: every example ok, the summary line, exit 33.
fn judge_app(seen: &[String], code: Option<i32>, timed_out: bool) -> Outcome {
    let ok: Vec<&str> = ["vector_add", "saxpy", "matmul", "reduce", "histogram", "mandelbrot"]
        .into_iter()
        .filter(|name| seen.iter().any(|l| l.contains(&format!("app: {name}: ok"))))
        .collect();
    let first_result_ms = seen
        .iter()
        .find(|l| l.contains("app: vector_add: ok"))
        .and_then(|l| l.trim_start().strip_prefix('[')?.split(" ms]").next()?.trim().parse::<u64>().ok());
    if timed_out {
        return Outcome::Fail(format!("timed out; examples ok so far: {ok:?}"));
    }
    if code != Some(33) {
        return Outcome::Fail(format!(
            "expected QEMU exit 33 after the application, got {code:?}; examples ok: {ok:?}"
        ));
    }
    if ok.len() != 6 || !seen.iter().any(|l| l.contains("app: 6 passed, 0 failed")) {
        return Outcome::Fail(format!("examples ok: {ok:?}; expected all six and `app: 6 passed, 0 failed`"));
    }
    let managed = match judge_managed(seen) {
        Ok(m) => m,
        Err(why) => return Outcome::Fail(format!("managed-memory example: {why}")),
    };
    Outcome::Pass(format!(
        "6 examples match their CPU references; first result {} ms after entry; {managed}",
        first_result_ms.map_or_else(|| "?".to_string(), |ms| ms.to_string())
    ))
}

/// The stages the application's timeline must show, in this order: the boot's, then the
/// application's, each reached once the one before was.
const APP_TIMELINE: &[&str] = &[
    "platform ready",
    "GPU foundation",
    "GSP-RM up",
    "boot done",
    "GPU opened",
    "compute stream created",
    "first result",
    "examples done",
    "managed example done",
    "application finished",
];

/// The application run's timeline: a `boot` phase, then an `application` phase holding every
/// stage of [`APP_TIMELINE`] in order; its summary names the first result's time and the step
/// from GSP-RM up to it.
fn judge_timeline(seen: &[String]) -> std::result::Result<String, String> {
    let phases = crate::timeline::phases(seen.iter().map(String::as_str)).map_err(|e| e.to_string())?;
    let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
    if names != ["boot", "application"] {
        return Err(format!("phases {names:?}, expected [\"boot\", \"application\"]"));
    }
    let app = &phases[1];
    let mut previous: Option<(&str, f64)> = None;
    for stage in APP_TIMELINE {
        let ms = app.ms(stage).ok_or_else(|| format!("the application phase has no stage {stage:?}"))?;
        if let Some((before, at)) = previous {
            if ms < at {
                return Err(format!("{stage:?} at {ms} ms comes before {before:?} at {at} ms"));
            }
        }
        previous = Some((stage, ms));
    }
    let first = app.ms("first result").unwrap_or_default();
    let gsp = app.ms("GSP-RM up").unwrap_or_default();
    Ok(format!("timeline: first result {first:.0} ms, {:.0} ms after GSP-RM up", first - gsp))
}

/// The managed-memory example: its result matched, CPU code took page faults that `uvm`
/// served, and the statistics show GPU faults, evictions and pages migrated back to the CPU
/// (a buffer twice the context's VRAM, read by CPU code after a kernel wrote it).
fn judge_managed(seen: &[String]) -> std::result::Result<String, String> {
    if !seen.iter().any(|l| l.contains("app: managed: ok")) {
        return Err("no `app: managed: ok` line".into());
    }
    let (faults, back) = seen
        .iter()
        .find_map(|l| {
            let rest = l.split("app: managed: ").nth(1)?;
            let (n, rest) = rest.split_once(" CPU page faults served through uvm, ")?;
            let b = rest.trim_end().strip_suffix(" bytes migrated back from the GPU by them")?;
            Some((n.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?))
        })
        .ok_or(
            "no `app: managed: N CPU page faults served through uvm, B bytes migrated back from the GPU by them` line",
        )?;
    let json = seen
        .iter()
        .find_map(|l| l.split("app: managed stats: ").nth(1))
        .ok_or("no `app: managed stats: {...}` line")?;
    let stats: serde_json::Value =
        serde_json::from_str(json.trim()).map_err(|e| format!("the statistics are not JSON ({e}): {json}"))?;
    let get = |k: &str| stats.get(k).and_then(serde_json::Value::as_u64);
    let mut problems = Vec::new();
    if faults == 0 {
        problems.push("CPU code took no page fault on managed memory".to_string());
    }
    if back == 0 {
        problems.push("CPU page faults brought no GPU-resident page back".to_string());
    }
    for key in ["gpu_faults", "replays", "evictions", "migrated_to_gpu_bytes", "migrated_to_cpu_bytes", "cpu_faults"] {
        match get(key) {
            Some(0) => problems.push(format!("{key} is 0")),
            None => problems.push(format!("{key} is missing")),
            Some(_) => {}
        }
    }
    if get("cancels") != Some(0) {
        problems.push("cancels is not 0".into());
    }
    if !problems.is_empty() {
        return Err(format!("{}: {json}", problems.join(", ")));
    }
    Ok(format!(
        "managed memory: {faults} CPU page faults brought {back} bytes back from the GPU, {} evictions",
        get("evictions").unwrap_or(0)
    ))
}

/// `probe`: each model chip of `gpu=` identified with its VBIOS read, the model's own count of
/// 0 register writes for each, no access refused, the closing `probe: 0 register writes`, exit 33.
fn judge_probe(append: &str, seen: &[String], code: Option<i32>, timed_out: bool) -> Outcome {
    if timed_out {
        return Outcome::Fail("timed out before the probe finished".into());
    }
    if let Err(why) = klog::describe_exit(code) {
        return Outcome::Fail(why);
    }
    let chips: Vec<&str> = append
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("gpu="))
        .flat_map(|spec| spec.split(','))
        .filter_map(|g| g.strip_prefix("model:"))
        .collect();
    let mut problems = Vec::new();
    for (i, chip) in chips.iter().enumerate() {
        let name = format!("probe: model gpu{i} ({chip}): ");
        let lines: Vec<&str> = seen.iter().filter_map(|l| l.split(&name).nth(1)).collect();
        let upper = chip.to_ascii_uppercase();
        if !lines.iter().any(|l| l.starts_with("BOOT0 ") && l.contains(&format!(": {upper} ("))) {
            problems.push(format!("{chip}: no BOOT0/BOOT42 line identifying {upper}"));
        }
        if !lines.iter().any(|l| l.starts_with("VBIOS: ") && l.contains("ROM images")) {
            problems.push(format!("{chip}: the VBIOS was not read"));
        }
        if !lines.contains(&"the model saw 0 register writes") {
            problems.push(format!("{chip}: no `the model saw 0 register writes`"));
        }
    }
    if chips.is_empty() {
        problems.push("the case names no model GPU".into());
    }
    if let Some(l) = seen.iter().find(|l| l.contains("rejected an access")) {
        problems.push(format!("the model refused an access: {}", l.trim()));
    }
    let totals: Vec<&str> = seen
        .iter()
        .filter_map(|l| l.split("INFO  probe: ").nth(1))
        .map(str::trim)
        .filter(|l| l.strip_suffix(" register writes").is_some_and(|n| n.parse::<u64>().is_ok()))
        .collect();
    if totals != ["0 register writes"] {
        problems.push(format!("closing lines {totals:?}, expected exactly `probe: 0 register writes`"));
    }
    if problems.is_empty() {
        Outcome::Pass(format!("{} GPU(s) dumped read-only, 0 register writes", chips.len()))
    } else {
        Outcome::Fail(problems.join("; "))
    }
}

fn judge_fault_report(seen: &[String], code: Option<i32>, timed_out: bool) -> Outcome {
    let text = seen.join("\n");
    let mut missing = Vec::new();
    for needle in [
        "EXCEPTION vector 14 (#PF page fault)",
        "cr2 0xffff90000badf000 (page not present on read data access)",
        " rip 0x",
        " rax 0x",
        "backtrace:",
        "kernel::kernel_main+0x",
    ] {
        if !text.contains(needle) {
            missing.push(needle);
        }
    }
    if timed_out {
        return Outcome::Fail("timed out waiting for the page-fault report".into());
    }
    if code != Some(35) {
        return Outcome::Fail(format!("expected QEMU exit 35 (kernel failure) after the fault, got {code:?}"));
    }
    if !missing.is_empty() {
        return Outcome::Fail(format!("the exception report lacks: {}", missing.join(" | ")));
    }
    Outcome::Pass("page fault reported with CR2, registers and a symbolized backtrace".into())
}

/// Compares the kernel's `pci ...` lines so far with QEMU's `query-pci` (saved next to the log).
fn check_pci(
    qmp: &mut Qmp,
    seen: &[String],
    kernel_count: usize,
    save_to: &Path,
) -> std::result::Result<usize, String> {
    let reply = qmp.execute("query-pci", None).map_err(|e| format!("PCI cross-check: {e}"))?;
    let _ = fs::write(save_to, serde_json::to_string_pretty(&reply).unwrap_or_default());
    // The same in HMP's words, for a person reading a failure.
    if let Ok(text) = qmp.human("info pci") {
        let _ = fs::write(save_to.with_extension("txt"), text);
    }
    let qemu = pci::from_query_pci(&reply).map_err(|e| format!("PCI cross-check: {e}"))?;
    let kernel: Vec<_> = seen.iter().filter_map(|l| klog::parse_pci_line(l)).collect();
    pci::compare(&kernel, Some(kernel_count), &qemu).map_err(|m| m.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline_line(phase: &str, stages: &[(&str, f64)]) -> String {
        let stages: Vec<String> =
            stages.iter().map(|(s, ms)| format!("{{\"stage\":\"{s}\",\"gpu\":null,\"ms\":{ms}}}")).collect();
        format!(
            "[ 1 ms] INFO  kernel: timeline json: {{\"phase\":\"{phase}\",\"stages\":[{}],\"dropped\":0}}",
            stages.join(",")
        )
    }

    #[test]
    fn the_application_timeline_must_hold_every_stage_in_order() {
        let all: Vec<(&str, f64)> = APP_TIMELINE.iter().enumerate().map(|(i, s)| (*s, 10.0 * i as f64 + 5.0)).collect();
        let boot = timeline_line("boot", &all[..4]);
        let good = vec![boot.clone(), timeline_line("application", &all)];
        let summary = judge_timeline(&good).unwrap();
        assert!(summary.contains("first result 65 ms, 40 ms after GSP-RM up"), "{summary}");

        let mut missing = all.clone();
        missing.retain(|(s, _)| *s != "GPU opened");
        let why = judge_timeline(&[boot.clone(), timeline_line("application", &missing)]).unwrap_err();
        assert!(why.contains("no stage \"GPU opened\""), "{why}");

        // Reached in the wrong order (each phase is in time order, so the stages swap places).
        let mut swapped = all.clone();
        swapped.swap(5, 6);
        swapped[5].1 = 55.0;
        swapped[6].1 = 65.0;
        let why = judge_timeline(&[boot.clone(), timeline_line("application", &swapped)]).unwrap_err();
        assert!(why.contains("comes before"), "{why}");

        let why = judge_timeline(&[timeline_line("application", &all)]).unwrap_err();
        assert!(why.contains("expected [\"boot\", \"application\"]"), "{why}");
    }

    #[test]
    fn acpi_is_judged_from_the_log() {
        let lines = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let found = lines(&["[  3 ms] INFO  acpi: MADT: 4 CPUs (4 usable, 0 x2APIC entries), 1 I/O APICs, 5 overrides, local APIC at 0xfee00000"]);
        let without = lines(&[
            "[  2 ms] WARN  acpi: no RSDP from the loader and none in the BIOS areas (x): booting without ACPI",
        ]);
        assert!(acpi_problems(&found, false).is_empty());
        assert!(acpi_problems(&without, true).is_empty());
        assert_eq!(acpi_problems(&without, false).len(), 1);
        assert_eq!(acpi_problems(&found, true).len(), 1);
        assert_eq!(acpi_problems(&lines(&["nothing"]), false).len(), 1);
    }

    #[test]
    fn a_case_fails_when_a_ktest_it_exists_for_was_skipped_failed_or_absent() {
        let log: Vec<String> = [
            "[  5 ms] INFO  ktest usable_memory_matches_the_machine ... ok (3 ms)",
            "[  5 ms] INFO  ktest apic_mode_is_the_one_the_cpu_offers_twice ... ok (1 ms)",
            "[  6 ms] INFO  ktest madt_cpu_count_matches_the_machine ... skipped: no expect-cpus= on the command line",
            "[  7 ms] INFO  ktest clock_source_is_the_one_the_machine_offers ... FAILED: hpet",
        ]
        .map(String::from)
        .to_vec();
        assert!(required_ktest_problems(&log, &["usable_memory_matches_the_machine"]).is_empty());
        let p = required_ktest_problems(
            &log,
            &[
                "madt_cpu_count_matches_the_machine",
                "clock_source_is_the_one_the_machine_offers",
                "apic_mode_is_the_one_the_cpu_offers",
            ],
        );
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].contains("did not pass: skipped: no expect-cpus="), "{p:?}");
        assert!(p[1].contains("did not pass: FAILED"), "{p:?}");
        assert!(p[2].contains("did not run"), "{p:?}");
        // Every case that sets up a machine for a ktest names it.
        for c in all_cases() {
            let needs = |word: &str, ktest: &str| {
                if c.append.contains(word) {
                    assert!(c.ktests.contains(&ktest), "{} sets {word} but does not require {ktest}", c.name);
                }
            };
            needs("expect-clock=", "clock_source_is_the_one_the_machine_offers");
            needs("expect-apic=", "apic_mode_is_the_one_the_cpu_offers");
            needs("expect-cpus=", "madt_cpu_count_matches_the_machine");
            needs("expect-mem-mib=", "usable_memory_matches_the_machine");
            if !c.firmware.is_empty() && c.expect == Expect::TestsPass {
                assert!(c.ktests.contains(&"gsp_rm_boots_on_every_gpu_whose_firmware_is_given"), "{}", c.name);
            }
        }
    }

    #[test]
    fn cases_cover_every_boot_path_and_the_pci_shapes() {
        let cases = all_cases();
        let names: Vec<&str> = cases.iter().map(|c| c.name).collect();
        for name in ["pvh-q35", "pvh-pc", "grub-bios-q35", "grub-uefi-q35", "pvh-q35-pxb", "pvh-q35-root-port"] {
            assert!(names.contains(&name), "{name}");
        }
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "case names are unique");
        assert!(cases.iter().any(|c| c.cpus == 4));
        assert!(cases.iter().any(|c| c.memory == "256M"));
        assert!(cases.iter().any(|c| c.memory == "4G"));
    }

    #[test]
    fn command_line_and_selection() {
        let mut opts = Options {
            kernel: "k".into(),
            append: "log=debug  gpu=none".into(),
            pci_check: true,
            timeout: None,
            only: vec![],
            log_prefix: String::new(),
            fake_ktests: false,
        };
        assert_eq!(opts.cmdline(), "test pci-handshake log=debug gpu=none");
        opts.pci_check = false;
        assert_eq!(opts.cmdline(), "test log=debug gpu=none");
        opts.only = vec!["grub".into()];
        let names: Vec<_> = opts.selected().iter().map(|c| c.name).collect();
        assert_eq!(names, ["grub-bios-q35", "grub-uefi-q35"]);
    }

    #[test]
    fn the_probe_judge_wants_every_chip_and_zero_writes() {
        let good: Vec<String> = [
            "[5 ms] INFO  probe: model gpu0 (gh100): BOOT0 0x180000a1, BOOT42 0x180a1000: GH100 (Hopper) rev A1",
            "[5 ms] INFO  probe: model gpu0 (gh100): VBIOS: 3 ROM images, version 96.01.80.00.5E",
            "[5 ms] INFO  probe: model gpu0 (gh100): the model saw 0 register writes",
            "[7 ms] INFO  probe: 0 register writes",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let append = "probe gpu=model:gh100";
        assert!(matches!(judge_probe(append, &good, Some(33), false), Outcome::Pass(_)));
        let mut wrote = good.clone();
        wrote[3] = "[7 ms] INFO  probe: 2 register writes".into();
        assert!(matches!(judge_probe(append, &wrote, Some(33), false), Outcome::Fail(_)));
        let two = "probe gpu=model:gh100,model:tu102";
        assert!(matches!(judge_probe(two, &good, Some(33), false), Outcome::Fail(w) if w.contains("tu102")));
        assert!(matches!(judge_probe(append, &good, Some(35), false), Outcome::Fail(_)));
    }
}
