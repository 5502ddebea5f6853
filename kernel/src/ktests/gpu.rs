//! GPU foundation tests in the kernel: the GPUs brought up at boot (model GPUs under QEMU)
//! were identified as the chip they are, and their VBIOS and FWSEC were found.

use crate::gpu;
use crate::{kassert, ktest};

ktest!(gpus_from_the_command_line_are_identified, || {
    let cmd = kernel::cmdline::CmdLine::parse(crate::boot_extras().cmdline());
    let spec = cmd.value("gpu").unwrap_or("model:gh100");
    if spec == "none" {
        return gpu::with_gpus(|g| {
            if g.is_empty() {
                Ok(())
            } else {
                Err(alloc::format!("gpu=none but {} GPUs", g.len()))
            }
        });
    }
    let wanted: alloc::vec::Vec<&str> = spec.split(',').filter_map(|s| s.strip_prefix("model:")).collect();
    gpu::with_gpus(|gpus| {
        kassert!(gpus.len() == wanted.len(), "{} GPUs brought up for gpu={spec}", gpus.len());
        for (g, chip) in gpus.iter().zip(&wanted) {
            let expected = crate::gpu_model::chipset_by_name(chip).ok_or("unknown chip in gpu=")?;
            kassert!(g.foundation.identity.chipset == expected, "{}: identified as {}", g.name, g.foundation.identity);
            kassert!(g.foundation.bios_version().is_some(), "{}: no VBIOS version", g.name);
            kassert!(g.foundation.fwsec.is_ok(), "{}: FWSEC not found: {:?}", g.name, g.foundation.fwsec);
        }
        Ok(())
    })
});

ktest!(model_gh100_is_the_h200_board, || {
    gpu::with_gpus(|gpus| {
        let Some(g) = gpus.iter().find(|g| g.foundation.identity.chipset == nvgpu::chip::Chipset::GH100) else {
            return Err("SKIP: no GH100 brought up".into());
        };
        kassert!(g.foundation.pci_device_id == 0x2335, "device id {:#x}", g.foundation.pci_device_id);
        kassert!(g.foundation.board == Some("NVIDIA H200"), "board {:?}", g.foundation.board);
        Ok(())
    })
});

ktest!(model_gpus_saw_no_unmodelled_or_rejected_accesses, || {
    gpu::with_gpus(|gpus| {
        let mut models = 0;
        for g in gpus {
            let Some(m) = g.model() else { continue };
            models += 1;
            let errors = m.errors();
            kassert!(errors.is_empty(), "{}: the model recorded {} errors, first: {}", g.name, errors.len(), errors[0]);
        }
        if models == 0 {
            return Err("SKIP: no model GPUs".into());
        }
        Ok(())
    })
});

ktest!(gsp_rm_boots_on_every_gpu_whose_firmware_is_given, || {
    let firmware_for = |g: &gpu::Gpu| {
        nvgpu::firmware::FirmwareBundle::module_names(g.foundation.identity.chipset)
            .map(|names| names.iter().all(|n| crate::boot_extras().module(n).is_some()))
            .unwrap_or(false)
    };
    let summaries = crate::gsp::summaries();
    let mut checked = 0;
    gpu::with_gpus(|gpus| {
        for g in gpus.iter().filter(|g| firmware_for(g)) {
            checked += 1;
            let s = summaries
                .iter()
                .find(|s| s.gpu == g.name)
                .ok_or_else(|| alloc::format!("{}: GSP-RM did not boot", g.name))?;
            kassert!(
                Some(s.gpu_name.as_str()) == g.foundation.board,
                "{}: GSP-RM calls itself {:?}, the board is {:?}",
                g.name,
                s.gpu_name,
                g.foundation.board
            );
            kassert!(
                s.report.steps.iter().any(|st| st.step == nvgpu::gsp::boot::BootStep::WaitInitDone),
                "{}: no INIT_DONE step",
                g.name
            );
            kassert!(
                s.fb_regions > 0 && s.fb_bytes > 1 << 30,
                "{}: static info FB {} regions, {} bytes",
                g.name,
                s.fb_regions,
                s.fb_bytes
            );
            kassert!(
                s.rm_objects == 3 && s.commands_sent >= 5,
                "{}: {} RM objects, {} RPCs",
                g.name,
                s.rm_objects,
                s.commands_sent
            );
        }
        Ok::<(), alloc::string::String>(())
    })?;
    if checked == 0 {
        return Err("SKIP: no GPU has its GSP firmware among the boot modules (cargo xtask run --firmware)".into());
    }
    kassert!(
        crate::gsp::live_sessions() >= checked,
        "{} live GSP sessions for {checked} GPUs",
        crate::gsp::live_sessions()
    );
    Ok(())
});

ktest!(rm_objects_allocate_and_free_children_first_on_live_gsp, || {
    if crate::gsp::live_sessions() == 0 {
        return Err("SKIP: no live GSP-RM (boot with cargo xtask run --firmware)".into());
    }
    for i in 0..crate::gsp::live_sessions() {
        let outcome = crate::gsp::with_session(i, |client, rpc| -> Result<(u32, u32), alloc::string::String> {
            // A second client with its own device, then everything freed children first.
            let mut second = nvgpu::rm::RmClient::new(rpc, 1).map_err(|e| alloc::format!("client: {e}"))?;
            let device = second.alloc_device(rpc, &Default::default()).map_err(|e| alloc::format!("device: {e}"))?;
            second.free_all(rpc).map_err(|e| alloc::format!("free: {e}"))?;
            Ok((client.handle().raw(), device.raw()))
        });
        let (first, device) = outcome.ok_or("session vanished")??;
        kassert!(first == 0xc1d0_0000, "session {i}: first client handle {first:#x}");
        kassert!(device & 0xfff0_0000 == 0xcaf0_0000, "session {i}: device handle {device:#x}");
    }
    Ok(())
});

ktest!(gsp_suspend_and_resume_keep_rm_objects_alive, || {
    use nvgpu::hal::BootFlow;
    let sessions = crate::gsp::live_sessions();
    if sessions == 0 {
        return Err("SKIP: no live GSP-RM (boot with cargo xtask run --firmware)".into());
    }
    let mut checked = 0;
    for i in 0..sessions {
        let (chipset, subdevice) = crate::gsp::session_subdevice(i).ok_or("session vanished")?;
        // Hopper suspends through the FSP, which the driver does not do yet.
        if chipset.hal().boot_flow == BootFlow::FspChainOfTrust {
            continue;
        }
        let (down, up) = crate::gsp::suspend_and_resume(i).map_err(|e| alloc::format!("{chipset}: {e}"))?;
        // The subdevice allocated before the suspend answers a control after the resume.
        let status = crate::gsp::with_session(i, |client, rpc| {
            let mut params = alloc::vec![0u8; sim::gsp_rm::payloads::NV2080_CTRL_GPU_GET_INFO_V2_PARAMS_SIZE as usize];
            client
                .control(rpc, subdevice, sim::gsp_rm::payloads::NV2080_CTRL_CMD_GPU_GET_INFO_V2, &mut params)
                .map_err(|e| alloc::format!("{e}"))
        })
        .ok_or("session vanished")?;
        status.map_err(|e| alloc::format!("{chipset}: control after resume: {e}"))?;
        log::info!(target: "gsp", "{chipset}: suspended in {down} ms, resumed in {up} ms");
        checked += 1;
    }
    kassert!(checked > 0, "no session could be suspended");
    Ok(())
});
