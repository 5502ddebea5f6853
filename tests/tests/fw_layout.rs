//! The firmware-ABI structures of `nvgpu::hw::fw` against their definitions in RM's
//! `kernel_gsp_frts_tu102.c` (535.261.03), which defines them in the C file itself: the test cuts
//! the typedefs out of that file, compiles them with `nvtypes.h` and the machine's `cc`, and
//! compares every struct's size (and alignment where ours is natural) and every field's offset
//! and size with [`nvgpu::hw::fw::LAYOUTS`]; the generic bootloader's descriptors
//! ([`nvgpu::hw::fw::rmflcnbl::LAYOUTS`]) likewise against `rmflcnbl.h`.
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
