//! QEMU: the machine description a run asks for, its command line, and the running process.
//!
//! Every run gets `-display none -no-reboot` (a triple fault or reset ends QEMU instead of looping)
//! and `isa-debug-exit` at port 0xf4, through which the kernel ends QEMU with its verdict. The
//! serial port (COM1) goes to the terminal, to a file, or to a unix socket that xtask listens on
//! (QEMU connects as the client at startup, so nothing the kernel prints is lost and the harness
//! can answer on the same connection). QMP likewise connects to a socket xtask listens on.

use std::fs;
use std::io::Read;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::util::{display_path, error, on_path, Context, Result};

pub const QEMU: &str = "qemu-system-x86_64";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Machine {
    /// Q35 chipset: PCIe, ECAM (MCFG), AHCI.
    Q35,
    /// i440FX chipset: conventional PCI, no MCFG (configuration through ports 0xCF8/0xCFC).
    Pc,
}

impl Machine {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "q35" => Ok(Machine::Q35),
            "pc" | "i440fx" => Ok(Machine::Pc),
            _ => Err(error(format!("unknown machine '{name}' (q35 or pc)"))),
        }
    }

    pub fn qemu_name(self) -> &'static str {
        match self {
            Machine::Q35 => "q35",
            Machine::Pc => "pc",
        }
    }
}

/// How the kernel is loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Boot {
    /// QEMU's `-kernel` loads the ELF by its PVH note (SeaBIOS runs first and sets up PCI).
    Pvh { kernel: PathBuf, cmdline: String, initrd: Option<PathBuf> },
    /// GRUB from the ISO under SeaBIOS, kernel by Multiboot2.
    IsoBios { iso: PathBuf },
    /// GRUB from the ISO under OVMF (UEFI), kernel by Multiboot2.
    IsoUefi { iso: PathBuf, firmware: UefiFirmware },
}

/// OVMF, as the distribution ships it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UefiFirmware {
    /// Read-only code plus a private, writable copy of the variable store.
    Split { code: PathBuf, vars: PathBuf },
    /// One image with code and variables (loaded with `-bios`; variables do not persist).
    Combined(PathBuf),
}

impl UefiFirmware {
    /// Finds OVMF and gives this run its own copy of the variable store at `vars_copy`.
    pub fn prepare(vars_copy: &Path) -> Result<Self> {
        let code = Path::new("/usr/share/OVMF/OVMF_CODE_4M.fd");
        let vars = Path::new("/usr/share/OVMF/OVMF_VARS_4M.fd");
        let combined = Path::new("/usr/share/ovmf/OVMF.fd");
        if code.is_file() && vars.is_file() {
            fs::copy(vars, vars_copy)
                .with_context(|| format!("copying {} to {}", vars.display(), vars_copy.display()))?;
            return Ok(UefiFirmware::Split { code: code.to_path_buf(), vars: vars_copy.to_path_buf() });
        }
        if combined.is_file() {
            return Ok(UefiFirmware::Combined(combined.to_path_buf()));
        }
        Err(error(format!(
            "no OVMF found ({} + {}, or {}); install the 'ovmf' package (scripts/install-deps.sh)",
            code.display(),
            vars.display(),
            combined.display()
        )))
    }
}

/// Where COM1 goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Serial {
    /// The terminal (stdin and stdout), multiplexed with the QEMU monitor (Ctrl-A c; Ctrl-A x
    /// quits), and copied to a log file.
    Terminal { log: PathBuf },
    /// A file, output only.
    File(PathBuf),
    /// A unix socket that xtask listens on; QEMU connects at startup.
    Socket(PathBuf),
}

/// One virtual machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vm {
    pub machine: Machine,
    pub boot: Boot,
    /// QEMU `-m` syntax (e.g. `512M`, `4G`).
    pub memory: String,
    pub cpus: u32,
    /// `-cpu` model; QEMU's default when None.
    pub cpu: Option<String>,
    /// Use KVM (`-enable-kvm`, and `-cpu host` unless `cpu` says otherwise).
    pub kvm: bool,
    /// Host PCI functions to pass through with VFIO (`-device vfio-pci,host=BDF`); implies KVM.
    pub vfio: Vec<String>,
    pub serial: Serial,
    /// QMP: a unix socket xtask listens on.
    pub qmp: Option<PathBuf>,
    /// Appended last, as given.
    pub extra: Vec<String>,
}

impl Vm {
    pub fn new(machine: Machine, boot: Boot, serial: Serial) -> Self {
        Vm {
            machine,
            boot,
            memory: "512M".into(),
            cpus: 1,
            cpu: None,
            kvm: false,
            vfio: Vec::new(),
            serial,
            qmp: None,
            extra: Vec::new(),
        }
    }

    /// The QEMU arguments (without the program name).
    pub fn args(&self) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();

        push(&mut a, &["-machine", self.machine.qemu_name()]);
        push(&mut a, &["-m", &self.memory]);
        push(&mut a, &["-smp", &self.cpus.to_string()]);
        let kvm = self.kvm || !self.vfio.is_empty();
        if kvm {
            push(&mut a, &["-enable-kvm"]);
        } else {
            // Explicit: a QEMU installed as `qemu-kvm` would otherwise prefer KVM.
            push(&mut a, &["-accel", "tcg"]);
        }
        match (&self.cpu, kvm) {
            (Some(cpu), _) => push(&mut a, &["-cpu", cpu]),
            (None, true) => push(&mut a, &["-cpu", "host"]),
            (None, false) => {}
        }
        push(&mut a, &["-display", "none", "-no-reboot"]);
        push(&mut a, &["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]);

        match &self.boot {
            Boot::Pvh { kernel, cmdline, initrd } => {
                push(&mut a, &["-kernel", &kernel.to_string_lossy()]);
                if !cmdline.is_empty() {
                    push(&mut a, &["-append", cmdline]);
                }
                if let Some(initrd) = initrd {
                    push(&mut a, &["-initrd", &initrd.to_string_lossy()]);
                }
            }
            Boot::IsoBios { iso } => push_cdrom(&mut a, iso),
            Boot::IsoUefi { iso, firmware } => {
                match firmware {
                    UefiFirmware::Split { code, vars } => {
                        push(
                            &mut a,
                            &[
                                "-drive",
                                &format!("if=pflash,format=raw,unit=0,readonly=on,file={}", code.to_string_lossy()),
                            ],
                        );
                        push(
                            &mut a,
                            &["-drive", &format!("if=pflash,format=raw,unit=1,file={}", vars.to_string_lossy())],
                        );
                    }
                    UefiFirmware::Combined(image) => push(&mut a, &["-bios", &image.to_string_lossy()]),
                }
                push_cdrom(&mut a, iso);
            }
        }

        match &self.serial {
            Serial::Terminal { log } => {
                push(
                    &mut a,
                    &["-chardev", &format!("stdio,id=serial0,mux=on,signal=off,logfile={}", log.to_string_lossy())],
                );
                push(&mut a, &["-serial", "chardev:serial0", "-mon", "chardev=serial0,mode=readline"]);
            }
            Serial::File(path) => {
                push(&mut a, &["-serial", &format!("file:{}", path.to_string_lossy()), "-monitor", "none"]);
            }
            Serial::Socket(path) => {
                push(&mut a, &["-chardev", &format!("socket,id=serial0,path={}", path.to_string_lossy())]);
                push(&mut a, &["-serial", "chardev:serial0", "-monitor", "none"]);
            }
        }
        if let Some(qmp) = &self.qmp {
            push(&mut a, &["-chardev", &format!("socket,id=qmp0,path={}", qmp.to_string_lossy())]);
            push(&mut a, &["-mon", "chardev=qmp0,mode=control"]);
        }
        for host in &self.vfio {
            push(&mut a, &["-device", &format!("vfio-pci,host={host}")]);
        }
        a.extend(self.extra.iter().cloned());
        a
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new(QEMU);
        cmd.args(self.args());
        cmd
    }
}

fn push(a: &mut Vec<String>, words: &[&str]) {
    a.extend(words.iter().map(|w| w.to_string()));
}

/// The ISO as an IDE/AHCI CD-ROM that firmware boots first (bootindex 0), before the default
/// NIC's network boot.
fn push_cdrom(a: &mut Vec<String>, iso: &Path) {
    let drive = format!("if=none,id=cdrom0,media=cdrom,readonly=on,format=raw,file={}", iso.to_string_lossy());
    push(a, &["-drive", &drive, "-device", "ide-cd,drive=cdrom0,bootindex=0"]);
}

/// A host PCI address in the full `SSSS:BB:DD.F` form sysfs uses (`BB:DD.F` means segment 0).
pub fn normalize_bdf(bdf: &str) -> Result<String> {
    let bdf = bdf.to_ascii_lowercase();
    let full = if bdf.matches(':').count() == 1 { format!("0000:{bdf}") } else { bdf };
    let bytes = full.as_bytes();
    let hex = |range: std::ops::Range<usize>| bytes.get(range).is_some_and(|b| b.iter().all(u8::is_ascii_hexdigit));
    let valid = bytes.len() == 12
        && hex(0..4)
        && bytes[4] == b':'
        && hex(5..7)
        && bytes[7] == b':'
        && hex(8..10)
        && bytes[10] == b'.'
        && (b'0'..=b'7').contains(&bytes[11]);
    if valid {
        Ok(full)
    } else {
        Err(error(format!("'{full}' is not a PCI address (SSSS:BB:DD.F or BB:DD.F)")))
    }
}

/// Before a KVM or VFIO run: is KVM there, and is each passed-through function bound to
/// vfio-pci in an IOMMU group? Each failure says what to do.
pub fn preflight_passthrough(vm: &Vm) -> Result<()> {
    if (vm.kvm || !vm.vfio.is_empty()) && !Path::new("/dev/kvm").exists() {
        return Err(error("KVM is not available here (/dev/kvm missing): --kvm and --vfio need a KVM host"));
    }
    for bdf in &vm.vfio {
        let device = Path::new("/sys/bus/pci/devices").join(bdf);
        if !device.exists() {
            return Err(error(format!("--vfio {bdf}: no such PCI function on this host (lspci -D lists them)")));
        }
        if !device.join("iommu_group").exists() {
            return Err(error(format!(
                "--vfio {bdf}: no IOMMU group; enable the IOMMU (intel_iommu=on or amd_iommu=on on the host kernel command line)"
            )));
        }
        let driver = fs::read_link(device.join("driver"))
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        if driver.as_deref() != Some("vfio-pci") {
            return Err(error(format!(
                "--vfio {bdf}: bound to {}, not vfio-pci; bind it first, e.g. `driverctl set-override {bdf} vfio-pci`",
                driver.as_deref().unwrap_or("no driver")
            )));
        }
    }
    Ok(())
}

/// Whether this QEMU has a device model (`-device help` lists it).
pub fn has_device(name: &str) -> bool {
    let Ok(out) = Command::new(QEMU).args(["-device", "help"]).output() else {
        return false;
    };
    let listing = String::from_utf8_lossy(&out.stdout);
    listing.contains(&format!("name \"{name}\""))
}

pub fn check_installed() -> Result<()> {
    if on_path(QEMU) {
        Ok(())
    } else {
        Err(error(format!("{QEMU} is not installed: run scripts/install-deps.sh")))
    }
}

// The C library's process calls; std links it already.
extern "C" {
    fn kill(pid: i32, signal: i32) -> i32;
    fn prctl(option: i32, ...) -> i32;
}
const SIGKILL: i32 = 9;
const SIGTERM: i32 = 15;
const PR_SET_PDEATHSIG: i32 = 1;

/// A running QEMU. Dropping it ends QEMU: SIGTERM (QEMU then restores the terminal), and
/// SIGKILL if it has not gone within a few seconds. QEMU also gets SIGKILL if xtask dies.
pub struct QemuProcess {
    child: Child,
    exited: Option<ExitStatus>,
}

// Two libc calls (prctl, kill) that std does not wrap: the only unsafe in the host tools.
#[allow(unsafe_code)]
impl QemuProcess {
    pub fn spawn(mut cmd: Command) -> Result<Self> {
        // SAFETY: prctl(PR_SET_PDEATHSIG) is async-signal-safe and touches no memory of ours;
        // it only asks the kernel to SIGKILL this child when the thread that spawned it exits.
        unsafe {
            cmd.pre_exec(|| {
                prctl(PR_SET_PDEATHSIG, SIGKILL as std::ffi::c_ulong);
                Ok(())
            });
        }
        let child =
            cmd.spawn().with_context(|| format!("starting {QEMU} (is it installed? scripts/install-deps.sh)"))?;
        Ok(QemuProcess { child, exited: None })
    }

    /// The exit status if QEMU has exited.
    pub fn try_wait(&mut self) -> Result<Option<ExitStatus>> {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().context("waiting for QEMU")?;
        }
        Ok(self.exited)
    }

    /// Waits for QEMU to exit, until the deadline if there is one (None: it did not exit).
    pub fn wait_until(&mut self, deadline: Option<Instant>) -> Result<Option<ExitStatus>> {
        match deadline {
            None => {
                let status = self.child.wait().context("waiting for QEMU")?;
                self.exited = Some(status);
                Ok(Some(status))
            }
            Some(deadline) => loop {
                if let Some(status) = self.try_wait()? {
                    return Ok(Some(status));
                }
                if Instant::now() >= deadline {
                    return Ok(None);
                }
                std::thread::sleep(Duration::from_millis(20));
            },
        }
    }
}

#[allow(unsafe_code)]
impl Drop for QemuProcess {
    fn drop(&mut self) {
        if matches!(self.try_wait(), Ok(Some(_))) {
            return;
        }
        let Ok(pid) = i32::try_from(self.child.id()) else {
            let _ = self.child.kill();
            let _ = self.child.wait();
            return;
        };
        // SAFETY: kill(2) on our own child, which has not been reaped (try_wait said it is
        // running), so the pid cannot have been reused.
        unsafe { kill(pid, SIGTERM) };
        let grace = Instant::now() + Duration::from_secs(3);
        if !matches!(self.wait_until(Some(grace)), Ok(Some(_))) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A unix socket path that QEMU connects to, removed when dropped.
pub struct SocketListener {
    listener: UnixListener,
    path: PathBuf,
}

impl SocketListener {
    /// Listens at a fresh path in the temporary folder (unix socket paths are limited to 107
    /// bytes, so not under a possibly deep workspace).
    pub fn bind(tag: &str) -> Result<Self> {
        let path = std::env::temp_dir().join(format!("xtask-{}-{tag}.sock", std::process::id()));
        let _ = fs::remove_file(&path);
        let listener = UnixListener::bind(&path).with_context(|| format!("listening on {}", path.display()))?;
        listener.set_nonblocking(true)?;
        Ok(SocketListener { listener, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for QEMU's connection; gives up if QEMU exits or the deadline passes.
    pub fn accept(&self, qemu: &mut QemuProcess, deadline: Instant, what: &str) -> Result<UnixStream> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    stream.set_nonblocking(false)?;
                    return Ok(stream);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(error(format!("accepting QEMU's {what} connection: {e}"))),
            }
            if let Some(status) = qemu.try_wait()? {
                return Err(error(format!("QEMU exited ({status}) before connecting its {what} socket")));
            }
            if Instant::now() >= deadline {
                return Err(error(format!("QEMU did not connect its {what} socket in time")));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for SocketListener {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Reads the serial stream on a thread: appends every byte to the log file as it comes and
/// hands complete lines (without the line end) to the receiver. The channel closes when QEMU
/// closes the connection (it exited).
pub fn spawn_serial_reader(mut stream: UnixStream, log_path: &Path) -> Result<mpsc::Receiver<String>> {
    let mut log = fs::File::create(log_path).with_context(|| format!("creating {}", display_path(log_path)))?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        use std::io::Write;
        let mut pending: Vec<u8> = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let _ = log.write_all(&buf[..n]);
            pending.extend_from_slice(&buf[..n]);
            while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                if tx.send(line_text(&line)).is_err() {
                    return;
                }
            }
        }
        if !pending.is_empty() {
            let _ = tx.send(line_text(&pending));
        }
    });
    Ok(rx)
}

fn line_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.trim_end_matches(['\n', '\r']).to_string()
}

/// The last `n` lines of a text file, for failure reports.
pub fn tail(path: &Path, n: usize) -> String {
    let Ok(bytes) = fs::read(path) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pvh() -> Boot {
        Boot::Pvh { kernel: "target/release/kernel".into(), cmdline: "test pci-handshake".into(), initrd: None }
    }

    fn joined(vm: &Vm) -> String {
        vm.args().join(" ")
    }

    #[test]
    fn pvh_with_socket_serial_and_qmp() {
        let mut vm = Vm::new(Machine::Q35, pvh(), Serial::Socket("/tmp/s.sock".into()));
        vm.qmp = Some("/tmp/q.sock".into());
        vm.extra = vec!["-device".into(), "e1000e".into()];
        let args = vm.args();
        let line = args.join(" ");
        assert!(line.starts_with("-machine q35 -m 512M -smp 1 -accel tcg -display none -no-reboot"));
        assert!(line.contains("-device isa-debug-exit,iobase=0xf4,iosize=0x04"));
        assert!(line.contains("-chardev socket,id=serial0,path=/tmp/s.sock -serial chardev:serial0 -monitor none"));
        assert!(line.contains("-chardev socket,id=qmp0,path=/tmp/q.sock -mon chardev=qmp0,mode=control"));
        assert!(line.ends_with("-device e1000e"));
        let append = args.iter().position(|a| a == "-append").unwrap();
        assert_eq!(args[append + 1], "test pci-handshake");
        assert!(!line.contains("kvm"));
    }

    #[test]
    fn uefi_iso_uses_pflash_with_a_private_vars_copy() {
        let firmware = UefiFirmware::Split { code: "/ovmf/CODE.fd".into(), vars: "/tmp/vars.fd".into() };
        let vm = Vm::new(Machine::Q35, Boot::IsoUefi { iso: "a.iso".into(), firmware }, Serial::File("s.log".into()));
        let line = joined(&vm);
        assert!(line.contains("-drive if=pflash,format=raw,unit=0,readonly=on,file=/ovmf/CODE.fd"));
        assert!(line.contains("-drive if=pflash,format=raw,unit=1,file=/tmp/vars.fd"));
        assert!(line.contains("-drive if=none,id=cdrom0,media=cdrom,readonly=on,format=raw,file=a.iso -device ide-cd,drive=cdrom0,bootindex=0"));
        assert!(line.contains("-serial file:s.log"));
        assert!(!line.contains("-kernel"));
    }

    #[test]
    fn vfio_implies_kvm_and_host_cpu() {
        let mut vm = Vm::new(Machine::Q35, pvh(), Serial::Terminal { log: "r.log".into() });
        vm.vfio = vec!["0000:41:00.0".into(), "0000:42:00.0".into()];
        let line = joined(&vm);
        assert!(line.contains("-enable-kvm -cpu host"));
        assert!(line.contains("-device vfio-pci,host=0000:41:00.0 -device vfio-pci,host=0000:42:00.0"));
        assert!(line.contains("stdio,id=serial0,mux=on,signal=off,logfile=r.log"));
    }

    #[test]
    fn pci_addresses() {
        assert_eq!(normalize_bdf("41:00.0").unwrap(), "0000:41:00.0");
        assert_eq!(normalize_bdf("0001:C1:1F.7").unwrap(), "0001:c1:1f.7");
        for bad in ["41:00", "41:00.8", "0000:41:00:0", "zz:00.0", "0000:041:00.0"] {
            assert!(normalize_bdf(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn machine_names() {
        assert_eq!(Machine::parse("pc").unwrap(), Machine::Pc);
        assert_eq!(Machine::parse("q35").unwrap(), Machine::Q35);
        assert!(Machine::parse("virt").is_err());
    }
}
