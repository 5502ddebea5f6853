//! Seeds for the fuzz targets of [`crate::fuzz`], taken from the real artifacts the project
//! tests against (VBIOS dumps, ACPI tables of real servers, NVIDIA's firmware files as Debian
//! ships them, the payloads' PTX and cubins) and, for formats that only exist in the driver's
//! memory at run time (queue records, fault packets, pushbuffers), built by the driver's and the
//! model's own encoders. Nothing here is committed: `cargo xtask fuzz` writes the seeds under
//! `target/fuzz/seeds/` before each run.

use std::path::{Path, PathBuf};

use nvgpu::ce::{CeAddress, CeAperture, CeClass, CeEncoder, MemsetPattern, Pipelining};
use nvgpu::firmware::GspElf;
use nvgpu::gsp::fw::msgq::{seal_element, GspMsgQueueElement, MsgqTxHeader};
use nvgpu::gsp::fw::rpc::{RpcEvent, RpcFunction, RpcMessageHeader, NV_VGPU_MSG_SIGNATURE_VALID, RPC_HEADER_VERSION};
use nvgpu::host::{HostClass, PushBuffer};
use sim::engine_mem::{FlatMemory, PhysAddr, PhysAperture};
use sim::fault_buffer::{FaultRecord, ReplayableFaultBuffer};

/// One seed: a file name and its bytes.
pub type Seed = (String, Vec<u8>);

/// The seeds of `target`, and a line for each source of seeds that was not there (real data
/// not fetched, a compiler missing) so that the caller can say what its run lacked.
pub fn seeds(target: &str) -> (Vec<Seed>, Vec<String>) {
    let mut out = Seeds::default();
    match target {
        "vbios" => out.files(&shared("testdata/vbios"), |n| n.ends_with(".rom"), "real VBIOS dumps"),
        "firmware" => firmware(&mut out),
        "payload" => payloads(&mut out),
        "ptx" => ptx(&mut out),
        "acpi_table" => acpi_tables(&mut out),
        "acpi_platform" => acpi_platform(&mut out),
        "gsp_queue" => gsp_queue(&mut out),
        "gsp_rpc" => gsp_rpc(&mut out),
        "gsp_log" => gsp_log(&mut out),
        "fault_buffer" => fault_buffer(&mut out),
        "pushbuffer" => pushbuffer(&mut out),
        "fsp" => fsp(&mut out),
        "edid" => edids(&mut out),
        other => out.missing.push(format!("no seeds for unknown target {other}")),
    }
    (out.seeds, out.missing)
}

#[derive(Default)]
struct Seeds {
    seeds: Vec<Seed>,
    missing: Vec<String>,
}

impl Seeds {
    fn add(&mut self, name: impl Into<String>, bytes: Vec<u8>) {
        self.seeds.push((name.into(), bytes));
    }

    /// Every file of `dir` (not recursive) whose name passes `keep`, sorted by name.
    fn files(&mut self, dir: &Path, keep: impl Fn(&str) -> bool, what: &str) {
        let mut found = 0;
        for path in sorted_files(dir) {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if !keep(&name) {
                continue;
            }
            if let Ok(bytes) = std::fs::read(&path) {
                self.add(name, bytes);
                found += 1;
            }
        }
        if found == 0 {
            self.missing.push(format!("{what}: nothing in {}", dir.display()));
        }
    }
}

fn sorted_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn shared(rel: &str) -> PathBuf {
    root().join("../shared").join(rel)
}

fn real_data(rel: &str) -> PathBuf {
    root().join("target/real-data").join(rel)
}

/// NVIDIA's small firmware files (booters, bootloaders, FMC parts) as extracted from the 535
/// sources, and each GSP-RM ELF rebuilt with its sections cut to 4 KiB.
fn firmware(out: &mut Seeds) {
    let extracted = real_data("extracted-535.261.03/nvidia");
    let mut found = 0;
    for chip in sorted_dirs(&extracted) {
        let chip_name = chip.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for path in sorted_files(&chip.join("gsp")) {
            let Ok(bytes) = std::fs::read(&path) else { continue };
            if bytes.len() > 256 << 10 {
                continue;
            }
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            out.add(format!("{chip_name}-{name}"), bytes);
            found += 1;
        }
    }
    if found == 0 {
        out.missing.push(format!("booters and bootloaders: nothing in {}", extracted.display()));
    }
    let gsp = real_data("firmware-nvidia-gsp/lib/firmware/nvidia/535.261.03");
    let mut elves = 0;
    for path in sorted_files(&gsp) {
        let Ok(bytes) = std::fs::read(&path) else { continue };
        if let Some(small) = shrink_elf(&bytes, 4096) {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            out.add(format!("small-{name}"), small);
            elves += 1;
        }
    }
    if elves == 0 {
        out.missing.push(format!("GSP-RM ELF files: nothing readable in {}", gsp.display()));
    }
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// A new ELF64 (RISC-V, little-endian) with the sections of the GSP-RM container `elf`, each
/// cut to `keep` bytes: the container's structure without its 30 MB of image.
pub fn shrink_elf(elf: &[u8], keep: usize) -> Option<Vec<u8>> {
    let parsed = GspElf::parse(elf).ok()?;
    let mut names = vec![0u8];
    let mut body = Vec::new();
    // (name offset, data offset in body, size)
    let mut sections = Vec::new();
    for section in parsed.sections() {
        let Some(offset) = section.offset else { continue };
        let start = usize::try_from(offset).ok()?;
        let len = usize::try_from(section.size).ok()?.min(keep);
        let data = elf.get(start..start.checked_add(len)?)?;
        let name_at = names.len();
        names.extend_from_slice(section.name.as_bytes());
        names.push(0);
        while body.len() % 8 != 0 {
            body.push(0);
        }
        sections.push((name_at, body.len(), data.len()));
        body.extend_from_slice(data);
    }
    let shstrtab_name = names.len();
    names.extend_from_slice(b".shstrtab\0");
    while body.len() % 8 != 0 {
        body.push(0);
    }
    let names_at = body.len();
    body.extend_from_slice(&names);
    while body.len() % 8 != 0 {
        body.push(0);
    }
    const EHDR: usize = 64;
    const SHDR: usize = 64;
    let shoff = EHDR + body.len();
    let shnum = sections.len() + 2;
    let mut out = Vec::with_capacity(shoff + shnum * SHDR);
    out.extend_from_slice(b"\x7fELF\x02\x01\x01\0");
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&1u16.to_le_bytes()); // ET_REL
    out.extend_from_slice(&0xf3u16.to_le_bytes()); // EM_RISCV
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes()); // e_entry
    out.extend_from_slice(&0u64.to_le_bytes()); // e_phoff
    out.extend_from_slice(&(shoff as u64).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    out.extend_from_slice(&(EHDR as u16).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes()); // e_phentsize
    out.extend_from_slice(&0u16.to_le_bytes()); // e_phnum
    out.extend_from_slice(&(SHDR as u16).to_le_bytes());
    out.extend_from_slice(&(shnum as u16).to_le_bytes());
    out.extend_from_slice(&((shnum - 1) as u16).to_le_bytes());
    out.extend_from_slice(&body);
    let mut shdr = |name: usize, kind: u32, offset: usize, size: usize| {
        out.extend_from_slice(&(name as u32).to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // flags
        out.extend_from_slice(&0u64.to_le_bytes()); // addr
        out.extend_from_slice(&(offset as u64).to_le_bytes());
        out.extend_from_slice(&(size as u64).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes()); // link
        out.extend_from_slice(&0u32.to_le_bytes()); // info
        out.extend_from_slice(&1u64.to_le_bytes()); // addralign
        out.extend_from_slice(&0u64.to_le_bytes()); // entsize
    };
    shdr(0, 0, 0, 0);
    for (name, at, size) in &sections {
        shdr(*name, 1, EHDR + at, *size); // SHT_PROGBITS
    }
    shdr(shstrtab_name, 3, EHDR + names_at, names.len()); // SHT_STRTAB
    Some(out)
}

/// The payloads' PTX, and cubins NVIDIA's ptxas makes of some of it (`scripts/fetch-cuda-tools.sh`
/// fetches ptxas; set `NVGPU_CUDA_TOOLS` to use another copy).
fn payloads(out: &mut Seeds) {
    for (name, sm) in [("saxpy", "sm_90"), ("managed", "sm_80"), ("warp", "sm_75")] {
        out.add(format!("{name}.{sm}.ptx"), crate::ptx_build::ptx(name, sm).into_bytes());
    }
    let tools =
        std::env::var_os("NVGPU_CUDA_TOOLS").map(PathBuf::from).unwrap_or_else(|| root().join("target/cuda-tools"));
    let ptxas = tools.join("nvcc/nvidia/cuda_nvcc/bin/ptxas");
    if !ptxas.is_file() {
        out.missing.push(format!("payload cubins: no ptxas at {} (scripts/fetch-cuda-tools.sh)", ptxas.display()));
        return;
    }
    let work = std::env::temp_dir().join(format!("fuzz-seeds-cubins-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&work);
    let mut made = 0;
    for (name, sm) in [("saxpy", "sm_90"), ("matmul", "sm_80"), ("histogram", "sm_75"), ("reduce", "sm_89")] {
        let ptx = work.join(format!("{name}.{sm}.ptx"));
        let cubin = work.join(format!("{name}.{sm}.cubin"));
        if std::fs::write(&ptx, crate::ptx_build::ptx(name, sm)).is_err() {
            continue;
        }
        let status =
            std::process::Command::new(&ptxas).arg(format!("-arch={sm}")).arg(&ptx).arg("-o").arg(&cubin).status();
        if status.is_ok_and(|s| s.success()) {
            if let Ok(bytes) = std::fs::read(&cubin) {
                out.add(format!("{name}.{sm}.cubin"), bytes);
                made += 1;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    if made == 0 {
        out.missing.push(format!("payload cubins: {} made none", ptxas.display()));
    }
}

/// Every payload's PTX (`payloads/*.cu`), as clang makes it for Turing and Hopper.
fn ptx(out: &mut Seeds) {
    let dir = crate::ptx_build::payload_dir();
    let mut names: Vec<String> = sorted_files(&dir)
        .iter()
        .filter_map(|p| p.file_name()?.to_str()?.strip_suffix(".cu").map(str::to_owned))
        .collect();
    names.sort();
    for name in &names {
        for sm in ["sm_75", "sm_90"] {
            out.add(format!("{name}.{sm}.ptx"), crate::ptx_build::ptx(name, sm).into_bytes());
        }
    }
    if names.is_empty() {
        out.missing.push(format!("payload sources: nothing in {}", dir.display()));
    }
}

fn acpi_servers() -> Vec<PathBuf> {
    sorted_dirs(&shared("testdata/acpi"))
}

/// Every table of the three real servers, as is (mode byte 0) and with the checksum fixed up
/// after mutation (mode byte 1).
fn acpi_tables(out: &mut Seeds) {
    for server in acpi_servers() {
        let server_name = server.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for path in sorted_files(&server) {
            let Ok(table) = std::fs::read(&path) else { continue };
            let name = path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            for mode in [0u8, 1] {
                let mut seed = vec![mode];
                seed.extend_from_slice(&table);
                out.add(format!("{server_name}-{name}-{mode}"), seed);
            }
        }
    }
    if out.seeds.is_empty() {
        out.missing.push(format!("real ACPI tables: nothing in {}", shared("testdata/acpi").display()));
    }
}

/// The real EDIDs of `testdata/edid`, each with a leading mode byte of 0 (checksums as read).
fn edids(out: &mut Seeds) {
    for path in sorted_files(&shared("testdata/edid")) {
        if path.extension().is_none_or(|e| e != "bin") {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let name = path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut seed = vec![0u8];
        seed.extend_from_slice(&bytes);
        out.add(name, seed);
    }
    if out.seeds.is_empty() {
        out.missing.push(format!("real EDIDs: no .bin file in {}", shared("testdata/edid").display()));
    }
}

/// Each server's MADT, MCFG, HPET and FADT behind a synthetic RSDP (revision 2) and XSDT, laid
/// out as the `acpi_platform` harness maps them (the memory starts at 0xe0000).
fn acpi_platform(out: &mut Seeds) {
    const BASE: u64 = crate::fuzz::ACPI_BASE;
    for server in acpi_servers() {
        let server_name = server.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tables: Vec<Vec<u8>> = ["apic", "mcfg", "hpet", "facp"]
            .iter()
            .filter_map(|t| std::fs::read(server.join(format!("{t}.dat"))).ok())
            .collect();
        if tables.is_empty() {
            continue;
        }
        let xsdt_at = 64usize;
        let xsdt_len = 36 + 8 * tables.len();
        let mut memory = vec![0u8; xsdt_at + xsdt_len];
        memory[..8].copy_from_slice(b"RSD PTR ");
        memory[9..15].copy_from_slice(b"FUZZER");
        memory[15] = 2;
        memory[20..24].copy_from_slice(&36u32.to_le_bytes());
        memory[24..32].copy_from_slice(&(BASE + xsdt_at as u64).to_le_bytes());
        let mut xsdt = vec![0u8; xsdt_len];
        xsdt[..4].copy_from_slice(b"XSDT");
        xsdt[4..8].copy_from_slice(&(xsdt_len as u32).to_le_bytes());
        xsdt[8] = 1;
        xsdt[10..16].copy_from_slice(b"FUZZER");
        let at = memory.len();
        let mut body = Vec::new();
        for (i, table) in tables.iter().enumerate() {
            let pointer = BASE + (at + body.len()) as u64;
            xsdt[36 + 8 * i..44 + 8 * i].copy_from_slice(&pointer.to_le_bytes());
            body.extend_from_slice(table);
            while body.len() % 16 != 0 {
                body.push(0);
            }
        }
        crate::fuzz::fix_sum8(&mut xsdt, 9, xsdt_len);
        memory[xsdt_at..].copy_from_slice(&xsdt);
        memory.extend_from_slice(&body);
        crate::fuzz::fix_sum8(&mut memory, 8, 20);
        crate::fuzz::fix_sum8(&mut memory, 32, 36);
        for mode in [0u8, 1] {
            let mut seed = vec![mode];
            seed.extend_from_slice(&memory);
            out.add(format!("{server_name}-{mode}"), seed);
        }
    }
    if out.seeds.is_empty() {
        out.missing.push(format!("real ACPI tables: nothing in {}", shared("testdata/acpi").display()));
    }
}

/// A record as GSP-RM writes it: element header, RPC header, `params`; sealed with `seq`.
fn record(function: u32, params: &[u8], seq: u32) -> Vec<u8> {
    let header = RpcMessageHeader {
        header_version: RPC_HEADER_VERSION,
        signature: NV_VGPU_MSG_SIGNATURE_VALID,
        length: (32 + params.len()) as u32,
        function,
        rpc_result: 0,
        rpc_result_private: 0,
        sequence: 0,
        u: 0,
    };
    let rpc_at = core::mem::offset_of!(GspMsgQueueElement, rpc);
    let mut bytes = vec![0u8; rpc_at + 32];
    bytes[rpc_at..rpc_at + 32].copy_from_slice(sim::zerocopy::IntoBytes::as_bytes(&header));
    bytes.extend_from_slice(params);
    let padded = bytes.len().next_multiple_of(4096);
    bytes.resize(padded, 0);
    let _ = seal_element(&mut bytes, seq);
    bytes
}

/// Parameters of the messages GSP-RM sends: a CPU sequencer buffer (register writes, a poll, a
/// delay), an Xid, a POST_EVENT, a static-info reply and an RM_CONTROL reply.
fn messages() -> Vec<(&'static str, u32, Vec<u8>)> {
    let words = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|x| x.to_le_bytes()).collect() };
    // RPC_RUN_CPU_SEQUENCER_v17_00: bufferSizeDWord, cmdIndex (words written), regSaveArea[8],
    // then commands
    // (opcode, payload): REG_WRITE(0x110040, 1), REG_POLL(0x110040, mask 1, value 1, timeout
    // 10, error 0), DELAY_US(5).
    let mut sequencer = words(&[64, 11]);
    sequencer.extend(words(&[0; 8]));
    sequencer.extend(words(&[0, 0x110040, 1, 2, 0x110040, 1, 1, 10, 0, 3, 5, 0, 0, 0]));
    vec![
        ("sequencer", RpcEvent::GspRunCpuSequencer.raw(), sequencer),
        ("xid", RpcEvent::OsErrorLog.raw(), words(&[43, 0, 1, 2, 3, 4, 5, 6])),
        ("post-event", RpcEvent::PostEvent.raw(), words(&[0xc1d0_0001, 0xbeef_0001, 0x10, 0, 1, 0, 8, 0, 7, 7])),
        ("static-info", RpcFunction::GetGspStaticInfo.raw(), vec![0x5a; 3000]),
        ("rm-control", RpcFunction::GspRmControl.raw(), words(&[0xc1d0_0001, 0x2080_0001, 0x2080_0a01, 0, 0, 4, 0, 9])),
        ("free", RpcFunction::Free.raw(), words(&[0xc1d0_0001, 0x1, 0x2, 0])),
    ]
}

/// Status-queue images: GSP-RM's `msgqTxHeader` page with `writePtr` after the records, then
/// the records, sealed in order (mode byte 0) or left for the harness to seal (mode byte 1).
fn gsp_queue(out: &mut Seeds) {
    let layout = crate::fuzz::queue_layout();
    let Ok(tx) = MsgqTxHeader::gsp_queue(layout.status_queue_size as u32) else {
        out.missing.push("the status queue header could not be built".into());
        return;
    };
    let all = messages();
    for count in [1usize, 2, all.len()] {
        let mut image = vec![0u8; 4096];
        image[..32].copy_from_slice(sim::zerocopy::IntoBytes::as_bytes(&tx));
        let mut entries = 0u32;
        for (seq, (_, function, params)) in all.iter().take(count).enumerate() {
            let r = record(*function, params, seq as u32);
            entries += (r.len() / 4096) as u32;
            image.extend_from_slice(&r);
        }
        // writePtr: the first word after the header's size fields (`msgqTxHeader.writePtr`).
        let write_ptr_at = core::mem::offset_of!(MsgqTxHeader, write_ptr);
        image[write_ptr_at..write_ptr_at + 4].copy_from_slice(&entries.to_le_bytes());
        for mode in [0u8, 1] {
            let mut seed = vec![mode];
            seed.extend_from_slice(&image);
            out.add(format!("queue-{count}-{mode}"), seed);
        }
    }
}

/// Single records of each message kind.
fn gsp_rpc(out: &mut Seeds) {
    for (name, function, params) in messages() {
        let r = record(function, &params, 0);
        for mode in [0u8, 1] {
            let mut seed = vec![mode];
            seed.extend_from_slice(&r);
            out.add(format!("{name}-{mode}"), seed);
        }
    }
}

/// printf formats as GSP-RM's logs carry them, with arguments and strings.
fn gsp_log(out: &mut Seeds) {
    let formats: [&[u8]; 4] = [
        b"GPU%d: %s failed with 0x%08x (%llx)\n\0\0\0\0",
        b"%-12s|%5u|%#x|%c|%%|%p|%lld\n\0\0\0\0\0\0\0\0\0\0\0\0",
        b"NVRM: %*d %.*s %hhx %zu %ld\n\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
        b"libos: task %s exited at pc=%016llx cause %u\n\0\0\0\0",
    ];
    for (i, format) in formats.iter().enumerate() {
        let len = format.len();
        let mut seed = format.to_vec();
        seed.extend((0..len).map(|b| (b as u8).wrapping_mul(7)));
        seed.extend_from_slice(b"fifo\0gr\0ce0\0timeout\0");
        seed.resize(3 * len.max(seed.len() / 3 + 1), 0);
        out.add(format!("printf-{i}"), seed);
    }
}

/// Fault packets as the model's MMU writes them (one fault of each access type and a few fault
/// types), behind GET = 0, PUT = their count and the buffer's size.
fn fault_buffer(out: &mut Seeds) {
    use nvgpu::hw::fault::{FaultAccessType, FaultType};
    const ENTRIES: u32 = 64;
    let mut mem = crate::fuzz::Phys(FlatMemory::new(0, ENTRIES as usize * 32));
    let mut buffer = ReplayableFaultBuffer::default();
    if buffer.program(PhysAddr { aperture: PhysAperture::SystemCoherent, addr: 0 }, ENTRIES).is_err() {
        out.missing.push("the model's fault buffer could not be programmed".into());
        return;
    }
    let accesses = [
        FaultAccessType::VirtRead,
        FaultAccessType::VirtWrite,
        FaultAccessType::VirtAtomicStrong,
        FaultAccessType::VirtPrefetch,
    ];
    let types = [FaultType::Pte, FaultType::Pde, FaultType::VaLimitViolation];
    let mut written = 0u32;
    for i in 0..12u64 {
        let record = FaultRecord {
            instance: PhysAddr { aperture: PhysAperture::Video, addr: 0x20_0000 + (i % 2) * 0x1000 },
            va: 0x7f00_0000_0000 + (i / 3) * 0x1000 + i * 0x10,
            fault_type: types[(i % 3) as usize],
            access: accesses[(i % 4) as usize],
            engine_id: 64 + (i % 2) as u16,
            client: (i % 5) as u8,
            gpc: (i % 3) as u8,
            timestamp_ns: 1000 * i,
        };
        if buffer.report(record, &mut mem).is_ok() {
            written += 1;
        }
    }
    let mut seed = Vec::new();
    seed.extend_from_slice(&0u32.to_le_bytes());
    seed.extend_from_slice(&written.to_le_bytes());
    seed.extend_from_slice(&(ENTRIES as u16).to_le_bytes());
    seed.extend_from_slice(&mem.0.bytes[..written as usize * 32]);
    out.add("model-faults", seed);
}

/// Pushbuffers as the driver's encoders write them for Hopper: SET_OBJECT, copies and memsets
/// on the copy engine, semaphore releases and acquires, NOPs.
fn pushbuffer(out: &mut Seeds) {
    let ce = CeEncoder::new(CeClass::HopperA, 4);
    let words = |pb: &PushBuffer| -> Vec<u8> { pb.words().iter().flat_map(|w| w.to_le_bytes()).collect() };
    let base = 0x10_0000u64;
    let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::HopperA);
    let _ = ce.set_object(&mut pb);
    let _ = ce.copy(
        &mut pb,
        CeAddress::Virtual(base + 0x8000),
        CeAddress::Virtual(base + 0x9000),
        256,
        Pipelining::NonPipelined,
    );
    let _ = ce.memset(
        &mut pb,
        CeAddress::Virtual(base + 0xa000),
        MemsetPattern::U32(0xdead_beef),
        128,
        Pipelining::Pipelined,
    );
    let _ = ce.release_semaphore(&mut pb, base + 0xb000, 7);
    out.add("ce-copy", words(&pb));
    let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::HopperA);
    let _ = pb.semaphore_release(base + 0xc000, 1, true);
    let _ = pb.semaphore_acquire(base + 0xc000, 1);
    let _ = pb.nops(3);
    let _ = ce.copy(
        &mut pb,
        CeAddress::Physical { aperture: CeAperture::CoherentSysmem, addr: 0x100 },
        CeAddress::Virtual(base + 0x8000),
        64,
        Pipelining::NonPipelined,
    );
    out.add("host-semaphores", words(&pb));
}

/// The chain-of-trust message RM sends the FSP on GH100, built by the driver's own encoders
/// from NVIDIA's real GSP-FMC files (hash, signature, public key; the image stands in by its
/// size), split into EMEM packets; then a reply of each kind.
fn fsp(out: &mut Seeds) {
    use nvgpu::gsp::boot::fsp::{cot_payload, packets, CotAddresses, FmcImages};
    use nvgpu::hw::engine::FSP_EMEM_CHANNEL_RM_SIZE;
    use nvgpu::hw::fw::fsp::NVDM_TYPE_COT;
    let dir = real_data("extracted-535.261.03/nvidia/gh100/gsp");
    let read = |stem: &str| std::fs::read(dir.join(format!("{stem}-535.261.03.bin"))).ok();
    let (Some(image), Some(hash), Some(sig), Some(pkey)) =
        (read("fmc_image"), read("fmc_hash"), read("fmc_sig"), read("fmc_pkey"))
    else {
        out.missing.push(format!("GH100 GSP-FMC files: not all in {}", dir.display()));
        return;
    };
    let (Ok(hash384), Ok(signature), Ok(public_key)) =
        (<&[u8; 48]>::try_from(&hash[..]), <&[u8; 384]>::try_from(&sig[..]), <&[u8; 384]>::try_from(&pkey[..]))
    else {
        out.missing.push("GH100 GSP-FMC files of the wrong sizes".into());
        return;
    };
    let fmc = FmcImages { image: &image, hash384, public_key, signature };
    let addresses =
        CotAddresses { fmc_image: 0x1_0000_0000, frts_sysmem: 0x2_0000_0000, fmc_boot_params: 0x3_0000_0000 };
    let payload = cot_payload(&fmc, &addresses);
    let framed = |packets: &[Vec<u8>]| -> Vec<u8> {
        packets.iter().flat_map(|p| (p.len() as u16).to_le_bytes().into_iter().chain(p.iter().copied())).collect()
    };
    for channel in [FSP_EMEM_CHANNEL_RM_SIZE, 256, 64] {
        let cot = packets(zerocopy::IntoBytes::as_bytes(&payload), NVDM_TYPE_COT, channel);
        out.add(format!("cot-{channel}"), framed(&cot));
    }
    let other = packets(&[0u8; 16], 0x15, FSP_EMEM_CHANNEL_RM_SIZE);
    out.add("other-nvdm-type", framed(&other));
}
