//! Processors that can hold or map managed memory: the CPU and each GPU (`uvm_processor_id_t`
//! and `uvm_processor_mask_t` in `uvm_processors.h`). UVM numbers the CPU 0 and GPUs from 1;
//! so does this module.

use core::fmt;

/// GPUs one va_space can register (HGX boards carry 8; UVM allows 32).
pub const MAX_GPUS: usize = 32;

/// The CPU or one GPU of the va_space, by its index there.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProcessorId {
    Cpu,
    Gpu(u8),
}

impl ProcessorId {
    /// The id's bit in a [`ProcessorMask`]: 0 for the CPU, 1 + n for GPU n.
    pub const fn index(self) -> usize {
        match self {
            ProcessorId::Cpu => 0,
            ProcessorId::Gpu(n) => 1 + n as usize,
        }
    }

    /// The processor for a mask bit, if the bit names one.
    pub const fn from_index(index: usize) -> Option<Self> {
        match index {
            0 => Some(ProcessorId::Cpu),
            i if i <= MAX_GPUS => Some(ProcessorId::Gpu((i - 1) as u8)),
            _ => None,
        }
    }

    pub const fn is_cpu(self) -> bool {
        matches!(self, ProcessorId::Cpu)
    }

    pub const fn gpu(self) -> Option<u8> {
        match self {
            ProcessorId::Gpu(n) => Some(n),
            ProcessorId::Cpu => None,
        }
    }
}

impl fmt::Debug for ProcessorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessorId::Cpu => write!(f, "CPU"),
            ProcessorId::Gpu(n) => write!(f, "GPU{n}"),
        }
    }
}

impl fmt::Display for ProcessorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A set of processors.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ProcessorMask(u64);

impl ProcessorMask {
    pub const fn empty() -> Self {
        ProcessorMask(0)
    }

    /// The set holding `id` (empty for an id beyond [`MAX_GPUS`]).
    pub const fn of(id: ProcessorId) -> Self {
        ProcessorMask(Self::bit(id))
    }

    const fn bit(id: ProcessorId) -> u64 {
        if id.index() <= MAX_GPUS {
            1 << id.index()
        } else {
            0
        }
    }

    pub fn test(&self, id: ProcessorId) -> bool {
        self.0 & Self::bit(id) != 0
    }

    /// Adds `id` (ids beyond [`MAX_GPUS`] are ignored).
    pub fn set(&mut self, id: ProcessorId) {
        self.0 |= Self::bit(id);
    }

    pub fn clear(&mut self, id: ProcessorId) {
        self.0 &= !Self::bit(id);
    }

    pub const fn is_empty(&self) -> bool {
        self.0 == 0
    }

    pub const fn count(&self) -> usize {
        self.0.count_ones() as usize
    }

    pub const fn or(self, other: ProcessorMask) -> ProcessorMask {
        ProcessorMask(self.0 | other.0)
    }

    pub const fn and(self, other: ProcessorMask) -> ProcessorMask {
        ProcessorMask(self.0 & other.0)
    }

    pub const fn andnot(self, other: ProcessorMask) -> ProcessorMask {
        ProcessorMask(self.0 & !other.0)
    }

    /// Members in id order: the CPU first, then GPUs by index.
    pub fn iter(&self) -> impl Iterator<Item = ProcessorId> + '_ {
        let mut bits = self.0;
        core::iter::from_fn(move || {
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if let Some(p) = ProcessorId::from_index(i) {
                    return Some(p);
                }
            }
            None
        })
    }

    pub fn first(&self) -> Option<ProcessorId> {
        self.iter().next()
    }
}

impl fmt::Debug for ProcessorMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl FromIterator<ProcessorId> for ProcessorMask {
    fn from_iter<I: IntoIterator<Item = ProcessorId>>(iter: I) -> Self {
        let mut m = ProcessorMask::empty();
        iter.into_iter().for_each(|p| m.set(p));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_masks() {
        assert_eq!(ProcessorId::Cpu.index(), 0);
        assert_eq!(ProcessorId::Gpu(0).index(), 1);
        assert_eq!(ProcessorId::from_index(33), None);
        let m: ProcessorMask = [ProcessorId::Gpu(3), ProcessorId::Cpu, ProcessorId::Gpu(0)].into_iter().collect();
        assert_eq!(
            m.iter().collect::<alloc::vec::Vec<_>>(),
            [ProcessorId::Cpu, ProcessorId::Gpu(0), ProcessorId::Gpu(3)]
        );
        assert_eq!(m.count(), 3);
        assert!(m.test(ProcessorId::Gpu(3)) && !m.test(ProcessorId::Gpu(1)));
        assert_eq!(m.andnot(ProcessorMask::of(ProcessorId::Cpu)).first(), Some(ProcessorId::Gpu(0)));
        // Ids beyond MAX_GPUS are never members and never panic.
        let mut m = ProcessorMask::empty();
        m.set(ProcessorId::Gpu(200));
        m.clear(ProcessorId::Gpu(255));
        assert!(m.is_empty() && !m.test(ProcessorId::Gpu(255)) && ProcessorMask::of(ProcessorId::Gpu(99)).is_empty());
    }
}
