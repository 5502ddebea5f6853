//! GSP-RM's memory and channel objects for the CPU's clients: VA spaces (`FERMI_VASPACE_A`)
//! with a client-owned page directory, channel groups (`KEPLER_CHANNEL_GROUP_A`), GPFIFO
//! channels of the family's class, engine objects (copy, compute) on channels, and the usermode
//! object; the controls that bind a page directory, bind and schedule a channel and hand out its
//! work-submit token. Parameters are `nvgpu::rm::fifo`'s (checked against 535.261.03's
//! headers); the rules follow RM where the model needs them:
//!
//! - a VA space lives under a device; `NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY` on the device
//!   names it (`hVASpace`) and gives the root's physical address and aperture
//!   (`nv_gpu_ops.c`'s `nvGpuOpsSetPageDirectory` path); a channel's VA space has to have one
//!   before the channel runs;
//! - a channel group lives under a device with a VA space and an engine type; a channel lives
//!   under a channel group (same VA space and engine, as `kchannelConstruct` checks), with its
//!   instance block and USERD in memory the client owns (`NV_MEMORY_DESC_PARAMS`), USERD aligned
//!   to `1 << NV_RAMUSERD_BASE_SHIFT`, the instance block to `NV_RAMIN_ALLOC_SIZE`
//!   (`nvgpu::hw::host`, `dev_ram.h`), a GPFIFO ring of a power-of-two number of entries (the
//!   model's rule: the CPU-side RM passes `gpFifoEntries` to GSP-RM unchecked, and the driver
//!   always allocates powers of two);
//! - channel ids are handed out from 0; the work-submit token is `NV_CTRL_VF_DOORBELL` of the
//!   channel's runlist and id (`kfifoGenerateWorkSubmitToken_TU102`/`_GA100`). The model puts the
//!   graphics/compute engine on runlist 0 and copy engine `n` on runlist `1 + n`;
//! - a copy object (`NVB0B5_ALLOCATION_PARAMETERS`, version 1) names the channel's copy engine;
//!   a compute object needs a graphics-engine channel;
//! - a channel runs only after `NVA06F_CTRL_CMD_BIND` to its engine and
//!   `NVA06F_CTRL_CMD_GPFIFO_SCHEDULE` with `bEnable`.

use alloc::vec::Vec;

use nvgpu::gsp::status::NvStatus;
use nvgpu::hal::Family;
use nvgpu::rm::fifo::{
    self as f, NvB0b5AllocationParameters, NvChannelAllocParams, NvChannelGroupAllocationParameters,
    NvVaspaceAllocationParameters, ADDR_FBMEM, ADDR_SYSMEM, FERMI_VASPACE_A, KEPLER_CHANNEL_GROUP_A,
};

use zerocopy::FromBytes;

use super::objects::Objects;
use super::payloads::NV01_DEVICE_0;
use crate::engine_mem::{PhysAddr, PhysAperture};
use crate::host::HostChannel;

/// A VA space and the page directory the client bound to it.
#[derive(Clone, Debug)]
pub struct VaSpace {
    pub client: u32,
    pub handle: u32,
    /// The root page directory, once bound.
    pub pdb: Option<PhysAddr>,
    pub big_page_size: u32,
    /// Allocated with `NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING`: its contexts take
    /// replayable faults.
    pub page_faulting: bool,
}

/// A channel group.
#[derive(Clone, Debug)]
pub struct ChannelGroup {
    pub client: u32,
    pub handle: u32,
    pub vaspace: u32,
    pub engine_type: u32,
}

/// A GPFIFO channel.
#[derive(Debug)]
pub struct Channel {
    pub client: u32,
    pub handle: u32,
    pub group: u32,
    pub vaspace: u32,
    pub class: u32,
    pub engine_type: u32,
    pub runlist: u32,
    pub instance: PhysAddr,
    pub error_notifier: Option<PhysAddr>,
    pub bound: bool,
    pub scheduled: bool,
    /// The robust-channel error (Xid) that stopped the channel.
    pub error: Option<u32>,
    /// Stopped at a semaphore acquire: runs again whenever other work happens.
    pub blocked: bool,
    /// Stopped at a launch stalled on replayable faults: runs again after a replay.
    pub fault_stalled: bool,
    /// A replay came since the channel stalled.
    pub replay_released: bool,
    pub host: HostChannel,
    pub engines: crate::engines::ChannelEngines,
}

impl Channel {
    pub fn chid(&self) -> u32 {
        self.host.chid
    }

    pub fn token(&self) -> u32 {
        f::work_submit_token(self.runlist, self.host.chid)
    }

    /// Whether the GPU should run the channel again without a doorbell: blocked on a semaphore,
    /// or released from a fault stall by a replay.
    pub fn runnable(&self) -> bool {
        self.error.is_none() && (self.blocked || (self.fault_stalled && self.replay_released))
    }

    /// (client, handle): how the GPU finds the channel again.
    pub fn handle_key(&self) -> (u32, u32) {
        (self.client, self.handle)
    }
}

/// An engine object on a channel.
#[derive(Clone, Debug)]
pub struct EngineObject {
    pub client: u32,
    pub handle: u32,
    pub channel: u32,
    pub class: u32,
}

/// The FIFO side of GSP-RM's objects.
#[derive(Debug, Default)]
pub struct Fifo {
    pub vaspaces: Vec<VaSpace>,
    pub groups: Vec<ChannelGroup>,
    pub channels: Vec<Channel>,
    pub engine_objects: Vec<EngineObject>,
}

/// The family's classes (`class_list` in [`super::server`] reports the same).
pub fn family_classes(family: Family) -> crate::silicon::Classes {
    crate::silicon::of(family).classes
}

/// Copy engines the model has (`NV2080_ENGINE_TYPE_COPY0..`).
pub const MODEL_COPY_ENGINES: u32 = 2;

fn is_engine_type(engine_type: u32) -> bool {
    engine_type == f::NV2080_ENGINE_TYPE_GRAPHICS
        || (f::NV2080_ENGINE_TYPE_COPY0..f::NV2080_ENGINE_TYPE_COPY0 + MODEL_COPY_ENGINES).contains(&engine_type)
}

fn runlist_of(engine_type: u32) -> u32 {
    if engine_type == f::NV2080_ENGINE_TYPE_GRAPHICS {
        0
    } else {
        1 + engine_type - f::NV2080_ENGINE_TYPE_COPY0
    }
}

fn mem_desc(d: &f::NvMemoryDescParams, align: u64) -> Result<PhysAddr, NvStatus> {
    let aperture = match d.address_space {
        ADDR_SYSMEM => PhysAperture::SystemCoherent,
        ADDR_FBMEM => PhysAperture::Video,
        _ => return Err(NvStatus::NV_ERR_INVALID_ARGUMENT),
    };
    if d.size == 0 || !d.base.is_multiple_of(align) {
        return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
    }
    Ok(PhysAddr { aperture, addr: d.base })
}

impl Fifo {
    /// Whether this module allocates `class` on `family`.
    pub fn handles(family: Family, class: u32) -> bool {
        let c = family_classes(family);
        [FERMI_VASPACE_A, KEPLER_CHANNEL_GROUP_A, c.channel, c.copy, c.compute, c.usermode].contains(&class)
    }

    pub fn channel_by_token(&mut self, token: u32) -> Option<&mut Channel> {
        self.channels.iter_mut().find(|c| c.token() == token)
    }

    pub fn channel(&self, client: u32, handle: u32) -> Option<&Channel> {
        self.channels.iter().find(|c| c.client == client && c.handle == handle)
    }

    pub fn vaspace(&self, client: u32, handle: u32) -> Option<&VaSpace> {
        self.vaspaces.iter().find(|v| v.client == client && v.handle == handle)
    }

    fn next_chid(&self) -> u32 {
        (0..).find(|id| !self.channels.iter().any(|c| c.host.chid == *id)).unwrap_or(0)
    }

    /// Allocates one of this module's classes.
    pub(crate) fn alloc(
        &mut self,
        objects: &mut Objects,
        family: Family,
        (client, parent, handle, class): (u32, u32, u32, u32),
        params: &[u8],
    ) -> NvStatus {
        match self.try_alloc(objects, family, (client, parent, handle, class), params) {
            Ok(()) => NvStatus::NV_OK,
            Err(status) => status,
        }
    }

    fn try_alloc(
        &mut self,
        objects: &mut Objects,
        family: Family,
        (client, parent, handle, class): (u32, u32, u32, u32),
        params: &[u8],
    ) -> Result<(), NvStatus> {
        let classes = family_classes(family);
        let parent_class = objects.check_new_child(client, parent, handle)?;
        let need_parent =
            |wanted: u32| if parent_class == wanted { Ok(()) } else { Err(NvStatus::NV_ERR_INVALID_OBJECT_PARENT) };
        if class == FERMI_VASPACE_A {
            need_parent(NV01_DEVICE_0)?;
            let p = NvVaspaceAllocationParameters::read_from_bytes(params)
                .map_err(|_| NvStatus::NV_ERR_INVALID_PARAM_STRUCT)?;
            if p.index != f::NV_VASPACE_ALLOCATION_INDEX_GPU_NEW {
                return Err(NvStatus::NV_ERR_NOT_SUPPORTED);
            }
            let big = if p.big_page_size == 0 { f::NV_VASPACE_BIG_PAGE_SIZE_64K } else { p.big_page_size };
            if big != f::NV_VASPACE_BIG_PAGE_SIZE_64K {
                // Turing and later have 64 KiB big pages only.
                return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
            }
            let page_faulting = p.flags & f::NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING != 0;
            self.vaspaces.push(VaSpace { client, handle, pdb: None, big_page_size: big, page_faulting });
        } else if class == KEPLER_CHANNEL_GROUP_A {
            need_parent(NV01_DEVICE_0)?;
            let p = NvChannelGroupAllocationParameters::read_from_bytes(params)
                .map_err(|_| NvStatus::NV_ERR_INVALID_PARAM_STRUCT)?;
            if self.vaspace(client, p.h_va_space).is_none() {
                return Err(NvStatus::NV_ERR_INVALID_OBJECT_HANDLE);
            }
            if !is_engine_type(p.engine_type) {
                return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
            }
            self.groups.push(ChannelGroup { client, handle, vaspace: p.h_va_space, engine_type: p.engine_type });
        } else if class == classes.channel {
            need_parent(KEPLER_CHANNEL_GROUP_A)?;
            let p = NvChannelAllocParams::read_from_bytes(params).map_err(|_| NvStatus::NV_ERR_INVALID_PARAM_STRUCT)?;
            let group = self
                .groups
                .iter()
                .find(|g| g.client == client && g.handle == parent)
                .cloned()
                .ok_or(NvStatus::NV_ERR_INVALID_OBJECT_PARENT)?;
            if p.h_va_space != 0 && p.h_va_space != group.vaspace {
                return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
            }
            if p.engine_type != 0 && p.engine_type != group.engine_type {
                return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
            }
            let entries = p.gp_fifo_entries;
            if entries < 2 || !entries.is_power_of_two() || entries > 1 << 20 || p.gp_fifo_offset % 8 != 0 {
                return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
            }
            use nvgpu::hw::host::{NV_RAMIN_ALLOC_SIZE, NV_RAMUSERD_BASE_SHIFT};
            let instance = mem_desc(&p.instance_mem, NV_RAMIN_ALLOC_SIZE.into())?;
            let userd = mem_desc(&p.userd_mem, 1 << NV_RAMUSERD_BASE_SHIFT)?;
            if p.userd_mem.size < nvgpu::hw::host::USERD_SIZE {
                return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
            }
            let error_notifier =
                if p.error_notifier_mem.size == 0 { None } else { Some(mem_desc(&p.error_notifier_mem, 16)?) };
            let chid = self.next_chid();
            self.channels.push(Channel {
                client,
                handle,
                group: parent,
                vaspace: group.vaspace,
                class,
                engine_type: group.engine_type,
                runlist: runlist_of(group.engine_type),
                instance,
                error_notifier,
                bound: false,
                scheduled: false,
                error: None,
                blocked: false,
                fault_stalled: false,
                replay_released: false,
                host: HostChannel::new(chid, p.gp_fifo_offset, entries, userd),
                engines: crate::engines::ChannelEngines::new(family, classes.copy, classes.compute),
            });
        } else if class == classes.copy || class == classes.compute {
            let channel = self.channel(client, parent).ok_or(NvStatus::NV_ERR_INVALID_OBJECT_PARENT)?;
            if class == classes.copy {
                let p = NvB0b5AllocationParameters::read_from_bytes(params)
                    .map_err(|_| NvStatus::NV_ERR_INVALID_PARAM_STRUCT)?;
                if p.version != f::NVB0B5_ALLOCATION_PARAMETERS_VERSION_1 || p.engine_type != channel.engine_type {
                    return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
                }
            } else if channel.engine_type != f::NV2080_ENGINE_TYPE_GRAPHICS {
                return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
            }
            self.engine_objects.push(EngineObject { client, handle, channel: parent, class });
        } else if class == classes.usermode {
            need_parent(NV01_DEVICE_0).or_else(|_| need_parent(super::payloads::NV20_SUBDEVICE_0))?;
        } else {
            return Err(NvStatus::NV_ERR_INVALID_CLASS);
        }
        objects.insert(client, parent, handle, class);
        Ok(())
    }

    /// Drops the records of objects `objects` no longer has (after a free).
    pub(crate) fn retain_existing(&mut self, objects: &Objects) {
        let live = |client: u32, handle: u32| objects.find(client, handle).is_some();
        self.vaspaces.retain(|v| live(v.client, v.handle));
        self.groups.retain(|g| live(g.client, g.handle));
        self.channels.retain(|c| live(c.client, c.handle));
        self.engine_objects.retain(|e| live(e.client, e.handle));
    }

    /// The controls of this module; `None` for a control it does not own.
    pub fn control(
        &mut self,
        family: Family,
        client: u32,
        object: u32,
        object_class: u32,
        cmd: u32,
        params: &mut [u8],
    ) -> Option<NvStatus> {
        let classes = family_classes(family);
        Some(match (cmd, object_class) {
            (f::NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY, NV01_DEVICE_0) => {
                let Ok(p) = f::Nv0080CtrlDmaSetPageDirectoryParams::read_from_bytes(params) else {
                    return Some(NvStatus::NV_ERR_INVALID_PARAM_STRUCT);
                };
                let aperture = match p.flags & 3 {
                    f::SET_PAGE_DIRECTORY_APERTURE_VIDMEM => PhysAperture::Video,
                    f::SET_PAGE_DIRECTORY_APERTURE_SYSMEM_COH => PhysAperture::SystemCoherent,
                    f::SET_PAGE_DIRECTORY_APERTURE_SYSMEM_NONCOH => PhysAperture::SystemNonCoherent,
                    _ => return Some(NvStatus::NV_ERR_INVALID_ARGUMENT),
                };
                let Some(vas) = self.vaspaces.iter_mut().find(|v| v.client == client && v.handle == p.h_va_space)
                else {
                    return Some(NvStatus::NV_ERR_INVALID_OBJECT_HANDLE);
                };
                let _ = object;
                if p.phys_address % 4096 != 0 || p.num_entries == 0 {
                    return Some(NvStatus::NV_ERR_INVALID_ARGUMENT);
                }
                vas.pdb = Some(PhysAddr { aperture, addr: p.phys_address });
                NvStatus::NV_OK
            }
            (f::NVA06F_CTRL_CMD_BIND, c) if c == classes.channel => {
                let Ok(p) = f::NvA06fCtrlBindParams::read_from_bytes(params) else {
                    return Some(NvStatus::NV_ERR_INVALID_PARAM_STRUCT);
                };
                let Some(ch) = self.channels.iter_mut().find(|c| c.client == client && c.handle == object) else {
                    return Some(NvStatus::NV_ERR_INVALID_OBJECT_HANDLE);
                };
                if p.engine_type != ch.engine_type {
                    return Some(NvStatus::NV_ERR_INVALID_ARGUMENT);
                }
                ch.bound = true;
                NvStatus::NV_OK
            }
            (f::NVA06F_CTRL_CMD_GPFIFO_SCHEDULE, c) if c == classes.channel => {
                let Ok(p) = f::NvA06fCtrlGpfifoScheduleParams::read_from_bytes(params) else {
                    return Some(NvStatus::NV_ERR_INVALID_PARAM_STRUCT);
                };
                let pdb_bound = |vaspace: u32| self.vaspace(client, vaspace).is_some_and(|v| v.pdb.is_some());
                let Some(ch) = self.channels.iter().find(|c| c.client == client && c.handle == object) else {
                    return Some(NvStatus::NV_ERR_INVALID_OBJECT_HANDLE);
                };
                if p.b_enable > 1 || p.b_skip_submit > 1 {
                    return Some(NvStatus::NV_ERR_INVALID_ARGUMENT);
                }
                if p.b_enable == 1 && (!ch.bound || !pdb_bound(ch.vaspace)) {
                    // RM refuses to schedule a channel with no engine or no page directory.
                    return Some(NvStatus::NV_ERR_INVALID_STATE);
                }
                let enable = p.b_enable == 1;
                if let Some(ch) = self.channels.iter_mut().find(|c| c.client == client && c.handle == object) {
                    ch.scheduled = enable;
                }
                NvStatus::NV_OK
            }
            (f::NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, c) if c == classes.channel => {
                let Some(ch) = self.channel(client, object) else {
                    return Some(NvStatus::NV_ERR_INVALID_OBJECT_HANDLE);
                };
                if params.len() != 4 {
                    return Some(NvStatus::NV_ERR_INVALID_PARAM_STRUCT);
                }
                params.copy_from_slice(&ch.token().to_le_bytes());
                NvStatus::NV_OK
            }
            _ => return None,
        })
    }
}
