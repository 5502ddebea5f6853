//! Runs the built `nvtool firmware` on the real Debian firmware files (`target/real-data/`, or
//! `NVGPU_REAL_DATA`) and on bad files. Missing data is a failure: run
//! `sudo scripts/fetch-real-data.sh` first.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn real(relative: &str) -> String {
    let root = match std::env::var_os("NVGPU_REAL_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/real-data"),
    };
    let path = root.join(relative);
    assert!(
        path.is_file(),
        "missing real data: {}: run `sudo scripts/fetch-real-data.sh` from the workspace root, \
         or set NVGPU_REAL_DATA",
        path.display()
    );
    path.to_str().expect("utf-8 path").to_string()
}

const GSP_GA10X: &str = "firmware-nvidia-gsp/lib/firmware/nvidia/535.261.03/gsp_ga10x.bin";
const GSP_TU10X: &str = "firmware-nvidia-gsp/lib/firmware/nvidia/535.261.03/gsp_tu10x.bin";
const GRAPHICS: &str = "firmware-nvidia-graphics/lib/firmware/nvidia";

fn nvtool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvtool")).args(args).output().expect("run nvtool")
}

fn scratch_file(name: &str, bytes: &[u8]) -> String {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, bytes).expect("write scratch file");
    path.to_str().expect("utf-8 path").to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_contains_all(haystack: &str, needles: &[&str]) {
    for needle in needles {
        assert!(haystack.contains(needle), "missing {needle:?} in:\n{haystack}");
    }
}

#[test]
fn text_report_of_the_gsp_image() {
    let file = real(GSP_GA10X);
    let out = nvtool(&["firmware", &file]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert!(out.stderr.is_empty());
    assert_contains_all(
        &text(&out.stdout),
        &[
            "GSP-RM firmware ",
            "  version     535.261.03 (the driver's)",
            "  image       .fwimage, 0x2477000 bytes at 0x40",
            "Sections (9)",
            "   2  .fwversion                 0x2477040   0xb",
            "   6  .fwsignature_ga10x         0x247a04b   0x1000",
            "Signatures (4)",
            "  .fwsignature_cc_gh100      0x1000  GH100 (confidential computing)",
            "  .fwsignature_ad10x         0x1000  AD102 AD103 AD104 AD106 AD107",
            "  .fwsignature_ga10x         0x1000  GA102 GA103 GA104 GA106 GA107",
        ],
    );
}

#[test]
fn json_report_of_the_gsp_image() {
    let out = nvtool(&["firmware", "--json", &real(GSP_TU10X)]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(report["kind"], "gsp-elf");
    assert_eq!(report["version"], "535.261.03");
    assert_eq!(report["version_ok"], true);
    assert_eq!(report["image"]["size"], 0x16c1350);
    assert_eq!(report["sections"].as_array().map(Vec::len), Some(8));
    let signatures: Vec<(String, u64, Vec<String>)> = report["signatures"]
        .as_array()
        .expect("signatures")
        .iter()
        .map(|s| {
            (
                s["section"].as_str().unwrap_or("").to_string(),
                s["size"].as_u64().unwrap_or(0),
                s["chips"]
                    .as_array()
                    .map(|c| c.iter().filter_map(|n| n.as_str().map(String::from)).collect())
                    .unwrap_or_default(),
            )
        })
        .collect();
    let expected = [
        (".fwsignature_ga100", vec!["GA100"]),
        (".fwsignature_tu11x", vec!["TU116", "TU117"]),
        (".fwsignature_tu10x", vec!["TU102", "TU104", "TU106"]),
    ];
    assert_eq!(signatures.len(), expected.len());
    for ((section, size, chips), (want_section, want_chips)) in signatures.iter().zip(expected) {
        assert_eq!(section, want_section);
        assert_eq!(*size, 0x1000);
        assert_eq!(chips, &want_chips);
    }
}

#[test]
fn booter_and_bootloader_reports() {
    let out = nvtool(&["firmware", &real(&format!("{GRAPHICS}/ga102/gsp/booter_load-535.113.01.bin"))]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert_contains_all(
        &text(&out.stdout),
        &[
            "HS booter ucode ",
            "  image           0xe600 bytes at 0x378",
            "  signatures      0x300 bytes at 0x3c",
            "  signatures      2 x 0x180 bytes",
            "  patch location  0x8410 (DMEM offset 0x10)",
            "  ucode id        3",
            "  OS data         0x6200 bytes at 0x8400",
            "  app 0 code      0x8300 bytes at 0x100",
        ],
    );

    let out = nvtool(&["firmware", "--json", &real(&format!("{GRAPHICS}/tu116/gsp/booter_unload-535.113.01.bin"))]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(report["kind"], "booter");
    assert_eq!(report["bin_header"]["data_offset"], 0x88);
    assert_eq!(report["signature_size"], 16);
    assert_eq!(report["meta"]["ucode_id"], 0xd);
    assert_eq!(report["load_header"]["num_apps"], 1);
    assert_eq!(report["load_header"]["apps"][0]["code_size"], 0x4600);

    let out = nvtool(&["firmware", &real(&format!("{GRAPHICS}/ad102/gsp/bootloader-535.113.01.bin"))]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert_contains_all(
        &text(&out.stdout),
        &[
            "GSP bootloader ",
            "RM_RISCV_UCODE_DESC (0x54 bytes, version 5; offsets in the image)",
            "  bootloader              0x458 bytes at 0x7000",
            "  monitor code            0x2500 bytes at 0x4800",
            "  monitor enabled         yes",
            "  FB reserved size        0x8000",
        ],
    );

    let out = nvtool(&["firmware", "--json", &real(&format!("{GRAPHICS}/tu102/gsp/bootloader-535.113.01.bin"))]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(report["kind"], "bootloader");
    assert_eq!(report["descriptor_size"], 76);
    assert_eq!(report["descriptor"]["version"], 4);
    assert_eq!(report["descriptor"]["bootloader_param_offset"], 0x488);
    assert!(report["descriptor"]["fb_reserved_size"].is_null());
}

/// Exit status 1, nothing on stdout, one line on stderr that contains `reason`.
fn assert_rejected(out: &Output, reason: &str) {
    assert_eq!(out.status.code(), Some(1), "stdout: {}", text(&out.stdout));
    assert!(out.stdout.is_empty(), "stdout: {}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(reason), "{stderr}");
}

#[test]
fn bad_files_fail_with_one_line() {
    let junk = scratch_file("junk.bin", b"this is not firmware at all");
    assert_rejected(&nvtool(&["firmware", &junk]), "not a firmware file this driver knows");

    let empty = scratch_file("empty.bin", b"");
    assert_rejected(&nvtool(&["firmware", "--json", &empty]), "empty file");

    let booter = std::fs::read(real(&format!("{GRAPHICS}/ga102/gsp/booter_load-535.113.01.bin"))).expect("read");
    let truncated = scratch_file("truncated-booter.bin", &booter[..0x1000]);
    assert_rejected(
        &nvtool(&["firmware", &truncated]),
        "truncated: ucode image at 0x378 needs 0xe600 bytes but the file has only 0x1000",
    );
    let mut corrupt = booter.clone();
    corrupt[0x364] = 2; // num_apps
    let corrupt = scratch_file("two-apps.bin", &corrupt);
    assert_rejected(&nvtool(&["firmware", &corrupt]), "nvfw_hs_load_header_v2.num_apps is 0x2, expected 1");

    let gsp = std::fs::read(real(GSP_TU10X)).expect("read");
    let cut = scratch_file("cut-gsp.bin", &gsp[..0x100000]);
    assert_rejected(&nvtool(&["firmware", &cut]), "malformed ELF file");

    assert_rejected(&nvtool(&["firmware", "/nonexistent/gsp.bin"]), "/nonexistent/gsp.bin");
}

#[test]
fn another_release_is_shown_then_refused() {
    let file = real(&format!("{GRAPHICS}/ga102/gsp/gsp-535.113.01.bin"));
    let out = nvtool(&["firmware", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert_contains_all(
        &text(&out.stdout),
        &["  version     535.113.01 (the driver needs 535.261.03)", "Signatures (4)"],
    );
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("GSP firmware version mismatch: the file is 535.113.01, the driver is bound to 535.261.03"),
        "{stderr}"
    );
}

#[test]
fn usage_errors() {
    assert_eq!(nvtool(&["firmware"]).status.code(), Some(2));
    assert_eq!(nvtool(&["firmware", "--bogus", "x"]).status.code(), Some(2));
    assert_eq!(nvtool(&["firmware", "a", "b"]).status.code(), Some(2));
}
