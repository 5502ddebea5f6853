//! Typed device memory: `len` elements of `T` in VRAM, mapped into the GPU's VA space.

use core::marker::PhantomData;

use super::Pod;
use crate::channel::GpuMapping;
use crate::mm::VramAllocation;

/// `len` elements of `T` in VRAM, at [`DeviceBuffer::device_ptr`] in the GPU's VA space.
///
/// Owns its VRAM and VA range. Give them back with [`DeviceBuffer::free`]: dropping the buffer
/// cannot (there is no global GPU to return them to in no_std), so a dropped buffer's memory
/// stays allocated until [`super::Gpu::destroy`].
#[derive(Debug)]
pub struct DeviceBuffer<T: Pod> {
    pub(super) vram: VramAllocation,
    pub(super) mapping: GpuMapping,
    pub(super) len: usize,
    pub(super) _elements: PhantomData<T>,
}

impl<T: Pod> DeviceBuffer<T> {
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the elements (the allocation may be larger: whole pages).
    pub fn byte_len(&self) -> usize {
        self.len * core::mem::size_of::<T>()
    }

    /// The GPU virtual address of the first element, as kernels see it.
    pub fn device_ptr(&self) -> u64 {
        self.mapping.va
    }

    /// The physical VRAM address of the first element (diagnostics, tests).
    pub fn vram_address(&self) -> u64 {
        self.vram.base()
    }

    /// Gives the VRAM and the VA range back, after every stream finished its work (the GPU may
    /// still be reading or writing the buffer).
    pub fn free<R, A, C>(self, gpu: &mut super::Gpu<'_, R, A, C>) -> Result<(), super::RuntimeError>
    where
        R: crate::hw::RegisterIo + ?Sized,
        A: crate::platform::DmaAllocator + ?Sized,
        C: crate::platform::Clock + ?Sized,
    {
        gpu.synchronize()?;
        gpu.release(self.vram, self.mapping)
    }
}
