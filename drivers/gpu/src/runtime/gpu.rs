//! A device: the RM objects, the VA space, VRAM, the staging buffer and the streams of one GPU.
//!
//! Ownership: the [`Gpu`] borrows the platform's boundaries (BAR0, the DMA allocator, the
//! clock) for its lifetime and owns everything it creates. The RPC channel to GSP-RM is not
//! held: the kernel keeps its `GspBoot` (which owns the `GspRpc`) for the GPU's whole life and
//! lends `boot.rpc()` to the few calls that talk to RM (creating and destroying the device,
//! streams). Copies, memsets, buffers and modules need no RPC: the driver owns the page tables
//! and the channels' rings.
//!
//! Host/device copies go through one DMA staging buffer mapped into the VA space, in chunks of
//! its size: the copy engine moves each chunk, and the CPU fills or drains the staging buffer
//! between chunks. They are synchronous, as `cuMemcpyHtoD`/`DtoH` are for pageable memory.

use alloc::vec::Vec;
use core::marker::PhantomData;

use zerocopy::IntoBytes;

use super::{DeviceBuffer, Pod, RuntimeError};
use crate::ce::{CeAddress, CeClass, CeEncoder, MemsetPattern, Pipelining};
use crate::channel::{Channel, ChannelConfig, ChannelEngine, Fence, GpuMapping, GpuVaSpace, ENGINE_SUBCHANNEL};
use crate::chip::Chipset;
use crate::compute::memory::{LocalMemoryPlan, MemoryConfigError};
use crate::gsp::commands::{GspStaticConfigInfo, RpcChannel};
use crate::hw::RegisterIo;
use crate::mm::{
    Aperture, DmaTableMemory, MmuFormat, PteAttrs, RegisterTlbInvalidator, VramAllocation, VramAllocator, VramStats,
};
use crate::platform::{Clock, DmaAllocator, DmaBuffer};
use crate::rm::{Device, Handle, RmClient, Subdevice};

/// How a [`Gpu`] is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuConfig {
    /// RM client index (`RmClient::new`); distinct per GPU of one GSP session.
    pub client_index: u32,
    /// Bytes of the DMA staging buffer; host/device copies move at most this much per chunk.
    pub staging_bytes: usize,
    /// How long a synchronous operation ([`Gpu::synchronize`], copies, memsets) may wait.
    pub timeout_ms: u64,
    /// The copy engine of the default stream.
    pub copy_engine: u32,
    /// The GPU executes PTX (the GPU model): modules load their PTX image even when they carry
    /// SASS for the chip. Real GPUs execute SASS; they refuse PTX-only modules (this driver has
    /// no PTX JIT).
    pub runs_ptx: bool,
    /// Local memory (spill/stack) per thread that compute streams provide and launches'
    /// QMDs declare: a multiple of 16 bytes
    /// ([`crate::compute::memory::LocalMemoryPlan`]).
    pub local_bytes_per_thread: u32,
    /// The VA space takes replayable faults (`NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING`):
    /// what unified memory (the `uvm` crate's managed buffers) needs.
    pub page_faulting: bool,
}

impl Default for GpuConfig {
    fn default() -> Self {
        GpuConfig {
            runs_ptx: false,
            client_index: 0,
            staging_bytes: 1 << 20,
            timeout_ms: 2_000,
            copy_engine: 0,
            local_bytes_per_thread: crate::compute::memory::DEFAULT_LOCAL_BYTES_PER_THREAD,
            page_faulting: false,
        }
    }
}

/// What a stream's channel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamKind {
    /// A copy-engine channel: copies and memsets.
    Copy,
    /// A compute-engine channel: kernel launches.
    Compute,
}

/// A stream: a handle to one of the GPU's channels. Work on one stream runs in order; work on
/// different streams is unordered unless the application waits on [`Event`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    index: u32,
    /// Distinguishes a destroyed stream's handle from a later stream in the same slot.
    generation: u32,
}

/// A point in a stream's work: done once everything submitted to the stream before
/// [`Stream::record`] finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    stream: Stream,
    /// `None`: recorded on a stream with no work yet, complete from the start.
    fence: Option<Fence>,
}

pub(super) struct StreamState {
    pub(super) channel: Channel,
    pub(super) kind: StreamKind,
    generation: u32,
    /// The copy engine's method encoder (copy streams).
    ce: Option<CeEncoder>,
    /// The last work submitted.
    pub(super) last: Option<Fence>,
    /// QMDs and constant banks of launches in flight (compute streams).
    pub(super) launch: Option<super::launch::LaunchArea>,
}

/// One GPU as an application sees it. See the module documentation for ownership.
pub struct Gpu<'a, R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> {
    io: &'a R,
    dma: &'a A,
    clock: &'a C,
    chipset: Chipset,
    config: GpuConfig,
    rm: RmClient,
    device: Handle<Device>,
    subdevice: Handle<Subdevice>,
    vas: GpuVaSpace<DmaTableMemory<&'a A>>,
    vram: VramAllocator,
    staging: DmaBuffer,
    staging_map: GpuMapping,
    /// How compute streams size their local memory (from GSP-RM's TPC and SM counts), or why
    /// they cannot.
    local_plan: Result<LocalMemoryPlan, MemoryConfigError>,
    /// Slot 0 is the default stream.
    streams: Vec<Option<StreamState>>,
    next_generation: u32,
    /// Told how far large host/device copies got ([`Gpu::set_progress`]).
    progress: Option<ProgressFn>,
}

/// Reports how far a long operation got: what, bytes done, bytes in all.
pub type ProgressFn = fn(&'static str, u64, u64);

/// Copies at least this large report their progress.
pub const PROGRESS_MIN_BYTES: usize = 64 << 20;

/// Calls the progress function at every tenth of a large copy.
struct CopyProgress {
    report: Option<ProgressFn>,
    what: &'static str,
    total: usize,
    next_tenth: usize,
}

impl CopyProgress {
    fn new(report: Option<ProgressFn>, what: &'static str, total: usize) -> Self {
        let report = report.filter(|_| total >= PROGRESS_MIN_BYTES);
        CopyProgress { report, what, total, next_tenth: 1 }
    }
    fn done(&mut self, bytes: usize) {
        let Some(report) = self.report else { return };
        if self.next_tenth <= 10 && bytes.saturating_mul(10) >= self.total.saturating_mul(self.next_tenth) {
            report(self.what, bytes as u64, self.total as u64);
            self.next_tenth = bytes.saturating_mul(10) / self.total.max(1) + 1;
        }
    }
}

/// VRAM alignment that lets the mapping use the largest pages: 2 MiB pages for 2 MiB and more,
/// 64 KiB pages for 64 KiB and more, else 4 KiB.
fn page_alignment(bytes: u64) -> u64 {
    if bytes >= 2 << 20 {
        2 << 20
    } else if bytes >= 64 << 10 {
        64 << 10
    } else {
        4 << 10
    }
}

impl<'a, R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> Gpu<'a, R, A, C> {
    /// Creates the RM client, device and subdevice, the VA space (page tables in DMA memory),
    /// the VRAM allocator over `static_info`'s FB regions, the staging buffer and the default
    /// stream. On failure, the RM objects made so far are freed.
    pub fn new(
        rpc: &mut impl RpcChannel,
        io: &'a R,
        dma: &'a A,
        clock: &'a C,
        static_info: &GspStaticConfigInfo,
        chipset: Chipset,
        config: GpuConfig,
    ) -> Result<Self, RuntimeError> {
        let mut rm = RmClient::new(rpc, config.client_index)?;
        match Self::build(&mut rm, rpc, io, dma, clock, static_info, chipset, config) {
            Ok(parts) => {
                let (device, subdevice, vas, vram, staging, staging_map, default) = parts;
                let streams = alloc::vec![Some(default)];
                let local_plan = LocalMemoryPlan::from_static_info(config.local_bytes_per_thread, static_info);
                Ok(Gpu {
                    io,
                    dma,
                    clock,
                    chipset,
                    config,
                    rm,
                    device,
                    subdevice,
                    vas,
                    vram,
                    staging,
                    staging_map,
                    local_plan,
                    streams,
                    next_generation: 1,
                    progress: None,
                })
            }
            Err(e) => {
                // The error that matters is the first one; freeing the client frees every RM
                // object under it (VA space, channel).
                let _ = rm.free_all(rpc);
                Err(e)
            }
        }
    }

    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn build(
        rm: &mut RmClient,
        rpc: &mut impl RpcChannel,
        io: &'a R,
        dma: &'a A,
        clock: &'a C,
        static_info: &GspStaticConfigInfo,
        chipset: Chipset,
        config: GpuConfig,
    ) -> Result<
        (
            Handle<Device>,
            Handle<Subdevice>,
            GpuVaSpace<DmaTableMemory<&'a A>>,
            VramAllocator,
            DmaBuffer,
            GpuMapping,
            StreamState,
        ),
        RuntimeError,
    > {
        let device = rm.alloc_device(rpc, &Default::default())?;
        let subdevice = rm.alloc_subdevice(rpc, device, &Default::default())?;
        let family = chipset.family();
        let flags =
            if config.page_faulting { crate::rm::fifo::NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING } else { 0 };
        let mut vas = GpuVaSpace::create_with_flags(
            rm,
            rpc,
            device,
            MmuFormat::for_family(family),
            DmaTableMemory::new(dma),
            flags,
        )?;
        let mut vram = VramAllocator::from_fb_regions(static_info.fb_regions(), &[])?;
        let mut tlb = RegisterTlbInvalidator::new(io, clock);
        let staging = dma.alloc(config.staging_bytes.max(4096))?;
        let staging_map = match vas.map_dma(&staging, &mut tlb) {
            Ok(m) => m,
            Err(e) => {
                dma.free(staging);
                return Err(e.into());
            }
        };
        let default = match Self::make_stream(
            rm,
            rpc,
            io,
            dma,
            device,
            &mut vas,
            &mut vram,
            &mut tlb,
            family,
            StreamKind::Copy,
            None,
            config,
            0,
        ) {
            Ok(s) => s,
            Err(e) => {
                let _ = vas.unmap(staging_map, &mut tlb);
                dma.free(staging);
                return Err(e);
            }
        };
        Ok((device, subdevice, vas, vram, staging, staging_map, default))
    }

    #[allow(clippy::too_many_arguments)]
    fn make_stream(
        rm: &mut RmClient,
        rpc: &mut impl RpcChannel,
        io: &R,
        dma: &A,
        device: Handle<Device>,
        vas: &mut GpuVaSpace<DmaTableMemory<&'a A>>,
        vram: &mut VramAllocator,
        tlb: &mut RegisterTlbInvalidator<'_, R, C>,
        family: crate::hal::Family,
        kind: StreamKind,
        local_plan: Option<LocalMemoryPlan>,
        config: GpuConfig,
        generation: u32,
    ) -> Result<StreamState, RuntimeError> {
        let engine = match kind {
            StreamKind::Copy => ChannelEngine::Copy(config.copy_engine),
            StreamKind::Compute => ChannelEngine::Compute,
        };
        let channel_config = ChannelConfig { engine, ..Default::default() };
        let mut channel = Channel::create(rm, rpc, io, device, family, vas, dma, tlb, channel_config)?;
        let ce = match kind {
            StreamKind::Copy => {
                let class = CeClass::from_class_number(channel.engine_class())
                    .ok_or(RuntimeError::Unsupported { what: "this copy engine class" })?;
                Some(CeEncoder::new(class, ENGINE_SUBCHANNEL))
            }
            StreamKind::Compute => None,
        };
        let (launch, last) = match (kind, local_plan) {
            (StreamKind::Compute, Some(plan)) => {
                let area = super::launch::LaunchArea::new(dma, vas, vram, tlb, plan)?;
                match area.configure(io, &mut channel, family) {
                    Ok(fence) => (Some(area), Some(fence)),
                    Err(e) => {
                        let _ = area.free(dma, vas, vram, tlb);
                        return Err(e);
                    }
                }
            }
            (StreamKind::Compute, None) => {
                return Err(RuntimeError::Unsupported { what: "a compute stream without a local-memory plan" })
            }
            (StreamKind::Copy, _) => (None, None),
        };
        Ok(StreamState { channel, kind, generation, ce, last, launch })
    }

    /// Large host/device copies (at least [`PROGRESS_MIN_BYTES`]) call `report` at every
    /// tenth of the way; `None` stops it.
    pub fn set_progress(&mut self, report: Option<ProgressFn>) {
        self.progress = report;
    }

    /// The chip.
    pub fn chipset(&self) -> Chipset {
        self.chipset
    }

    pub fn config(&self) -> GpuConfig {
        self.config
    }

    /// BAR0.
    pub fn io(&self) -> &'a R {
        self.io
    }

    /// The DMA allocator (system memory the GPU reaches).
    pub fn dma(&self) -> &'a A {
        self.dma
    }

    /// The VRAM allocator, for memory managers above this API (unified memory's PMM).
    pub fn vram_mut(&mut self) -> &mut VramAllocator {
        &mut self.vram
    }

    /// The VA space, for memory managers above this API: they reserve VA ranges and write
    /// their own mappings ([`GpuVaSpace::reserve_va`], its page tables, [`Self::tlb_invalidator`]).
    pub fn va_space_mut(&mut self) -> &mut GpuVaSpace<DmaTableMemory<&'a A>> {
        &mut self.vas
    }

    /// The TLB invalidator page-table updates use (BAR0 register invalidates).
    pub fn tlb_invalidator(&self) -> RegisterTlbInvalidator<'a, R, C> {
        self.tlb()
    }

    /// Allocates an RM object of `class` under the subdevice with `params` (e.g. the
    /// replayable fault buffer, `MMU_FAULT_BUFFER`).
    pub fn alloc_subdevice_object(
        &mut self,
        rpc: &mut impl RpcChannel,
        class: u32,
        params: &[u8],
    ) -> Result<crate::rm::Handle<crate::rm::AnyObject>, RuntimeError> {
        Ok(self.rm.alloc_raw(rpc, self.subdevice, class, params)?.0)
    }

    /// Frees an object from [`Self::alloc_subdevice_object`].
    pub fn free_object(
        &mut self,
        rpc: &mut impl RpcChannel,
        object: crate::rm::Handle<crate::rm::AnyObject>,
    ) -> Result<(), RuntimeError> {
        Ok(self.rm.free(rpc, object)?)
    }

    /// The RM client's handle.
    pub fn client_handle(&self) -> u32 {
        self.rm.handle().raw()
    }

    /// Pushes host methods (`MEM_OP` replays and cancels, semaphores) on the default stream's
    /// channel, then waits for them to execute.
    pub fn run_host_methods(
        &mut self,
        encode: impl FnOnce(&mut crate::host::PushBuffer) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        self.on_default_stream(None, |_, pb| encode(pb))
    }

    /// The host class of the default stream's channel (how its `MEM_OP` words are laid out).
    pub fn default_stream_host_class(&mut self) -> Result<crate::host::HostClass, RuntimeError> {
        Ok(self.stream_state(self.default_stream())?.channel.host_class())
    }

    /// Runs copy-engine work on the default stream and waits for it.
    pub fn run_copies(
        &mut self,
        encode: impl FnOnce(&CeEncoder, &mut crate::host::PushBuffer) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        self.on_default_stream(Some("copy"), |ce, pb| {
            let ce = ce.ok_or(RuntimeError::WrongStream { what: "copy", kind: StreamKind::Copy })?;
            encode(&ce, pb)
        })
    }

    /// Pushes what `encode` writes on the default stream's channel, submits and waits (bounded
    /// by `timeout_ms`; the error names the channel and fence). `needs_ce`: the operation that
    /// needs the stream's copy engine.
    fn on_default_stream(
        &mut self,
        needs_ce: Option<&'static str>,
        encode: impl FnOnce(Option<CeEncoder>, &mut crate::host::PushBuffer) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        let timeout_ms = self.config.timeout_ms;
        let clock = self.clock;
        let io = self.io;
        let state = self.stream_state(self.default_stream())?;
        if let (Some(what), None) = (needs_ce, state.ce) {
            return Err(RuntimeError::WrongStream { what, kind: state.kind });
        }
        let mut pb = state.channel.pushbuffer();
        encode(state.ce, &mut pb)?;
        let fence = state.channel.submit(io, &pb)?;
        state.last = Some(fence);
        state.channel.wait(fence, clock, timeout_ms, || {})?;
        Ok(())
    }

    /// The clock waits are measured with.
    pub fn clock(&self) -> &'a C {
        self.clock
    }

    /// The RM handles: device, subdevice.
    pub fn handles(&self) -> (Handle<Device>, Handle<Subdevice>) {
        (self.device, self.subdevice)
    }

    /// What the VRAM allocator holds.
    pub fn vram_stats(&self) -> VramStats {
        self.vram.stats()
    }

    /// The VA space (its page tables can be walked, e.g. to check page sizes).
    pub fn va_space(&self) -> &GpuVaSpace<DmaTableMemory<&'a A>> {
        &self.vas
    }

    fn tlb(&self) -> RegisterTlbInvalidator<'a, R, C> {
        RegisterTlbInvalidator::new(self.io, self.clock)
    }

    // ------------------------------------------------------------------------------------------
    // Memory.

    /// Allocates VRAM for `len` elements of `T` and maps it with the largest pages its size
    /// allows. The contents are whatever VRAM held: write or memset before reading.
    pub fn alloc<T: Pod>(&mut self, len: usize) -> Result<DeviceBuffer<T>, RuntimeError> {
        let elem = core::mem::size_of::<T>();
        let bytes = len.checked_mul(elem).ok_or(RuntimeError::TooLarge { len, elem })?;
        let bytes = u64::try_from(bytes).map_err(|_| RuntimeError::TooLarge { len, elem })?;
        let vram = self.vram.alloc(bytes, page_alignment(bytes))?;
        let mut tlb = self.tlb();
        match self.vas.map(vram.base(), vram.size(), Aperture::Video, PteAttrs::default(), &mut tlb) {
            Ok(mapping) => Ok(DeviceBuffer { vram, mapping, len, _elements: PhantomData }),
            Err(e) => {
                // The allocation was just handed out by this allocator: giving it back cannot
                // fail, and the mapping error is what the caller needs to see.
                let _ = self.vram.free(vram);
                Err(e.into())
            }
        }
    }

    /// Allocates and fills from `src`.
    pub fn alloc_from<T: Pod>(&mut self, src: &[T]) -> Result<DeviceBuffer<T>, RuntimeError> {
        let buffer = self.alloc(src.len())?;
        if let Err(e) = self.copy_to_device(&buffer, src) {
            let _ = self.release(buffer.vram, buffer.mapping);
            return Err(e);
        }
        Ok(buffer)
    }

    /// Unmaps and frees (for [`DeviceBuffer::free`] and modules, after synchronizing).
    pub(super) fn release(&mut self, vram: VramAllocation, mapping: GpuMapping) -> Result<(), RuntimeError> {
        let mut tlb = self.tlb();
        let unmapped = self.vas.unmap(mapping, &mut tlb);
        // VRAM that is still mapped must not be handed out again.
        unmapped?;
        self.vram.free(vram)?;
        Ok(())
    }

    // ------------------------------------------------------------------------------------------
    // Synchronous copies and memsets on the default stream.

    /// Copies `src` into `dst` (equal lengths), through the staging buffer; returns when the
    /// data is in VRAM.
    pub fn copy_to_device<T: Pod>(&mut self, dst: &DeviceBuffer<T>, src: &[T]) -> Result<(), RuntimeError> {
        if src.len() != dst.len() {
            return Err(RuntimeError::LengthMismatch { what: "copy to device", device: dst.len(), host: src.len() });
        }
        self.write_device(dst.device_ptr(), src.as_bytes())
    }

    /// Copies `src` into `dst` (equal lengths); returns when the data is in `dst`.
    pub fn copy_from_device<T: Pod>(&mut self, dst: &mut [T], src: &DeviceBuffer<T>) -> Result<(), RuntimeError> {
        if src.len() != dst.len() {
            return Err(RuntimeError::LengthMismatch { what: "copy from device", device: src.len(), host: dst.len() });
        }
        self.read_device(src.device_ptr(), dst.as_mut_bytes())
    }

    /// Copies `src` to `dst` (equal lengths) on the copy engine and waits.
    pub fn copy_device_to_device<T: Pod>(
        &mut self,
        dst: &DeviceBuffer<T>,
        src: &DeviceBuffer<T>,
    ) -> Result<(), RuntimeError> {
        let stream = self.default_stream();
        stream.copy_device_to_device(self, dst, src)?;
        stream.synchronize(self)
    }

    /// Sets every byte of `dst` to `value` and waits.
    pub fn memset_d8<T: Pod>(&mut self, dst: &DeviceBuffer<T>, value: u8) -> Result<(), RuntimeError> {
        let stream = self.default_stream();
        stream.memset_d8(self, dst, value)?;
        stream.synchronize(self)
    }

    /// Sets every 32-bit word of `dst` to `value` (its size must be a multiple of 4) and waits.
    pub fn memset_d32<T: Pod>(&mut self, dst: &DeviceBuffer<T>, value: u32) -> Result<(), RuntimeError> {
        let stream = self.default_stream();
        stream.memset_d32(self, dst, value)?;
        stream.synchronize(self)
    }

    /// Writes `bytes` at GPU VA `va` through the staging buffer.
    pub(super) fn write_device(&mut self, va: u64, bytes: &[u8]) -> Result<(), RuntimeError> {
        let chunk = self.staging.len();
        let mut progress = CopyProgress::new(self.progress, "copy to the device", bytes.len());
        for (i, piece) in bytes.chunks(chunk).enumerate() {
            self.staging
                .write(0, piece)
                .map_err(|_| RuntimeError::Unsupported { what: "a chunk larger than the staging buffer" })?;
            let offset = (i * chunk) as u64;
            self.staged_copy(CeAddress::Virtual(self.staging_map.va), CeAddress::Virtual(va + offset), piece.len())?;
            progress.done(offset as usize + piece.len());
        }
        Ok(())
    }

    /// Reads `bytes.len()` bytes at GPU VA `va` through the staging buffer.
    pub(super) fn read_device(&mut self, va: u64, bytes: &mut [u8]) -> Result<(), RuntimeError> {
        let chunk = self.staging.len();
        let total = bytes.len();
        let mut progress = CopyProgress::new(self.progress, "copy from the device", total);
        for (i, piece) in bytes.chunks_mut(chunk).enumerate() {
            let offset = (i * chunk) as u64;
            self.staged_copy(CeAddress::Virtual(va + offset), CeAddress::Virtual(self.staging_map.va), piece.len())?;
            self.staging
                .read(0, piece)
                .map_err(|_| RuntimeError::Unsupported { what: "a chunk larger than the staging buffer" })?;
            progress.done(offset as usize + piece.len());
        }
        Ok(())
    }

    /// One copy on the default stream, waited for (the staging buffer is reused after it).
    fn staged_copy(&mut self, src: CeAddress, dst: CeAddress, bytes: usize) -> Result<(), RuntimeError> {
        self.run_copies(|ce, pb| Ok(ce.copy(pb, src, dst, bytes as u64, Pipelining::NonPipelined)?))
    }

    // ------------------------------------------------------------------------------------------
    // Streams.

    /// The default stream (a copy-engine channel; the synchronous operations run on it).
    pub fn default_stream(&self) -> Stream {
        Stream { index: 0, generation: 0 }
    }

    /// Creates a stream on a new channel of `kind`.
    pub fn create_stream(&mut self, rpc: &mut impl RpcChannel, kind: StreamKind) -> Result<Stream, RuntimeError> {
        let generation = self.next_generation;
        let mut tlb = self.tlb();
        let family = self.chipset.family();
        let local_plan = match kind {
            StreamKind::Compute => Some(self.local_plan?),
            StreamKind::Copy => None,
        };
        let state = Self::make_stream(
            &mut self.rm,
            rpc,
            self.io,
            self.dma,
            self.device,
            &mut self.vas,
            &mut self.vram,
            &mut tlb,
            family,
            kind,
            local_plan,
            self.config,
            generation,
        )?;
        self.next_generation = generation.wrapping_add(1).max(1);
        let slot = self.streams.iter().skip(1).position(Option::is_none).map(|i| i + 1);
        let index = match slot {
            Some(i) => i,
            None => {
                self.streams.push(None);
                self.streams.len() - 1
            }
        };
        let index32 = u32::try_from(index).map_err(|_| RuntimeError::Unsupported { what: "more than 2^32 streams" })?;
        if let Some(s) = self.streams.get_mut(index) {
            *s = Some(state);
        }
        Ok(Stream { index: index32, generation })
    }

    /// Waits for `stream`'s work, then frees its channel. The default stream lives as long as
    /// the GPU.
    pub fn destroy_stream(&mut self, rpc: &mut impl RpcChannel, stream: Stream) -> Result<(), RuntimeError> {
        let kind = self.stream_state(stream)?.kind;
        if stream.index == 0 {
            return Err(RuntimeError::WrongStream { what: "be destroyed (it is the default stream)", kind });
        }
        let waited = stream.synchronize(self);
        let state = self.streams.get_mut(stream.index as usize).and_then(Option::take);
        let state = state.ok_or(RuntimeError::NoSuchStream { index: stream.index })?;
        let mut tlb = self.tlb();
        if let Some(area) = state.launch {
            area.free(self.dma, &mut self.vas, &mut self.vram, &mut tlb)?;
        }
        state.channel.destroy(&mut self.rm, rpc, &mut self.vas, self.dma, &mut tlb)?;
        waited
    }

    pub(super) fn stream_state(&mut self, stream: Stream) -> Result<&mut StreamState, RuntimeError> {
        match self.streams.get_mut(stream.index as usize) {
            Some(Some(state)) if state.generation == stream.generation => Ok(state),
            _ => Err(RuntimeError::NoSuchStream { index: stream.index }),
        }
    }

    /// Waits until every stream finished its work (or one failed, or the configured timeout
    /// passed); every stream is waited for, the first error is returned.
    pub fn synchronize(&mut self) -> Result<(), RuntimeError> {
        let handles: Vec<Stream> = self
            .streams
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some(Stream { index: i as u32, generation: s.as_ref()?.generation }))
            .collect();
        let mut first = Ok(());
        for stream in handles {
            let r = stream.synchronize(self);
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// Tears the GPU down: waits for the streams, frees the channels, the staging buffer and
    /// every RM object of the client (the VA space with it). Buffers and modules not freed
    /// before are gone with the VA space and the allocator. The page tables' DMA memory stays
    /// allocated: `GpuVaSpace` has no way yet to give its `PageTables` back.
    pub fn destroy(mut self, rpc: &mut impl RpcChannel) -> Result<(), RuntimeError> {
        let waited = self.synchronize();
        let mut tlb = self.tlb();
        let mut first: Result<(), RuntimeError> = Ok(());
        for state in core::mem::take(&mut self.streams).into_iter().flatten() {
            if let Some(area) = state.launch {
                let r = area.free(self.dma, &mut self.vas, &mut self.vram, &mut tlb);
                if first.is_ok() {
                    first = r;
                }
            }
            let r = state.channel.destroy(&mut self.rm, rpc, &mut self.vas, self.dma, &mut tlb);
            if first.is_ok() {
                first = r.map_err(Into::into);
            }
        }
        let unmapped = self.vas.unmap(self.staging_map, &mut tlb);
        if unmapped.is_ok() {
            self.dma.free(self.staging);
        }
        let freed = self.rm.free_all(rpc);
        waited.and(first).and(unmapped.map_err(Into::into)).and(freed.map_err(Into::into))
    }
}

// Kernel launch: `Stream::launch` in `super::launch`.
impl Stream {
    /// Whether this is the GPU's default stream.
    pub fn is_default(&self) -> bool {
        self.index == 0
    }

    /// The stream's kind.
    pub fn kind<R, A, C>(&self, gpu: &mut Gpu<'_, R, A, C>) -> Result<StreamKind, RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        Ok(gpu.stream_state(*self)?.kind)
    }

    /// The stream's channel id (diagnostics).
    pub fn channel_id<R, A, C>(&self, gpu: &mut Gpu<'_, R, A, C>) -> Result<u32, RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        Ok(gpu.stream_state(*self)?.channel.chid())
    }

    fn submit_ce<R, A, C>(
        &self,
        gpu: &mut Gpu<'_, R, A, C>,
        what: &'static str,
        encode: impl FnOnce(&CeEncoder, &mut crate::host::PushBuffer) -> Result<(), crate::ce::CeEncodeError>,
    ) -> Result<(), RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        let io = gpu.io;
        let state = gpu.stream_state(*self)?;
        let ce = state.ce.ok_or(RuntimeError::WrongStream { what, kind: state.kind })?;
        let mut pb = state.channel.pushbuffer();
        encode(&ce, &mut pb)?;
        state.last = Some(state.channel.submit(io, &pb)?);
        Ok(())
    }

    /// Queues a copy of `src` to `dst` (equal lengths, not overlapping).
    pub fn copy_device_to_device<T: Pod, R, A, C>(
        &self,
        gpu: &mut Gpu<'_, R, A, C>,
        dst: &DeviceBuffer<T>,
        src: &DeviceBuffer<T>,
    ) -> Result<(), RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        if src.len() != dst.len() {
            return Err(RuntimeError::LengthMismatch {
                what: "device to device copy",
                device: dst.len(),
                host: src.len(),
            });
        }
        let bytes = src.byte_len() as u64;
        self.submit_ce(gpu, "copy", |ce, pb| {
            let (s, d) = (CeAddress::Virtual(src.device_ptr()), CeAddress::Virtual(dst.device_ptr()));
            ce.copy(pb, s, d, bytes, Pipelining::NonPipelined)
        })
    }

    /// Queues setting every byte of `dst` to `value`.
    pub fn memset_d8<T: Pod, R, A, C>(
        &self,
        gpu: &mut Gpu<'_, R, A, C>,
        dst: &DeviceBuffer<T>,
        value: u8,
    ) -> Result<(), RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        let bytes = dst.byte_len() as u64;
        self.submit_ce(gpu, "memset", |ce, pb| {
            ce.memset(
                pb,
                CeAddress::Virtual(dst.device_ptr()),
                MemsetPattern::U8(value),
                bytes,
                Pipelining::NonPipelined,
            )
        })
    }

    /// Queues setting every 32-bit word of `dst` to `value`; `dst`'s size must be a multiple of
    /// 4 bytes.
    pub fn memset_d32<T: Pod, R, A, C>(
        &self,
        gpu: &mut Gpu<'_, R, A, C>,
        dst: &DeviceBuffer<T>,
        value: u32,
    ) -> Result<(), RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        let bytes = dst.byte_len();
        if !bytes.is_multiple_of(4) {
            return Err(RuntimeError::Misaligned { what: "32-bit memset", bytes, multiple: 4 });
        }
        self.submit_ce(gpu, "memset", |ce, pb| {
            ce.memset(
                pb,
                CeAddress::Virtual(dst.device_ptr()),
                MemsetPattern::U32(value),
                bytes as u64,
                Pipelining::NonPipelined,
            )
        })
    }

    /// An event that completes when everything submitted to this stream so far has.
    pub fn record<R, A, C>(&self, gpu: &mut Gpu<'_, R, A, C>) -> Result<Event, RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        Ok(Event { stream: *self, fence: gpu.stream_state(*self)?.last })
    }

    /// Queues, after this stream's work so far, a release of the 16-byte semaphore report at
    /// GPU VA `va` (16-byte aligned, in memory the caller mapped): payload 1, then the GPU's
    /// nanosecond timestamp at byte 8. The event completes with it; the timestamp says when
    /// the stream's earlier work finished on the GPU's clock (events with elapsed time).
    pub fn record_timestamp<R, A, C>(&self, gpu: &mut Gpu<'_, R, A, C>, va: u64) -> Result<Event, RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        let io = gpu.io;
        let state = gpu.stream_state(*self)?;
        let mut pb = state.channel.pushbuffer();
        pb.semaphore_release_timestamp(va, 1).map_err(crate::channel::ChannelError::from)?;
        let fence = state.channel.submit(io, &pb)?;
        state.last = Some(fence);
        Ok(Event { stream: *self, fence: Some(fence) })
    }

    /// Whether all of this stream's work finished; a failed channel is an error.
    pub fn query<R, A, C>(&self, gpu: &mut Gpu<'_, R, A, C>) -> Result<bool, RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        self.record(gpu)?.query(gpu)
    }

    /// Waits for all of this stream's work, up to the GPU's configured timeout.
    pub fn synchronize<R, A, C>(&self, gpu: &mut Gpu<'_, R, A, C>) -> Result<(), RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        let timeout_ms = gpu.config.timeout_ms;
        self.record(gpu)?.synchronize(gpu, timeout_ms)
    }
}

impl Event {
    /// The stream the event was recorded on.
    pub fn stream(&self) -> Stream {
        self.stream
    }

    /// Whether the work before the event finished. A channel RM stopped is an error
    /// ([`crate::channel::ChannelError::Failed`]), not "not yet".
    pub fn query<R, A, C>(&self, gpu: &mut Gpu<'_, R, A, C>) -> Result<bool, RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        let state = gpu.stream_state(self.stream)?;
        let Some(fence) = self.fence else { return Ok(true) };
        if (state.channel.completed().wrapping_sub(fence.value) as i32) >= 0 {
            return Ok(true);
        }
        match state.channel.error() {
            Some((error, xid)) => {
                Err(crate::channel::ChannelError::Failed { chid: state.channel.chid(), error, xid }.into())
            }
            None => Ok(false),
        }
    }

    /// Waits for the work before the event, at most `timeout_ms` of the GPU's clock; a timeout
    /// names the channel, the fence and how far it got.
    pub fn synchronize<R, A, C>(&self, gpu: &mut Gpu<'_, R, A, C>, timeout_ms: u64) -> Result<(), RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        let clock = gpu.clock;
        let state = gpu.stream_state(self.stream)?;
        let Some(fence) = self.fence else { return Ok(()) };
        state.channel.wait(fence, clock, timeout_ms, || {})?;
        Ok(())
    }
}

#[cfg(test)]
mod progress_tests {
    use super::*;

    static CALLS: std::sync::Mutex<Vec<(u64, u64)>> = std::sync::Mutex::new(Vec::new());

    fn record(_: &'static str, done: u64, total: u64) {
        CALLS.lock().unwrap().push((done, total));
    }

    #[test]
    fn large_copies_report_each_tenth_once_and_small_ones_nothing() {
        let total = PROGRESS_MIN_BYTES * 2;
        let chunk = 1 << 20;
        let mut p = CopyProgress::new(Some(record), "copy", total);
        let mut done = 0;
        while done < total {
            done += chunk;
            p.done(done);
        }
        let calls = core::mem::take(&mut *CALLS.lock().unwrap());
        assert_eq!(calls.len(), 10, "{calls:?}");
        assert_eq!(calls.last(), Some(&(total as u64, total as u64)));
        assert!(calls.windows(2).all(|w| w[0].0 < w[1].0));
        let mut small = CopyProgress::new(Some(record), "copy", PROGRESS_MIN_BYTES - 1);
        small.done(PROGRESS_MIN_BYTES - 1);
        assert!(CALLS.lock().unwrap().is_empty());
    }
}
