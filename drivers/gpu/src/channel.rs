//! GPU VA spaces and GPFIFO channels, set up through GSP-RM the way a CPU-side RM does it.
//!
//! A [`GpuVaSpace`] is an RM `FERMI_VASPACE_A` whose page tables the driver owns
//! ([`crate::mm::PageTables`]); their root is handed to RM with
//! `NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY`, the choice NVIDIA's UVM makes (`nv_gpu_ops.c`,
//! `nvGpuOpsSetPageDirectory`) and tinygrad's GSP path follows: the driver maps and unmaps
//! without an RPC per mapping.
//!
//! A [`Channel`] is a channel group (`KEPLER_CHANNEL_GROUP_A`) with one GPFIFO channel of the
//! family's class and one engine object (copy or compute). The driver owns all of the channel's
//! memory, in system memory the GPU reaches: instance block, USERD, the GPFIFO ring, a pushbuffer
//! ring, the fence semaphore and the error notifier; RM learns where they are from
//! `NV_CHANNEL_ALLOC_PARAMS`. Work goes in as pushbuffer segments: each [`Channel::submit`]
//! copies the segment into the ring, appends a semaphore release of the next fence value,
//! writes the GPFIFO entry, `GPPut` in USERD, and rings the doorbell in the usermode region with
//! the channel's work-submit token. [`Channel::wait`] polls the fence with a deadline and the
//! error notifier, so a channel that RM stopped (robust-channel recovery) reports a typed
//! [`ChannelError::Failed`] without touching other channels.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::fmt;

use crate::gsp::commands::RpcChannel;
use crate::hal::Family;
use crate::host::{GpEntry, GpEntryFlags, HostClass, PushBuffer, PushError};
use crate::hw::RegisterIo;
use crate::mm::{
    Aperture, MmuFormat, PageTableError, PageTableMemory, PageTables, PteAttrs, TableAperture, TlbInvalidator,
    VaAllocator, VaError,
};
use crate::platform::{Clock, DmaAllocator, DmaBuffer, DmaError, DmaRangeError};
use crate::rm::fifo::{
    self as f, ChannelGroupObject, ChannelObject, EngineObject, NvB0b5AllocationParameters, NvChannelAllocParams,
    NvChannelGroupAllocationParameters, NvMemoryDescParams, NvVaspaceAllocationParameters, RobustChannelError,
    VaSpaceObject,
};
use crate::rm::{Device, Handle, RmClient, RmError};

/// First VA the driver hands out (the first 4 GiB stay unmapped: a null or truncated pointer
/// faults).
pub const VA_START: u64 = 1 << 32;
/// End of the VA range the driver hands out (128 TiB, inside both formats).
pub const VA_END: u64 = 1 << 47;

/// What went wrong setting up or using a VA space or channel.
#[derive(Debug)]
pub enum ChannelError {
    Rm(RmError),
    Dma(DmaError),
    /// An access to the channel's DMA memory did not fit it.
    DmaRange(DmaRangeError),
    PageTable(PageTableError),
    Va(VaError),
    Push(PushError),
    /// The pushbuffer segment does not fit the channel's ring.
    SegmentTooLarge {
        words: usize,
        ring_words: usize,
    },
    /// Waiting for `what` took longer than `timeout_ms`.
    Timeout {
        what: &'static str,
        chid: u32,
        fence: u32,
        reached: u32,
        timeout_ms: u64,
    },
    /// RM stopped the channel (robust-channel error `error`, Xid `xid`).
    Failed {
        chid: u32,
        error: RobustChannelError,
        xid: u32,
    },
    /// The family has no class for this (Blackwell channels are not set up by this driver yet).
    Unsupported {
        what: &'static str,
    },
}

impl fmt::Display for ChannelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChannelError::Rm(e) => write!(f, "RM: {e}"),
            ChannelError::Dma(e) => write!(f, "DMA memory: {e}"),
            ChannelError::DmaRange(e) => write!(f, "DMA memory: {e}"),
            ChannelError::PageTable(e) => write!(f, "page tables: {e}"),
            ChannelError::Va(e) => write!(f, "{e}"),
            ChannelError::Push(e) => write!(f, "pushbuffer: {e:?}"),
            ChannelError::SegmentTooLarge { words, ring_words } => {
                write!(f, "a segment of {words} words does not fit a pushbuffer ring of {ring_words}")
            }
            ChannelError::Timeout { what, chid, fence, reached, timeout_ms } => write!(
                f,
                "timed out after {timeout_ms} ms waiting for {what} on channel {chid} (fence {fence}, reached {reached})"
            ),
            ChannelError::Failed { chid, error, xid } => write!(f, "channel {chid} stopped by RM: {error:?} (Xid {xid})"),
            ChannelError::Unsupported { what } => write!(f, "not supported on this GPU: {what}"),
        }
    }
}

impl From<RmError> for ChannelError {
    fn from(e: RmError) -> Self {
        ChannelError::Rm(e)
    }
}
impl From<DmaError> for ChannelError {
    fn from(e: DmaError) -> Self {
        ChannelError::Dma(e)
    }
}
impl From<DmaRangeError> for ChannelError {
    fn from(e: DmaRangeError) -> Self {
        ChannelError::DmaRange(e)
    }
}
impl From<PageTableError> for ChannelError {
    fn from(e: PageTableError) -> Self {
        ChannelError::PageTable(e)
    }
}
impl From<VaError> for ChannelError {
    fn from(e: VaError) -> Self {
        ChannelError::Va(e)
    }
}
impl From<PushError> for ChannelError {
    fn from(e: PushError) -> Self {
        ChannelError::Push(e)
    }
}

/// The classes a family's channels use (`NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2` lists them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelClasses {
    pub host: HostClass,
    pub copy: u32,
    pub compute: u32,
}

impl ChannelClasses {
    pub fn for_family(family: Family) -> Result<Self, ChannelError> {
        let classes = crate::hal::for_family(family).classes;
        let host = HostClass::from_class_number(classes.gpfifo)
            .ok_or(ChannelError::Unsupported { what: "Blackwell GPFIFO channels (no 535 GSP-RM)" })?;
        Ok(ChannelClasses { host, copy: classes.copy, compute: classes.compute })
    }
}

/// A page mapped for the GPU: where, and what backs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuMapping {
    pub va: u64,
    pub size: u64,
}

/// A VA space with driver-owned page tables, bound to RM.
pub struct GpuVaSpace<M: PageTableMemory> {
    handle: Handle<VaSpaceObject>,
    tables: PageTables<M>,
    va: VaAllocator,
}

impl<M: PageTableMemory> GpuVaSpace<M> {
    /// Allocates the RM VA space under `device`, builds its root over `memory` and binds it with
    /// `NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY`.
    pub fn create<T: RpcChannel>(
        rm: &mut RmClient,
        rpc: &mut T,
        device: Handle<Device>,
        format: MmuFormat,
        memory: M,
    ) -> Result<Self, ChannelError> {
        Self::create_with_flags(rm, rpc, device, format, memory, 0)
    }

    /// [`Self::create`] with `NV_VASPACE_ALLOCATION_FLAGS_*` (e.g. `ENABLE_PAGE_FAULTING`).
    pub fn create_with_flags<T: RpcChannel>(
        rm: &mut RmClient,
        rpc: &mut T,
        device: Handle<Device>,
        format: MmuFormat,
        memory: M,
        flags: u32,
    ) -> Result<Self, ChannelError> {
        let params = NvVaspaceAllocationParameters {
            index: f::NV_VASPACE_ALLOCATION_INDEX_GPU_NEW,
            big_page_size: f::NV_VASPACE_BIG_PAGE_SIZE_64K,
            flags,
            ..Default::default()
        };
        let handle: Handle<VaSpaceObject> = rm.alloc(rpc, device, f::FERMI_VASPACE_A, &params)?;
        let tables = PageTables::new(format, memory)?;
        let pdb = tables.pdb();
        let aperture = match pdb.aperture {
            TableAperture::Video => f::SET_PAGE_DIRECTORY_APERTURE_VIDMEM,
            TableAperture::SystemCoherent => f::SET_PAGE_DIRECTORY_APERTURE_SYSMEM_COH,
            TableAperture::SystemNonCoherent => f::SET_PAGE_DIRECTORY_APERTURE_SYSMEM_NONCOH,
        };
        let mut bind = f::Nv0080CtrlDmaSetPageDirectoryParams {
            phys_address: pdb.address,
            num_entries: format.levels().first().map_or(0, |l| l.entries() as u32),
            flags: aperture | f::SET_PAGE_DIRECTORY_ALL_CHANNELS,
            h_va_space: handle.raw(),
            ch_id: 0,
            sub_device_id: 1,
            pasid: 0,
        };
        rm.control_typed(rpc, device, f::NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY, &mut bind)?;
        Ok(GpuVaSpace { handle, tables, va: VaAllocator::new(VA_START, VA_END) })
    }

    pub fn handle(&self) -> Handle<VaSpaceObject> {
        self.handle
    }

    pub fn tables(&self) -> &PageTables<M> {
        &self.tables
    }

    pub fn tables_mut(&mut self) -> &mut PageTables<M> {
        &mut self.tables
    }

    /// Maps `size` bytes of physical memory at `pa` in `aperture` at a new VA (2 MiB aligned when
    /// the size allows 2 MiB pages, else 64 KiB or 4 KiB), with the largest pages alignment
    /// allows.
    pub fn map(
        &mut self,
        pa: u64,
        size: u64,
        aperture: Aperture,
        attrs: PteAttrs,
        tlb: &mut impl TlbInvalidator,
    ) -> Result<GpuMapping, ChannelError> {
        let size = size.next_multiple_of(4096);
        let align = if size >= 2 << 20 && pa.is_multiple_of(2 << 20) {
            2 << 20
        } else if size >= 64 << 10 && pa.is_multiple_of(64 << 10) {
            64 << 10
        } else {
            4096
        };
        let va = self.va.alloc(size, align)?;
        if let Err(e) = self.tables.map(va, pa, size, aperture, attrs, tlb) {
            let _ = self.va.free(va, size);
            return Err(e.into());
        }
        Ok(GpuMapping { va, size })
    }

    /// Maps a DMA buffer (coherent system memory).
    pub fn map_dma(&mut self, buffer: &DmaBuffer, tlb: &mut impl TlbInvalidator) -> Result<GpuMapping, ChannelError> {
        self.map(buffer.bus_address(), buffer.len() as u64, Aperture::SystemCoherent, PteAttrs::default(), tlb)
    }

    /// Reserves `size` bytes of VA aligned to `align` with nothing mapped (the caller maps it:
    /// unified memory's managed ranges).
    pub fn reserve_va(&mut self, size: u64, align: u64) -> Result<u64, ChannelError> {
        Ok(self.va.alloc(size, align)?)
    }

    /// Gives back a range from [`Self::reserve_va`] (its mappings must be gone).
    pub fn release_va(&mut self, va: u64, size: u64) -> Result<(), ChannelError> {
        Ok(self.va.free(va, size)?)
    }

    /// Unmaps and returns the VA range.
    pub fn unmap(&mut self, mapping: GpuMapping, tlb: &mut impl TlbInvalidator) -> Result<(), ChannelError> {
        self.tables.unmap(mapping.va, mapping.size, tlb)?;
        self.va.free(mapping.va, mapping.size)?;
        Ok(())
    }
}

/// A fence: the channel's semaphore reaching `value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fence {
    pub chid: u32,
    pub value: u32,
}

/// How a channel is configured.
#[derive(Clone, Copy, Debug)]
pub struct ChannelConfig {
    /// GPFIFO entries (power of two).
    pub gpfifo_entries: u32,
    /// Pushbuffer ring bytes.
    pub pushbuffer_bytes: usize,
    /// The engine: copy engine `n`, or graphics/compute.
    pub engine: ChannelEngine,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelEngine {
    Copy(u32),
    Compute,
}

impl Default for ChannelConfig {
    fn default() -> Self {
        ChannelConfig { gpfifo_entries: 256, pushbuffer_bytes: 256 << 10, engine: ChannelEngine::Copy(0) }
    }
}

/// The subchannel the engine object is bound on.
pub const ENGINE_SUBCHANNEL: u8 = 4;

struct InFlight {
    fence: u32,
    /// The segment's bytes in the pushbuffer ring.
    pb_start: usize,
    pb_end: usize,
}

/// A GPFIFO channel with its engine object.
pub struct Channel {
    group: Handle<ChannelGroupObject>,
    channel: Handle<ChannelObject>,
    engine_object: Handle<EngineObject>,
    classes: ChannelClasses,
    engine_class: u32,
    chid: u32,
    token: u32,
    entries: u32,
    userd: DmaBuffer,
    instance: DmaBuffer,
    gpfifo: DmaBuffer,
    gpfifo_map: GpuMapping,
    pushbuffer: DmaBuffer,
    pushbuffer_map: GpuMapping,
    semaphore: DmaBuffer,
    semaphore_map: GpuMapping,
    notifier: DmaBuffer,
    gp_put: u32,
    pb_put: usize,
    next_fence: u32,
    in_flight: VecDeque<InFlight>,
    failed: Option<(RobustChannelError, u32)>,
    /// The fence release every submission ends with, encoded once; only its payload word
    /// changes (`fence_payload_at`).
    fence_words: [u32; 8],
    fence_len: usize,
    fence_payload_at: usize,
}

/// Writes `words` little-endian into `dst` from `offset`: one bulk copy on a little-endian CPU.
#[inline]
fn write_words_le(dst: &mut DmaBuffer, offset: usize, words: &[u32]) -> Result<(), DmaRangeError> {
    #[cfg(target_endian = "little")]
    {
        use zerocopy::IntoBytes;
        dst.write(offset, words.as_bytes())
    }
    #[cfg(not(target_endian = "little"))]
    {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        dst.write(offset, &bytes)
    }
}

fn desc(buffer: &DmaBuffer) -> NvMemoryDescParams {
    NvMemoryDescParams {
        base: buffer.bus_address(),
        size: buffer.len() as u64,
        address_space: f::ADDR_SYSMEM,
        cache_attrib: 0,
    }
}

impl Channel {
    /// Creates the channel group, channel and engine object in `vaspace`, binds and schedules
    /// the channel, fetches its work-submit token and binds the engine object on
    /// [`ENGINE_SUBCHANNEL`] with a first submission.
    #[allow(clippy::too_many_arguments)]
    pub fn create<T: RpcChannel, M: PageTableMemory>(
        rm: &mut RmClient,
        rpc: &mut T,
        io: &(impl RegisterIo + ?Sized),
        device: Handle<Device>,
        family: Family,
        vaspace: &mut GpuVaSpace<M>,
        dma: &(impl DmaAllocator + ?Sized),
        tlb: &mut impl TlbInvalidator,
        config: ChannelConfig,
    ) -> Result<Self, ChannelError> {
        let classes = ChannelClasses::for_family(family)?;
        let engine_type = match config.engine {
            ChannelEngine::Copy(n) => f::NV2080_ENGINE_TYPE_COPY0 + n,
            ChannelEngine::Compute => f::NV2080_ENGINE_TYPE_GRAPHICS,
        };
        let entries = config.gpfifo_entries;
        // DMA memory is 4 KiB aligned, which covers USERD's and the instance block's alignment
        // (`NV_RAMUSERD_BASE_SHIFT`, `NV_RAMIN_ALLOC_SIZE`).
        let userd = dma.alloc(crate::hw::host::USERD_SIZE.max(1 << crate::hw::host::NV_RAMUSERD_BASE_SHIFT) as usize)?;
        let instance = dma.alloc(crate::hw::host::NV_RAMIN_ALLOC_SIZE as usize)?;
        let notifier = dma.alloc(4096)?;
        let gpfifo = dma.alloc((entries as usize * 8).max(4096))?;
        let pushbuffer = dma.alloc(config.pushbuffer_bytes.max(4096))?;
        let semaphore = dma.alloc(4096)?;
        let gpfifo_map = vaspace.map_dma(&gpfifo, tlb)?;
        let pushbuffer_map = vaspace.map_dma(&pushbuffer, tlb)?;
        let semaphore_map = vaspace.map_dma(&semaphore, tlb)?;

        let group_params = NvChannelGroupAllocationParameters {
            h_va_space: vaspace.handle().raw(),
            engine_type,
            ..Default::default()
        };
        let group: Handle<ChannelGroupObject> = rm.alloc(rpc, device, f::KEPLER_CHANNEL_GROUP_A, &group_params)?;
        let mut params = NvChannelAllocParams {
            gp_fifo_offset: gpfifo_map.va,
            gp_fifo_entries: entries,
            h_va_space: vaspace.handle().raw(),
            engine_type,
            instance_mem: desc(&instance),
            userd_mem: desc(&userd),
            error_notifier_mem: desc(&notifier),
            ..Default::default()
        };
        params.userd_mem.size = crate::hw::host::USERD_SIZE;
        params.error_notifier_mem.size = core::mem::size_of::<f::NvNotification>() as u64;
        let channel: Handle<ChannelObject> = rm.alloc(rpc, group, classes.host.class_number(), &params)?;
        let mut bind = f::NvA06fCtrlBindParams { engine_type };
        rm.control_typed(rpc, channel, f::NVA06F_CTRL_CMD_BIND, &mut bind)?;
        let mut schedule = f::NvA06fCtrlGpfifoScheduleParams { b_enable: 1, b_skip_submit: 0 };
        rm.control_typed(rpc, channel, f::NVA06F_CTRL_CMD_GPFIFO_SCHEDULE, &mut schedule)?;
        let mut token = f::NvC36fCtrlGetWorkSubmitTokenParams::default();
        rm.control_typed(rpc, channel, f::NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, &mut token)?;
        let engine_class = match config.engine {
            ChannelEngine::Copy(_) => classes.copy,
            ChannelEngine::Compute => classes.compute,
        };
        let engine_object: Handle<EngineObject> = match config.engine {
            ChannelEngine::Copy(_) => {
                let p = NvB0b5AllocationParameters { version: f::NVB0B5_ALLOCATION_PARAMETERS_VERSION_1, engine_type };
                rm.alloc(rpc, channel, classes.copy, &p)?
            }
            ChannelEngine::Compute => rm.alloc(rpc, channel, classes.compute, &[0u8; 0])?,
        };
        let mut ch = Channel {
            group,
            channel,
            engine_object,
            classes,
            engine_class,
            chid: f::token_chid(token.work_submit_token),
            token: token.work_submit_token,
            entries,
            userd,
            instance,
            gpfifo,
            gpfifo_map,
            pushbuffer,
            pushbuffer_map,
            semaphore,
            semaphore_map,
            notifier,
            gp_put: 0,
            pb_put: 0,
            next_fence: 1,
            // Never more than the GPFIFO ring holds: no reallocation on the submission path.
            in_flight: VecDeque::with_capacity(entries as usize),
            failed: None,
            fence_words: [0; 8],
            fence_len: 0,
            fence_payload_at: 0,
        };
        ch.encode_fence_release()?;
        let mut pb = ch.pushbuffer();
        pb.set_object(ENGINE_SUBCHANNEL, engine_class as u16)?;
        ch.submit(io, &pb)?;
        Ok(ch)
    }

    /// Encodes the fence release once: twice with different payloads, to find the payload word.
    fn encode_fence_release(&mut self) -> Result<(), ChannelError> {
        let mut a = [0u32; 8];
        let mut b = [0u32; 8];
        let mut pa = PushBuffer::over_slice(&mut a, self.classes.host);
        pa.semaphore_release(self.semaphore_map.va, 0, true)?;
        let len = pa.len();
        let mut pb = PushBuffer::over_slice(&mut b, self.classes.host);
        pb.semaphore_release(self.semaphore_map.va, u32::MAX, true)?;
        let differ: Vec<usize> = (0..len).filter(|&i| a[i] != b[i]).collect();
        let [at] = differ[..] else {
            return Err(ChannelError::Unsupported { what: "a semaphore release whose payload is not one word" });
        };
        self.fence_words = a;
        self.fence_len = len;
        self.fence_payload_at = at;
        Ok(())
    }

    /// An empty pushbuffer for this channel's class.
    pub fn pushbuffer(&self) -> PushBuffer {
        PushBuffer::with_storage(Vec::new(), self.classes.host)
    }

    pub fn chid(&self) -> u32 {
        self.chid
    }

    pub fn token(&self) -> u32 {
        self.token
    }

    pub fn engine_class(&self) -> u32 {
        self.engine_class
    }

    pub fn host_class(&self) -> HostClass {
        self.classes.host
    }

    /// The RM handles: group, channel, engine object.
    pub fn handles(&self) -> (Handle<ChannelGroupObject>, Handle<ChannelObject>, Handle<EngineObject>) {
        (self.group, self.channel, self.engine_object)
    }

    /// The GPU VA of the fence semaphore (4 bytes) and of 4 KiB of scratch after it that
    /// callers may use for their own semaphores (offsets 16..4096).
    pub fn semaphore_va(&self) -> u64 {
        self.semaphore_map.va
    }

    /// The fence value the semaphore holds now.
    pub fn completed(&self) -> u32 {
        self.semaphore.read_volatile_u32(0).unwrap_or(0)
    }

    /// Reads a scratch semaphore word written by the GPU (`offset` from [`Self::semaphore_va`]).
    pub fn read_semaphore(&self, offset: usize) -> Option<u32> {
        self.semaphore.read_volatile_u32(offset)
    }

    /// The robust-channel error RM posted to this channel's error notifier, if any.
    pub fn error(&self) -> Option<(RobustChannelError, u32)> {
        if let Some(failed) = self.failed {
            return Some(failed);
        }
        // NvNotification: info32 at 8, info16|status at 12; RM sets the status
        // (`RC_NOTIFIER_STATUS`) last, after the Xid.
        let status = (self.notifier.read_volatile_u32(12)? >> 16) as u16;
        if status != f::RC_NOTIFIER_STATUS {
            return None;
        }
        let xid = self.notifier.read_volatile_u32(8)?;
        Some((RobustChannelError::from_xid(xid), xid))
    }

    fn failed_error(&self) -> Option<ChannelError> {
        self.error().map(|(error, xid)| ChannelError::Failed { chid: self.chid, error, xid })
    }

    /// Frees ring space the GPU is done with.
    fn retire(&mut self) {
        let done = self.completed();
        while let Some(first) = self.in_flight.front() {
            if (done.wrapping_sub(first.fence) as i32) < 0 {
                break;
            }
            self.in_flight.pop_front();
        }
    }

    /// Submits `pb` (plus a fence release) and rings the doorbell.
    pub fn submit(&mut self, io: &(impl RegisterIo + ?Sized), pb: &PushBuffer) -> Result<Fence, ChannelError> {
        self.submit_words(io, pb.words())
    }

    /// [`Self::submit`] of pushbuffer words encoded elsewhere (a stack buffer, a slice).
    pub fn submit_words(&mut self, io: &(impl RegisterIo + ?Sized), body: &[u32]) -> Result<Fence, ChannelError> {
        if let Some(e) = self.failed_error() {
            return Err(e);
        }
        let fence = self.next_fence;
        // The fence release, encoded at creation; only the payload changes.
        let mut tail_words = self.fence_words;
        tail_words[self.fence_payload_at] = fence;
        let tail_len = self.fence_len;
        let total_words = body.len() + tail_len;
        let bytes = total_words * 4;
        let ring = self.pushbuffer.len();
        if bytes > ring / 2 {
            return Err(ChannelError::SegmentTooLarge { words: total_words, ring_words: ring / 4 });
        }
        self.retire();
        let mut start = self.pb_put;
        if start + bytes > ring {
            start = 0;
        }
        // The ring is filled in order: the live region runs from the oldest in-flight segment's
        // start to `pb_put`, wrapping. The new segment must stay clear of it, and the GPFIFO ring
        // must keep one entry free (GPPut == GPGet means empty).
        let gp_full = self.in_flight.len() as u32 + 1 >= self.entries;
        let overlaps = match (self.in_flight.front(), self.in_flight.back()) {
            (Some(oldest), Some(newest)) => {
                let end = start + bytes;
                if newest.pb_start >= oldest.pb_start {
                    // Live: [oldest.start, newest.end).
                    start < newest.pb_end && end > oldest.pb_start
                } else {
                    // Wrapped. Live: [oldest.start, ring) and [0, newest.end).
                    end > oldest.pb_start || start < newest.pb_end
                }
            }
            _ => false,
        };
        if gp_full || overlaps {
            return Err(ChannelError::Timeout {
                what: "pushbuffer ring space (wait for earlier fences first)",
                chid: self.chid,
                fence,
                reached: self.completed(),
                timeout_ms: 0,
            });
        }
        write_words_le(&mut self.pushbuffer, start, body)?;
        write_words_le(&mut self.pushbuffer, start + body.len() * 4, &tail_words[..tail_len])?;
        let entry = GpEntry::new(self.pushbuffer_map.va + start as u64, total_words as u32, GpEntryFlags::default())
            .map_err(|_| ChannelError::SegmentTooLarge { words: total_words, ring_words: ring / 4 })?;
        let [e0, e1] = entry.to_words();
        let at = self.gp_put as usize * 8;
        self.gpfifo.write_volatile_u32(at, e0);
        self.gpfifo.write_volatile_u32(at + 4, e1);
        self.gp_put = (self.gp_put + 1) % self.entries;
        self.userd.write_volatile_u32(crate::hw::host::USERD_GP_PUT as usize, self.gp_put);
        io.write32(f::NVC361_BASE + f::NVC361_NOTIFY_CHANNEL_PENDING, self.token);
        self.pb_put = start + bytes;
        self.next_fence = fence.wrapping_add(1).max(1);
        self.in_flight.push_back(InFlight { fence, pb_start: start, pb_end: start + bytes });
        Ok(Fence { chid: self.chid, value: fence })
    }

    /// Waits until `fence` completed, the channel failed, or `timeout_ms` passed; `poll` runs
    /// on every iteration (a caller passes GSP event processing there).
    pub fn wait(
        &mut self,
        fence: Fence,
        clock: &(impl Clock + ?Sized),
        timeout_ms: u64,
        mut poll: impl FnMut(),
    ) -> Result<(), ChannelError> {
        let deadline = clock.now_ns().saturating_add(timeout_ms.saturating_mul(1_000_000));
        loop {
            let reached = self.completed();
            if (reached.wrapping_sub(fence.value) as i32) >= 0 {
                self.retire();
                return Ok(());
            }
            if let Some(e) = self.failed_error() {
                return Err(e);
            }
            if clock.now_ns() >= deadline {
                return Err(ChannelError::Timeout {
                    what: "the channel's fence semaphore",
                    chid: self.chid,
                    fence: fence.value,
                    reached,
                    timeout_ms,
                });
            }
            poll();
            clock.relax();
        }
    }

    /// Records an error RM reported by event (`RC_TRIGGERED`) for this channel.
    pub fn mark_failed(&mut self, xid: u32) {
        self.failed = Some((RobustChannelError::from_xid(xid), xid));
    }

    /// Frees the RM objects (engine object, channel, group) and unmaps the channel's memory.
    pub fn destroy<T: RpcChannel, M: PageTableMemory>(
        self,
        rm: &mut RmClient,
        rpc: &mut T,
        vaspace: &mut GpuVaSpace<M>,
        dma: &(impl DmaAllocator + ?Sized),
        tlb: &mut impl TlbInvalidator,
    ) -> Result<(), ChannelError> {
        rm.free_tree(rpc, self.group)?;
        vaspace.unmap(self.gpfifo_map, tlb)?;
        vaspace.unmap(self.pushbuffer_map, tlb)?;
        vaspace.unmap(self.semaphore_map, tlb)?;
        for buffer in [self.userd, self.instance, self.notifier, self.gpfifo, self.pushbuffer, self.semaphore] {
            dma.free(buffer);
        }
        Ok(())
    }
}
