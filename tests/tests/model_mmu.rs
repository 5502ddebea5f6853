//! The driver's page tables against the model MMU, for every family up to Hopper: the driver
//! builds tables (in VRAM through PRAMIN, and in DMA system memory) with every page size its
//! format has; the model walks them for each page exactly as the driver's own software walk
//! does; data written through the model's VA lands at the physical bytes; bad accesses fault
//! with the right kind and are logged as fault packets; a PTE change is not seen until the
//! driver invalidates through the BAR0 registers (`nvgpu::mm::tlb`). Plus the `clc369.h`
//! packet layout check and the PTE-write counts of mapping 1 GiB.

use std::cell::Cell;
use std::path::Path;

use nvgpu::chip::Chipset;
use nvgpu::hw::fault::{self, FaultAccessType, FaultType, BUF_ENTRY_FIELDS};
use nvgpu::hw::RegisterIo;
use nvgpu::mm::{
    Aperture, DmaTableMemory, MmuFormat, PageSize, PageTableMemory, PageTables, Pramin, PteAttrs,
    RegisterTlbInvalidator, TableAddress, TlbChange, TlbError, TlbInvalidate, TlbInvalidator, VramAllocator,
    VramTableMemory,
};
use nvgpu::platform::{Clock, DmaAllocator};
use sim::engine_mem::{AccessType, FaultKind, PhysAperture, VirtualMemory};
use sim::mmu::MmuClient;
use sim::{DmaArena, ModelGpu, SystemMemory};

struct TestClock(Cell<u64>);
impl Clock for TestClock {
    fn now_ns(&self) -> u64 {
        self.0.set(self.0.get() + 1_000);
        self.0.get()
    }
}

/// An invalidator that does nothing: a driver that forgot to invalidate.
struct ForgetfulTlb;
impl TlbInvalidator for ForgetfulTlb {
    fn invalidate(&mut self, _: &TlbInvalidate) -> Result<(), TlbError> {
        Ok(())
    }
}

const CHIPS: [Chipset; 5] = [Chipset::TU102, Chipset::GA100, Chipset::GA102, Chipset::AD102, Chipset::GH100];
const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

struct Region {
    va: u64,
    pa: u64,
    page: PageSize,
    pages: u64,
    aperture: Aperture,
}

fn model_translate(
    gpu: &ModelGpu,
    pdb: TableAddress,
    client: MmuClient,
    va: u64,
    access: AccessType,
) -> Result<(PhysAperture, u64), FaultKind> {
    gpu.with_address_space(pdb, client, |s| s.translate(va, access))
        .expect("model busy")
        .map(|p| p.map(|p| (p.aperture, p.addr)).expect("not sparse"))
        .map_err(|f| f.kind)
}

fn phys_aperture(a: Aperture) -> PhysAperture {
    match a {
        Aperture::Video => PhysAperture::Video,
        Aperture::SystemCoherent => PhysAperture::SystemCoherent,
        Aperture::SystemNonCoherent => PhysAperture::SystemNonCoherent,
        Aperture::Peer(p) => PhysAperture::Peer(p),
    }
}

fn phys_read(gpu: &ModelGpu, arena: &DmaArena, aperture: Aperture, pa: u64, buf: &mut [u8]) -> bool {
    match aperture {
        Aperture::Video => gpu.vram_read(pa, buf),
        _ => arena.read(pa, buf),
    }
}

fn phys_write(gpu: &ModelGpu, arena: &DmaArena, aperture: Aperture, pa: u64, data: &[u8]) -> bool {
    match aperture {
        Aperture::Video => gpu.vram_write(pa, data),
        _ => arena.write(pa, data),
    }
}

fn exercise<M: PageTableMemory>(
    chip: Chipset,
    gpu: &ModelGpu,
    arena: &DmaArena,
    tables: &mut PageTables<M>,
    sys_pa: u64,
) {
    let name = format!("{chip:?} tables in {:?}", tables.pdb().aperture);
    let family = chip.family();
    let format = MmuFormat::for_family(family);
    let clock = TestClock(Cell::new(0));
    let mut tlb = RegisterTlbInvalidator::new(gpu, &clock);
    let client = MmuClient::copy_engine(family, 0);
    let pdb = tables.pdb();

    let mut regions = vec![
        Region { va: 0x1_0000_0000, pa: 0x4000_0000, page: PageSize::Size4K, pages: 16, aperture: Aperture::Video },
        Region { va: 0x2_0000_0000, pa: 0x5000_0000, page: PageSize::Size64K, pages: 4, aperture: Aperture::Video },
        Region { va: 0x3_0000_0000, pa: 0x6000_0000, page: PageSize::Size2M, pages: 2, aperture: Aperture::Video },
        Region { va: 0x5_0000_0000, pa: sys_pa, page: PageSize::Size4K, pages: 4, aperture: Aperture::SystemCoherent },
    ];
    if format.pages_512m {
        regions.push(Region {
            va: 0x40_0000_0000,
            pa: 0x8000_0000,
            page: PageSize::Size512M,
            pages: 1,
            aperture: Aperture::Video,
        });
    }
    for r in &regions {
        let size = r.page.bytes() * r.pages;
        tables.map_with_page_size(r.va, r.pa, size, r.page, r.aperture, PteAttrs::default(), &mut tlb).unwrap();
    }

    for r in &regions {
        for page in 0..r.pages {
            for offset in [0, r.page.bytes() / 2 + 8, r.page.bytes() - 8] {
                let va = r.va + page * r.page.bytes() + offset;
                let driver = tables.translate(va).unwrap().unwrap_or_else(|| panic!("{name}: driver has no {va:#x}"));
                assert_eq!(driver.page_size, r.page, "{name}: {va:#x}");
                let model = model_translate(gpu, pdb, client, va, AccessType::Read).unwrap();
                assert_eq!(model, (phys_aperture(driver.aperture), driver.pa), "{name}: {va:#x}");
                assert_eq!(driver.pa, r.pa + page * r.page.bytes() + offset);
                // Through the VA to the bytes, and back.
                let data = va.to_le_bytes();
                gpu.with_address_space(pdb, client, |s| s.write(va, &data)).unwrap().unwrap();
                let mut seen = [0u8; 8];
                assert!(phys_read(gpu, arena, r.aperture, driver.pa, &mut seen));
                assert_eq!(seen, data, "{name}: {va:#x}");
                let back = (!va).to_le_bytes();
                assert!(phys_write(gpu, arena, r.aperture, driver.pa, &back));
                gpu.with_address_space(pdb, client, |s| s.read(va, &mut seen)).unwrap().unwrap();
                assert_eq!(seen, back, "{name}: {va:#x}");
            }
        }
    }
    // A read across the two 2M pages crosses the boundary seamlessly.
    let mut pair = [0u8; 16];
    gpu.with_address_space(pdb, client, |s| s.read(0x3_0000_0000 + 2 * MIB - 8, &mut pair)).unwrap().unwrap();
    assert_eq!(pair[..8], (!(0x3_0000_0000 + 2 * MIB - 8u64)).to_le_bytes());

    // Faults.
    let ro = PteAttrs { read_only: true, ..PteAttrs::default() };
    let no_atomic = PteAttrs { atomic_disable: true, ..PteAttrs::default() };
    tables
        .map_with_page_size(0x6_0000_0000, 0x7000_0000, 4 * KIB, PageSize::Size4K, Aperture::Video, ro, &mut tlb)
        .unwrap();
    tables
        .map_with_page_size(0x6_0001_0000, 0x7001_0000, 4 * KIB, PageSize::Size4K, Aperture::Video, no_atomic, &mut tlb)
        .unwrap();
    gpu.take_mmu_faults();
    let unmapped_pde = 0x7_0000_0000;
    let unmapped_pte = 0x1_0000_0000 + 16 * 4 * KIB;
    assert_eq!(model_translate(gpu, pdb, client, unmapped_pde, AccessType::Read), Err(FaultKind::InvalidPde), "{name}");
    let e = gpu.with_address_space(pdb, client, |s| s.read(unmapped_pte, &mut [0; 4])).unwrap().unwrap_err();
    assert_eq!((e.kind, e.va), (FaultKind::InvalidPte, unmapped_pte), "{name}");
    assert!(gpu.with_address_space(pdb, client, |s| s.read(0x6_0000_0000, &mut [0; 4])).unwrap().is_ok());
    let e = gpu.with_address_space(pdb, client, |s| s.write(0x6_0000_0010, &[1; 4])).unwrap().unwrap_err();
    assert_eq!(e.kind, FaultKind::ReadOnlyViolation, "{name}");
    assert!(gpu.with_address_space(pdb, client, |s| s.write(0x6_0001_0000, &[1; 4])).unwrap().is_ok());
    let e = gpu
        .with_address_space(pdb, client, |s| s.atomic(0x6_0001_0000, &mut [0; 4], &mut |o, n| n.copy_from_slice(o)))
        .unwrap()
        .unwrap_err();
    assert_eq!(e.kind, FaultKind::AtomicViolation, "{name}");
    let log = gpu.take_mmu_faults();
    let seen: Vec<_> = log.iter().map(|f| (f.va, f.fault_type, f.access_type)).collect();
    assert_eq!(
        seen,
        [
            (unmapped_pde, FaultType::Pde, FaultAccessType::VirtRead),
            (unmapped_pte, FaultType::Pte, FaultAccessType::VirtRead),
            (0x6_0000_0010, FaultType::RoViolation, FaultAccessType::VirtWrite),
            (0x6_0001_0000, FaultType::AtomicViolation, FaultAccessType::VirtAtomicStrong),
        ],
        "{name}"
    );
    for f in &log {
        assert_eq!(f.pdb, pdb.into());
        assert_eq!(f.client.engine_id, client.engine_id);
        let packet = f.to_packet();
        assert_eq!(fault::NVC369_BUF_ENTRY_ADDR.get(&packet), f.va >> 12);
        assert_eq!(fault::NVC369_BUF_ENTRY_INST.get(&packet), pdb.address >> 12);
        assert_eq!(fault::NVC369_BUF_ENTRY_FAULT_TYPE.get(&packet), f.fault_type as u64);
        assert_eq!(fault::NVC369_BUF_ENTRY_ACCESS_TYPE.get(&packet), f.access_type as u64);
        assert_eq!(fault::NVC369_BUF_ENTRY_ENGINE_ID.get(&packet), u64::from(client.engine_id));
        assert_eq!(fault::NVC369_BUF_ENTRY_TIMESTAMP.get(&packet), f.timestamp);
        assert_eq!(fault::NVC369_BUF_ENTRY_VALID.get(&packet), 1);
    }
    assert!(log.windows(2).all(|w| w[0].timestamp < w[1].timestamp));

    // A remap without an invalidate is not seen; after the driver's invalidate it is.
    let va = 0x1_0000_0000;
    let old = model_translate(gpu, pdb, client, va, AccessType::Read).unwrap();
    tables.unmap(va, 4 * KIB, &mut ForgetfulTlb).unwrap();
    tables
        .map_with_page_size(
            va,
            0x4800_0000,
            4 * KIB,
            PageSize::Size4K,
            Aperture::Video,
            PteAttrs::default(),
            &mut ForgetfulTlb,
        )
        .unwrap();
    assert_eq!(tables.translate(va).unwrap().unwrap().pa, 0x4800_0000);
    assert_eq!(model_translate(gpu, pdb, client, va, AccessType::Read), Ok(old), "{name}: stale TLB");
    let before = gpu.tlb_invalidates();
    tlb.invalidate(&TlbInvalidate { pdb, va, size: 4 * KIB, directories_changed: false, change: TlbChange::Upgrade })
        .unwrap();
    assert_eq!(gpu.tlb_invalidates(), before + 1);
    assert_eq!(
        model_translate(gpu, pdb, client, va, AccessType::Read),
        Ok((PhysAperture::Video, 0x4800_0000)),
        "{name}"
    );
    // A downgrade is seen after the invalidate `unmap` issues itself.
    tables.unmap(va, 4 * KIB, &mut tlb).unwrap();
    assert_eq!(model_translate(gpu, pdb, client, va, AccessType::Read), Err(FaultKind::InvalidPte), "{name}");
    assert!(gpu.errors().is_empty(), "{name}: {:?}", gpu.errors());
}

fn new_gpu(chip: Chipset) -> (ModelGpu, DmaArena, u64) {
    let gpu = ModelGpu::for_chipset(chip);
    let arena = DmaArena::new();
    gpu.set_system_memory(Box::new(arena.clone()));
    let data = arena.alloc(16 * KIB as usize).unwrap();
    let bus = data.bus_address();
    let _ = data; // a handle: the buffer stays allocated for the GPU (nothing frees it)
    (gpu, arena, bus)
}

#[test]
fn tables_in_vram_through_pramin_translate_as_the_driver_intends() {
    for chip in CHIPS {
        let (gpu, arena, sys_pa) = new_gpu(chip);
        let window = nvgpu::hal::for_family(chip.family()).pramin_window.unwrap().offset();
        let found = gpu.read32(window);
        {
            let allocator = VramAllocator::new(&[(0x10_0000, 64 * MIB)], &[]).unwrap();
            let memory = VramTableMemory::new(&gpu, chip.family(), allocator).unwrap();
            let mut tables = PageTables::new(MmuFormat::for_family(chip.family()), memory).unwrap();
            exercise(chip, &gpu, &arena, &mut tables, sys_pa);
            assert!(tables.memory().pramin().window_moves() > 0);
        }
        assert_eq!(gpu.read32(window), found, "{chip:?}: PRAMIN window restored");
    }
}

#[test]
fn tables_in_system_memory_translate_as_the_driver_intends() {
    for chip in CHIPS {
        let (gpu, arena, sys_pa) = new_gpu(chip);
        let mut tables =
            PageTables::new(MmuFormat::for_family(chip.family()), DmaTableMemory::new(arena.clone())).unwrap();
        exercise(chip, &gpu, &arena, &mut tables, sys_pa);
    }
}

#[test]
fn pramin_reaches_vram_anywhere_and_restores_the_window() {
    for chip in CHIPS {
        let gpu = ModelGpu::for_chipset(chip);
        let vram = gpu.config().vram_bytes;
        {
            let pramin = Pramin::new(&gpu, chip.family()).unwrap();
            for at in [0x3, 0xF_FFFE, 0x10_0000, vram - 9] {
                let data: Vec<u8> = (0..9u8).map(|i| i ^ at as u8).collect();
                pramin.write_bytes(at, &data).unwrap();
                let mut seen = [0u8; 9];
                assert!(gpu.vram_read(at, &mut seen));
                assert_eq!(seen[..], data[..], "{chip:?} {at:#x}");
                assert!(gpu.vram_write(at, &[0xAB; 9]));
                pramin.read_bytes(at, &mut seen).unwrap();
                assert_eq!(seen, [0xAB; 9]);
            }
        }
        assert!(gpu.errors().is_empty(), "{chip:?}: {:?}", gpu.errors());
        // Past the end of VRAM the model has nothing: POISON, and it says so.
        let pramin = Pramin::new(&gpu, chip.family()).unwrap();
        let _ = pramin.read_u32(vram);
        assert_eq!(gpu.errors().len(), 1, "{chip:?}");
    }
}

/// `MW((a+b*32):(c*32+d))` from `clc369.h`, as (hi, lo).
fn mw_bits(body: &str) -> Option<(u32, u32)> {
    let inner = body.trim().strip_prefix("MW((")?.strip_suffix("))")?;
    let (hi, lo) = inner.split_once("):(")?;
    let eval = |e: &str| -> Option<u32> {
        e.split('+')
            .map(|term| match term.split_once('*') {
                Some((a, b)) => Some(a.trim().parse::<u32>().ok()? * b.trim().parse::<u32>().ok()?),
                None => term.trim().parse::<u32>().ok(),
            })
            .sum()
    };
    Some((eval(hi)?, eval(lo)?))
}

#[test]
fn fault_packet_fields_match_clc369() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/real-data/open-gpu-kernel-modules-535.261.03")
        .join(nvgpu::hw::headers::CLC369.path);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("missing real data {}: {e}", path.display()));
    for field in BUF_ENTRY_FIELDS {
        let body = text
            .lines()
            .find_map(|l| {
                let rest = l.strip_prefix("#define ")?.trim_start();
                let rest = rest.strip_prefix(field.name)?;
                rest.starts_with(char::is_whitespace).then_some(rest)
            })
            .unwrap_or_else(|| panic!("{} not in clc369.h", field.name));
        assert_eq!(mw_bits(body), Some((field.hi, field.lo)), "{}", field.name);
    }
    assert_eq!(mw_bits("MW((9+0*32):(0*32+8))"), Some((9, 8)));
}

/// PTE writes for mapping 1 GiB (the figures the map_1gib benchmark times).
#[test]
fn mapping_1gib_writes_512_ptes_with_2m_pages_and_262144_with_4k_pages() {
    for (page, ptes, words) in [
        // 512 2M PTEs in dual-PDE slots (2 words each); PDEs: PD3 1 + PD2 1 + PD1 2 (1 GiB spans
        // two PD0 tables of 512 MiB).
        (PageSize::Size2M, 512, 512 * 2 + 4),
        // 262144 4K PTEs (1 word); 512 dual PDEs at PD0 (2 words) pointing at 512 small tables;
        // PD3 1 + PD2 1 + PD1 2.
        (PageSize::Size4K, 262_144, 262_144 + 512 * 2 + 4),
    ] {
        let arena = DmaArena::new();
        let mut tables = PageTables::new(MmuFormat::VER2, DmaTableMemory::new(arena.clone())).unwrap();
        tables
            .map_with_page_size(0, 0, 1 << 30, page, Aperture::Video, PteAttrs::default(), &mut ForgetfulTlb)
            .unwrap();
        assert_eq!(tables.mapped_pages(0, 1 << 30).len(), ptes, "{page}");
        assert_eq!(tables.memory().entry_writes, words, "{page}");
    }
}
