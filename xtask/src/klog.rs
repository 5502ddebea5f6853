//! Parsers for the kernel's serial log, per the kernel/xtask contract:
//! - PCI function lines: `pci SSSS:BB:DD.F [VVVV:DDDD] class CCCCCC` anywhere in a line;
//! - `pci: scan complete, N functions; waiting for host` (with the `pci-handshake` word);
//! - `platform ready in N ms`, once per boot;
//! - in-kernel tests: `ktest: running N tests`, `ktest NAME ... ok` (maybe followed by a time,
//!   `ok (5 ms)`), `ktest NAME ... FAILED: reason`, `ktest NAME ... skipped: reason`,
//!   `ktest result: P passed, F failed` (maybe followed by `, S skipped`).
//!
//! Lines may carry anything before these (the log prefix, firmware or GRUB escape sequences on the
//! same serial line), so every pattern is searched for, not anchored.

use std::fmt;

/// One PCI function as the kernel reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KernelPciFunction {
    pub segment: u16,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
    pub vendor_id: u16,
    pub device_id: u16,
    /// Base class, subclass and programming interface: 24 bits.
    pub class_code: u32,
}

impl fmt::Display for KernelPciFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{} [{:04x}:{:04x}] class {:06x}",
            self.segment, self.bus, self.device, self.function, self.vendor_id, self.device_id, self.class_code
        )
    }
}

/// Matches exactly the regex of the contract,
/// `pci ([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7]) \[([0-9a-f]{4}):([0-9a-f]{4})\] class ([0-9a-f]{6})`,
/// at its first match in the line (lowercase hex only, as the regex says).
pub fn parse_pci_line(line: &str) -> Option<KernelPciFunction> {
    let bytes = line.as_bytes();
    (0..bytes.len()).find_map(|start| parse_pci_at(&bytes[start..]))
}

fn parse_pci_at(s: &[u8]) -> Option<KernelPciFunction> {
    let mut cursor = Cursor { rest: s };
    cursor.literal(b"pci ")?;
    let segment = cursor.hex(4)? as u16;
    cursor.literal(b":")?;
    let bus = cursor.hex(2)? as u8;
    cursor.literal(b":")?;
    let device = cursor.hex(2)? as u8;
    cursor.literal(b".")?;
    let function = cursor.hex(1)? as u8;
    if function > 7 {
        return None;
    }
    cursor.literal(b" [")?;
    let vendor_id = cursor.hex(4)? as u16;
    cursor.literal(b":")?;
    let device_id = cursor.hex(4)? as u16;
    cursor.literal(b"] class ")?;
    let class_code = cursor.hex(6)?;
    Some(KernelPciFunction { segment, bus, device, function, vendor_id, device_id, class_code })
}

struct Cursor<'a> {
    rest: &'a [u8],
}

impl Cursor<'_> {
    fn literal(&mut self, expected: &[u8]) -> Option<()> {
        self.rest = self.rest.strip_prefix(expected)?;
        Some(())
    }

    /// Exactly `digits` lowercase hex digits.
    fn hex(&mut self, digits: usize) -> Option<u32> {
        let (head, tail) = self.rest.split_at_checked(digits)?;
        let mut value = 0u32;
        for &b in head {
            let nibble = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                _ => return None,
            };
            value = value << 4 | u32::from(nibble);
        }
        self.rest = tail;
        Some(value)
    }
}

/// The `pci: scan complete, N functions[; waiting for host]` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanComplete {
    pub functions: usize,
    pub waiting_for_host: bool,
}

pub fn parse_scan_complete(line: &str) -> Option<ScanComplete> {
    let at = line.find("pci: scan complete, ")?;
    let rest = &line[at + "pci: scan complete, ".len()..];
    let (count, rest) = leading_number(rest)?;
    let rest = rest.strip_prefix(" functions")?;
    Some(ScanComplete { functions: usize::try_from(count).ok()?, waiting_for_host: rest.contains("waiting for host") })
}

/// `platform ready in N ms` → N.
pub fn parse_platform_ready(line: &str) -> Option<u64> {
    let at = line.find("platform ready in ")?;
    let (ms, rest) = leading_number(&line[at + "platform ready in ".len()..])?;
    rest.starts_with(" ms").then_some(ms)
}

/// A decimal number at the start of `s`, and what follows it.
fn leading_number(s: &str) -> Option<(u64, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let value = s[..end].parse().ok()?;
    Some((value, &s[end..]))
}

/// What one line says about the in-kernel tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KtestLine {
    Running(u64),
    Passed(String),
    Failed { name: String, reason: String },
    Skipped { name: String, reason: String },
    Result { passed: u64, failed: u64, skipped: Option<u64> },
}

pub fn parse_ktest_line(line: &str) -> Option<KtestLine> {
    let mut search = line;
    while let Some(at) = search.find("ktest") {
        let rest = &search[at + "ktest".len()..];
        if let Some(parsed) = parse_ktest_after_word(rest) {
            return Some(parsed);
        }
        search = rest;
    }
    None
}

fn parse_ktest_after_word(rest: &str) -> Option<KtestLine> {
    if let Some(r) = rest.strip_prefix(": running ") {
        let (n, r) = leading_number(r)?;
        return r.starts_with(" test").then_some(KtestLine::Running(n));
    }
    if let Some(r) = rest.strip_prefix(" result: ") {
        let (passed, r) = leading_number(r)?;
        let r = r.strip_prefix(" passed, ")?;
        let (failed, r) = leading_number(r)?;
        let r = r.strip_prefix(" failed")?;
        let skipped =
            r.strip_prefix(", ").and_then(leading_number).filter(|(_, r)| r.starts_with(" skipped")).map(|(n, _)| n);
        return Some(KtestLine::Result { passed, failed, skipped });
    }
    let r = rest.strip_prefix(' ')?;
    let (name, outcome) = r.split_once(" ... ")?;
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let outcome = outcome.trim_end();
    let (word, detail) = outcome.split_once([' ', ':']).unwrap_or((outcome, ""));
    let detail = detail.trim_start_matches([' ', ':']).trim().to_string();
    let name = name.to_string();
    match word {
        "ok" => Some(KtestLine::Passed(name)),
        "FAILED" => Some(KtestLine::Failed { name, reason: detail }),
        "skipped" => Some(KtestLine::Skipped { name, reason: detail }),
        _ => None,
    }
}

/// Everything a boot's serial log said about the in-kernel tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KtestReport {
    pub announced: Option<u64>,
    pub passed: Vec<String>,
    pub failed: Vec<(String, String)>,
    pub skipped: Vec<(String, String)>,
    /// Passed, failed, and skipped when the line counts them.
    pub result: Option<(u64, u64, Option<u64>)>,
}

impl KtestReport {
    pub fn from_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Self {
        let mut report = KtestReport::default();
        for line in lines {
            match parse_ktest_line(line) {
                Some(KtestLine::Running(n)) => report.announced = Some(n),
                Some(KtestLine::Passed(name)) => report.passed.push(name),
                Some(KtestLine::Failed { name, reason }) => report.failed.push((name, reason)),
                Some(KtestLine::Skipped { name, reason }) => report.skipped.push((name, reason)),
                Some(KtestLine::Result { passed, failed, skipped }) => report.result = Some((passed, failed, skipped)),
                None => {}
            }
        }
        report
    }

    /// The suite's rule: a `ktest result: N passed, 0 failed` line with N > 0, agreeing with
    /// the announced count and the per-test lines (skipped tests are allowed). Err says why not.
    pub fn verdict(&self) -> Result<u64, String> {
        let Some((passed, failed, skipped)) = self.result else {
            let seen = if self.passed.is_empty() && self.failed.is_empty() {
                "no ktest lines at all".to_string()
            } else {
                format!("{} ok and {} FAILED lines before it stopped", self.passed.len(), self.failed.len())
            };
            return Err(format!("no 'ktest result:' line ({seen})"));
        };
        if failed > 0 || !self.failed.is_empty() {
            let names: Vec<String> = self.failed.iter().map(|(name, reason)| format!("{name} ({reason})")).collect();
            return Err(format!("{failed} in-kernel test(s) failed: {}", names.join(", ")));
        }
        if passed == 0 {
            return Err("the kernel ran 0 tests".to_string());
        }
        let skipped = skipped.unwrap_or(self.skipped.len() as u64);
        if let Some(announced) = self.announced {
            if announced != passed + failed + skipped {
                return Err(format!(
                    "the kernel announced {announced} tests but reported {passed} passed, {failed} failed, {skipped} skipped"
                ));
            }
        }
        if self.passed.len() as u64 != passed {
            return Err(format!("the result line says {passed} passed but {} tests printed 'ok'", self.passed.len()));
        }
        Ok(passed)
    }
}

/// What QEMU's exit status means under isa-debug-exit (iobase 0xf4): the kernel writes 0x10
/// (QEMU exits (0x10 << 1) | 1 = 33) on success and 0x11 (35) on failure.
pub fn describe_exit(code: Option<i32>) -> Result<(), String> {
    match code {
        Some(33) => Ok(()),
        Some(35) => Err("the kernel reported failure (QEMU exit 35)".to_string()),
        Some(0) => Err("QEMU exited 0: the guest reset or shut down instead of exiting through isa-debug-exit \
             (a triple fault ends QEMU under -no-reboot)"
            .to_string()),
        Some(1) => Err("QEMU exited 1: QEMU itself failed (see its output)".to_string()),
        Some(code) => Err(format!("QEMU exited {code}, which is neither 33 (pass) nor 35 (fail)")),
        None => Err("QEMU was killed by a signal".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_line_with_log_prefix() {
        let f = parse_pci_line("[    1234 ms] INFO  pci: pci 0000:00:1f.2 [8086:2922] class 010601").unwrap();
        assert_eq!(
            f,
            KernelPciFunction {
                segment: 0,
                bus: 0,
                device: 0x1f,
                function: 2,
                vendor_id: 0x8086,
                device_id: 0x2922,
                class_code: 0x010601
            }
        );
        assert_eq!(f.to_string(), "0000:00:1f.2 [8086:2922] class 010601");
    }

    #[test]
    fn pci_line_anywhere_and_with_trailing_text() {
        let f = parse_pci_line("\x1b[0mgarbage pci pci 0001:80:00.0 [1b36:000c] class 060400 (bridge)\r").unwrap();
        assert_eq!((f.segment, f.bus, f.vendor_id, f.class_code), (1, 0x80, 0x1b36, 0x060400));
    }

    #[test]
    fn pci_line_rejects_what_the_regex_rejects() {
        for bad in [
            "pci 0000:00:1f.8 [8086:2922] class 010601",  // function > 7
            "pci 0000:00:1F.2 [8086:2922] class 010601",  // uppercase hex
            "pci 000:00:1f.2 [8086:2922] class 010601",   // short segment
            "pci 0000:00:1f.2 [8086:2922] class 0106",    // short class
            "pci 0000:00:1f.2 [8086:2922]  class 010601", // two spaces
            "pci: scan complete, 6 functions",
            "                 bar0: mem 0xfebd0000 size 0x1000",
        ] {
            assert_eq!(parse_pci_line(bad), None, "{bad}");
        }
    }

    #[test]
    fn scan_complete_and_handshake() {
        assert_eq!(
            parse_scan_complete("[  10 ms] INFO  pci: scan complete, 12 functions; waiting for host"),
            Some(ScanComplete { functions: 12, waiting_for_host: true })
        );
        assert_eq!(
            parse_scan_complete("pci: scan complete, 6 functions"),
            Some(ScanComplete { functions: 6, waiting_for_host: false })
        );
        assert_eq!(parse_scan_complete("pci: scan complete, many functions"), None);
    }

    #[test]
    fn platform_ready() {
        assert_eq!(parse_platform_ready("[  812 ms] INFO  platform ready in 811 ms"), Some(811));
        assert_eq!(parse_platform_ready("platform ready in soon"), None);
        assert_eq!(parse_platform_ready("platform ready in 5 s"), None);
    }

    #[test]
    fn ktest_lines() {
        assert_eq!(parse_ktest_line("[ 1 ms] INFO  ktest: running 42 tests"), Some(KtestLine::Running(42)));
        assert_eq!(parse_ktest_line("ktest: running 1 test"), Some(KtestLine::Running(1)));
        assert_eq!(
            parse_ktest_line("[ 1 ms] INFO  ktest mem::frames::alloc_free ... ok"),
            Some(KtestLine::Passed("mem::frames::alloc_free".into()))
        );
        assert_eq!(
            parse_ktest_line("[ 1 ms] ERROR ktest pci::ecam ... FAILED: expected 6 functions, found 5"),
            Some(KtestLine::Failed { name: "pci::ecam".into(), reason: "expected 6 functions, found 5".into() })
        );
        assert_eq!(
            parse_ktest_line("ktest result: 41 passed, 1 failed"),
            Some(KtestLine::Result { passed: 41, failed: 1, skipped: None })
        );
        assert_eq!(
            parse_ktest_line("ktest result: 15 passed, 0 failed, 2 skipped"),
            Some(KtestLine::Result { passed: 15, failed: 0, skipped: Some(2) })
        );
        assert_eq!(parse_ktest_line("ktest heap_grows ... ok (141 ms)"), Some(KtestLine::Passed("heap_grows".into())));
        assert_eq!(
            parse_ktest_line("ktest nvme_queue ... skipped: no NVMe controller"),
            Some(KtestLine::Skipped { name: "nvme_queue".into(), reason: "no NVMe controller".into() })
        );
        assert_eq!(parse_ktest_line("ktest x ... okay"), None);
        assert_eq!(parse_ktest_line("ktest pci::ecam ... running"), None);
        assert_eq!(parse_ktest_line("nothing to see"), None);
    }

    fn report(log: &str) -> KtestReport {
        KtestReport::from_lines(log.lines())
    }

    #[test]
    fn verdict_passes_a_clean_run() {
        let r = report("ktest: running 2 tests\nktest a ... ok\nktest b ... ok\nktest result: 2 passed, 0 failed\n");
        assert_eq!(r.verdict(), Ok(2));
    }

    #[test]
    fn verdict_allows_skipped_tests_and_timings() {
        let r = report(
            "ktest: running 3 tests\nktest a ... ok (5 ms)\nktest b ... skipped: no device\n\
             ktest c ... ok (0 ms)\nktest result: 2 passed, 0 failed, 1 skipped\n",
        );
        assert_eq!(r.verdict(), Ok(2));
        assert_eq!(r.skipped, [("b".to_string(), "no device".to_string())]);
        let miscounted = report("ktest: running 3 tests\nktest a ... ok\nktest result: 1 passed, 0 failed, 1 skipped");
        assert!(miscounted.verdict().unwrap_err().contains("announced 3"));
    }

    #[test]
    fn verdict_fails_on_failures_zero_tests_and_missing_result() {
        let failed = report(
            "ktest: running 2 tests\nktest a ... ok\nktest b ... FAILED: boom\nktest result: 1 passed, 1 failed",
        );
        assert!(failed.verdict().unwrap_err().contains("b (boom)"));
        assert!(report("ktest: running 0 tests\nktest result: 0 passed, 0 failed").verdict().is_err());
        let cut = report("ktest: running 2 tests\nktest a ... ok\n");
        assert!(cut.verdict().unwrap_err().contains("no 'ktest result:' line"));
        assert!(report("").verdict().unwrap_err().contains("no ktest lines"));
    }

    #[test]
    fn verdict_fails_on_inconsistent_counts() {
        let short = report("ktest: running 3 tests\nktest a ... ok\nktest b ... ok\nktest result: 2 passed, 0 failed");
        assert!(short.verdict().unwrap_err().contains("announced 3"));
        let lying = report("ktest: running 2 tests\nktest a ... ok\nktest result: 2 passed, 0 failed");
        assert!(lying.verdict().unwrap_err().contains("printed 'ok'"));
    }

    #[test]
    fn exit_codes() {
        assert_eq!(describe_exit(Some(33)), Ok(()));
        assert!(describe_exit(Some(35)).is_err());
        assert!(describe_exit(Some(0)).unwrap_err().contains("triple fault"));
        assert!(describe_exit(None).is_err());
    }
}
