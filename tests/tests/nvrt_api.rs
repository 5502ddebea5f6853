//! The application API (`nvrt`) itself on a model GH100 booted with the real firmware: what a
//! CUDA developer relies on (devices and properties, typed copies of several element types,
//! memsets, device-to-device copies, the default stream, several contexts on one device,
//! events on the GPU's clock, managed buffers read and written by the CPU, the system's
//! command line and modules) and the typed errors for what must be refused before it reaches
//! the GPU (a wrong argument count or size, another context's buffer, a missing module or
//! kernel, a device that does not exist, length mismatches).

use nvrt::{Error, LaunchConfig, System};
use sim::ModelConfig;
use tests::ptx_build;

fn modules(sm: u32) -> Vec<(String, Vec<u8>)> {
    ["vector_add", "saxpy"]
        .iter()
        .map(|f| (nvrt::payload_module_name(f, sm), ptx_build::ptx(f, nvrt::payload_arch(sm)).into_bytes()))
        .chain([("input.bin".to_string(), vec![1, 2, 3, 4])])
        .collect()
}

fn exercise(sys: &System<'_>) {
    // The system.
    assert_eq!(sys.device_count(), 1);
    assert!(matches!(sys.open(1), Err(Error::NoSuchDevice { ordinal: 1, count: 1 })));
    assert_eq!(sys.cmdline_value("size"), Some("7"));
    assert!(sys.cmdline_flag("app") && !sys.cmdline_flag("ap"));
    assert_eq!(sys.module("input.bin"), Some(&[1u8, 2, 3, 4][..]));
    assert!(sys.module_names().contains(&"input.bin".to_string()));
    let t0 = sys.now_ns();
    assert!(sys.now_ns() >= t0);
    let p = sys.device_properties(0).expect("properties");
    assert_eq!((p.chip.as_str(), p.sm_version, p.compute_capability()), ("GH100", 90, (9, 0)));
    assert!(p.memory_bytes > 64 << 30, "{p:?}");
    assert!(p.name.contains("H200") || p.name.contains("H100"), "{p:?}");
    assert_eq!(p.pci.map(|a| a.to_string()), Some("0000:41:00.0".to_string()));

    let ctx = sys.open(0).expect("open");
    // Typed round trips, memsets, device-to-device.
    let words: Vec<u64> = (0..5000).map(|i| i * 0x1_0000_0001).collect();
    let d = ctx.htod(&words).expect("htod");
    assert_eq!(ctx.dtoh(&d).expect("dtoh"), words);
    let bytes: Vec<u8> = (0..333).map(|i| i as u8).collect();
    let db = ctx.htod(&bytes).expect("htod u8");
    assert_eq!(ctx.dtoh(&db).expect("dtoh u8"), bytes);
    let z = ctx.alloc_zeros::<f64>(100).expect("zeros");
    assert_eq!(ctx.dtoh(&z).expect("dtoh"), vec![0.0; 100]);
    let w = ctx.alloc::<u32>(1000).expect("alloc");
    ctx.memset_d32(&w, 0xdead_beef).expect("memset");
    let w2 = ctx.alloc::<u32>(1000).expect("alloc");
    ctx.memcpy_dtod(&w, &w2).expect("dtod");
    assert_eq!(ctx.dtoh(&w2).expect("dtoh"), vec![0xdead_beef; 1000]);
    let mut short = vec![0u32; 999];
    assert!(matches!(ctx.memcpy_dtoh(&w2, &mut short), Err(Error::LengthMismatch { device: 1000, host: 999, .. })));

    // A launch on the default stream, bracketed by events on the GPU's clock.
    let n = 4099u32;
    let a: Vec<u32> = (0..n).collect();
    let b: Vec<u32> = (0..n).map(|i| i * 3).collect();
    let (da, dbb, dc) = (ctx.htod(&a).unwrap(), ctx.htod(&b).unwrap(), ctx.alloc_zeros::<u32>(n as usize).unwrap());
    let m = ctx.load_payload("vector_add").expect("module");
    let names = m.function_names().expect("names");
    assert!(names.iter().any(|f| f == "vector_add_u32"), "{names:?}");
    let f = m.function("vector_add_u32").expect("function");
    assert_eq!(f.params().len(), 4);
    let s = ctx.default_stream().expect("default stream");
    let e0 = s.record_event().expect("event");
    let cfg = LaunchConfig::linear(n.div_ceil(128), 128);
    s.launch_builder(&f).arg(&da).arg(&dbb).arg(&dc).arg(&n).launch(cfg).expect("launch");
    let e1 = s.record_event().expect("event");
    e1.synchronize().expect("event sync");
    assert!(e1.query().expect("query"));
    let ns = e0.elapsed_ns(&e1).expect("elapsed");
    assert!(ns > 0, "the GPU's timestamps bracket the kernel");
    assert!(e0.elapsed_ms(&e1).expect("ms") > 0.0);
    let want: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(ctx.dtoh(&dc).expect("result"), want);

    // What is refused before the GPU sees it.
    let too_few = s.launch_builder(&f).arg(&da).arg(&dbb).arg(&dc).launch(cfg);
    assert!(
        matches!(&too_few, Err(Error::Arguments { reason, .. }) if reason.contains("takes 4 parameters, 3 arguments given")),
        "{too_few:?}"
    );
    let wrong_size = s.launch_builder(&f).arg(&da).arg(&dbb).arg(&dc).arg(&7u64).launch(cfg);
    assert!(matches!(wrong_size, Err(Error::Arguments { .. })), "{wrong_size:?}");
    assert!(matches!(m.function("no_such_kernel"), Err(Error::Runtime(_))));
    assert!(matches!(ctx.load_payload("nope"), Err(Error::MissingModule { name }) if name == "payload-nope-sm_90.ptx"));
    let other = sys.open(0).expect("a second context on the same device");
    let theirs = other.htod(&a).expect("htod in the other context");
    let foreign = s.launch_builder(&f).arg(&theirs).arg(&dbb).arg(&dc).arg(&n).launch(cfg);
    assert!(matches!(foreign, Err(Error::ForeignHandle { what: "buffer" })), "{foreign:?}");
    assert!(matches!(ctx.dtoh(&theirs), Err(Error::ForeignHandle { .. })));
    drop(theirs);
    other.close().expect("close the second context");

    // A stream of its own, a scalar float argument.
    let saxpy = ctx.load_payload("saxpy").expect("saxpy");
    let sf = saxpy.function("saxpy").expect("function");
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let (dx, dy) = (ctx.htod(&x).unwrap(), ctx.alloc_zeros::<f32>(1000).unwrap());
    let stream = ctx.new_stream().expect("stream");
    stream
        .launch_builder(&sf)
        .arg(&1000u32)
        .arg(&2.0f32)
        .arg(&dx)
        .arg(&dy)
        .launch(LaunchConfig::linear(2, 256))
        .unwrap();
    stream.synchronize().expect("sync");
    assert!(stream.query().expect("query"));
    let mut y = vec![0f32; 1000];
    stream.memcpy_dtoh(&dy, &mut y).expect("dtoh after the stream");
    assert_eq!(y, x.iter().map(|v| 2.0 * v).collect::<Vec<_>>());

    // Managed memory: CPU writes, a kernel in between, CPU reads.
    let mb = ctx.alloc_managed::<u32>(3000).expect("managed");
    mb.write(&a[..3000]).expect("managed write");
    mb.with_host_mut(|first, part| part.iter_mut().enumerate().for_each(|(k, v)| *v += (first + k) as u32))
        .expect("in-place pass");
    let got = mb.read().expect("managed read");
    assert_eq!(got, (0..3000u32).map(|i| 2 * i).collect::<Vec<_>>());
    assert!(matches!(ctx.configure_managed(nvrt::ManagedOptions::default()), Err(Error::ManagedAlreadyStarted)));
    assert!(matches!(ctx.alloc_managed::<[u8; 3]>(10), Err(Error::ElementSize { size: 3 })));
    let stats = ctx.managed_stats().expect("stats");
    assert!(stats.uvm.cpu_faults > 0, "{stats:?}");
    ctx.synchronize().expect("synchronize");
    drop((stream, s, e0, e1));
    let late = ctx.htod(&[1u32, 2, 3]).expect("a buffer that outlives the context's close");
    let handle = ctx.clone();
    ctx.close().expect("close");
    // Everything went with the context: calls on what is left say so, and dropping it gives
    // back nothing (the backend's free reports the session gone, which a drop keeps quiet).
    assert!(matches!(handle.dtoh(&late), Err(Error::SessionGone { ordinal: 0 })));
    assert!(matches!(handle.alloc::<u8>(16), Err(Error::SessionGone { .. })));
    drop(late);
}

#[test]
fn the_api_does_what_cuda_developers_rely_on_and_refuses_the_rest_with_typed_errors() {
    let config = ModelConfig::h200();
    let files = modules(config.chipset.sm_version());
    nvrt::model::run(config, &files, "app size=3 size=7", exercise).expect("model run");
}

#[test]
fn termination_reads_the_shapes_main_may_return() {
    use nvrt::Termination;
    assert_eq!(Ok::<(), Error>(()).report(), Ok(()));
    assert_eq!(Ok::<bool, Error>(true).report(), Ok(()));
    assert!(Ok::<bool, Error>(false).report().unwrap_err().contains("wrong result"));
    let e: Result<(), Error> = Err(Error::MissingModule { name: "x".into() });
    assert_eq!(e.report(), Err("no boot module named x".to_string()));
}
