//! The engines behind a channel's subchannels, as the host dispatches to them: the copy engine
//! ([`crate::ce`]) for the family's copy class, and the compute engine ([`crate::compute`]) for
//! its compute class.
//!
//! The host and the engines share one address space; [`SharedSpace`] lends it to both through
//! a `RefCell`, one access at a time, as [`VirtualMemory`] and [`PhysicalMemory`] views.

use alloc::format;
use alloc::vec::Vec;
use core::cell::RefCell;

use crate::ce::CopyClass;

use crate::ce::{CeBus, CopyEngine};
use crate::engine_mem::{MmuFault, PhysAddr, PhysicalMemory, VirtualMemory};
use crate::host::{EngineDispatch, EngineError, EngineStatus};
use crate::mmu::AddressSpace;

/// One channel's engine objects, by subchannel.
#[derive(Debug, Default)]
pub struct ChannelEngines {
    copy: Vec<(u8, CopyEngine)>,
    compute: Vec<(u8, crate::compute::ComputeEngine)>,
    family: Option<nvgpu::hal::Family>,
    /// The class numbers this GPU's engines implement.
    copy_class: u32,
    compute_class: u32,
    /// The model clock for timestamps.
    pub timestamp_ns: u64,
    /// Copy launches that asked for an interrupt.
    pub interrupts: u64,
    /// Whether the channel's context takes replayable faults (its VA space was allocated with
    /// `ENABLE_PAGE_FAULTING` and the replayable fault buffer is enabled): compute launches
    /// then stall on faults instead of failing. Set by the GPU before each run.
    pub replayable: bool,
}

impl ChannelEngines {
    pub fn new(family: nvgpu::hal::Family, copy_class: u32, compute_class: u32) -> Self {
        ChannelEngines { family: Some(family), copy_class, compute_class, ..Default::default() }
    }

    /// The compute engine on `subchannel`, if one is bound there.
    pub fn compute(&self, subchannel: u8) -> Option<&crate::compute::ComputeEngine> {
        self.compute.iter().find(|(s, _)| *s == subchannel).map(|(_, c)| c)
    }

    /// The accesses the launch on `subchannel` is stalled on (empty when none).
    pub fn stalled_accesses(&self, subchannel: u8) -> &[crate::ptx::StalledAccess] {
        self.compute(subchannel).map_or(&[], |c| c.stalled())
    }

    /// Cancels the stalled accesses of the types `covers` accepts to the 4 KiB page at `va` in
    /// every stalled launch; whether any was there.
    pub fn cancel_va(&mut self, va: u64, covers: &dyn Fn(crate::engine_mem::AccessType) -> bool) -> bool {
        let mut hit = false;
        for (_, c) in self.compute.iter_mut() {
            hit |= c.cancel_va(va, covers);
        }
        hit
    }
}

impl EngineDispatch for ChannelEngines {
    fn bind(&mut self, subchannel: u8, class: u32) -> Result<(), EngineError> {
        self.copy.retain(|(s, _)| *s != subchannel);
        self.compute.retain(|(s, _)| *s != subchannel);
        if class == self.copy_class {
            let ce_class = CopyClass::from_number(class).ok_or(EngineError::UnknownClass)?;
            self.copy.push((subchannel, CopyEngine::new(ce_class)));
            Ok(())
        } else if class == self.compute_class {
            let family = self.family.ok_or(EngineError::UnknownClass)?;
            self.compute.push((subchannel, crate::compute::ComputeEngine::new(family)));
            Ok(())
        } else {
            Err(EngineError::UnknownClass)
        }
    }

    fn method(
        &mut self,
        subchannel: u8,
        class: u32,
        method: u32,
        data: u32,
        vm: &mut dyn VirtualMemory,
        pm: &mut dyn PhysicalMemory,
    ) -> Result<EngineStatus, EngineError> {
        if let Some((_, ce)) = self.copy.iter_mut().find(|(s, _)| *s == subchannel) {
            let mut bus = CeBus { virt: vm, phys: pm, timestamp_ns: self.timestamp_ns };
            return match ce.method(method, data, &mut bus) {
                Ok(Some(outcome)) => {
                    if outcome.interrupt.is_some() {
                        self.interrupts += 1;
                    }
                    Ok(EngineStatus::Done)
                }
                Ok(None) => Ok(EngineStatus::Done),
                Err(crate::ce::CeError::Fault(fault)) => Err(EngineError::Fault(fault)),
                Err(e) => Err(EngineError::Refused(format!("{e}"))),
            };
        }
        if let Some((_, compute)) = self.compute.iter_mut().find(|(s, _)| *s == subchannel) {
            let _ = pm;
            compute.replayable = self.replayable;
            return match compute.method(method, data, vm) {
                Ok(_) if compute.is_stalled() => Ok(EngineStatus::Stalled),
                Ok(_) => Ok(EngineStatus::Done),
                Err(crate::compute::ComputeError::Fault(fault)) => Err(EngineError::Fault(fault)),
                Err(e) => Err(EngineError::Refused(format!("{e}"))),
            };
        }
        Err(EngineError::Refused(format!("class {class:#06x}: no engine on subchannel {subchannel}")))
    }
}

/// One address space shared by the host and an engine.
pub struct SharedSpace<'a>(pub RefCell<AddressSpace<'a>>);

/// The virtual view of a [`SharedSpace`].
pub struct VirtView<'s, 'a>(pub &'s SharedSpace<'a>);
/// The physical view of a [`SharedSpace`].
pub struct PhysView<'s, 'a>(pub &'s SharedSpace<'a>);

impl VirtualMemory for VirtView<'_, '_> {
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), MmuFault> {
        self.0 .0.borrow_mut().read(va, buf)
    }
    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MmuFault> {
        self.0 .0.borrow_mut().write(va, data)
    }
    fn atomic(&mut self, va: u64, buf: &mut [u8], op: &mut dyn FnMut(&[u8], &mut [u8])) -> Result<(), MmuFault> {
        self.0 .0.borrow_mut().atomic(va, buf, op)
    }
}

impl PhysicalMemory for PhysView<'_, '_> {
    fn read_phys(&mut self, at: PhysAddr, buf: &mut [u8]) -> bool {
        self.0 .0.borrow_mut().mem.read_phys(at, buf)
    }
    fn write_phys(&mut self, at: PhysAddr, data: &[u8]) -> bool {
        self.0 .0.borrow_mut().mem.write_phys(at, data)
    }
}
