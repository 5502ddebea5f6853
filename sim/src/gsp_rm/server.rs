//! GSP-RM's RPC server: what each command does and what it answers.
//!
//! | function | before `GSP_INIT_DONE` | after | reply |
//! |---|---|---|---|
//! | `GSP_SET_SYSTEM_INFO` (72) | first command; exactly `sizeof(GspSystemInfo)` (672) bytes, every `NvBool` 0 or 1 | out of order | none (RM sends it asynchronously) |
//! | `SET_REGISTRY` (73) | after system info, before init; `PACKED_REGISTRY_TABLE` with `size` = the bytes sent, entries, names (NUL-terminated, inside the table) and data inside it, types DWORD (length 4), BINARY, STRING | out of order | none (asynchronous) |
//! | `GET_GSP_STATIC_INFO` (65) | out of order | parameters of `sizeof(GspStaticConfigInfo)` (2168) | `GspStaticConfigInfo` filled from the model's board |
//! | `GSP_RM_ALLOC` (103) | out of order | [`super::objects`] | the request with `status` set |
//! | `GSP_RM_CONTROL` (76) | out of order | `NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2` on a device, `NV2080_CTRL_CMD_GPU_GET_INFO_V2` on a subdevice | the request with `status` and the output parameters |
//! | `FREE` (10) | out of order | [`super::objects`] | the request with `status` set |
//! | `UNLOADING_GUEST_DRIVER` (47) | out of order | 8 bytes | the request; then GSP-RM stops |
//! | `NOP` (0) | out of order | | the request, `NV_OK` |
//! | anything else | out of order | `NV_ERR_NOT_SUPPORTED` (recorded) | the request |
//!
//! A reply is the request's RPC header with `rpc_result` and `rpc_result_private` set to the
//! status, and its own length; where the parameters carry a `status` (alloc, control, free), it
//! holds the same status (RM's CPU side reads either: `rpcRmApiAlloc_GSP` takes `rpc_result`,
//! `rpcRmApiControl_GSP` the parameters' status). "Out of order" is recorded
//! ([`GspRmError::OutOfOrder`]) and answered with `NV_ERR_INVALID_STATE` (the asynchronous boot
//! RPCs get no answer). Control and allocation parameters sent FINN-serialised
//! (`RMAPI_RPC_FLAGS_SERIALIZED`) are `NV_ERR_NOT_SUPPORTED`.

use alloc::vec::Vec;

use crate::board::PciPlacement;
use nvgpu::gsp::fw::msgq::GSP_MSG_QUEUE_RPC_SIZE_MAX;
use nvgpu::gsp::fw::rpc::{RpcFunction, RpcMessageHeader, NV_VGPU_MSG_RESULT_RPC_PENDING, NV_VGPU_MSG_UNION_INIT};
use nvgpu::gsp::status::NvStatus;
use nvgpu::hal::Family;
use nvgpu::rm::intr::NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE;

use crate::compute::{model_max_warps_per_sm, MODEL_TPC_MASK_PER_GPC};
use zerocopy::{FromBytes, IntoBytes};

use super::error::GspRmError;
use super::log::{rpc_name, LogArg, LogTask, Msg};
use super::objects::{INTERNAL_CLIENT, INTERNAL_DEVICE, INTERNAL_SUBDEVICE};
use super::payloads::*;
use super::queue::Command;
use super::{GspCtx, GspRm, Init, Partial, RegistryEntry, RegistryValue, Session, State};
use crate::error::ModelError;

/// Takes one command off the queue (fatal errors come back as `Err`).
pub(crate) fn handle(rm: &mut GspRm, command: Command, ctx: &mut GspCtx<'_>) -> Result<(), GspRmError> {
    let State::Running(session) = &mut rm.state else { return Ok(()) };
    let Command { header, params } = command;
    let continuation = RpcFunction::ContinuationRecord.raw();
    check_request_header(&header)?;

    let (header, params) = if header.function == continuation {
        let Some(mut partial) = session.partial.take() else {
            return Err(GspRmError::Continuation { what: "no message to continue", function: header.function });
        };
        partial.params.extend_from_slice(&params);
        if partial.params.len() < partial.needed {
            session.partial = Some(partial);
            return Ok(());
        }
        (partial.header, partial.params)
    } else {
        if let Some(partial) = &session.partial {
            return Err(GspRmError::Continuation {
                what: "message interrupted before its continuation records",
                function: partial.header.function,
            });
        }
        let full = header.length == GSP_MSG_QUEUE_RPC_SIZE_MAX;
        match announced_size(header.function, &params) {
            Some(needed) if full && needed > params.len() => {
                session.partial = Some(Partial { header, params, needed });
                return Ok(());
            }
            _ => (header, params),
        }
    };
    dispatch(rm, header, params, ctx);
    Ok(())
}

fn check_request_header(header: &RpcMessageHeader) -> Result<(), GspRmError> {
    let bad = |what, value| Err(GspRmError::RequestHeader { what, value });
    if header.rpc_result != NV_VGPU_MSG_RESULT_RPC_PENDING {
        return bad("rpc_result is not NV_VGPU_MSG_RESULT_RPC_PENDING", header.rpc_result);
    }
    if header.rpc_result_private != NV_VGPU_MSG_RESULT_RPC_PENDING {
        return bad("rpc_result_private is not NV_VGPU_MSG_RESULT_RPC_PENDING", header.rpc_result_private);
    }
    if header.u != NV_VGPU_MSG_UNION_INIT {
        return bad("u (cpuRmGfid) is not 0 on bare metal", header.u);
    }
    Ok(())
}

fn word(bytes: &[u8], at: usize) -> Option<u32> {
    bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The size a message's own fields announce, for those that may span continuation records.
fn announced_size(function: u32, params: &[u8]) -> Option<usize> {
    match RpcFunction::from_raw(function)? {
        RpcFunction::SetRegistry => word(params, 0).map(|s| s as usize),
        RpcFunction::GspRmAlloc => word(params, 20).map(|s| 32 + s as usize),
        RpcFunction::GspRmControl => word(params, 16).map(|s| 24 + s as usize),
        _ => None,
    }
}

fn record(ctx: &mut GspCtx<'_>, error: GspRmError) {
    ctx.log.record(ModelError::GspRm(error));
}

fn dispatch(rm: &mut GspRm, header: RpcMessageHeader, params: Vec<u8>, ctx: &mut GspCtx<'_>) {
    let function = header.function;
    let decoded = RpcFunction::from_raw(function);
    let boot_rpc = matches!(decoded, Some(RpcFunction::GspSetSystemInfo | RpcFunction::SetRegistry));

    if rm.faults.drop_commands {
        rm.logs.log(LogTask::Rm, Msg::RpcDropped, &[LogArg::Str(rpc_name(function)), function.into()]);
        return;
    }
    if let (Some(status), false) = (rm.faults.fail_status, boot_rpc) {
        let payload = with_status(decoded, &params, status);
        reply(rm, header, status, &payload);
        return;
    }

    let State::Running(session) = &mut rm.state else { return };
    let init = session.init;
    if boot_rpc {
        rm.logs.log(LogTask::Rm, Msg::BootRpc, &[LogArg::Str(rpc_name(function)), (params.len() as u64).into()]);
    }
    match decoded {
        Some(RpcFunction::GspSetSystemInfo) => {
            if init != Init::AwaitSystemInfo {
                record(ctx, GspRmError::OutOfOrder { function, what: "nothing: system information arrived already" });
                return;
            }
            if let Err(error) = check_system_info(function, &params, &ctx.config.placement) {
                record(ctx, error);
                session.init_status = NvStatus::NV_ERR_INVALID_ARGUMENT;
            }
            session.init = Init::SystemInfoSeen;
        }
        Some(RpcFunction::SetRegistry) => {
            if init != Init::SystemInfoSeen {
                record(
                    ctx,
                    GspRmError::OutOfOrder { function, what: "SET_REGISTRY only right after GSP_SET_SYSTEM_INFO" },
                );
                return;
            }
            match parse_registry(function, &params) {
                Ok(entries) => rm.registry = entries,
                Err(error) => {
                    record(ctx, error);
                    session.init_status = NvStatus::NV_ERR_INVALID_ARGUMENT;
                }
            }
        }
        _ if init != Init::Done => {
            record(ctx, GspRmError::OutOfOrder { function, what: "GSP_INIT_DONE first" });
            let payload = with_status(decoded, &params, NvStatus::NV_ERR_INVALID_STATE);
            reply(rm, header, NvStatus::NV_ERR_INVALID_STATE, &payload);
        }
        Some(RpcFunction::Nop) => reply(rm, header, NvStatus::NV_OK, &params),
        Some(RpcFunction::GetGspStaticInfo) => {
            if params.len() != GSP_STATIC_CONFIG_INFO_SIZE {
                record(
                    ctx,
                    GspRmError::BadParams {
                        function,
                        what: "not sizeof(GspStaticConfigInfo)",
                        value: params.len() as u64,
                    },
                );
                reply(rm, header, NvStatus::NV_ERR_INVALID_PARAM_STRUCT, &params);
                return;
            }
            let info = static_info(session, ctx);
            reply(rm, header, NvStatus::NV_OK, &info);
        }
        Some(RpcFunction::GspRmAlloc) => {
            let (status, payload) = alloc(session, function, &params, ctx);
            reply(rm, header, status, &payload);
        }
        Some(RpcFunction::GspRmControl) => {
            let (status, payload) = control(session, function, &params, ctx);
            reply(rm, header, status, &payload);
        }
        Some(RpcFunction::Free) => {
            let (status, payload) = free(session, function, &params, ctx);
            reply(rm, header, status, &payload);
        }
        Some(RpcFunction::UnloadingGuestDriver) => {
            if params.len() != core::mem::size_of::<RpcUnloadingGuestDriverV1F07>() {
                record(ctx, GspRmError::BadParams { function, what: "not 8 bytes", value: params.len() as u64 });
                reply(rm, header, NvStatus::NV_ERR_INVALID_PARAM_STRUCT, &params);
                return;
            }
            reply(rm, header, NvStatus::NV_OK, &params);
            match RpcUnloadingGuestDriverV1F07::read_from_bytes(&params) {
                Ok(p) => rm.unloading_guest_driver(&p, ctx),
                Err(_) => rm.unload(ctx),
            }
        }
        _ => {
            record(
                ctx,
                GspRmError::BadParams { function, what: "RPC function not implemented by the model", value: 0 },
            );
            reply(rm, header, NvStatus::NV_ERR_NOT_SUPPORTED, &params);
        }
    }
}

/// The request's parameters with their status field (if any) set to `status`.
fn with_status(function: Option<RpcFunction>, params: &[u8], status: NvStatus) -> Vec<u8> {
    let mut out = params.to_vec();
    let at = match function {
        Some(RpcFunction::GspRmAlloc) => Some(16),
        Some(RpcFunction::GspRmControl) => Some(12),
        Some(RpcFunction::Free) => Some(12),
        _ => None,
    };
    if let Some(slot) = at.and_then(|at| out.get_mut(at..at + 4)) {
        slot.copy_from_slice(&status.raw().to_le_bytes());
    }
    out
}

fn reply(rm: &mut GspRm, request: RpcMessageHeader, status: NvStatus, payload: &[u8]) {
    let function = request.function;
    let name = LogArg::Str(rpc_name(function));
    rm.logs.log(LogTask::Rm, Msg::RpcAnswered, &[name, function.into(), status.raw().into()]);
    let corrupt = &mut rm.faults.corrupt_next;
    let State::Running(session) = &mut rm.state else { return };
    let header = RpcMessageHeader { rpc_result: status.raw(), rpc_result_private: status.raw(), ..request };
    session.post(header, payload, corrupt);
}

// ---------------------------------------------------------------------------------------------
// Boot RPCs.

fn check_system_info(function: u32, params: &[u8], placement: &PciPlacement) -> Result<(), GspRmError> {
    let Ok(info) = GspSystemInfo::read_from_bytes(params) else {
        return Err(GspRmError::BadParams {
            function,
            what: "not sizeof(GspSystemInfo) (672)",
            value: params.len() as u64,
        });
    };
    // Where the GPU is: RM on the CPU reads it from the PCI core (`rpcGspSetSystemInfo_v17_00`:
    // `gpuPhysAddr` = BAR0, `gpuPhysFbAddr` = BAR1, `gpuPhysInstAddr` = BAR2/3,
    // `nvDomainBusDeviceFunc` = `gpuEncodeDomainBusDevice`: domain << 32 | bus << 8 | device << 3
    // | function). GSP-RM programs its BAR1/BAR2 views and reports its PCI location from these.
    let bdf = (u64::from(placement.segment) << 32)
        | (u64::from(placement.bus) << 8)
        | (u64::from(placement.device & 0x1f) << 3)
        | u64::from(placement.function & 7);
    let places = [
        ("GspSystemInfo.gpuPhysAddr is not the GPU's BAR0", info.gpu_phys_addr, placement.bar0),
        ("GspSystemInfo.gpuPhysFbAddr is not the GPU's BAR1", info.gpu_phys_fb_addr, placement.bar1),
        ("GspSystemInfo.gpuPhysInstAddr is not the GPU's BAR2", info.gpu_phys_inst_addr, placement.bar2),
        ("GspSystemInfo.nvDomainBusDeviceFunc is not the GPU's PCI location", info.nv_domain_bus_device_func, bdf),
    ];
    if let Some(&(what, sent, _)) = places.iter().find(|(_, sent, want)| sent != want) {
        return Err(GspRmError::BadParams { function, what, value: sent });
    }
    let bools = [
        ("GspSystemInfo.bGpuBehindBridge is not 0 or 1", info.b_gpu_behind_bridge),
        ("GspSystemInfo.bMnocAvailable is not 0 or 1", info.b_mnoc_available),
        ("GspSystemInfo.bUpstreamL0sUnsupported is not 0 or 1", info.b_upstream_l0s_unsupported),
        ("GspSystemInfo.bUpstreamL1Unsupported is not 0 or 1", info.b_upstream_l1_unsupported),
        ("GspSystemInfo.bUpstreamL1PorSupported is not 0 or 1", info.b_upstream_l1_por_supported),
        ("GspSystemInfo.bUpstreamL1PorMobileOnly is not 0 or 1", info.b_upstream_l1_por_mobile_only),
        ("GspSystemInfo.bIsPassthru is not 0 or 1", info.b_is_passthru),
        ("GspSystemInfo.gspVFInfo.b64bitBar0 is not 0 or 1", info.gsp_vf_info.b_64bit_bar0),
        ("GspSystemInfo.gspVFInfo.b64bitBar1 is not 0 or 1", info.gsp_vf_info.b_64bit_bar1),
        ("GspSystemInfo.gspVFInfo.b64bitBar2 is not 0 or 1", info.gsp_vf_info.b_64bit_bar2),
        ("GspSystemInfo.bTdrEventSupported is not 0 or 1", info.b_tdr_event_supported),
    ];
    match bools.iter().find(|(_, value)| *value > 1) {
        Some(&(what, value)) => Err(GspRmError::BadParams { function, what, value: value.into() }),
        None => Ok(()),
    }
}

fn parse_registry(function: u32, params: &[u8]) -> Result<Vec<RegistryEntry>, GspRmError> {
    let bad = |what, value: u64| GspRmError::BadParams { function, what, value };
    let (table, _) =
        PackedRegistryTable::read_from_prefix(params).map_err(|_| bad("shorter than PACKED_REGISTRY_TABLE", 0))?;
    let size = table.size as usize;
    if size != params.len() {
        return Err(bad("PACKED_REGISTRY_TABLE.size is not the bytes sent", table.size.into()));
    }
    let entries_end = 8usize
        .checked_add((table.num_entries as usize).saturating_mul(16))
        .filter(|&end| end <= size)
        .ok_or(bad("numEntries does not fit in the table", table.num_entries.into()))?;
    let mut out = Vec::new();
    for index in 0..table.num_entries as usize {
        let at = 8 + index * 16;
        let entry = PackedRegistryEntry::read_from_bytes(&params[at..at + 16])
            .map_err(|_| bad("entry unreadable", at as u64))?;
        let name_at = entry.name_offset as usize;
        if name_at < entries_end || name_at >= size {
            return Err(bad("nameOffset outside the string area", entry.name_offset.into()));
        }
        let name_len =
            params[name_at..].iter().position(|&b| b == 0).ok_or(bad("name not NUL-terminated", name_at as u64))?;
        let name = core::str::from_utf8(&params[name_at..name_at + name_len])
            .ok()
            .filter(|n| !n.is_empty() && n.is_ascii())
            .ok_or(bad("name empty or not ASCII", name_at as u64))?;
        let data = |len: u32| -> Result<Vec<u8>, GspRmError> {
            let start = entry.data as usize;
            let end = start.checked_add(len as usize).filter(|&e| start >= entries_end && e <= size);
            end.map(|end| params[start..end].to_vec()).ok_or(bad("data outside the table", entry.data.into()))
        };
        let value = match entry.type_ {
            REGISTRY_TABLE_ENTRY_TYPE_DWORD => {
                if entry.length != 4 {
                    return Err(bad("DWORD entry length is not 4", entry.length.into()));
                }
                RegistryValue::Dword(entry.data)
            }
            REGISTRY_TABLE_ENTRY_TYPE_BINARY => RegistryValue::Binary(data(entry.length)?),
            REGISTRY_TABLE_ENTRY_TYPE_STRING => RegistryValue::String(data(entry.length)?),
            other => return Err(bad("unknown entry type", other.into())),
        };
        out.push(RegistryEntry { name: name.into(), value });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// GET_GSP_STATIC_INFO.

fn put32(out: &mut [u8], at: usize, value: u32) {
    out[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// The model's answer: the GPU UUID (binary, 16 bytes, derived from the chip and board ids), one
/// framebuffer region (all of FB below `gspFwRsvdStart`, compressible, ISO-capable), FB size and
/// RAM type, the engines (GR0 and copy engines 0-2 in `engineCaps`), the board's names, the
/// VBIOS's subsystem ids, compute branding on 3D-controller boards, and GSP-RM's internal client
/// handles, and `bar1PdeBase`, the BAR1 root page directory it keeps in its reserved memory
/// (`GspRm::bar1_pdb`), the GPC/TPC masks and warps per SM. The rest stays zero: the model has no SKU, ZCULL or
/// display-less data to report, and no BAR2 (`bar2PdeBase` 0).
fn static_info(session: &Session, ctx: &GspCtx<'_>) -> Vec<u8> {
    use super::payloads::rm_engine_type::{RM_ENGINE_TYPE_COPY0, RM_ENGINE_TYPE_GR0};
    let config = ctx.config;
    let mut info = GspStaticConfigInfo::zeroed();

    info.gid_info.index = 0;
    info.gid_info.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY;
    info.gid_info.length = RM_SHA1_GID_SIZE;
    let seed = [
        config.boot42().to_le_bytes(),
        (u32::from(config.pci.device_id) << 16 | u32::from(config.pci.subsystem_id)).to_le_bytes(),
    ]
    .concat();
    let uuid_lo = crate::booter::fnv1a64(&seed);
    let uuid_hi = crate::booter::fnv1a64(&uuid_lo.to_le_bytes());
    info.gid_info.data[..8].copy_from_slice(&uuid_lo.to_le_bytes());
    info.gid_info.data[8..16].copy_from_slice(&uuid_hi.to_le_bytes());
    info.gpc_info.gpc_mask = 0x3F;
    // The model's shader array: 6 GPCs of 2 TPCs (24 SMs), and the resident warps per SM of
    // the family (CUDA C++ Programming Guide, "maximum number of resident warps per SM": 32 on
    // 7.5, 64 on 8.0, 9.0 and 10.0, 48 on 8.6, 8.9 and 12.0).
    for (gpc, tpc) in info.tpc_info.iter_mut().enumerate().take(6) {
        tpc.gpc_id = gpc as u32;
        tpc.tpc_mask = MODEL_TPC_MASK_PER_GPC;
    }
    info.sm_info.max_warps_per_sm = model_max_warps_per_sm(config.chipset.family());
    info.sm_info.max_threads_per_warp = 32;

    let fb_end = if session.meta.gsp_fw_rsvd_start != 0 { session.meta.gsp_fw_rsvd_start } else { config.vram_bytes };
    info.fb_region_info_params.num_fb_regions = 1;
    info.fb_region_info_params.fb_region[0] = FbRegionInfo {
        base: 0,
        limit: fb_end.saturating_sub(1),
        support_compressed: 1,
        support_iso: 1,
        ..FbRegionInfo::default()
    };
    if config.pci.class == nvgpu::hw::boot::PCI_CLASS_DISPLAY_3D {
        info.compute_branding = nvgpu::gsp::commands::COMPUTE_BRANDING_TYPE_TESLA;
        info.b_is_tesla = 1;
    }
    for engine in [RM_ENGINE_TYPE_GR0, RM_ENGINE_TYPE_COPY0, RM_ENGINE_TYPE_COPY0 + 1, RM_ENGINE_TYPE_COPY0 + 2] {
        info.engine_caps[(engine / 32) as usize] |= 1 << (engine % 32);
    }

    info.fb_length = config.vram_bytes;
    info.fbio_mask = 0xFFF;
    info.fb_bus_width = 384;
    let hbm = crate::silicon::of(config.chipset.family()).hbm;
    info.fb_ram_type = if hbm { NV2080_CTRL_FB_INFO_RAM_TYPE_HBM2 } else { NV2080_CTRL_FB_INFO_RAM_TYPE_GDDR6 };
    info.fbp_mask = 0xFFF;
    info.l2_cache_size = 6 << 20;

    let mut name: Vec<u8> = match config.board_name {
        Some(board) => board.as_bytes().to_vec(),
        None => [b"NVIDIA ".as_slice(), config.chipset.name().as_bytes()].concat(),
    };
    name.truncate(NV2080_GPU_MAX_NAME_STRING_LENGTH - 1);
    info.gpu_name_string[..name.len()].copy_from_slice(&name);
    let short = config.chipset.name().as_bytes();
    info.gpu_short_name_string[..short.len()].copy_from_slice(short);
    for (slot, &c) in info.gpu_name_string_unicode.iter_mut().zip(&name) {
        *slot = c.into();
    }

    info.b_vbios_valid = 1;
    info.vbios_sub_vendor = config.pci.subsystem_vendor_id.into();
    info.vbios_sub_device = config.pci.subsystem_id.into();
    info.bar1_pde_base = session.bar1_pdb();
    info.h_internal_client = INTERNAL_CLIENT;
    info.h_internal_device = INTERNAL_DEVICE;
    info.h_internal_subdevice = INTERNAL_SUBDEVICE;
    info.as_bytes().to_vec()
}

// ---------------------------------------------------------------------------------------------
// Objects.

fn alloc(session: &mut Session, function: u32, params: &[u8], ctx: &mut GspCtx<'_>) -> (NvStatus, Vec<u8>) {
    let Ok((request, rest)) = RpcGspRmAllocV03_00::read_from_prefix(params) else {
        record(
            ctx,
            GspRmError::BadParams {
                function,
                what: "shorter than rpc_gsp_rm_alloc_v03_00",
                value: params.len() as u64,
            },
        );
        return (NvStatus::NV_ERR_INVALID_PARAM_STRUCT, params.to_vec());
    };
    let status = if request.params_size as usize != rest.len() {
        record(
            ctx,
            GspRmError::BadParams {
                function,
                what: "paramsSize is not the bytes sent",
                value: request.params_size.into(),
            },
        );
        NvStatus::NV_ERR_INVALID_PARAM_STRUCT
    } else if request.flags & RMAPI_RPC_FLAGS_SERIALIZED != 0 {
        NvStatus::NV_ERR_NOT_SUPPORTED
    } else {
        let family = ctx.config.chipset.family();
        if super::fifo::Fifo::handles(family, request.h_class) {
            let key = (request.h_client, request.h_parent, request.h_object, request.h_class);
            session.fifo.alloc(&mut session.objects, family, key, rest)
        } else {
            session.objects.alloc(request.h_client, request.h_parent, request.h_object, request.h_class, rest)
        }
    };
    (status, with_status(Some(RpcFunction::GspRmAlloc), params, status))
}

fn free(session: &mut Session, function: u32, params: &[u8], ctx: &mut GspCtx<'_>) -> (NvStatus, Vec<u8>) {
    let Ok(request) = RpcFreeV03_00::read_from_bytes(params) else {
        record(
            ctx,
            GspRmError::BadParams { function, what: "not sizeof(rpc_free_v03_00)", value: params.len() as u64 },
        );
        return (NvStatus::NV_ERR_INVALID_PARAM_STRUCT, params.to_vec());
    };
    let status = session.objects.free(request.params.h_root, request.params.h_object_old);
    session.fifo.retain_existing(&session.objects);
    if !session.objects.live().any(|o| o.class == nvgpu::hw::fault::MMU_FAULT_BUFFER) {
        // Freeing the MMU_FAULT_BUFFER object disables the replayable buffer.
        ctx.fault_buffer.disable();
    }
    (status, with_status(Some(RpcFunction::Free), params, status))
}

/// `NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER`: physical RM programs the replayable
/// buffer over the pages RM's CPU side allocated, for a live `MMU_FAULT_BUFFER` object. The
/// model's buffer is addressed physically from its first page, so the pages must be
/// contiguous (`NV_ERR_NOT_SUPPORTED` otherwise); the buffer is in coherent system memory.
fn register_fault_buffer(
    objects: &super::objects::Objects,
    params: &[u8],
    ctx: &mut GspCtx<'_>,
) -> Result<(), NvStatus> {
    use nvgpu::rm::gmmu::{
        Nv2080CtrlInternalGmmuRegisterFaultBufferParams as Params, FAULT_BUFFER_PAGE_BYTES,
        NV2080_CTRL_INTERNAL_GMMU_FAULT_BUFFER_MAX_PAGES as MAX_PAGES,
    };
    let p = Params::read_from_bytes(params).map_err(|_| NvStatus::NV_ERR_INVALID_PARAM_STRUCT)?;
    if objects.find(p.h_client, p.h_object).map(|o| o.class) != Some(nvgpu::hw::fault::MMU_FAULT_BUFFER) {
        return Err(NvStatus::NV_ERR_INVALID_OBJECT_HANDLE);
    }
    let entry = nvgpu::hw::fault::NVC369_BUF_SIZE as u32;
    let pages = u64::from(p.fault_buffer_size).div_ceil(FAULT_BUFFER_PAGE_BYTES) as usize;
    if p.fault_buffer_size == 0 || p.fault_buffer_size % entry != 0 || pages > MAX_PAGES {
        return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
    }
    let base = p.fault_buffer_pte_array[0];
    if base % FAULT_BUFFER_PAGE_BYTES != 0 {
        return Err(NvStatus::NV_ERR_INVALID_ARGUMENT);
    }
    let contiguous = p.fault_buffer_pte_array[..pages]
        .iter()
        .enumerate()
        .all(|(i, &a)| a == base + i as u64 * FAULT_BUFFER_PAGE_BYTES);
    if !contiguous {
        return Err(NvStatus::NV_ERR_NOT_SUPPORTED);
    }
    let at = crate::engine_mem::PhysAddr { aperture: crate::engine_mem::PhysAperture::SystemCoherent, addr: base };
    ctx.fault_buffer.program(at, p.fault_buffer_size / entry).map_err(|_| NvStatus::NV_ERR_INVALID_ARGUMENT)
}

/// The classes a device reports (`NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2`): the subdevice and the
/// family's channel, copy, compute and usermode classes ([`crate::silicon::Silicon::classes`]).
pub fn class_list(family: Family) -> Vec<u32> {
    let c = crate::silicon::of(family).classes;
    alloc::vec![NV01_DEVICE_0, NV20_SUBDEVICE_0, c.channel, c.copy, c.compute, c.usermode]
}

fn control(session: &mut Session, function: u32, params: &[u8], ctx: &mut GspCtx<'_>) -> (NvStatus, Vec<u8>) {
    let Ok((request, rest)) = RpcGspRmControlV03_00::read_from_prefix(params) else {
        record(
            ctx,
            GspRmError::BadParams {
                function,
                what: "shorter than rpc_gsp_rm_control_v03_00",
                value: params.len() as u64,
            },
        );
        return (NvStatus::NV_ERR_INVALID_PARAM_STRUCT, params.to_vec());
    };
    let mut payload = params.to_vec();
    let fixed = core::mem::size_of::<RpcGspRmControlV03_00>();
    let status = 'status: {
        if request.params_size as usize != rest.len() {
            record(
                ctx,
                GspRmError::BadParams {
                    function,
                    what: "paramsSize is not the bytes sent",
                    value: request.params_size.into(),
                },
            );
            break 'status NvStatus::NV_ERR_INVALID_PARAM_STRUCT;
        }
        if request.flags & RMAPI_RPC_FLAGS_SERIALIZED != 0 {
            break 'status NvStatus::NV_ERR_NOT_SUPPORTED;
        }
        if session.objects.find(request.h_client, request.h_client).is_none() {
            break 'status NvStatus::NV_ERR_INVALID_CLIENT;
        }
        let Some(object) = session.objects.find(request.h_client, request.h_object).copied() else {
            break 'status NvStatus::NV_ERR_INVALID_OBJECT_HANDLE;
        };
        let out = &mut payload[fixed..];
        match (request.cmd, object.class) {
            (NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, NV01_DEVICE_0) => {
                if request.params_size != NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS_SIZE {
                    break 'status NvStatus::NV_ERR_INVALID_PARAM_STRUCT;
                }
                let list = class_list(ctx.config.chipset.family());
                out.fill(0);
                put32(out, 0, list.len() as u32);
                for (i, class) in list.iter().enumerate() {
                    put32(out, 4 + 4 * i, *class);
                }
                NvStatus::NV_OK
            }
            (NV2080_CTRL_CMD_GPU_GET_INFO_V2, NV20_SUBDEVICE_0) => {
                if request.params_size != NV2080_CTRL_GPU_GET_INFO_V2_PARAMS_SIZE {
                    break 'status NvStatus::NV_ERR_INVALID_PARAM_STRUCT;
                }
                let count = word(out, 0).unwrap_or(0) as usize;
                if count > NV2080_CTRL_GPU_INFO_MAX_LIST_SIZE {
                    break 'status NvStatus::NV_ERR_INVALID_ARGUMENT;
                }
                for i in 0..count {
                    let at = 4 + 8 * i;
                    let index = word(out, at).unwrap_or(u32::MAX);
                    let Some(data) = gpu_info(ctx, index) else { break 'status NvStatus::NV_ERR_INVALID_ARGUMENT };
                    put32(out, at + 4, data);
                }
                NvStatus::NV_OK
            }
            (NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE, NV20_SUBDEVICE_0) => {
                // RMCTRL_FLAGS_INTERNAL (flags 0x600 in g_subdevice_nvoc.c): RM runs it only for
                // RM itself, here its internal client; anyone else gets NV_ERR_NOT_SUPPORTED
                // (rmControlCmdExecute, control.c).
                if request.h_client != INTERNAL_CLIENT {
                    break 'status NvStatus::NV_ERR_NOT_SUPPORTED;
                }
                let table = crate::intr::kernel_table(super::fifo::MODEL_COPY_ENGINES);
                if out.len() != table.as_bytes().len() {
                    break 'status NvStatus::NV_ERR_INVALID_PARAM_STRUCT;
                }
                out.copy_from_slice(table.as_bytes());
                NvStatus::NV_OK
            }
            (nvgpu::rm::gmmu::NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER, NV20_SUBDEVICE_0) => {
                if request.h_client != INTERNAL_CLIENT {
                    break 'status NvStatus::NV_ERR_NOT_SUPPORTED;
                }
                match register_fault_buffer(&session.objects, out, ctx) {
                    Ok(()) => NvStatus::NV_OK,
                    Err(status) => status,
                }
            }
            (cmd, class) => {
                let family = ctx.config.chipset.family();
                match session.fifo.control(family, request.h_client, request.h_object, class, cmd, out) {
                    Some(status) => status,
                    None => NvStatus::NV_ERR_NOT_SUPPORTED,
                }
            }
        }
    };
    if let Some(slot) = payload.get_mut(12..16) {
        slot.copy_from_slice(&status.raw().to_le_bytes());
    }
    if status != NvStatus::NV_OK && request.flags & RMAPI_RPC_FLAGS_COPYOUT_ON_ERROR == 0 {
        // Parameters are not copied out on error: send back what came in.
        payload[fixed..].copy_from_slice(&params[fixed..]);
    }
    (status, payload)
}

/// `NV2080_CTRL_GPU_INFO_INDEX_*` the model answers.
fn gpu_info(ctx: &GspCtx<'_>, index: u32) -> Option<u32> {
    let config = ctx.config;
    Some(match index {
        NV2080_CTRL_GPU_INFO_INDEX_MINOR_REVISION_EXT => config.revision.minor_extended.unwrap_or(0).into(),
        NV2080_CTRL_GPU_INFO_INDEX_SYSMEM_ACCESS => 1,
        NV2080_CTRL_GPU_INFO_INDEX_4K_PAGE_ISOLATION_REQUIRED => 0,
        NV2080_CTRL_GPU_INFO_INDEX_DISPLAY_ENABLED => {
            u32::from(config.pci.class == nvgpu::hw::boot::PCI_CLASS_DISPLAY_VGA)
        }
        NV2080_CTRL_GPU_INFO_INDEX_MOBILE_CONFIG_ENABLED => 0,
        NV2080_CTRL_GPU_INFO_INDEX_GPU_SMC_MODE => 0,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_tables_are_checked() {
        // One DWORD entry "RMFoo" = 7: header 8, entry 16, name at 24.
        let mut table = Vec::new();
        table.extend_from_slice(&30u32.to_le_bytes());
        table.extend_from_slice(&1u32.to_le_bytes());
        table.extend_from_slice(
            PackedRegistryEntry { name_offset: 24, type_: 1, _padding: [0; 3], data: 7, length: 4 }.as_bytes(),
        );
        table.extend_from_slice(b"RMFoo\0");
        let entries = parse_registry(73, &table).unwrap();
        assert_eq!(entries, alloc::vec![RegistryEntry { name: "RMFoo".into(), value: RegistryValue::Dword(7) }]);
        let mut bad = table.clone();
        bad[0] = 31;
        assert!(parse_registry(73, &bad).is_err());
        let mut bad = table.clone();
        bad[8] = 4; // name inside the entry array
        assert!(parse_registry(73, &bad).is_err());
        let mut bad = table.clone();
        bad[29] = b'x'; // no NUL
        assert!(parse_registry(73, &bad).is_err());
    }

    #[test]
    fn class_lists_fit() {
        for s in crate::silicon::ALL {
            assert!(class_list(s.family).len() <= NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE);
        }
    }
}
