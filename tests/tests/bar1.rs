//! BAR1 end to end on model GPUs of every family GSP-RM 535.261.03 runs on (TU102, GA100, GA102,
//! AD102, GH100), through the real driver and the real firmware boot:
//!
//! - GSP-RM reports its BAR1 root page directory (`bar1PdeBase`) outside the FB regions it hands
//!   to clients; the driver adopts it (refusing one that already holds entries) and builds the
//!   levels below it from VRAM it allocates itself;
//! - VRAM is mapped with 2 MiB and 64 KiB pages, written through BAR1 and read through the
//!   model's VRAM, and the other way round; the PDE lands in RM's root;
//! - an unmapped BAR1 offset faults (model error, MMU fault log with the BAR1 engine id, reads
//!   0xFF, writes dropped); an unmap without a TLB invalidate leaves the stale translation
//!   visible until the invalidate.
//!
//! Missing real data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root).

use nvgpu::chip::Chipset;
use nvgpu::mm::{
    Bar1, Bar1Access, Bar1Error, PageSize, PageTableError, RegisterTlbInvalidator, TableAddress, TableAperture,
    TlbError, TlbInvalidate, TlbInvalidator, VramAllocator,
};
use sim::{ModelConfig, ModelError, ModelGpu};
use tests::model_boot::{pattern, with_booted};

/// Forgets to invalidate: what a driver bug looks like.
struct NoInvalidate;

impl TlbInvalidator for NoInvalidate {
    fn invalidate(&mut self, _: &TlbInvalidate) -> Result<(), TlbError> {
        Ok(())
    }
}

fn bar1_faults(model: &ModelGpu) -> Vec<ModelError> {
    model.take_errors().into_iter().filter(|e| matches!(e, ModelError::Bar1 { .. })).collect()
}

fn exercise(config: ModelConfig) {
    let chip = config.chipset;
    let family = chip.family();
    let bar1_size = config.bars.bar1;
    with_booted(config, |model, _arena, clock, boot| {
        let info = boot.static_info().expect("static info");
        let root = info.bar1_pde_base;
        let fb_regions = info.fb_regions().to_vec();
        assert_ne!(root, 0, "{chip:?}: GSP-RM reports a BAR1 page directory");
        assert!(
            fb_regions.iter().all(|r| root < r.base || root > r.limit),
            "{chip:?}: the BAR1 root {root:#x} is RM's, outside the client FB regions {fb_regions:?}"
        );
        let mut tlb = RegisterTlbInvalidator::new(model, clock);

        // A root that already holds an entry is refused, untouched.
        let stray = 0x1234_5000u64 | 1;
        assert!(model.vram_write(root + 8, &stray.to_le_bytes()));
        let allocator = VramAllocator::from_fb_regions(&fb_regions, &[]).expect("VRAM allocator");
        match Bar1::new(model, family, root, bar1_size, allocator) {
            Err(Bar1Error::PageTables(PageTableError::RootInUse { at, value })) => {
                assert_eq!((at.address, value), (root + 8, stray), "{chip:?}");
            }
            Err(e) => panic!("{chip:?}: {e}"),
            Ok(_) => panic!("{chip:?}: a root in use was adopted"),
        }
        assert!(model.vram_write(root + 8, &[0; 8]));
        // So is a root inside the VRAM the tables come from, and no root at all.
        let allocator = VramAllocator::from_fb_regions(&fb_regions, &[]).expect("VRAM allocator");
        assert!(matches!(
            Bar1::new(model, family, 0x20_0000, bar1_size, allocator),
            Err(Bar1Error::PageDirectoryInAllocator { address: 0x20_0000 })
        ));
        let allocator = VramAllocator::from_fb_regions(&fb_regions, &[]).expect("VRAM allocator");
        assert!(matches!(Bar1::new(model, family, 0, bar1_size, allocator), Err(Bar1Error::NoPageDirectory)));

        // Buffers, and tables, from the client's VRAM.
        let mut vram = VramAllocator::from_fb_regions(&fb_regions, &[]).expect("VRAM allocator");
        let big = vram.alloc(4 << 20, 2 << 20).expect("4 MiB");
        let mid = vram.alloc(192 << 10, 64 << 10).expect("192 KiB");
        let spare = vram.alloc(64 << 10, 64 << 10).expect("64 KiB");
        let tables_from = VramAllocator::new(&[(vram.alloc(4 << 20, 2 << 20).expect("tables").base(), 4 << 20)], &[])
            .expect("table allocator");
        let mut bar1 = Bar1::new(model, family, root, bar1_size, tables_from)
            .unwrap_or_else(|e| panic!("{chip:?}: BAR1: {e}\n{:?}", model.errors()));
        assert_eq!(bar1.pdb(), TableAddress { aperture: TableAperture::Video, address: root });

        let big_map = bar1.map(big.base(), big.size(), &mut tlb).unwrap_or_else(|e| panic!("{chip:?}: {e}"));
        let mid_map = bar1.map(mid.base(), mid.size(), &mut tlb).unwrap_or_else(|e| panic!("{chip:?}: {e}"));
        let sizes = |m: &nvgpu::mm::Bar1Mapping| -> Vec<PageSize> {
            bar1.tables().mapped_pages(m.bar1_offset, m.size).iter().map(|p| p.page_size).collect()
        };
        assert_eq!(sizes(&big_map), vec![PageSize::Size2M; 2], "{chip:?}");
        assert_eq!(sizes(&mid_map), vec![PageSize::Size64K; 3], "{chip:?}");
        assert!(big_map.bar1_offset + big_map.size <= bar1_size && mid_map.bar1_offset + mid_map.size <= bar1_size);
        // The driver's PDE sits in RM's root.
        let mut root_table = vec![0u8; 32];
        assert!(model.vram_read(root, &mut root_table));
        assert!(root_table.iter().any(|&b| b != 0), "{chip:?}: no PDE in RM's root");

        // CPU -> BAR1 -> VRAM, at an odd offset across the 2 MiB page boundary.
        let data = pattern((2 << 20) + 777, chip as u32);
        model.bar1_write(big_map.bar1_offset + 5, &data).then_some(()).expect("BAR1 write");
        bar1.flush_writes(model, &big_map).expect("read back");
        let mut seen = vec![0u8; data.len()];
        assert!(model.vram_read(big.base() + 5, &mut seen));
        assert!(seen == data, "{chip:?}: VRAM differs from what was written through BAR1");
        // VRAM -> BAR1 -> CPU, through the trait the kernel implements too.
        let data = pattern(mid.size() as usize, chip as u32 + 1);
        assert!(model.vram_write(mid.base(), &data));
        let mut seen = vec![0u8; data.len()];
        Bar1Access::bar1_read(model, mid_map.bar1_offset, &mut seen).expect("BAR1 read");
        assert!(seen == data, "{chip:?}: BAR1 differs from VRAM");
        assert!(bar1_faults(model).is_empty(), "{chip:?}");
        assert!(model.take_mmu_faults().is_empty(), "{chip:?}");

        // Past the mappings: an MMU fault by the BAR1 unit, logged; reads 0xFF, writes dropped.
        let hole = mid_map.bar1_offset + mid_map.size + (1 << 20);
        let mut buf = [0u8; 16];
        assert!(!model.bar1_read(hole, &mut buf));
        assert_eq!(buf, [0xFF; 16], "{chip:?}");
        assert!(!model.bar1_write(hole, &[1, 2, 3, 4]));
        let errors = bar1_faults(model);
        assert_eq!(errors.len(), 2, "{chip:?}: {errors:?}");
        assert!(
            errors.iter().all(|e| matches!(e, ModelError::Bar1 { fault: Some(f), .. } if f.va == hole)),
            "{errors:?}"
        );
        let faults = model.take_mmu_faults();
        assert_eq!(faults.len(), 2, "{chip:?}: {faults:?}");
        assert!(faults
            .iter()
            .all(|f| f.va == hole && f.pdb == bar1.pdb().into() && f.client == sim::mmu::MmuClient::bar1(family)));
        // Beyond the aperture: refused without a walk.
        assert!(!model.bar1_read(bar1_size - 2, &mut buf));
        assert!(matches!(bar1_faults(model).as_slice(), [ModelError::Bar1 { fault: None, .. }]));
        assert!(model.take_mmu_faults().is_empty());

        // A stale TLB: unmapping without an invalidate leaves the translation in use (the read
        // succeeds, from the old page); the invalidate makes it fault.
        let spare_map = bar1.map(spare.base(), spare.size(), &mut tlb).expect("map spare");
        assert!(model.vram_write(spare.base(), b"stale"));
        let mut word = [0u8; 5];
        assert!(model.bar1_read(spare_map.bar1_offset, &mut word));
        bar1.unmap(spare_map, &mut NoInvalidate).expect("unmap");
        assert!(model.bar1_read(spare_map.bar1_offset, &mut word), "{chip:?}: the TLB still holds the page");
        assert_eq!(&word, b"stale");
        let issued = tlb.issued;
        tlb.invalidate(&TlbInvalidate {
            pdb: bar1.pdb(),
            va: spare_map.bar1_offset,
            size: spare_map.size,
            directories_changed: true,
            change: nvgpu::mm::TlbChange::Downgrade,
        })
        .expect("invalidate");
        assert_eq!(tlb.issued, issued + 1);
        assert!(!model.bar1_read(spare_map.bar1_offset, &mut word), "{chip:?}: unmapped after the invalidate");
        assert_eq!(bar1_faults(model).len(), 1);
        model.take_mmu_faults();

        // Unmapping with the invalidate faults at once; everything goes back.
        bar1.unmap(mid_map, &mut tlb).expect("unmap mid");
        assert!(!model.bar1_read(mid_map.bar1_offset, &mut buf));
        assert_eq!(bar1_faults(model).len(), 1);
        assert!(matches!(bar1.unmap(mid_map, &mut tlb), Err(Bar1Error::NotMapped { .. })));
        let tables_from = bar1.release(&mut tlb).expect("release");
        assert_eq!(tables_from.stats().free_bytes, 4 << 20, "{chip:?}: every table freed");
        let mut root_table = vec![0u8; 32];
        assert!(model.vram_read(root, &mut root_table));
        assert!(root_table.iter().all(|&b| b == 0), "{chip:?}: RM's root is empty again");
    });
}

#[test]
fn turing_bar1() {
    exercise(ModelConfig::rtx2080ti());
}

#[test]
fn ga100_bar1() {
    exercise(ModelConfig::for_chipset(Chipset::GA100));
}

#[test]
fn ga102_bar1() {
    exercise(ModelConfig::rtx3090());
}

#[test]
fn ad102_bar1() {
    exercise(ModelConfig::rtx4090());
}

#[test]
fn gh100_bar1() {
    exercise(ModelConfig::h200());
}
