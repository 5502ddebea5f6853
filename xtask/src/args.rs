//! A small command-line parser: `--flag`, `--name VALUE` / `--name=VALUE` (possibly repeated),
//! and everything after `--` kept apart. Subcommands take their options out one by one and then
//! call [`Args::finish`], which rejects anything left over, so a typo is an error, not ignored.

use crate::util::{error, Result};

pub struct Args {
    words: Vec<String>,
    /// The words after a literal `--` (extra QEMU arguments), untouched.
    pub rest: Vec<String>,
}

impl Args {
    pub fn new(words: impl IntoIterator<Item = String>) -> Self {
        let mut words: Vec<String> = words.into_iter().collect();
        let rest = match words.iter().position(|w| w == "--") {
            Some(at) => {
                let rest = words.split_off(at + 1);
                words.pop();
                rest
            }
            None => Vec::new(),
        };
        Args { words, rest }
    }

    /// Takes a boolean flag (any number of times); true if it was present.
    pub fn flag(&mut self, name: &str) -> bool {
        let before = self.words.len();
        self.words.retain(|w| w != name);
        self.words.len() != before
    }

    /// Takes every value of a repeatable option, in order.
    pub fn values(&mut self, name: &str) -> Result<Vec<String>> {
        let prefix = format!("{name}=");
        let mut found = Vec::new();
        let mut i = 0;
        while i < self.words.len() {
            if self.words[i] == name {
                if i + 1 >= self.words.len() {
                    return Err(error(format!("{name} needs a value")));
                }
                found.push(self.words.remove(i + 1));
                self.words.remove(i);
            } else if let Some(value) = self.words[i].strip_prefix(&prefix) {
                found.push(value.to_string());
                self.words.remove(i);
            } else {
                i += 1;
            }
        }
        Ok(found)
    }

    /// Takes an option given at most once.
    pub fn value(&mut self, name: &str) -> Result<Option<String>> {
        let mut values = self.values(name)?;
        match values.len() {
            0 => Ok(None),
            1 => Ok(values.pop()),
            _ => Err(error(format!("{name} given more than once"))),
        }
    }

    /// Takes an option parsed as a number.
    pub fn number<T: std::str::FromStr>(&mut self, name: &str) -> Result<Option<T>> {
        match self.value(name)? {
            None => Ok(None),
            Some(text) => text.parse().map(Some).map_err(|_| error(format!("{name}: '{text}' is not a valid number"))),
        }
    }

    /// Rejects whatever no one took.
    /// Takes the words that are not options (do not start with `-`), in order. Call it after
    /// every option that takes a value has been taken.
    pub fn positionals(&mut self) -> Vec<String> {
        let (positional, options): (Vec<String>, Vec<String>) =
            std::mem::take(&mut self.words).into_iter().partition(|w| !w.starts_with('-'));
        self.words = options;
        positional
    }

    pub fn finish(self) -> Result<Vec<String>> {
        if let Some(unknown) = self.words.first() {
            return Err(error(format!("unknown argument '{unknown}' (see --help)")));
        }
        Ok(self.rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Args {
        Args::new(words.iter().map(|w| w.to_string()))
    }

    #[test]
    fn options_flags_and_rest() {
        let mut a = args(&["--iso", "--mem", "1G", "--module=a.bin", "--module", "b", "--", "-s", "--iso"]);
        assert!(a.flag("--iso"));
        assert!(!a.flag("--uefi"));
        assert_eq!(a.value("--mem").unwrap().as_deref(), Some("1G"));
        assert_eq!(a.values("--module").unwrap(), ["a.bin", "b"]);
        assert_eq!(a.finish().unwrap(), ["-s", "--iso"]);
    }

    #[test]
    fn leftovers_and_missing_values_are_errors() {
        let mut a = args(&["--cpus"]);
        assert!(a.value("--cpus").is_err());
        let a = args(&["--bogus"]);
        assert!(a.finish().is_err());
        let mut a = args(&["--mem", "1G", "--mem", "2G"]);
        assert!(a.value("--mem").is_err());
        let mut a = args(&["--cpus", "four"]);
        assert!(a.number::<u32>("--cpus").is_err());
    }
}
