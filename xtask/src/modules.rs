//! Boot modules the kernel gets on every path: the symbol map `kernel.sym` (for named
//! backtraces in exception reports) plus the user's modules. GRUB passes each as a Multiboot2
//! module; PVH loaders pass one module, so for PVH they are packed into a cpio "newc" archive
//! (the initramfs format; the kernel's `boot::cpio` unpacks it by name).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::iso::Module;
use crate::util::{error, xtask_dir, Context, Result};

/// `nm --numeric-sort --demangle` of the kernel ELF, written next to the other xtask outputs.
pub fn symbol_map(elf: &Path) -> Result<PathBuf> {
    let out = Command::new("nm")
        .args(["--numeric-sort", "--demangle", "--defined-only"])
        .arg(elf)
        .output()
        .context("running nm (binutils) for the kernel symbol map")?;
    if !out.status.success() {
        return Err(error(format!("nm {} failed: {}", elf.display(), String::from_utf8_lossy(&out.stderr))));
    }
    let path = xtask_dir()?.join("kernel.sym");
    fs::write(&path, &out.stdout).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The kernel's symbol map followed by the user's modules.
pub fn with_symbol_map(elf: &Path, user: &[Module]) -> Result<Vec<Module>> {
    let mut all = vec![Module { path: symbol_map(elf)?, name: "kernel.sym".into() }];
    all.extend(user.iter().cloned());
    Ok(all)
}

/// Where each file's data starts in the archive: on a 4 KiB boundary (for a GSP-RM ELF, its
/// `.fwimage` section), so that with the archive itself page-aligned (QEMU loads `-initrd` at a
/// page boundary) every module is page-aligned in guest memory and the kernel uses it in place,
/// the GSP-RM image included (its pages become the radix3 leaves). A misaligned module costs a copy: the
/// kernel's firmware source copies one that is not 8-byte aligned, 0.4 s under TCG for the
/// 38 MB GSP-RM image.
pub const DATA_ALIGN: usize = 4096;

/// One newc entry: header "070701" + 13 eight-digit hex fields (ino, mode, uid, gid, nlink,
/// mtime, filesize, devmajor, devminor, rdevmajor, rdevminor, namesize, check), the name with
/// its NUL, padding to 4, the data, padding to 4. With `align`, the name is followed by as many
/// further NULs (counted in namesize: readers take the name up to its first NUL, as the
/// kernel's `boot::cpio` and Linux's initramfs unpacker do) as put the data on a multiple of
/// `align` bytes from the archive's start.
///
/// `phase` moves that boundary into the data: byte `phase` of the file lands on it (a GSP-RM
/// ELF's `.fwimage`, which the kernel then hands the GSP in place). It must be a multiple of 4.
fn newc_entry(out: &mut Vec<u8>, ino: u32, name: &str, mode: u32, data: &[u8], align: Option<(usize, usize)>) {
    const HEADER: usize = 110;
    let mut namesize = name.len() + 1;
    if let Some((align, phase)) = align {
        let data_start = (out.len() + HEADER + namesize).next_multiple_of(4);
        let target = (data_start + phase).next_multiple_of(align) - phase;
        namesize += target - data_start;
    }
    let fields = [ino, mode, 0, 0, 1, 0, data.len() as u32, 0, 0, 0, 0, namesize as u32, 0];
    out.extend_from_slice(b"070701");
    for f in fields {
        out.extend_from_slice(format!("{f:08x}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.resize(out.len() + namesize - name.len(), 0);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
    out.extend_from_slice(data);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// Where in `data` the page boundary goes: a GSP-RM ELF's `.fwimage` (at 0x40 in NVIDIA's
/// files), so that its pages are the radix3 leaves as they lie; the start for anything else.
fn align_phase(data: &[u8]) -> usize {
    match nvgpu::firmware::GspElf::parse(data) {
        Ok(elf) => {
            let offset = elf.image().as_ptr() as usize - data.as_ptr() as usize;
            if offset.is_multiple_of(4) {
                offset % DATA_ALIGN
            } else {
                0
            }
        }
        Err(_) => 0,
    }
}

/// A newc archive of `files`, each file's data [`DATA_ALIGN`]-aligned (a GSP-RM ELF's image).
pub fn cpio_newc(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (name, data)) in files.iter().enumerate() {
        newc_entry(&mut out, i as u32 + 1, name, 0o100644, data, Some((DATA_ALIGN, align_phase(data))));
    }
    newc_entry(&mut out, 0, "TRAILER!!!", 0, &[], None);
    out
}

/// A newc archive of `(name, mode, data)` entries as given (directories, executables), with
/// no alignment: the initramfs of the Linux reference boot (`bench_linux`).
pub fn cpio_newc_tree(entries: &[(&str, u32, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, &(name, mode, data)) in entries.iter().enumerate() {
        newc_entry(&mut out, i as u32 + 1, name, mode, data, None);
    }
    newc_entry(&mut out, 0, "TRAILER!!!", 0, &[], None);
    out
}

/// Packs `modules` into one cpio archive for a PVH boot's `-initrd`.
pub fn pvh_initrd(modules: &[Module], name: &str) -> Result<PathBuf> {
    let mut files = Vec::new();
    for m in modules {
        let data = fs::read(&m.path).with_context(|| format!("reading module {}", m.path.display()))?;
        files.push((m.name.clone(), data));
    }
    let path = xtask_dir()?.join(format!("{name}.initrd.cpio"));
    fs::write(&path, cpio_newc(&files)).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The firmware a boot of model (or real) GPUs of `chips` needs, as boot modules named the way
/// `nvgpu::firmware::FirmwareBundle` looks them up (`gsp_ga10x.bin`, `ga102-booter_load.bin`,
/// `tu102-generic_bootloader.bin`, `gh100-fmc_image.bin`, ...), taken from what
/// `scripts/fetch-real-data.sh` unpacked under `target/real-data/`: the boot ucodes of the
/// pinned release extracted from NVIDIA's source (`extracted-535.261.03/`, `cargo xtask
/// extract-firmware`) before Debian's older files of the same names.
pub fn firmware_modules(chips: &[&str]) -> Result<Vec<Module>> {
    let real = crate::util::target_dir().join("real-data");
    let mut by_name = std::collections::BTreeMap::new();
    for root in [
        real.join(nvgpu::firmware::PINNED_BOOT_FIRMWARE_DIR).join("nvidia"),
        real.join("firmware-nvidia-gsp/lib/firmware/nvidia"),
        real.join("firmware-nvidia-graphics/lib/firmware/nvidia"),
    ] {
        collect_firmware(&root, &root, &mut by_name);
    }
    let mut out: Vec<Module> = Vec::new();
    for chip in chips {
        let chipset = nvgpu::chip::Chipset::ALL
            .iter()
            .copied()
            .find(|c| c.name().eq_ignore_ascii_case(chip))
            .ok_or_else(|| error(format!("unknown chip '{chip}'")))?;
        let mut names =
            nvgpu::firmware::FirmwareBundle::module_names(chipset).map_err(|e| error(format!("{chip}: {e}")))?;
        names.extend(nvgpu::firmware::FirmwareBundle::extra_module_names(chipset));
        for name in names {
            if out.iter().any(|m| m.name == name) {
                continue;
            }
            match by_name.get(&name) {
                Some(path) => out.push(Module { path: path.clone(), name }),
                // Without NVIDIA's source (extract-firmware) some boot inputs have no file
                // (Hopper's GSP-FMC, Turing's generic bootloader): the kernel reports the
                // missing module for that GPU.
                None => eprintln!(
                    "xtask: warning: firmware {name} for {chip} not found under {} (run scripts/fetch-real-data.sh; some files are not distributed)",
                    real.display()
                ),
            }
        }
    }
    Ok(out)
}

fn collect_firmware(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            collect_firmware(root, &path, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let rel = rel.to_string_lossy();
            // Only the pinned GSP-RM release; boot images (extracted or Debian's) under */gsp/.
            if rel.starts_with("535.261.03/") || rel.contains("/gsp/") && !rel.contains("/gsp/gsp-") {
                if let Some(name) = nvgpu::firmware::module_name_for_path(&rel) {
                    out.entry(name).or_insert(path);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newc_archive_layout() {
        let a = cpio_newc(&[("kernel.sym".into(), b"0000000000200000 T _start\n".to_vec())]);
        assert!(a.starts_with(b"070701"));
        // filesize field (7th) of the first entry
        assert_eq!(&a[6 + 6 * 8..6 + 7 * 8], b"0000001a");
        assert_eq!(&a[110..121], b"kernel.sym\0");
        assert_eq!(a.len() % 4, 0);
        let trailer = a.windows(10).position(|w| w == b"TRAILER!!!").unwrap();
        assert!(trailer > 110 + 12 + 26);
    }

    /// Reads the archive back by the format alone: each file's name up to its NUL, its data at
    /// the padded offset, on a 4 KiB boundary, whatever the lengths before it.
    #[test]
    fn every_file_starts_on_a_page_boundary() {
        let files: Vec<(String, Vec<u8>)> = [("kernel.sym", 26), ("gsp_ga10x.bin", 5000), ("a", 3), ("b.ptx", 4097)]
            .iter()
            .map(|&(n, len)| (n.to_string(), (0..len).map(|i| (i % 251) as u8).collect()))
            .collect();
        let a = cpio_newc(&files);
        let field = |at: usize, i: usize| {
            usize::from_str_radix(std::str::from_utf8(&a[at + 6 + i * 8..at + 14 + i * 8]).unwrap(), 16).unwrap()
        };
        let mut at = 0;
        for (name, data) in &files {
            assert_eq!(&a[at..at + 6], b"070701");
            let (filesize, namesize) = (field(at, 6), field(at, 11));
            let name_bytes = &a[at + 110..at + 110 + namesize];
            let nul = name_bytes.iter().position(|&b| b == 0).unwrap();
            assert_eq!(&name_bytes[..nul], name.as_bytes());
            assert!(name_bytes[nul..].iter().all(|&b| b == 0), "the name is padded with NULs");
            let start = (at + 110 + namesize).next_multiple_of(4);
            assert_eq!(start % DATA_ALIGN, 0, "{name} starts at {start:#x}");
            assert_eq!(filesize, data.len());
            assert_eq!(&a[start..start + filesize], &data[..]);
            at = (start + filesize).next_multiple_of(4);
        }
        assert_eq!(&a[at + 110..at + 120], b"TRAILER!!!");
    }

    /// With a phase, that byte of the file (a GSP-RM ELF's `.fwimage`) is what lands on the
    /// page boundary; files that are no GSP-RM ELF have phase 0.
    #[test]
    fn a_phase_puts_that_byte_of_the_file_on_the_boundary() {
        for (before, phase) in [(0usize, 0x40usize), (7, 0x40), (300, 0xffc), (5000, 4)] {
            let mut out = vec![0u8; before.next_multiple_of(4)];
            let data: Vec<u8> = (0..0x3000u32).map(|i| (i % 253) as u8).collect();
            newc_entry(&mut out, 1, "gsp_ga10x.bin", 0o100644, &data, Some((DATA_ALIGN, phase)));
            let start = out.len() - data.len().next_multiple_of(4);
            assert_eq!((start + phase) % DATA_ALIGN, 0, "before {before}, phase {phase:#x}");
            assert_eq!(&out[start..start + data.len()], &data[..]);
        }
        assert_eq!(align_phase(b"not an ELF"), 0);
        assert_eq!(align_phase(b"\x7fELF but truncated"), 0);
    }
}
