//! GPU foundation tests in the kernel: the GPUs brought up at boot (model GPUs under QEMU)
//! were identified as the chip they are, and their VBIOS and FWSEC were found.

use crate::gpu;
use crate::{kassert, ktest};

ktest!(gpus_from_the_command_line_are_identified, || {
    let cmd = kernel::cmdline::CmdLine::parse(crate::boot_extras().cmdline());
    let spec = cmd.value("gpu").unwrap_or("model:gh100");
    if spec == "none" {
        return gpu::with_gpus(|g| if g.is_empty() { Ok(()) } else { Err(alloc::format!("gpu=none but {} GPUs", g.len())) });
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
