//! `nvtool run`: runs one kernel on a model GPU from the host, the way the unikernel would on
//! the model: GSP-RM boots with the real firmware (`target/real-data`, or `NVGPU_REAL_DATA`), the
//! application API (`nvrt`, through `nvrt::model`) opens the GPU, loads the payload (PTX, cubin or fatbin: the model runs
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
//! Unified memory (`nvrt`'s managed buffers): `managed:FILE` is a managed buffer the CPU fills from FILE,
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

use nvrt::model::{Chipset, ModelConfig};

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

/// An nvrt error in the words of the layer that raised it: unified memory's and the argument
/// check's own text, without the prefix [`nvrt::Error`]'s display adds.
fn reason(e: &nvrt::Error) -> String {
    match e {
        nvrt::Error::Managed(m) => m.to_string(),
        nvrt::Error::Arguments { reason, .. } => reason.clone(),
        e => e.to_string(),
    }
}

/// One kernel argument, ready to launch: scalars by value, buffers owned here until the
/// outputs are read back.
enum Launchable<'p> {
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    Device(nvrt::DeviceBuffer<'p, u8>),
    Managed(nvrt::ManagedBuffer<'p, u8>),
}

impl Launchable<'_> {
    fn kernel_arg(&self) -> &dyn nvrt::KernelArg {
        match self {
            Launchable::U32(v) => v,
            Launchable::I32(v) => v,
            Launchable::U64(v) => v,
            Launchable::I64(v) => v,
            Launchable::F32(v) => v,
            Launchable::F64(v) => v,
            Launchable::Device(b) => b,
            Launchable::Managed(b) => b,
        }
    }
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
    let mut outcome = None;
    let booted = nvrt::model::run(ModelConfig::for_chipset(r.chip), &[], "", |sys| {
        outcome = Some(on_model(r, &payload, &inputs, sys));
    });
    match (outcome, booted) {
        // The kernel's own outcome, as before: what the model refused after it (the channel a
        // fault stopped) is not reported over it.
        (Some(outcome), _) => outcome,
        (None, Err(e)) => Err(e),
        (None, Ok(_)) => Err("the model GPU did not run the request".into()),
    }
}

/// Opens the model GPU, runs the request on it and writes the outputs.
fn on_model(r: &Request, payload: &[u8], inputs: &[Option<Vec<u8>>], sys: &nvrt::System<'_>) -> Result<String, String> {
    let ctx = sys.open(0).map_err(|e| format!("opening the model GPU: {}", reason(&e)))?;
    let unified = r.stats || r.vram_mib.is_some() || r.args.iter().any(Arg::is_managed);
    if unified {
        let options = nvrt::ManagedOptions { vram_limit_bytes: r.vram_mib.map(|m| m << 20), prefetch: r.prefetch };
        // Unified memory starts here, before the module: a run with `--stats` or `--vram` and no
        // managed argument services its faults through it too.
        ctx.configure_managed(options).map_err(|e| format!("managed memory: {}", reason(&e)))?;
    }
    let module = ctx.load_module(payload).map_err(|e| format!("{}: {}", r.payload.display(), reason(&e)))?;
    let function = module.function(&r.kernel).map_err(|e| reason(&e))?;
    let mut launchables: Vec<Launchable> = Vec::new();
    for (a, input) in r.args.iter().zip(inputs) {
        launchables.push(match a {
            Arg::U32(v) => Launchable::U32(*v),
            Arg::I32(v) => Launchable::I32(*v),
            Arg::U64(v) => Launchable::U64(*v),
            Arg::I64(v) => Launchable::I64(*v),
            Arg::F32(v) => Launchable::F32(*v),
            Arg::F64(v) => Launchable::F64(*v),
            Arg::Managed(_) | Arg::ManagedOut(..) | Arg::ManagedInOut(..) => {
                let (bytes, init) = match (a, input) {
                    (Arg::ManagedOut(bytes, _), _) => (*bytes, None),
                    (_, Some(data)) if !data.is_empty() => (data.len(), Some(data)),
                    _ => return Err(format!("{a:?}: an empty input file")),
                };
                let buffer = ctx.alloc_managed::<u8>(bytes).map_err(|e| format!("managed buffer: {}", reason(&e)))?;
                // A managed-out buffer stays resident nowhere: UVM zero-fills it on first touch.
                if let Some(data) = init {
                    buffer.write(data).map_err(|e| format!("filling a managed buffer: {}", reason(&e)))?;
                }
                Launchable::Managed(buffer)
            }
            Arg::In(_) | Arg::InOut(..) | Arg::Out(..) => Launchable::Device(match (a, input) {
                (Arg::Out(bytes, _), _) => {
                    let b = ctx.alloc::<u8>(*bytes).map_err(|e| format!("device buffer: {}", reason(&e)))?;
                    ctx.memset_d8(&b, 0).map_err(|e| format!("zeroing a buffer: {}", reason(&e)))?;
                    b
                }
                (_, Some(bytes)) if !bytes.is_empty() => {
                    ctx.htod::<u8>(bytes).map_err(|e| format!("device buffer: {}", reason(&e)))?
                }
                _ => return Err(format!("{a:?}: an empty input file")),
            }),
        });
    }
    let stream = ctx.new_stream().map_err(|e| format!("compute stream: {}", reason(&e)))?;
    let mut launch = stream.launch_builder(&function);
    for l in &launchables {
        launch = launch.arg(l.kernel_arg());
    }
    let cfg = nvrt::LaunchConfig { grid: r.grid, block: r.block, shared_bytes: r.shared };
    launch.launch(cfg).map_err(|e| format!("launch: {}", reason(&e)))?;
    stream.synchronize().map_err(|e| match e {
        nvrt::Error::Managed(fatal @ nvrt::ManagedError::FatalFault { .. }) => {
            format!("{}: {fatal}", r.kernel)
        }
        e => format!("{} did not complete: {}", r.kernel, reason(&e)),
    })?;
    let mut written = Vec::new();
    for (a, l) in r.args.iter().zip(&launchables) {
        let (target, bytes) = match (a, l) {
            (Arg::ManagedOut(_, f) | Arg::ManagedInOut(_, f), Launchable::Managed(b)) => {
                (f, b.read().map_err(|e| format!("reading back: {}", reason(&e)))?)
            }
            (Arg::Out(_, f) | Arg::InOut(_, f), Launchable::Device(b)) => {
                (f, ctx.dtoh(b).map_err(|e| format!("reading back: {}", reason(&e)))?)
            }
            _ => continue,
        };
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
    if r.stats {
        let stats = ctx.managed_stats().map_err(|e| format!("managed memory: {}", reason(&e)))?;
        summary.push('\n');
        summary.push_str(&stats_json(&stats.uvm));
    }
    Ok(summary)
}

/// The statistics line of `--stats`: one JSON object, the issue's keys in its order.
fn stats_json(s: &nvrt::UvmStats) -> String {
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
