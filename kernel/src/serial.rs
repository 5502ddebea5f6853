//! The serial console (COM1, 16550 UART at I/O port 0x3F8) and the kernel's `log` backend.
//!
//! Every line: `[    1234 ms] LEVEL target: message`. Milliseconds count from kernel entry
//! (0 until the clock is calibrated).

use core::fmt::{self, Write};
use core::sync::atomic::{AtomicU8, Ordering};
use spin::Mutex;
use uart_16550::SerialPort;

static PORT: Mutex<Option<SerialPort>> = Mutex::new(None);
static MAX_LEVEL: AtomicU8 = AtomicU8::new(3); // Info

pub fn init() {
    let mut port = crate::arch::uart::com1();
    port.init();
    *PORT.lock() = Some(port);
    log::set_logger(&LOGGER).ok();
    log::set_max_level(log::LevelFilter::Trace);
}

pub fn set_level(level: log::LevelFilter) {
    MAX_LEVEL.store(level as u8, Ordering::Relaxed);
}

struct Writer<'a>(&'a mut SerialPort);

impl Write for Writer<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            if b == b'\n' {
                self.0.send(b'\r');
            }
            self.0.send(b);
        }
        Ok(())
    }
}

pub fn print(args: fmt::Arguments<'_>) {
    crate::arch::without_interrupts(|| {
        if let Some(port) = PORT.lock().as_mut() {
            let _ = Writer(port).write_fmt(args);
        }
    });
}

/// For the panic handler: does not wait for a lock a panicking holder may never release.
pub fn panic_print(args: fmt::Arguments<'_>) {
    // A handle of its own: concurrent use at panic time at worst interleaves characters.
    let mut port = crate::arch::uart::com1();
    let _ = Writer(&mut port).write_fmt(args);
}

/// Reads one byte from COM1 if one is waiting.
pub fn try_read() -> Option<u8> {
    crate::arch::without_interrupts(|| PORT.lock().as_mut().and_then(|p| p.try_receive().ok()))
}

#[macro_export]
macro_rules! println {
    () => { $crate::serial::print(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::serial::print(format_args!("{}\n", format_args!($($arg)*))) };
}

struct Logger;
static LOGGER: Logger = Logger;

impl log::Log for Logger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        (metadata.level() as u8) <= MAX_LEVEL.load(Ordering::Relaxed)
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let ms = crate::time::millis_since_entry();
        // Subsystem: the last path component of the module (`kernel::pci::scan` -> `pci`),
        // unless the call named a target explicitly.
        let target = record.target();
        let subsystem = target.strip_prefix("kernel::").unwrap_or(target);
        let subsystem = subsystem.split("::").next().unwrap_or(subsystem);
        print(format_args!("[{:>8} ms] {:<5} {}: {}\n", ms, record.level(), subsystem, record.args()));
    }

    fn flush(&self) {}
}
