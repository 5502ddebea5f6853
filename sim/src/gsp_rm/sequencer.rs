//! The CPU sequencer script GSP-RM sends in `GSP_RUN_CPU_SEQUENCER` during init
//! (`rpc_run_cpu_sequencer_v17_00` with opcodes of `rmgspseq.h`, executed by RM's
//! `kgspExecuteSequencerBuffer` and `kgspExecuteSequencerCommand_GA102/_TU102`).
//!
//! The script, in `commandBuffer` of [`BUFFER_DWORDS`] dwords (`bufferSizeDWord`; the RPC carries
//! the whole buffer), of which the first `cmdIndex` hold commands (RM requires
//! `cmdIndex < bufferSizeDWord`, `kgspExecuteSequencerBuffer`); `regSaveArea` zero:
//!
//! | opcode | payload | effect the model checks |
//! |---|---|---|
//! | `REG_WRITE` | `NV_PGSP_MAILBOX(2)`, [`TOKEN`] | |
//! | `REG_MODIFY` | `NV_PGSP_MAILBOX(2)`, mask [`MODIFY_MASK`], value [`MODIFY_VALUE`] | the register ends as [`TOKEN_EXPECTED`] |
//! | `REG_POLL` | `NV_PGSP_MAILBOX(2)`, mask all ones, value [`TOKEN_EXPECTED`], timeout [`POLL_TIMEOUT_US`] µs, error [`POLL_ERROR`] | registers-only script: this read completes init |
//! | `DELAY_US` | [`DELAY_US`] | |
//! | `CORE_RESUME` (default script) | none | GSP reset into RISC-V, LIBOS arguments in `NV_PGSP_FALCON_MAILBOX0/1`, SEC2 started; the model resumes GSP-RM, checks [`TOKEN_EXPECTED`], sets `BOOT_STAGE_3_HANDOFF` and SEC2 `MAILBOX0` = 0 |
//!
//! `NV_PGSP_MAILBOX(2)` is one of GSP's general mailbox registers (`dev_gsp.h`); RM's health
//! check uses only (0) and (1). The values are the model's.

use alloc::vec::Vec;

use nvgpu::hw::engine::NV_PGSP_MAILBOX;
use zerocopy::IntoBytes;

use super::payloads::{RpcRunCpuSequencerV17_00, SeqOpcode, GSP_SEQ_BUF_REG_SAVE_SIZE};

/// The `NV_PGSP_MAILBOX(i)` the script works on.
pub const TOKEN_MAILBOX: u32 = 2;
/// What `REG_WRITE` writes.
pub const TOKEN: u32 = 0x5E0C_0001;
/// `REG_MODIFY`'s mask and value.
pub const MODIFY_MASK: u32 = 0x0000_FF00;
pub const MODIFY_VALUE: u32 = 0x0000_A500;
/// The register after `REG_WRITE` then `REG_MODIFY`.
pub const TOKEN_EXPECTED: u32 = (TOKEN & !MODIFY_MASK) | MODIFY_VALUE;
/// `REG_POLL`'s timeout (µs) and error code.
pub const POLL_TIMEOUT_US: u32 = 1000;
pub const POLL_ERROR: u32 = 0x5E0C_0BAD;
/// `DELAY_US`'s delay.
pub const DELAY_US: u32 = 10;

/// `bufferSizeDWord`: the command buffer's capacity (the model's choice).
pub const BUFFER_DWORDS: u32 = 64;

/// The register the script targets.
pub const fn token_register() -> u32 {
    NV_PGSP_MAILBOX::OFFSET + TOKEN_MAILBOX * NV_PGSP_MAILBOX::STRIDE
}

/// The `rpc_run_cpu_sequencer_v17_00` payload: header then command buffer.
pub fn script(with_core_resume: bool) -> Vec<u8> {
    let reg = token_register();
    let mut commands: Vec<u32> = alloc::vec![
        SeqOpcode::RegWrite as u32,
        reg,
        TOKEN,
        SeqOpcode::RegModify as u32,
        reg,
        MODIFY_MASK,
        MODIFY_VALUE,
        SeqOpcode::RegPoll as u32,
        reg,
        u32::MAX,
        TOKEN_EXPECTED,
        POLL_TIMEOUT_US,
        POLL_ERROR,
        SeqOpcode::DelayUs as u32,
        DELAY_US,
    ];
    if with_core_resume {
        commands.push(SeqOpcode::CoreResume as u32);
    }
    let cmd_index = commands.len() as u32;
    commands.resize(BUFFER_DWORDS as usize, 0);
    let header = RpcRunCpuSequencerV17_00 {
        buffer_size_dword: BUFFER_DWORDS,
        cmd_index,
        reg_save_area: [0; GSP_SEQ_BUF_REG_SAVE_SIZE],
    };
    let mut out = header.as_bytes().to_vec();
    out.extend_from_slice(commands.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_decodes_as_rm_walks_it() {
        for resume in [false, true] {
            let bytes = script(resume);
            let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            let (size, end) = (words[0], words[1]);
            assert!(end < size, "kgspExecuteSequencerBuffer: cmdIndex < bufferSizeDWord");
            let buffer = &words[10..];
            assert_eq!(buffer.len() as u32, size);
            // kgspExecuteSequencerBuffer: opcode, payload, until cmdIndex.
            let mut i = 0;
            let mut opcodes = Vec::new();
            while i < end as usize {
                let op = buffer[i];
                opcodes.push(op);
                i += 1 + SeqOpcode::from_raw(op).unwrap().payload_dwords();
            }
            assert_eq!(i, end as usize);
            assert_eq!(opcodes.len(), if resume { 5 } else { 4 });
        }
        assert_eq!(TOKEN_EXPECTED, 0x5E0C_A501);
        assert_eq!(token_register(), 0x0011_080C);
    }
}
