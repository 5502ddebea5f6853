//! The GSP boot structures of `nvgpu::gsp`, checked against NVIDIA's own headers by the C
//! compiler.
//!
//! The test writes a C file that includes NVIDIA's headers from the unpacked
//! open-gpu-kernel-modules 535.261.03 tree the way RM's own `kernel_gsp.c` and
//! `message_queue_cpu.c` include them (same `-I` list, `-D` flags and forced `cpuopsys.h` as
//! `src/nvidia/Makefile`), and prints, for every entry of `nvgpu::gsp::STRUCT_LAYOUTS`, the
//! struct's `sizeof`/`_Alignof` and each field's `offsetof`/`sizeof`; for every constant of
//! `nvgpu::gsp::fw::layout::all_constants()` its value; for every per-chip parameter of
//! `WprChipParams` the value of the expression or HAL variant RM's generated
//! `g_kernel_gsp_nvoc.c` picks for that chip; and RM's `_checkSum32` over a test pattern. It
//! compiles that with the machine's `cc` into `target/tmp/`, runs it and compares entry by entry.
//!
//! Missing data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root) first.
//! `NVGPU_REAL_DATA` overrides the data directory; `CC` the compiler.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::OnceLock;

use nvgpu::chip::Chipset;
use nvgpu::gsp;
use nvgpu::gsp::fb_layout::{FbLayoutFlavor, WprChipParams};
use nvgpu::gsp::fw::layout::{all_constants, STRUCT_LAYOUTS};
use nvgpu::hw::headers::{self, OGKM_PINNED};
use nvgpu::hw::Header;
use tests::rm_c::{
    function_body, read_source as read, require_tree as tree, rm_flags, squash, try_compile_and_run, ASSERT_HOOKS,
};

// ---------------------------------------------------------------------------------------------
// What the C program includes (RM's flags, data root and compile-and-run: `tests::rm_c`).

/// The includes, in the order RM's `message_queue_cpu.c` and `kernel_gsp.c` use them (the RPC
/// structures are generated headers included under the same `RPC_*` switches), then the headers
/// that define the rest of what we check.
const PRELUDE: &str = r#"
#include "core/core.h"
#include "core/thread_state.h"
#include "os/os.h"
#include "vgpu/rpc_headers.h"
#include "gpu/mem_mgr/virt_mem_allocator_common.h"
#define RPC_STRUCTURES
#define RPC_GENERIC_UNION
#include "g_rpc-structures.h"
#undef RPC_STRUCTURES
#undef RPC_GENERIC_UNION
#define RPC_MESSAGE_STRUCTURES
#define RPC_MESSAGE_GENERIC_UNION
#include "g_rpc-message-header.h"
#undef RPC_MESSAGE_STRUCTURES
#undef RPC_MESSAGE_GENERIC_UNION
#include "gpu/gsp/message_queue.h"
#include "gpu/gsp/message_queue_priv.h"
#include "msgq/msgq_priv.h"
#include "gpu/gsp/kernel_gsp.h"
#include "gpu/gpu.h"
#include "gpu/gsp/gsp_init_args.h"
#include "gpu/gsp/gsp_fw_heap.h"
#include "gpu/mem_mgr/rm_page_size.h"
#include "libos_init_args.h"
#include "gsp_fw_wpr_meta.h"
#include "turing/tu102/dev_gc6_island_addendum.h"
#include "turing/tu102/dev_ram.h"
#include <stdio.h>
#include <stddef.h>

/* Zeroed RM objects for the HAL variants' inline bodies: a bare-metal GPU, no vGPU offload. */
static OBJGPU gpu0;
static KernelGsp kgsp0;
static NvU64 pattern64[512];
"#;

// ---------------------------------------------------------------------------------------------
// RM's per-chip HAL choices (g_kernel_gsp_nvoc.c).

/// One branch of a `// Hal field|function -- NAME` block: the chips it names (`None`: the
/// `else`/default branch) and the right-hand side it assigns.
#[derive(Debug)]
struct HalBranch {
    chips: Option<Vec<String>>,
    rhs: String,
}

/// The branches of the HAL item `name` in `g_kernel_gsp_nvoc.c`.
fn hal_branches(nvoc_c: &str, kind: &str, name: &str) -> Vec<HalBranch> {
    let marker = format!("// Hal {kind} -- {name}");
    let start = nvoc_c
        .lines()
        .position(|l| l.trim() == marker)
        .unwrap_or_else(|| panic!("g_kernel_gsp_nvoc.c has no `{marker}`"));
    let mut branches = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in nvoc_c.lines().skip(start + 1) {
        let t = line.trim();
        if t.starts_with("// Hal ") || line == "}" {
            break;
        }
        if let Some(at) = t.find("/* ChipHal:") {
            let list = &t[at + "/* ChipHal:".len()..];
            let list = list.split("*/").next().unwrap_or("");
            current = Some(list.split('|').map(|c| c.trim().to_owned()).collect());
        } else if t.starts_with("else") || t == "// default" {
            current = None;
        }
        if let Some(eq) = t.find(" = ") {
            if t.starts_with("pThis->") {
                let rhs = t[eq + 3..].trim_end_matches(';').trim().to_owned();
                branches.push(HalBranch { chips: current.clone(), rhs });
            }
        }
    }
    assert!(!branches.is_empty(), "no assignments under `{marker}`");
    branches
}

/// The right-hand side RM picks for `chip`.
fn hal_pick<'a>(branches: &'a [HalBranch], chip: &str, item: &str) -> &'a str {
    if let Some(b) = branches.iter().find(|b| b.chips.as_ref().is_some_and(|c| c.iter().any(|n| n == chip))) {
        return &b.rhs;
    }
    match branches.iter().find(|b| b.chips.is_none()) {
        Some(b) => &b.rhs,
        None => panic!("g_kernel_gsp_nvoc.c: `{item}` has no branch for {chip} and no default"),
    }
}

/// Out-of-line HAL variants, whose bodies the C program cannot call (they live in RM's `.c`
/// files): the body text we rely on, and the C expression it returns.
const OUT_OF_LINE: &[(&str, &str, &[&str], &str)] = &[(
    "kgspGetFrtsSize_TU102",
    headers::KERNEL_GSP_FRTS_TU102.path,
    &[
        "sizeIn4k = NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K;",
        "return sizeIn4k * 0x1000;",
    ],
    "(NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K * 0x1000)",
)];

/// A C expression for the value of HAL right-hand side `rhs` of `item` (a field value, or
/// `&variant` to be called).
fn hal_expr(tree: &Path, nvoc_h: &str, item: &str, rhs: &str) -> String {
    let Some(func) = rhs.strip_prefix('&') else {
        return rhs.to_owned();
    };
    let inline = nvoc_h.lines().any(|l| l.starts_with("static inline") && l.contains(&format!(" {func}(")));
    if inline {
        return format!("{func}(&gpu0, &kgsp0)");
    }
    let Some((_, file, anchors, expr)) = OUT_OF_LINE.iter().find(|(name, ..)| *name == func) else {
        panic!("HAL `{item}` picks out-of-line {func}: this test does not know its value; read it and add it to OUT_OF_LINE");
    };
    let body = squash(function_body(&read(tree, file), func));
    for anchor in *anchors {
        assert!(body.contains(&squash(anchor)), "{func} in {file} no longer contains `{anchor}`");
    }
    (*expr).to_owned()
}

/// One per-chip parameter to check: the HAL item, its kind, and our value for a chip.
struct HalCheck {
    kind: &'static str,
    item: &'static str,
    ours: fn(&WprChipParams) -> u64,
}

const HAL_CHECKS: &[HalCheck] = &[
    HalCheck { kind: "function", item: "kgspGetNonWprHeapSize", ours: |p| p.non_wpr_heap_size },
    HalCheck { kind: "function", item: "kgspGetFrtsSize", ours: |p| p.frts_size },
    HalCheck { kind: "field", item: "fwHeapParamBaseSize", ours: |p| p.fw_heap_param_base_size },
    HalCheck { kind: "field", item: "fwHeapParamOsCarveoutSize", ours: |p| p.fw_heap_param_os_carveout_size },
    HalCheck { kind: "function", item: "kgspGetMinWprHeapSizeMB", ours: |p| p.min_wpr_heap_size_mb },
    HalCheck { kind: "function", item: "kgspGetMaxWprHeapSizeMB", ours: |p| p.max_wpr_heap_size_mb },
    HalCheck {
        kind: "function",
        item: "kgspGetPrescrubbedTopFbSize",
        ours: |p| p.prescrubbed_top_fb_size.unwrap_or(u64::MAX),
    },
    HalCheck { kind: "field", item: "bScrubberUcodeSupported", ours: |p| p.scrubber_ucode_supported as u64 },
];

/// RM expressions (not plain names) whose values the layout code uses.
fn expression_checks() -> Vec<(&'static str, u64)> {
    vec![
        ("DRF_SIZE(NV_PRAMIN)", gsp::fb_layout::NV_PRAMIN_SIZE),
        ("(NvU64)sizeof(GspFwWprMeta)", 256),
        ("(NvU64)(GSP_MSG_QUEUE_BYTES_TO_ELEMENTS(4097))", 2),
        (
            "(NvU64)LIBOS_INIT_ARGUMENTS_SIZE / sizeof(LibosMemoryRegionInitArgument)",
            gsp::fw::libos::LIBOS_INIT_ARGUMENTS_COUNT as u64,
        ),
    ]
}

/// The checksum test pattern: byte `i` is `(i * 131 + 7) & 0xff`.
fn pattern() -> Vec<u8> {
    (0..4096u32).map(|i| ((i * 131 + 7) & 0xff) as u8).collect()
}

/// Lengths `_checkSum32` is run over (multiples of 8: RM reads whole words).
const CHECKSUM_LENGTHS: &[usize] = &[8, 48, 80, 88, 1000, 4096];

// ---------------------------------------------------------------------------------------------
// The C program and its report.

#[derive(Default, Debug)]
struct Report {
    structs: HashMap<String, (u64, u64)>,
    fields: HashMap<(String, String), (u64, u64)>,
    values: HashMap<String, u64>,
}

/// Everything the C program is asked, keyed by the tag it prints.
struct Program {
    source: String,
    /// (tag, chip, HAL item) for each HAL value asked.
    hal: Vec<(String, String, &'static str)>,
}

fn c_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn build_program(tree: &Path) -> Program {
    let mut main = String::new();
    main.push_str("int main(void)\n{\n");
    main.push_str("    unsigned char *bytes = (unsigned char *)pattern64;\n");
    main.push_str(
        "    for (unsigned i = 0; i < sizeof(pattern64); i++) bytes[i] = (unsigned char)((i * 131 + 7) & 0xff);\n",
    );
    for s in STRUCT_LAYOUTS {
        let t = s.c_name;
        writeln!(main, "    printf(\"S %s %zu %zu\\n\", {}, sizeof({t}), _Alignof({t}));", c_string(t)).unwrap();
        for f in s.fields {
            let size = if f.size == 0 {
                format!("sizeof({t}) - offsetof({t}, {})", f.c_name)
            } else {
                format!("sizeof((({t} *)0)->{})", f.c_name)
            };
            writeln!(
                main,
                "    printf(\"F %s %s %zu %zu\\n\", {}, {}, offsetof({t}, {}), {size});",
                c_string(t),
                c_string(f.c_name),
                f.c_name
            )
            .unwrap();
        }
    }
    for c in all_constants() {
        writeln!(main, "    printf(\"V %s %llu\\n\", {}, (unsigned long long)({}));", c_string(c.c_name), c.c_name)
            .unwrap();
    }
    for (expr, _) in expression_checks() {
        writeln!(main, "    printf(\"V %s %llu\\n\", {}, (unsigned long long)({expr}));", c_string(expr)).unwrap();
    }
    for len in CHECKSUM_LENGTHS {
        let tag = format!("checksum:{len}");
        writeln!(
            main,
            "    printf(\"V %s %llu\\n\", {}, (unsigned long long)_checkSum32(pattern64, {len}));",
            c_string(&tag)
        )
        .unwrap();
    }
    let nvoc_c = read(tree, headers::KERNEL_GSP_NVOC_C.path);
    let nvoc_h = read(tree, headers::KERNEL_GSP_NVOC_H.path);
    let mut hal = Vec::new();
    for check in HAL_CHECKS {
        let branches = hal_branches(&nvoc_c, check.kind, check.item);
        for chip in Chipset::ALL {
            if WprChipParams::for_chipset(*chip).is_none() {
                continue;
            }
            let rhs = hal_pick(&branches, chip.name(), check.item);
            let expr = hal_expr(tree, &nvoc_h, check.item, rhs);
            let tag = format!("hal:{}:{}", check.item, chip.name());
            writeln!(main, "    printf(\"V %s %llu\\n\", {}, (unsigned long long)({expr}));", c_string(&tag)).unwrap();
            hal.push((tag, chip.name().to_owned(), check.item));
        }
    }
    main.push_str("    return 0;\n}\n");
    Program {
        // ASSERT_HOOKS: RM's assertion hooks, which _checkSum32's NV_ASSERT_CHECKED refers to.
        source: format!("{PRELUDE}{ASSERT_HOOKS}\n{main}"),
        hal,
    }
}

fn run_program(tree: &Path, program: &Program) -> Result<Report, String> {
    let stdout = try_compile_and_run("gsp_layout", &program.source, &rm_flags(tree))?;
    let mut report = Report::default();
    for line in stdout.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        let num = |s: &str| s.parse::<u64>().map_err(|e| format!("bad number in `{line}`: {e}"));
        match parts.as_slice() {
            ["S", name, size, align] => {
                report.structs.insert(name.to_string(), (num(size)?, num(align)?));
            }
            ["F", s, f, offset, size] => {
                report.fields.insert((s.to_string(), f.to_string()), (num(offset)?, num(size)?));
            }
            ["V", rest @ ..] if rest.len() >= 2 => {
                let (value, name) = rest.split_last().unwrap();
                report.values.insert(name.join(" "), num(value)?);
            }
            _ => return Err(format!("unexpected line from the C program: `{line}`")),
        }
    }
    Ok(report)
}

struct Checked {
    program: Program,
    report: Report,
}

/// The C program, compiled and run once for all tests of this file.
fn checked() -> &'static Checked {
    static CHECKED: OnceLock<Result<Checked, String>> = OnceLock::new();
    let result = CHECKED.get_or_init(|| {
        // A failure while preparing is kept as a message, so every test reports it.
        let built = std::panic::catch_unwind(|| {
            let tree = tree();
            let program = build_program(&tree);
            (tree, program)
        });
        let (tree, program) = built.map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "preparing the C program failed".into())
        })?;
        let report = run_program(&tree, &program)?;
        Ok(Checked { program, report })
    });
    match result {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[test]
fn struct_layouts_match_nvidia_headers() {
    let report = &checked().report;
    let mut problems = String::new();
    let mut fields = 0;
    for s in STRUCT_LAYOUTS {
        match report.structs.get(s.c_name) {
            Some(&(size, align)) => {
                if (size, align) != (s.size as u64, s.align as u64) {
                    writeln!(
                        problems,
                        "{} ({}): C sizeof {size} align {align}, Rust {} {}",
                        s.c_name, s.rust_name, s.size, s.align
                    )
                    .unwrap();
                }
            }
            None => writeln!(problems, "{}: not reported by the C program", s.c_name).unwrap(),
        }
        for f in s.fields {
            fields += 1;
            match report.fields.get(&(s.c_name.to_owned(), f.c_name.to_owned())) {
                Some(&(offset, size)) if (offset, size) == (f.offset as u64, f.size as u64) => {}
                Some(&(offset, size)) => writeln!(
                    problems,
                    "{}.{}: C offset {offset} size {size}, Rust offset {} size {}",
                    s.c_name, f.c_name, f.offset, f.size
                )
                .unwrap(),
                None => writeln!(problems, "{}.{}: not reported by the C program", s.c_name, f.c_name).unwrap(),
            }
        }
    }
    assert!(problems.is_empty(), "layouts differ from NVIDIA's headers:\n{problems}");
    assert!(STRUCT_LAYOUTS.len() >= 9 && fields >= 90, "{} structs, {fields} fields checked", STRUCT_LAYOUTS.len());
}

#[test]
fn constants_match_nvidia_headers() {
    let report = &checked().report;
    let mut problems = String::new();
    let mut expected: Vec<(String, u64)> = all_constants().map(|c| (c.c_name.to_owned(), c.value)).collect();
    expected.extend(expression_checks().into_iter().map(|(e, v)| (e.to_owned(), v)));
    for (name, ours) in &expected {
        match report.values.get(name) {
            Some(theirs) if theirs == ours => {}
            Some(theirs) => writeln!(problems, "{name}: NVIDIA {theirs:#x}, ours {ours:#x}").unwrap(),
            None => writeln!(problems, "{name}: not reported").unwrap(),
        }
    }
    assert!(problems.is_empty(), "constants differ from NVIDIA's headers:\n{problems}");
}

#[test]
fn checksum_matches_rm_check_sum32() {
    let report = &checked().report;
    let pattern = pattern();
    for &len in CHECKSUM_LENGTHS {
        let theirs = report.values[&format!("checksum:{len}")];
        assert_eq!(
            gsp::fw::msgq::checksum32(&pattern[..len]) as u64,
            theirs,
            "_checkSum32 over {len} bytes of the pattern"
        );
    }
}

#[test]
fn chip_parameters_match_rm_hal() {
    let Checked { program, report } = checked();
    let mut problems = String::new();
    for (tag, chip_name, item) in &program.hal {
        let chip = *Chipset::ALL.iter().find(|c| c.name() == chip_name).unwrap();
        let params = WprChipParams::for_chipset(chip).unwrap();
        let check = HAL_CHECKS.iter().find(|c| c.item == *item).unwrap();
        let ours = (check.ours)(&params);
        let theirs = report.values[tag];
        if ours != theirs {
            writeln!(problems, "{chip_name} {item}: RM {theirs:#x}, ours {ours:#x}").unwrap();
        }
    }
    // The layout function: which of RM's two each chip uses.
    let tree = tree();
    let nvoc_c = read(&tree, headers::KERNEL_GSP_NVOC_C.path);
    let branches = hal_branches(&nvoc_c, "function", "kgspCalculateFbLayout");
    for chip in Chipset::ALL {
        let Some(params) = WprChipParams::for_chipset(*chip) else {
            continue;
        };
        let rhs = hal_pick(&branches, chip.name(), "kgspCalculateFbLayout");
        let ours = match params.layout {
            FbLayoutFlavor::Tu102 => "&kgspCalculateFbLayout_TU102",
            FbLayoutFlavor::Gh100 => "&kgspCalculateFbLayout_GH100",
        };
        if rhs != ours {
            writeln!(problems, "{} layout: RM {rhs}, ours {ours}", chip.name()).unwrap();
        }
    }
    // Every chip RM 535 has a KernelGsp HAL for is one we have parameters for.
    for branch in &branches {
        for name in branch.chips.iter().flatten() {
            match Chipset::ALL.iter().find(|c| c.name() == name) {
                Some(c) if WprChipParams::for_chipset(*c).is_some() => {}
                _ => writeln!(problems, "RM lays out {name}, which has no WprChipParams").unwrap(),
            }
        }
    }
    assert!(problems.is_empty(), "per-chip WPR parameters differ from RM's HAL:\n{problems}");
}

/// Each structure and constant is found in the header it cites.
#[test]
fn citations_name_the_defining_header() {
    let tree = tree();
    let mut problems = String::new();
    for h in headers::ALL.iter().filter(|h| h.release == OGKM_PINNED) {
        if !tree.join(h.path).is_file() {
            writeln!(problems, "cited file missing: {}", h.path).unwrap();
        }
    }
    for s in STRUCT_LAYOUTS {
        let text = read(&tree, s.header.path);
        // `} NAME;` closes a typedef'd struct; `typedef OTHER NAME;` names a versioned one.
        if !text.contains(&format!(" {};", s.c_name)) {
            writeln!(problems, "{} is not defined in {}", s.c_name, s.header.path).unwrap();
        }
    }
    for c in all_constants() {
        let text = read(&tree, c.header.path);
        let found = if let Some(rpc) = c.c_name.strip_prefix("NV_VGPU_MSG_FUNCTION_") {
            text.contains(&format!(", {rpc})"))
        } else if let Some(event) = c.c_name.strip_prefix("NV_VGPU_MSG_EVENT_") {
            text.contains(&format!("E({event})")) || text.contains(&format!("E({event} "))
        } else {
            text.contains(&format!("#define {} ", c.c_name))
                || text.contains(&format!("#define {}\t", c.c_name))
                || text.contains(&format!("{},", c.c_name))
                || text.contains(&format!("{}\n", c.c_name))
        };
        if !found {
            writeln!(problems, "{} is not defined in {}", c.c_name, c.header.path).unwrap();
        }
    }
    assert!(problems.is_empty(), "{problems}");
}

/// The RM code the layout, radix3 and id8 functions follow still reads as they assume (the
/// values these snippets hold are not in any header the C program could print).
#[test]
fn rm_sources_read_as_followed() {
    let tree = tree();
    let anchors: &[(&Header, &str, &[&str])] = &[
        (
            &headers::KERNEL_GSP_TU102_C,
            "kgspCalculateFbLayout_TU102",
            &[
                "const NvU32 VBIOS_WORKSPACE_SIZE = 0x20000;",
                "pWprMeta->vgaWorkspaceOffset = (pWprMeta->fbSize - DRF_SIZE(NV_PRAMIN));",
                "vbiosReservedOffset = NV_MIN(mmuLockLo, pWprMeta->vgaWorkspaceOffset);",
                "NV_ALIGN_DOWN64(vbiosReservedOffset - kgspGetWprEndMargin(pGpu, pKernelGsp), 0x20000);",
                "pWprMeta->frtsOffset = pWprMeta->gspFwWprEnd - pWprMeta->frtsSize;",
                "NV_ALIGN_DOWN64(pWprMeta->frtsOffset - pWprMeta->sizeOfBootloader, 0x1000);",
                "NV_ALIGN_DOWN64(pWprMeta->bootBinOffset - pWprMeta->sizeOfRadix3Elf, 0x10000);",
                "kgspGetFwHeapSize(pGpu, pKernelGsp, pWprMeta->fbSize - pWprMeta->gspFwOffset);",
                "NV_ALIGN_DOWN64(pWprMeta->gspFwOffset - wprHeapSize, 0x100000);",
                "NV_ALIGN_DOWN64(pWprMeta->gspFwOffset - pWprMeta->gspFwHeapOffset, 0x100000);",
                "NV_ALIGN_DOWN64(pWprMeta->gspFwHeapOffset - sizeof *pWprMeta, 0x100000);",
                "NV_ALIGN_DOWN64(pWprMeta->gspFwWprStart - pWprMeta->nonWprHeapSize, 0x100000);",
                "pWprMeta->gspFwRsvdStart = pWprMeta->nonWprHeapOffset;",
            ],
        ),
        (
            &headers::KERNEL_GSP_GH100_C,
            "kgspCalculateFbLayout_GH100",
            &["pWprMeta->vgaWorkspaceSize = 128 * 1024;", "pWprMeta->gspFwHeapSize = kgspGetFwHeapSize(pGpu, pKernelGsp, 0);"],
        ),
        (
            &headers::KERNEL_GSP_C,
            "_kgspCalculateFwHeapSize",
            &[
                "NV_ALIGN_UP64(fbSize, 1 << 30) >> 30",
                "pKernelGsp->fwHeapParamOsCarveoutSize + pKernelGsp->fwHeapParamBaseSize + NV_ALIGN_UP(GSP_FW_HEAP_PARAM_SIZE_PER_GB_FB * fbSizeGB, 1 << 20) + NV_ALIGN_UP(GSP_FW_HEAP_PARAM_CLIENT_ALLOC_SIZE, 1 << 20);",
                "heapSize = NV_MAX(heapSize, (NvU64)minGspFwHeapSizeMB << 20);",
                "heapSize = NV_MIN(heapSize, (NvU64)maxGspFwHeapSizeMB << 20);",
            ],
        ),
        (
            &headers::KERNEL_GSP_C,
            "kgspGetFwHeapSize_IMPL",
            &[
                "if (!pKernelGsp->bScrubberUcodeSupported && (posteriorFbSize != 0))",
                "maxScrubbedHeapSizeMB = (NvU32)((prescrubbedSize - posteriorFbSize) >> 20);",
                "return _kgspCalculateFwHeapSize(pGpu, pKernelGsp, maxScrubbedHeapSizeMB);",
            ],
        ),
        (
            &headers::KERNEL_GSP_C,
            "kgspCreateRadix3_IMPL",
            &[
                "const NvU64 entriesLog2 = LIBOS_MEMORY_REGION_RADIX_PAGE_LOG2 - 3;",
                "} radix3[4];",
                "radix3[i - 1].nPages = ((radix3[i].nPages - 1) >> entriesLog2) + 1;",
                "radix3[i].offset = nPages << LIBOS_MEMORY_REGION_RADIX_PAGE_LOG2;",
                "NV_ASSERT_OR_RETURN(radix3[0].nPages == 1, NV_ERR_OUT_OF_RANGE);",
                "(RmPhysAddr *)(pRadix3Buf + radix3[i].offset));",
                "(RmPhysAddr *)(pRadix3Buf + radix3[2].offset));",
            ],
        ),
        (&headers::KERNEL_GSP_C, "_kgspGenerateInitArgId", &["id = (id << 8) | c;"]),
        (
            &headers::MESSAGE_QUEUE_CPU,
            "GspMsgQueueSendCommand",
            &[
                "portMemSet(pSrc + uElementSize, 0, 8 - (uElementSize & 7));",
                "pCQE->elemCount = GSP_MSG_QUEUE_BYTES_TO_ELEMENTS(uElementSize);",
                "pCQE->checkSum = 0;",
                "pCQE->checkSum = _checkSum32(pSrc, uElementSize);",
            ],
        ),
        (
            &headers::RPC_COMMON,
            "rpcWriteCommonHeader",
            &[
                "vgpu_rpc_message_header_v->rpc_result = NV_VGPU_MSG_RESULT_RPC_PENDING;",
                "vgpu_rpc_message_header_v->length = sizeof(rpc_message_header_v) + paramLength;",
            ],
        ),
        (&headers::MSGQ_C, "msgqTxCreate", &["pQueue->tx.msgCount = (NvU32)((size - pQueue->tx.entryOff) / msgSize);"]),
    ];
    let mut problems = String::new();
    for (file, func, snippets) in anchors {
        let body = squash(function_body(&read(&tree, file.path), func));
        for s in *snippets {
            if !body.contains(&squash(s)) {
                writeln!(problems, "{} {func}: no longer contains `{s}`", file.path).unwrap();
            }
        }
    }
    assert!(problems.is_empty(), "RM sources differ from what nvgpu::gsp follows:\n{problems}");
}
