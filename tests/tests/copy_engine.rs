//! The driver's copy engine encoder against the model's copy engine: each operation is encoded
//! for every DMA copy class, decoded back from the pushbuffer (`nvgpu::host::decode`), fed method
//! by method to `sim::ce::CopyEngine`, and the memory compared byte for byte with a CPU reference.

use nvgpu::ce::*;
use nvgpu::host::{decode, PushBuffer};
use nvgpu::hw::host::method::NVC46F_SET_OBJECT;
use sim::ce::{CeBus, CeError, CopyClass, CopyEngine, LaunchOutcome, NoPhysicalMemory};
use sim::engine_mem::{FlatMemory, PhysAddr, PhysAperture, PhysicalMemory};

const SUBCHANNEL: u8 = 4;

/// The model's engine for the driver's class, found by class number alone.
fn model_engine(class: CeClass) -> CopyEngine {
    CopyEngine::new(CopyClass::from_number(class.class_number()).expect("the model implements every copy class"))
}

/// The driver's per-class predicates (`CeClass`) against the model's own reading of each class
/// header (`sim::ce::CLASSES`): the same classes, and for each the same address widths and
/// optional fields.
#[test]
fn the_drivers_copy_classes_are_the_models_reading_of_the_headers() {
    let model: Vec<u32> = sim::ce::CLASSES.iter().map(|c| c.number).collect();
    let driver: Vec<u32> = CeClass::ALL.iter().map(|c| c.class_number()).collect();
    assert_eq!(driver, model);
    for &class in CeClass::ALL {
        let m = CopyClass::from_number(class.class_number()).unwrap();
        assert_eq!(class.address_bits(), 32 + m.offset_upper_bits, "{}", m.name);
        assert_eq!(class.semaphore_address_bits(), 32 + m.semaphore_upper_bits, "{}", m.name);
        assert_eq!(class.has_peer_aperture(), m.peer_id.is_some(), "{}", m.name);
        assert_eq!(class.has_payload_upper(), m.payload_size.is_some(), "{}", m.name);
        assert_eq!(class.semaphore_payload_size_field(), m.payload_size, "{}", m.name);
        assert_eq!(class.has_bypass_l2(), m.bypass_l2, "{}", m.name);
        assert_eq!(class.has_copy_type(), m.copy_type.is_some(), "{}", m.name);
        assert_eq!(class.has_force_rmwdisable(), m.force_rmwdisable, "{}", m.name);
    }
}

/// Video memory and system memory, each flat from 0.
struct Apertures {
    vid: Vec<u8>,
    sys: Vec<u8>,
}

impl Apertures {
    fn mem(&mut self, aperture: PhysAperture) -> Option<&mut Vec<u8>> {
        match aperture {
            PhysAperture::Video => Some(&mut self.vid),
            PhysAperture::SystemCoherent | PhysAperture::SystemNonCoherent => Some(&mut self.sys),
            PhysAperture::Peer(_) => None,
        }
    }
}

impl PhysicalMemory for Apertures {
    fn read_phys(&mut self, at: PhysAddr, buf: &mut [u8]) -> bool {
        let Some(m) = self.mem(at.aperture) else { return false };
        let Some(src) = usize::try_from(at.addr).ok().and_then(|a| m.get(a..a.checked_add(buf.len())?)) else {
            return false;
        };
        buf.copy_from_slice(src);
        true
    }
    fn write_phys(&mut self, at: PhysAddr, data: &[u8]) -> bool {
        let Some(m) = self.mem(at.aperture) else { return false };
        let Some(dst) = usize::try_from(at.addr).ok().and_then(|a| m.get_mut(a..a.checked_add(data.len())?)) else {
            return false;
        };
        dst.copy_from_slice(data);
        true
    }
}

/// Feeds every method of `pb` to `ce`; returns the launches' outcomes.
fn execute(
    pb: &PushBuffer,
    ce: &mut CopyEngine,
    virt: &mut FlatMemory,
    phys: &mut dyn PhysicalMemory,
) -> Result<Vec<LaunchOutcome>, CeError> {
    let mut bus = CeBus { virt, phys, timestamp_ns: 77 };
    let mut outcomes = Vec::new();
    for m in decode(pb.words()) {
        let m = m.expect("the encoder's pushbuffer decodes");
        assert_eq!(m.subchannel, SUBCHANNEL);
        for (method, value) in m.writes() {
            if method == NVC46F_SET_OBJECT {
                assert_eq!(value, ce.class().number);
                continue;
            }
            if let Some(o) = ce.method(method, value, &mut bus)? {
                outcomes.push(o);
            }
        }
    }
    Ok(outcomes)
}

fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

const SIZES: &[u64] = &[0, 1, 3, 4, 5, 7, 8, 13, 64, 4095, 4096, 4097, 65535, 65536, 65537, 200_003];
const ALIGNS: &[u64] = &[0, 1, 3, 4, 8, 4095];

#[test]
fn virtual_copies_match_the_cpu_for_every_class_size_and_alignment() {
    let len = 1 << 20;
    let base = 0x7_0000_0000;
    for &class in CeClass::ALL {
        let e = CeEncoder::new(class, SUBCHANNEL);
        let mut ce = model_engine(class);
        for (k, &bytes) in SIZES.iter().enumerate() {
            for (j, &align) in ALIGNS.iter().enumerate() {
                let mut mem = FlatMemory::new(base, len);
                mem.bytes = pattern(len, (k * 31 + j) as u32);
                let mut reference = mem.bytes.clone();
                let (src, dst) = (0x100 + align, 0x80000 + (align * 7) % 64);
                reference.copy_within(src as usize..(src + bytes) as usize, dst as usize);
                let mut pb = PushBuffer::new();
                pb.set_object(SUBCHANNEL, class.class_number() as u16).unwrap();
                e.copy(
                    &mut pb,
                    CeAddress::Virtual(base + src),
                    CeAddress::Virtual(base + dst),
                    bytes,
                    Pipelining::NonPipelined,
                )
                .unwrap();
                e.release_semaphore(&mut pb, base + 0xff000, k as u32 + 1).unwrap();
                reference[0xff000..0xff004].copy_from_slice(&(k as u32 + 1).to_le_bytes());
                let out = execute(&pb, &mut ce, &mut mem, &mut NoPhysicalMemory).unwrap();
                assert_eq!(out.iter().map(|o| o.bytes_written).sum::<u64>(), bytes);
                assert_eq!(out.last().and_then(|o| o.semaphore), Some(base + 0xff000));
                assert!(mem.bytes == reference, "{class:?}: {bytes} bytes at alignment {align}");
            }
        }
    }
}

#[test]
fn memsets_match_the_cpu() {
    let len = 1 << 19;
    let patterns = [
        MemsetPattern::U8(0xa5),
        MemsetPattern::U32(0x4433_2211),
        MemsetPattern::U64(0x8877_6655_4433_2211),
        MemsetPattern::U64(0),
        MemsetPattern::U32(0x7f7f_7f7f),
    ];
    for &class in CeClass::ALL {
        let e = CeEncoder::new(class, SUBCHANNEL);
        let mut ce = model_engine(class);
        for (p, &pat) in patterns.iter().enumerate() {
            let (pbytes, n) = pat.bytes();
            for &bytes in SIZES {
                for &align in ALIGNS {
                    let mut mem = FlatMemory::new(0, len);
                    mem.bytes = pattern(len, p as u32);
                    let mut reference = mem.bytes.clone();
                    let dst = 0x1000 + align;
                    for i in 0..bytes as usize {
                        reference[dst as usize + i] = pbytes[i % n];
                    }
                    let mut pb = PushBuffer::new();
                    e.memset(&mut pb, CeAddress::Virtual(dst), pat, bytes, Pipelining::Pipelined).unwrap();
                    let out = execute(&pb, &mut ce, &mut mem, &mut NoPhysicalMemory).unwrap();
                    assert_eq!(out.iter().map(|o| o.bytes_written).sum::<u64>(), bytes);
                    assert!(mem.bytes == reference, "{class:?}: {pat:?} x {bytes} at {dst:#x}");
                }
            }
        }
    }
}

#[test]
fn physical_h2d_d2h_d2d_and_virtual_to_physical() {
    for &class in CeClass::ALL {
        let e = CeEncoder::new(class, SUBCHANNEL);
        let mut ce = model_engine(class);
        let mut ap = Apertures { vid: pattern(1 << 18, 1), sys: pattern(1 << 18, 2) };
        let mut virt = FlatMemory::new(0x10_0000, 1 << 16);
        virt.bytes = pattern(1 << 16, 3);
        let vid = |addr| CeAddress::Physical { aperture: CeAperture::LocalFb, addr };
        let sys = |addr| CeAddress::Physical { aperture: CeAperture::CoherentSysmem, addr };
        let nsys = |addr| CeAddress::Physical { aperture: CeAperture::NoncoherentSysmem, addr };
        let (mut vid_ref, mut sys_ref) = (ap.vid.clone(), ap.sys.clone());
        let mut pb = PushBuffer::new();
        // H2D, D2H, D2D, V2D, and a memset into system memory.
        e.copy(&mut pb, sys(0x10), vid(0x20001), 70001, Pipelining::NonPipelined).unwrap();
        vid_ref.copy_within(0..0, 0);
        vid_ref[0x20001..0x20001 + 70001].copy_from_slice(&sys_ref[0x10..0x10 + 70001]);
        e.copy(&mut pb, vid(0x3), nsys(0x30000), 4097, Pipelining::NonPipelined).unwrap();
        sys_ref[0x30000..0x30000 + 4097].copy_from_slice(&vid_ref[0x3..0x3 + 4097]);
        e.copy(&mut pb, vid(0x100), vid(0x3f000), 4096, Pipelining::NonPipelined).unwrap();
        vid_ref.copy_within(0x100..0x1100, 0x3f000);
        e.copy(&mut pb, CeAddress::Virtual(0x10_0005), vid(0x8), 1000, Pipelining::NonPipelined).unwrap();
        vid_ref[0x8..0x8 + 1000].copy_from_slice(&virt.bytes[5..1005]);
        e.memset(&mut pb, sys(0x1), MemsetPattern::U32(0xcafe_f00d), 4095, Pipelining::Pipelined).unwrap();
        for i in 0..4095 {
            sys_ref[1 + i] = 0xcafe_f00du32.to_le_bytes()[i % 4];
        }
        execute(&pb, &mut ce, &mut virt, &mut ap).unwrap();
        assert!(ap.vid == vid_ref, "{class:?} video");
        assert!(ap.sys == sys_ref, "{class:?} system");
    }
}

#[test]
fn faulting_addresses_stop_with_a_fault() {
    for &class in CeClass::ALL {
        let e = CeEncoder::new(class, SUBCHANNEL);
        let mut ce = model_engine(class);
        let mut mem = FlatMemory::new(0x1000, 0x1000);
        let mut pb = PushBuffer::new();
        e.copy(&mut pb, CeAddress::Virtual(0x1000), CeAddress::Virtual(0x1f00), 0x200, Pipelining::NonPipelined)
            .unwrap();
        match execute(&pb, &mut ce, &mut mem, &mut NoPhysicalMemory) {
            Err(CeError::Fault(f)) => assert_eq!(f.va, 0x2000),
            other => panic!("{class:?}: {other:?}"),
        }
        let mut pb = PushBuffer::new();
        e.release_semaphore(&mut pb, 0x8000, 1).unwrap();
        assert!(matches!(execute(&pb, &mut ce, &mut mem, &mut NoPhysicalMemory), Err(CeError::Fault(_))));
    }
}

#[test]
fn timestamped_and_64_bit_releases_land_as_encoded() {
    for &class in CeClass::ALL {
        let e = CeEncoder::new(class, SUBCHANNEL);
        let mut ce = model_engine(class);
        let mut mem = FlatMemory::new(0, 0x100);
        let mut pb = PushBuffer::new();
        let r = SemaphoreRelease {
            va: 0x40,
            payload: 5,
            payload_64: false,
            timestamp: true,
            flush: None,
            interrupt: nvgpu::hw::ce::InterruptType::Blocking,
        };
        e.release(&mut pb, &r).unwrap();
        let out = execute(&pb, &mut ce, &mut mem, &mut NoPhysicalMemory).unwrap();
        assert_eq!(out[0].interrupt, Some(nvgpu::hw::ce::InterruptType::Blocking));
        assert_eq!(&mem.bytes[0x40..0x50], &[5, 0, 0, 0, 0, 0, 0, 0, 77, 0, 0, 0, 0, 0, 0, 0]);
        let mut pb = PushBuffer::new();
        match e.release_semaphore_64(&mut pb, 0x80, 0x0102_0304_0506_0708) {
            Ok(()) => {
                execute(&pb, &mut ce, &mut mem, &mut NoPhysicalMemory).unwrap();
                assert_eq!(&mem.bytes[0x80..0x88], &0x0102_0304_0506_0708u64.to_le_bytes());
            }
            Err(err) => {
                assert!(!class.has_payload_upper());
                assert_eq!(err, CeEncodeError::Payload64NotSupported { class });
            }
        }
    }
}

#[test]
fn transfers_above_4_gib_are_split_by_inspection() {
    // 9 GiB + 5 bytes and an 8-byte memset of 40 GiB + 4 (more than 2^32 elements): checked on the methods alone.
    for &class in CeClass::ALL {
        let e = CeEncoder::new(class, SUBCHANNEL);
        let mut pb = PushBuffer::new();
        e.copy(
            &mut pb,
            CeAddress::Virtual(0x1_0000_0000),
            CeAddress::Virtual(0x10_0000_0000),
            (9 << 30) + 5,
            Pipelining::Pipelined,
        )
        .unwrap();
        let w: Vec<(u32, u32)> = decode(pb.words()).flat_map(|m| m.unwrap().writes().collect::<Vec<_>>()).collect();
        let get = |m: u32| w.iter().filter(|x| x.0 == m).map(|x| x.1).collect::<Vec<_>>();
        assert_eq!(get(0x41c), [4]); // 4 lines of 2 GiB
        assert_eq!(get(0x410), [1 << 31]);
        assert_eq!(get(0x418), [1 << 31, (1 << 30) + 5]);
        assert_eq!(get(0x404), [0, 0]);
        assert_eq!(get(0x400), [1, 3]); // 0x1_0000_0000 + 8 GiB
        let mut pb = PushBuffer::new();
        e.memset(
            &mut pb,
            CeAddress::Virtual(0x8),
            MemsetPattern::U64(0x0102_0304_0506_0708),
            (40 << 30) + 4,
            Pipelining::Pipelined,
        )
        .unwrap();
        let w: Vec<(u32, u32)> = decode(pb.words()).flat_map(|m| m.unwrap().writes().collect::<Vec<_>>()).collect();
        let get = |m: u32| w.iter().filter(|x| x.0 == m).map(|x| x.1).collect::<Vec<_>>();
        // 20 lines of 2^28 8-byte elements, then a 4-byte word at the end.
        assert_eq!(get(0x41c), [20]);
        assert_eq!(get(0x414), [1 << 31]);
        assert_eq!(get(0x418), [1 << 28, 1]);
        assert_eq!(get(0x40c), [0x8, 0x8]);
        assert_eq!(get(0x408), [0, 10]);
        assert_eq!(get(0x704), [0x0102_0304, 0x0506_0708]);
    }
}
