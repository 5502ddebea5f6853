//! The kernel command line: space-separated words, each `flag` or `key=value`.

/// A parsed command line (borrows the loader's string).
#[derive(Debug, Clone, Copy)]
pub struct CmdLine<'a> {
    text: &'a str,
}

impl<'a> CmdLine<'a> {
    pub fn parse(text: &'a str) -> Self {
        CmdLine { text }
    }

    pub fn words(&self) -> impl Iterator<Item = &'a str> {
        self.text.split_ascii_whitespace()
    }

    /// True when the word `name` (without a value) is present.
    pub fn flag(&self, name: &str) -> bool {
        self.words().any(|w| w == name)
    }

    /// The value of the last `name=value` word.
    pub fn value(&self, name: &str) -> Option<&'a str> {
        self.words().filter_map(|w| w.split_once('=')).filter(|(k, _)| *k == name).map(|(_, v)| v).last()
    }

    pub fn as_str(&self) -> &'a str {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_values() {
        let c = CmdLine::parse("  test gpu=model:gh100,model:ad102 log=debug gpu=none pci-handshake ");
        assert!(c.flag("test"));
        assert!(c.flag("pci-handshake"));
        assert!(!c.flag("gpu"));
        assert_eq!(c.value("gpu"), Some("none"));
        assert_eq!(c.value("log"), Some("debug"));
        assert_eq!(c.value("missing"), None);
        assert_eq!(c.words().count(), 5);
    }
}
