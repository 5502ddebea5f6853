//! Memory policies of a managed range (`uvm_va_policy_t`, `kernel-open/nvidia-uvm/
//! uvm_va_policy.h`) — the cudaMemAdvise set: preferred location, accessed-by, read
//! duplication — and the choice of where a faulted page goes
//! (`block_select_residency` in `uvm_va_block.c`, 535.261.03).

use crate::processor::{ProcessorId, ProcessorMask};
use crate::va_block::AccessType;

/// The policy of a range of managed memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct VaPolicy {
    /// `cudaMemAdviseSetPreferredLocation`: where pages should live.
    pub preferred_location: Option<ProcessorId>,
    /// `cudaMemAdviseSetAccessedBy`: processors that keep a mapping wherever the pages live.
    pub accessed_by: ProcessorMask,
    /// `cudaMemAdviseSetReadMostly`: reads make copies instead of moving the page.
    pub read_duplication: bool,
}

/// One memory advice (`cudaMemAdvise`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    SetPreferredLocation(ProcessorId),
    UnsetPreferredLocation,
    SetAccessedBy(ProcessorId),
    UnsetAccessedBy(ProcessorId),
    SetReadMostly,
    UnsetReadMostly,
}

impl VaPolicy {
    /// The policy after `advice`.
    pub fn advised(mut self, advice: Advice) -> VaPolicy {
        match advice {
            Advice::SetPreferredLocation(p) => self.preferred_location = Some(p),
            Advice::UnsetPreferredLocation => self.preferred_location = None,
            Advice::SetAccessedBy(p) => self.accessed_by.set(p),
            Advice::UnsetAccessedBy(p) => self.accessed_by.clear(p),
            Advice::SetReadMostly => self.read_duplication = true,
            Advice::UnsetReadMostly => self.read_duplication = false,
        }
        self
    }
}

/// What the system knows about its processors for placement decisions.
pub trait ProcessorTopology {
    /// Whether `from` can map `to`'s memory (peer access, or sysmem from a GPU).
    fn can_access(&self, from: ProcessorId, to: ProcessorId) -> bool;
    /// Whether `p` has memory of its own to hold pages (UVM: GPUs without memory use sysmem).
    fn has_memory(&self, p: ProcessorId) -> bool;
    /// Whether `a` and `b` are joined by NVLink.
    fn has_nvlink(&self, a: ProcessorId, b: ProcessorId) -> bool {
        let _ = (a, b);
        false
    }
    /// Whether `from` has native atomics on `to`'s memory (always on its own).
    fn has_native_atomics(&self, from: ProcessorId, to: ProcessorId) -> bool {
        from == to
    }
}

/// Where a faulted page should be made resident (`block_select_residency`), in UVM's order:
/// 1. read duplication and a read or prefetch: the faulting processor;
/// 2. the faulting processor is the preferred location: there;
/// 3. a thrashing PIN hint: the pinned residency;
/// 4. resident nowhere: the preferred location if the faulting processor can reach it, else the
///    faulting processor;
/// 5. the faulting processor is in accessed-by and can reach a current copy: stay there;
/// 6. the preferred location is reachable from the faulting processor: there;
/// 7. otherwise the faulting processor.
///
/// A chosen processor without memory falls back to the CPU.
pub fn select_residency(
    policy: &VaPolicy,
    faulting: ProcessorId,
    access: AccessType,
    resident_on: ProcessorMask,
    pin_hint: Option<ProcessorId>,
    topology: &impl ProcessorTopology,
) -> ProcessorId {
    let chosen = choose(policy, faulting, access, resident_on, pin_hint, topology);
    if topology.has_memory(chosen) {
        chosen
    } else {
        ProcessorId::Cpu
    }
}

fn choose(
    policy: &VaPolicy,
    faulting: ProcessorId,
    access: AccessType,
    resident_on: ProcessorMask,
    pin_hint: Option<ProcessorId>,
    topology: &impl ProcessorTopology,
) -> ProcessorId {
    if policy.read_duplication && access <= AccessType::Read {
        return faulting;
    }
    if policy.preferred_location == Some(faulting) {
        return faulting;
    }
    if let Some(pin) = pin_hint {
        return pin;
    }
    if resident_on.is_empty() {
        return match policy.preferred_location {
            Some(pref) if topology.can_access(faulting, pref) => pref,
            _ => faulting,
        };
    }
    if policy.accessed_by.test(faulting) {
        // Stay where the page is if the faulting processor can reach that copy: the closest
        // copy when it holds one itself, else any it can map.
        if resident_on.test(faulting) {
            return faulting;
        }
        if let Some(p) = resident_on.iter().find(|&p| topology.can_access(faulting, p)) {
            return p;
        }
    }
    if let Some(pref) = policy.preferred_location {
        if topology.can_access(faulting, pref) {
            return pref;
        }
    }
    faulting
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GPUs 0 and 1 are peers; GPU 2 has no memory; every GPU reaches the CPU.
    struct Topo;
    impl ProcessorTopology for Topo {
        fn can_access(&self, from: ProcessorId, to: ProcessorId) -> bool {
            use ProcessorId::*;
            from == to
                || to == Cpu
                || matches!((from, to), (Gpu(0), Gpu(1)) | (Gpu(1), Gpu(0)))
                || (from == Cpu && to != Gpu(2))
        }
        fn has_memory(&self, p: ProcessorId) -> bool {
            p != ProcessorId::Gpu(2)
        }
    }

    const G0: ProcessorId = ProcessorId::Gpu(0);
    const G1: ProcessorId = ProcessorId::Gpu(1);
    const CPU: ProcessorId = ProcessorId::Cpu;

    fn on(p: ProcessorId) -> ProcessorMask {
        ProcessorMask::of(p)
    }

    #[test]
    fn default_policy_migrates_to_the_faulting_processor() {
        let p = VaPolicy::default();
        assert_eq!(select_residency(&p, G0, AccessType::Read, on(CPU), None, &Topo), G0);
        assert_eq!(select_residency(&p, CPU, AccessType::Write, on(G0), None, &Topo), CPU);
        assert_eq!(select_residency(&p, G0, AccessType::Write, ProcessorMask::empty(), None, &Topo), G0);
    }

    #[test]
    fn preferred_location_and_accessed_by() {
        let p = VaPolicy::default().advised(Advice::SetPreferredLocation(CPU));
        // First touch by a GPU that reaches the CPU: placed on the CPU.
        assert_eq!(select_residency(&p, G0, AccessType::Write, ProcessorMask::empty(), None, &Topo), CPU);
        // Resident on G1, G0 faults: the preferred location wins (step 6).
        assert_eq!(select_residency(&p, G0, AccessType::Read, on(G1), None, &Topo), CPU);
        // The preferred processor itself always gets it.
        assert_eq!(select_residency(&p, CPU, AccessType::Read, on(G0), None, &Topo), CPU);
        // Accessed-by: stay where it is if reachable.
        let p = VaPolicy::default().advised(Advice::SetAccessedBy(G0));
        assert_eq!(select_residency(&p, G0, AccessType::Write, on(G1), None, &Topo), G1);
        assert_eq!(select_residency(&p, G1, AccessType::Write, on(G0), None, &Topo), G1, "G1 is not in accessed_by");
        let p = p.advised(Advice::UnsetAccessedBy(G0));
        assert_eq!(select_residency(&p, G0, AccessType::Write, on(G1), None, &Topo), G0);
        // A preferred GPU the faulting processor cannot reach: the faulting processor.
        let p = VaPolicy::default().advised(Advice::SetPreferredLocation(G1));
        assert_eq!(
            select_residency(&p, ProcessorId::Gpu(3), AccessType::Read, ProcessorMask::empty(), None, &Topo),
            ProcessorId::Gpu(3)
        );
    }

    #[test]
    fn read_duplication_pins_and_memoryless_gpus() {
        let p = VaPolicy::default().advised(Advice::SetReadMostly).advised(Advice::SetPreferredLocation(CPU));
        assert_eq!(select_residency(&p, G0, AccessType::Read, on(CPU), None, &Topo), G0, "reads duplicate");
        assert_eq!(select_residency(&p, G0, AccessType::Prefetch, on(CPU), None, &Topo), G0);
        assert_eq!(select_residency(&p, G0, AccessType::Write, on(CPU), None, &Topo), CPU, "writes follow the policy");
        let p = VaPolicy::default();
        assert_eq!(select_residency(&p, G0, AccessType::Write, on(G1), Some(G1), &Topo), G1, "pin hint");
        assert_eq!(
            select_residency(&p, ProcessorId::Gpu(2), AccessType::Write, on(G1), None, &Topo),
            CPU,
            "no memory: CPU"
        );
        assert_eq!(p.advised(Advice::SetReadMostly).advised(Advice::UnsetReadMostly), p);
    }
}
