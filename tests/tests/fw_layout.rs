//! The firmware-ABI structures of `nvgpu::hw::fw` against their definitions in RM's
//! `kernel_gsp_frts_tu102.c` (535.261.03), which defines them in the C file itself: the test cuts
//! the typedefs out of that file, compiles them with `nvtypes.h` and the machine's `cc`, and
//! compares every struct's size (and alignment where ours is natural) and every field's offset
//! and size with [`nvgpu::hw::fw::LAYOUTS`].
//!
//! Missing data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root) first.

use std::ffi::OsString;
use std::fmt::Write as _;

use nvgpu::hw::fw::{KERNEL_GSP_FRTS_TU102, LAYOUTS};
use tests::rm_c::{compile_and_run, read_source, require_tree};

/// The typedefs of the FWSEC command interface, as the C file has them.
fn definitions(text: &str) -> &str {
    let start = text.find("typedef struct").expect("kernel_gsp_frts_tu102.c has typedefs");
    let end_marker = "} FWSECLIC_FRTS_CMD;";
    let end = text.find(end_marker).expect("kernel_gsp_frts_tu102.c defines FWSECLIC_FRTS_CMD") + end_marker.len();
    &text[start..end]
}

#[test]
fn fw_structures_match_kernel_gsp_frts_tu102() {
    let tree = require_tree();
    let text = read_source(&tree, KERNEL_GSP_FRTS_TU102.path);
    let mut program = String::from("#include <stdio.h>\n#include <stddef.h>\n#include \"nvtypes.h\"\n");
    program.push_str(definitions(&text));
    program.push_str("\nint main(void) {\n");
    for l in LAYOUTS {
        assert_eq!(l.header, KERNEL_GSP_FRTS_TU102, "{}", l.c_name);
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
    let include: OsString = tree.join("src/common/sdk/nvidia/inc").into_os_string();
    let output = compile_and_run("fw_layout", &program, &["-I".into(), include]);
    let c: std::collections::HashMap<&str, (usize, usize)> = output
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?, (w.next()?.parse().ok()?, w.next()?.parse().ok()?)))
        })
        .collect();
    let mut checked = 0;
    for l in LAYOUTS {
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
    assert_eq!(checked, 35, "fields checked");
}
