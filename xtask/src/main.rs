//! `cargo xtask`: builds the kernel, makes boot images, runs QEMU, and runs the QEMU suite.
//! CI calls the same commands a person does (`.ci/run` is `cargo xtask test`).

mod app_crate;
mod args;
mod bench;
mod bench_linux;
mod deps;
mod extract;
mod fuzz;
mod iso;
mod kernel;
mod klog;
mod modules;
mod payloads;
mod pci;
mod qemu;
mod qmp;
mod suite;
mod timeline;
mod util;

use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use args::Args;
use qemu::{Boot, Machine, QemuProcess, Serial, UefiFirmware, Vm};
use util::{cargo, display_path, error, logs_dir, run_status, workspace_root, Context, Result};

const USAGE: &str = "\
cargo xtask <command> [options]

Commands:
  build         cargo build -p kernel --release; prints the ELF's path (target/release/kernel)
  iso           make the GRUB ISO (BIOS + UEFI, Multiboot2)
                  --append WORDS   kernel command line      --module PATH[=NAME] (repeatable)
                  -o PATH          output (default target/xtask/kernel.iso)
                  --kernel PATH    use this ELF instead of building   --no-build
  run           boot once with the serial port on this terminal (see `cargo xtask run --help`)
  new-app DIR   write a template application crate in DIR, outside the repository: a CUDA
                kernel (kernels/square.cu), a Rust main on the application API (nvrt) that runs
                it and checks the result, a README; boot it with `run --app-crate DIR`
  follow-readme the README's 'Your own application' commands, word for word, checked (part of `test`)
  image         the bootable ISO that runs the application, in target/image/NAME.iso
                  --app-crate DIR  your application (default: the example application)
                  --gpu SPEC       kernel `gpu=SPEC` (default model:gh100)
                  --append WORDS   more kernel command line words   -o PATH
  test          THE test command: host tools (scripts/install-deps.sh), real test data
                (scripts/fetch-real-data.sh if present), cargo fmt --check, cargo clippy -D warnings,
                cargo test --workspace, every fuzz target for 10 s, the selftest, then the QEMU
                suite; takes the qemu-suite options
  qemu-suite    only the QEMU suite
                  --only NAME      cases whose name contains NAME (repeatable); --list shows them
                  --no-pci-check   boot without `pci-handshake` and skip the QMP PCI comparison
                  --timeout SECS   per case (default 120 PVH, 180 GRUB/BIOS, 300 GRUB/UEFI)
                  --append WORDS   extra kernel command line words
                  --kernel PATH    use this ELF instead of building   --no-build
  bench         every measured figure the README quotes: unified memory (faults per MiB with and
                without prefetch, thrashing, 4x oversubscribed against fitting throughput, callgrind
                instructions per serviced fault), launch and
                submission cost (time, and callgrind instructions), the PTX interpreter's rate, fuzz executions per target in 10 s,
                then bench-boot with its defaults, then bench-vs-linux
  bench-boot    time QEMU start to exit on the PVH path
                  --runs N (5)  --machine q35|pc  --append WORDS (default: test)  --mem SIZE  --cpus N
                  --timeout SECS (120)  --kernel PATH  --no-build  -- extra QEMU args
  bench-vs-linux  the main job against Debian's Linux reaching a busybox init under the same QEMU
                (q35, 512M, 1 CPU, TCG; scripts/fetch-linux-reference.sh): medians of wall time to
                Linux's init, to the first GPU result and to the job's end, with the ratios
                  --runs N (5)  --timeout SECS (180)  --kernel PATH  --no-build
  extract-firmware  the 535.261.03 boot ucodes from NVIDIA's g_bindata_*.c into
                target/real-data/extracted-535.261.03 (see `cargo xtask extract-firmware --help`)
  fuzz          coverage-guided fuzzing (libFuzzer) of every parser that takes outside bytes:
                one line per target, `fuzz TARGET: N execs, N crashes`; fails on any crash
                  --seconds N (60 per target)   TARGET... (default: every target in fuzz/fuzz_targets)
  selftest      check xtask itself: the suite on a fake kernel (xtask/fake-kernel), and that a
                failing test, a phantom PCI function, a missing ktest and a kernel booting
                without the machine's ACPI tables are caught
";

const RUN_USAGE: &str = "\
cargo xtask run [options] [-- extra QEMU args]      (also ./run-qemu.sh, which installs host tools)

Builds the kernel and boots it once in QEMU with COM1 on this terminal (and copied to
target/qemu-logs/run.log). The QEMU monitor shares the terminal: Ctrl-A c switches to it and back,
Ctrl-A x quits QEMU. Exits when the kernel exits through isa-debug-exit: 0 if the kernel reported
success (QEMU exit 33), 1 otherwise (kernel failure, reset or triple fault, Ctrl-A x), 124 on
--timeout.

Boot path (default: PVH, QEMU -kernel, on q35):
  --iso               GRUB from an ISO under SeaBIOS (Multiboot2)
  --uefi              GRUB from an ISO under OVMF (UEFI, Multiboot2)
  --machine q35|pc    chipset (default q35)
Machine:
  --mem SIZE          memory, QEMU syntax (default 512M)
  --cpus N            CPUs (default 1)
  --cpu MODEL         QEMU -cpu model (default: QEMU's; `host` with KVM)
  --kvm               use KVM instead of TCG (needs /dev/kvm)
Kernel:
  --gpu SPEC          kernel `gpu=SPEC` (e.g. none, model:gh100, model:gh100,ga102)
  --append WORDS      more kernel command line words (repeatable)
  --test              add `test`: run the in-kernel tests, then exit
  --firmware          add the GSP firmware the --gpu model chips need (from target/real-data,
                      see scripts/fetch-real-data.sh) as boot modules
  --app               run the example application: --firmware, the kernels of payloads/ compiled
                      to PTX by clang-19 as boot modules, and the kernel word `app`
  --app-crate DIR     run your own application instead (a crate made by `cargo xtask new-app`):
                      it is built into the unikernel, its kernels/*.cu compiled like payloads/;
                      implies --app
  --module PATH[=NAME]  boot module, repeatable (GRUB: module2; PVH: all packed into one cpio -initrd);
                      the kernel symbol map kernel.sym is always added
  --kernel PATH       boot this ELF instead of building; --no-build boots target/release/kernel as is
Other:
  --timeout SECS      kill QEMU after SECS (default: none)
  --dry-run           print the QEMU command line and exit

Real GPUs (cannot be tried without one; not exercised by the test suite):
  --vfio BDF          pass the host PCI function BDF (e.g. 0000:41:00.0) to the guest with
                      `-enable-kvm -cpu host -device vfio-pci,host=BDF`; repeat for several GPUs
                      (and their NVLink peers). On the host beforehand:
                        - IOMMU on (intel_iommu=on or amd_iommu=on; iommu=pt), /dev/kvm usable;
                        - the GPU (and every function in its IOMMU group, e.g. its audio function)
                          bound to vfio-pci, e.g. `driverctl set-override 0000:41:00.0 vfio-pci`
                          or `echo 10de DEVID > /sys/bus/pci/drivers/vfio-pci/new_id`;
                        - run as root or with access to /dev/vfio/*, and a memlock limit above --mem.
                      GPUs with large BARs (A100/H100 BAR1 of 64-128 GiB) may need a larger 64-bit
                      PCI window than q35's default:
                        -- -global q35-pcihost.pci-hole64-size=2048G
";

fn main() -> ExitCode {
    let mut words = std::env::args().skip(1);
    let command = words.next().unwrap_or_default();
    let args = Args::new(words);
    let result = match command.as_str() {
        "build" => cmd_build(args).map(|()| ExitCode::SUCCESS),
        "iso" => cmd_iso(args).map(|()| ExitCode::SUCCESS),
        "run" => cmd_run(args),
        "new-app" => cmd_new_app(args).map(|()| ExitCode::SUCCESS),
        "image" => cmd_image(args).map(|()| ExitCode::SUCCESS),
        "follow-readme" => args.finish().and_then(|_| app_crate::follow_readme()).map(|()| ExitCode::SUCCESS),
        "test" => cmd_test(args).map(|()| ExitCode::SUCCESS),
        "qemu-suite" => cmd_qemu_suite(args).map(|()| ExitCode::SUCCESS),
        "bench-boot" => cmd_bench_boot(args).map(|()| ExitCode::SUCCESS),
        "bench-vs-linux" => cmd_bench_vs_linux(args).map(|()| ExitCode::SUCCESS),
        "bench" => cmd_bench(args).map(|()| ExitCode::SUCCESS),
        "selftest" => cmd_selftest(args).map(|()| ExitCode::SUCCESS),
        "fuzz" => cmd_fuzz(args).map(|()| ExitCode::SUCCESS),
        "extract-firmware" => extract::cmd_extract_firmware(args).map(|()| ExitCode::SUCCESS),
        "" | "help" | "-h" | "--help" => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => Err(error(format!("unknown command '{other}'\n\n{USAGE}"))),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn wants_help(args: &mut Args) -> bool {
    args.flag("--help") | args.flag("-h")
}

fn cmd_build(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    args.finish()?;
    let elf = kernel::build()?;
    println!("{}", elf.display());
    Ok(())
}

fn cmd_iso(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    let append = args.values("--append")?.join(" ");
    let modules = args.values("--module")?.iter().map(|m| iso::Module::parse(m)).collect::<Result<Vec<_>>>()?;
    let out = args.value("-o")?;
    let kernel_path = args.value("--kernel")?;
    let no_build = args.flag("--no-build");
    args.finish()?;
    let elf = kernel::resolve(kernel_path, no_build)?;
    let out = match out {
        Some(path) => std::path::PathBuf::from(path),
        None => iso::default_path("kernel")?,
    };
    iso::build(&elf, &append, &modules, &out)?;
    println!("{}", out.display());
    Ok(())
}

/// `cargo xtask new-app DIR`.
fn cmd_new_app(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    let rest = args.positionals();
    args.finish()?;
    let [dir] = rest.as_slice() else {
        return Err(error("usage: cargo xtask new-app DIR (a directory outside the repository)"));
    };
    let dir = app_crate::new_app(dir)?;
    println!("xtask: wrote an application crate in {}", dir.display());
    println!("xtask: boot it with `cargo xtask run --app-crate {}`", dir.display());
    Ok(())
}

/// `cargo xtask image [--app-crate DIR] [--gpu SPEC] [--append WORDS] [-o PATH]`: the bootable
/// ISO (GRUB, BIOS and UEFI) that runs the application, in `target/image/`.
fn cmd_image(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    let app = args.value("--app-crate")?.map(|d| app_crate::load(&d)).transpose()?;
    let gpu = args.value("--gpu")?.unwrap_or_else(|| "model:gh100".into());
    let append = args.values("--append")?;
    let out = args.value("-o")?;
    args.finish()?;
    let (elf, payloads, name) = match &app {
        Some(a) => (app_crate::build_kernel(a)?, app_crate::modules(a)?, a.package.clone()),
        None => (kernel::build()?, payloads::modules()?, "kernel".to_string()),
    };
    let mut words = vec!["app".to_string(), format!("gpu={gpu}")];
    words.extend(append.iter().flat_map(|a| a.split_whitespace().map(str::to_string)));
    let chips: Vec<&str> = gpu.split(',').filter_map(|g| g.strip_prefix("model:")).collect();
    let chips = if chips.is_empty() { vec!["gh100"] } else { chips };
    let mut modules = modules::with_symbol_map(&elf, &[])?;
    modules.extend(modules::firmware_modules(&chips)?);
    modules.extend(payloads);
    let out = match out {
        Some(p) => std::path::PathBuf::from(p),
        None => util::target_dir().join("image").join(format!("{name}.iso")),
    };
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    iso::build(&elf, &words.join(" "), &modules, &out)?;
    println!("{}", out.display());
    Ok(())
}

fn cmd_run(mut args: Args) -> Result<ExitCode> {
    if wants_help(&mut args) {
        print!("{RUN_USAGE}");
        return Ok(ExitCode::SUCCESS);
    }
    let use_iso = args.flag("--iso");
    let uefi = args.flag("--uefi");
    let machine = match args.value("--machine")? {
        Some(name) => Machine::parse(&name)?,
        None => Machine::Q35,
    };
    let memory = args.value("--mem")?.unwrap_or_else(|| "512M".into());
    let cpus = args.number::<u32>("--cpus")?.unwrap_or(1);
    let cpu = args.value("--cpu")?;
    let kvm = args.flag("--kvm");
    let gpu = args.value("--gpu")?;
    let append = args.values("--append")?;
    let test = args.flag("--test");
    let app_crate = args.value("--app-crate")?.map(|d| app_crate::load(&d)).transpose()?;
    let app = args.flag("--app") || app_crate.is_some();
    let firmware = args.flag("--firmware") || app;
    let modules = args.values("--module")?.iter().map(|m| iso::Module::parse(m)).collect::<Result<Vec<_>>>()?;
    let vfio = args.values("--vfio")?.iter().map(|b| qemu::normalize_bdf(b)).collect::<Result<Vec<_>>>()?;
    let timeout = args.number::<u64>("--timeout")?.map(Duration::from_secs);
    let kernel_path = args.value("--kernel")?;
    let no_build = args.flag("--no-build");
    let dry_run = args.flag("--dry-run");
    let extra = args.finish()?;

    let mut words: Vec<String> = Vec::new();
    if test {
        words.push("test".into());
    }
    if app {
        words.push("app".into());
    }
    if let Some(gpu) = gpu {
        words.push(format!("gpu={gpu}"));
    }
    words.extend(append.iter().flat_map(|a| a.split_whitespace().map(str::to_string)));
    let cmdline = words.join(" ");

    let elf = match &app_crate {
        Some(_) if kernel_path.is_some() => return Err(error("--app-crate builds its own kernel: drop --kernel")),
        Some(_) if dry_run => util::target_dir().join("app-build").join("release").join("kernel"),
        Some(a) => app_crate::build_kernel(a)?,
        None if dry_run && kernel_path.is_none() => util::target_dir().join("release").join("kernel"),
        None => kernel::resolve(kernel_path, no_build)?,
    };
    let logs = logs_dir()?;
    // Every boot carries the kernel's symbol map as the module `kernel.sym`.
    let mut modules = if dry_run { modules } else { modules::with_symbol_map(&elf, &modules)? };
    if firmware {
        let chips: Vec<&str> = words
            .iter()
            .filter_map(|w| w.strip_prefix("gpu="))
            .flat_map(|spec| spec.split(','))
            .filter_map(|g| g.strip_prefix("model:"))
            .collect();
        let chips = if chips.is_empty() { vec!["gh100"] } else { chips };
        modules.extend(modules::firmware_modules(&chips)?);
    }
    if app && !dry_run {
        match &app_crate {
            Some(a) => modules.extend(app_crate::modules(a)?),
            None => modules.extend(payloads::modules()?),
        }
    }
    let boot = if use_iso || uefi {
        let image = iso::default_path("run")?;
        if !dry_run {
            iso::build(&elf, &cmdline, &modules, &image)?;
        }
        if uefi {
            Boot::IsoUefi { iso: image, firmware: UefiFirmware::prepare(&logs.join("run.ovmf-vars.fd"))? }
        } else {
            Boot::IsoBios { iso: image }
        }
    } else {
        // PVH loaders take one module: pack them all into a cpio archive.
        let initrd = if modules.is_empty() || dry_run { None } else { Some(modules::pvh_initrd(&modules, "run")?) };
        Boot::Pvh { kernel: elf, cmdline, initrd }
    };

    let log = logs.join("run.log");
    let mut vm = Vm::new(machine, boot, Serial::Terminal { log: log.clone() });
    vm.memory = memory;
    vm.cpus = cpus;
    vm.cpu = cpu;
    vm.kvm = kvm;
    vm.vfio = vfio;
    vm.extra = extra;
    let mut cmd = vm.command();
    if dry_run {
        println!("{}", util::command_line(&cmd));
        return Ok(ExitCode::SUCCESS);
    }
    qemu::check_installed()?;
    qemu::preflight_passthrough(&vm)?;
    cmd.stdin(Stdio::inherit()).stdout(Stdio::inherit()).stderr(Stdio::inherit());
    eprintln!("xtask: {}", util::command_line(&cmd));
    eprintln!("xtask: serial on this terminal and in {}; Ctrl-A x quits QEMU", display_path(&log));
    let mut qemu = QemuProcess::spawn(cmd)?;
    let status = qemu.wait_until(timeout.map(|t| Instant::now() + t))?;
    drop(qemu);
    save_timeline(&log);
    match status {
        None => {
            eprintln!("\nxtask: timed out after {} s; QEMU stopped", timeout.unwrap_or_default().as_secs());
            Ok(ExitCode::from(124))
        }
        Some(status) => match klog::describe_exit(status.code()) {
            Ok(()) => {
                eprintln!("\nxtask: the kernel reported success (QEMU exit 33)");
                Ok(ExitCode::SUCCESS)
            }
            Err(why) => {
                eprintln!("\nxtask: {why}");
                Ok(ExitCode::FAILURE)
            }
        },
    }
}

/// Saves the boot timeline the serial log `log` holds next to it and prints its last phase as a
/// table. A log the timeline cannot be read from is said so, not fatal: the run's verdict is
/// QEMU's exit status.
fn save_timeline(log: &std::path::Path) {
    let text = match std::fs::read(log) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            eprintln!("xtask: no timeline: cannot read {}: {e}", display_path(log));
            return;
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    match timeline::save(log, lines.iter().copied()) {
        Ok(Some(path)) => {
            if let Ok(phases) = timeline::phases(lines.iter().copied()) {
                if let Some(last) = phases.last() {
                    eprint!("\n{}", timeline::table(last));
                }
            }
            eprintln!("xtask: boot timeline in {}", display_path(&path));
        }
        Ok(None) => eprintln!("xtask: the kernel printed no boot timeline"),
        Err(e) => eprintln!("xtask: the boot timeline in {} is unreadable: {e}", display_path(log)),
    }
}

/// The suite's options; the kernel is resolved (maybe built) later, once earlier steps ran.
/// Returns None when `--list` asked only for the case names (printed here).
fn suite_options(args: &mut Args) -> Result<Option<(suite::Options, bool)>> {
    let only = args.values("--only")?;
    let pci_check = !args.flag("--no-pci-check");
    let timeout = args.number::<u64>("--timeout")?.map(Duration::from_secs);
    let append = args.values("--append")?.join(" ");
    let kernel_path = args.value("--kernel")?;
    let no_build = args.flag("--no-build");
    if args.flag("--list") {
        for case in suite::all_cases() {
            println!("{}", case.name);
        }
        return Ok(None);
    }
    let opts = suite::Options {
        kernel: kernel_path.map(Into::into).unwrap_or_default(),
        append,
        pci_check,
        timeout,
        only,
        log_prefix: String::new(),
        fake_ktests: false,
    };
    Ok(Some((opts, no_build)))
}

fn resolve_suite_kernel(opts: &mut suite::Options, no_build: bool) -> Result<()> {
    let explicit = (!opts.kernel.as_os_str().is_empty()).then(|| opts.kernel.to_string_lossy().into_owned());
    opts.kernel = kernel::resolve(explicit, no_build)?;
    Ok(())
}

fn cmd_qemu_suite(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    let Some((mut opts, no_build)) = suite_options(&mut args)? else {
        return Ok(());
    };
    args.finish()?;
    resolve_suite_kernel(&mut opts, no_build)?;
    suite::run(&opts).map(|_| ())
}

fn cmd_test(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    let Some((mut opts, no_build)) = suite_options(&mut args)? else {
        return Ok(());
    };
    args.finish()?;

    println!("== host tools");
    deps::ensure(&[])?;
    let fetch = workspace_root().join("scripts").join("fetch-real-data.sh");
    if fetch.is_file() {
        println!("== real test data");
        run_status(std::process::Command::new("bash").arg(&fetch).current_dir(workspace_root()))?;
    }
    let cuda_tools = workspace_root().join("scripts").join("fetch-cuda-tools.sh");
    if cuda_tools.is_file() {
        println!("== NVIDIA's PTX assembler and fatbin tools (PyPI wheels, for payload tests)");
        run_status(std::process::Command::new("bash").arg(&cuda_tools).current_dir(workspace_root()))?;
    }
    // What this run could not check, repeated in the summary at the end.
    let mut not_checked: Vec<String> = Vec::new();
    let rustfmt = cargo().args(["fmt", "--version"]).output().is_ok_and(|o| o.status.success());
    if rustfmt {
        println!("== cargo fmt --all --check (rustfmt.toml)");
        run_status(cargo().args(["fmt", "--all", "--check"]))?;
    } else {
        let why = "formatting NOT checked: rustfmt is not installed (rustup component add rustfmt)";
        println!("== SKIPPED: {why}");
        not_checked.push(why.to_string());
    }
    let clippy = cargo().args(["clippy", "--version"]).output().is_ok_and(|o| o.status.success());
    if clippy {
        println!("== cargo clippy --workspace --all-targets -- -D warnings");
        run_status(cargo().args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))?;
        // The kernel binary needs the `image` feature, which workspace builds leave out.
        println!("== cargo clippy -p kernel --release --features image --bin kernel -- -D warnings");
        run_status(cargo().args([
            "clippy",
            "-p",
            "kernel",
            "--release",
            "--features",
            "image",
            "--bin",
            "kernel",
            "--",
            "-D",
            "warnings",
        ]))?;
    } else {
        let why = "lints NOT checked: clippy is not installed (rustup component add clippy)";
        println!("== SKIPPED: {why}");
        not_checked.push(why.to_string());
    }
    println!("== cargo test --workspace");
    // Tests that cannot check what they exist for record why (tests::skips); the summary lists
    // each one. Facts found only in trees no package carries (Hopper's QMD V04_00, the Blackwell
    // facts neither Debian's linux-source nor tinygrad holds) are such a skip, each named, unless
    // a developer supplied those trees (fetch-real-data.sh).
    let skips = util::target_dir().join("test-skips");
    let _ = std::fs::remove_dir_all(&skips);
    run_status(cargo().args(["test", "--workspace"]))?;
    not_checked.extend(recorded_skips(&skips));
    println!(
        "== fuzzing: every target for {FUZZ_SECONDS_IN_TEST} s (cargo xtask fuzz --seconds {FUZZ_SECONDS_IN_TEST})"
    );
    let fuzzed = fuzz::run(&fuzz::Options { seconds: FUZZ_SECONDS_IN_TEST, targets: Vec::new() })?;
    not_checked.extend(fuzzed.missing_seeds.iter().map(|m| format!("fuzz seeds missing: {m}")));
    println!("== cargo xtask selftest: the QEMU harness on its fake kernel");
    not_checked.extend(selftest(Vec::new())?.into_iter().map(|s| format!("selftest: {s}")));
    println!("== QEMU suite");
    resolve_suite_kernel(&mut opts, no_build)?;
    let result = suite::run(&opts).map(|skips| not_checked.extend(skips));
    let result = result.and_then(|()| {
        println!("== your own application: the README's `{}`, word for word", app_crate::README_SECTION);
        app_crate::follow_readme()
    });
    if !not_checked.is_empty() {
        println!("== summary: {} check(s) SKIPPED in this run:", not_checked.len());
        for why in &not_checked {
            println!("==   SKIPPED: {why}");
        }
    }
    result
}

fn cmd_bench_boot(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    let runs = args.number::<usize>("--runs")?.unwrap_or(5);
    let machine = match args.value("--machine")? {
        Some(name) => Machine::parse(&name)?,
        None => Machine::Q35,
    };
    let append = args.values("--append")?;
    let memory = args.value("--mem")?.unwrap_or_else(|| "512M".into());
    let cpus = args.number::<u32>("--cpus")?.unwrap_or(1);
    let timeout = Duration::from_secs(args.number::<u64>("--timeout")?.unwrap_or(120));
    let kernel_path = args.value("--kernel")?;
    let no_build = args.flag("--no-build");
    let extra = args.finish()?;
    let cmdline = if append.is_empty() { "test".to_string() } else { append.join(" ") };
    let kernel = kernel::resolve(kernel_path, no_build)?;
    bench::run(&bench::Options { kernel, runs, machine, cmdline, memory, cpus, timeout, extra })
}

fn cmd_bench_vs_linux(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    let runs = args.number::<usize>("--runs")?.unwrap_or(5);
    let timeout = Duration::from_secs(args.number::<u64>("--timeout")?.unwrap_or(180));
    let kernel_path = args.value("--kernel")?;
    let no_build = args.flag("--no-build");
    args.finish()?;
    let kernel = kernel::resolve(kernel_path, no_build)?;
    bench_linux::run(&bench_linux::Options { kernel, runs, timeout })
}

/// Runs every benchmark behind a figure the README quotes, printing each figure.
fn cmd_bench(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    args.finish()?;
    println!("== unified memory: faults per MiB of a sequential stream, thrashing ping-pong");
    run_status(cargo().args([
        "test",
        "-p",
        "uvm",
        "--release",
        "--lib",
        "--",
        "--nocapture",
        "--test-threads=1",
        "prefetch_cuts_the_faults",
        "ping_pongs",
    ]))?;
    println!("== unified memory: 4x oversubscribed throughput against the same work fitting in VRAM (median of 5)");
    run_status(
        cargo()
            .args([
                "test",
                "--release",
                "-p",
                "tests",
                "--test",
                "uvm_patterns",
                "--",
                "--nocapture",
                "--test-threads=1",
                "four_times_oversubscribed_work_against_the_same_work_fitting_in_vram",
            ])
            .env("UVM_BENCH_RUNS", "5"),
    )?;
    println!("== unified memory: instructions per serviced fault at batch 256 (callgrind)");
    run_status(
        std::process::Command::new("bash")
            .arg(workspace_root().join("scripts").join("bench-uvm-faults.sh"))
            .current_dir(workspace_root()),
    )?;
    println!("== kernel launch and GPFIFO submission: instructions each (callgrind)");
    run_status(
        std::process::Command::new("bash")
            .arg(workspace_root().join("scripts").join("bench-launch-callgrind.sh"))
            .current_dir(workspace_root()),
    )?;
    println!("== kernel launch and GPFIFO submission cost, PTX interpreter rate and its ratio to native");
    for (test, filter) in [
        ("compute", "launch_cost"),
        ("channels", "submission_cost"),
        ("ptx_model", "bench_matmul"),
        ("ptx_model", "ptx_model_against_native"),
    ] {
        run_status(cargo().args(["test", "--release", "-p", "tests", "--test", test, "--", "--nocapture", filter]))?;
    }
    println!("== fuzzing: executions of every target in {FUZZ_SECONDS_IN_TEST} s");
    let fuzzed = fuzz::run(&fuzz::Options { seconds: FUZZ_SECONDS_IN_TEST, targets: Vec::new() })?;
    for o in &fuzzed.outcomes {
        println!("bench fuzz {}: {} execs in {FUZZ_SECONDS_IN_TEST} s", o.target, o.execs);
    }
    println!("== boot (QEMU, PVH)");
    cmd_bench_boot(Args::new(std::iter::empty::<String>()))?;
    println!("== boot against Debian's Linux under the same QEMU (medians of 5)");
    cmd_bench_vs_linux(Args::new(std::iter::empty::<String>()))
}

/// The skips the tests recorded under `dir` (`tests::skips::record`), sorted.
fn recorded_skips(dir: &std::path::Path) -> Vec<String> {
    let mut files: Vec<_> = std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    files.sort();
    files.iter().filter_map(|f| std::fs::read_to_string(f).ok()).map(|t| format!("test {}", t.trim())).collect()
}

/// Seconds each fuzz target runs in `cargo xtask test`.
const FUZZ_SECONDS_IN_TEST: u64 = 10;

fn cmd_fuzz(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    let seconds = args.number::<u64>("--seconds")?.unwrap_or(60);
    let targets = args.positionals();
    args.finish()?;
    let fuzzed = fuzz::run(&fuzz::Options { seconds, targets })?;
    for m in &fuzzed.missing_seeds {
        println!("fuzz: SKIPPED seeds: {m}");
    }
    Ok(())
}

/// Checks the harness itself on the fake kernel: every suite case must pass, and a kernel that
/// reports a failing test must fail its case.
fn cmd_selftest(mut args: Args) -> Result<()> {
    if wants_help(&mut args) {
        print!("{USAGE}");
        return Ok(());
    }
    let only = args.values("--only")?;
    args.finish()?;
    for skip in selftest(only)? {
        println!("selftest: SKIPPED {skip}");
    }
    Ok(())
}

/// Every case a failing `opts` selects must fail, each for the reason `because` names.
fn expect_failure(opts: &suite::Options, because: &str, what: &str) -> Result<()> {
    let outcomes = suite::run_outcomes(opts)?;
    let wrong: Vec<String> = outcomes
        .iter()
        .filter(|(_, o)| !matches!(o, suite::Outcome::Fail(why) if why.contains(because)))
        .map(|(name, o)| format!("{name}: {o:?}"))
        .collect();
    if outcomes.is_empty() || !wrong.is_empty() {
        return Err(error(format!("selftest: {what} was not caught as `{because}`: {}", wrong.join("; "))));
    }
    println!("selftest: ok, {what} was caught");
    Ok(())
}

/// The selftest; returns the skips of its suite run (cases this QEMU cannot run).
fn selftest(only: Vec<String>) -> Result<Vec<String>> {
    let fake = kernel::build_fake()?;
    let opts = suite::Options {
        kernel: fake.clone(),
        append: String::new(),
        pci_check: true,
        timeout: None,
        only,
        log_prefix: "selftest-".into(),
        fake_ktests: true,
    };
    let skips = suite::run(&opts)?;

    println!("selftest: a kernel that reports a failed test must fail its case");
    let failing_one = suite::Options {
        append: "fake-fail".into(),
        only: vec!["pvh-pc".into()],
        log_prefix: "selftest-fail-".into(),
        ..opts
    };
    expect_failure(&failing_one, "in-kernel test(s) failed: fake::pci_scan", "a failing test")?;

    println!("selftest: a kernel that reports a PCI function QEMU does not have must fail its case");
    let phantom_pci = suite::Options {
        append: "fake-pci-extra".into(),
        only: vec!["pvh-q35-root-port".into()],
        log_prefix: "selftest-fail-".into(),
        ..failing_one
    };
    expect_failure(&phantom_pci, "PCI mismatch: kernel reported, QEMU does not have", "a phantom PCI function")?;

    println!("selftest: a kernel that does not run a ktest its case exists for must fail its case");
    let missing_ktest = suite::Options {
        append: String::new(),
        only: vec!["pvh-q35-no-hpet".into()],
        fake_ktests: false,
        ..phantom_pci
    };
    expect_failure(&missing_ktest, "which this case exists for, did not run", "a ktest that did not run")?;

    println!("selftest: a kernel that boots without the ACPI tables the machine has must fail its case");
    let no_acpi = suite::Options {
        append: "fake-no-acpi".into(),
        only: vec!["pvh-q35-root-port".into()],
        fake_ktests: true,
        ..missing_ktest
    };
    expect_failure(&no_acpi, "the machine has ACPI tables but the kernel booted without them", "booting without ACPI")?;

    bench::run(&bench::Options {
        kernel: fake,
        runs: 3,
        machine: Machine::Q35,
        cmdline: "test".into(),
        memory: "512M".into(),
        cpus: 1,
        timeout: Duration::from_secs(60),
        extra: vec![],
    })?;
    println!("selftest: passed");
    Ok(skips)
}
