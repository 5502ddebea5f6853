//! `probe` (nvgpu::probe) on model GPUs of every family: the chip, the VBIOS, every falcon of
//! the HAL, WPR2 and the GFW boot state read back, nothing written (the model counts the writes
//! that reached it), no access the model refuses; after a GSP-RM boot with the real firmware
//! the same dump shows WPR2 up and the GSP's RISC-V core running.

use nvgpu::probe::probe;
use sim::{ModelConfig, ModelGpu};

fn configs() -> Vec<ModelConfig> {
    vec![
        ModelConfig::rtx2080ti(),
        ModelConfig::for_chipset(nvgpu::chip::Chipset::GA100),
        ModelConfig::rtx3090(),
        ModelConfig::rtx4090(),
        ModelConfig::h200(),
    ]
}

#[test]
fn probe_reads_every_family_and_writes_nothing() {
    for config in configs() {
        let chip = config.chipset;
        let model = ModelGpu::new(config);
        let report = probe(&model);
        let text = report.lines.join("\n");
        assert_eq!(report.attempted_writes, 0, "{chip:?}");
        assert_eq!(model.register_writes(), 0, "{chip:?}: the model saw writes");
        assert!(report.lines[0].contains(&format!("{chip}")), "{chip:?}: {text}");
        assert!(text.contains("VBIOS header: signature 0xaa55"), "{chip:?}: {text}");
        assert!(text.contains("ROM images, version"), "{chip:?}: {text}");
        let falcons = chip.hal().falcons.len();
        assert_eq!(report.lines.iter().filter(|l| l.contains(" falcon at ")).count(), falcons, "{chip:?}: {text}");
        assert!(text.contains("WPR2 not set up"), "{chip:?}: {text}");
        assert!(text.contains("GFW boot: ") && text.contains("(completed)"), "{chip:?}: {text}");
        assert_eq!(model.take_errors(), vec![], "{chip:?}: {text}");
    }
}

#[test]
fn after_a_gsp_boot_the_probe_shows_wpr2_and_the_gsp_running() {
    for config in [ModelConfig::rtx2080ti(), ModelConfig::h200()] {
        let chip = config.chipset;
        sim::host_boot::with_booted(config, &sim::host_boot::data_root(), |model, _, _, _| {
            let before = model.register_writes();
            let report = probe(model);
            let text = report.lines.join("\n");
            assert_eq!(model.register_writes(), before, "{chip:?}: the probe wrote");
            assert!(text.contains("WPR2 0x"), "{chip:?}: {text}");
            let gsp = report.lines.iter().find(|l| l.starts_with("Gsp falcon")).expect("the GSP's line");
            assert!(gsp.ends_with("active true"), "{chip:?}: {gsp}");
        })
        .unwrap_or_else(|e| panic!("{chip:?}: {e}"));
    }
}
