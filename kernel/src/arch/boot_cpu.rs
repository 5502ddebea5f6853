//! State that only the boot CPU touches, and only outside interrupt and exception handlers.
//!
//! The kernel runs on one CPU: `arch/` never starts an application processor (no INIT-SIPI,
//! no MADT wakeup mailbox is written), and there are no threads. Code outside interrupt
//! handlers is therefore one sequential flow, and a value that only that flow reaches is never
//! touched concurrently, whatever its type: it need not be `Send` or `Sync`. The GPUs and the
//! GSP sessions are such values (model GPUs keep their state in `Cell`s and `RefCell`s).
//!
//! [`BootCpuLock`] holds one: a lock that refuses to be taken inside an interrupt or exception
//! handler ([`super::idt::in_handler`]), so a handler can never reach the value (or anything a
//! caller took out of it) while the flow it interrupted is in the middle of using it. The one
//! hand-over there is, is explicit: what the flow lends the page-fault service of
//! [`crate::mem::managed_window::copy_in_place`] for the length of that copy, while the flow
//! runs nothing but the copy's own loads and stores. When
//! application processors are started this type has to go (its `Sync` rests on there being
//! one CPU).

use spin::{Mutex, MutexGuard};

/// A value for the boot CPU's kernel flow alone (see the module notes).
pub struct BootCpuLock<T> {
    inner: Mutex<T>,
}

// SAFETY: `Sync` lets a `static` hold the lock. Every access goes through `lock`, which panics
// inside interrupt and exception handlers, so the value and everything borrowed from it are
// only used by the boot CPU's one non-handler flow (no other CPU runs, no threads exist): no
// two executions ever touch it at once, which is all `Send`/`Sync` on `T` would guarantee.
unsafe impl<T> Sync for BootCpuLock<T> {}

impl<T> BootCpuLock<T> {
    pub const fn new(value: T) -> Self {
        BootCpuLock { inner: Mutex::new(value) }
    }

    /// The value. Panics inside an interrupt or exception handler (see the module notes); a
    /// second `lock` while the first guard lives spins for ever, as with any spin lock.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        assert!(!super::idt::in_handler(), "a boot-CPU lock was taken inside an interrupt or exception handler");
        self.inner.lock()
    }
}
