//! `nvtool vbios`: what the driver's VBIOS parser sees in a ROM dump, as text or JSON.
//!
//! Offsets printed are ROM offsets (from the first image's 0x55AA), as in `nvgpu::vbios`; the
//! ROM's offset in the file is printed too (non-zero only behind an NVGI header).

use std::fmt::Write as _;
use std::process::ExitCode;

use nvgpu::fwsec::{Fwsec, FwsecDescriptor, FwsecKind};
use nvgpu::vbios::{BitToken, FalconUcodeEntry, FalconUcodeTable, RomImage, Vbios, VbiosError};
use serde_json::{json, Value};

/// Runs `nvtool vbios` with the arguments after the command name.
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
    let vbios = match Vbios::from_bytes(&data) {
        Ok(vbios) => vbios,
        Err(e) => return fail(path, &e),
    };
    let table = vbios.falcon_ucode_table();
    let fwsec = vbios.fwsec(FwsecKind::Prod);

    if json_output {
        println!("{:#}", report_json(path, data.len(), &vbios, &table, &fwsec));
    } else {
        print!("{}", report_text(path, data.len(), &vbios, &table, &fwsec));
    }
    // A Turing..Ada VBIOS without a usable FWSEC cannot boot GSP: report it as a bad file, after
    // printing everything else.
    match fwsec {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => fail(path, &e),
    }
}

fn fail(path: &str, reason: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("nvtool vbios: {path}: {reason}");
    ExitCode::FAILURE
}

fn hex(value: impl Into<u64>) -> String {
    format!("{:#x}", value.into())
}

fn token_char(id: u8) -> char {
    if id.is_ascii_graphic() {
        char::from(id)
    } else {
        '?'
    }
}

fn report_text(
    path: &str,
    file_size: usize,
    vbios: &Vbios,
    table: &Result<FalconUcodeTable, VbiosError>,
    fwsec: &Result<Fwsec<'_>, VbiosError>,
) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(w, "VBIOS {path}");
    match vbios.version() {
        Some(version) => {
            let _ = writeln!(w, "  version               {version}");
        }
        None => {
            let _ = writeln!(w, "  version               (no BIOSDATA token)");
        }
    }
    let _ = writeln!(w, "  file size             {file_size:#x}");
    if let Some(ifr) = vbios.ifr() {
        let _ = writeln!(w, "  NVGI (IFR) header     version {}, ROM at {:#x}", ifr.version, ifr.rom_offset);
    }
    let _ =
        writeln!(w, "  ROM                   {:#x} bytes at file offset {:#x}", vbios.rom().len(), vbios.rom_offset());
    let _ = writeln!(w, "  expansion ROM offset  {:#x}", vbios.expansion_rom_offset());

    let _ = writeln!(w, "\nImages ({})", vbios.images().len());
    let _ =
        writeln!(w, "   #  offset    size      sig     pcir  vendor:device  code type                            last");
    for (n, image) in vbios.images().iter().enumerate() {
        let _ = writeln!(
            w,
            "  {n:2}  {:#08x}  {:#08x}  {:#06x}  {:4}  {:04x}:{:04x}      {:35}  {}{}",
            image.offset,
            image.size,
            image.rom_signature,
            String::from_utf8_lossy(&image.pcir_signature),
            image.vendor_id,
            image.device_id,
            image.code_type.to_string(),
            if image.last { "yes" } else { "no" },
            match image.npde {
                Some(npde) => format!("  (NPDE rev {:#x}, {} blocks)", npde.revision, npde.subimage_length),
                None => String::new(),
            },
        );
    }

    let bit = vbios.bit();
    let _ = writeln!(
        w,
        "\nBIT at {:#x} (version {:x}.{:02x}, {} tokens of {} bytes)",
        bit.offset,
        bit.bcd_version >> 8,
        bit.bcd_version & 0xFF,
        bit.tokens.len(),
        bit.token_size
    );
    let _ = writeln!(w, "  id        ver  size    data     name");
    for token in &bit.tokens {
        let _ = writeln!(
            w,
            "  {:#04x} '{}'  {:3}  {:#06x}  {:#07x}  {}",
            token.id,
            token_char(token.id),
            token.data_version,
            token.data_size,
            token.data_offset,
            token.name().unwrap_or("")
        );
    }

    match table {
        Ok(table) => {
            let _ = writeln!(
                w,
                "\nFalcon ucode table at {:#x} (pointer {:#x} in token data at {:#x}; version {}, {} entries)",
                table.offset,
                table.table_ptr,
                table.falcon_data_offset,
                table.version,
                table.entries.len()
            );
            let _ = writeln!(w, "   #  app   target  desc ptr    desc at     name");
            for entry in table.entries.iter().filter(|e| e.application_id != 0 || e.desc_ptr != 0) {
                let _ = writeln!(
                    w,
                    "  {:2}  {:#04x}  {:#04x}    {:#09x}  {:>9}  {}",
                    entry.index,
                    entry.application_id,
                    entry.target_id,
                    entry.desc_ptr,
                    entry.desc_offset.map_or_else(|| "-".to_string(), hex),
                    entry.application_name().unwrap_or("")
                );
            }
        }
        Err(e) => {
            let _ = writeln!(w, "\nFalcon ucode table: {e}");
        }
    }

    match fwsec {
        Ok(fwsec) => write_fwsec_text(w, fwsec),
        Err(e) => {
            let _ = writeln!(w, "\nFWSEC: {e}");
        }
    }
    out
}

fn write_fwsec_text(w: &mut String, fwsec: &Fwsec<'_>) {
    let d = &fwsec.descriptor;
    let _ = writeln!(
        w,
        "\nFWSEC ({}, table entry {}, target {:#x})",
        fwsec.entry.application_name().unwrap_or("?"),
        fwsec.entry.index,
        fwsec.entry.target_id
    );
    let _ = writeln!(
        w,
        "  descriptor   v{} at {:#x}, {:#x} bytes, flags {:#04x}",
        d.version(),
        fwsec.desc_offset,
        fwsec.desc_size,
        fwsec.desc_flags
    );
    let _ = writeln!(w, "  ucode image  at {:#x}", fwsec.image_offset);
    let _ = writeln!(
        w,
        "  IMEM         {:#x} bytes at {:#x} (phys {:#x}, virt {:#x})",
        d.imem_load_size(),
        fwsec.imem_offset,
        d.imem_phys_base(),
        d.imem_virt_base()
    );
    let _ = writeln!(
        w,
        "  DMEM         {:#x} bytes at {:#x} (phys {:#x})",
        d.dmem_load_size(),
        fwsec.dmem_offset,
        d.dmem_phys_base()
    );
    match d {
        FwsecDescriptor::V2(v2) => {
            let _ = writeln!(
                w,
                "  v2 fields    stored {:#x}, uncompressed {:#x}, entry {:#x}, secure IMEM {:#x}+{:#x}, \
                 DMEM offset {:#x}, alt IMEM/DMEM {:#x}/{:#x}",
                v2.stored_size,
                v2.uncompressed_size,
                v2.virtual_entry,
                v2.imem_sec_base,
                v2.imem_sec_size,
                v2.dmem_offset,
                v2.alt_imem_load_size,
                v2.alt_dmem_load_size
            );
        }
        FwsecDescriptor::V3(v3) => {
            let _ = writeln!(
                w,
                "  v3 fields    stored {:#x}, ucode id {}, engine mask {:#x}, signature patch at DMEM {:#x}",
                v3.stored_size, v3.ucode_id, v3.engine_id_mask, v3.pkc_data_offset
            );
        }
    }
    let signature_versions = match d {
        FwsecDescriptor::V3(v3) => format!(", fuse versions {:#x}", v3.signature_versions),
        FwsecDescriptor::V2(_) => String::new(),
    };
    let _ = writeln!(
        w,
        "  signatures   {} x {} bytes{signature_versions}",
        fwsec.signature_count(),
        fwsec.signature_size()
    );
    let i = &fwsec.interface;
    let entries: Vec<String> =
        i.entries.iter().map(|e| format!("id {:#x} at DMEM {:#x}", e.id, e.dmem_offset)).collect();
    let _ = writeln!(w, "  interface    at DMEM {:#x}, version {}: {}", i.dmem_offset, i.version, entries.join(", "));
    let m = &fwsec.dmem_mapper;
    let _ = writeln!(
        w,
        "  DMEM mapper  \"DMAP\" v{} at DMEM {:#x} (ROM {:#x}), {:#x} bytes",
        m.version,
        m.dmem_offset,
        fwsec.dmem_mapper_rom_offset(),
        m.size
    );
    let _ = writeln!(
        w,
        "               command in {:#x}+{:#x}, out {:#x}+{:#x}, init_cmd at DMEM {:#x} = {:#x}",
        m.cmd_in_buffer_offset,
        m.cmd_in_buffer_size,
        m.cmd_out_buffer_offset,
        m.cmd_out_buffer_size,
        m.init_cmd_dmem_offset(),
        m.init_cmd
    );
}

fn image_json(image: &RomImage) -> Value {
    json!({
        "offset": image.offset,
        "size": image.size,
        "rom_signature": image.rom_signature,
        "pcir_offset": image.pcir_offset,
        "pcir_signature": String::from_utf8_lossy(&image.pcir_signature),
        "vendor_id": image.vendor_id,
        "device_id": image.device_id,
        "pcir_revision": image.pcir_revision,
        "class_code": image.class_code,
        "pcir_image_length": image.pcir_image_length,
        "code_type": image.code_type.raw(),
        "code_type_name": image.code_type.name(),
        "last": image.last,
        "npde": image.npde.map(|n| json!({
            "offset": n.offset,
            "revision": n.revision,
            "length": n.length,
            "subimage_length": n.subimage_length,
            "private_last_image": n.private_last_image,
            "flags": n.flags,
        })),
    })
}

fn token_json(token: &BitToken) -> Value {
    json!({
        "id": token.id,
        "char": token_char(token.id).to_string(),
        "name": token.name(),
        "data_version": token.data_version,
        "data_size": token.data_size,
        "data_offset": token.data_offset,
    })
}

fn entry_json(entry: &FalconUcodeEntry) -> Value {
    json!({
        "index": entry.index,
        "application_id": entry.application_id,
        "application_name": entry.application_name(),
        "target_id": entry.target_id,
        "desc_ptr": entry.desc_ptr,
        "desc_offset": entry.desc_offset,
    })
}

fn fwsec_json(fwsec: &Fwsec<'_>) -> Value {
    let d = &fwsec.descriptor;
    let fields = match d {
        FwsecDescriptor::V2(v2) => json!({
            "stored_size": v2.stored_size,
            "uncompressed_size": v2.uncompressed_size,
            "virtual_entry": v2.virtual_entry,
            "interface_offset": v2.interface_offset,
            "imem_phys_base": v2.imem_phys_base,
            "imem_load_size": v2.imem_load_size,
            "imem_virt_base": v2.imem_virt_base,
            "imem_sec_base": v2.imem_sec_base,
            "imem_sec_size": v2.imem_sec_size,
            "dmem_offset": v2.dmem_offset,
            "dmem_phys_base": v2.dmem_phys_base,
            "dmem_load_size": v2.dmem_load_size,
            "alt_imem_load_size": v2.alt_imem_load_size,
            "alt_dmem_load_size": v2.alt_dmem_load_size,
        }),
        FwsecDescriptor::V3(v3) => json!({
            "stored_size": v3.stored_size,
            "pkc_data_offset": v3.pkc_data_offset,
            "interface_offset": v3.interface_offset,
            "imem_phys_base": v3.imem_phys_base,
            "imem_load_size": v3.imem_load_size,
            "imem_virt_base": v3.imem_virt_base,
            "dmem_phys_base": v3.dmem_phys_base,
            "dmem_load_size": v3.dmem_load_size,
            "engine_id_mask": v3.engine_id_mask,
            "ucode_id": v3.ucode_id,
            "signature_count": v3.signature_count,
            "signature_versions": v3.signature_versions,
        }),
    };
    let m = &fwsec.dmem_mapper;
    json!({
        "entry": entry_json(&fwsec.entry),
        "descriptor": {
            "version": d.version(),
            "offset": fwsec.desc_offset,
            "size": fwsec.desc_size,
            "flags": fwsec.desc_flags,
            "fields": fields,
        },
        "image_offset": fwsec.image_offset,
        "imem": { "offset": fwsec.imem_offset, "size": d.imem_load_size(), "phys_base": d.imem_phys_base(), "virt_base": d.imem_virt_base() },
        "dmem": { "offset": fwsec.dmem_offset, "size": d.dmem_load_size(), "phys_base": d.dmem_phys_base() },
        "signatures": { "count": fwsec.signature_count(), "size": fwsec.signature_size(), "total_bytes": fwsec.signatures().len() },
        "interface": {
            "dmem_offset": fwsec.interface.dmem_offset,
            "version": fwsec.interface.version,
            "entries": fwsec.interface.entries.iter().map(|e| json!({ "id": e.id, "dmem_offset": e.dmem_offset })).collect::<Vec<_>>(),
        },
        "dmem_mapper": {
            "dmem_offset": m.dmem_offset,
            "rom_offset": fwsec.dmem_mapper_rom_offset(),
            "version": m.version,
            "size": m.size,
            "cmd_in_buffer_offset": m.cmd_in_buffer_offset,
            "cmd_in_buffer_size": m.cmd_in_buffer_size,
            "cmd_out_buffer_offset": m.cmd_out_buffer_offset,
            "cmd_out_buffer_size": m.cmd_out_buffer_size,
            "init_cmd_dmem_offset": m.init_cmd_dmem_offset(),
            "init_cmd": m.init_cmd,
        },
    })
}

fn report_json(
    path: &str,
    file_size: usize,
    vbios: &Vbios,
    table: &Result<FalconUcodeTable, VbiosError>,
    fwsec: &Result<Fwsec<'_>, VbiosError>,
) -> Value {
    let bit = vbios.bit();
    json!({
        "file": path,
        "file_size": file_size,
        "version": vbios.version().map(|v| v.to_string()),
        "version_raw": vbios.version().map(|v| json!({ "version": v.version, "oem": v.oem })),
        "ifr": vbios.ifr().map(|i| json!({ "version": i.version, "rom_offset": i.rom_offset })),
        "rom_offset": vbios.rom_offset(),
        "rom_size": vbios.rom().len(),
        "expansion_rom_offset": vbios.expansion_rom_offset(),
        "images": vbios.images().iter().map(image_json).collect::<Vec<_>>(),
        "bit": {
            "offset": bit.offset,
            "bcd_version": bit.bcd_version,
            "header_size": bit.header_size,
            "token_size": bit.token_size,
            "tokens": bit.tokens.iter().map(token_json).collect::<Vec<_>>(),
        },
        "falcon_ucode_table": match table {
            Ok(t) => json!({
                "offset": t.offset,
                "table_ptr": t.table_ptr,
                "falcon_data_offset": t.falcon_data_offset,
                "version": t.version,
                "header_size": t.header_size,
                "entry_size": t.entry_size,
                "entries": t.entries.iter().map(entry_json).collect::<Vec<_>>(),
            }),
            Err(e) => json!({ "error": e.to_string() }),
        },
        "fwsec": match fwsec {
            Ok(f) => fwsec_json(f),
            Err(e) => json!({ "error": e.to_string() }),
        },
    })
}
