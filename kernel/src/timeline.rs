//! The boot timeline: the stages of a boot and of the application, each with the time since
//! kernel entry it was reached at, printed at the end of boot and at the end of the application
//! and written as one JSON line that `cargo xtask run` and the QEMU suite save next to the
//! serial log (`*.timeline.json`).
//!
//! The log contract (xtask's `klog::parse_timeline` reads it):
//! - one line per stage, `timeline: PHASE: STAGE at MS ms (+DELTA ms)`, the stage of a GPU
//!   written `STAGE (gpuN)`;
//! - then `timeline json: {"phase":"PHASE","stages":[{"stage":"STAGE","gpu":N|null,"ms":MS},...],"dropped":N}`,
//!   `ms` with microsecond precision, stages in the order they were reached.
//!
//! This is the host-testable record; the binary keeps one behind a lock and stamps it with the
//! TSC clock (`main.rs`'s `boot_timeline`).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

/// How many stages a timeline keeps; later marks are counted in `dropped`, not kept.
pub const CAPACITY: usize = 64;

/// One stage reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    /// What was reached, e.g. `platform ready`.
    pub name: &'static str,
    /// The GPU (index in bring-up order) the stage belongs to, if any.
    pub gpu: Option<u8>,
    /// Nanoseconds since kernel entry.
    pub ns: u64,
}

/// The stages reached so far, in order.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    stages: Vec<Stage>,
    dropped: u32,
}

impl Timeline {
    pub const fn new() -> Self {
        Self { stages: Vec::new(), dropped: 0 }
    }

    /// Records `name` (of `gpu`) reached at `ns` since entry.
    pub fn mark(&mut self, name: &'static str, gpu: Option<u8>, ns: u64) {
        if self.stages.len() < CAPACITY {
            self.stages.push(Stage { name, gpu, ns });
        } else {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// Marks that did not fit.
    pub fn dropped(&self) -> u32 {
        self.dropped
    }

    /// The first time `name` was reached (by any GPU).
    pub fn first(&self, name: &str) -> Option<&Stage> {
        self.stages.iter().find(|s| s.name == name)
    }

    /// One line per stage: `timeline: PHASE: STAGE[ (gpuN)] at MS ms (+DELTA ms)`, the delta
    /// from the stage before (from entry for the first).
    pub fn lines(&self, phase: &str) -> Vec<String> {
        let mut previous = 0u64;
        self.stages
            .iter()
            .map(|s| {
                let mut line = String::new();
                let _ = write!(line, "timeline: {phase}: {}", s.name);
                if let Some(gpu) = s.gpu {
                    let _ = write!(line, " (gpu{gpu})");
                }
                let _ = write!(line, " at {} ms (+{} ms)", Millis(s.ns), Millis(s.ns.saturating_sub(previous)));
                previous = s.ns;
                line
            })
            .collect()
    }

    /// The JSON object of the log contract, without the `timeline json: ` prefix.
    pub fn json(&self, phase: &str) -> String {
        let mut out = String::new();
        out.push_str("{\"phase\":");
        json_string(&mut out, phase);
        out.push_str(",\"stages\":[");
        for (i, s) in self.stages.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"stage\":");
            json_string(&mut out, s.name);
            match s.gpu {
                Some(gpu) => {
                    let _ = write!(out, ",\"gpu\":{gpu}");
                }
                None => out.push_str(",\"gpu\":null"),
            }
            let _ = write!(out, ",\"ms\":{}}}", Millis(s.ns));
        }
        let _ = write!(out, "],\"dropped\":{}}}", self.dropped);
        out
    }
}

/// Nanoseconds shown as milliseconds with three decimals (`301.042`).
struct Millis(u64);

impl core::fmt::Display for Millis {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1_000_000, (self.0 / 1_000) % 1_000)
    }
}

/// `s` as a JSON string (RFC 8259 section 7: quote, backslash and control characters escaped).
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Timeline {
        let mut t = Timeline::new();
        t.mark("platform ready", None, 45_123_456);
        t.mark("GSP-RM up", Some(0), 301_000_999);
        t.mark("first result", None, 1_400_000_000);
        t
    }

    #[test]
    fn lines_give_each_stage_its_time_and_the_step_from_the_one_before() {
        assert_eq!(
            sample().lines("boot"),
            [
                "timeline: boot: platform ready at 45.123 ms (+45.123 ms)",
                "timeline: boot: GSP-RM up (gpu0) at 301.000 ms (+255.877 ms)",
                "timeline: boot: first result at 1400.000 ms (+1098.999 ms)",
            ]
        );
    }

    #[test]
    fn json_is_the_documented_object() {
        assert_eq!(
            sample().json("application"),
            "{\"phase\":\"application\",\"stages\":[\
             {\"stage\":\"platform ready\",\"gpu\":null,\"ms\":45.123},\
             {\"stage\":\"GSP-RM up\",\"gpu\":0,\"ms\":301.000},\
             {\"stage\":\"first result\",\"gpu\":null,\"ms\":1400.000}],\"dropped\":0}"
        );
        assert_eq!(Timeline::new().json("boot"), "{\"phase\":\"boot\",\"stages\":[],\"dropped\":0}");
    }

    #[test]
    fn names_are_escaped_and_marks_past_the_capacity_are_counted() {
        let mut t = Timeline::new();
        t.mark("a \"quoted\" \\ stage\n", None, 0);
        assert!(t.json("p").contains("\"a \\\"quoted\\\" \\\\ stage\\u000a\""));
        for i in 0..CAPACITY as u64 + 3 {
            t.mark("x", None, i);
        }
        assert_eq!(t.stages().len(), CAPACITY);
        assert_eq!(t.dropped(), 4);
        assert!(t.json("p").ends_with(",\"dropped\":4}"));
        assert_eq!(t.first("x").map(|s| s.ns), Some(0));
    }
}
