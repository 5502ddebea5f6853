//! Where VBIOS bytes come from: a byte slice (a ROM file) or the PROM window in BAR0.
//!
//! The chain walk in `pci_rom` reads through [`RomSource`], so the same code runs over a file and
//! over the hardware window. The PROM is read the way NVIDIA's driver reads it
//! (`src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_vbios_tu102.c`,
//! `s_romImgReadGeneric`): aligned 32-bit reads of `NV_PROM_DATA`, bytes taken little-endian out of
//! each word.

use zerocopy::{FromBytes, IntoBytes};

use super::error::{Result, VbiosError};

/// BAR0 offset of `NV_PROM_DATA(0)`, the start of the read window onto the VBIOS flash
/// ([`crate::hw::bus::NV_PROM_DATA`]).
pub const NV_PROM_DATA_BASE: u32 = crate::hw::bus::NV_PROM_DATA::OFFSET;

/// The most VBIOS the driver reads through the PROM window: 1 MiB.
/// Source: `kernel_gsp_vbios_tu102.c`, `s_getBaseBiosMaxSize_TU102` (also the limit it applies to
/// the size of the whole image chain).
pub const PROM_WINDOW_SIZE: u32 = 0x0010_0000;

/// 32-bit register reads on BAR0, the one thing the VBIOS parser needs from the hardware.
///
/// `offset` is a byte offset into BAR0; the parser only reads 4-byte-aligned offsets inside
/// `NV_PROM_DATA_BASE .. NV_PROM_DATA_BASE + PROM_WINDOW_SIZE`. The kernel implements this on the
/// mapped BAR0, the GPU model on its register file. Like the crate's other register boundaries
/// it reads through `&self`; values read are untrusted input.
pub trait Bar0Read {
    /// Reads the 32-bit register at `offset`.
    fn read_u32(&self, offset: u32) -> u32;
}

impl<T: Bar0Read + ?Sized> Bar0Read for &T {
    fn read_u32(&self, offset: u32) -> u32 {
        (**self).read_u32(offset)
    }
}

/// A readable, bounded sequence of ROM bytes.
pub(crate) trait RomSource {
    /// Number of readable bytes.
    fn size(&self) -> u32;
    /// Fills `buf` from `offset`. Only called with ranges inside `size()`.
    fn read_in_bounds(&mut self, offset: u32, buf: &mut [u8]);
}

/// A ROM file already in memory.
pub(crate) struct SliceSource<'a> {
    data: &'a [u8],
}

impl<'a> SliceSource<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Result<Self> {
        if data.is_empty() {
            return Err(VbiosError::Empty);
        }
        if u32::try_from(data.len()).is_err() {
            return Err(VbiosError::InputTooLarge { size: data.len() as u64 });
        }
        Ok(Self { data })
    }
}

impl RomSource for SliceSource<'_> {
    fn size(&self) -> u32 {
        // Checked in `new`.
        u32::try_from(self.data.len()).unwrap_or(u32::MAX)
    }

    fn read_in_bounds(&mut self, offset: u32, buf: &mut [u8]) {
        let start = offset as usize;
        if let Some(src) = start.checked_add(buf.len()).and_then(|end| self.data.get(start..end)) {
            buf.copy_from_slice(src);
        }
    }
}

/// The PROM window of a live GPU (or of the GPU model).
pub(crate) struct PromSource<'b, B: Bar0Read + ?Sized> {
    bar0: &'b B,
    /// The last aligned word read: (PROM offset, value). Byte-wise parsing reads each word
    /// several times; the window is slow, so keep one.
    cached: Option<(u32, u32)>,
}

impl<'b, B: Bar0Read + ?Sized> PromSource<'b, B> {
    pub(crate) fn new(bar0: &'b B) -> Self {
        Self { bar0, cached: None }
    }

    fn word(&mut self, aligned: u32) -> u32 {
        if let Some((at, value)) = self.cached {
            if at == aligned {
                return value;
            }
        }
        // `aligned` lies inside the window (`read_in_bounds` is only called in range), so this
        // never wraps; wrapping keeps a stray call from panicking.
        let value = self.bar0.read_u32(NV_PROM_DATA_BASE.wrapping_add(aligned));
        self.cached = Some((aligned, value));
        value
    }
}

impl<B: Bar0Read + ?Sized> RomSource for PromSource<'_, B> {
    fn size(&self) -> u32 {
        PROM_WINDOW_SIZE
    }

    fn read_in_bounds(&mut self, offset: u32, buf: &mut [u8]) {
        // Byte by byte out of the aligned word that holds it; the cache in `word` keeps this at
        // one register read per word.
        let mut at = offset;
        for byte in buf.iter_mut() {
            let [b0, b1, b2, b3] = self.word(at & !3).to_le_bytes();
            *byte = match at & 3 {
                0 => b0,
                1 => b1,
                2 => b2,
                _ => b3,
            };
            // In range by the caller's contract, so this never wraps.
            at = at.wrapping_add(1);
        }
    }
}

/// Checks that `len` bytes at `offset` lie inside `size`; the error names `what`.
pub(crate) fn check_range(what: &'static str, offset: u32, len: u32, size: u32) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(VbiosError::Truncated { what, offset, len, size }),
    }
}

/// Reads `buf.len()` bytes at `offset`, or says which structure ran past the end.
pub(crate) fn read_bytes<S: RomSource + ?Sized>(
    src: &mut S,
    what: &'static str,
    offset: u32,
    buf: &mut [u8],
) -> Result<()> {
    let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
    check_range(what, offset, len, src.size())?;
    src.read_in_bounds(offset, buf);
    Ok(())
}

/// Reads a plain-bytes structure at `offset`.
pub(crate) fn read_struct<T, S>(src: &mut S, what: &'static str, offset: u32) -> Result<T>
where
    T: FromBytes + IntoBytes,
    S: RomSource + ?Sized,
{
    let mut value = T::new_zeroed();
    read_bytes(src, what, offset, value.as_mut_bytes())?;
    Ok(value)
}

/// Reads a little-endian `u16` at `offset`.
pub(crate) fn read_u16<S: RomSource + ?Sized>(src: &mut S, what: &'static str, offset: u32) -> Result<u16> {
    let mut b = [0u8; 2];
    read_bytes(src, what, offset, &mut b)?;
    Ok(u16::from_le_bytes(b))
}

/// Reads a little-endian `u32` at `offset`.
pub(crate) fn read_u32<S: RomSource + ?Sized>(src: &mut S, what: &'static str, offset: u32) -> Result<u32> {
    let mut b = [0u8; 4];
    read_bytes(src, what, offset, &mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// Bounds-checked view of `len` bytes at `offset` of an in-memory ROM.
pub(crate) fn slice<'a>(data: &'a [u8], what: &'static str, offset: u32, len: u32) -> Result<&'a [u8]> {
    let size = u32::try_from(data.len()).unwrap_or(u32::MAX);
    check_range(what, offset, len, size)?;
    data.get(offset as usize..).and_then(|rest| rest.get(..len as usize)).ok_or(VbiosError::Truncated {
        what,
        offset,
        len,
        size,
    })
}

/// Reads a plain-bytes structure at `offset` of an in-memory ROM.
pub(crate) fn struct_at<T: FromBytes>(data: &[u8], what: &'static str, offset: u32) -> Result<T> {
    let len = u32::try_from(core::mem::size_of::<T>()).unwrap_or(u32::MAX);
    let bytes = slice(data, what, offset, len)?;
    T::read_from_bytes(bytes).map_err(|_| VbiosError::Truncated {
        what,
        offset,
        len,
        size: u32::try_from(data.len()).unwrap_or(u32::MAX),
    })
}
