//! Host tests: PVH and Multiboot2 information built byte by byte as the specifications lay it
//! out, parsed by the same code the kernel runs.

use super::*;
use std::vec::Vec;

/// A flat "physical memory" of `size` bytes starting at address 0.
struct Flat(Vec<u8>);

impl<'m> PhysMemory<'m> for &'m Flat {
    fn slice(&self, phys: u64, len: usize) -> Option<&'m [u8]> {
        let start = usize::try_from(phys).ok()?;
        self.0.get(start..start.checked_add(len)?)
    }
}

impl Flat {
    fn put(&mut self, at: usize, bytes: &[u8]) {
        self.0[at..at + bytes.len()].copy_from_slice(bytes);
    }
    fn put32(&mut self, at: usize, v: u32) {
        self.put(at, &v.to_le_bytes());
    }
    fn put64(&mut self, at: usize, v: u64) {
        self.put(at, &v.to_le_bytes());
    }
}

const LAYOUT: ImageLayout =
    ImageLayout { kernel_start: 0x200000, kernel_end: 0x400000, stack_bottom: 0x380000, stack_top: 0x3c0000 };

fn usable(data: &LoaderData<'_>) -> Vec<(u64, u64)> {
    data.regions.as_slice().iter().filter(|r| r.kind == MemoryRegionKind::Usable).map(|r| (r.start, r.end)).collect()
}

fn pvh_memory(with_cpio: bool) -> Flat {
    let mut m = Flat(vec![0; 0x80000]);
    let si = 0x6000;
    m.put32(si, pvh::XEN_HVM_START_MAGIC_VALUE);
    m.put32(si + 4, 1); // version
    m.put32(si + 12, 1); // nr_modules
    m.put64(si + 16, 0x7000); // modlist
    m.put64(si + 24, 0x7100); // cmdline
    m.put64(si + 32, 0xf5a40); // rsdp
    m.put64(si + 40, 0x7200); // memmap
    m.put32(si + 48, 3);
    m.put(0x7100, b"test gpu=model:gh100\0");
    let module: Vec<u8> = if with_cpio {
        cpio::build(&[("gsp_ga10x.bin", b"GSP!"), ("vecadd.ptx", b".version 7.8")])
    } else {
        b"plain initrd".to_vec()
    };
    m.put(0x10000, &module);
    m.put64(0x7000, 0x10000);
    m.put64(0x7000 + 8, module.len() as u64);
    // memory map: 0..0x9fc00 RAM, 0xf0000..0x100000 reserved, 1 MiB..128 MiB RAM
    for (i, (a, s, t)) in [(0u64, 0x9fc00u64, 1u32), (0xf0000, 0x10000, 2), (0x100000, 0x7f00000, 1)].iter().enumerate()
    {
        let e = 0x7200 + i * 24;
        m.put64(e, *a);
        m.put64(e + 8, *s);
        m.put32(e + 16, *t);
    }
    m
}

#[test]
fn pvh_start_info_gives_memory_cmdline_rsdp_and_modules() {
    let m = pvh_memory(false);
    let mut data = LoaderData::new();
    let proto = parse_loader(&&m, PROTOCOL_PVH, 0, 0x6000, LAYOUT, &mut data).unwrap();
    assert_eq!(proto, Protocol::Pvh);
    assert_eq!(data.cmdline, "test gpu=model:gh100");
    assert_eq!(data.rsdp, Some(0xf5a40));
    // Low memory reserved, kernel image carved out.
    assert_eq!(usable(&data), vec![(0x100000, 0x200000), (0x400000, 0x8000000)]);
    let initrd = data.module("initrd").unwrap();
    assert_eq!(initrd.data, b"plain initrd");
}

#[test]
fn pvh_cpio_module_files_are_reachable_by_name() {
    let m = pvh_memory(true);
    let mut data = LoaderData::new();
    parse_loader(&&m, PROTOCOL_PVH, 0, 0x6000, LAYOUT, &mut data).unwrap();
    assert_eq!(data.module("gsp_ga10x.bin").unwrap().data, b"GSP!");
    let ptx = data.module("vecadd.ptx").unwrap();
    assert_eq!(ptx.data, b".version 7.8");
    assert_eq!(&m.0[ptx.phys as usize..ptx.phys as usize + 4], b".ver");
    let mut info = BootInfo::new((&mut [][..]).into());
    fill_boot_info(&mut info, &data, LAYOUT);
    assert_eq!(info.ramdisk_addr.into_option(), Some(0x10000));
    assert_eq!(info.rsdp_addr.into_option(), Some(0xf5a40));
    assert_eq!(info.kernel_len, 0x200000);
}

#[test]
fn pvh_bad_magic_and_truncation_are_errors() {
    let mut m = pvh_memory(false);
    m.put32(0x6000, 0x1234);
    let mut data = LoaderData::new();
    assert_eq!(
        parse_loader(&&m, PROTOCOL_PVH, 0, 0x6000, LAYOUT, &mut data).err(),
        Some(BootError::BadMagic { protocol: "PVH", found: 0x1234 })
    );
    let m = pvh_memory(false);
    let mut data = LoaderData::new();
    assert!(parse_loader(&&m, PROTOCOL_PVH, 0, 0x7fff0, LAYOUT, &mut data).is_err());
    let mut m = pvh_memory(false);
    m.put32(0x6000 + 48, 0x100_0000); // memmap_entries far past memory
    let mut data = LoaderData::new();
    assert_eq!(
        parse_loader(&&m, PROTOCOL_PVH, 0, 0x6000, LAYOUT, &mut data).err(),
        Some(BootError::Unreadable("PVH memory map"))
    );
}

/// Multiboot2 information as GRUB writes it.
fn mb2_memory() -> Flat {
    let mut m = Flat(vec![0; 0x80000]);
    let base = 0x9000;
    let mut off = 8;
    let mut tag = |m: &mut Flat, ty: u32, body: &[u8]| {
        let size = 8 + body.len();
        m.put32(base + off, ty);
        m.put32(base + off + 4, size as u32);
        m.put(base + off + 8, body);
        off += (size + 7) & !7;
    };
    tag(&mut m, 1, b"test log=debug\0");
    tag(&mut m, 2, b"GRUB 2.06\0");
    let mut module = Vec::new();
    module.extend_from_slice(&0x20000u32.to_le_bytes());
    module.extend_from_slice(&(0x20000u32 + 5).to_le_bytes());
    module.extend_from_slice(b"gsp_tu10x.bin fw\0");
    tag(&mut m, 3, &module);
    m.put(0x20000, b"hello");
    let mut mmap = Vec::new();
    mmap.extend_from_slice(&24u32.to_le_bytes());
    mmap.extend_from_slice(&0u32.to_le_bytes());
    for (a, s, t) in [(0u64, 0x9fc00u64, 1u32), (0x100000, 0xff00000, 1), (0xfffc0000, 0x40000, 2)] {
        mmap.extend_from_slice(&a.to_le_bytes());
        mmap.extend_from_slice(&s.to_le_bytes());
        mmap.extend_from_slice(&t.to_le_bytes());
        mmap.extend_from_slice(&0u32.to_le_bytes());
    }
    tag(&mut m, 6, &mmap);
    let mut fb = Vec::new();
    fb.extend_from_slice(&0x8000_0000u64.to_le_bytes());
    fb.extend_from_slice(&(1024u32 * 4).to_le_bytes());
    fb.extend_from_slice(&1024u32.to_le_bytes());
    fb.extend_from_slice(&768u32.to_le_bytes());
    fb.extend_from_slice(&[32, 1, 0, 0, 16, 8, 8, 8, 0, 8]);
    tag(&mut m, 8, &fb);
    let mut rsdp = b"RSD PTR ".to_vec();
    rsdp.resize(20, 0);
    tag(&mut m, 14, &rsdp);
    tag(&mut m, 0, &[]);
    m.put32(base, off as u32);
    m
}

#[test]
fn multiboot2_information_gives_the_same_boot_info() {
    let m = mb2_memory();
    let mut data = LoaderData::new();
    let proto =
        parse_loader(&&m, PROTOCOL_MULTIBOOT2, multiboot2::MULTIBOOT2_BOOTLOADER_MAGIC, 0x9000, LAYOUT, &mut data)
            .unwrap();
    assert_eq!(proto, Protocol::Multiboot2);
    assert_eq!(data.cmdline, "test log=debug");
    assert_eq!(data.loader_name, "GRUB 2.06");
    let fw = data.module("gsp_tu10x.bin").unwrap();
    assert_eq!((fw.data, fw.args), (&b"hello"[..], "gsp_tu10x.bin fw"));
    // The RSDP copy inside the ACPI tag: its address is the tag body.
    let rsdp = data.rsdp.unwrap();
    assert_eq!(&m.0[rsdp as usize..rsdp as usize + 8], b"RSD PTR ");
    assert_eq!(usable(&data), vec![(0x100000, 0x200000), (0x400000, 0x10000000)]);
    let mut info = BootInfo::new((&mut [][..]).into());
    fill_boot_info(&mut info, &data, LAYOUT);
    let fb = info.framebuffer.as_ref().unwrap();
    assert_eq!((fb.info().width, fb.info().height, fb.info().stride), (1024, 768, 1024));
    assert!(matches!(fb.info().pixel_format, PixelFormat::Bgr));
}

#[test]
fn multiboot2_damage_is_reported() {
    let m = mb2_memory();
    let mut data = LoaderData::new();
    assert_eq!(
        parse_loader(&&m, PROTOCOL_MULTIBOOT2, 0x2BADB002, 0x9000, LAYOUT, &mut data).err(),
        Some(BootError::BadMagic { protocol: "Multiboot2", found: 0x2BADB002 })
    );
    // A tag whose size runs past total_size.
    let mut m = mb2_memory();
    m.put32(0x9000 + 12, 0x10_0000);
    let mut data = LoaderData::new();
    assert!(parse_loader(&&m, PROTOCOL_MULTIBOOT2, multiboot2::MULTIBOOT2_BOOTLOADER_MAGIC, 0x9000, LAYOUT, &mut data)
        .is_err());
    // A tag of size 0 must not loop forever.
    let mut m = mb2_memory();
    m.put32(0x9000 + 12, 0);
    let mut data = LoaderData::new();
    assert_eq!(
        parse_loader(&&m, PROTOCOL_MULTIBOOT2, multiboot2::MULTIBOOT2_BOOTLOADER_MAGIC, 0x9000, LAYOUT, &mut data)
            .err(),
        Some(BootError::Malformed("Multiboot2 tag size"))
    );
    assert_eq!(parse_loader(&&m, 7, 0, 0, LAYOUT, &mut LoaderData::new()).err(), Some(BootError::UnknownProtocol(7)));
}

#[test]
fn multiboot2_memory_map_tag_shorter_than_its_header_is_an_error() {
    // A memory map tag of 12 bytes: entry_size (24) is there, entry_version and the entries are
    // not. This used to index past the tag.
    let mut m = Flat(vec![0; 0x10000]);
    let base = 0x9000;
    m.put32(base + 8, 6);
    m.put32(base + 12, 12);
    m.put32(base + 16, 24);
    m.put32(base + 24, 0);
    m.put32(base + 28, 8);
    m.put32(base, 32);
    let mut data = LoaderData::new();
    assert_eq!(
        parse_loader(&&m, PROTOCOL_MULTIBOOT2, multiboot2::MULTIBOOT2_BOOTLOADER_MAGIC, 0x9000, LAYOUT, &mut data)
            .err(),
        Some(BootError::Malformed("Multiboot2 memory map tag size"))
    );
}
