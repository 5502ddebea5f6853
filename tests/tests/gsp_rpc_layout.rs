//! The GSP RPC payloads, RM object parameters, status codes and constants of `nvgpu::gsp::commands`,
//! `nvgpu::rm`, `nvgpu::gsp::status` and `nvgpu::gsp::cmdq`, checked against NVIDIA's own
//! headers by the C compiler.
//!
//! Like `gsp_layout.rs`, the test writes a C file that includes NVIDIA's headers from the
//! unpacked open-gpu-kernel-modules 535.261.03 tree with RM's own flags (`src/nvidia/Makefile`),
//! prints `sizeof`/`_Alignof` of every struct of `commands::STRUCT_LAYOUTS` and
//! `rm::STRUCT_LAYOUTS`, `offsetof`/`sizeof` of each field (only `offsetof` for flexible array
//! members), the value of every constant, expression and `NV_STATUS` code, compiles it with the
//! machine's `cc` into `target/tmp/`, runs it and compares. It also checks that every name is
//! defined in the header cited for it, that `NvStatus` declares every code of
//! `nvstatuscodes.h` with its description, and that the RM code the queue, RPC, sequencer and RM
//! object logic follow still reads as followed.
//!
//! Missing data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root) first.
//! `NVGPU_REAL_DATA` overrides the data directory; `CC` the compiler.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::OnceLock;

use nvgpu::gsp::commands;
use nvgpu::gsp::status::NvStatus;
use nvgpu::hw::headers::{self, OGKM_PINNED};
use nvgpu::hw::layout::{ConstantFact, StructLayout};
use nvgpu::hw::Header;
use nvgpu::rm::{self as rm, fifo as rm_fifo, gmmu as rm_gmmu, intr as rm_intr};
use tests::rm_c::{function_body, read_source as read, require_tree as tree, rm_flags, squash, try_compile_and_run};

// ---------------------------------------------------------------------------------------------
// What is checked.

fn struct_layouts() -> Vec<&'static StructLayout> {
    commands::STRUCT_LAYOUTS
        .iter()
        .chain(rm::STRUCT_LAYOUTS)
        .chain(rm_fifo::STRUCT_LAYOUTS)
        .chain(rm_intr::STRUCT_LAYOUTS)
        .chain(rm_gmmu::STRUCT_LAYOUTS)
        .collect()
}

fn constants() -> Vec<&'static ConstantFact> {
    commands::CONSTANTS
        .iter()
        .chain(rm::CONSTANTS)
        .chain(rm_fifo::CONSTANTS)
        .chain(rm_intr::CONSTANTS)
        .chain(rm_gmmu::CONSTANTS)
        .collect()
}

/// Every file the crate cites from the pinned release (`hw::headers` is their one home): the
/// structure and constant headers above, and the RM sources `rm_sources_read_as_followed` reads.
fn cited_headers() -> Vec<Header> {
    headers::ALL.iter().copied().filter(|h| h.release == OGKM_PINNED).collect()
}

// ---------------------------------------------------------------------------------------------
// What the C program includes (RM's flags, data root and compile-and-run: `tests::rm_c`).

/// The includes: the RPC structures under the switches RM's `rpc.c` and `kernel_gsp.c` use, then
/// the headers that define the rest.
const PRELUDE: &str = r#"
#include "core/core.h"
#include "core/thread_state.h"
#include "os/os.h"
#include "vgpu/rpc_headers.h"
#include "gpu/mem_mgr/virt_mem_allocator_common.h"
#define RPC_STRUCTURES
#define RPC_GENERIC_UNION
#include "g_rpc-structures.h"
#undef RPC_STRUCTURES
#undef RPC_GENERIC_UNION
#define RPC_MESSAGE_STRUCTURES
#define RPC_MESSAGE_GENERIC_UNION
#include "g_rpc-message-header.h"
#undef RPC_MESSAGE_STRUCTURES
#undef RPC_MESSAGE_GENERIC_UNION
#include "gpu/gsp/message_queue.h"
#include "gpu/gsp/message_queue_priv.h"
#include "gpu/gsp/gsp_static_config.h"
#include "gpu/gpu_timeout.h"
#include "rmgspseq.h"
#include "objrpc.h"
#include "rmapi/rmapi.h"
#include "resserv/resserv.h"
#include "resserv/rs_client.h"
#include "class/cl0000.h"
#include "class/cl0080.h"
#include "class/cl2080.h"
#include "nvlimits.h"
#include "nvstatus.h"
#include "nvos.h"
#include "nvgputypes.h"
#include "nverror.h"
#include "gpu/mem_mgr/mem_desc.h"
#include "alloc/alloc_channel.h"
#include "class/cl90f1.h"
#include "class/cla06c.h"
#include "class/clb0b5sw.h"
#include "class/clc361.h"
#include "class/clc46f.h"
#include "class/cl2080_notification.h"
#include "ctrl/ctrl0080/ctrl0080dma.h"
#include "ctrl/ctrla06f/ctrla06fgpfifo.h"
#include "ctrl/ctrlc36f.h"
#include "published/turing/tu102/dev_ctrl.h"
#include "ctrl/ctrl2080/ctrl2080internal.h"
#include "gpu/intr/engine_idx.h"
#include "dev_ctrl_defines.h"
#include "published/turing/tu102/dev_vm.h"
#include "published/turing/tu102/dev_vm_addendum.h"
#include <stdio.h>
#include <stddef.h>
"#;

fn c_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn expressions() -> Vec<(String, u64)> {
    let mut all: Vec<(String, u64)> = constants().iter().map(|c| (c.c_name.to_owned(), c.value)).collect();
    all.extend(commands::expression_checks().into_iter().map(|(e, v)| (e.to_owned(), v)));
    all.extend(rm_fifo::expression_checks().into_iter().map(|(e, v)| (e.to_owned(), v)));
    all.extend(rm_intr::expression_checks().into_iter().map(|(e, v)| (e.to_owned(), v)));
    all
}

fn build_program() -> String {
    let mut main = String::from("int main(void)\n{\n");
    for s in struct_layouts() {
        let t = s.c_name;
        writeln!(main, "    printf(\"S %s %zu %zu\\n\", {}, sizeof({t}), _Alignof({t}));", c_string(t)).unwrap();
        for f in s.fields {
            if f.size == 0 {
                writeln!(
                    main,
                    "    printf(\"X %s %s %zu\\n\", {}, {}, offsetof({t}, {}));",
                    c_string(t),
                    c_string(f.c_name),
                    f.c_name
                )
                .unwrap();
            } else {
                writeln!(
                    main,
                    "    printf(\"F %s %s %zu %zu\\n\", {}, {}, offsetof({t}, {}), sizeof((({t} *)0)->{}));",
                    c_string(t),
                    c_string(f.c_name),
                    f.c_name,
                    f.c_name
                )
                .unwrap();
            }
        }
    }
    for (expr, _) in expressions() {
        writeln!(main, "    printf(\"V %s %llu\\n\", {}, (unsigned long long)({expr}));", c_string(&expr)).unwrap();
    }
    for status in NvStatus::ALL_KNOWN {
        let name = status.name().unwrap();
        writeln!(main, "    printf(\"V %s %llu\\n\", {}, (unsigned long long)({name}));", c_string(name)).unwrap();
    }
    main.push_str("    return 0;\n}\n");
    format!("{PRELUDE}\n{main}")
}

#[derive(Default, Debug)]
struct Report {
    structs: HashMap<String, (u64, u64)>,
    fields: HashMap<(String, String), (u64, Option<u64>)>,
    values: HashMap<String, u64>,
}

fn run_program(tree: &Path, program: &str) -> Result<Report, String> {
    let stdout = try_compile_and_run("gsp_rpc_layout", program, &rm_flags(tree))?;
    let mut report = Report::default();
    for line in stdout.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        let num = |s: &str| s.parse::<u64>().map_err(|e| format!("bad number in `{line}`: {e}"));
        match parts.as_slice() {
            ["S", name, size, align] => {
                report.structs.insert(name.to_string(), (num(size)?, num(align)?));
            }
            ["F", s, f, offset, size] => {
                report.fields.insert((s.to_string(), f.to_string()), (num(offset)?, Some(num(size)?)));
            }
            ["X", s, f, offset] => {
                report.fields.insert((s.to_string(), f.to_string()), (num(offset)?, None));
            }
            ["V", rest @ ..] if rest.len() >= 2 => {
                let (value, name) = rest.split_last().unwrap();
                report.values.insert(name.join(" "), num(value)?);
            }
            _ => return Err(format!("unexpected line from the C program: `{line}`")),
        }
    }
    Ok(report)
}

/// The C program, compiled and run once for all tests of this file.
fn report() -> &'static Report {
    static REPORT: OnceLock<Result<Report, String>> = OnceLock::new();
    let result = REPORT.get_or_init(|| {
        let tree = std::panic::catch_unwind(tree)
            .map_err(|e| e.downcast_ref::<String>().cloned().unwrap_or_else(|| "missing NVIDIA sources".into()))?;
        run_program(&tree, &build_program())
    });
    match result {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Source text helpers.

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `text` defines `name`: `#define NAME`, an enumerator `NAME = ...` / `NAME,`, or a
/// typedef closing `} NAME;`.
fn defines(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = &text[..at];
        let after = &text[at + name.len()..];
        if before.ends_with(is_ident) || after.starts_with(is_ident) {
            return false;
        }
        let line = &before[before.rfind('\n').map_or(0, |n| n + 1)..];
        let after = after.trim_start_matches([' ', '\t']);
        line.trim() == "#define"
            || (line.trim().is_empty() && (after.starts_with('=') || after.starts_with(',')))
            || (line.trim_end().ends_with('}') && after.starts_with(';'))
    })
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[test]
fn payload_layouts_match_nvidia_headers() {
    let report = report();
    let mut problems = String::new();
    let mut fields = 0;
    let layouts = struct_layouts();
    for s in &layouts {
        match report.structs.get(s.c_name) {
            Some(&(size, align)) if (size, align) == (s.size as u64, s.align as u64) => {}
            Some(&(size, align)) => writeln!(
                problems,
                "{} ({}): C sizeof {size} align {align}, Rust {} {}",
                s.c_name, s.rust_name, s.size, s.align
            )
            .unwrap(),
            None => writeln!(problems, "{}: not reported by the C program", s.c_name).unwrap(),
        }
        for f in s.fields {
            fields += 1;
            let key = (s.c_name.to_owned(), f.c_name.to_owned());
            let expected = (f.offset as u64, (f.size != 0).then_some(f.size as u64));
            match report.fields.get(&key) {
                Some(found) if *found == expected => {}
                Some((offset, size)) => writeln!(
                    problems,
                    "{}.{}: C offset {offset} size {size:?}, Rust offset {} size {}",
                    s.c_name, f.c_name, f.offset, f.size
                )
                .unwrap(),
                None => writeln!(problems, "{}.{}: not reported", s.c_name, f.c_name).unwrap(),
            }
        }
    }
    assert!(problems.is_empty(), "layouts differ from NVIDIA's headers:\n{problems}");
    assert!(layouts.len() >= 30 && fields >= 200, "{} structs, {fields} fields checked", layouts.len());
}

#[test]
fn constants_match_nvidia_headers() {
    let report = report();
    let mut problems = String::new();
    for (name, ours) in expressions() {
        match report.values.get(&name) {
            Some(theirs) if *theirs == ours => {}
            Some(theirs) => writeln!(problems, "{name}: NVIDIA {theirs:#x}, ours {ours:#x}").unwrap(),
            None => writeln!(problems, "{name}: not reported").unwrap(),
        }
    }
    assert!(problems.is_empty(), "constants differ from NVIDIA's headers:\n{problems}");
}

#[test]
fn status_codes_match_nvstatuscodes_h() {
    let report = report();
    let mut problems = String::new();
    for status in NvStatus::ALL_KNOWN {
        let name = status.name().unwrap();
        match report.values.get(name) {
            Some(&theirs) if theirs == status.raw() as u64 => {}
            other => writeln!(problems, "{name}: NVIDIA {other:?}, ours {:#x}", status.raw()).unwrap(),
        }
    }
    // Every code of the header is declared, with the header's description.
    let text = read(&tree(), headers::NVSTATUSCODES.path);
    let mut codes = 0;
    for line in text.lines().filter(|l| l.starts_with("NV_STATUS_CODE(")) {
        codes += 1;
        let inner = &line["NV_STATUS_CODE(".len()..];
        let name = inner.split(',').next().unwrap().trim();
        let description = inner.split('"').nth(1).unwrap_or("");
        match NvStatus::ALL_KNOWN.iter().find(|s| s.name() == Some(name)) {
            Some(s) if s.description() == Some(description) => {}
            Some(s) => writeln!(problems, "{name}: description {:?}, header {description:?}", s.description()).unwrap(),
            None => writeln!(problems, "{name} is not declared in NvStatus").unwrap(),
        }
    }
    assert_eq!(codes, NvStatus::ALL_KNOWN.len(), "NvStatus declares codes the header does not have");
    assert!(problems.is_empty(), "NV_STATUS differs from nvstatuscodes.h:\n{problems}");
}

/// Each structure and constant is found in the header it cites.
#[test]
fn citations_name_the_defining_header() {
    let tree = tree();
    let mut problems = String::new();
    for h in cited_headers() {
        assert_eq!(h.release, OGKM_PINNED);
        if !tree.join(h.path).is_file() {
            writeln!(problems, "cited file missing: {}", h.path).unwrap();
        }
    }
    for s in struct_layouts() {
        if !read(&tree, s.header.path).contains(&format!(" {};", s.c_name)) {
            writeln!(problems, "{} is not defined in {}", s.c_name, s.header.path).unwrap();
        }
    }
    for c in constants() {
        if !defines(&read(&tree, c.header.path), c.c_name) {
            writeln!(problems, "{} is not defined in {}", c.c_name, c.header.path).unwrap();
        }
    }
    assert!(problems.is_empty(), "{problems}");
}

/// The RM code the queue, RPC, sequencer and RM-object logic follow still reads as assumed (the
/// behaviour these snippets describe is in no header the C program could print).
#[test]
fn rm_sources_read_as_followed() {
    let tree = tree();
    let anchors: &[(&Header, &str, &[&str])] = &[
        (
            &headers::MESSAGE_QUEUE_CPU,
            "GspMsgQueueSendCommand",
            &[
                "gpuSetTimeout(pGpu, 1000000, &timeout, timeoutFlags);",
                "pNextElement = (NvU8 *)msgqTxGetWriteBuffer(pMQI->hQueue, i);",
                "portAtomicMemoryFenceStore();",
                "nRet = msgqTxSubmitBuffers(pMQI->hQueue, pCQE->elemCount);",
                "pMQI->txSeqNum++;",
            ],
        ),
        (
            &headers::MESSAGE_QUEUE_CPU,
            "GspMsgQueueReceiveStatus",
            &[
                "NvU32 nMaxRetries = 3;",
                "nElements = pMQI->pCmdQueueElement->elemCount;",
                "if (pMQI->pCmdQueueElement->seqNum != pMQI->rxSeqNum)",
                "pMQI->rxSeqNum++;",
                "nRet = msgqRxMarkConsumed(pMQI->hQueue, nElements);",
            ],
        ),
        (&headers::MESSAGE_QUEUE_CPU, "GspStatusQueueInit", &["NvU32 timeoutUs = 4000000;"]),
        (
            &headers::MSGQ_C,
            "msgqRxLink",
            &[
                "pQueue->pReadOutgoing = &pQueue->pOurRxHdr->readPtr;",
                "pQueue->pReadIncoming = &pQueue->pTheirRxHdr->readPtr;",
                "pQueue->rxReadPtr = 0;",
            ],
        ),
        (
            &headers::MSGQ_C,
            "msgqTxCreate",
            &["pQueue->txFree = pQueue->tx.msgCount - 1;"],
        ),
        (
            &headers::MSGQ_C,
            "msgqTxGetFreeSpace",
            &["pQueue->txFree = pQueue->txReadPtr + pQueue->tx.msgCount - pQueue->tx.writePtr - 1;"],
        ),
        (
            &headers::MSGQ_C,
            "msgqRxGetReadAvailable",
            &[
                "if (pQueue->rx.writePtr >= pQueue->rx.msgCount)",
                "pQueue->rxAvail = pQueue->rx.writePtr + pQueue->rx.msgCount - pQueue->rxReadPtr;",
            ],
        ),
        (
            &headers::RPC_C,
            "_issueRpcLarge",
            &[
                "entryLength = NV_MIN(bufSize, pRpc->maxRpcSize);",
                "entryLength = pRpc->maxRpcSize - sizeof(rpc_message_header_v);",
                "vgpu_rpc_message_header_v->length = entryLength + sizeof(rpc_message_header_v);",
                "vgpu_rpc_message_header_v->function = NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD;",
                "nvStatus = rpcRecvPoll(pGpu, pRpc, NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD);",
            ],
        ),
        (
            &headers::RPC_C,
            "_issueRpcAndWait",
            &["if (vgpu_rpc_message_header_v->rpc_result != NV_VGPU_MSG_RESULT_SUCCESS)"],
        ),
        (
            &headers::RPC_C,
            "rpcRmApiAlloc_GSP",
            &[
                "rpc_params->hClient = hClient;",
                "rpc_params->hParent = hParent;",
                "rpc_params->hObject = hObject;",
                "rpc_params->hClass = hClass;",
                "rpc_params->flags = RMAPI_RPC_FLAGS_NONE;",
                "rpc_params->paramsSize = paramsSize;",
                "paramsSize = sizeof(NV0000_ALLOC_PARAMETERS);",
            ],
        ),
        (
            &headers::RPC_C,
            "rpcRmApiControl_GSP",
            &[
                "rpc_params->cmd = cmd;",
                "rpc_params->paramsSize = paramsSize;",
                "rpc_params->flags = RMAPI_RPC_FLAGS_NONE;",
            ],
        ),
        (
            &headers::RPC_C,
            "rpcRmApiFree_GSP",
            &[
                "rpc_params->hRoot = hClient;",
                "rpc_params->hObjectParent = NV01_NULL_OBJECT;",
                "rpc_params->hObjectOld = hObject;",
            ],
        ),
        (
            &headers::RPC_C,
            "rpcGspSetSystemInfo_v17_00",
            &[
                "GspSystemInfo *rpcInfo = (GspSystemInfo *)&rpc_message->gsp_set_system_info_v17_00.data;",
                "status = _issueRpcAsync(pGpu, pRpc);",
            ],
        ),
        (
            &headers::RPC_C,
            "rpcGetGspStaticInfo_v14_00",
            &[
                "GspStaticConfigInfo *rpcInfo = (GspStaticConfigInfo *)&rpc_message->get_gsp_static_info_v14_00.data;",
                "sizeof(GspStaticConfigInfo));",
            ],
        ),
        (
            &headers::RPC_C,
            "rpcUnloadingGuestDriver_v1F_07",
            &["rpc_message->unloading_guest_driver_v1F_07.newLevel = newPMLevel;"],
        ),
        (
            &headers::REGISTRY_C,
            "regCopyEntriesToPackedBuffer",
            &[
                "pEntry->nameOffset = dataOffset;",
                "pEntry->length = sizeof(NvU32);",
                "pEntry->data = pRegEntry->data;",
                "pEntry->data = dataOffset;",
            ],
        ),
        (
            &headers::KERNEL_GSP_C,
            "_kgspConstructRpcObject",
            &["pRpc->maxRpcSize = GSP_MSG_QUEUE_RPC_SIZE_MAX;"],
        ),
        (
            &headers::KERNEL_GSP_C,
            "_kgspRpcSendMessage",
            &["kgspSetCmdQueueHead_HAL(pGpu, pKernelGsp, pRpc->pMessageQueueInfo->queueIdx, 0);"],
        ),
        (
            &headers::KERNEL_GSP_C,
            "_kgspRpcRecvPoll",
            &["timeoutUs = defaultus + defaultus / 2;"],
        ),
        (
            &headers::KERNEL_GSP_C,
            "_kgspRpcDrainOneEvent",
            &["if (pMsgHdr->function == expectedFunc)", "_kgspProcessRpcEvent(pGpu, pRpc);"],
        ),
        (
            &headers::KERNEL_GSP_C,
            "kgspExecuteSequencerBuffer_IMPL",
            &[
                "NV_ASSERT_OR_RETURN((pParams->bufferSizeDWord != 0), NV_ERR_INVALID_STATE);",
                "NV_ASSERT_OR_RETURN(buffer_end < pParams->bufferSizeDWord, NV_ERR_INVALID_DATA);",
                "NV_ASSERT_OR_RETURN(current_cmd_index + payloadSize <= buffer_end, NV_ERR_INVALID_DATA);",
                "regVal = regVal & ~regModify.mask;",
                "regVal = regVal | regModify.val;",
                "gpuSetTimeout(pGpu, regPoll.timeout, &timeout, 0);",
                "while ((regval & regPoll.mask) != regPoll.val)",
                "osDelayUs(delayUs.val);",
                "NV_ASSERT_OR_RETURN(regStore.index < GSP_SEQ_BUF_REG_SAVE_SIZE, NV_ERR_INVALID_ARGUMENT);",
                "pParams->regSaveArea[regStore.index] = GPU_REG_RD32(pGpu, regStore.addr);",
                "kflcnReset_HAL(pGpu, staticCast(pKernelGsp, KernelFalcon));",
                "kflcnStartCpu_HAL(pGpu, staticCast(pKernelGsp, KernelFalcon));",
                "kflcnWaitForHalt_HAL(pGpu, staticCast(pKernelGsp, KernelFalcon), GPU_TIMEOUT_DEFAULT, 0)",
            ],
        ),
        (
            &headers::KERNEL_GSP_TU102_C,
            "kgspSetCmdQueueHead_TU102",
            &["GPU_REG_WR32(pGpu, NV_PGSP_QUEUE_HEAD(queueIdx), value);"],
        ),
        (
            &headers::KERNEL_GSP_TU102_C,
            "kgspExecuteSequencerCommand_TU102",
            &["case GSP_SEQ_BUF_OPCODE_CORE_RESUME:", "status = NV_ERR_INVALID_ARGUMENT;"],
        ),
        (&headers::GPU_TIMEOUT_C, "timeoutSet", &["if (timeoutUs == GPU_TIMEOUT_DEFAULT)"]),
        (&headers::UNIX_OS_C, "osGetTimeoutParams", &["case NV_GPU_MODE_GRAPHICS_MODE: *pTimeoutUs = 4 * 1000000;"]),
        (
            &headers::RMAPI_UTILS_C,
            "rmapiutilAllocClientAndDeviceHandles",
            &[
                "nv0080AllocParams.hClientShare = hClient;",
                "serverutilGenResourceHandle(hClient, &hDevice),",
                "NV20_SUBDEVICE_0,",
            ],
        ),
        (
            &headers::RS_CLIENT_C,
            "clientSetHandleGenerator_IMPL",
            &[
                "(0xcaf00000, 0xcaf3ffff) and host RM (0xcaf40000, 0xcaf80000).",
                "pClient->handleRangeStart = RS_UNIQUE_HANDLE_BASE;",
            ],
        ),
        (
            &headers::KERNEL_RC_NOTIFICATION_C,
            "krcErrorSetNotifier_IMPL",
            &["0xffff /* notifierStatus */,"],
        ),
        (
            &headers::KERNEL_RC_NOTIFICATION_C,
            "_krcErrorWriteNotifierCpuMemHelper",
            &["notifyFillNotifierMemory(pGpu, pMemory, exceptType, (NvU16)gpuGetNv2080EngineType(localRmEngineType), notifierStatus,"],
        ),
        (
            &headers::RS_CLIENT_C,
            "clientGenResourceHandle_IMPL",
            &["hResource = pClient->handleRangeStart + ((pClient->handleGenIdx++) % pClient->handleRangeSize);"],
        ),
    ];
    let mut problems = String::new();
    for (file, func, snippets) in anchors {
        let body = squash(function_body(&read(&tree, file.path), func));
        for s in *snippets {
            if !body.contains(&squash(s)) {
                writeln!(problems, "{} {func}: no longer contains `{s}`", file.path).unwrap();
            }
        }
    }
    assert!(problems.is_empty(), "RM sources differ from what nvgpu::gsp follows:\n{problems}");
}
