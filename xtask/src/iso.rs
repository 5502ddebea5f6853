//! The GRUB boot image: an ISO made by grub-mkrescue that boots under both BIOS (El Torito,
//! i386-pc) and UEFI (x86_64-efi), and loads the kernel by Multiboot2 with its modules.
//!
//! Layout: `/boot/kernel`, `/boot/modules/<name>`, `/boot/grub/grub.cfg`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{command_line, display_path, error, on_path, xtask_dir, Context, Result};

/// A Multiboot2 module: a file and the name it is passed under (its module command line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Module {
    pub path: PathBuf,
    pub name: String,
}

impl Module {
    /// `PATH` or `PATH=NAME`; the name defaults to the file name.
    pub fn parse(spec: &str) -> Result<Self> {
        let (path, name) = match spec.split_once('=') {
            Some((path, name)) => (PathBuf::from(path), name.to_string()),
            None => {
                let path = PathBuf::from(spec);
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                (path, name)
            }
        };
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-+".contains(c))
            && !name.starts_with('.');
        if !valid {
            return Err(error(format!("module name '{name}': use letters, digits and . _ - + only")));
        }
        Ok(Module { path, name })
    }
}

/// A word of the kernel command line as GRUB's script parser will give it back unchanged.
fn grub_word(word: &str) -> String {
    let plain = word.chars().all(|c| c.is_ascii_alphanumeric() || "-_=:,./+@%".contains(c));
    if plain && !word.is_empty() {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The grub.cfg: no menu delay, the console on COM1 too (so firmware-less failures show in the
/// serial log), the kernel by Multiboot2, each module with its name.
pub fn grub_cfg(cmdline: &str, modules: &[Module]) -> String {
    let mut kernel_line = String::from("    multiboot2 /boot/kernel");
    for word in cmdline.split_whitespace() {
        kernel_line.push(' ');
        kernel_line.push_str(&grub_word(word));
    }
    let mut cfg = String::from(
        "set timeout=0\n\
         set default=0\n\
         serial --unit=0 --speed=115200 --word=8 --parity=no --stop=1\n\
         terminal_input serial console\n\
         terminal_output serial console\n\
         \n\
         menuentry \"kernel\" {\n",
    );
    cfg.push_str(&kernel_line);
    cfg.push('\n');
    for m in modules {
        cfg.push_str(&format!("    module2 /boot/modules/{0} {0}\n", m.name));
    }
    cfg.push_str("    boot\n}\n");
    cfg
}

/// Builds the ISO at `out` (atomically: a half-written image never sits at `out`).
pub fn build(kernel: &Path, cmdline: &str, modules: &[Module], out: &Path) -> Result<()> {
    for tool in ["grub-mkrescue", "xorriso", "mformat"] {
        if !on_path(tool) {
            return Err(error(format!("{tool} is not installed: run scripts/install-deps.sh")));
        }
    }
    for platform in ["i386-pc", "x86_64-efi"] {
        let dir = Path::new("/usr/lib/grub").join(platform);
        if !dir.is_dir() {
            return Err(error(format!(
                "{} is missing (GRUB for {platform}): run scripts/install-deps.sh",
                dir.display()
            )));
        }
    }

    let staging = xtask_dir()?.join(format!("iso-staging-{}", std::process::id()));
    let _ = fs::remove_dir_all(&staging);
    let result = stage_and_make(&staging, kernel, cmdline, modules, out);
    let _ = fs::remove_dir_all(&staging);
    result
}

fn stage_and_make(staging: &Path, kernel: &Path, cmdline: &str, modules: &[Module], out: &Path) -> Result<()> {
    let boot = staging.join("boot");
    fs::create_dir_all(boot.join("grub")).with_context(|| format!("creating {}", boot.display()))?;
    fs::copy(kernel, boot.join("kernel")).with_context(|| format!("copying the kernel {}", kernel.display()))?;
    if !modules.is_empty() {
        fs::create_dir_all(boot.join("modules"))?;
    }
    for m in modules {
        fs::copy(&m.path, boot.join("modules").join(&m.name))
            .with_context(|| format!("copying module {}", m.path.display()))?;
    }
    fs::write(boot.join("grub").join("grub.cfg"), grub_cfg(cmdline, modules))?;

    if let Some(parent) = out.parent() {
        fs::create_dir_all(parent)?;
    }
    let partial = out.with_extension(format!("partial-{}", std::process::id()));
    let mut cmd = Command::new("grub-mkrescue");
    cmd.arg("-o").arg(&partial).arg(staging);
    let output = cmd.output().with_context(|| format!("running {}", command_line(&cmd)))?;
    if !output.status.success() {
        let _ = fs::remove_file(&partial);
        return Err(error(format!(
            "{} failed ({}):\n{}",
            command_line(&cmd),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    fs::rename(&partial, out).with_context(|| format!("moving the ISO to {}", display_path(out)))?;
    Ok(())
}

/// The default place for an ISO named `name`: `target/xtask/<name>.iso`.
pub fn default_path(name: &str) -> Result<PathBuf> {
    Ok(xtask_dir()?.join(format!("{name}.iso")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grub_cfg_has_the_kernel_modules_and_serial() {
        let modules = [Module::parse("fw/gsp_ga10x.bin").unwrap(), Module::parse("/tmp/x.ptx=app.ptx").unwrap()];
        let cfg = grub_cfg("test  gpu=model:gh100,ga102 log=debug", &modules);
        assert!(cfg.starts_with("set timeout=0\n"));
        assert!(cfg.contains("serial --unit=0 --speed=115200"));
        assert!(cfg.contains("terminal_output serial console\n"));
        assert!(cfg.contains("    multiboot2 /boot/kernel test gpu=model:gh100,ga102 log=debug\n"));
        assert!(cfg.contains("    module2 /boot/modules/gsp_ga10x.bin gsp_ga10x.bin\n"));
        assert!(cfg.contains("    module2 /boot/modules/app.ptx app.ptx\n"));
        assert!(cfg.ends_with("    boot\n}\n"));
    }

    #[test]
    fn grub_cfg_quotes_special_words_and_handles_an_empty_cmdline() {
        assert!(grub_cfg("a;b", &[]).contains("multiboot2 /boot/kernel 'a;b'\n"));
        assert!(grub_cfg("", &[]).contains("multiboot2 /boot/kernel\n"));
    }

    #[test]
    fn module_names_are_checked() {
        assert_eq!(Module::parse("a/b/c.bin").unwrap().name, "c.bin");
        assert!(Module::parse("a=bad name").is_err());
        assert!(Module::parse("a=x/y").is_err());
        assert!(Module::parse("a=").is_err());
    }
}
