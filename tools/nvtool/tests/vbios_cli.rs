//! Runs the built `nvtool vbios` on real ROMs (`../shared/testdata/vbios/`, or
//! `VBIOS_TESTDATA_DIR`) and on bad files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn testdata(name: &str) -> PathBuf {
    let dir = match std::env::var_os("VBIOS_TESTDATA_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/vbios"),
    };
    let path = dir.join(name);
    assert!(path.is_file(), "real VBIOS missing at {}: see REAL_DATA.md, or set VBIOS_TESTDATA_DIR", path.display());
    path
}

fn nvtool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nvtool")).args(args).output().expect("run nvtool")
}

fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, bytes).expect("write scratch file");
    path
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn text_report_of_a_real_rom() {
    let rom = testdata("ga104-rtx3070.rom");
    let out = nvtool(&["vbios", rom.to_str().expect("utf-8 path")]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert!(out.stderr.is_empty());
    for needle in [
        "version               94.04.3A.40.21",
        "Images (4)",
        "EFI (0x03)",
        "BIT at 0x1b0 (version 1.00, 17 tokens of 6 bytes)",
        "0x70 'p'    2  0x0004  0x003f7  FALCON_DATA",
        "Falcon ucode table at 0x86bc3",
        "FWSEC (FWSEC_PROD, table entry 9, target 0x7)",
        "descriptor   v3 at 0x42a68, 0x4ac bytes",
        "IMEM         0xde00 bytes at 0x42f14",
        "DMEM         0x800 bytes at 0x50d14",
        "signatures   3 x 384 bytes, fuse versions 0x7",
        "\"DMAP\" v3 at DMEM 0x560 (ROM 0x51274)",
        "command in 0x7c0+0x40",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
    assert_eq!(stdout.matches("NVIDIA falcon ucode (FWSEC) (0xe0)").count(), 2);
}

#[test]
fn json_report_of_a_real_rom() {
    let rom = testdata("ad106-rtx4060ti.rom");
    let out = nvtool(&["vbios", "--json", rom.to_str().expect("utf-8 path")]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(report["version"], "95.06.34.40.38");
    assert_eq!(report["rom_size"], 0x9A200);
    assert_eq!(report["expansion_rom_offset"], 0x15000);
    let images = report["images"].as_array().expect("images");
    let layout: Vec<(u64, u64, u64, bool)> = images
        .iter()
        .map(|i| {
            (
                i["offset"].as_u64().unwrap_or(u64::MAX),
                i["size"].as_u64().unwrap_or(u64::MAX),
                i["code_type"].as_u64().unwrap_or(u64::MAX),
                i["last"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        layout,
        [
            (0, 0xFC00, 0x00, false),
            (0xFC00, 0x15000, 0x03, false),
            (0x24C00, 0x6000, 0xE0, false),
            (0x2AC00, 0x6F600, 0xE0, true)
        ]
    );
    let tokens = report["bit"]["tokens"].as_array().expect("tokens");
    assert_eq!(tokens.len(), 19);
    assert_eq!(tokens[14]["char"], "p");
    assert_eq!(tokens[14]["data_offset"], 0x41F);
    assert_eq!(report["falcon_ucode_table"]["offset"], 0x99FB6);
    let fwsec = &report["fwsec"];
    assert_eq!(fwsec["entry"]["application_name"], "FWSEC_PROD");
    assert_eq!(fwsec["descriptor"]["version"], 3);
    assert_eq!(fwsec["descriptor"]["offset"], 0x4581C);
    assert_eq!(fwsec["imem"]["size"], 0xF700);
    assert_eq!(fwsec["dmem"]["offset"], 0x55248);
    assert_eq!(fwsec["signatures"]["count"], 2);
    assert_eq!(fwsec["dmem_mapper"]["rom_offset"], 0x55D28);
    assert_eq!(fwsec["dmem_mapper"]["cmd_in_buffer_offset"], 0xD40);
}

#[test]
fn turing_rom_reports_a_v2_descriptor() {
    let rom = testdata("tu117-gtx1650.rom");
    let out = nvtool(&["vbios", "--json", rom.to_str().expect("utf-8 path")]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(report["fwsec"]["descriptor"]["version"], 2);
    assert_eq!(report["fwsec"]["descriptor"]["fields"]["dmem_offset"], 0x9A00);
    assert_eq!(report["fwsec"]["signatures"]["count"], 0);
    assert_eq!(report["images"][4]["code_type_name"], "NVIDIA NBSI");
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
    let junk = scratch_file("junk.rom", b"this is not a VBIOS at all, just some text");
    assert_rejected(&nvtool(&["vbios", junk.to_str().expect("utf-8")]), "not a PCI expansion ROM");

    let empty = scratch_file("empty.rom", b"");
    assert_rejected(&nvtool(&["vbios", "--json", empty.to_str().expect("utf-8")]), "empty input");

    let real = std::fs::read(testdata("ga104-rtx3070.rom")).expect("read ROM");
    let truncated = scratch_file("truncated.rom", &real[..0x30000]);
    assert_rejected(&nvtool(&["vbios", truncated.to_str().expect("utf-8")]), "truncated: ROM image at 0x2ba00");

    let mut foreign = real[..0x86E00].to_vec();
    foreign[0x174..0x176].copy_from_slice(&0x8086u16.to_le_bytes());
    let foreign = scratch_file("foreign.rom", &foreign);
    assert_rejected(&nvtool(&["vbios", foreign.to_str().expect("utf-8")]), "not an NVIDIA VBIOS");

    assert_rejected(&nvtool(&["vbios", "/nonexistent/x.rom"]), "/nonexistent/x.rom");
}

#[test]
fn broken_fwsec_prints_the_rest_and_fails() {
    let mut rom = std::fs::read(testdata("ga104-rtx3070.rom")).expect("read ROM");
    rom[0x51274] = b'X'; // the DMEM mapper signature
    let path = scratch_file("no-dmap.rom", &rom);
    let out = nvtool(&["vbios", path.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Images (4)") && stdout.contains("FWSEC: FWSEC DMEM mapper"), "{stdout}");
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("is not \"DMAP\""), "{stderr}");
}

#[test]
fn usage_errors() {
    assert_eq!(nvtool(&[]).status.code(), Some(2));
    assert_eq!(nvtool(&["vbios"]).status.code(), Some(2));
    assert_eq!(nvtool(&["vbios", "--bogus", "x"]).status.code(), Some(2));
    assert_eq!(nvtool(&["frobnicate"]).status.code(), Some(2));
}
