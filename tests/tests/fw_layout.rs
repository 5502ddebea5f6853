//! The firmware-ABI structures of `nvgpu::hw::fw` against their definitions in RM's
//! `kernel_gsp_frts_tu102.c` (535.261.03), which defines them in the C file itself: the test cuts
//! the typedefs out of that file, compiles them with `nvtypes.h` and the machine's `cc`, and
//! compares every struct's size (and alignment where ours is natural) and every field's offset
//! and size with [`nvgpu::hw::fw::LAYOUTS`]; the generic bootloader's descriptors
//! ([`nvgpu::hw::fw::rmflcnbl::LAYOUTS`]) likewise against `rmflcnbl.h`, and the VBIOS's PCI
//! structures ([`nvgpu::hw::vbios::PCI_LAYOUTS`]) against `pci_exp_table.h`. The VBIOS structures
//! RM reads packed by a format string ([`nvgpu::hw::vbios::PACKED_LAYOUTS`]: the BIT, BIOSDATA,
//! the falcon ucode table, the FWSEC descriptors) are compared with that string and with the C
//! struct's members instead, since the C compiler would pad them.
//!
//! Missing data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root) first.

use std::ffi::OsString;
use std::fmt::Write as _;

use nvgpu::hw::fw::{rmflcnbl, KERNEL_GSP_FRTS_TU102, LAYOUTS};
use nvgpu::hw::headers;
use nvgpu::hw::layout::StructLayout;
use tests::rm_c::{compile_and_run, read_source, require_tree};

/// The typedefs of the FWSEC command interface, as the C file has them.
fn definitions(text: &str) -> &str {
    let start = text.find("typedef struct").expect("kernel_gsp_frts_tu102.c has typedefs");
    let end_marker = "} FWSECLIC_FRTS_CMD;";
    let end = text.find(end_marker).expect("kernel_gsp_frts_tu102.c defines FWSECLIC_FRTS_CMD") + end_marker.len();
    &text[start..end]
}

/// Compiles `prelude` with a `main` that prints every struct's size and alignment and every
/// field's offset and size, and compares them with `layouts`; returns the fields checked.
fn compare(name: &str, prelude: &str, includes: &[&str], layouts: &[StructLayout]) -> usize {
    let tree = require_tree();
    let mut program = String::from("#include <stdio.h>\n#include <stddef.h>\n#include \"nvtypes.h\"\n");
    program.push_str(prelude);
    program.push_str("\nint main(void) {\n");
    for l in layouts {
        writeln!(program, "    printf(\"{0} %zu %zu\\n\", sizeof({0}), _Alignof({0}));", l.c_name).unwrap();
        for f in l.fields {
            writeln!(
                program,
                "    printf(\"{0}.{1} %zu %zu\\n\", offsetof({0}, {1}), sizeof((({0} *)0)->{1}));",
                l.c_name, f.c_name
            )
            .unwrap();
        }
    }
    program.push_str("    return 0;\n}\n");
    let mut flags: Vec<OsString> = Vec::new();
    for dir in ["src/common/sdk/nvidia/inc"].iter().chain(includes) {
        flags.push("-I".into());
        flags.push(tree.join(dir).into_os_string());
    }
    let output = compile_and_run(name, &program, &flags);
    let c: std::collections::HashMap<&str, (usize, usize)> = output
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?, (w.next()?.parse().ok()?, w.next()?.parse().ok()?)))
        })
        .collect();
    let mut checked = 0;
    for l in layouts {
        let (size, align) = c[l.c_name];
        assert_eq!(l.size, size, "sizeof({})", l.c_name);
        // The little-endian wrapper types are byte-aligned: only natural alignment is compared.
        if l.align != 1 {
            assert_eq!(l.align, align, "_Alignof({})", l.c_name);
        }
        assert_eq!(l.fields.len(), l.fields.iter().map(|f| f.c_name).collect::<std::collections::BTreeSet<_>>().len());
        for f in l.fields {
            let (offset, fsize) = c[format!("{}.{}", l.c_name, f.c_name).as_str()];
            assert_eq!((f.offset, f.size), (offset, fsize), "{}.{}", l.c_name, f.c_name);
            checked += 1;
        }
    }
    checked
}

#[test]
fn fw_structures_match_kernel_gsp_frts_tu102() {
    let text = read_source(&require_tree(), KERNEL_GSP_FRTS_TU102.path);
    for l in LAYOUTS {
        assert_eq!(l.header, KERNEL_GSP_FRTS_TU102, "{}", l.c_name);
    }
    assert_eq!(compare("fw_layout", definitions(&text), &[], LAYOUTS), 35, "fields checked");
}

/// The generic bootloader's descriptors against `rmflcnbl.h` itself (it includes `flcnifcmn.h`,
/// whose `RM_FLCN_U64` is the 4-byte-aligned `NvU64_ALIGN32`).
#[test]
fn generic_bootloader_structures_match_rmflcnbl_h() {
    for l in rmflcnbl::LAYOUTS {
        assert_eq!(l.header, headers::RMFLCNBL, "{}", l.c_name);
    }
    let include = format!("#include \"{}\"\n", headers::RMFLCNBL.path.rsplit('/').next().unwrap());
    let dir = headers::RMFLCNBL.path.rsplit_once('/').unwrap().0;
    let checked = compare("fw_layout_rmflcnbl", &include, &[dir, "src/common/inc"], rmflcnbl::LAYOUTS);
    assert_eq!(checked, 24, "fields checked");
}

/// The FSP's command response and the GSP-FMC's boot parameters against `nvdm_payload_cmd_response.h`
/// and `gspifpub.h` (`NVDM_PAYLOAD_COT`'s NVOC header does not compile alone: its field order is
/// checked by `gsp_boot.rs`).
#[test]
fn fsp_structures_match_nvidias_headers() {
    use nvgpu::hw::fw::fsp;
    let mut prelude = String::new();
    for header in [headers::NVDM_PAYLOAD_CMD_RESPONSE, headers::GSPIFPUB] {
        assert!(fsp::LAYOUTS.iter().any(|l| l.header == header));
        writeln!(prelude, "#include \"{}\"", header.path.rsplit('/').next().unwrap()).unwrap();
    }
    let dirs: Vec<&str> = [headers::NVDM_PAYLOAD_CMD_RESPONSE, headers::GSPIFPUB]
        .iter()
        .map(|h| h.path.rsplit_once('/').unwrap().0)
        .collect();
    let checked = compare("fw_layout_fsp", &prelude, &dirs, fsp::LAYOUTS);
    assert_eq!(checked, 14, "fields checked");
}

/// The PCI expansion ROM's structures against `pci_exp_table.h`, which declares them packed.
#[test]
fn vbios_pci_structures_match_pci_exp_table_h() {
    use nvgpu::hw::vbios::PCI_LAYOUTS;
    for l in PCI_LAYOUTS {
        assert_eq!(l.header, headers::PCI_EXP_TABLE, "{}", l.c_name);
    }
    let include = format!("#include \"{}\"\n", headers::PCI_EXP_TABLE.path.rsplit('/').next().unwrap());
    let dir = headers::PCI_EXP_TABLE.path.rsplit_once('/').unwrap().0;
    let checked = compare("fw_layout_pci_exp_table", &include, &[dir], PCI_LAYOUTS);
    assert_eq!(checked, 18, "fields checked");
}

/// The member sizes a format string of RM's VBIOS reader gives, in order: `"1w1d1w4b"` is a
/// 2-byte, a 4-byte and a 2-byte member, then four 1-byte ones (`s_biosStructCalculatePackedSize`).
fn format_sizes(format: &str) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut count = 0;
    for c in format.chars() {
        if let Some(digit) = c.to_digit(10) {
            count = count * 10 + digit as usize;
            continue;
        }
        let size = match c {
            'b' | 's' => 1,
            'w' => 2,
            'd' => 4,
            other => panic!("format {format:?}: unknown letter {other:?}"),
        };
        sizes.extend(std::iter::repeat_n(size, count.max(1)));
        count = 0;
    }
    sizes
}

/// The string `#define NAME "..."` gives in `text`.
fn string_define<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("#define")?.trim_start().strip_prefix(name)?;
        if !rest.starts_with(char::is_whitespace) {
            return None;
        }
        rest.trim().strip_prefix('"')?.split('"').next()
    })
}

/// The member names of C struct `name` in `text`, in declaration order: the body of
/// `struct NAME { .. };` or of `typedef struct { .. } NAME;`.
fn struct_members(text: &str, name: &str) -> Option<Vec<String>> {
    let tagged = text.match_indices(&format!("struct {name}")).find_map(|(at, m)| {
        let open = at + m.len();
        text[open..].trim_start().starts_with('{').then(|| open + text[open..].find('{').unwrap() + 1)
    });
    let body = match tagged {
        Some(start) => &text[start..start + text[start..].find('}')?],
        None => {
            let close = text.match_indices('}').map(|(at, _)| at).find(|&at| {
                let rest = text[at + 1..].trim_start();
                rest.strip_prefix(name).is_some_and(|r| r.trim_start().starts_with(';'))
            })?;
            &text[text[..close].rfind('{')? + 1..close]
        }
    };
    let code: String = body.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    Some(
        code.split(';')
            .map(str::trim)
            .filter(|member| !member.is_empty())
            .map(|member| {
                let last = member.split_whitespace().last().unwrap_or("");
                last.split('[').next().unwrap_or("").to_owned()
            })
            .collect(),
    )
}

#[test]
fn packed_vbios_structures_match_rms_format_strings() {
    use nvgpu::hw::vbios::PACKED_LAYOUTS;
    let tree = require_tree();
    let mut checked = 0;
    for packed in PACKED_LAYOUTS {
        let l = &packed.layout;
        let text = read_source(&tree, l.header.path);
        let format = string_define(&text, packed.format)
            .unwrap_or_else(|| panic!("{}: no string #define {} in {}", l.c_name, packed.format, l.header.path));
        let members = struct_members(&text, l.c_name)
            .unwrap_or_else(|| panic!("{}: no such struct in {}", l.c_name, l.header.path));
        let ours: Vec<&str> = l.fields.iter().map(|f| f.c_name).collect();
        assert_eq!(ours, members, "{}: members in {}", l.c_name, l.header.path);
        let sizes = format_sizes(format);
        assert_eq!(
            l.fields.iter().map(|f| f.size).collect::<Vec<_>>(),
            sizes,
            "{}: member sizes against {} {format:?}",
            l.c_name,
            packed.format
        );
        let mut offset = 0;
        for f in l.fields {
            assert_eq!(f.offset, offset, "{}.{}: packed offset", l.c_name, f.c_name);
            offset += f.size;
            checked += 1;
        }
        assert_eq!(l.size, offset, "sizeof packed {}", l.c_name);
    }
    assert_eq!(checked, 72, "fields checked");
}

#[test]
fn the_format_reader_reads_rms_forms() {
    assert_eq!(format_sizes("1w1d1w4b"), [2, 4, 2, 1, 1, 1, 1]);
    assert_eq!(format_sizes("9d1w2b2w").len(), 14);
    assert_eq!(format_sizes("15d").iter().sum::<usize>(), 60);
    let text = "#define X_FMT \"2b1d\"\n#define X_FMT_SIZE_8 \"1d\"\nstruct S\n{\n    bios_U008 A; // a\n    bios_U008 B[8];\n};\n\
                typedef struct S S;\ntypedef struct {\n    FALCON_UCODE_DESC_HEADER Hdr;\n    bios_U032 C;\n} T;\n";
    assert_eq!(string_define(text, "X_FMT"), Some("2b1d"));
    assert_eq!(string_define(text, "X"), None);
    assert_eq!(struct_members(text, "S"), Some(vec!["A".to_owned(), "B".to_owned()]));
    assert_eq!(struct_members(text, "T"), Some(vec!["Hdr".to_owned(), "C".to_owned()]));
    assert_eq!(struct_members(text, "U"), None);
}
