//! QMD builder and decoder over the layouts of [`crate::hw::qmd`]: the driver builds a QMD with
//! typed, range-checked setters; the GPU model decodes the same fields from the same table, so
//! neither can use a position the other does not.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::hw::qmd::{FieldPos, QmdLayout, Semantic};

/// A QMD field could not be set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QmdError {
    /// The layout has no such field (e.g. `SM_GLOBAL_CACHING_ENABLE` on Hopper).
    NoSuchField { semantic: Semantic, major: u8 },
    /// The value does not fit the field (after the field's shift).
    OutOfRange { field: &'static str, value: u64, max: u64 },
    /// The value is not a multiple of what a `_SHIFTED<n>` field can hold.
    Misaligned { field: &'static str, value: u64, align: u64 },
    /// An array index past the field's elements.
    BadIndex { field: &'static str, index: u32 },
    /// A decoded QMD has the wrong number of words.
    WrongSize { expected: usize, got: usize },
}

impl fmt::Display for QmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            QmdError::NoSuchField { semantic, major } => write!(f, "QMD version {major} has no {semantic:?} field"),
            QmdError::OutOfRange { field, value, max } => write!(f, "{field}: {value:#x} exceeds {max:#x}"),
            QmdError::Misaligned { field, value, align } => {
                write!(f, "{field}: {value:#x} is not a multiple of {align}")
            }
            QmdError::BadIndex { field, index } => write!(f, "{field}: no element {index}"),
            QmdError::WrongSize { expected, got } => write!(f, "QMD of {got} words, expected {expected}"),
        }
    }
}

/// A QMD being built or read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Qmd {
    pub layout: QmdLayout,
    words: Vec<u32>,
}

impl Qmd {
    /// A zeroed QMD of `layout` with its version fields set.
    pub fn new(layout: QmdLayout) -> Self {
        let mut qmd = Qmd { layout, words: vec![0; layout.dwords] };
        // Both version fields exist in every declared layout and the values fit 4 bits.
        let _ = qmd.set(Semantic::QmdMajorVersion, 0, layout.major.into());
        let _ = qmd.set(Semantic::QmdVersion, 0, layout.minor.into());
        qmd
    }

    /// Reads a QMD from memory.
    pub fn from_words(layout: QmdLayout, words: &[u32]) -> Result<Self, QmdError> {
        if words.len() != layout.dwords {
            return Err(QmdError::WrongSize { expected: layout.dwords, got: words.len() });
        }
        Ok(Qmd { layout, words: words.to_vec() })
    }

    /// The words, as the GPU reads them.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    fn pos(&self, semantic: Semantic, index: u32) -> Result<(&'static FieldPos, u32), QmdError> {
        let field = self.layout.field(semantic).ok_or(QmdError::NoSuchField { semantic, major: self.layout.major })?;
        if index > 0 && (field.stride == 0 || index >= self.layout.constant_buffers) {
            return Err(QmdError::BadIndex { field: field.name, index });
        }
        Ok((field, field.lo + index * field.stride))
    }

    /// Sets field `semantic` (element `index` of an array field) to `value`, in the field's
    /// natural unit (bytes for sizes and addresses: `_SHIFTED<n>` fields are shifted here).
    pub fn set(&mut self, semantic: Semantic, index: u32, value: u64) -> Result<(), QmdError> {
        let (field, lo) = self.pos(semantic, index)?;
        let align = 1u64 << field.shift;
        if !value.is_multiple_of(align) {
            return Err(QmdError::Misaligned { field: field.name, value, align });
        }
        let stored = value >> field.shift;
        let max = (1u64 << field.width()) - 1;
        if stored > max {
            return Err(QmdError::OutOfRange { field: field.name, value, max: max << field.shift });
        }
        put_bits(&mut self.words, lo, field.width(), stored).ok_or(QmdError::BadIndex { field: field.name, index })?;
        Ok(())
    }

    /// Reads field `semantic` (element `index`), in the field's natural unit.
    pub fn get(&self, semantic: Semantic, index: u32) -> Result<u64, QmdError> {
        let (field, lo) = self.pos(semantic, index)?;
        let value = get_bits(&self.words, lo, field.width()).ok_or(QmdError::BadIndex { field: field.name, index })?;
        Ok(value << field.shift)
    }

    /// Sets a 64-bit address split into `LOWER`/`UPPER` fields (the lower field's shift applies
    /// to the whole address, as `_SHIFTED` pairs in the headers split `address >> n`).
    pub fn set_address(&mut self, lower: Semantic, upper: Semantic, index: u32, address: u64) -> Result<(), QmdError> {
        let (lo_field, _) = self.pos(lower, index)?;
        let shift = lo_field.shift;
        if !address.is_multiple_of(1 << shift) {
            return Err(QmdError::Misaligned { field: lo_field.name, value: address, align: 1 << shift });
        }
        let shifted = address >> shift;
        let lo_bits = lo_field.width();
        let lo_mask = (1u64 << lo_bits) - 1;
        let (hi_field, _) = self.pos(upper, index)?;
        let hi = shifted >> lo_bits;
        if hi >> hi_field.width() != 0 {
            return Err(QmdError::OutOfRange { field: hi_field.name, value: address, max: u64::MAX });
        }
        // Write raw (unshifted) values: the shift was applied to the address as a whole.
        self.set(lower, index, (shifted & lo_mask) << shift)?;
        self.set(upper, index, hi << hi_field.shift)
    }

    /// The address of a `LOWER`/`UPPER` pair.
    pub fn address(&self, lower: Semantic, upper: Semantic, index: u32) -> Result<u64, QmdError> {
        let (lo_field, _) = self.pos(lower, index)?;
        let (hi_field, _) = self.pos(upper, index)?;
        let lo = self.get(lower, index)? >> lo_field.shift;
        let hi = self.get(upper, index)? >> hi_field.shift;
        Ok(((hi << lo_field.width()) | lo) << lo_field.shift)
    }
}

/// Writes the low `width` bits of `value` at bit `lo` of `words`, a word at a time; `None` when
/// the field runs past the end.
fn put_bits(words: &mut [u32], lo: u32, width: u32, value: u64) -> Option<()> {
    let (mut at, mut done) = (lo as usize, 0u32);
    while done < width {
        let (word, off) = (at / 32, (at % 32) as u32);
        let n = (32 - off).min(width - done);
        let mask = if n == 32 { u32::MAX } else { ((1u32 << n) - 1) << off };
        let bits = ((value >> done) as u32) << off;
        let slot = words.get_mut(word)?;
        *slot = (*slot & !mask) | (bits & mask);
        done += n;
        at += n as usize;
    }
    Some(())
}

/// Reads `width` bits at bit `lo` of `words`.
fn get_bits(words: &[u32], lo: u32, width: u32) -> Option<u64> {
    let (mut at, mut done, mut value) = (lo as usize, 0u32, 0u64);
    while done < width {
        let (word, off) = (at / 32, (at % 32) as u32);
        let n = (32 - off).min(width - done);
        let mask = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        value |= u64::from((*words.get(word)? >> off) & mask) << done;
        done += n;
        at += n as usize;
    }
    Some(value)
}

/// A QMD built once for a kernel and block shape, with the positions of what changes from one
/// launch to the next (grid, constant bank 0's address) resolved: a launch copies 64 words and
/// patches five fields, with no table search.
#[derive(Clone, Debug)]
pub struct QmdTemplate {
    base: Qmd,
    grid: [Patch; 3],
    const0_lo: Patch,
    const0_hi: Patch,
    /// Shift of constant bank 0's address (`_SHIFTED` fields).
    const0_shift: u32,
}

/// Where a per-launch field goes: its bit position and width, resolved once; fields inside one
/// word (all of them in the declared layouts) are written with one mask.
#[derive(Clone, Copy, Debug)]
struct Patch {
    lo: u32,
    width: u32,
    /// `Some((word, shift, mask))` when the field does not cross a word.
    single: Option<(usize, u32, u32)>,
}

impl Patch {
    fn new(lo: u32, width: u32) -> Self {
        let (word, shift) = ((lo / 32) as usize, lo % 32);
        let single = (shift + width <= 32).then(|| {
            let mask = if width == 32 { u32::MAX } else { ((1u32 << width) - 1) << shift };
            (word, shift, mask)
        });
        Patch { lo, width, single }
    }

    fn put(&self, out: &mut [u32], value: u64) -> Option<()> {
        match self.single {
            Some((word, shift, mask)) => {
                let slot = out.get_mut(word)?;
                *slot = (*slot & !mask) | (((value as u32) << shift) & mask);
                Some(())
            }
            None => put_bits(out, self.lo, self.width, value),
        }
    }
}

impl QmdTemplate {
    /// The template of `launch` (its grid and constant bank address are placeholders).
    pub fn new(layout: QmdLayout, launch: &Launch) -> Result<Self, QmdError> {
        use Semantic::*;
        let base = build(layout, launch)?;
        let plain = |s: Semantic| -> Result<Patch, QmdError> {
            let (f, lo) = base.pos(s, 0)?;
            if f.shift != 0 {
                return Err(QmdError::Misaligned { field: f.name, value: 0, align: 1 << f.shift });
            }
            Ok(Patch::new(lo, f.width()))
        };
        let grid = [plain(GridWidth)?, plain(GridHeight)?, plain(GridDepth)?];
        let (lo_f, lo_at) = base.pos(ConstantBufferAddrLower, 0)?;
        let (hi_f, hi_at) = base.pos(ConstantBufferAddrUpper, 0)?;
        Ok(QmdTemplate {
            base,
            grid,
            const0_lo: Patch::new(lo_at, lo_f.width()),
            const0_hi: Patch::new(hi_at, hi_f.width()),
            const0_shift: lo_f.shift,
        })
    }

    /// The QMD words of one launch of the template with `grid` and constant bank 0 at `const0`.
    pub fn write(&self, grid: [u32; 3], const0: u64, out: &mut [u32]) -> Result<(), QmdError> {
        let words = self.base.words();
        let got = out.len();
        let out = out.get_mut(..words.len()).ok_or(QmdError::WrongSize { expected: words.len(), got })?;
        out.copy_from_slice(words);
        for (patch, value) in self.grid.iter().zip(grid) {
            if u64::from(value) >> patch.width != 0 {
                return Err(QmdError::OutOfRange { field: "grid", value: value.into(), max: (1 << patch.width) - 1 });
            }
            patch.put(out, value.into()).ok_or(QmdError::BadIndex { field: "grid", index: 0 })?;
        }
        let shift = self.const0_shift;
        if !const0.is_multiple_of(1 << shift) {
            return Err(QmdError::Misaligned { field: "constant bank 0", value: const0, align: 1 << shift });
        }
        let shifted = const0 >> shift;
        let lo_width = self.const0_lo.width;
        if shifted >> (lo_width + self.const0_hi.width) != 0 {
            return Err(QmdError::OutOfRange { field: "constant bank 0", value: const0, max: u64::MAX });
        }
        self.const0_lo.put(out, shifted).ok_or(QmdError::BadIndex { field: "constant bank 0", index: 0 })?;
        self.const0_hi
            .put(out, shifted >> lo_width)
            .ok_or(QmdError::BadIndex { field: "constant bank 0", index: 0 })?;
        Ok(())
    }
}

/// What a launch sets in a QMD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub program_address: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_memory: u64,
    pub registers: u32,
    pub barriers: u32,
    /// Constant bank 0: address and size.
    pub const0: (u64, u64),
    /// Release semaphore 0 address and payload, if wanted.
    pub release: Option<(u64, u64)>,
    /// Local memory per thread (`SHADER_LOCAL_MEMORY_LOW_SIZE`; `HIGH_SIZE` stays 0: the
    /// driver sizes no separate stack for call-heavy kernels).
    pub local_bytes_per_thread: u32,
    /// The SM's shared-memory configuration (`MIN/MAX/TARGET_SM_CONFIG_SHARED_MEM_SIZE`,
    /// [`super::memory::sm_shared_config`]); `None` leaves the fields 0 (Turing, whose QMD
    /// fields are not declared here).
    pub sm_config: Option<super::memory::SmSharedConfig>,
}

/// Builds the QMD for `launch` in `layout`.
pub fn build(layout: QmdLayout, launch: &Launch) -> Result<Qmd, QmdError> {
    use Semantic::*;
    let mut q = Qmd::new(layout);
    q.set_address(ProgramAddressLower, ProgramAddressUpper, 0, launch.program_address)?;
    for (s, v) in [(GridWidth, launch.grid[0]), (GridHeight, launch.grid[1]), (GridDepth, launch.grid[2])] {
        q.set(s, 0, v.into())?;
    }
    for (s, v) in [(BlockDim0, launch.block[0]), (BlockDim1, launch.block[1]), (BlockDim2, launch.block[2])] {
        q.set(s, 0, v.into())?;
    }
    q.set(SharedMemorySize, 0, launch.shared_memory)?;
    q.set(RegisterCount, 0, launch.registers.into())?;
    q.set(BarrierCount, 0, launch.barriers.into())?;
    q.set_address(ConstantBufferAddrLower, ConstantBufferAddrUpper, 0, launch.const0.0)?;
    q.set(ConstantBufferSize, 0, launch.const0.1)?;
    q.set(ConstantBufferValid, 0, 1)?;
    q.set(ShaderLocalMemoryLowSize, 0, launch.local_bytes_per_thread.into())?;
    if let Some(config) = launch.sm_config {
        q.set(MinSmConfigSharedMemSize, 0, config.min)?;
        q.set(MaxSmConfigSharedMemSize, 0, config.max)?;
        q.set(TargetSmConfigSharedMemSize, 0, config.target)?;
    }
    if let Some((address, payload)) = launch.release {
        q.set(Release0Enable, 0, 1)?;
        q.set_address(Release0AddrLower, Release0AddrUpper, 0, address)?;
        q.set(Release0PayloadLower, 0, payload & 0xffff_ffff)?;
        q.set(Release0PayloadUpper, 0, payload >> 32)?;
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hal::Family;
    use crate::hw::qmd::{HOPPER, LAYOUTS};

    fn sample() -> Launch {
        Launch {
            program_address: 0x12_3456_7800,
            grid: [1000, 20, 3],
            block: [256, 2, 1],
            shared_memory: 2048,
            registers: 12,
            barriers: 1,
            const0: (0x7_0000_0100, 0x22a + 6),
            release: Some((0x9_8765_4320, 0x1_0000_0007)),
            local_bytes_per_thread: 1024,
            sm_config: None,
        }
    }

    #[test]
    fn every_layout_builds_and_decodes() {
        use Semantic::*;
        for layout in LAYOUTS {
            // Turing's QMD V02_03 declares no release fields.
            let l = if layout.major == 2 {
                Launch { release: None, ..sample() }
            } else {
                Launch {
                    sm_config: Some(super::super::memory::sm_shared_config(Family::Ga10x, 2048).unwrap()),
                    ..sample()
                }
            };
            let q = build(*layout, &l).unwrap();
            assert_eq!(q.words().len(), 64);
            let back = Qmd::from_words(*layout, q.words()).unwrap();
            assert_eq!(
                back.address(ProgramAddressLower, ProgramAddressUpper, 0),
                Ok(l.program_address),
                "{}",
                layout.major
            );
            assert_eq!(back.get(GridWidth, 0), Ok(1000));
            assert_eq!(back.get(GridDepth, 0), Ok(3));
            assert_eq!(back.get(BlockDim0, 0), Ok(256));
            assert_eq!(back.get(SharedMemorySize, 0), Ok(2048));
            assert_eq!(back.get(RegisterCount, 0), Ok(12));
            assert_eq!(back.get(BarrierCount, 0), Ok(1));
            assert_eq!(back.address(ConstantBufferAddrLower, ConstantBufferAddrUpper, 0), Ok(l.const0.0));
            assert_eq!(back.get(ConstantBufferSize, 0), Ok(0x230));
            assert_eq!(back.get(ConstantBufferValid, 0), Ok(1));
            assert_eq!(back.get(ConstantBufferValid, 1), Ok(0));
            if layout.major > 2 {
                assert_eq!(back.address(Release0AddrLower, Release0AddrUpper, 0), Ok(0x9_8765_4320));
                assert_eq!(back.get(Release0PayloadUpper, 0), Ok(1));
            }
            assert_eq!(back.get(QmdMajorVersion, 0), Ok(layout.major.into()));
            assert_eq!(back.get(ShaderLocalMemoryLowSize, 0), Ok(1024));
            if layout.major > 2 {
                // 2 KiB + the 1 KiB reserve: the 8 KiB carveout (3); GA10x's largest is 100 KiB (26).
                assert_eq!(back.get(MinSmConfigSharedMemSize, 0), Ok(3));
                assert_eq!(back.get(TargetSmConfigSharedMemSize, 0), Ok(3));
                assert_eq!(back.get(MaxSmConfigSharedMemSize, 0), Ok(26));
            }
        }
    }

    #[test]
    fn templates_write_what_build_writes() {
        for layout in LAYOUTS {
            let l = if layout.major == 2 { Launch { release: None, ..sample() } } else { sample() };
            let t = QmdTemplate::new(*layout, &Launch { grid: [1, 1, 1], const0: (0x100, l.const0.1), ..l }).unwrap();
            let mut out = [0u32; 64];
            t.write(l.grid, l.const0.0, &mut out).unwrap();
            assert_eq!(&out[..], build(*layout, &l).unwrap().words(), "{}", layout.major);
            assert!(t.write([1, 1 << 16, 1], 0x100, &mut out).is_err());
        }
    }

    #[test]
    fn range_and_presence_are_checked() {
        use Semantic::*;
        let mut q = Qmd::new(HOPPER);
        assert!(matches!(q.set(SmGlobalCachingEnable, 0, 1), Err(QmdError::NoSuchField { .. })));
        assert!(matches!(q.set(BlockDim2, 0, 1 << 16), Err(QmdError::OutOfRange { .. })));
        assert!(matches!(q.set(ConstantBufferSize, 0, 0x231), Err(QmdError::Misaligned { .. })));
        assert!(matches!(q.set(ConstantBufferValid, 8, 1), Err(QmdError::BadIndex { .. })));
        assert!(matches!(q.set(GridWidth, 1, 1), Err(QmdError::BadIndex { .. })));
        assert!(Qmd::from_words(HOPPER, &[0; 63]).is_err());
    }
}
