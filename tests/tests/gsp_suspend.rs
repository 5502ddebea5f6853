//! GSP suspend and resume (`nvgpu::gsp::boot::suspend`, `nvgpu::gsp::fw::sr_meta`) on the GPU model
//! (`sim::gsp_rm::suspend`) with the real 535.261.03 firmware (Debian's GSP-RM, the booters
//! extracted from NVIDIA's source), and `GspFwSRMeta` checked against NVIDIA's header by the C
//! compiler.
//!
//! Missing real data is a failure, never a skip: run `sudo scripts/fetch-real-data.sh` first.

use std::collections::HashMap;
use std::ffi::OsString;

use nvgpu::gsp::boot::booter::BooterError;
use nvgpu::gsp::boot::suspend::{PmTransition, SuspendError};
use nvgpu::gsp::boot::{BootErrorKind, BootStep};
use nvgpu::gsp::fw::sr_meta::{GspFwSRMeta, SR_META_CONSTANTS, SR_META_LAYOUT};
use nvgpu::hw::headers::OGKM_PINNED;
use nvgpu::rm::RmClient;
use sim::gsp_rm::payloads::{NV2080_CTRL_CMD_GPU_GET_INFO_V2, NV2080_CTRL_GPU_GET_INFO_V2_PARAMS_SIZE};
use sim::{GspRmStatus, ModelConfig, ModelError};
use tests::model_boot::{with_booted_strict as with_booted, ModelClock};
use tests::rm_c::{compile_and_run, data_root};

fn get_info_params() -> Vec<u8> {
    vec![0u8; NV2080_CTRL_GPU_GET_INFO_V2_PARAMS_SIZE as usize]
}

#[test]
fn suspend_and_resume_keep_rm_objects_on_ga102_and_ad102() {
    for config in [ModelConfig::rtx3090(), ModelConfig::rtx4090()] {
        let chip = config.chipset;
        with_booted(config, |model, _, _, boot| {
            let rpc = boot.rpc().expect("rpc");
            let mut client = RmClient::new(rpc, 0).expect("client");
            let device = client.alloc_device(rpc, &Default::default()).expect("device");
            let subdevice = client.alloc_subdevice(rpc, device, &Default::default()).expect("subdevice");
            let mut params = get_info_params();
            client.control(rpc, subdevice, NV2080_CTRL_CMD_GPU_GET_INFO_V2, &mut params).expect("control before");
            let objects_before = model.gsp_rm_objects();
            let wpr2_before = model.wpr2().expect("WPR2 up");

            // Suspend: GSP-RM suspended, WPR2 down, GSP halted.
            let report = boot.suspend(PmTransition::Standby).unwrap_or_else(|e| panic!("{e}\n{:?}", model.errors()));
            eprintln!("{chip:?} suspend:\n{report}");
            let steps: Vec<BootStep> = report.steps.iter().map(|s| s.step).collect();
            assert_eq!(
                steps,
                [BootStep::UnloadGuestDriver, BootStep::FwsecSb, BootStep::SaveSrData, BootStep::BooterUnload]
            );
            assert_eq!(model.wpr2(), None, "{chip:?}: WPR2 down");
            assert_eq!(model.gsp_rm_status(), GspRmStatus::PmSuspended);
            assert!(boot.is_suspended());
            let sr = boot.sr_data().expect("SR data");
            assert_eq!(sr.meta_in_memory(), Some(sr.meta));
            assert_eq!(sr.meta.size_of_suspend_resume_data, wpr2_before.1 + 1 - wpr2_before.0);
            let gsp = nvgpu::falcon::Falcon::<_, _, nvgpu::falcon::Gsp>::new(
                model,
                ModelClock::default(),
                nvgpu::hal::for_chipset(chip),
            )
            .expect("GSP falcon");
            assert!(!gsp.is_riscv_active(), "{chip:?}: GSP halted");
            // FWSEC-SB ran (SB error code NONE): no warnings, no model errors.
            assert!(report.warnings.is_empty(), "{chip:?}: {:?}", report.warnings);
            assert_eq!(model.take_errors(), Vec::new(), "{chip:?}");

            // Resume: WPR2 back, INIT_DONE, the same objects; the subdevice answers.
            let report = boot.resume().unwrap_or_else(|e| panic!("{e}\n{:?}", model.errors()));
            eprintln!("{chip:?} resume:\n{report}");
            assert_eq!(report.booter_load.map(|b| b.mailboxes.mailbox0), Some(0));
            assert_eq!(model.wpr2(), Some(wpr2_before));
            assert_eq!(model.gsp_rm_status(), GspRmStatus::Running { init_done: true });
            assert!(!boot.is_suspended());
            assert_eq!(model.gsp_rm_objects(), objects_before);
            let rpc = boot.rpc().expect("rpc");
            let mut params = get_info_params();
            client.control(rpc, subdevice, NV2080_CTRL_CMD_GPU_GET_INFO_V2, &mut params).expect("control after resume");
            assert_eq!(model.errors(), vec![], "{chip:?}");

            // A plain unload still works afterwards.
            boot.unload().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(model.wpr2(), None);
        });
    }
}

#[test]
fn resume_without_suspend_is_a_typed_error() {
    for config in [ModelConfig::rtx3090(), ModelConfig::rtx4090()] {
        with_booted(config, |model, _, _, boot| {
            let err = boot.resume().unwrap_err();
            assert_eq!(err.step, BootStep::ResumeInitArgs);
            assert_eq!(err.kind, BootErrorKind::Suspend(SuspendError::NotSuspended));
            assert!(err.to_string().contains("resume without a suspend"), "{err}");
            assert_eq!(model.gsp_rm_status(), GspRmStatus::Running { init_done: true });
            boot.suspend(PmTransition::Hibernate).expect("suspend");
            let err = boot.suspend(PmTransition::Hibernate).unwrap_err();
            assert_eq!(err.kind, BootErrorKind::Suspend(SuspendError::AlreadySuspended));
        });
    }
}

#[test]
fn a_corrupted_sr_meta_fails_resume_with_a_typed_error() {
    for config in [ModelConfig::rtx3090(), ModelConfig::rtx4090()] {
        let chip = config.chipset;
        with_booted(config, |model, _, _, boot| {
            boot.suspend(PmTransition::Standby).unwrap_or_else(|e| panic!("{e}"));
            // The revision (bytes 8..16) changed behind the driver's back.
            let sr = boot.sr_data_mut().expect("SR data");
            let mut byte = [0u8];
            sr.meta_page.read(8, &mut byte).unwrap();
            sr.meta_page.write(8, &[byte[0] ^ 0x07]).unwrap();
            let err = boot.resume().unwrap_err();
            assert_eq!(err.step, BootStep::BooterLoad);
            match &err.kind {
                BootErrorKind::Booter(BooterError::Failed { mailbox0, .. }) => {
                    assert_eq!(*mailbox0, sim::BooterError::Sr { what: "", value: 0 }.mailbox0(), "{chip:?}")
                }
                other => panic!("{chip:?}: {other:?}"),
            }
            let errors = model.take_errors();
            assert!(
                errors.iter().any(|e| matches!(
                    e,
                    ModelError::Booter(sim::BooterError::Sr { what: "GspFwSRMeta revision", value: 5 })
                )),
                "{chip:?}: {errors:?}"
            );
            assert_eq!(model.wpr2(), None, "WPR2 stays down");
            assert!(!boot.is_suspended(), "the SR data went, as kgspFreeSuspendResumeData does");
        });
    }
}

// ---------------------------------------------------------------------------------------------
// GspFwSRMeta against gsp_fw_sr_meta.h.

#[test]
fn sr_meta_layout_matches_nvidias_header() {
    let tree = data_root().join(format!("open-gpu-kernel-modules-{OGKM_PINNED}"));
    let header = tree.join(SR_META_LAYOUT.header.path);
    assert!(header.is_file(), "missing real data {}: run `sudo scripts/fetch-real-data.sh`", header.display());
    let mut c = String::from("#include <stdio.h>\n#include <stddef.h>\n#include \"nvtypes.h\"\n#include \"gsp_fw_sr_meta.h\"\nint main(void) {\n");
    c += "printf(\"size %zu\\n\", sizeof(GspFwSRMeta));\nprintf(\"align %zu\\n\", _Alignof(GspFwSRMeta));\n";
    for field in SR_META_LAYOUT.fields {
        let n = field.c_name;
        c += &format!("printf(\"{n} %zu %zu\\n\", offsetof(GspFwSRMeta, {n}), sizeof(((GspFwSRMeta*)0)->{n}));\n");
    }
    for constant in SR_META_CONSTANTS {
        let n = constant.c_name;
        c += &format!("printf(\"{n} %llu\\n\", (unsigned long long)({n}));\n");
    }
    c += "return 0;\n}\n";
    let flags: Vec<OsString> =
        vec!["-I".into(), tree.join("src/common/sdk/nvidia/inc").into(), "-I".into(), header.parent().unwrap().into()];
    let text = compile_and_run("sr_meta", &c, &flags);
    let got: HashMap<&str, Vec<u64>> = text
        .lines()
        .map(|l| {
            let mut it = l.split_whitespace();
            (it.next().unwrap(), it.map(|v| v.parse().unwrap()).collect())
        })
        .collect();
    assert_eq!(got["size"], [SR_META_LAYOUT.size as u64]);
    assert_eq!(got["align"], [SR_META_LAYOUT.align as u64]);
    for field in SR_META_LAYOUT.fields {
        assert_eq!(got[field.c_name], [field.offset as u64, field.size as u64], "{}", field.c_name);
    }
    for constant in SR_META_CONSTANTS {
        assert_eq!(got[constant.c_name], [constant.value], "{}", constant.c_name);
    }
    assert_eq!(std::mem::size_of::<GspFwSRMeta>(), 256);
}
