//! GPU memory management (`nvgpu::mm`): page-table encodings bit for bit, the page-table builder
//! against a software walk and a reference model, and the VRAM allocator against a reference
//! model.
//!
//! Expected entry values are computed by hand here from `dev_mmu.h`'s field positions (written
//! out in each test), not from the driver's constants, so a wrong field shows up as a wrong word.
//! The fields the conformance test cannot evaluate (ranges written as arithmetic, such as
//! `(35-3):8`) are checked against the headers here.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use tests::rng::Rng;

use nvgpu::hw::mmu;
use nvgpu::hw::FactValue;
use nvgpu::mm::format::ver3_pte_pcf_table;
use nvgpu::mm::{
    Aperture, DualPde, FormatError, Kind, LevelKind, MmuFormat, PageSize, PageTableError, PageTableMemory, PageTables,
    Pte, PteAttrs, PteState, TableAddress, TableAperture, TableMemoryError, TlbChange, TlbError, TlbInvalidate,
    TlbInvalidator, VramAllocation, VramAllocator, VramError,
};

const K4: u64 = 4 << 10;
const K64: u64 = 64 << 10;
const M2: u64 = 2 << 20;
const M512: u64 = 512 << 20;

// ---------------------------------------------------------------------------------------------
// Table memory over Vecs, and a recording TLB.

#[derive(Default, Clone)]
struct VecTables {
    tables: BTreeMap<(TableAperture, u64), Vec<u64>>,
    next: BTreeMap<TableAperture, u64>,
    /// Alternate new tables between video and system memory.
    alternate: bool,
    allocated: u64,
    /// Tables that may still be allocated (None: unlimited).
    budget: std::cell::Cell<Option<u64>>,
    bad_frees: Vec<TableAddress>,
    /// Tables freed while still holding entries (only `release` may do that).
    dirty_frees: usize,
    peak_tables: usize,
}

impl VecTables {
    fn new(alternate: bool) -> Self {
        Self { alternate, ..Default::default() }
    }
    fn live(&self) -> usize {
        self.tables.len()
    }
    fn find(&self, at: TableAddress) -> Option<(&Vec<u64>, usize)> {
        let ((aperture, base), words) = self.tables.range(..=(at.aperture, at.address)).next_back()?;
        let offset = at.address.checked_sub(*base)?;
        (*aperture == at.aperture && offset % 8 == 0 && offset / 8 < words.len() as u64)
            .then_some((words, (offset / 8) as usize))
    }
}

impl PageTableMemory for VecTables {
    fn alloc_table(&mut self, bytes: u64, align: u64) -> Result<TableAddress, TableMemoryError> {
        assert!(align.is_power_of_two() && align >= 256, "alignment {align:#x}");
        if let Some(budget) = self.budget.get() {
            if budget == 0 {
                return Err(TableMemoryError::OutOfMemory { bytes });
            }
            self.budget.set(Some(budget - 1));
        }
        let aperture = if self.alternate && self.allocated % 2 == 1 {
            TableAperture::SystemCoherent
        } else {
            TableAperture::Video
        };
        self.allocated += 1;
        // Start away from 0 so that a zero address never passes for a real table.
        let next = self.next.entry(aperture).or_insert(0x10_0000);
        let base = next.next_multiple_of(align);
        *next = base + bytes.max(8);
        self.tables.insert((aperture, base), vec![0; (bytes / 8).max(1) as usize]);
        self.peak_tables = self.peak_tables.max(self.tables.len());
        Ok(TableAddress { aperture, address: base })
    }

    fn free_table(&mut self, table: TableAddress, bytes: u64) {
        match self.tables.remove(&(table.aperture, table.address)) {
            Some(words) if words.len() as u64 == (bytes / 8).max(1) => {
                if words.iter().any(|&w| w != 0) {
                    self.dirty_frees += 1;
                }
            }
            _ => self.bad_frees.push(table),
        }
    }

    fn read_u64(&self, at: TableAddress) -> Result<u64, TableMemoryError> {
        let (words, index) = self.find(at).ok_or(TableMemoryError::BadAddress { at })?;
        Ok(words[index])
    }

    fn write_u64(&mut self, at: TableAddress, value: u64) -> Result<(), TableMemoryError> {
        let ((_, base), _) =
            self.tables.range(..=(at.aperture, at.address)).next_back().ok_or(TableMemoryError::BadAddress { at })?;
        let base = *base;
        let (_, index) = self.find(at).ok_or(TableMemoryError::BadAddress { at })?;
        let words = self.tables.get_mut(&(at.aperture, base)).ok_or(TableMemoryError::BadAddress { at })?;
        words[index] = value;
        Ok(())
    }
}

#[derive(Default)]
struct RecordingTlb {
    requests: Vec<TlbInvalidate>,
    fail: bool,
}

impl TlbInvalidator for RecordingTlb {
    fn invalidate(&mut self, request: &TlbInvalidate) -> Result<(), TlbError> {
        self.requests.push(*request);
        if self.fail {
            Err(TlbError::Failed { what: "test" })
        } else {
            Ok(())
        }
    }
}

fn formats() -> [(&'static str, MmuFormat); 3] {
    [("ver2", MmuFormat::VER2), ("ver2+512M", MmuFormat::VER2_512M), ("ver3", MmuFormat::VER3)]
}

// ---------------------------------------------------------------------------------------------
// Encodings, bit for bit.

fn attrs(read_only: bool, atomic_disable: bool, privileged: bool, volatile: bool, kind: u8) -> PteAttrs {
    PteAttrs { read_only, atomic_disable, privileged, volatile, access_counting_disabled: false, kind }
}

#[test]
fn ver2_pte_encodings_are_bit_exact() {
    let f = MmuFormat::VER2;
    // VALID 0:0, APERTURE 2:1 (VIDEO 0, PEER 1, SYS_COH 2, SYS_NONCOH 3), VOL 3:3, PRIVILEGE 5:5,
    // READ_ONLY 6:6, ATOMIC_DISABLE 7:7, ADDRESS_SYS 53:8 and ADDRESS_VID 32:8 (address >> 12),
    // ADDRESS_VID_PEER 35:33, KIND 63:56.
    let pte = Pte { aperture: Aperture::Video, address: 0x12_3456_7000, attrs: attrs(true, false, false, true, 0x06) };
    let expected = 1 | 1 << 3 | 1 << 6 | (0x12_3456_7000u64 >> 12) << 8 | 0x06 << 56;
    assert_eq!(f.encode_pte(&pte), Ok(expected));
    assert_eq!(expected, 0x0600_0001_2345_6749);

    let pte = Pte { aperture: Aperture::SystemCoherent, address: 1 << 51, attrs: attrs(false, true, true, false, 0) };
    assert_eq!(f.encode_pte(&pte), Ok(1 | 2 << 1 | 1 << 5 | 1 << 7 | 1 << 47));

    let pte = Pte { aperture: Aperture::SystemNonCoherent, address: 0x5000, attrs: PteAttrs::default() };
    assert_eq!(f.encode_pte(&pte), Ok(1 | 3 << 1 | 0x5 << 8));

    let pte = Pte { aperture: Aperture::Peer(5), address: 0x20_0000, attrs: PteAttrs::default() };
    assert_eq!(f.encode_pte(&pte), Ok(1 | 1 << 1 | 5 << 33 | 0x200 << 8));

    // Video addresses have 37 bits; system addresses 58.
    let too_wide = Pte { aperture: Aperture::Video, address: 1 << 37, attrs: PteAttrs::default() };
    assert_eq!(
        f.encode_pte(&too_wide),
        Err(FormatError::AddressTooWide { field: "NV_MMU_VER2_PTE_ADDRESS_VID", address: 1 << 37 })
    );
    let misaligned = Pte { aperture: Aperture::Video, address: 0x1800, attrs: PteAttrs::default() };
    assert!(matches!(f.encode_pte(&misaligned), Err(FormatError::AddressMisaligned { alignment: 0x1000, .. })));
    let peer = Pte { aperture: Aperture::Peer(8), address: 0, attrs: PteAttrs::default() };
    assert_eq!(f.encode_pte(&peer), Err(FormatError::PeerIdOutOfRange { peer: 8 }));
    let acd = Pte { attrs: PteAttrs { access_counting_disabled: true, ..PteAttrs::default() }, ..peer };
    assert!(matches!(
        f.encode_pte(&Pte { aperture: Aperture::Video, ..acd }),
        Err(FormatError::AttributeNotInFormat { .. })
    ));

    // Invalid states the MMU reads (UVM's sparse and "unmapped" big PTEs).
    assert_eq!(f.sparse_pte(), 1 << 3);
    assert_eq!(f.unmapped_big_pte(), 1 << 5);
    assert_eq!(f.decode_pte(0), Ok(PteState::Invalid));
    assert_eq!(f.decode_pte(1 << 3), Ok(PteState::Sparse));
    assert_eq!(f.decode_pte(1 << 5), Ok(PteState::UnmappedBig));
}

#[test]
fn ver2_pde_encodings_are_bit_exact() {
    let f = MmuFormat::VER2;
    let video = |address| TableAddress { aperture: TableAperture::Video, address };
    let sys = |address| TableAddress { aperture: TableAperture::SystemCoherent, address };
    let noncoh = |address| TableAddress { aperture: TableAperture::SystemNonCoherent, address };
    // PDE: APERTURE 2:1 (INVALID 0, VIDEO 1, SYS_COH 2, SYS_NONCOH 3), VOL 3:3, ADDRESS_VID 32:8,
    // ADDRESS_SYS 53:8, address >> 12.
    assert_eq!(f.encode_pde(None), Ok(0));
    assert_eq!(f.encode_pde(Some(video(0x20_0000))), Ok(1 << 1 | 1 << 3 | 0x200 << 8));
    assert_eq!(f.encode_pde(Some(sys(0x1_0000_0000_0000))), Ok(2 << 1 | 1 << 3 | (0x1_0000_0000_0000u64 >> 12) << 8));
    assert_eq!(f.encode_pde(Some(noncoh(0x3000))), Ok(3 << 1 | 1 << 3 | 0x3 << 8));
    assert!(matches!(f.encode_pde(Some(video(0x100))), Err(FormatError::AddressMisaligned { alignment: 0x1000, .. })));
    assert!(matches!(f.encode_pde(Some(video(1 << 37))), Err(FormatError::AddressTooWide { .. })));

    // Dual PDE: big half APERTURE_BIG 2:1, VOL_BIG 3:3, ADDRESS_BIG_VID 32:4 / _SYS 53:4 (>> 8);
    // small half APERTURE_SMALL 66:65, VOL_SMALL 67:67, ADDRESS_SMALL_VID 96:72 / _SYS 117:72 (>> 12).
    let dual = DualPde { big: Some(video(0x1_0100)), small: Some(sys(0x3000_0000)) };
    let low = 1 << 1 | 1 << 3 | 0x101 << 4;
    let high = 2 << 1 | 1 << 3 | 0x3_0000u64 << 8;
    assert_eq!(f.encode_dual_pde(dual), Ok([low, high]));
    assert_eq!([low, high], [0x101a, 0x300_000c]);
    assert_eq!(f.decode_dual_pde([low, high]), Ok(dual));
    let small_only = DualPde { big: None, small: Some(video(0x7000)) };
    assert_eq!(f.encode_dual_pde(small_only), Ok([0, 1 << 1 | 1 << 3 | 0x7 << 8]));
    // Big page tables only need 256-byte alignment; small ones 4 KiB.
    assert!(f.encode_dual_pde(DualPde { big: Some(video(0x100)), small: None }).is_ok());
    assert!(f.encode_dual_pde(DualPde { big: None, small: Some(video(0x100)) }).is_err());
}

#[test]
fn ver3_encodings_are_bit_exact() {
    let f = MmuFormat::VER3;
    let video = |address| TableAddress { aperture: TableAperture::Video, address };
    let noncoh = |address| TableAddress { aperture: TableAperture::SystemNonCoherent, address };
    // PTE: VALID 0:0, APERTURE 2:1, PCF 7:3, KIND 11:8, ADDRESS_VID 39:12, ADDRESS_SYS/PEER 51:12
    // (address >> 12, so the bits stay in place), PEER_ID 63:61.
    // REGULAR_RW_ATOMIC_UNCACHED_ACE = 1.
    let pte = Pte { aperture: Aperture::Video, address: 0x12_3456_7000, attrs: attrs(false, false, false, true, 6) };
    assert_eq!(f.encode_pte(&pte), Ok(1 | 1 << 3 | 6 << 8 | 0x12_3456_7000));
    // PRIVILEGE_RO_NO_ATOMIC_CACHED_ACD = 0x1e.
    let pte = Pte {
        aperture: Aperture::Peer(7),
        address: 0xf_ffff_ffff_f000,
        attrs: PteAttrs { access_counting_disabled: true, ..attrs(true, true, true, false, 0) },
    };
    assert_eq!(f.encode_pte(&pte), Ok(1 | 1 << 1 | 0x1e << 3 | 0xf_ffff_ffff_f000 | 7 << 61));
    // REGULAR_RO_NO_ATOMIC_UNCACHED_ACE = 0xd, system coherent.
    let pte = Pte { aperture: Aperture::SystemCoherent, address: 1 << 50, attrs: attrs(true, true, false, true, 0) };
    assert_eq!(f.encode_pte(&pte), Ok(1 | 2 << 1 | 0xd << 3 | 1 << 50));
    // Video addresses have 40 bits; the kind 4.
    let too_wide = Pte { aperture: Aperture::Video, address: 1 << 40, attrs: PteAttrs::default() };
    assert!(matches!(f.encode_pte(&too_wide), Err(FormatError::AddressTooWide { .. })));
    let kind = Pte { aperture: Aperture::Video, address: 0, attrs: attrs(false, false, false, false, 0x10) };
    assert_eq!(f.encode_pte(&kind), Err(FormatError::KindTooWide { kind: 0x10, max: 0xf }));

    // Invalid PTEs: PCF INVALID 0, SPARSE 1, MAPPING_NOWHERE 2, NO_VALID_4KB_PAGE 3.
    assert_eq!(f.sparse_pte(), 1 << 3);
    assert_eq!(f.unmapped_big_pte(), 3 << 3);
    assert_eq!(f.decode_pte(2 << 3), Ok(PteState::MappingNowhere));
    assert_eq!(f.decode_pte(4 << 3), Err(FormatError::UndefinedValue { field: "NV_MMU_VER3_PTE_PCF", value: 4 }));

    // PDE: IS_PTE 0:0 clear, APERTURE 2:1, PCF 5:3 (VALID_UNCACHED_ATS_ALLOWED 1), ADDRESS 51:12.
    assert_eq!(f.encode_pde(Some(noncoh(0x4_0000_0000))), Ok(3 << 1 | 1 << 3 | 0x4_0000_0000));
    assert_eq!(f.decode_pde(3 << 1 | 1 << 3 | 0x4_0000_0000), Ok(Some(noncoh(0x4_0000_0000))));
    assert_eq!(
        f.decode_pde(1 << 1 | 5 << 3),
        Err(FormatError::UndefinedValue { field: "NV_MMU_VER3_PDE_PCF", value: 5 })
    );
    // Dual PDE: APERTURE_BIG 2:1, PCF_BIG 5:3, ADDRESS_BIG 51:8 (>> 8); APERTURE_SMALL 66:65,
    // PCF_SMALL 69:67, ADDRESS_SMALL 115:76 (>> 12).
    let dual = DualPde { big: Some(video(0x100)), small: Some(video(0x5000)) };
    assert_eq!(f.encode_dual_pde(dual), Ok([1 << 1 | 1 << 3 | 0x100, 1 << 1 | 1 << 3 | 0x5000]));
    assert_eq!(f.decode_dual_pde([0x10a, 0x500a]), Ok(dual));
}

/// Each `NV_MMU_VER3_PTE_PCF_<REGULAR|PRIVILEGE>_<RW|RO>_<ATOMIC|NO_ATOMIC>_<CACHED|UNCACHED>_<ACE|ACD>`
/// the driver declares encodes exactly the attributes its name spells.
#[test]
fn ver3_pcf_values_match_their_names() {
    let mut checked = 0;
    for fact in mmu::FACTS.iter().flat_map(|g| g.iter()).flat_map(|f| f.iter()) {
        let Some(rest) = fact.name.strip_prefix("NV_MMU_VER3_PTE_PCF_") else {
            continue;
        };
        let words: Vec<&str> = rest.split('_').collect();
        let (privileged, rest) = match words.split_first() {
            Some((&"REGULAR", r)) => (false, r),
            Some((&"PRIVILEGE", r)) => (true, r),
            _ => continue,
        };
        let read_only = rest[0] == "RO";
        let (atomic_disable, rest) = if rest[1] == "NO" { (true, &rest[3..]) } else { (false, &rest[2..]) };
        let volatile = rest[0] == "UNCACHED";
        let access_counting_disabled = rest[1] == "ACD";
        let FactValue::Number(value) = fact.value else { panic!("{}", fact.name) };
        let attrs = PteAttrs { read_only, atomic_disable, privileged, volatile, access_counting_disabled, kind: 0 };
        let (_, table_value) = ver3_pte_pcf_table().find(|(a, _)| *a == attrs).expect("every combination");
        assert_eq!(u64::from(table_value), value, "{}", fact.name);
        let raw = MmuFormat::VER3.encode_pte(&Pte { aperture: Aperture::Video, address: 0, attrs }).expect("encodes");
        assert_eq!((raw >> 3) & 0x1f, value, "{}", fact.name);
        checked += 1;
    }
    assert_eq!(checked, 32);
}

#[test]
fn encodings_round_trip() {
    let mut rng = Rng(0x5eed_0001);
    for (name, f) in formats() {
        for _ in 0..5_000 {
            let aperture = match rng.below(4) {
                0 => Aperture::Video,
                1 => Aperture::SystemCoherent,
                2 => Aperture::SystemNonCoherent,
                _ => Aperture::Peer(rng.below(8) as u8),
            };
            let addr_bits = match (f.version, aperture) {
                (nvgpu::hal::MmuVersion::V2, Aperture::Video | Aperture::Peer(_)) => 37,
                (nvgpu::hal::MmuVersion::V2, _) => 58,
                (nvgpu::hal::MmuVersion::V3, Aperture::Video) => 40,
                (nvgpu::hal::MmuVersion::V3, _) => 52,
            };
            let address = rng.next_u64() & ((1 << addr_bits) - 1) & !0xfff;
            let attrs = PteAttrs {
                read_only: rng.chance(50),
                atomic_disable: rng.chance(50),
                privileged: rng.chance(50),
                volatile: rng.chance(50),
                access_counting_disabled: f.version == nvgpu::hal::MmuVersion::V3 && rng.chance(50),
                kind: (rng.next_u64() as u8) & f.max_kind(),
            };
            let pte = Pte { aperture, address, attrs };
            let raw = f.encode_pte(&pte).unwrap_or_else(|e| panic!("{name}: {pte:?}: {e}"));
            assert!(f.is_pte(raw));
            assert_eq!(f.decode_pte(raw), Ok(PteState::Valid(pte)), "{name}: {raw:#x}");
        }
    }
}

#[test]
fn level_layouts_match_rm_and_uvm() {
    // (name, VA bits hi:lo, entry bytes, table bytes), root first (kgmmuFmtInitLevels_GP10X and
    // _GH10X; UVM's index_bits 2/9/9/8 then 5 or 9, and 1/9/9/9/8 then 5 or 9).
    let v2 = [
        ("PD3", 48, 47, 8, 32),
        ("PD2", 46, 38, 8, 4096),
        ("PD1", 37, 29, 8, 4096),
        ("PD0", 28, 21, 16, 4096),
        ("PT_BIG", 20, 16, 8, 256),
        ("PT_SMALL", 20, 12, 8, 4096),
    ];
    let v3 = [
        ("PD4", 56, 56, 8, 16),
        ("PD3", 55, 47, 8, 4096),
        ("PD2", 46, 38, 8, 4096),
        ("PD1", 37, 29, 8, 4096),
        ("PD0", 28, 21, 16, 4096),
        ("PT_BIG", 20, 16, 8, 256),
        ("PT_SMALL", 20, 12, 8, 4096),
    ];
    for (format, expected, va_bits) in [(MmuFormat::VER2, &v2[..], 49), (MmuFormat::VER3, &v3[..], 57)] {
        assert_eq!(format.va_bits(), va_bits);
        let got: Vec<_> =
            format.levels().iter().map(|l| (l.name, l.va_bit_hi, l.va_bit_lo, l.entry_size, l.table_bytes())).collect();
        assert_eq!(got, expected);
        for (i, level) in format.levels().iter().enumerate() {
            let align = if level.kind == LevelKind::BigPageTable { 256 } else { 4096 };
            assert_eq!(format.table_alignment(i), align, "{}", level.name);
        }
    }
    let sizes = |f: MmuFormat| f.page_sizes().collect::<Vec<_>>();
    use PageSize::*;
    assert_eq!(sizes(MmuFormat::VER2), [Size2M, Size64K, Size4K]);
    assert_eq!(sizes(MmuFormat::VER2_512M), [Size512M, Size2M, Size64K, Size4K]);
    assert_eq!(sizes(MmuFormat::VER3), [Size512M, Size2M, Size64K, Size4K]);
    assert_eq!(MmuFormat::for_family(nvgpu::hal::Family::Hopper), MmuFormat::VER3);
    assert_eq!(MmuFormat::for_family(nvgpu::hal::Family::Turing), MmuFormat::VER2);
    for hal in nvgpu::hal::ALL {
        assert_eq!(MmuFormat::for_family(hal.family).version, hal.mmu_version, "{:?}", hal.family);
    }
    assert_eq!((Kind::PITCH, Kind::GENERIC_MEMORY_TU102, Kind::GENERIC_MEMORY_GH100), (0, 6, 6));
}

// ---------------------------------------------------------------------------------------------
// Fields whose header ranges are arithmetic, checked against the headers.

fn real_data() -> PathBuf {
    match std::env::var_os("NVGPU_REAL_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/real-data"),
    }
}

/// Evaluates `+ - *` over integers with parentheses (all the headers' ranges use).
fn eval(expr: &str) -> Option<u64> {
    fn sum(s: &[u8], i: &mut usize) -> Option<i64> {
        let mut v = product(s, i)?;
        while *i < s.len() && (s[*i] == b'+' || s[*i] == b'-') {
            let op = s[*i];
            *i += 1;
            let r = product(s, i)?;
            v = if op == b'+' { v + r } else { v - r };
        }
        Some(v)
    }
    fn product(s: &[u8], i: &mut usize) -> Option<i64> {
        let mut v = atom(s, i)?;
        while *i < s.len() && s[*i] == b'*' {
            *i += 1;
            v *= atom(s, i)?;
        }
        Some(v)
    }
    fn atom(s: &[u8], i: &mut usize) -> Option<i64> {
        if s.get(*i) == Some(&b'(') {
            *i += 1;
            let v = sum(s, i)?;
            (s.get(*i) == Some(&b')')).then_some(())?;
            *i += 1;
            return Some(v);
        }
        let start = *i;
        while *i < s.len() && s[*i].is_ascii_alphanumeric() {
            *i += 1;
        }
        let text = std::str::from_utf8(&s[start..*i]).ok()?;
        match text.strip_prefix("0x") {
            Some(hex) => i64::from_str_radix(hex, 16).ok(),
            None => text.parse().ok(),
        }
    }
    let compact: Vec<u8> = expr.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let mut i = 0;
    let v = sum(&compact, &mut i)?;
    (i == compact.len()).then(|| u64::try_from(v).ok()).flatten()
}

fn header_range(text: &str, name: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| {
        let mut words = l.split_whitespace();
        words.next() == Some("#define") && words.next() == Some(name)
    })?;
    let body = line.split_once(name)?.1;
    let body = body.split("/*").next()?.trim();
    let (hi, lo) = body.rsplit_once(':')?;
    Some((eval(hi)?, eval(lo)?))
}

#[test]
fn arithmetic_ranges_match_the_headers() {
    let root = real_data();
    let mut checked = 0;
    let names: HashSet<&str> = mmu::FACTS
        .iter()
        .flat_map(|g| g.iter())
        .flat_map(|f| f.iter())
        .filter(|f| f.value == FactValue::Defined)
        .map(|f| f.name)
        .collect();
    for fact in mmu::ARITHMETIC_FACTS.iter().flat_map(|g| g.iter()).flat_map(|f| f.iter()) {
        let (name, header, value) = (fact.name, fact.header, fact.value);
        assert!(names.contains(name), "{name} must be in mmu::FACTS (as a defined name) for the conformance test");
        let path = root.join(format!("open-gpu-kernel-modules-{}", header.release)).join(header.path);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("missing real data {} ({e}): run `sudo scripts/fetch-real-data.sh` first", path.display())
        });
        let FactValue::Bits { hi, lo } = value else { panic!("{name}: not a range") };
        let got = header_range(&text, name).unwrap_or_else(|| panic!("{name}: no evaluable range in {}", header.path));
        assert_eq!(got, (u64::from(hi), u64::from(lo)), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 7);
    assert_eq!(eval("(35-3)"), Some(32));
    assert_eq!(eval("(1*32+31-3)"), Some(60));
}

// ---------------------------------------------------------------------------------------------
// The page-table builder, against its own software walk.

fn new_tables(format: MmuFormat, alternate: bool) -> PageTables<VecTables> {
    PageTables::new(format, VecTables::new(alternate)).expect("root")
}

/// Checks every 4 KiB page of `[va, va + size)` translates to `pa + offset` with this page size.
fn assert_maps(
    pt: &PageTables<VecTables>,
    va: u64,
    pa: u64,
    size: u64,
    aperture: Aperture,
    attrs: PteAttrs,
    page_size: PageSize,
) {
    let mut offset = 0;
    while offset < size {
        let t = pt.translate(va + offset).expect("walk").unwrap_or_else(|| panic!("{:#x} unmapped", va + offset));
        assert_eq!(
            (t.pa, t.aperture, t.attrs, t.page_size),
            (pa + offset, aperture, attrs, page_size),
            "va {:#x}",
            va + offset
        );
        // Also an address inside the page, not just its first byte.
        let inside = pt.translate(va + offset + 0x123).expect("walk").expect("mapped");
        assert_eq!(inside.pa, pa + offset + 0x123);
        offset += K4;
    }
}

#[test]
fn mappings_resolve_with_the_page_size_alignment_allows() {
    for (name, format) in formats() {
        for alternate in [false, true] {
            let mut pt = new_tables(format, alternate);
            let mut tlb = RecordingTlb::default();
            let rw = attrs(false, false, false, true, 6);
            let ro = attrs(true, true, false, false, 6);

            // 2M-aligned VA and PA, 4 MiB + 64 KiB + 8 KiB: two 2M pages, one 64K, two 4K.
            let (va, pa, size) = (0x10_0000_0000, 0x2_0000_0000, 2 * M2 + K64 + 2 * K4);
            pt.map(va, pa, size, Aperture::Video, rw, &mut tlb).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_maps(&pt, va, pa, 2 * M2, Aperture::Video, rw, PageSize::Size2M);
            assert_maps(&pt, va + 2 * M2, pa + 2 * M2, K64, Aperture::Video, rw, PageSize::Size64K);
            assert_maps(&pt, va + 2 * M2 + K64, pa + 2 * M2 + K64, 2 * K4, Aperture::Video, rw, PageSize::Size4K);
            assert_eq!(pt.translate(va + size).unwrap(), None);
            assert_eq!(pt.translate(va - K4).unwrap(), None);

            // VA and PA agree only modulo 64K: no 2M pages anywhere.
            let (va2, pa2) = (0x20_0000_0000 + K64, 0x3_0000_0000 + 3 * K64);
            pt.map(va2, pa2, M2, Aperture::SystemCoherent, ro, &mut tlb).unwrap();
            assert_maps(&pt, va2, pa2, M2, Aperture::SystemCoherent, ro, PageSize::Size64K);
            // Only modulo 4K: all 4K pages.
            let (va3, pa3) = (0x30_0000_0000, 0x4_0000_1000);
            pt.map(va3, pa3, K64 + K4, Aperture::Peer(3), rw, &mut tlb).unwrap();
            assert_maps(&pt, va3, pa3, K64 + K4, Aperture::Peer(3), rw, PageSize::Size4K);

            // 64K and 4K pages side by side in one 2M region (both halves of the dual PDE).
            let base = 0x40_0000_0000;
            pt.map(base, 0x5_0000_0000, K64, Aperture::Video, rw, &mut tlb).unwrap();
            pt.map(base + K64, 0x5_0000_0000 + K4, K4, Aperture::SystemNonCoherent, ro, &mut tlb).unwrap();
            pt.map(base + K64 + K4, 0x6_0000_0000, K64 - K4, Aperture::Video, rw, &mut tlb).unwrap();
            assert_maps(&pt, base, 0x5_0000_0000, K64, Aperture::Video, rw, PageSize::Size64K);
            assert_maps(&pt, base + K64, 0x5_0000_0000 + K4, K4, Aperture::SystemNonCoherent, ro, PageSize::Size4K);
            assert_maps(&pt, base + K64 + K4, 0x6_0000_0000, K64 - K4, Aperture::Video, rw, PageSize::Size4K);

            // Forced page sizes, 512M where the format has them.
            let va4 = 0x1_0000_0000_0000 - 2 * M512;
            match pt.map_with_page_size(va4, 0, M512, PageSize::Size512M, Aperture::SystemCoherent, rw, &mut tlb) {
                Ok(()) => {
                    assert!(format.pages_512m, "{name}");
                    let t = pt.translate(va4 + 0x1234_5678).unwrap().unwrap();
                    assert_eq!((t.pa, t.page_size, t.page_va), (0x1234_5678, PageSize::Size512M, va4));
                }
                Err(PageTableError::PageSizeNotInFormat { page_size: PageSize::Size512M }) => {
                    assert!(!format.pages_512m)
                }
                Err(e) => panic!("{name}: {e}"),
            }
            pt.map_with_page_size(va4 + M512, 0, M2, PageSize::Size4K, Aperture::Video, rw, &mut tlb).unwrap();
            assert_maps(&pt, va4 + M512, 0, M2, Aperture::Video, rw, PageSize::Size4K);

            // The top of the VA space, and just past it.
            let top = (1u64 << format.va_bits()) - M2;
            pt.map(top, 0x7_0000_0000, M2, Aperture::Video, rw, &mut tlb).unwrap();
            assert_maps(&pt, top, 0x7_0000_0000, M2, Aperture::Video, rw, PageSize::Size2M);
            assert!(matches!(
                pt.map(top + M2, 0, K4, Aperture::Video, rw, &mut tlb),
                Err(PageTableError::OutsideVaSpace { .. })
            ));

            // Every successful operation invalidated exactly once, for its own range, on this PDB.
            assert!(tlb.requests.iter().all(|r| r.pdb == pt.pdb() && r.change == TlbChange::Upgrade));
            assert_eq!(tlb.requests.first().map(|r| (r.va, r.size)), Some((va, size)));
            assert!(tlb.requests.first().is_some_and(|r| r.directories_changed));
        }
    }
}

#[test]
fn bad_requests_change_nothing() {
    for (name, format) in formats() {
        let mut pt = new_tables(format, false);
        let mut tlb = RecordingTlb::default();
        let rw = PteAttrs::default();
        pt.map(0x4000_0000, 0x4000_0000, M2, Aperture::Video, rw, &mut tlb).unwrap();
        let tables = pt.memory().live();
        let requests = tlb.requests.len();
        let errors = [
            pt.map(0x1000, 0x1800, K4, Aperture::Video, rw, &mut tlb),
            pt.map(0x1000, 0x2000, 0x800, Aperture::Video, rw, &mut tlb),
            pt.map(0x1000, 0x2000, 0, Aperture::Video, rw, &mut tlb),
            pt.map(u64::MAX - 0xfff, 0, K4, Aperture::Video, rw, &mut tlb),
            pt.map(0x4000_0000 - K4, 0, 2 * K4, Aperture::Video, rw, &mut tlb),
            pt.map(0x8000_0000, 1 << 40, K4, Aperture::Video, rw, &mut tlb),
            pt.map(0x8000_0000, 0, K4, Aperture::Peer(9), rw, &mut tlb),
            // v2 has no access-counting bit; v3's KIND has 4 bits.
            pt.map(
                0x8000_0000,
                0,
                K4,
                Aperture::Video,
                PteAttrs { kind: 0xff, access_counting_disabled: format.version == nvgpu::hal::MmuVersion::V2, ..rw },
                &mut tlb,
            ),
            pt.map_with_page_size(0x8000_0000, 0, K64, PageSize::Size2M, Aperture::Video, rw, &mut tlb),
            pt.unmap(0x4000_0000, K64, &mut tlb),
            pt.unmap(0x4000_0000, 2 * M2, &mut tlb),
            pt.unmap(0x9000_0000, K4, &mut tlb),
            pt.change_protection(0x4000_0000 + K4, M2, rw, &mut tlb),
        ];
        for (i, e) in errors.iter().enumerate() {
            assert!(e.is_err(), "{name}: request {i} succeeded");
        }
        assert!(matches!(
            errors[4],
            Err(PageTableError::AlreadyMapped { va: 0x4000_0000, page_size: PageSize::Size2M })
        ));
        assert!(matches!(errors[9], Err(PageTableError::SplitsPage { va: 0x4000_0000, page_size: PageSize::Size2M })));
        assert!(matches!(errors[10], Err(PageTableError::NotMapped { va: 0x4020_0000 })));
        assert_eq!((pt.memory().live(), tlb.requests.len()), (tables, requests), "{name}");
        assert_maps(&pt, 0x4000_0000, 0x4000_0000, M2, Aperture::Video, rw, PageSize::Size2M);
    }
}

#[test]
fn running_out_of_table_memory_rolls_the_map_back() {
    for (name, format) in formats() {
        let mut pt = new_tables(format, true);
        let mut tlb = RecordingTlb::default();
        let rw = PteAttrs::default();
        pt.map(0, 0, K4, Aperture::Video, rw, &mut tlb).unwrap();
        let live = pt.memory().live();
        // 2M below 512 GiB needs a new PD1 and PD0; the next 2M, past the PD2 entry's end, needs
        // another PD1, which the budget refuses.
        pt.memory().budget.set(Some(2));
        let va = 0x80_0000_0000 - M2;
        let err = pt.map(va, 0, 2 * M2 + 3 * K4, Aperture::Video, rw, &mut tlb).unwrap_err();
        assert!(matches!(err, PageTableError::Memory(TableMemoryError::OutOfMemory { .. })), "{name}: {err}");
        for probe in [va, va + M2, va + 2 * M2, va + 2 * M2 + 2 * K4] {
            assert_eq!(pt.translate(probe).unwrap(), None, "{name}: {probe:#x}");
        }
        assert_eq!(pt.memory().live(), live, "{name}: tables of the failed map freed");
        assert!(pt.memory().bad_frees.is_empty());
        assert_eq!(pt.memory().dirty_frees, 0);
        assert_eq!(tlb.requests.last().map(|r| r.change), Some(TlbChange::Downgrade));
        pt.memory().budget.set(None);
        pt.map(va, 0, 2 * M2 + 3 * K4, Aperture::Video, rw, &mut tlb).unwrap();
        assert_maps(&pt, va, 0, 2 * M2, Aperture::Video, rw, PageSize::Size2M);
        let mem = pt.release();
        assert_eq!(mem.live(), 0, "{name}: release frees every table");
        assert!(mem.bad_frees.is_empty());
    }
}

#[test]
fn corrupt_tables_are_errors_not_panics() {
    for (name, format) in formats() {
        let mut tlb = RecordingTlb::default();
        let mut mem = VecTables::new(false);
        // A root whose entry 0 points nowhere, then one holding a PTE where none may be.
        let root = mem.alloc_table(4096, 4096).unwrap();
        let nowhere = TableAddress { aperture: TableAperture::Video, address: 0x7777_0000 };
        mem.write_u64(root, format.encode_pde(Some(nowhere)).unwrap()).unwrap();
        let walked = nvgpu::mm::walk(&format, &mem, root, 0x1000);
        assert!(
            matches!(walked, Err(PageTableError::Memory(TableMemoryError::BadAddress { .. }))),
            "{name}: {walked:?}"
        );
        mem.write_u64(root, 1).unwrap();
        let walked = nvgpu::mm::walk(&format, &mem, root, 0x1000);
        assert!(
            matches!(walked, Err(PageTableError::UnexpectedPte { level, .. }) if level == format.levels()[0].name),
            "{name}: {walked:?}"
        );
        // Random words anywhere in a real tree never panic the walk.
        let mut pt = new_tables(format, true);
        pt.map(0, 0, M2 + K64 + K4, Aperture::Video, PteAttrs::default(), &mut tlb).unwrap();
        pt.map(0x40_0000_0000, 0, M2 + K64 + K4, Aperture::SystemCoherent, PteAttrs::default(), &mut tlb).unwrap();
        let pdb = pt.pdb();
        let mut mem = pt.memory().clone();
        let keys: Vec<_> = mem.tables.keys().copied().collect();
        let mut rng = Rng(0xc0ffee);
        let mut errors = 0;
        for _ in 0..5000 {
            let (aperture, base) = rng.pick(&keys);
            let words = mem.tables[&(aperture, base)].len() as u64;
            let at = TableAddress { aperture, address: base + rng.below(words) * 8 };
            let value = if rng.chance(50) { rng.next_u64() } else { rng.next_u64() & 0xff };
            mem.write_u64(at, value).unwrap();
            for va in
                [rng.next_u64() & ((1 << format.va_bits()) - 1), rng.below(2 * M2), 0x40_0000_0000 + rng.below(2 * M2)]
            {
                errors += nvgpu::mm::walk(&format, &mem, pdb, va).is_err() as u32;
            }
        }
        assert!(errors > 0, "{name}: corruption was never noticed");
    }
}

// ---------------------------------------------------------------------------------------------
// Random map/unmap/protect/translate against a reference map.

#[derive(Clone, Copy, Debug, PartialEq)]
struct RefPage {
    /// Base VA and size of the PTE this 4K page belongs to.
    page_va: u64,
    page_size: PageSize,
    /// PA of this 4K page.
    pa: u64,
    aperture: Aperture,
    attrs: PteAttrs,
}

/// The page sizes `map` must choose, computed independently: 2M, then 64K, else 4K.
fn expected_plan(va: u64, pa: u64, size: u64) -> Vec<(u64, u64, PageSize)> {
    let mut out = Vec::new();
    let (mut v, mut p, end) = (va, pa, va + size);
    while v < end {
        let s = [PageSize::Size2M, PageSize::Size64K, PageSize::Size4K]
            .into_iter()
            .find(|s| v % s.bytes() == 0 && p % s.bytes() == 0 && end - v >= s.bytes())
            .unwrap();
        out.push((v, p, s));
        v += s.bytes();
        p += s.bytes();
    }
    out
}

fn random_attrs(rng: &mut Rng, format: MmuFormat) -> PteAttrs {
    PteAttrs {
        read_only: rng.chance(30),
        atomic_disable: rng.chance(30),
        privileged: rng.chance(10),
        volatile: rng.chance(50),
        access_counting_disabled: format.version == nvgpu::hal::MmuVersion::V3 && rng.chance(20),
        kind: rng.pick(&[0, 6]),
    }
}

fn check_page(pt: &PageTables<VecTables>, reference: &BTreeMap<u64, RefPage>, va: u64, context: &str) {
    let got = pt.translate(va).unwrap_or_else(|e| panic!("{context}: walk {va:#x}: {e}"));
    match reference.get(&va) {
        None => assert_eq!(got, None, "{context}: {va:#x} should be unmapped"),
        Some(r) => {
            let t = got.unwrap_or_else(|| panic!("{context}: {va:#x} should map {r:?}"));
            assert_eq!(
                (t.pa, t.aperture, t.attrs, t.page_size, t.page_va),
                (r.pa, r.aperture, r.attrs, r.page_size, r.page_va),
                "{context}: {va:#x}"
            );
        }
    }
}

fn random_churn(name: &str, format: MmuFormat, window: u64, seed: u64, ops: usize) {
    let mut rng = Rng(seed);
    let mut pt = new_tables(format, seed % 2 == 1);
    let mut tlb = RecordingTlb::default();
    let mut reference: BTreeMap<u64, RefPage> = BTreeMap::new();
    let mut mappings: Vec<(u64, u64)> = Vec::new();
    let span = 48 * M2;
    let video_limit = match format.version {
        nvgpu::hal::MmuVersion::V2 => 1u64 << 37,
        nvgpu::hal::MmuVersion::V3 => 1u64 << 40,
    };
    let (mut maps, mut unmaps, mut protects, mut refused) = (0, 0, 0, 0);
    for op in 0..ops {
        let context = format!("{name} seed {seed:#x} op {op}");
        let requests_before = tlb.requests.len();
        let choice = rng.below(100);
        let touched: (u64, u64);
        if choice < 50 || mappings.is_empty() {
            // Map: VA and PA aligned alike often enough to get 2M and 64K pages.
            let granule = rng.pick(&[K4, K64, M2]);
            let va = window + rng.below(span / granule) * granule;
            let size = match rng.below(4) {
                0 => (1 + rng.below(16)) * K4,
                1 => (1 + rng.below(40)) * K64,
                2 => (1 + rng.below(3)) * M2 + rng.below(3) * K64 + rng.below(3) * K4,
                _ => rng.pick(&[K4, K64, M2]),
            };
            let pa_granule = if rng.chance(70) { granule } else { K4 };
            let pa = rng.below(video_limit / 2 / pa_granule) * pa_granule;
            let aperture =
                rng.pick(&[Aperture::Video, Aperture::SystemCoherent, Aperture::SystemNonCoherent, Aperture::Peer(2)]);
            let attrs = random_attrs(&mut rng, format);
            let overlaps = reference.range(va..va + size).next().is_some()
                || reference.range(..va).next_back().is_some_and(|(_, r)| r.page_va + r.page_size.bytes() > va);
            let result = pt.map(va, pa, size, aperture, attrs, &mut tlb);
            if overlaps {
                assert!(matches!(result, Err(PageTableError::AlreadyMapped { .. })), "{context}: {result:?}");
                refused += 1;
                assert_eq!(tlb.requests.len(), requests_before);
            } else {
                result.unwrap_or_else(|e| panic!("{context}: map {va:#x}+{size:#x}: {e}"));
                for (pv, pp, ps) in expected_plan(va, pa, size) {
                    for off in (0..ps.bytes()).step_by(K4 as usize) {
                        reference
                            .insert(pv + off, RefPage { page_va: pv, page_size: ps, pa: pp + off, aperture, attrs });
                    }
                }
                mappings.push((va, size));
                maps += 1;
                assert_eq!(tlb.requests.len(), requests_before + 1);
            }
            touched = (va, size);
        } else {
            // Unmap or protect: usually a whole earlier mapping, sometimes an arbitrary range.
            let (va, size) = if rng.chance(75) {
                mappings[rng.below(mappings.len() as u64) as usize]
            } else {
                let va = window + rng.below(span / K4) * K4;
                (va, (1 + rng.below(600)) * K4)
            };
            let end = va + size;
            // Valid iff every 4K page is mapped and no PTE crosses the ends.
            let all_mapped = (va..end).step_by(K4 as usize).all(|p| reference.contains_key(&p));
            let cut = [va, end - K4]
                .iter()
                .any(|p| reference.get(p).is_some_and(|r| r.page_va < va || r.page_va + r.page_size.bytes() > end));
            let valid = all_mapped && !cut;
            let protect = rng.chance(40);
            let attrs = random_attrs(&mut rng, format);
            let result =
                if protect { pt.change_protection(va, size, attrs, &mut tlb) } else { pt.unmap(va, size, &mut tlb) };
            assert_eq!(
                result.is_ok(),
                valid,
                "{context}: {} {va:#x}+{size:#x}: {result:?}",
                if protect { "protect" } else { "unmap" }
            );
            if valid {
                assert_eq!(
                    tlb.requests.last().map(|r| (r.va, r.size, r.change)),
                    Some((va, size, TlbChange::Downgrade))
                );
                for p in (va..end).step_by(K4 as usize) {
                    if protect {
                        if let Some(r) = reference.get_mut(&p) {
                            r.attrs = attrs;
                        }
                    } else {
                        reference.remove(&p);
                    }
                }
                if protect {
                    protects += 1;
                } else {
                    unmaps += 1;
                    // Keep the list of whole mappings to those still fully mapped.
                    mappings.retain(|&(mva, msize)| {
                        (mva..mva + msize).step_by(K4 as usize).all(|p| reference.contains_key(&p))
                    });
                }
            } else {
                refused += 1;
                assert_eq!(tlb.requests.len(), requests_before, "{context}: a refused request invalidated");
            }
            touched = (va, size);
        }
        // The touched range, its neighbours and a few random pages.
        let (va, size) = touched;
        for p in (va.saturating_sub(K64)..va + size + K64).step_by(K4 as usize) {
            check_page(&pt, &reference, p, &context);
        }
        for _ in 0..16 {
            check_page(&pt, &reference, window + rng.below(span / K4) * K4, &context);
        }
        if op % 100 == 99 {
            for p in (window..window + span + 2 * M2).step_by(K4 as usize) {
                check_page(&pt, &reference, p, &context);
            }
        }
    }
    assert!(
        maps > ops / 10 && unmaps > ops / 20 && protects > ops / 40 && refused > 0,
        "{name}: {maps} {unmaps} {protects} {refused}"
    );
    // Unmap everything: only the root remains, and every table was freed properly.
    let all: Vec<_> = pt.mapped_pages(0, u64::MAX).into_iter().map(|p| (p.va, p.page_size.bytes())).collect();
    assert_eq!(all.iter().map(|(_, s)| s).sum::<u64>(), reference.len() as u64 * K4, "{name}");
    for (va, size) in all {
        pt.unmap(va, size, &mut tlb).unwrap();
    }
    assert_eq!(pt.memory().live(), 1, "{name}: only the root is left");
    assert!(pt.memory().bad_frees.is_empty(), "{name}: {:?}", pt.memory().bad_frees);
    assert_eq!(pt.memory().dirty_frees, 0, "{name}: a table was unlinked while it still held entries");
    assert!(pt.memory().tables.values().all(|t| t.iter().all(|&w| w == 0)));
    assert!(pt.memory().peak_tables > 5);
}

#[test]
fn random_map_unmap_protect_matches_a_reference_map() {
    for (name, format) in formats() {
        // Windows straddling a PD1 (512M), a PD2 (256G) and, for v3, a PD3 (128T) boundary, and
        // the top of the VA space.
        let top = (1u64 << format.va_bits()) - 56 * M2;
        let mut windows = vec![0x2000_0000 - 24 * M2, (1 << 38) - 24 * M2, top];
        if format.version == nvgpu::hal::MmuVersion::V3 {
            windows.push((1 << 47) - 24 * M2);
        }
        for (i, window) in windows.into_iter().enumerate() {
            random_churn(name, format, window, 0x1234_5678_9abc_def0 ^ (i as u64) << 8 ^ format.va_bits() as u64, 600);
        }
    }
}

#[test]
fn a_failed_tlb_invalidate_keeps_unlinked_tables_until_a_later_one_succeeds() {
    let mut pt = new_tables(MmuFormat::VER3, false);
    let mut tlb = RecordingTlb::default();
    pt.map(0x4000_0000, 0, K4, Aperture::Video, PteAttrs::default(), &mut tlb).unwrap();
    let with_tables = pt.memory().live();
    tlb.fail = true;
    assert!(matches!(pt.unmap(0x4000_0000, K4, &mut tlb), Err(PageTableError::Tlb(_))));
    assert_eq!(pt.translate(0x4000_0000).unwrap(), None);
    assert_eq!(pt.memory().live(), with_tables, "tables the GPU may still cache are not freed");
    tlb.fail = false;
    pt.map(0x8000_0000, 0, K4, Aperture::Video, PteAttrs::default(), &mut tlb).unwrap();
    assert!(pt.memory().live() < with_tables + 4);
    assert!(pt.memory().bad_frees.is_empty());
}

// ---------------------------------------------------------------------------------------------
// The VRAM allocator against a reference model: a free bit per page.

struct RefVram {
    /// (base, free flags per page) per region, after the reserved ranges.
    base: u64,
    free: Vec<bool>,
}

impl RefVram {
    fn new(regions: &[(u64, u64)], reserved: &[(u64, u64)]) -> Self {
        let end = regions.iter().map(|(b, s)| b + s).max().unwrap();
        let mut free = vec![false; (end / K4) as usize];
        for &(b, s) in regions {
            for p in b.div_ceil(K4)..(b + s) / K4 {
                free[p as usize] = true;
            }
        }
        for &(b, s) in reserved {
            for p in b / K4..(b + s).div_ceil(K4) {
                if let Some(f) = free.get_mut(p as usize) {
                    *f = false;
                }
            }
        }
        Self { base: 0, free }
    }
    /// Whether an aligned run of `pages` free pages exists.
    fn fits(&self, pages: u64, align: u64) -> bool {
        let step = (align / K4).max(1) as usize;
        let pages = pages as usize;
        let mut start = 0;
        while start + pages <= self.free.len() {
            match self.free[start..start + pages].iter().rposition(|f| !f) {
                None => return true,
                Some(used) => start = (start + used + 1).next_multiple_of(step),
            }
        }
        false
    }
    fn free_pages(&self) -> u64 {
        self.free.iter().filter(|f| **f).count() as u64
    }
}

#[test]
fn vram_churn_never_fails_while_an_aligned_run_exists() {
    const MIB: u64 = 1 << 20;
    // Two regions, one unaligned to chunks, and reserved holes (FRTS, a display surface).
    let regions = [(0, 40 * MIB), (64 * MIB + 12 * K4, 30 * MIB + 5 * K4)];
    let reserved = [(5 * MIB + K4, 2 * K4), (70 * MIB, MIB + K4), (39 * MIB + 512, 100)];
    for seed in [1u64, 2, 3, 4] {
        let mut rng = Rng(0xfeed_0000 + seed);
        let mut vram = VramAllocator::new(&regions, &reserved).unwrap();
        let mut model = RefVram::new(&regions, &reserved);
        assert_eq!(vram.stats().free_bytes, model.free_pages() * K4);
        let initial = vram.stats();
        let mut live: Vec<VramAllocation> = Vec::new();
        let (mut ok, mut exhausted) = (0, 0);
        for op in 0..6000 {
            let context = format!("seed {seed} op {op}");
            // Fill up most of the time, so the allocator runs close to full and fragmented.
            if live.is_empty() || rng.chance(if op % 2000 < 1400 { 65 } else { 35 }) {
                let size = match rng.below(10) {
                    0..=3 => (1 + rng.below(15)) * K4 - rng.below(2) * 100,
                    4..=6 => (1 + rng.below(31)) * K64,
                    7 => K64 + (1 + rng.below(15)) * K4,
                    8 => (1 + rng.below(3)) * 2 * MIB,
                    _ => (1 + rng.below(200)) * K4,
                };
                let align = rng.pick(&[0, K4, K4, K64, 2 * MIB, 8 * K4, 256 * K4]);
                let pages = size.div_ceil(K4);
                let feasible = model.fits(pages, align.max(K4));
                match vram.alloc(size, align) {
                    Ok(a) => {
                        assert!(feasible, "{context}: allocated where the model found no room");
                        assert_eq!(a.size(), pages * K4);
                        assert_eq!(a.base() % align.max(K4), 0, "{context}");
                        for p in a.base() / K4..a.base() / K4 + pages {
                            let f = &mut model.free[(p - model.base / K4) as usize];
                            assert!(*f, "{context}: page {:#x} handed out twice or reserved", p * K4);
                            *f = false;
                        }
                        live.push(a);
                        ok += 1;
                    }
                    Err(VramError::OutOfMemory { free_bytes, .. }) => {
                        assert!(!feasible, "{context}: {size:#x} aligned {align:#x} fits but alloc failed");
                        assert_eq!(free_bytes, model.free_pages() * K4);
                        exhausted += 1;
                    }
                    Err(e) => panic!("{context}: {e}"),
                }
            } else {
                let a = live.swap_remove(rng.below(live.len() as u64) as usize);
                for p in a.base() / K4..(a.base() + a.size()) / K4 {
                    model.free[p as usize] = true;
                }
                vram.free(a).unwrap();
            }
            let stats = vram.stats();
            assert_eq!(stats.free_bytes, model.free_pages() * K4, "{context}");
            assert_eq!(stats.allocations, live.len());
            assert_eq!(stats.allocated_bytes, live.iter().map(|a| a.size()).sum::<u64>());
        }
        assert!(ok > 1000 && exhausted > 50, "seed {seed}: {ok} allocations, {exhausted} exhausted");
        for a in live.drain(..) {
            vram.free(a).unwrap();
        }
        assert_eq!(vram.stats(), initial, "seed {seed}: everything merged back");
    }
}

#[test]
fn vram_prefers_split_space_and_keeps_whole_chunks() {
    const MIB: u64 = 1 << 20;
    let mut vram = VramAllocator::new(&[(0, 16 * MIB)], &[]).unwrap();
    // Small allocations pack into one 64K piece of one chunk.
    let small: Vec<_> = (0..16).map(|_| vram.alloc(K4, 0).unwrap()).collect();
    assert!(small.iter().all(|a| a.base() < K64));
    let s = vram.stats();
    assert_eq!((s.free_root_chunks, s.split_root_chunks, s.free_pieces_in_split_chunks), (7, 1, 31));
    // 64K requests take whole pieces of the split chunk before breaking another chunk.
    let big: Vec<_> = (0..31).map(|_| vram.alloc(K64, 0).unwrap()).collect();
    assert!(big.iter().all(|a| a.base() < M2 && a.base() % K64 == 0));
    assert_eq!(vram.stats().free_root_chunks, 7);
    // A 2 MiB request takes a whole chunk.
    let chunk = vram.alloc(M2, 0).unwrap();
    assert_eq!(chunk.base() % M2, 0);
    // Freeing a piece's pages in any order merges it back.
    for a in small.into_iter().rev() {
        vram.free(a).unwrap();
    }
    assert_eq!(vram.stats().free_pieces_in_split_chunks, 1);
    assert_eq!(vram.stats().largest_free_run, 12 * MIB);
    let e = vram.alloc(13 * MIB, 0).unwrap_err();
    assert!(matches!(e, VramError::OutOfMemory { largest_free_run, .. } if largest_free_run == 12 * MIB), "{e}");
}
