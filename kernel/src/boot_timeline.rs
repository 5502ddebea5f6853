//! The kernel's one boot timeline (`kernel::timeline`), stamped with the TSC clock: stages are
//! marked as boot and the application reach them, and reported at the end of boot and at the
//! end of the application.

use kernel::timeline::Timeline;

static TIMELINE: spin::Mutex<Timeline> = spin::Mutex::new(Timeline::new());

/// Records that `stage` was reached now.
pub fn mark(stage: &'static str) {
    let now = crate::time::nanos_since_entry();
    TIMELINE.lock().mark(stage, None, now);
}

/// Records that GPU `gpu` (in bring-up order) reached `stage` now.
pub fn mark_gpu(stage: &'static str, gpu: usize) {
    let now = crate::time::nanos_since_entry();
    TIMELINE.lock().mark(stage, u8::try_from(gpu).ok(), now);
}

/// Prints the stages so far, one line each, then the JSON line (`timeline json: ...`).
pub fn report(phase: &str) {
    let timeline = TIMELINE.lock().clone();
    for line in timeline.lines(phase) {
        log::info!(target: "kernel", "{line}");
    }
    log::info!(target: "kernel", "timeline json: {}", timeline.json(phase));
}
