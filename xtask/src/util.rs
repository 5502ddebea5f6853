//! Shared plumbing: the error type, workspace paths, and running child commands.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An error for the person at the terminal: one message, with the context each layer added.
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error> From<E> for Error {
    fn from(e: E) -> Self {
        Error(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// An error from a message.
pub fn error(msg: impl Into<String>) -> Error {
    Error(msg.into())
}

/// Adds what was being done to an error.
pub trait Context<T> {
    fn context(self, what: impl fmt::Display) -> Result<T>;
    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T> {
        self.map_err(|e| Error(format!("{what}: {e}")))
    }
    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| Error(format!("{}: {e}", what())))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, what: impl fmt::Display) -> Result<T> {
        self.ok_or_else(|| Error(what.to_string()))
    }
    fn with_context<D: fmt::Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.ok_or_else(|| Error(what().to_string()))
    }
}

/// The workspace root (the folder above `xtask/`).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Cargo's target folder: `CARGO_TARGET_DIR` if set, else `<root>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                workspace_root().join(dir)
            }
        }
        None => workspace_root().join("target"),
    }
}

/// Where QEMU serial logs go: `target/qemu-logs/`.
pub fn logs_dir() -> Result<PathBuf> {
    let dir = target_dir().join("qemu-logs");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Scratch space of xtask's own outputs (ISOs, the fake kernel): `target/xtask/`.
pub fn xtask_dir() -> Result<PathBuf> {
    let dir = target_dir().join("xtask");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// The path as written relative to the workspace root when it lies inside it (shorter messages).
pub fn display_path(path: &Path) -> String {
    let root = workspace_root();
    path.strip_prefix(&root).unwrap_or(path).display().to_string()
}

/// The cargo that runs us (cargo sets `CARGO`), so nested builds use the same toolchain.
pub fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root());
    cmd
}

/// The command line as a person would type it (for "running: ..." lines and errors).
pub fn command_line(cmd: &Command) -> String {
    let mut words = vec![shell_quote(&cmd.get_program().to_string_lossy())];
    words.extend(cmd.get_args().map(|a| shell_quote(&a.to_string_lossy())));
    words.join(" ")
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_=:,./+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Runs a command to completion with inherited stdio; a non-zero exit is an error naming it.
pub fn run_status(cmd: &mut Command) -> Result<()> {
    eprintln!("xtask: running {}", command_line(cmd));
    let status = cmd.status().with_context(|| format!("starting {}", command_line(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(error(format!("{} failed ({status})", command_line(cmd))))
    }
}

/// Whether an executable of that name is on PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quote_leaves_plain_words_and_quotes_the_rest() {
        assert_eq!(shell_quote("-device"), "-device");
        assert_eq!(shell_quote("e1000e,bus=rp1"), "e1000e,bus=rp1");
        assert_eq!(shell_quote("test pci-handshake"), "'test pci-handshake'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
