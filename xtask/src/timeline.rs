//! The kernel's boot timeline (`kernel::timeline`), read back from a serial log and saved as JSON
//! next to it: `run.log` → `run.timeline.json`, a suite case's `CASE.log` → `CASE.timeline.json`.
//!
//! The file: `{"serial_log": "PATH", "phases": [PHASE, ...]}`, each PHASE the kernel's own
//! `timeline json:` object (`{"phase", "stages": [{"stage", "gpu", "ms"}], "dropped"}`), in the
//! order the kernel printed them (`boot`, then `application` when the application ran).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{error, Context, Result};

/// One phase as the kernel reported it.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub name: String,
    /// `(stage, gpu, ms since entry)`, in order.
    pub stages: Vec<(String, Option<u64>, f64)>,
    pub json: Value,
}

impl Phase {
    /// The time of the first stage called `stage`.
    pub fn ms(&self, stage: &str) -> Option<f64> {
        self.stages.iter().find(|(s, _, _)| s == stage).map(|&(_, _, ms)| ms)
    }
}

/// The object on a `timeline json: {...}` line, checked against the contract: a phase name,
/// stages with a name, a GPU index or null and a time, in non-decreasing time.
pub fn parse_line(line: &str) -> Option<Result<Phase>> {
    let (_, text) = line.split_once("timeline json: ")?;
    Some(parse_object(text.trim()))
}

fn parse_object(text: &str) -> Result<Phase> {
    let json: Value = serde_json::from_str(text).context("a timeline line that is not JSON")?;
    let name = json["phase"].as_str().context("a timeline without a phase name")?.to_string();
    let list = json["stages"].as_array().with_context(|| format!("timeline {name}: no stages array"))?;
    let mut stages = Vec::with_capacity(list.len());
    for stage in list {
        let what = stage["stage"].as_str().with_context(|| format!("timeline {name}: a stage without a name"))?;
        let gpu = match &stage["gpu"] {
            Value::Null => None,
            g => Some(g.as_u64().with_context(|| format!("timeline {name}: stage {what}: gpu {g} is no index"))?),
        };
        let ms = stage["ms"].as_f64().with_context(|| format!("timeline {name}: stage {what} has no time"))?;
        if let Some(&(ref before, _, previous)) = stages.last() {
            if ms < previous {
                return Err(error(format!(
                    "timeline {name}: stage {what} at {ms} ms comes before {before} at {previous} ms"
                )));
            }
        }
        stages.push((what.to_string(), gpu, ms));
    }
    Ok(Phase { name, stages, json })
}

/// Every phase in `lines`, in order.
pub fn phases<'a>(lines: impl IntoIterator<Item = &'a str>) -> Result<Vec<Phase>> {
    lines.into_iter().filter_map(parse_line).collect()
}

/// Where the timeline of serial log `log` goes.
pub fn path_for(log: &Path) -> PathBuf {
    log.with_extension("timeline.json")
}

/// Writes the phases of `lines` next to `log`; returns the file, or None when the log holds no
/// timeline (a boot that ended before the kernel printed one: nothing is written, and an older
/// file from an earlier run is removed so that it cannot be mistaken for this one's).
pub fn save<'a>(log: &Path, lines: impl IntoIterator<Item = &'a str>) -> Result<Option<PathBuf>> {
    let phases = phases(lines)?;
    let path = path_for(log);
    if phases.is_empty() {
        if path.exists() {
            std::fs::remove_file(&path).with_context(|| format!("removing the stale {}", path.display()))?;
        }
        return Ok(None);
    }
    let file = json!({
        "serial_log": log.display().to_string(),
        "phases": phases.iter().map(|p| p.json.clone()).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string_pretty(&file).context("the timeline as JSON")?;
    std::fs::write(&path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(path))
}

/// The stages of `phase` as a table for the terminal: stage, time since entry, step.
pub fn table(phase: &Phase) -> String {
    let mut out = format!("timeline ({}):\n", phase.name);
    let mut previous = 0.0;
    for (stage, gpu, ms) in &phase.stages {
        let label = match gpu {
            Some(g) => format!("{stage} (gpu{g})"),
            None => stage.clone(),
        };
        out.push_str(&format!("  {label:<28} {ms:>10.1} ms  {:>+10.1} ms\n", ms - previous));
        previous = *ms;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOT: &str = "[   310 ms] INFO  kernel: timeline json: {\"phase\":\"boot\",\"stages\":[\
        {\"stage\":\"platform ready\",\"gpu\":null,\"ms\":45.123},{\"stage\":\"GSP-RM up\",\"gpu\":0,\"ms\":301.000}],\"dropped\":0}";

    #[test]
    fn a_timeline_line_is_read_with_its_stages() {
        let phase = parse_line(BOOT).unwrap().unwrap();
        assert_eq!(phase.name, "boot");
        assert_eq!(
            phase.stages,
            [("platform ready".to_string(), None, 45.123), ("GSP-RM up".to_string(), Some(0), 301.0)]
        );
        assert_eq!(phase.ms("GSP-RM up"), Some(301.0));
        assert_eq!(phase.ms("first result"), None);
        assert!(parse_line("[ 1 ms] INFO  kernel: timeline: boot: platform ready at 45.123 ms").is_none());
        let table = table(&phase);
        assert!(table.contains("GSP-RM up (gpu0)"), "{table}");
        assert!(table.contains("+255.9 ms"), "{table}");
    }

    #[test]
    fn a_timeline_out_of_order_or_malformed_is_an_error() {
        for bad in [
            "timeline json: {\"phase\":\"boot\",\"stages\":[{\"stage\":\"a\",\"gpu\":null,\"ms\":5.0},{\"stage\":\"b\",\"gpu\":null,\"ms\":4.0}]}",
            "timeline json: {\"phase\":\"boot\",\"stages\":[{\"stage\":\"a\",\"gpu\":\"x\",\"ms\":5.0}]}",
            "timeline json: {\"phase\":\"boot\",\"stages\":[{\"stage\":\"a\",\"gpu\":null}]}",
            "timeline json: {\"stages\":[]}",
            "timeline json: {\"phase\":\"boot\"",
        ] {
            assert!(parse_line(bad).unwrap().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_file_holds_every_phase_and_a_log_without_one_leaves_none() {
        let dir = std::env::temp_dir().join(format!("xtask-timeline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("run.log");
        let app = "timeline json: {\"phase\":\"application\",\"stages\":[{\"stage\":\"first result\",\"gpu\":null,\"ms\":1400.5}],\"dropped\":0}";
        let written = save(&log, [BOOT, "noise", app]).unwrap().unwrap();
        assert_eq!(written, dir.join("run.timeline.json"));
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&written).unwrap()).unwrap();
        assert_eq!(file["phases"][0]["phase"], "boot");
        assert_eq!(file["phases"][1]["stages"][0]["ms"], 1400.5);
        assert_eq!(file["serial_log"], log.display().to_string());
        assert_eq!(save(&log, ["no timeline here"]).unwrap(), None);
        assert!(!written.exists(), "a stale timeline is removed");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
