//! Launching a kernel on a compute channel: the QMD in GPU memory (built by [`super::qmd`] in the
//! family's layout), constant bank 0 with the kernel's parameters at the offset the compiler
//! expects them, and two methods on the compute object's subchannel: `SEND_PCAS_A` with the
//! QMD's address and `SEND_SIGNALING_PCAS2_B` with `INVALIDATE_COPY_SCHEDULE`
//! ([`crate::hw::compute`]).
//!
//! The program address names the code image. Real chips run SASS from a cubin; the GPU model
//! runs PTX, and its code image is [`model_code_image`]: the magic `NVSIMPTX`, the entry's name
//! and the module's PTX text, each with a little-endian `u32` length in front.

use alloc::vec::Vec;
use core::fmt;

use super::qmd::{build, Launch, Qmd, QmdError};
use crate::hal::Family;
use crate::host::{PushBuffer, PushError, PushStorage};
use crate::hw::compute::*;
use crate::hw::qmd::QmdLayout;

/// Magic of the model's code image.
pub const MODEL_CODE_MAGIC: [u8; 8] = *b"NVSIMPTX";
/// Bytes of one QMD in memory (64 words in every declared layout).
pub const QMD_BYTES: usize = 256;
/// Alignment of a QMD (`SEND_PCAS_A` takes the address in 256-byte units).
pub const QMD_ALIGN: u64 = 256;
/// Bytes of constant bank 0 the driver gives a launch: the driver-reserved area below the
/// parameters plus the largest parameter block (4 KiB, CUDA's limit before 12.1).
pub const CONST0_BYTES: u64 = 0x380 + 4096;

/// Why a launch could not be prepared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchError {
    /// No QMD layout for the family (Turing's QMD V02_03 is not declared).
    Unsupported {
        family: Family,
    },
    Qmd(QmdError),
    Push(PushError),
    /// The parameters do not fit constant bank 0.
    ParamsTooLarge {
        bytes: usize,
        max: usize,
    },
    /// A code image that is not the model's format.
    BadCodeImage(&'static str),
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::Unsupported { family } => write!(f, "no QMD layout for {family:?}"),
            LaunchError::Qmd(e) => write!(f, "QMD: {e}"),
            LaunchError::Push(e) => write!(f, "pushbuffer: {e:?}"),
            LaunchError::ParamsTooLarge { bytes, max } => write!(f, "{bytes} bytes of parameters, at most {max}"),
            LaunchError::BadCodeImage(why) => write!(f, "model code image: {why}"),
        }
    }
}

impl From<QmdError> for LaunchError {
    fn from(e: QmdError) -> Self {
        LaunchError::Qmd(e)
    }
}
impl From<PushError> for LaunchError {
    fn from(e: PushError) -> Self {
        LaunchError::Push(e)
    }
}

/// The family's QMD layout ([`crate::hal::Hal::qmd_layout`]).
pub const fn qmd_layout(family: Family) -> QmdLayout {
    crate::hal::for_family(family).qmd_layout
}

/// Where in constant bank 0 the kernel's parameters start ([`crate::hal::Hal::param_cbank_offset`]).
/// The model reads PTX parameters from the same place.
pub const fn param_cbank_offset(family: Family) -> u32 {
    crate::hal::for_family(family).param_cbank_offset
}

/// Constant bank 0 for a launch: zeroes, then `params` at [`param_cbank_offset`].
pub fn const_bank0(family: Family, params: &[u8]) -> Result<Vec<u8>, LaunchError> {
    let at = param_cbank_offset(family) as usize;
    let max = CONST0_BYTES as usize - at;
    if params.len() > max {
        return Err(LaunchError::ParamsTooLarge { bytes: params.len(), max });
    }
    let mut bank = alloc::vec![0u8; CONST0_BYTES as usize];
    bank[at..at + params.len()].copy_from_slice(params);
    Ok(bank)
}

/// The model's code image for `entry` of the PTX module `ptx`.
pub fn model_code_image(entry: &str, ptx: &str) -> Vec<u8> {
    let mut image = Vec::with_capacity(16 + entry.len() + ptx.len());
    image.extend_from_slice(&MODEL_CODE_MAGIC);
    image.extend_from_slice(&(entry.len() as u32).to_le_bytes());
    image.extend_from_slice(entry.as_bytes());
    image.extend_from_slice(&(ptx.len() as u32).to_le_bytes());
    image.extend_from_slice(ptx.as_bytes());
    image
}

/// Reads a model code image back: (entry, PTX text).
pub fn parse_model_code_image(image: &[u8]) -> Result<(&str, &str), LaunchError> {
    let rest = image.strip_prefix(&MODEL_CODE_MAGIC[..]).ok_or(LaunchError::BadCodeImage("no NVSIMPTX magic"))?;
    let (entry, rest) = take_string(rest)?;
    let (ptx, _) = take_string(rest)?;
    Ok((entry, ptx))
}

fn take_string(bytes: &[u8]) -> Result<(&str, &[u8]), LaunchError> {
    let len = bytes.get(..4).ok_or(LaunchError::BadCodeImage("truncated length"))?;
    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let body = bytes.get(4..4 + len).ok_or(LaunchError::BadCodeImage("truncated text"))?;
    let text = core::str::from_utf8(body).map_err(|_| LaunchError::BadCodeImage("text is not UTF-8"))?;
    Ok((text, &bytes[4 + len..]))
}

/// Builds the QMD for `launch` in the family's layout.
pub fn qmd(family: Family, launch: &Launch) -> Result<Qmd, LaunchError> {
    Ok(build(qmd_layout(family), launch)?)
}

/// The two methods that launch the QMD at `qmd_va` on the compute object bound to `subchannel`:
/// `SEND_PCAS_A`, then `SEND_SIGNALING_PCAS2_B` (`INVALIDATE_COPY_SCHEDULE`; Ampere and later)
/// or `SEND_SIGNALING_PCAS_B` (`INVALIDATE` and `SCHEDULE`; Turing).
pub fn push_launch<S: PushStorage>(
    pb: &mut PushBuffer<S>,
    family: Family,
    subchannel: u8,
    qmd_va: u64,
) -> Result<(), LaunchError> {
    if !qmd_va.is_multiple_of(QMD_ALIGN) || qmd_va >> 8 > u64::from(u32::MAX) {
        return Err(LaunchError::Qmd(QmdError::Misaligned {
            field: "SEND_PCAS_A_QMD_ADDRESS_SHIFTED8",
            value: qmd_va,
            align: QMD_ALIGN,
        }));
    }
    pb.incr(subchannel, NVC6C0_SEND_PCAS_A, &[(qmd_va >> 8) as u32])?;
    if crate::hal::for_family(family).launch_by_pcas_b {
        pb.incr(subchannel, NVC5C0_SEND_SIGNALING_PCAS_B, &[NVC5C0_PCAS_B_INVALIDATE_AND_SCHEDULE])?;
    } else {
        pb.incr(
            subchannel,
            NVC6C0_SEND_SIGNALING_PCAS2_B,
            &[NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{decode, HostClass};

    #[test]
    fn code_images_round_trip_and_refuse_damage() {
        let image = model_code_image("saxpy", ".version 7.8\n");
        assert_eq!(parse_model_code_image(&image), Ok(("saxpy", ".version 7.8\n")));
        for cut in 0..image.len() - 1 {
            assert!(parse_model_code_image(&image[..cut]).is_err() || cut >= image.len());
        }
        assert!(parse_model_code_image(b"NVSIMPTY").is_err());
    }

    #[test]
    fn launch_methods_and_constant_bank() {
        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::AmpereA);
        push_launch(&mut pb, Family::Ga10x, 4, 0x1_2345_6700).unwrap();
        let methods: Vec<_> =
            decode(pb.words()).map(|m| m.unwrap()).map(|m| (m.subchannel, m.method, m.data.to_vec())).collect();
        assert_eq!(methods, [(4, 0x2b4, alloc::vec![0x0123_4567]), (4, 0x2c0, alloc::vec![3])]);
        assert!(push_launch(&mut pb, Family::Ga10x, 4, 0x1_2345_6710).is_err());
        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::TuringA);
        push_launch(&mut pb, Family::Turing, 4, 0x100).unwrap();
        assert_eq!(decode(pb.words()).nth(1).unwrap().unwrap().method, 0x2bc);
        let bank = const_bank0(Family::Hopper, &[1, 2, 3]).unwrap();
        assert_eq!(&bank[0x210..0x213], &[1, 2, 3]);
        assert!(const_bank0(Family::Ada, &alloc::vec![0; 5000]).is_err());
        assert_eq!(qmd_layout(Family::Turing).major, 2);
    }
}
