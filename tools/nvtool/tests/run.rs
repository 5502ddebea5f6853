//! `nvtool run` end to end: the project's SAXPY and vector-add kernels, compiled to PTX by
//! Debian's clang-19 here, run on model GPUs booted with the real firmware; outputs compared
//! with the CPU; bad requests exit non-zero with a reason.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tmp(name: &str) -> PathBuf {
    let dir = workspace().join("target/tmp/nvtool-run");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir.join(format!("{}-{name}", std::process::id()))
}

fn ptx(kernel_file: &str, arch: &str) -> PathBuf {
    let out = tmp(&format!("{kernel_file}.{arch}.ptx"));
    let status = Command::new("clang-19")
        .args(["-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib"])
        .arg(format!("--cuda-gpu-arch={arch}"))
        .args(["-Xclang", "-target-feature", "-Xclang", "+ptx78", "-O2", "-S"])
        .arg(workspace().join("payloads").join(format!("{kernel_file}.cu")))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang-19 (run `sudo scripts/install-deps.sh cuda`)");
    assert!(status.success(), "clang-19 failed");
    out
}

fn nvtool(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nvtool")).arg("run").args(args).output().expect("nvtool runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn saxpy_and_vector_add_on_model_gpus() {
    for (chip, arch) in [("gh100", "sm_90"), ("ga102", "sm_80"), ("tu102", "sm_75")] {
        let n = 1000usize;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.75 - 3.0).collect();
        let y: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 2.0)).collect();
        let (fx, fy, fout) = (tmp("x.bin"), tmp("y.bin"), tmp("y.out"));
        std::fs::write(&fx, x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
        std::fs::write(&fy, y.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
        let saxpy = ptx("saxpy", arch);
        let (ok, stdout, stderr) = nvtool(&[
            saxpy.to_str().unwrap(),
            "--kernel",
            "saxpy",
            "--grid",
            "3",
            "--block",
            "128",
            "--chip",
            chip,
            "--arg",
            "u32:1000",
            "--arg",
            "f32:2.5",
            "--arg",
            &format!("in:{}", fx.display()),
            "--arg",
            &format!("inout:{}:{}", fy.display(), fout.display()),
        ]);
        assert!(ok, "{chip}: {stderr}");
        assert!(stdout.contains("saxpy ran on a model"), "{stdout}");
        let got = f32s(&std::fs::read(&fout).unwrap());
        for i in 0..n {
            assert_eq!(got[i].to_bits(), 2.5f32.mul_add(x[i], y[i]).to_bits(), "{chip} at {i}");
        }

        // vector_add_u32 with an out: buffer (zeroed, then written to the file).
        let add = ptx("vector_add", arch);
        let a: Vec<u32> = (0..n as u32).collect();
        let b: Vec<u32> = (0..n as u32).map(|i| i * 1000).collect();
        let (fa, fb, fc) = (tmp("a.bin"), tmp("b.bin"), tmp("c.bin"));
        std::fs::write(&fa, a.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
        std::fs::write(&fb, b.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
        let (ok, _, stderr) = nvtool(&[
            add.to_str().unwrap(),
            "--kernel",
            "vector_add_u32",
            "--grid",
            "4",
            "--block",
            "256",
            "--chip",
            chip,
            "--arg",
            &format!("in:{}", fa.display()),
            "--arg",
            &format!("in:{}", fb.display()),
            "--arg",
            &format!("out:{}:{}", 4 * n, fc.display()),
            "--arg",
            "u32:1000",
        ]);
        assert!(ok, "{chip}: {stderr}");
        let c: Vec<u32> =
            std::fs::read(&fc).unwrap().chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect();
        assert_eq!(c, (0..n as u32).map(|i| i * 1001).collect::<Vec<_>>(), "{chip}");
    }
}

#[test]
fn bad_requests_fail_with_a_reason() {
    let saxpy = ptx("saxpy", "sm_90");
    let p = saxpy.to_str().unwrap();
    for (args, why) in [
        (vec![p, "--kernel", "nosuch", "--grid", "1", "--block", "1"], "no kernel named"),
        (vec![p, "--kernel", "saxpy", "--grid", "1", "--block", "1", "--arg", "u32:1"], "parameters"),
        (vec![p, "--kernel", "saxpy", "--grid", "1", "--block", "1", "--arg", "in:/nonexistent/file"], "cannot read"),
        (vec!["/nonexistent.ptx", "--kernel", "k", "--grid", "1", "--block", "1"], "cannot read"),
        // sm_90 PTX cannot serve a Turing chip.
        (vec![p, "--kernel", "saxpy", "--grid", "1", "--block", "1", "--chip", "tu102"], "no image"),
        (vec![p, "--grid", "1", "--block", "1"], "--kernel"),
    ] {
        let (ok, _, stderr) = nvtool(&args);
        assert!(!ok, "{args:?} succeeded");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}

/// Managed arguments, `--vram`, `--prefetch` and `--stats`: vector add over managed buffers
/// four times the VRAM given, the output read back by the CPU, the statistics line parsed; a
/// stray pointer is a fatal fault on one line with exit status 1.
#[test]
fn managed_buffers_with_vram_prefetch_and_stats() {
    let n = 2 << 20; // u32s: 8 MiB per buffer, 24 MiB through 6 MiB of VRAM.
    let a: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let b: Vec<u32> = (0..n as u32).map(|i| i ^ 0x5a5a_5a5a).collect();
    let (fa, fb, fc) = (tmp("ma.bin"), tmp("mb.bin"), tmp("mc.out"));
    std::fs::write(&fa, a.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    std::fs::write(&fb, b.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let add = ptx("vector_add", "sm_90");
    let grid = (n / 256).to_string();
    let count = format!("u32:{n}");
    let run = |prefetch: &str| {
        nvtool(&[
            add.to_str().unwrap(),
            "--kernel",
            "vector_add_u32",
            "--grid",
            &grid,
            "--block",
            "256",
            "--chip",
            "gh100",
            "--vram",
            "6",
            "--prefetch",
            prefetch,
            "--stats",
            "--arg",
            &format!("managed:{}", fa.display()),
            "--arg",
            &format!("managed-inout:{}:{}", fb.display(), tmp("mb.out").display()),
            "--arg",
            &format!("managed-out:{}:{}", n * 4, fc.display()),
            "--arg",
            &count,
        ])
    };
    let mut faults = Vec::new();
    for prefetch in ["on", "off"] {
        let (ok, stdout, stderr) = run(prefetch);
        assert!(ok, "prefetch {prefetch}: {stderr}");
        let got: Vec<u32> =
            std::fs::read(&fc).unwrap().chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(got.len(), n);
        for i in 0..n {
            assert_eq!(got[i], a[i].wrapping_add(b[i]), "prefetch {prefetch}: element {i}");
        }
        let last = stdout.lines().last().expect("a stats line");
        let stats: serde_json::Value = serde_json::from_str(last).expect("the last line is JSON");
        for key in [
            "gpu_faults",
            "fault_batches",
            "replays",
            "migrated_to_gpu_bytes",
            "migrated_to_cpu_bytes",
            "prefetched_pages",
            "evictions",
            "thrashing_events",
            "cancels",
        ] {
            assert!(stats[key].is_u64(), "{key} in {last}");
        }
        assert!(stats["evictions"].as_u64().unwrap() > 0, "oversubscribed: {last}");
        assert!(stats["migrated_to_cpu_bytes"].as_u64().unwrap() >= (n * 4) as u64, "{last}");
        assert_eq!(stats["cancels"], 0);
        eprintln!("prefetch {prefetch}: {last}");
        faults.push(stats["gpu_faults"].as_u64().unwrap());
    }
    assert!(faults[0] < faults[1], "prefetch on faults less: {faults:?}");

    // A pointer into no managed buffer: exit 1, one line naming the fault.
    let (ok, stdout, stderr) = nvtool(&[
        add.to_str().unwrap(),
        "--kernel",
        "vector_add_u32",
        "--grid",
        "1",
        "--block",
        "32",
        "--chip",
        "gh100",
        "--arg",
        &format!("managed:{}", fa.display()),
        "--arg",
        &format!("managed:{}", fb.display()),
        "--arg",
        "u64:70368744177664",
        "--arg",
        "u32:32",
    ]);
    assert!(!ok, "{stdout}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("nvtool run:")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("fatal GPU fault at 0x400000000000 (write)"), "{stderr}");
}
