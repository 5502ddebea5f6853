//! A user's own application, outside this repository:
//! - `cargo xtask new-app DIR` writes a template crate: a kernel in CUDA C (`kernels/`), a Rust
//!   `main` on the application API (`nvrt`) that runs it and checks the result, a README;
//! - `--app-crate DIR` (for `run` and `image`) builds that crate into the unikernel in place of
//!   the example application. Its kernels are compiled as the image build compiles the
//!   project's own (`payloads::compile`: clang-19 to PTX for sm_75, sm_80, sm_90).
//!
//! The unikernel links its application as the crate `app` and calls `app::main(&System)`. For
//! an outside crate, xtask writes a kernel manifest of its own under
//! `target/app-crates/NAME/kernel/Cargo.toml`: the kernel's own sources (by absolute path),
//! the same dependencies and profiles, `app` being the user's crate. It builds into
//! `target/app-build/`, so the repository's own kernel (`target/release/kernel`) is untouched.

use std::path::{Path, PathBuf};

use crate::iso::Module;
use crate::util::{cargo, error, run_status, target_dir, workspace_root, Context, Result};

/// A user's crate, as found on disk.
pub struct AppCrate {
    pub dir: PathBuf,
    /// Its package name.
    pub package: String,
    /// Its CUDA sources, `kernels/*.cu`, in name order.
    pub kernels: Vec<PathBuf>,
}

const TEMPLATE_KERNEL: &str = r#"// The application's kernel: y[i] = x[i] * x[i] + c. Compiled to PTX by clang-19 when the
// image is built (`cargo xtask run --app-crate`), one module per GPU architecture, loaded by
// `ctx.load_payload("square")`. `cuda_shim.h` comes with the unikernel's repository.
#include "cuda_shim.h"

extern "C" __global__ void square_plus(const float *x, float *y, float c, unsigned n) {
    unsigned i = global_thread_x();
    if (i < n) y[i] = x[i] * x[i] + c;
}
"#;

const TEMPLATE_MAIN: &str = r#"//! NAME: an application for the unikernel GPU runtime. `main` runs in the unikernel once
//! the GPUs are up; it uses only the application API (`nvrt`).
#![no_std]
extern crate alloc;

use alloc::vec::Vec;

use nvrt::{Error, LaunchConfig, System};

/// Elements the kernel squares.
const N: u32 = 10_000;

pub fn main(sys: &System<'_>) -> Result<bool, Error> {
    log::info!(target: "app", "{} GPU(s); command line: {:?}", sys.device_count(), sys.cmdline());
    let ctx = sys.open(0)?;
    let props = ctx.properties();
    log::info!(target: "app", "device 0: {} ({}, sm_{}), {} MiB", props.name, props.chip, props.sm_version, props.memory_bytes >> 20);

    // Input on the host, copied to the device; the output zeroed on the device. Quarter
    // steps below 256 square exactly, so the GPU's fused multiply-add (clang contracts
    // x * x + c) and the CPU's two roundings agree bit for bit.
    let x: Vec<f32> = (0..N).map(|i| (i % 1024) as f32 * 0.25).collect();
    let c = 3.0f32;
    let dx = ctx.htod(&x)?;
    let dy = ctx.alloc_zeros::<f32>(N as usize)?;

    // The kernel from kernels/square.cu, launched between two events.
    let module = ctx.load_payload("square")?;
    let square = module.function("square_plus")?;
    let stream = ctx.new_stream()?;
    let start = stream.record_event()?;
    stream.launch_builder(&square).arg(&dx).arg(&dy).arg(&c).arg(&N).launch(LaunchConfig::linear(N.div_ceil(256), 256))?;
    let end = stream.record_event()?;
    stream.synchronize()?;

    // The result back, checked against the CPU's own computation.
    let y = ctx.dtoh(&dy)?;
    let wrong = x.iter().zip(&y).filter(|(x, y)| (*x * *x + c).to_bits() != y.to_bits()).count();
    log::info!(target: "app", "square_plus: {} elements, {wrong} wrong, kernel {} ns on the GPU's clock", N, start.elapsed_ns(&end)?);
    if wrong == 0 {
        log::info!(target: "app", "NAME: ok");
    }
    Ok(wrong == 0)
}
"#;

const TEMPLATE_README: &str = r#"# NAME

An application for the unikernel GPU runtime: `src/lib.rs` is its `main`, written against the
application API (`nvrt`), and `kernels/*.cu` are its GPU kernels in CUDA C.

From the runtime's repository (REPO):

```sh
cargo xtask run --app-crate DIR      # build it into the unikernel and boot it in QEMU on a model GPU
cargo xtask image --app-crate DIR    # its bootable image, in target/image/
```

- `main(sys: &nvrt::System) -> Result<bool, nvrt::Error>` runs once the GPUs are up.
  `Ok(true)` ends the run with success, `Ok(false)` (a wrong result) or an error fails it
  (`Result<(), E>` works too).
- Every `kernels/NAME.cu` is compiled to PTX for each GPU architecture when the image is built
  and travels as a boot module; `ctx.load_payload("NAME")` loads the one for the device.
- Input data: any file given to `cargo xtask run --module PATH=NAME` is `sys.module("NAME")`;
  the kernel command line (`--append WORDS`) is `sys.cmdline()` and `sys.cmdline_value(KEY)`.
- Logging is the `log` crate; lines with target `app` appear on the console.
"#;

/// The package name for a directory: its last component, lower-case, `-` for anything else.
fn package_name(dir: &Path) -> Result<String> {
    let last = dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| error(format!("{}: cannot name a crate after this directory", dir.display())))?;
    let name: String =
        last.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let name = name.trim_matches('-').to_string();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) || name == "app" || name == "kernel" {
        return Err(error(format!(
            "{}: `{name}` cannot be the package name (it must start with a letter and not be `app` or `kernel`)",
            dir.display()
        )));
    }
    Ok(name)
}

/// `dir` made absolute from the current directory, `.` and `..` resolved by name.
fn absolute(dir: &str) -> Result<PathBuf> {
    let path = PathBuf::from(dir);
    let path = if path.is_absolute() { path } else { std::env::current_dir()?.join(path) };
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    Ok(out)
}

/// `cargo xtask new-app DIR`.
pub fn new_app(dir: &str) -> Result<PathBuf> {
    let dir = absolute(dir)?;
    let root = workspace_root();
    if dir.starts_with(&root) {
        return Err(error(format!(
            "{}: inside the runtime's repository; an application lives outside it (e.g. ../my-gpu-app)",
            dir.display()
        )));
    }
    if dir.exists() && std::fs::read_dir(&dir).map(|mut d| d.next().is_some()).unwrap_or(true) {
        return Err(error(format!("{}: exists and is not empty; nothing written", dir.display())));
    }
    let name = package_name(&dir)?;
    let crate_name = name.replace('-', "_");
    let nvrt = root.join("nvrt");
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n\
         # Built into the unikernel by `cargo xtask run --app-crate` (no_std + alloc).\n\
         [dependencies]\nnvrt = {{ path = \"{}\" }}\nlog = \"0.4\"\n\n\
         # A workspace of its own: the runtime's repository does not claim it.\n[workspace]\n",
        nvrt.display()
    );
    let files: [(&str, String); 5] = [
        ("Cargo.toml", manifest),
        ("src/lib.rs", TEMPLATE_MAIN.replace("NAME", &crate_name)),
        ("kernels/square.cu", TEMPLATE_KERNEL.to_string()),
        (
            "README.md",
            TEMPLATE_README
                .replace("NAME", &name)
                .replace("REPO", &root.display().to_string())
                .replace("DIR", &dir.display().to_string()),
        ),
        (".gitignore", "/target\n".to_string()),
    ];
    for (rel, text) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(dir)
}

/// Reads the crate at `dir`: its package name (from `[package]`) and kernels.
pub fn load(dir: &str) -> Result<AppCrate> {
    let dir = absolute(dir)?;
    let manifest = dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?;
    let mut section = "";
    let mut package = None;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[package]" {
            if let Some(v) = line.strip_prefix("name").map(str::trim).and_then(|r| r.strip_prefix('=')) {
                package = Some(v.trim().trim_matches('"').to_string());
            }
        }
    }
    let package = package.ok_or_else(|| error(format!("{}: no [package] name", manifest.display())))?;
    let mut kernels: Vec<PathBuf> = match std::fs::read_dir(dir.join("kernels")) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cu"))
            .collect(),
        Err(_) => Vec::new(),
    };
    kernels.sort();
    Ok(AppCrate { dir, package, kernels })
}

/// The crate's kernels as boot modules (`payload-NAME-ARCH.ptx`).
pub fn modules(app: &AppCrate) -> Result<Vec<Module>> {
    crate::payloads::compile(&app.kernels, &target_dir().join("app-crates").join(&app.package).join("payloads"))
}

/// `[workspace.dependencies]` of the repository's manifest: name -> its TOML value.
fn workspace_dependencies(root_manifest: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in root_manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t == "[workspace.dependencies]";
        } else if inside {
            if let Some((k, v)) = t.split_once('=') {
                out.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
    }
    out
}

/// The `[profile.*]` sections of the repository's manifest, verbatim.
fn profiles(root_manifest: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in root_manifest.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t.starts_with("[profile.");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The kernel's manifest with the user's crate as `app`: every path absolute, workspace
/// inheritance resolved, targets and build script pointing at the kernel's own sources.
pub fn kernel_manifest(app: &AppCrate) -> Result<String> {
    let root = workspace_root();
    let kernel_dir = root.join("kernel");
    let root_text = std::fs::read_to_string(root.join("Cargo.toml")).context("reading the workspace manifest")?;
    let kernel_text = std::fs::read_to_string(kernel_dir.join("Cargo.toml")).context("reading kernel/Cargo.toml")?;
    let deps = workspace_dependencies(&root_text);
    let package_fields = [("version", "\"0.1.0\""), ("edition", "\"2021\""), ("license", "\"MIT OR Apache-2.0\"")];
    let mut out = String::new();
    let mut section = String::new();
    for line in kernel_text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            section = t.to_string();
            if section == "[lints]" {
                continue;
            }
            out.push_str(line);
            out.push('\n');
            if section == "[package]" {
                out.push_str(&format!("build = \"{}\"\n", kernel_dir.join("build.rs").display()));
            }
            continue;
        }
        if section == "[lints]" || t.starts_with('#') {
            continue;
        }
        let converted = match section.as_str() {
            "[package]" => match package_fields.iter().find(|(k, _)| t == format!("{k}.workspace = true")) {
                Some((k, v)) => format!("{k} = {v}"),
                None => line.to_string(),
            },
            "[lib]" | "[[bin]]" => match t.strip_prefix("path = \"").and_then(|r| r.strip_suffix('"')) {
                Some(rel) => format!("path = \"{}\"", kernel_dir.join(rel).display()),
                None => line.to_string(),
            },
            "[dependencies]" => {
                if let Some(name) = t.strip_suffix(".workspace = true") {
                    let value =
                        deps.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).ok_or_else(|| {
                            error(format!("kernel dependency {name}: not in [workspace.dependencies]"))
                        })?;
                    format!("{name} = {value}")
                } else if t.starts_with("app ") || t.starts_with("app=") {
                    format!("app = {{ package = \"{}\", path = \"{}\" }}", app.package, app.dir.display())
                } else if let Some((before, rest)) = t.split_once("path = \"../") {
                    format!("{before}path = \"{}/{rest}", root.display())
                } else {
                    line.to_string()
                }
            }
            _ => line.to_string(),
        };
        out.push_str(&converted);
        out.push('\n');
    }
    out.push_str("\n[workspace]\n\n");
    out.push_str(&profiles(&root_text));
    Ok(out)
}

/// Builds the unikernel with the user's crate as its application; the ELF.
pub fn build_kernel(app: &AppCrate) -> Result<PathBuf> {
    let dir = target_dir().join("app-crates").join(&app.package).join("kernel");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let manifest = dir.join("Cargo.toml");
    std::fs::write(&manifest, kernel_manifest(app)?).with_context(|| format!("writing {}", manifest.display()))?;
    // The repository's lock file pins every shared dependency to the versions the kernel is
    // tested with; cargo adds what the user's crate needs beyond them.
    let lock = dir.join("Cargo.lock");
    if !lock.is_file() {
        std::fs::copy(workspace_root().join("Cargo.lock"), &lock).context("copying Cargo.lock")?;
    }
    let build_dir = target_dir().join("app-build");
    println!("xtask: building {} into the unikernel ({})", app.package, app.dir.display());
    run_status(
        cargo()
            .args(["build", "--release", "--features", "image", "--manifest-path"])
            .arg(&manifest)
            .env("CARGO_TARGET_DIR", &build_dir)
            .env("NVGPU_KERNEL_DIR", workspace_root().join("kernel")),
    )?;
    let elf = build_dir.join("release").join("kernel");
    if !elf.is_file() {
        return Err(error(format!("the build succeeded but {} is missing", elf.display())));
    }
    Ok(elf)
}

/// The section of the README a user follows to make and boot an application of their own.
pub const README_SECTION: &str = "## Your own application";

/// Words a template's sources must not contain: driver internals an application has no use for.
const INTERNALS: &[&str] =
    &["nvgpu", "RpcChannel", "Bar0", "DmaAllocator", "RegisterIo", "Clock", "GpuConfig", "sim::", "uvm::", "GspRpc"];

/// The shell commands of the README's section, in order (the first ```sh block in it).
pub fn readme_commands(readme: &str) -> Result<Vec<String>> {
    let start = readme.find(README_SECTION).ok_or_else(|| error(format!("README: no `{README_SECTION}` section")))?;
    let section = &readme[start + README_SECTION.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let block = section.split("```sh\n").nth(1).ok_or_else(|| error("README: no ```sh block in the section"))?;
    let block = &block[..block.find("```").ok_or_else(|| error("README: the ```sh block does not end"))?];
    Ok(block.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect())
}

/// Follows the README's section word for word from the repository's root: a fresh directory,
/// then each command as written (bounded by a generous timeout). Checks that the template's
/// sources name no driver internals, that the application booted and passed, and that the
/// image was written.
pub fn follow_readme() -> Result<()> {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).context("reading README.md")?;
    let commands = readme_commands(&readme)?;
    let expected = ["cargo xtask new-app ", "cargo xtask run --app-crate ", "cargo xtask image --app-crate "];
    if commands.len() != expected.len() || commands.iter().zip(expected).any(|(c, e)| !c.starts_with(e)) {
        return Err(error(format!("README's `{README_SECTION}`: expected new-app, run, image; found {commands:?}")));
    }
    let dir_word = commands[0].rsplit(' ').next().unwrap_or_default();
    let dir = absolute(&root.join(dir_word).display().to_string())?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing the old {}", dir.display()))?;
    }
    for command in &commands {
        println!("$ {command}");
        let status = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("timeout 1500 {command}"))
            .current_dir(&root)
            .status()
            .with_context(|| format!("running `{command}`"))?;
        if !status.success() {
            return Err(error(format!("README's `{command}` failed ({status})")));
        }
        if command.starts_with(expected[0]) {
            let app = load(&dir.display().to_string())?;
            let mut sources = vec![dir.join("src").join("lib.rs"), dir.join("Cargo.toml")];
            sources.extend(app.kernels.iter().cloned());
            for path in sources {
                let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
                if let Some(word) = INTERNALS.iter().find(|w| text.contains(**w)) {
                    return Err(error(format!("{}: names the driver internal `{word}`", path.display())));
                }
            }
        }
    }
    let app = load(&dir.display().to_string())?;
    let log = target_dir().join("qemu-logs").join("run.log");
    let serial = std::fs::read_to_string(&log).with_context(|| format!("reading {}", log.display()))?;
    let ok = format!("app: {}: ok", app.package.replace('-', "_"));
    if !serial.contains(&ok) {
        return Err(error(format!("{}: no `{ok}` line from the template's run", log.display())));
    }
    let iso = target_dir().join("image").join(format!("{}.iso", app.package));
    if std::fs::metadata(&iso).map(|m| m.len()).unwrap_or(0) == 0 {
        return Err(error(format!("{} was not written", iso.display())));
    }
    println!("xtask: the README's `{README_SECTION}` works as written: {ok}; {}", iso.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readme_section_holds_the_three_commands_in_order() {
        let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
        let commands = readme_commands(&readme).unwrap();
        assert_eq!(
            commands,
            [
                "cargo xtask new-app ../my-gpu-app",
                "cargo xtask run --app-crate ../my-gpu-app",
                "cargo xtask image --app-crate ../my-gpu-app"
            ]
        );
    }

    /// The README's twenty lines of the API are the body of `nvrt/examples/readme_api.rs`,
    /// which `cargo test` and clippy compile: the README shows code that builds.
    #[test]
    fn the_readme_api_example_is_the_compiled_one() {
        let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
        let section = &readme[readme.find("## The application API").expect("the section")..];
        let block = section.split("```rust\n").nth(1).expect("a rust block");
        let block = &block[..block.find("```").expect("its end")];
        let example = std::fs::read_to_string(workspace_root().join("nvrt/examples/readme_api.rs")).unwrap();
        let body = example.split("mod readme {\n").nth(1).expect("mod readme");
        let body = &body[..body.rfind("}\n\nfn main").expect("the module's end")];
        let dedented: String = body.lines().map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l))).collect();
        assert_eq!(dedented, block, "README.md's API example and nvrt/examples/readme_api.rs differ");
    }

    #[test]
    fn the_template_names_no_driver_internals() {
        for text in [TEMPLATE_MAIN, TEMPLATE_KERNEL] {
            for word in INTERNALS {
                assert!(!text.contains(word), "the template names {word}");
            }
        }
    }

    #[test]
    fn package_names_come_from_the_directory_and_reserved_ones_are_refused() {
        assert_eq!(package_name(Path::new("/x/My GPU_app")).unwrap(), "my-gpu-app");
        assert!(package_name(Path::new("/x/app")).is_err());
        assert!(package_name(Path::new("/x/9lives")).is_err());
    }

    #[test]
    fn the_generated_kernel_manifest_names_the_users_crate_and_only_absolute_paths() {
        let app = AppCrate { dir: PathBuf::from("/outside/my-app"), package: "my-app".into(), kernels: Vec::new() };
        let m = kernel_manifest(&app).unwrap();
        assert!(m.contains("app = { package = \"my-app\", path = \"/outside/my-app\" }"), "{m}");
        assert!(!m.contains("\"../"), "a relative path is left: {m}");
        assert!(!m.contains(".workspace = true"), "{m}");
        assert!(m.contains("[workspace]") && m.contains("[profile.release]"), "{m}");
        assert!(m.contains(&format!("build = \"{}\"", workspace_root().join("kernel/build.rs").display())), "{m}");
    }
}
