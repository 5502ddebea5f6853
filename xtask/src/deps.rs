//! Host tools: `scripts/install-deps.sh` checks them and installs what is missing (as root), or
//! says exactly what to install.

use std::process::Command;

use crate::util::{error, run_status, workspace_root, Result};

/// Runs `scripts/install-deps.sh GROUP...` (groups: qemu, iso, uefi, acpi, cuda, edid; none = all).
pub fn ensure(groups: &[&str]) -> Result<()> {
    let script = workspace_root().join("scripts").join("install-deps.sh");
    if !script.is_file() {
        return Err(error(format!("{} is missing", script.display())));
    }
    let mut cmd = Command::new("bash");
    cmd.arg(&script).args(groups).current_dir(workspace_root());
    run_status(&mut cmd).map_err(|e| error(format!("host tools missing ({e}); see the lines above")))
}
