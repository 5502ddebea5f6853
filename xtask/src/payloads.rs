//! The example application's kernels as boot modules: the project's CUDA sources in `payloads/`,
//! compiled to PTX by Debian's clang-19 when the image is built (nothing generated is committed),
//! for sm_75 (Turing), sm_80 (Ampere and Ada) and sm_90 (Hopper). Module names: `payload-NAME-ARCH.ptx`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::iso::Module;
use crate::util::{error, target_dir, workspace_root, Context, Result};

/// The example application's sources.
pub const APP_PAYLOADS: &[&str] = &["vector_add", "saxpy", "matmul", "reduce", "histogram", "mandelbrot", "managed"];
/// The PTX targets compiled.
pub const ARCHES: &[&str] = &["sm_75", "sm_80", "sm_90"];

/// Compiles every payload for every target (when its source changed) and returns the modules.
pub fn modules() -> Result<Vec<Module>> {
    let src_dir = workspace_root().join("payloads");
    let sources: Vec<PathBuf> = APP_PAYLOADS.iter().map(|n| src_dir.join(format!("{n}.cu"))).collect();
    compile(&sources, &target_dir().join("payloads"))
}

/// Compiles each CUDA source (`NAME.cu`) for every target into `out_dir`, when the source or
/// the shim changed, as the boot modules `payload-NAME-ARCH.ptx`. Sources find the project's
/// `cuda_shim.h` by `#include "cuda_shim.h"` wherever they live.
pub fn compile(sources: &[PathBuf], out_dir: &Path) -> Result<Vec<Module>> {
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let shim_dir = workspace_root().join("payloads");
    let shim = shim_dir.join("cuda_shim.h");
    let mut modules = Vec::new();
    for source in sources {
        let name = source
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| error(format!("{}: not a NAME.cu file", source.display())))?;
        for arch in ARCHES {
            let out: PathBuf = out_dir.join(format!("payload-{name}-{arch}.ptx"));
            let fresh = std::fs::metadata(&out)
                .and_then(|o| o.modified())
                .ok()
                .zip(newest(&[source, &shim]))
                .is_some_and(|(built, src)| built >= src);
            if !fresh {
                let status = Command::new("clang-19")
                    .args(["-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib"])
                    .arg(format!("--cuda-gpu-arch={arch}"))
                    .args(["-Xclang", "-target-feature", "-Xclang", "+ptx78", "-O2", "-S"])
                    .arg("-I")
                    .arg(&shim_dir)
                    .arg(source)
                    .arg("-o")
                    .arg(&out)
                    .status()
                    .map_err(|e| {
                        error(format!("cannot run clang-19 ({e}): run `sudo scripts/install-deps.sh cuda`"))
                    })?;
                if !status.success() {
                    return Err(error(format!("clang-19 failed on {} for {arch}", source.display())));
                }
            }
            modules.push(Module { path: out, name: format!("payload-{name}-{arch}.ptx") });
        }
    }
    Ok(modules)
}

fn newest(paths: &[&PathBuf]) -> Option<std::time::SystemTime> {
    paths.iter().filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok()).max()
}
