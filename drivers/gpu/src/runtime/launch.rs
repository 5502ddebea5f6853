//! Kernel launches on compute streams.
//!
//! Each compute stream owns a launch area: DMA memory mapped into the GPU's VA space, cut into
//! slots of one QMD (256 bytes) and one constant bank 0 (parameters at the compiler's offset,
//! `compute::launch::param_cbank_offset`). A launch takes the next slot (waiting for the launch
//! that used it before, if that has not finished), writes the QMD from a [`QmdTemplate`] cached
//! per function and block shape, and pushes `SEND_PCAS_A` + `SEND_SIGNALING_PCAS2_B`
//! ([`crate::compute::launch::push_launch`]); the stream's fence follows.
//!
//! A compute stream also owns its local-memory buffer in VRAM, sized by the GPU's
//! [`LocalMemoryPlan`] and set on the channel's compute object with the generic-address windows
//! when the stream is created ([`crate::compute::memory::push_memory_config`]). Every QMD
//! declares the plan's per-thread local size and the smallest shared-memory configuration that
//! holds the launch ([`crate::compute::memory::sm_shared_config`]); a launch needing more
//! shared memory than the family gives a CTA is refused with
//! [`crate::compute::memory::MemoryConfigError::SharedMemoryTooLarge`].

use alloc::vec::Vec;

use super::gpu::{Stream, StreamKind};
use super::module::{Function, LaunchConfig};
use super::params::Args;
use super::{Gpu, RuntimeError};
use crate::channel::{Channel, Fence, GpuMapping, GpuVaSpace, ENGINE_SUBCHANNEL};
use crate::compute::launch::{push_launch, qmd_layout, CONST0_BYTES, QMD_BYTES};
use crate::compute::memory::{push_memory_config, sm_shared_config, LocalMemoryPlan};
use crate::compute::qmd::{Launch, QmdTemplate};
use crate::hal::Family;
use crate::hw::RegisterIo;
use crate::mm::{Aperture, PageTableMemory, PteAttrs, TlbInvalidator, VramAllocation, VramAllocator};
use crate::platform::{Clock, DmaAllocator, DmaBuffer};

/// Bytes of one launch slot: the QMD, then constant bank 0 (kept 256-byte aligned).
pub const SLOT_BYTES: usize = (QMD_BYTES + CONST0_BYTES as usize).next_multiple_of(256);
/// Launches a compute stream can have in flight before one waits for a slot.
pub const SLOTS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TemplateKey {
    code_va: u64,
    block: [u32; 3],
    shared: u64,
}

/// `SEND_PCAS_A` + `SEND_SIGNALING_PCAS2_B` (or `_PCAS_B`) as pushbuffer words, with the index
/// of the word that holds the QMD address.
struct LaunchMethods {
    words: [u32; 8],
    len: usize,
    address_at: usize,
}

impl LaunchMethods {
    /// Encodes the methods twice (two QMD addresses) to find the address word.
    fn encode(family: crate::hal::Family, class: crate::host::HostClass, va: u64) -> Result<Self, RuntimeError> {
        let bad = |_| RuntimeError::BadLaunch { what: "the launch methods" };
        let (mut a, mut b) = ([0u32; 8], [0u32; 8]);
        let mut pa = crate::host::PushBuffer::over_slice(&mut a, class);
        push_launch(&mut pa, family, ENGINE_SUBCHANNEL, va).map_err(bad)?;
        let len = pa.len();
        let mut pb = crate::host::PushBuffer::over_slice(&mut b, class);
        push_launch(&mut pb, family, ENGINE_SUBCHANNEL, va + 256).map_err(bad)?;
        let differ: Vec<usize> = (0..len).filter(|&i| a[i] != b[i]).collect();
        let [address_at] = differ[..] else {
            return Err(RuntimeError::BadLaunch { what: "launch methods whose QMD address is not one word" });
        };
        Ok(LaunchMethods { words: a, len, address_at })
    }
}

/// A compute stream's launch slots and QMD templates.
pub struct LaunchArea {
    buffer: DmaBuffer,
    map: GpuMapping,
    /// The fence of the launch that last used each slot.
    used_by: Vec<Option<Fence>>,
    next: usize,
    templates: Vec<(TemplateKey, QmdTemplate)>,
    /// The launch methods, encoded on the first launch.
    methods: Option<LaunchMethods>,
    /// Where a launch's parameters are packed before they are copied into its slot: kept, so
    /// that a launch allocates nothing once the largest parameter block has been seen.
    params: Vec<u8>,
    /// The local-memory buffer and how it was sized.
    local: VramAllocation,
    local_map: GpuMapping,
    plan: LocalMemoryPlan,
}

impl LaunchArea {
    pub(super) fn new<M: PageTableMemory>(
        dma: &(impl DmaAllocator + ?Sized),
        vas: &mut GpuVaSpace<M>,
        vram: &mut VramAllocator,
        tlb: &mut impl TlbInvalidator,
        plan: LocalMemoryPlan,
    ) -> Result<Self, RuntimeError> {
        let local = vram.alloc(plan.total_bytes, crate::compute::memory::LOCAL_BUFFER_ALIGN)?;
        let local_map = match vas.map(local.base(), local.size(), Aperture::Video, PteAttrs::default(), tlb) {
            Ok(map) => map,
            Err(e) => {
                let _ = vram.free(local);
                return Err(e.into());
            }
        };
        let buffer = match dma.alloc(SLOT_BYTES * SLOTS) {
            Ok(b) => b,
            Err(e) => {
                let _ = vas.unmap(local_map, tlb).map(|()| vram.free(local));
                return Err(e.into());
            }
        };
        let map = match vas.map_dma(&buffer, tlb) {
            Ok(map) => map,
            Err(e) => {
                dma.free(buffer);
                let _ = vas.unmap(local_map, tlb).map(|()| vram.free(local));
                return Err(e.into());
            }
        };
        Ok(LaunchArea {
            buffer,
            map,
            used_by: alloc::vec![None; SLOTS],
            next: 0,
            templates: Vec::new(),
            methods: None,
            params: Vec::new(),
            local,
            local_map,
            plan,
        })
    }

    /// Sets the local-memory buffer and the generic-address windows on `channel`'s compute
    /// object; returns the fence of that work.
    pub(super) fn configure(
        &self,
        io: &(impl RegisterIo + ?Sized),
        channel: &mut Channel,
        family: Family,
    ) -> Result<Fence, RuntimeError> {
        let mut words = [0u32; 16];
        let mut pb = crate::host::PushBuffer::over_slice(&mut words, channel.host_class());
        push_memory_config(&mut pb, family, ENGINE_SUBCHANNEL, self.local_map.va, &self.plan)?;
        let len = pb.len();
        Ok(channel.submit_words(io, &words[..len])?)
    }

    pub(super) fn free<M: PageTableMemory>(
        self,
        dma: &(impl DmaAllocator + ?Sized),
        vas: &mut GpuVaSpace<M>,
        vram: &mut VramAllocator,
        tlb: &mut impl TlbInvalidator,
    ) -> Result<(), RuntimeError> {
        vas.unmap(self.map, tlb)?;
        dma.free(self.buffer);
        vas.unmap(self.local_map, tlb)?;
        vram.free(self.local)?;
        Ok(())
    }
}

impl Stream {
    /// A compute stream's local-memory buffer (VA, bytes) and the plan that sized it.
    pub fn local_memory<R, A, C>(&self, gpu: &mut Gpu<'_, R, A, C>) -> Result<(u64, u64, LocalMemoryPlan), RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        let state = gpu.stream_state(*self)?;
        let area =
            state.launch.as_ref().ok_or(RuntimeError::WrongStream { what: "have local memory", kind: state.kind })?;
        Ok((area.local_map.va, area.local.size(), area.plan))
    }

    /// Launches `function` with `config` and `args` on this (compute) stream. Returns once the
    /// launch is queued; [`Stream::synchronize`] or an event waits for it.
    pub fn launch<R, A, C>(
        &self,
        gpu: &mut Gpu<'_, R, A, C>,
        function: &Function<'_>,
        config: LaunchConfig,
        args: &Args,
    ) -> Result<(), RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        config.check(function)?;
        let family = gpu.chipset().family();
        let layout = qmd_layout(family);
        let cbank_offset = crate::compute::launch::param_cbank_offset(family) as usize;
        if cbank_offset + function.param_size() as usize > CONST0_BYTES as usize {
            return Err(RuntimeError::BadLaunch { what: "the parameters do not fit constant bank 0" });
        }
        let shared = function.static_shared_bytes() + u64::from(config.shared_bytes);
        let key = TemplateKey { code_va: function.code_va(), block: config.block, shared };
        let (io, clock, timeout_ms) = (gpu.io(), gpu.clock(), gpu.config().timeout_ms);
        let state = gpu.stream_state(*self)?;
        if state.kind != StreamKind::Compute {
            return Err(RuntimeError::WrongStream { what: "launch kernels", kind: state.kind });
        }
        let area =
            state.launch.as_mut().ok_or(RuntimeError::WrongStream { what: "launch kernels", kind: state.kind })?;
        let slot = area.next;
        area.next = (slot + 1) % SLOTS;
        if let Some(previous) = area.used_by[slot].take() {
            state.channel.wait(previous, clock, timeout_ms, || {})?;
        }
        let area = state
            .launch
            .as_mut()
            .ok_or(RuntimeError::WrongStream { what: "launch kernels", kind: StreamKind::Compute })?;
        let slot_va = area.map.va + (slot * SLOT_BYTES) as u64;
        let const0_va = slot_va + QMD_BYTES as u64;
        let template = match area.templates.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                // Checked once per function and shape: a shape that does not fit never gets a
                // template, so every launch of it is refused here. Turing's QMD shared-memory
                // configuration fields are not declared: its limit is checked, its QMD leaves the
                // configuration to the SM's default.
                let sm_config = sm_shared_config(family, shared)?;
                let sm_config = if crate::hal::for_family(family).qmd_sm_config { Some(sm_config) } else { None };
                let launch = Launch {
                    program_address: key.code_va,
                    grid: [1, 1, 1],
                    block: config.block,
                    shared_memory: shared,
                    registers: function.registers().unwrap_or(32),
                    barriers: 1,
                    const0: (const0_va, CONST0_BYTES),
                    release: None,
                    local_bytes_per_thread: area.plan.bytes_per_thread,
                    sm_config,
                };
                let t = QmdTemplate::new(layout, &launch)
                    .map_err(|_| RuntimeError::BadLaunch { what: "the launch does not fit the QMD" })?;
                area.templates.push((key, t));
                area.templates.len() - 1
            }
        };
        let base = slot * SLOT_BYTES;
        let template = &area.templates[template].1;
        let bad_grid = |_| RuntimeError::BadLaunch { what: "the grid does not fit the QMD" };
        let bad_slot = |_| RuntimeError::BadLaunch { what: "the launch slot lies outside its DMA buffer" };
        // The QMD and the parameters are encoded here and copied into the slot.
        let mut words = [0u32; QMD_BYTES / 4];
        template.write(config.grid, const0_va, &mut words).map_err(bad_grid)?;
        #[cfg(not(target_endian = "little"))]
        for w in &mut words {
            *w = w.to_le();
        }
        area.buffer.write(base, zerocopy::IntoBytes::as_bytes(&words)).map_err(bad_slot)?;
        // The driver-reserved words below the parameters stay as allocated (zero).
        area.params.resize(function.param_size() as usize, 0);
        function.pack_into(args, &mut area.params)?;
        area.buffer.write(base + QMD_BYTES + cbank_offset, &area.params).map_err(bad_slot)?;
        // The two launch methods: encoded once per stream, then only the QMD address changes.
        if area.methods.is_none() {
            area.methods = Some(LaunchMethods::encode(family, state.channel.host_class(), area.map.va)?);
        }
        let methods = area.methods.as_ref().ok_or(RuntimeError::BadLaunch { what: "the launch methods" })?;
        let mut method_words = methods.words;
        method_words[methods.address_at] =
            u32::try_from(slot_va >> 8).map_err(|_| RuntimeError::BadLaunch { what: "the QMD address" })?;
        let len = methods.len;
        let fence = state.channel.submit_words(io, &method_words[..len])?;
        state.last = Some(fence);
        if let Some(area) = state.launch.as_mut() {
            area.used_by[slot] = Some(fence);
        }
        Ok(())
    }
}
