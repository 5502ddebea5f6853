//! `nvtool firmware`: what the driver's firmware parsers see in a GSP-RM image, a booter or a
//! GSP bootloader file, as text or JSON.
//!
//! The kind is told from the bytes (`nvgpu::firmware::FirmwareKind::detect`), not the file name.
//! Offsets are file offsets except inside the load header and the descriptor, whose offsets are
//! relative to the ucode image (as NVIDIA's headers define them). A GSP-RM image of another
//! release than the driver's is shown, then reported as a bad file.

use std::fmt::Write as _;
use std::process::ExitCode;

use nvgpu::chip::{Chipset, GSP_FIRMWARE_VERSION};
use nvgpu::firmware::{
    BinHeader, BooterFirmware, BootloaderFirmware, FirmwareKind, GenericBootloaderFirmware, GspElf, GspSignature,
};
use serde_json::{json, Value};

/// Runs `nvtool firmware` with the arguments after the command name.
pub fn run(args: &[String]) -> ExitCode {
    let mut json_output = false;
    let mut file = None;
    for arg in args {
        match arg.as_str() {
            "--json" => json_output = true,
            flag if flag.starts_with('-') => return crate::usage_error(&format!("unknown option '{flag}'")),
            path if file.is_none() => file = Some(path),
            _ => return crate::usage_error("more than one FILE given"),
        }
    }
    let Some(path) = file else {
        return crate::usage_error("no FILE given");
    };

    let data = match std::fs::read(path) {
        Ok(data) => data,
        Err(e) => return fail(path, &e),
    };
    let kind = match FirmwareKind::detect(&data) {
        Ok(kind) => kind,
        Err(e) => return fail(path, &e),
    };
    match kind {
        FirmwareKind::GspElf => gsp(path, &data, json_output),
        FirmwareKind::Booter => match BooterFirmware::parse(&data) {
            Ok(booter) => {
                if json_output {
                    println!("{:#}", booter_json(path, data.len(), &booter));
                } else {
                    print!("{}", booter_text(path, data.len(), &booter));
                }
                ExitCode::SUCCESS
            }
            Err(e) => fail(path, &e),
        },
        FirmwareKind::Bootloader => match BootloaderFirmware::parse(&data) {
            Ok(bootloader) => {
                if json_output {
                    println!("{:#}", bootloader_json(path, data.len(), &bootloader));
                } else {
                    print!("{}", bootloader_text(path, data.len(), &bootloader));
                }
                ExitCode::SUCCESS
            }
            Err(e) => fail(path, &e),
        },
        FirmwareKind::GenericBootloader => match GenericBootloaderFirmware::parse(&data) {
            Ok(bl) => {
                let d = &bl.desc;
                if json_output {
                    println!(
                        "{:#}",
                        json!({
                            "file": path,
                            "size": data.len(),
                            "kind": "generic_bootloader",
                            "image_size": bl.image().len(),
                            "bl_start_tag": d.bl_start_tag,
                            "bl_dmem_desc_load_off": d.bl_dmem_desc_load_off,
                            "code_off": d.bl_img_header.bl_code_offset,
                            "code_size": d.bl_img_header.bl_code_size,
                            "data_off": d.bl_img_header.bl_data_offset,
                            "data_size": d.bl_img_header.bl_data_size,
                        })
                    );
                } else {
                    println!("{path}: NVIDIA generic falcon bootloader ({} bytes)", data.len());
                    println!("  image            {} bytes", bl.image().len());
                    println!("  start tag        {:#x}", d.bl_start_tag);
                    println!("  DMEM desc offset {:#x}", d.bl_dmem_desc_load_off);
                    println!(
                        "  code             {:#x} + {:#x}",
                        d.bl_img_header.bl_code_offset, d.bl_img_header.bl_code_size
                    );
                    println!(
                        "  data             {:#x} + {:#x}",
                        d.bl_img_header.bl_data_offset, d.bl_img_header.bl_data_size
                    );
                }
                ExitCode::SUCCESS
            }
            Err(e) => fail(path, &e),
        },
    }
}

fn fail(path: &str, reason: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("nvtool firmware: {path}: {reason}");
    ExitCode::FAILURE
}

fn gsp(path: &str, data: &[u8], json_output: bool) -> ExitCode {
    let elf = match GspElf::parse(data) {
        Ok(elf) => elf,
        Err(e) => return fail(path, &e),
    };
    if json_output {
        println!("{:#}", gsp_json(path, data.len(), &elf));
    } else {
        print!("{}", gsp_text(path, data.len(), &elf));
    }
    // Shown in full, but a file the driver would refuse is a bad file.
    match elf.checked_version() {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => fail(path, &e),
    }
}

fn chip_names(chips: &[Chipset]) -> String {
    chips.iter().map(|c| c.name()).collect::<Vec<_>>().join(" ")
}

fn signature_chips(signature: &GspSignature<'_>) -> String {
    let chips = signature.chips();
    if chips.is_empty() {
        return "(no supported chip)".to_string();
    }
    let names = chip_names(&chips);
    if signature.is_confidential_computing() {
        format!("{names} (confidential computing)")
    } else {
        names
    }
}

fn version_text(elf: &GspElf<'_>) -> String {
    match (elf.version_string(), elf.checked_version()) {
        (Some(v), Ok(_)) => format!("{v} (the driver's)"),
        (Some(v), Err(_)) => format!("{v} (the driver needs {GSP_FIRMWARE_VERSION})"),
        (None, _) => {
            format!("malformed ({} bytes; the driver needs {GSP_FIRMWARE_VERSION})", elf.version_bytes().len())
        }
    }
}

fn gsp_text(path: &str, file_size: usize, elf: &GspElf<'_>) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "GSP-RM firmware {path}");
    let _ = writeln!(w, "  format      ELF64 little-endian, RISC-V");
    let _ = writeln!(w, "  file size   {file_size:#x}");
    let _ = writeln!(w, "  version     {}", version_text(elf));
    let _ = writeln!(w, "  image       .fwimage, {:#x} bytes at {:#x}", elf.image().len(), elf.image_offset());

    let _ = writeln!(w, "\nSections ({})", elf.sections().len());
    let _ = writeln!(w, "   #  name                       offset      size");
    for s in elf.sections() {
        let offset = s.offset.map_or_else(|| "-".to_string(), |o| format!("{o:#x}"));
        let _ = writeln!(w, "  {:2}  {:25}  {:10}  {:#x}", s.index, s.name, offset, s.size);
    }

    let _ = writeln!(w, "\nSignatures ({})", elf.signatures().len());
    let _ = writeln!(w, "  section                    size    chips");
    for s in elf.signatures() {
        let _ = writeln!(w, "  {:25}  {:#6x}  {}", s.section, s.data.len(), signature_chips(s));
    }
    out
}

fn gsp_json(path: &str, file_size: usize, elf: &GspElf<'_>) -> Value {
    json!({
        "file": path,
        "kind": "gsp-elf",
        "file_size": file_size,
        "version": elf.version_string(),
        "version_expected": GSP_FIRMWARE_VERSION,
        "version_ok": elf.checked_version().is_ok(),
        "image": {
            "section": nvgpu::firmware::GSP_IMAGE_SECTION,
            "offset": elf.image_offset(),
            "size": elf.image().len(),
        },
        "sections": elf.sections().iter().map(|s| json!({
            "index": s.index,
            "name": s.name,
            "offset": s.offset,
            "size": s.size,
        })).collect::<Vec<_>>(),
        "signatures": elf.signatures().iter().map(|s| json!({
            "section": s.section,
            "family": s.family(),
            "confidential_computing": s.is_confidential_computing(),
            "size": s.data.len(),
            "chips": s.chips().iter().map(|c| c.name()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

fn bin_header_text(w: &mut String, bin: &BinHeader) {
    let _ = writeln!(w, "\nnvfw_bin_hdr");
    let _ = writeln!(w, "  magic           {:#x}", bin.magic);
    let _ = writeln!(w, "  version         {}", bin.version);
    let _ = writeln!(w, "  bin size        {:#x}", bin.bin_size);
    let _ = writeln!(w, "  header offset   {:#x}", bin.header_offset);
    let _ = writeln!(w, "  image           {:#x} bytes at {:#x}", bin.data_size, bin.data_offset);
}

fn bin_header_json(bin: &BinHeader) -> Value {
    json!({
        "magic": bin.magic,
        "version": bin.version,
        "bin_size": bin.bin_size,
        "header_offset": bin.header_offset,
        "data_offset": bin.data_offset,
        "data_size": bin.data_size,
    })
}

fn booter_text(path: &str, file_size: usize, b: &BooterFirmware<'_>) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "HS booter ucode {path}");
    let _ = writeln!(w, "  file size       {file_size:#x}");
    bin_header_text(w, &b.bin);

    let hs = &b.hs;
    let _ = writeln!(w, "\nnvfw_hs_header_v2");
    let _ = writeln!(w, "  signatures      {:#x} bytes at {:#x}", hs.sig_prod_size, hs.sig_prod_offset);
    let _ = writeln!(w, "  patch_loc       at {:#x}", hs.patch_loc_offset);
    let _ = writeln!(w, "  patch_sig       at {:#x}", hs.patch_sig_offset);
    let _ = writeln!(w, "  meta data       {:#x} bytes at {:#x}", hs.meta_data_size, hs.meta_data_offset);
    let _ = writeln!(w, "  num_sigs        at {:#x}", hs.num_sigs_offset);
    let _ = writeln!(w, "  load header     {:#x} bytes at {:#x}", hs.load_header_size, hs.load_header_offset);

    let _ = writeln!(w, "\nSignature patch");
    let _ = writeln!(w, "  signatures      {} x {:#x} bytes", b.num_signatures, b.signature_size());
    let _ = writeln!(w, "  patch location  {:#x} (DMEM offset {:#x})", b.patch_location, b.signature_dmem_offset());
    let _ = writeln!(w, "  patch index     {}", b.patch_signature_index);
    let _ = writeln!(w, "  fuse version    {}", b.meta.fuse_version);
    let _ = writeln!(w, "  engine id mask  {:#x}", b.meta.engine_id_mask);
    let _ = writeln!(w, "  ucode id        {}", b.meta.ucode_id);

    let l = &b.load;
    let _ = writeln!(w, "\nnvfw_hs_load_header_v2 (offsets in the image)");
    let _ = writeln!(w, "  OS code         {:#x} bytes at {:#x}", l.os_code_size, l.os_code_offset);
    let _ = writeln!(w, "  OS data         {:#x} bytes at {:#x}", l.os_data_size, l.os_data_offset);
    let _ = writeln!(w, "  apps            {}", l.num_apps);
    let _ = writeln!(w, "  app 0 code      {:#x} bytes at {:#x}", l.app_code_size, l.app_code_offset);
    let _ = writeln!(w, "  app 0 data      {:#x} bytes at {:#x}", l.app_data_size, l.app_data_offset);
    out
}

fn booter_json(path: &str, file_size: usize, b: &BooterFirmware<'_>) -> Value {
    let hs = &b.hs;
    let l = &b.load;
    json!({
        "file": path,
        "kind": "booter",
        "file_size": file_size,
        "bin_header": bin_header_json(&b.bin),
        "hs_header": {
            "sig_prod_offset": hs.sig_prod_offset,
            "sig_prod_size": hs.sig_prod_size,
            "patch_loc_offset": hs.patch_loc_offset,
            "patch_sig_offset": hs.patch_sig_offset,
            "meta_data_offset": hs.meta_data_offset,
            "meta_data_size": hs.meta_data_size,
            "num_sigs_offset": hs.num_sigs_offset,
            "load_header_offset": hs.load_header_offset,
            "load_header_size": hs.load_header_size,
        },
        "num_signatures": b.num_signatures,
        "signature_size": b.signature_size(),
        "patch_location": b.patch_location,
        "patch_signature_index": b.patch_signature_index,
        "signature_dmem_offset": b.signature_dmem_offset(),
        "meta": {
            "fuse_version": b.meta.fuse_version,
            "engine_id_mask": b.meta.engine_id_mask,
            "ucode_id": b.meta.ucode_id,
        },
        "load_header": {
            "os_code_offset": l.os_code_offset,
            "os_code_size": l.os_code_size,
            "os_data_offset": l.os_data_offset,
            "os_data_size": l.os_data_size,
            "num_apps": l.num_apps,
            "apps": [{
                "code_offset": l.app_code_offset,
                "code_size": l.app_code_size,
                "data_offset": l.app_data_offset,
                "data_size": l.app_data_size,
            }],
        },
    })
}

fn bootloader_text(path: &str, file_size: usize, b: &BootloaderFirmware<'_>) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "GSP bootloader {path}");
    let _ = writeln!(w, "  file size       {file_size:#x}");
    bin_header_text(w, &b.bin);

    let d = &b.desc;
    let _ =
        writeln!(w, "\nRM_RISCV_UCODE_DESC ({:#x} bytes, version {}; offsets in the image)", b.desc_size, d.version);
    for (what, offset, size) in d.regions() {
        let _ = writeln!(w, "  {what:22}  {size:#x} bytes at {offset:#x}");
    }
    let _ = writeln!(w, "  {:22}  {:#x}", "app version", d.app_version);
    let _ = writeln!(w, "  {:22}  {}", "monitor enabled", yes_no(d.monitor_enabled));
    let absent = "(not in a 76-byte descriptor)";
    let _ = writeln!(
        w,
        "  {:22}  {}",
        "FB reserved size",
        d.fb_reserved_size.map_or_else(|| absent.to_string(), |v| format!("{v:#x}"))
    );
    let _ = writeln!(
        w,
        "  {:22}  {}",
        "signed as code",
        d.signed_as_code.map_or_else(|| absent.to_string(), |v| yes_no(v).to_string())
    );
    out
}

fn yes_no(value: bool) -> &'static str {
    if value {
        "yes"
    } else {
        "no"
    }
}

fn bootloader_json(path: &str, file_size: usize, b: &BootloaderFirmware<'_>) -> Value {
    let d = &b.desc;
    json!({
        "file": path,
        "kind": "bootloader",
        "file_size": file_size,
        "bin_header": bin_header_json(&b.bin),
        "descriptor_size": b.desc_size,
        "descriptor": {
            "version": d.version,
            "bootloader_offset": d.bootloader_offset,
            "bootloader_size": d.bootloader_size,
            "bootloader_param_offset": d.bootloader_param_offset,
            "bootloader_param_size": d.bootloader_param_size,
            "riscv_elf_offset": d.riscv_elf_offset,
            "riscv_elf_size": d.riscv_elf_size,
            "app_version": d.app_version,
            "manifest_offset": d.manifest_offset,
            "manifest_size": d.manifest_size,
            "monitor_data_offset": d.monitor_data_offset,
            "monitor_data_size": d.monitor_data_size,
            "monitor_code_offset": d.monitor_code_offset,
            "monitor_code_size": d.monitor_code_size,
            "monitor_enabled": d.monitor_enabled,
            "swbrom_code_offset": d.swbrom_code_offset,
            "swbrom_code_size": d.swbrom_code_size,
            "swbrom_data_offset": d.swbrom_data_offset,
            "swbrom_data_size": d.swbrom_data_size,
            "fb_reserved_size": d.fb_reserved_size,
            "signed_as_code": d.signed_as_code,
        },
    })
}
