//! The CPU's access to the managed window ([`paging::MANAGED_BASE`]..[`paging::MANAGED_LIMIT`]),
//! where managed (unified) memory lives: its pages are mapped only while the CPU may use them,
//! and a touch of any other page is a page fault that a service resolves (the managed-memory
//! service of [`crate::managed`], or one lent for a copy here) before the access is re-executed.
//!
//! No Rust reference into the window is ever made: what is mapped there is frames that `uvm`
//! migrates (DMA memory a GPU may use), so the CPU reaches them only by volatile loads and
//! stores made here: single words ([`read_u64`], [`write_u64`]) and page-by-page copies in and
//! out ([`copy_in_place`]). Code that works on managed data works on those copies.
//!
//! # Lending a page-fault service
//! [`copy_in_place`] resolves faults with a service its caller provides (a GPU context's, which
//! borrows that context). It lends the service only while one of its own copy loops runs, and
//! the page-fault handler reaches it through [`serve_lent`]. So the service runs only while the
//! flow it interrupts is inside that loop, which holds nothing the service can see (a buffer of
//! this module's and a window address); the caller's `pass` runs with nothing lent.

use super::{paging, PAGE_SIZE};
use alloc::vec;
use core::ptr::NonNull;
use spin::Mutex;

/// A page-fault service: `(address, write) -> served`.
type Service<'a> = dyn FnMut(u64, bool) -> bool + 'a;

/// The service lent for the copy loop running now.
struct Lent(NonNull<Service<'static>>);

// SAFETY: `Send` lets the slot be a `static`. The pointer is only dereferenced by `serve_lent`
// on the boot CPU (the only one running) while the `lend` call that stored it runs; see there.
unsafe impl Send for Lent {}

static LENT: Mutex<Option<Lent>> = Mutex::new(None);

/// Why the window could not be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowError {
    /// The range is not inside the managed window (or a word is misaligned).
    OutOfWindow { va: u64, len: u64 },
    /// A copy is already lending a service (copies do not nest inside their own loops).
    Busy,
}

impl core::fmt::Display for WindowError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            WindowError::OutOfWindow { va, len } => {
                write!(f, "{len:#x} bytes at {va:#x} are not inside the managed window")
            }
            WindowError::Busy => write!(f, "CPU access to managed memory is already in progress"),
        }
    }
}

/// `[va, va + len)` when it lies inside the window.
fn check(va: u64, len: u64) -> Result<(), WindowError> {
    let end = va.checked_add(len);
    match end {
        Some(end) if va >= paging::MANAGED_BASE && end <= paging::MANAGED_LIMIT => Ok(()),
        _ => Err(WindowError::OutOfWindow { va, len }),
    }
}

/// The 8-byte word at `va` (8-byte aligned, inside the window), by one volatile load; a first
/// touch page-faults into the managed-memory service, and a fault it cannot serve is fatal.
pub fn read_u64(va: u64) -> Result<u64, WindowError> {
    if !va.is_multiple_of(8) {
        return Err(WindowError::OutOfWindow { va, len: 8 });
    }
    check(va, 8)?;
    // SAFETY: an aligned address inside the managed window, which holds no Rust object (module
    // notes): the load either reads a mapped managed page, or faults and is re-executed once a
    // service mapped it, or ends the run through the fatal-exception report.
    Ok(unsafe { core::ptr::read_volatile(va as *const u64) })
}

/// Writes the 8-byte word at `va` (as [`read_u64`]).
pub fn write_u64(va: u64, value: u64) -> Result<(), WindowError> {
    if !va.is_multiple_of(8) {
        return Err(WindowError::OutOfWindow { va, len: 8 });
    }
    check(va, 8)?;
    // SAFETY: as in `read_u64`; the store goes to a managed page, which no Rust object is.
    unsafe { core::ptr::write_volatile(va as *mut u64, value) };
    Ok(())
}

/// Copies `buf.len()` bytes from the window at `va` into `buf`, or from `buf` into the window
/// when `store`: byte accesses up to 8-byte alignment, then 8-byte ones. `check`ed by callers.
fn copy_loop(va: u64, buf: &mut [u8], store: bool) {
    let mut addr = va;
    let mut i = 0;
    while i < buf.len() {
        let word = addr.is_multiple_of(8) && buf.len() - i >= 8;
        // SAFETY: `[va, va + buf.len())` is inside the managed window (checked by the caller),
        // which holds no Rust object: each access either reaches a mapped managed page or
        // faults and is re-executed after a service mapped the page (or the run ends).
        unsafe {
            match (word, store) {
                (true, false) => {
                    let w = core::ptr::read_volatile(addr as *const u64);
                    buf[i..i + 8].copy_from_slice(&w.to_le_bytes());
                }
                (true, true) => {
                    let mut w = [0u8; 8];
                    w.copy_from_slice(&buf[i..i + 8]);
                    core::ptr::write_volatile(addr as *mut u64, u64::from_le_bytes(w));
                }
                (false, false) => buf[i] = core::ptr::read_volatile(addr as *const u8),
                (false, true) => core::ptr::write_volatile(addr as *mut u8, buf[i]),
            }
        }
        let step = if word { 8 } else { 1 };
        addr += step as u64;
        i += step;
    }
}

/// Runs `body` with `service` lent to [`serve_lent`], cleared before this returns (or unwinds).
fn lend(service: &mut Service<'_>, body: impl FnOnce()) -> Result<(), WindowError> {
    let raw: NonNull<Service<'_>> = NonNull::from(service);
    // SAFETY: only the trait object's lifetime is erased. The pointer lives in `LENT` until
    // `Clear` runs, when this function returns or unwinds, before `service`'s borrow ends, so
    // it is never used after what the service borrows is gone.
    let raw: NonNull<Service<'static>> = unsafe { core::mem::transmute(raw) };
    {
        let mut slot = LENT.lock();
        if slot.is_some() {
            return Err(WindowError::Busy);
        }
        *slot = Some(Lent(raw));
    }
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            *LENT.lock() = None;
        }
    }
    let _clear = Clear;
    body();
    Ok(())
}

/// Offers a page fault at `cr2` to the service a copy lent, if one is lent now: `Some(served)`,
/// or `None` when none is (or it is running already: a fault inside it is not resolvable).
pub fn serve_lent(cr2: u64, write: bool) -> Option<bool> {
    // Held while the service runs: it cannot be entered twice.
    let guard = LENT.try_lock()?;
    let lent = guard.as_ref()?;
    // SAFETY: stored by `lend`, which is still running (it clears the slot before it returns),
    // so what the service borrows is alive. The flow `lend` runs is one of `copy_loop`'s
    // volatile accesses, interrupted by this fault: it holds no reference the service can
    // reach (its buffer is this module's, the window holds no Rust object), and nothing else
    // uses the service meanwhile (the caller of `copy_in_place` lent it by `&mut`; the lock
    // held here keeps it from running twice).
    Some(unsafe { (&mut *lent.0.as_ptr())(cr2, write) })
}

/// Runs `pass(offset, bytes)` over the `len` bytes of the window at `va`, one page at a time
/// and in order (`offset` is the piece's offset from `va`): each piece is copied out of the
/// window, handed to `pass`, and copied back whole. Faults during the copies are first offered
/// to `service` (a page not mapped for the CPU is brought in by it, as demand paging does);
/// `pass` runs on the copy, with nothing lent.
pub fn copy_in_place(
    va: u64,
    len: u64,
    service: &mut Service<'_>,
    pass: &mut dyn FnMut(usize, &mut [u8]),
) -> Result<(), WindowError> {
    check(va, len)?;
    let end = va + len;
    let mut piece = vec![0u8; PAGE_SIZE as usize];
    let mut at = va;
    while at < end {
        let n = ((at & !(PAGE_SIZE - 1)) + PAGE_SIZE).min(end) - at;
        let bytes = &mut piece[..n as usize];
        lend(service, || copy_loop(at, bytes, false))?;
        pass((at - va) as usize, bytes);
        lend(service, || copy_loop(at, bytes, true))?;
        at += n;
    }
    Ok(())
}
