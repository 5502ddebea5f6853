//! nvgpu::payload against NVIDIA's own tools: PTX from clang-19 (`tests/payload_src/kernels.cu`),
//! cubins from ptxas 12.9 for sm_75, 80, 86, 89, 90, 100, 120, fatbins from libnvfatbin 12.9
//! (through `tests/payload_src/mkfatbin.py`), and cuobjdump 13.4 as the reference reader.
//!
//! Checked per SM: the SM decoded from `e_flags` (against cuobjdump's header line), kernel names,
//! every parameter's offset and size (against the signatures and cuobjdump's KPARAM_INFO),
//! registers and barriers (against `ptxas -v`), static shared memory and constant bank 0 size
//! (against `cuobjdump -res-usage`), the parameter block's place in bank 0, `.maxntid`, every
//! EIATTR name this driver knows (record by record against `cuobjdump -elf`), and the global
//! variables' R_CUDA_64 relocations, applied. Per fatbin (plain, LZ4, zstd): each entry's kind,
//! SM, name and flags against what was written and against `cuobjdump -lelf -lptx`, the cubin
//! bytes and the PTX text equal to the inputs, and image selection for every chip.
//!
//! The tools come from `scripts/fetch-cuda-tools.sh` (PyPI wheels, pinned). Without them this
//! test FAILS; set `NVGPU_SKIP_CUDA_TOOLS=1` to skip it knowingly. `NVGPU_CUDA_TOOLS` overrides
//! the tools directory (default `target/cuda-tools`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use nvgpu::chip::Chipset;
use nvgpu::payload::cubin::reloc;
use nvgpu::payload::fatbin::{Compression, EntryFlags};
use nvgpu::payload::nvinfo;
use nvgpu::payload::{Cubin, EntryKind, Error, Fatbin, Image, Module};

const SMS: &[u32] = &[75, 80, 86, 89, 90, 100, 120];

struct Tools {
    ptxas: PathBuf,
    cuobjdump: PathBuf,
    libnvfatbin: PathBuf,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tools() -> Option<Tools> {
    let dir =
        std::env::var_os("NVGPU_CUDA_TOOLS").map(PathBuf::from).unwrap_or_else(|| root().join("target/cuda-tools"));
    let t = Tools {
        ptxas: dir.join("nvcc/nvidia/cuda_nvcc/bin/ptxas"),
        cuobjdump: dir.join("cuobjdump/nvidia/cu13/bin/cuobjdump"),
        libnvfatbin: dir.join("nvfatbin/nvidia/nvfatbin/lib/libnvfatbin.so.12"),
    };
    let missing: Vec<_> = [&t.ptxas, &t.cuobjdump, &t.libnvfatbin].into_iter().filter(|p| !p.exists()).collect();
    if missing.is_empty() {
        return Some(t);
    }
    if std::env::var("NVGPU_SKIP_CUDA_TOOLS").is_ok_and(|v| v == "1") {
        tests::skips::record(
            "payload_real",
            &format!("cubins and fatbins not checked against NVIDIA's tools: NVGPU_SKIP_CUDA_TOOLS=1 and {missing:?} missing"),
        );
        return None;
    }
    panic!(
        "NVIDIA's CUDA tools are missing: {missing:?}.\nRun `scripts/fetch-cuda-tools.sh` from the workspace root \
         (PyPI wheels, pinned), or set NVGPU_SKIP_CUDA_TOOLS=1 to skip this test knowingly."
    );
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// A folder of the test's own: the tests run in parallel and write files of the same names
/// (`k80.ptx`, `clang80.ptx`), which a shared folder would let one test read half-written.
fn work_dir(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("payload_real").join(test);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// PTX for `sm`: clang-19 for up to sm_90; for later SMs clang-19 has no target, so the sm_90
/// text is retargeted (same instructions; PTX ISA 8.7 is the first with sm_120).
fn ptx_for(sm: u32, dir: &Path) -> PathBuf {
    let src = root().join("tests/payload_src/kernels.cu");
    let out = dir.join(format!("k{sm}.ptx"));
    let clang_sm = sm.min(90);
    let clang_out = dir.join(format!("clang{clang_sm}.ptx"));
    run(Command::new("/usr/bin/clang-19")
        .args(["-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib"])
        .arg(format!("--cuda-gpu-arch=sm_{clang_sm}"))
        .args(["-O2", "-S"])
        .arg(&src)
        .arg("-o")
        .arg(&clang_out));
    let text = std::fs::read_to_string(&clang_out).unwrap();
    let text = if sm > 90 {
        text.lines()
            .map(|l| {
                if l.starts_with(".version") {
                    ".version 8.7".to_owned()
                } else if l.starts_with(".target sm_90") {
                    format!(".target sm_{sm}")
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    } else {
        text
    };
    std::fs::write(&out, text).unwrap();
    out
}

#[derive(Debug, Default, Clone, PartialEq)]
struct PtxasUsage {
    registers: u32,
    barriers: u32,
    smem: u64,
}

/// `ptxas -v` lines: "Compiling entry function 'saxpy'" then "Used 10 registers, used 0 barriers, 1024 bytes smem, ...".
fn parse_ptxas_v(text: &str) -> BTreeMap<String, PtxasUsage> {
    let mut out = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = rest.split('\'').next().map(str::to_owned);
        } else if let (Some(name), Some(rest)) = (&current, line.split("Used ").nth(1)) {
            let mut usage = PtxasUsage::default();
            for part in rest.split(',') {
                let words: Vec<&str> = part.split_whitespace().collect();
                match words.as_slice() {
                    [n, "registers"] => usage.registers = n.parse().unwrap(),
                    ["used", n, "barriers"] => usage.barriers = n.parse().unwrap(),
                    [n, "bytes", "smem"] => usage.smem = n.parse().unwrap(),
                    _ => {}
                }
            }
            out.insert(name.clone(), usage);
        }
    }
    out
}

/// `cuobjdump -res-usage`: per function, SHARED and CONSTANT[0].
fn parse_res_usage(text: &str) -> BTreeMap<String, (u32, u64, u64)> {
    let mut out = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(name) = line.trim().strip_prefix("Function ") {
            current = Some(name.trim_end_matches(':').to_owned());
        } else if let Some(name) = &current {
            let field = |key: &str| {
                line.split_whitespace().find_map(|w| w.strip_prefix(key)).map(|v| v.parse::<u64>().unwrap())
            };
            if let (Some(reg), Some(shared), Some(c0)) = (field("REG:"), field("SHARED:"), field("CONSTANT[0]:")) {
                out.insert(name.clone(), (reg as u32, shared, c0));
            }
        }
    }
    out
}

/// `cuobjdump -elf`: the attribute names of each `.nv.info*` section, in order.
fn parse_nv_info_names(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with(".nv.info") {
            current = Some(line.trim().to_owned());
            out.entry(line.trim().to_owned()).or_default();
        } else if line.starts_with('.') {
            current = None;
        } else if let (Some(section), Some(name)) = (&current, line.trim().strip_prefix("Attribute:")) {
            out.get_mut(section).unwrap().push(name.trim().to_owned());
        }
    }
    out
}

/// Expected (offset, size) per parameter, from the C signatures in kernels.cu and the PTX
/// parameter alignment rules (each parameter aligned to its size).
fn expected_params(kernel: &str) -> &'static [(u16, u16)] {
    match kernel {
        "saxpy" => &[(0, 4), (4, 4), (8, 8), (16, 8)],
        "reverse_block" => &[(0, 8), (8, 1), (16, 8), (24, 2)],
        "empty_kernel" => &[],
        "bump" => &[(0, 4)],
        other => panic!("unexpected kernel {other}"),
    }
}

#[test]
fn cubins_from_ptxas_match_nvidia_tools() {
    let Some(tools) = tools() else { return };
    let dir = work_dir("cubins_from_ptxas_match_nvidia_tools");
    let mut names_seen = std::collections::BTreeSet::new();
    for &sm in SMS {
        let ptx = ptx_for(sm, &dir);
        let cubin_path = dir.join(format!("k{sm}.cubin"));
        let log = run(Command::new(&tools.ptxas)
            .arg(format!("-arch=sm_{sm}"))
            .arg("-v")
            .arg(&ptx)
            .arg("-o")
            .arg(&cubin_path));
        let usage = parse_ptxas_v(&log);
        let bytes = std::fs::read(&cubin_path).unwrap();
        let cubin = Cubin::parse(&bytes).unwrap_or_else(|e| panic!("sm_{sm}: {e}"));

        let header = run(Command::new(&tools.cuobjdump).arg("-elf").arg(&cubin_path));
        let first = header.lines().find(|l| l.contains("sm=")).unwrap();
        assert!(first.contains(&format!("sm={sm},")), "sm_{sm}: cuobjdump says {first}");
        assert_eq!(cubin.sm, sm);

        let mut names: Vec<_> = cubin.kernels.iter().map(|k| k.name.clone()).collect();
        names.sort();
        assert_eq!(names, ["bump", "empty_kernel", "reverse_block", "saxpy"], "sm_{sm}");

        let res = parse_res_usage(&run(Command::new(&tools.cuobjdump).arg("-res-usage").arg(&cubin_path)));
        let info_names = parse_nv_info_names(&header);
        for k in &cubin.kernels {
            let what = format!("sm_{sm} {}", k.name);
            let u = &usage[&k.name];
            assert_eq!(k.registers, Some(u.registers), "{what}: registers vs ptxas -v");
            assert_eq!(k.barriers, u.barriers, "{what}: barriers vs ptxas -v");
            let (reg, shared, c0) = res[&k.name];
            assert_eq!(k.registers, Some(reg), "{what}: registers vs cuobjdump");
            assert_eq!(k.shared_size, shared, "{what}: shared vs cuobjdump -res-usage");
            assert!(k.shared_size >= u.smem, "{what}: shared below ptxas's smem");
            assert_eq!(k.const0_size, c0, "{what}: constant bank 0 vs cuobjdump -res-usage");
            let params: Vec<_> = k.params.iter().map(|p| (p.offset, p.size)).collect();
            assert_eq!(params, expected_params(&k.name), "{what}: parameters");
            assert!(k.params.iter().all(|p| p.in_cbank && p.cbank == 0x1f), "{what}: {:?}", k.params);
            let end = expected_params(&k.name).last().map_or(0, |(o, s)| o + s);
            assert_eq!(k.param_size, end, "{what}: parameter block size");
            if end > 0 {
                let base = u64::from(k.param_base.expect("PARAM_CBANK"));
                assert_eq!(base + u64::from(k.param_size), k.const0_size, "{what}: parameters end bank 0");
                // Where the launch path puts parameters for the family that runs this SM.
                use nvgpu::hal::Family;
                let family = match sm {
                    75 => Family::Turing,
                    80 => Family::Ga100,
                    86 => Family::Ga10x,
                    89 => Family::Ada,
                    90 => Family::Hopper,
                    100 => Family::BlackwellGb10x,
                    _ => Family::BlackwellGb20x,
                };
                assert_eq!(
                    base,
                    u64::from(nvgpu::compute::launch::param_cbank_offset(family)),
                    "{what}: EIATTR_PARAM_CBANK vs the launch path's parameter offset"
                );
            }
            assert_eq!(k.max_threads, (k.name == "saxpy").then_some([256, 1, 1]), "{what}: .maxntid");
            assert!(!k.code.is_empty() && k.code.len() % 16 == 0, "{what}: code");
            assert!(
                !k.exit_offsets.is_empty() && k.exit_offsets.iter().all(|&o| (o as usize) < k.code.len()),
                "{what}"
            );

            let theirs = &info_names[&format!(".nv.info.{}", k.name)];
            assert_eq!(theirs.len(), k.attributes.len(), "{what}: record count vs cuobjdump");
            for (ours, theirs) in k.attributes.iter().zip(theirs) {
                if let Some(name) = nvinfo::attribute_name(ours.attribute) {
                    assert_eq!(name, theirs, "{what}: attribute {:#x}", ours.attribute);
                    names_seen.insert(name);
                }
            }
        }

        let theirs = &info_names[".nv.info"];
        assert_eq!(theirs.len(), cubin.global_attributes.len(), "sm_{sm}: .nv.info record count vs cuobjdump");
        for (ours, theirs) in cubin.global_attributes.iter().zip(theirs) {
            if let Some(name) = nvinfo::attribute_name(ours.attribute) {
                assert_eq!(name, theirs, "sm_{sm} .nv.info: attribute {:#x}", ours.attribute);
                names_seen.insert(name);
            }
        }

        // `bump` reaches `counter` and `table` through .nv.constant4, patched by R_CUDA_64.
        let c4 = cubin.data_sections.iter().find(|s| s.name == ".nv.constant4").expect(".nv.constant4");
        let relocs: Vec<_> = cubin.relocations.iter().filter(|r| r.target_section == c4.index).collect();
        let mut syms: Vec<_> = relocs.iter().map(|r| (r.symbol.as_str(), r.r_type)).collect();
        syms.sort();
        assert_eq!(syms, [("counter", reloc::R_CUDA_64), ("table", reloc::R_CUDA_64)], "sm_{sm}");
        let reloc_listing = header.lines().filter(|l| l.contains("R_CUDA_")).count();
        assert!(reloc_listing >= relocs.len(), "sm_{sm}: cuobjdump lists fewer relocations");
        let global = cubin.data_sections.iter().find(|s| s.name == ".nv.global").expect(".nv.global");
        let init = cubin.data_sections.iter().find(|s| s.name == ".nv.global.init").expect(".nv.global.init");
        assert_eq!(init.data, [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]);
        assert!(global.nobits && global.size == 4);
        let mut bank = c4.data.clone();
        let (g, i) = (global.index, init.index);
        let n = cubin
            .relocate(c4.index, &mut bank, &|s| {
                (s == g).then_some(0x10_0000_0000).or((s == i).then_some(0x20_0000_0000))
            })
            .unwrap();
        assert_eq!(n, 2);
        for r in relocs {
            let at = r.offset as usize;
            let value = u64::from_le_bytes(bank[at..at + 8].try_into().unwrap());
            let expected = if r.symbol == "counter" { 0x10_0000_0000 } else { 0x20_0000_0000 } + r.symbol_value;
            assert_eq!(value, expected, "sm_{sm}: {}", r.symbol);
        }
    }
    for (_, name) in nvinfo::ATTRIBUTES {
        assert!(names_seen.contains(name), "{name} is declared but never confirmed by cuobjdump");
    }
}

/// The PTX's statements: each line without `//` comments and surrounding whitespace, empty
/// lines dropped.
fn ptx_statements(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

/// One entry as `cuobjdump -ptx` describes it.
struct ListedEntry {
    kind: &'static str,
    fields: Vec<(String, String)>,
    compressed: bool,
    /// The PTX text (PTX entries).
    text: String,
}

impl ListedEntry {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

fn parse_fatbin_listing(text: &str) -> Vec<ListedEntry> {
    let mut out: Vec<ListedEntry> = Vec::new();
    let mut in_text = false;
    for line in text.lines() {
        let kind = match line {
            "Fatbin elf code:" => Some("elf"),
            "Fatbin ptx code:" => Some("ptx"),
            _ => None,
        };
        if let Some(kind) = kind {
            out.push(ListedEntry { kind, fields: Vec::new(), compressed: false, text: String::new() });
            in_text = false;
            continue;
        }
        let Some(entry) = out.last_mut() else { continue };
        if in_text {
            entry.text.push_str(line);
            entry.text.push('\n');
        } else if line == "compressed" {
            entry.compressed = true;
        } else if let Some((k, v)) = line.split_once(" = ") {
            entry.fields.push((k.trim().to_owned(), v.trim().to_owned()));
            in_text = k.trim() == "ptxasOptions";
        } else if let Some(k) = line.strip_suffix(" =") {
            entry.fields.push((k.trim().to_owned(), String::new()));
            in_text = k.trim() == "ptxasOptions";
        }
    }
    for entry in &mut out {
        entry.text = entry.text.trim_start_matches('\n').to_owned();
    }
    out
}

#[test]
fn fatbins_from_libnvfatbin_match_inputs_and_cuobjdump() {
    let Some(tools) = tools() else { return };
    let dir = work_dir("fatbins_from_libnvfatbin_match_inputs_and_cuobjdump");
    let mut images = Vec::new();
    for &sm in SMS {
        let ptx = ptx_for(sm, &dir);
        let cubin = dir.join(format!("fb{sm}.cubin"));
        run(Command::new(&tools.ptxas).arg(format!("-arch=sm_{sm}")).arg(&ptx).arg("-o").arg(&cubin));
        images.push(format!("cubin:{sm}:{}", cubin.display()));
    }
    let ptx90 = ptx_for(90, &dir);
    images.push(format!("ptx:90:{}", ptx90.display()));
    let ptx_text = std::fs::read_to_string(&ptx90).unwrap();

    for (label, options, compression) in [
        ("plain", &["-64", "-compress=false"][..], Compression::None),
        ("lz4", &["-64", "-compress-all"][..], Compression::Lz4),
        ("zstd", &["-64", "-compress-all", "-compress-mode=size"][..], Compression::Zstd),
    ] {
        let out = dir.join(format!("{label}.fatbin"));
        let mut cmd = Command::new("python3");
        cmd.arg(root().join("tests/payload_src/mkfatbin.py")).arg(&tools.libnvfatbin).arg(&out);
        for o in options {
            cmd.args(["-o", o]);
        }
        run(cmd.args(&images));
        let data = std::fs::read(&out).unwrap();
        let fb = Fatbin::parse(&data).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(fb.entries.len(), SMS.len() + 1, "{label}");

        let blocks = parse_fatbin_listing(&run(Command::new(&tools.cuobjdump).arg("-ptx").arg(&out)));
        assert_eq!(blocks.len(), fb.entries.len(), "{label}: cuobjdump lists another number of entries");
        for (i, (entry, block)) in fb.entries.iter().zip(&blocks).enumerate() {
            let what = format!("{label} entry {i}");
            assert_eq!(entry.compression, compression, "{what}");
            assert!(
                entry.flags.contains(EntryFlags::ADDRESS_64 | EntryFlags::HOST_LINUX),
                "{what}: {:#x}",
                entry.flags.0
            );
            // Against cuobjdump's description of the same entry.
            let kind = if entry.kind == EntryKind::Ptx { "ptx" } else { "elf" };
            assert_eq!(block.kind, kind, "{what}");
            assert_eq!(block.get("arch"), Some(format!("sm_{}", entry.sm).as_str()), "{what}");
            assert_eq!(
                block.get("code version"),
                Some(format!("[{},{}]", entry.version.0, entry.version.1).as_str()),
                "{what}"
            );
            assert_eq!(block.get("identifier"), Some(String::from_utf8_lossy(entry.name).as_ref()), "{what}");
            assert_eq!(block.get("host"), Some("linux"), "{what}");
            assert_eq!(block.get("compile_size"), Some("64bit"), "{what}");
            assert_eq!(block.compressed, compression != Compression::None, "{what}");
            if compression == Compression::Zstd {
                assert!(matches!(entry.payload(), Err(Error::UnsupportedCompression { codec: "zstd", .. })), "{what}");
                continue;
            }
            match entry.kind {
                EntryKind::Elf => {
                    let sm = SMS[i];
                    assert_eq!(entry.sm, sm, "{what}");
                    let input = std::fs::read(dir.join(format!("fb{sm}.cubin"))).unwrap();
                    let payload = entry.payload().unwrap();
                    assert_eq!(&payload[..input.len()], &input[..], "{what}: cubin bytes");
                    assert!(payload[input.len()..].iter().all(|&b| b == 0), "{what}: padding");
                    let abi = if sm >= 100 { 8 } else { 7 };
                    assert_eq!(entry.version, (1, abi), "{what}: ELF ABI version");
                }
                EntryKind::Ptx => {
                    assert_eq!(entry.sm, 90);
                    // libnvfatbin stores PTX with comments, blank lines and indentation removed:
                    // the text must be the input's statements, and what cuobjdump extracts.
                    let ours = String::from_utf8(entry.ptx_text().unwrap()).unwrap();
                    assert_eq!(ptx_statements(&ours), ptx_statements(&ptx_text), "{what}: PTX statements");
                    assert_eq!(ours.trim(), block.text.trim(), "{what}: PTX text vs cuobjdump -ptx");
                    assert_eq!(entry.version, (7, 8), "{what}: PTX ISA version (.version 7.8)");
                }
                EntryKind::Other(k) => panic!("{what}: kind {k}"),
            }
        }
        if compression == Compression::Zstd {
            assert!(Module::from_fatbin(&fb).is_err());
            continue;
        }
        let module = Module::load(&data).unwrap();
        for &chip in Chipset::ALL {
            match module.select(chip).unwrap() {
                Image::Sass(c) => assert_eq!(c.sm, chip.sm_version(), "{chip}"),
                Image::Ptx(p) => {
                    panic!("{chip}: PTX chosen though SASS for sm_{} exists ({})", chip.sm_version(), p.sm)
                }
            }
        }
        // Without SASS, sm_90 and later take the sm_90 PTX; Turing..Ada have nothing to run.
        let ptx_only = Module { cubins: Vec::new(), ptx: module.ptx.clone() };
        assert!(matches!(ptx_only.select(Chipset::GH100), Ok(Image::Ptx(p)) if p.sm == 90));
        assert!(matches!(ptx_only.select(Chipset::AD102), Err(Error::WrongArchitecture { sm: 89, .. })));
    }
}
