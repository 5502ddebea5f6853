//! `nvtool run`: runs one kernel on a model GPU from the host, the way the unikernel would on
//! the model: GSP-RM boots with the real firmware (`target/real-data`, or `NVGPU_REAL_DATA`), the
//! application runtime opens the GPU, loads the payload (PTX, cubin or fatbin: the model runs
//! the PTX), fills device buffers from files, launches and writes the outputs back to files.
//!
//! ```text
//! nvtool run PAYLOAD --kernel NAME --grid X,Y,Z --block X,Y,Z [--shared BYTES] [--chip gh100]
//!            [--arg u32:7] [--arg i32:-1] [--arg u64:..] [--arg i64:-3] [--arg f32:2.5]
//!            [--arg f64:0.1] [--arg in:FILE] [--arg out:BYTES:FILE] [--arg inout:FILE:OUTFILE]
//!            [--arg managed:FILE] [--arg managed-out:BYTES:FILE] [--arg managed-inout:FILE:OUTFILE]
//!            [--vram MIB] [--prefetch on|off] [--stats]
//! ```
//! Arguments go to the kernel in order. Exit status 0 when the kernel ran and every output was
//! written; 1 with one line of reason otherwise (a fatal GPU fault: `nvtool run: fatal GPU fault
//! at 0x... (write): ...`); 2 on a usage error.
//!
//! Unified memory (`uvm::runtime`): `managed:FILE` is a managed buffer the CPU fills from FILE,
//! `managed-out:BYTES:FILE` a zeroed one written to FILE afterwards, `managed-inout:FILE:OUTFILE`
//! both. The kernel faults its pages in (replayable faults, serviced and replayed); the outputs
//! are read back by the CPU (migrated back). `--vram MIB` is the model GPU's VRAM available to
//! managed memory (less than the working set runs oversubscribed: evictions), `--prefetch`
//! turns UVM's prefetch heuristic on (default) or off, and `--stats` prints the context's
//! statistics as one JSON object on the last line of stdout, with the keys `gpu_faults`,
//! `fault_batches`, `replays`, `migrated_to_gpu_bytes`, `migrated_to_cpu_bytes`,
//! `prefetched_pages`, `evictions`, `thrashing_events`, `cancels`.

use std::path::PathBuf;
use std::process::ExitCode;

use nvgpu::chip::Chipset;
use nvgpu::runtime::{Args, DeviceBuffer, Gpu, GpuConfig, LaunchConfig, Module, StreamKind};
use sim::ModelConfig;
use uvm::runtime::{ManagedConfig, UnifiedMemory};

pub const USAGE: &str = "nvtool run PAYLOAD --kernel NAME --grid X,Y,Z --block X,Y,Z [--shared BYTES] [--chip tu102|ga100|ga102|ad102|gh100] [--arg KIND:VALUE]... [--vram MIB] [--prefetch on|off] [--stats]";

/// One kernel argument as given on the command line.
#[derive(Clone, Debug, PartialEq)]
enum Arg {
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    /// A device buffer initialised from a file.
    In(PathBuf),
    /// A zeroed device buffer of this many bytes, written to the file afterwards.
    Out(usize, PathBuf),
    /// A device buffer initialised from the first file, written to the second afterwards.
    InOut(PathBuf, PathBuf),
    /// A managed buffer initialised from a file.
    Managed(PathBuf),
    /// A zeroed managed buffer of this many bytes, written to the file afterwards.
    ManagedOut(usize, PathBuf),
    /// A managed buffer initialised from the first file, written to the second afterwards.
    ManagedInOut(PathBuf, PathBuf),
}

impl Arg {
    fn is_managed(&self) -> bool {
        matches!(self, Arg::Managed(_) | Arg::ManagedOut(..) | Arg::ManagedInOut(..))
    }
}

#[derive(Debug, PartialEq)]
struct Request {
    payload: PathBuf,
    kernel: String,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    chip: Chipset,
    args: Vec<Arg>,
    /// `--vram MIB`.
    vram_mib: Option<u64>,
    /// `--prefetch on|off`.
    prefetch: bool,
    /// `--stats`.
    stats: bool,
}

fn dims(what: &str, v: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = v.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("{what} takes X[,Y[,Z]], got '{v}'"));
    }
    let mut out = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p.trim().parse().map_err(|_| format!("{what}: '{p}' is not a number"))?;
        if out[i] == 0 {
            return Err(format!("{what}: dimensions must be at least 1"));
        }
    }
    Ok(out)
}

fn chip(name: &str) -> Result<Chipset, String> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "tu102" => Chipset::TU102,
        "ga100" => Chipset::GA100,
        "ga102" => Chipset::GA102,
        "ad102" => Chipset::AD102,
        "gh100" => Chipset::GH100,
        other => return Err(format!("unknown chip '{other}' (tu102, ga100, ga102, ad102, gh100)")),
    })
}

fn arg(spec: &str) -> Result<Arg, String> {
    let (kind, value) = spec.split_once(':').ok_or_else(|| format!("--arg '{spec}': expected KIND:VALUE"))?;
    let bad = |what: &str| format!("--arg '{spec}': {what}");
    Ok(match kind {
        "u32" => Arg::U32(value.parse().map_err(|_| bad("not a u32"))?),
        "i32" => Arg::I32(value.parse().map_err(|_| bad("not an i32"))?),
        "u64" => Arg::U64(value.parse().map_err(|_| bad("not a u64"))?),
        "i64" => Arg::I64(value.parse().map_err(|_| bad("not an i64"))?),
        "f32" => Arg::F32(value.parse().map_err(|_| bad("not an f32"))?),
        "f64" => Arg::F64(value.parse().map_err(|_| bad("not an f64"))?),
        "in" if !value.is_empty() => Arg::In(value.into()),
        "out" => {
            let (bytes, file) = value.split_once(':').ok_or_else(|| bad("expected out:BYTES:FILE"))?;
            let bytes = bytes.parse().map_err(|_| bad("BYTES is not a number"))?;
            if bytes == 0 || file.is_empty() {
                return Err(bad("out needs a size above 0 and a file"));
            }
            Arg::Out(bytes, file.into())
        }
        "inout" => {
            let (a, b) = value.split_once(':').ok_or_else(|| bad("expected inout:FILE:OUTFILE"))?;
            if a.is_empty() || b.is_empty() {
                return Err(bad("inout needs two files"));
            }
            Arg::InOut(a.into(), b.into())
        }
        "managed" if !value.is_empty() => Arg::Managed(value.into()),
        "managed-out" => {
            let (bytes, file) = value.split_once(':').ok_or_else(|| bad("expected managed-out:BYTES:FILE"))?;
            let bytes = bytes.parse().map_err(|_| bad("BYTES is not a number"))?;
            if bytes == 0 || file.is_empty() {
                return Err(bad("managed-out needs a size above 0 and a file"));
            }
            Arg::ManagedOut(bytes, file.into())
        }
        "managed-inout" => {
            let (a, b) = value.split_once(':').ok_or_else(|| bad("expected managed-inout:FILE:OUTFILE"))?;
            if a.is_empty() || b.is_empty() {
                return Err(bad("managed-inout needs two files"));
            }
            Arg::ManagedInOut(a.into(), b.into())
        }
        _ => {
            return Err(bad(
                "kind must be u32, i32, u64, i64, f32, f64, in, out, inout, managed, managed-out or managed-inout",
            ))
        }
    })
}

fn parse(args: &[String]) -> Result<Request, String> {
    let mut payload = None;
    let (mut kernel, mut grid, mut block, mut shared, mut chipset) = (None, None, None, 0u32, Chipset::GH100);
    let (mut vram_mib, mut prefetch, mut stats) = (None, true, false);
    let mut kernel_args = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--kernel" => kernel = Some(value("--kernel")?),
            "--grid" => grid = Some(dims("--grid", &value("--grid")?)?),
            "--block" => block = Some(dims("--block", &value("--block")?)?),
            "--shared" => shared = value("--shared")?.parse().map_err(|_| "--shared: not a number".to_string())?,
            "--chip" => chipset = chip(&value("--chip")?)?,
            "--arg" => kernel_args.push(arg(&value("--arg")?)?),
            "--vram" => {
                let v: u64 = value("--vram")?.parse().map_err(|_| "--vram: not a number of MiB".to_string())?;
                if v < 2 {
                    return Err("--vram: at least 2 MiB (one 2 MiB root chunk)".into());
                }
                vram_mib = Some(v);
            }
            "--prefetch" => {
                prefetch = match value("--prefetch")?.as_str() {
                    "on" => true,
                    "off" => false,
                    other => return Err(format!("--prefetch takes on or off, got '{other}'")),
                }
            }
            "--stats" => stats = true,
            s if s.starts_with("--") => return Err(format!("unknown option '{s}'")),
            s => {
                if payload.replace(PathBuf::from(s)).is_some() {
                    return Err("more than one PAYLOAD given".into());
                }
            }
        }
    }
    Ok(Request {
        payload: payload.ok_or("no PAYLOAD given")?,
        kernel: kernel.ok_or("--kernel is required")?,
        grid: grid.ok_or("--grid is required")?,
        block: block.ok_or("--block is required")?,
        shared,
        chip: chipset,
        args: kernel_args,
        vram_mib,
        prefetch,
        stats,
    })
}

pub fn run(args: &[String]) -> ExitCode {
    let request = match parse(args) {
        Ok(r) => r,
        Err(e) => return crate::usage_error_with(&e, USAGE),
    };
    match execute(&request) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("nvtool run: {e}");
            ExitCode::from(1)
        }
    }
}

fn read(path: &PathBuf) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn execute(r: &Request) -> Result<String, String> {
    let payload = read(&r.payload)?;
    // Inputs first: a missing file fails before the GPU boots.
    let mut inputs: Vec<Option<Vec<u8>>> = Vec::new();
    for a in &r.args {
        inputs.push(match a {
            Arg::In(f) | Arg::InOut(f, _) | Arg::Managed(f) | Arg::ManagedInOut(f, _) => Some(read(f)?),
            _ => None,
        });
    }
    let config = ModelConfig::for_chipset(r.chip);
    let root = sim::host_boot::data_root();
    sim::host_boot::with_booted(config, &root, |model, arena, clock, boot| -> Result<String, String> {
        let info = *boot.static_info().ok_or("GSP-RM gave no static information")?;
        let rpc = boot.rpc().ok_or("GSP-RM is not running")?;
        let unified = r.stats || r.vram_mib.is_some() || r.args.iter().any(Arg::is_managed);
        let mut gpu = Gpu::new(
            rpc,
            model,
            arena,
            clock,
            &info,
            r.chip,
            GpuConfig { runs_ptx: true, timeout_ms: 600_000, page_faulting: unified, ..GpuConfig::default() },
        )
        .map_err(|e| format!("opening the model GPU: {e}"))?;
        let mut um = if unified {
            let config = ManagedConfig {
                vram_bytes: r.vram_mib.map_or(ManagedConfig::default().vram_bytes, |m| m << 20),
                prefetch: r.prefetch,
                ..ManagedConfig::default()
            };
            let internal = nvgpu::rm::InternalSubdevice::from_static_info(&info);
            Some(UnifiedMemory::new(&mut gpu, rpc, internal, config).map_err(|e| format!("managed memory: {e}"))?)
        } else {
            None
        };
        let mut managed: Vec<uvm::runtime::ManagedBuffer> = Vec::new();
        let module = Module::load(&mut gpu, &payload).map_err(|e| format!("{}: {e}", r.payload.display()))?;
        let function = module.function(&r.kernel).map_err(|e| e.to_string())?;
        let mut buffers: Vec<DeviceBuffer<u8>> = Vec::new();
        let mut kernel_args = Args::new();
        for (a, input) in r.args.iter().zip(&inputs) {
            kernel_args = match a {
                Arg::U32(v) => kernel_args.u32(*v),
                Arg::I32(v) => kernel_args.i32(*v),
                Arg::U64(v) => kernel_args.u64(*v),
                Arg::I64(v) => kernel_args.i64(*v),
                Arg::F32(v) => kernel_args.f32(*v),
                Arg::F64(v) => kernel_args.f64(*v),
                Arg::Managed(_) | Arg::ManagedOut(..) | Arg::ManagedInOut(..) => {
                    let um = um.as_mut().ok_or("managed memory is not set up")?;
                    let (bytes, init) = match (a, input) {
                        (Arg::ManagedOut(bytes, _), _) => (*bytes, None),
                        (_, Some(data)) if !data.is_empty() => (data.len(), Some(data)),
                        _ => return Err(format!("{a:?}: an empty input file")),
                    };
                    let buffer = um.alloc_managed(&mut gpu, bytes).map_err(|e| format!("managed buffer: {e}"))?;
                    // A managed-out buffer stays resident nowhere: UVM zero-fills it on first touch.
                    if let Some(data) = init {
                        um.write(&mut gpu, buffer.va, data).map_err(|e| format!("filling a managed buffer: {e}"))?;
                    }
                    managed.push(buffer);
                    kernel_args.device_ptr(buffer.va)
                }
                Arg::In(_) | Arg::InOut(..) | Arg::Out(..) => {
                    let buffer = match (a, input) {
                        (Arg::Out(bytes, _), _) => {
                            let b = gpu.alloc::<u8>(*bytes).map_err(|e| format!("device buffer: {e}"))?;
                            gpu.memset_d8(&b, 0).map_err(|e| format!("zeroing a buffer: {e}"))?;
                            b
                        }
                        (_, Some(bytes)) if !bytes.is_empty() => {
                            gpu.alloc_from(bytes).map_err(|e| format!("device buffer: {e}"))?
                        }
                        _ => return Err(format!("{a:?}: an empty input file")),
                    };
                    let next = kernel_args.ptr(&buffer);
                    buffers.push(buffer);
                    next
                }
            };
        }
        let stream = gpu.create_stream(rpc, StreamKind::Compute).map_err(|e| format!("compute stream: {e}"))?;
        let cfg = LaunchConfig { grid: r.grid, block: r.block, shared_bytes: r.shared };
        stream.launch(&mut gpu, &function, cfg, &kernel_args).map_err(|e| format!("launch: {e}"))?;
        match um.as_mut() {
            Some(um) => um.synchronize(&mut gpu, &stream).map_err(|e| match e {
                fatal @ uvm::runtime::ManagedError::FatalFault { .. } => format!("{}: {fatal}", r.kernel),
                e => format!("{} did not complete: {e}", r.kernel),
            })?,
            None => stream.synchronize(&mut gpu).map_err(|e| format!("{} did not complete: {e}", r.kernel))?,
        }
        let mut written = Vec::new();
        let mut buffer_index = 0;
        let mut managed_index = 0;
        for a in &r.args {
            if a.is_managed() {
                let buffer = managed[managed_index];
                managed_index += 1;
                let target = match a {
                    Arg::ManagedOut(_, f) | Arg::ManagedInOut(_, f) => f,
                    _ => continue,
                };
                let um = um.as_mut().ok_or("managed memory is not set up")?;
                let mut bytes = vec![0u8; buffer.len];
                um.read(&mut gpu, buffer.va, &mut bytes).map_err(|e| format!("reading back: {e}"))?;
                std::fs::write(target, &bytes).map_err(|e| format!("cannot write {}: {e}", target.display()))?;
                written.push(format!("{} ({} bytes)", target.display(), bytes.len()));
                continue;
            }
            if !matches!(a, Arg::In(_) | Arg::InOut(..) | Arg::Out(..)) {
                continue;
            }
            let buffer = &buffers[buffer_index];
            buffer_index += 1;
            let target = match a {
                Arg::Out(_, f) | Arg::InOut(_, f) => f,
                _ => continue,
            };
            let mut bytes = vec![0u8; buffer.len()];
            gpu.copy_from_device(&mut bytes, buffer).map_err(|e| format!("reading back: {e}"))?;
            std::fs::write(target, &bytes).map_err(|e| format!("cannot write {}: {e}", target.display()))?;
            written.push(format!("{} ({} bytes)", target.display(), bytes.len()));
        }
        let mut summary = format!(
            "{} ran on a model {:?}: grid {:?}, block {:?}{}",
            r.kernel,
            r.chip,
            r.grid,
            r.block,
            if written.is_empty() { String::new() } else { format!("; wrote {}", written.join(", ")) }
        );
        if let Some(um) = um.take() {
            if r.stats {
                summary.push('\n');
                summary.push_str(&stats_json(&um.stats()));
            }
            let _ = um.destroy(&mut gpu, rpc);
        }
        let _ = gpu.destroy_stream(rpc, stream);
        let _ = gpu.destroy(rpc);
        Ok(summary)
    })?
}

/// The statistics line of `--stats`: one JSON object, the issue's keys in its order.
fn stats_json(s: &uvm::service::UvmStats) -> String {
    let v = serde_json::json!({
        "gpu_faults": s.gpu_faults,
        "fault_batches": s.fault_batches,
        "replays": s.replays,
        "migrated_to_gpu_bytes": s.migrated_to_gpu_bytes,
        "migrated_to_cpu_bytes": s.migrated_to_cpu_bytes,
        "prefetched_pages": s.prefetched_pages,
        "evictions": s.evictions,
        "thrashing_events": s.thrashing_events,
        "cancels": s.cancels,
    });
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn arguments_parse_in_order_with_clear_errors() {
        let r = parse(&s(&[
            "k.ptx",
            "--kernel",
            "saxpy",
            "--grid",
            "4",
            "--block",
            "128,2",
            "--chip",
            "ad102",
            "--arg",
            "u32:7",
            "--arg",
            "i64:-3",
            "--arg",
            "f32:2.5",
            "--arg",
            "f64:0.1",
            "--arg",
            "in:x.bin",
            "--arg",
            "out:64:y.bin",
            "--arg",
            "inout:a:b",
        ]))
        .unwrap();
        assert_eq!(r.grid, [4, 1, 1]);
        assert_eq!(r.block, [128, 2, 1]);
        assert_eq!(r.chip, Chipset::AD102);
        assert_eq!(
            r.args,
            [
                Arg::U32(7),
                Arg::I64(-3),
                Arg::F32(2.5),
                Arg::F64(0.1),
                Arg::In("x.bin".into()),
                Arg::Out(64, "y.bin".into()),
                Arg::InOut("a".into(), "b".into())
            ]
        );
        for (bad, why) in [
            (&["k.ptx", "--grid", "1", "--block", "1"][..], "--kernel"),
            (&["k.ptx", "--kernel", "k", "--grid", "0", "--block", "1"][..], "at least 1"),
            (&["k.ptx", "--kernel", "k", "--grid", "1", "--block", "1", "--arg", "u8:1"][..], "kind must be"),
            (&["k.ptx", "--kernel", "k", "--grid", "1", "--block", "1", "--arg", "out:x:f"][..], "BYTES"),
            (&["k.ptx", "--kernel", "k", "--grid", "1", "--block", "1", "--chip", "gb100"][..], "unknown chip"),
        ] {
            let e = parse(&s(bad)).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }
}
