//! A compute context's memory configuration: the local-memory buffer (per-thread spill and
//! stack space) and the generic-address windows, set once per compute channel with the methods
//! of [`crate::hw::compute`]; and the shared-memory configuration a launch's QMD asks the SM for
//! (`MIN/MAX/TARGET_SM_CONFIG_SHARED_MEM_SIZE`, [`crate::hw::qmd`]).
//!
//! Local memory is one buffer for the whole GPU. The compute work distributor hands each TPC
//! `size per TPC` bytes of it (`SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A/B`), so the buffer holds
//! per-thread bytes x threads an SM keeps resident x SMs per TPC x TPCs. The TPC count and the
//! resident warps per SM come from GSP-RM's static info (`GspStaticConfigInfo.tpcInfo`,
//! `SM_info.maxWarpsPerSM`); a QMD's `SHADER_LOCAL_MEMORY_LOW_SIZE` must not exceed the
//! per-thread bytes the buffer was sized for.

use core::fmt;

use crate::hal::Family;
use crate::host::{PushBuffer, PushStorage};
use crate::hw::compute::*;

/// SMs per TPC: two from Volta on (NVIDIA's Volta, Ampere GA100/GA102, Ada and Hopper
/// architecture whitepapers each describe a TPC as two SMs).
pub const SMS_PER_TPC: u32 = 2;
/// Threads per warp.
pub const WARP_THREADS: u32 = 32;
/// Default local memory per thread: CUDA's default `cudaLimitStackSize` (1 KiB, CUDA Runtime
/// API `cudaDeviceSetLimit`).
pub const DEFAULT_LOCAL_BYTES_PER_THREAD: u32 = 1024;
/// Local memory per thread comes in multiples of 16 bytes (Blackwell's QMD stores it as
/// `SHADER_LOCAL_MEMORY_LOW_SIZE_SHIFTED4`); a warp's share is then a multiple of 512 bytes.
pub const LOCAL_BYTES_GRANULE: u32 = 16;
/// Largest local memory per thread: what the 24-bit `SHADER_LOCAL_MEMORY_LOW_SIZE` of QMD
/// V03_00/V04_00 holds, rounded down to the granule.
pub const MAX_LOCAL_BYTES_PER_THREAD: u32 = (1 << 24) - LOCAL_BYTES_GRANULE;
/// Alignment of the local-memory buffer (and of its size).
pub const LOCAL_BUFFER_ALIGN: u64 = 128 << 10;

/// Generic-address window of shared memory. Below the driver's VA range
/// ([`crate::channel::VA_START`]), so no mapping can be shadowed by it.
pub const SHARED_WINDOW_VA: u64 = 0xFE00_0000;
/// Generic-address window of local memory.
pub const LOCAL_WINDOW_VA: u64 = 0xFF00_0000;
/// Bytes each window spans: the largest per-thread local memory fits, as does any CTA's shared
/// memory.
pub const WINDOW_BYTES: u64 = 1 << 24;

const _: () = {
    assert!(SHARED_WINDOW_VA + WINDOW_BYTES <= LOCAL_WINDOW_VA);
    assert!(LOCAL_WINDOW_VA + WINDOW_BYTES <= crate::channel::VA_START);
    assert!(MAX_LOCAL_BYTES_PER_THREAD as u64 <= WINDOW_BYTES);
};

/// The compute context's memory configuration could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryConfigError {
    /// GSP-RM's static info reports no TPCs or no resident warps per SM.
    NoSmInfo { tpcs: u32, max_warps_per_sm: u32 },
    /// A per-thread local size that is zero, not a multiple of 16 or above the QMD's field.
    BadLocalSize { bytes_per_thread: u32 },
    /// The buffer would not fit the methods' size fields (40 bits per TPC, 9 bits of SMs).
    TooLarge { bytes_per_tpc: u64, sms: u32 },
    /// A launch needs more shared memory per CTA than the family allows.
    SharedMemoryTooLarge { family: Family, bytes: u64, max: u64 },
    /// An address that does not fit its method's field.
    AddressTooWide { what: &'static str, address: u64 },
    /// The pushbuffer had no room.
    Push,
}

impl fmt::Display for MemoryConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NoSmInfo { tpcs, max_warps_per_sm } => {
                write!(f, "GSP-RM static info: {tpcs} TPCs, {max_warps_per_sm} warps per SM (need both non-zero)")
            }
            Self::BadLocalSize { bytes_per_thread } => write!(
                f,
                "local memory of {bytes_per_thread} bytes per thread (need 1..={MAX_LOCAL_BYTES_PER_THREAD}, a multiple of {LOCAL_BYTES_GRANULE})"
            ),
            Self::TooLarge { bytes_per_tpc, sms } => write!(f, "local memory of {bytes_per_tpc:#x} bytes per TPC for {sms} SMs"),
            Self::SharedMemoryTooLarge { family, bytes, max } => {
                write!(f, "{bytes} bytes of shared memory per CTA; {family:?} allows {max}")
            }
            Self::AddressTooWide { what, address } => write!(f, "{what}: address {address:#x} does not fit the method"),
            Self::Push => f.write_str("no pushbuffer room for the memory configuration"),
        }
    }
}

/// How big the local-memory buffer is and how it is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalMemoryPlan {
    pub bytes_per_thread: u32,
    pub tpcs: u32,
    pub max_warps_per_sm: u32,
    /// `SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A/B`.
    pub bytes_per_tpc: u64,
    /// `SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT`: the SMs the buffer serves.
    pub sms: u32,
    /// The buffer's size.
    pub total_bytes: u64,
}

impl LocalMemoryPlan {
    /// The plan for `tpcs` TPCs keeping `max_warps_per_sm` warps each, `bytes_per_thread` each.
    pub fn new(bytes_per_thread: u32, tpcs: u32, max_warps_per_sm: u32) -> Result<Self, MemoryConfigError> {
        if tpcs == 0 || max_warps_per_sm == 0 {
            return Err(MemoryConfigError::NoSmInfo { tpcs, max_warps_per_sm });
        }
        if bytes_per_thread == 0
            || !bytes_per_thread.is_multiple_of(LOCAL_BYTES_GRANULE)
            || bytes_per_thread > MAX_LOCAL_BYTES_PER_THREAD
        {
            return Err(MemoryConfigError::BadLocalSize { bytes_per_thread });
        }
        let per_warp = u64::from(bytes_per_thread) * u64::from(WARP_THREADS);
        let bytes_per_tpc = per_warp * u64::from(max_warps_per_sm) * u64::from(SMS_PER_TPC);
        let sms = tpcs.saturating_mul(SMS_PER_TPC);
        let max_sm_count = NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT;
        let size_bits = NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER.width() + 32;
        if bytes_per_tpc >> size_bits != 0 || u64::from(sms) >> max_sm_count.width() != 0 {
            return Err(MemoryConfigError::TooLarge { bytes_per_tpc, sms });
        }
        let total_bytes = (bytes_per_tpc * u64::from(tpcs)).next_multiple_of(LOCAL_BUFFER_ALIGN);
        Ok(LocalMemoryPlan { bytes_per_thread, tpcs, max_warps_per_sm, bytes_per_tpc, sms, total_bytes })
    }

    /// The plan from GSP-RM's static info: TPCs of the GPCs present, warps per SM.
    pub fn from_static_info(
        bytes_per_thread: u32,
        info: &crate::gsp::commands::GspStaticConfigInfo,
    ) -> Result<Self, MemoryConfigError> {
        let gpc_mask = info.gpc_info.gpc_mask;
        let tpcs = info
            .tpc_info
            .iter()
            .enumerate()
            .filter(|(i, _)| *i < 32 && gpc_mask & (1 << i) != 0)
            .map(|(_, t)| t.tpc_mask.count_ones())
            .sum();
        Self::new(bytes_per_thread, tpcs, info.sm_info.max_warps_per_sm)
    }
}

fn split(address: u64, upper_bits: u32, what: &'static str) -> Result<(u32, u32), MemoryConfigError> {
    if address >> (32 + upper_bits) != 0 {
        return Err(MemoryConfigError::AddressTooWide { what, address });
    }
    Ok(((address >> 32) as u32, address as u32))
}

/// Pushes the local-memory buffer at `buffer_va` (sized by `plan`) and the two windows on the
/// compute object bound to `subchannel`.
pub fn push_memory_config<S: PushStorage>(
    pb: &mut PushBuffer<S>,
    family: Family,
    subchannel: u8,
    buffer_va: u64,
    plan: &LocalMemoryPlan,
) -> Result<(), MemoryConfigError> {
    let address_upper = crate::hal::for_family(family).local_memory_address_upper_bits;
    let (buf_hi, buf_lo) = split(buffer_va, address_upper, "SET_SHADER_LOCAL_MEMORY_A/B")?;
    let window_upper = NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER.width();
    let (lw_hi, lw_lo) = split(LOCAL_WINDOW_VA, window_upper, "SET_SHADER_LOCAL_MEMORY_WINDOW_A/B")?;
    let (sw_hi, sw_lo) = split(SHARED_WINDOW_VA, window_upper, "SET_SHADER_SHARED_MEMORY_WINDOW_A/B")?;
    let size_hi = (plan.bytes_per_tpc >> 32) as u32;
    let size_lo = plan.bytes_per_tpc as u32;
    let push = |_: crate::host::PushError| MemoryConfigError::Push;
    pb.incr(subchannel, NVC6C0_SET_SHADER_LOCAL_MEMORY_A, &[buf_hi, buf_lo]).map_err(push)?;
    pb.incr(subchannel, NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, &[size_hi, size_lo, plan.sms]).map_err(push)?;
    pb.incr(subchannel, NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A, &[lw_hi, lw_lo]).map_err(push)?;
    pb.incr(subchannel, NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A, &[sw_hi, sw_lo]).map_err(push)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Shared memory.

/// Shared memory the SM reserves per CTA for the system (see [`crate::hal::SHARED_RESERVED_PER_CTA`]).
pub use crate::hal::SHARED_RESERVED_PER_CTA;

/// The shared-memory carveouts (KiB) of `family`'s SM, smallest first ([`crate::hal::Hal::shared_carveouts_kib`]).
pub const fn shared_carveouts_kib(family: Family) -> &'static [u64] {
    crate::hal::for_family(family).shared_carveouts_kib
}

/// Shared memory per SM at its largest carveout.
pub const fn max_shared_per_sm(family: Family) -> u64 {
    crate::hal::for_family(family).max_shared_per_sm()
}

/// Most shared memory one CTA may use ([`crate::hal::Hal::max_shared_per_cta`]).
pub const fn max_shared_per_cta(family: Family) -> u64 {
    crate::hal::for_family(family).max_shared_per_cta()
}

/// `*_SM_CONFIG_SHARED_MEM_SIZE` of a carveout: its size in 4 KiB units plus one (0 is not a
/// configuration). NVIDIA does not publish this encoding; it is the one the open-source
/// userspace drivers program (Mesa's NVK and nouveau GL compute, tinygrad's `ops_nv.py`), e.g.
/// 100 KB -> 26, 228 KB -> 58; the 6-bit fields of QMD V03_00..V05_00 hold up to 248 KB.
pub const fn encode_sm_config(carveout_bytes: u64) -> u64 {
    carveout_bytes / 4096 + 1
}

/// The carveout a `*_SM_CONFIG_SHARED_MEM_SIZE` value names (`None` for 0).
pub const fn decode_sm_config(value: u64) -> Option<u64> {
    match value {
        0 => None,
        v => Some((v - 1) * 4096),
    }
}

/// The QMD's shared-memory configuration for a CTA using `shared` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmSharedConfig {
    /// Encoded `MIN_SM_CONFIG_SHARED_MEM_SIZE`: the smallest carveout holding the CTA.
    pub min: u64,
    /// Encoded `MAX_SM_CONFIG_SHARED_MEM_SIZE`: the family's largest carveout.
    pub max: u64,
    /// Encoded `TARGET_SM_CONFIG_SHARED_MEM_SIZE`: what the driver asks for (the minimum, which
    /// leaves the most L1 cache).
    pub target: u64,
}

/// The configuration for `shared` bytes per CTA on `family`, or a typed refusal past the
/// family's per-CTA limit.
pub fn sm_shared_config(family: Family, shared: u64) -> Result<SmSharedConfig, MemoryConfigError> {
    let max = max_shared_per_cta(family);
    if shared > max {
        return Err(MemoryConfigError::SharedMemoryTooLarge { family, bytes: shared, max });
    }
    let reserve = crate::hal::for_family(family).shared_reserved_per_cta;
    let need = shared + reserve;
    let carveouts = shared_carveouts_kib(family);
    let fit = carveouts.iter().map(|k| k << 10).find(|&c| c >= need);
    let fit = fit.ok_or(MemoryConfigError::SharedMemoryTooLarge { family, bytes: shared, max })?;
    let min = encode_sm_config(fit);
    Ok(SmSharedConfig { min, max: encode_sm_config(max_shared_per_sm(family)), target: min })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{decode, HostClass};
    use alloc::vec::Vec;

    #[test]
    fn shared_config_picks_the_smallest_carveout_and_refuses_past_the_limit() {
        let c = sm_shared_config(Family::Ga10x, 48 << 10).unwrap();
        assert_eq!((decode_sm_config(c.min), decode_sm_config(c.max)), (Some(64 << 10), Some(100 << 10)));
        assert_eq!(c.max, 26);
        assert_eq!(decode_sm_config(sm_shared_config(Family::Ada, 0).unwrap().min), Some(8 << 10));
        assert_eq!(sm_shared_config(Family::Hopper, 227 << 10).unwrap().min, 58);
        assert_eq!(
            sm_shared_config(Family::Ga10x, 100 << 10),
            Err(MemoryConfigError::SharedMemoryTooLarge { family: Family::Ga10x, bytes: 100 << 10, max: 99 << 10 })
        );
        assert!(sm_shared_config(Family::Ga100, 163 << 10).is_ok());
        assert!(sm_shared_config(Family::Ga100, (163 << 10) + 1).is_err());
        assert!(sm_shared_config(Family::Hopper, (227 << 10) + 1).is_err());
        // Every family's largest configuration fits the 6-bit fields.
        for f in [Family::Turing, Family::Ga100, Family::Ga10x, Family::Ada, Family::Hopper, Family::BlackwellGb10x] {
            assert!(encode_sm_config(max_shared_per_sm(f)) < 64);
        }
    }

    #[test]
    fn local_memory_plan_and_methods() {
        let plan = LocalMemoryPlan::new(1024, 12, 48).unwrap();
        assert_eq!(plan.bytes_per_tpc, 1024 * 32 * 48 * 2);
        assert_eq!(plan.sms, 24);
        assert_eq!(plan.total_bytes, (plan.bytes_per_tpc * 12).next_multiple_of(LOCAL_BUFFER_ALIGN));
        assert!(matches!(LocalMemoryPlan::new(1000, 12, 48), Err(MemoryConfigError::BadLocalSize { .. })));
        assert!(matches!(LocalMemoryPlan::new(1024, 0, 48), Err(MemoryConfigError::NoSmInfo { .. })));
        assert!(matches!(LocalMemoryPlan::new(1024, 300, 48), Err(MemoryConfigError::TooLarge { .. })));

        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::AmpereA);
        push_memory_config(&mut pb, Family::Ga10x, 1, 0x1_2345_0000, &plan).unwrap();
        let methods: Vec<_> =
            decode(pb.words()).map(|m| m.unwrap()).map(|m| (m.subchannel, m.method, m.data.to_vec())).collect();
        assert_eq!(
            methods,
            [
                (1, 0x790, alloc::vec![0x1, 0x2345_0000]),
                (1, 0x2e4, alloc::vec![0, 1024 * 32 * 48 * 2, 24]),
                (1, 0x7b0, alloc::vec![0, 0xFF00_0000]),
                (1, 0x2a0, alloc::vec![0, 0xFE00_0000]),
            ]
        );
        // 49-bit addresses before Hopper, 57-bit on Hopper.
        assert!(push_memory_config(&mut pb, Family::Ga10x, 1, 1 << 50, &plan).is_err());
        assert!(push_memory_config(&mut pb, Family::Hopper, 1, 1 << 50, &plan).is_ok());
    }
}
