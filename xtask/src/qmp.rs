//! A minimal QMP (QEMU Machine Protocol) client: JSON lines over a stream socket.
//! The server greets, the client enters command mode with `qmp_capabilities`, then each command
//! gets one `return` or `error` object; asynchronous `event` objects may come in between.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{error, Context, Result};

pub struct Qmp {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Qmp {
    /// Takes a connected socket, reads the greeting and negotiates command mode.
    pub fn handshake(stream: UnixStream) -> Result<Self> {
        stream.set_read_timeout(Some(Duration::from_secs(20))).context("QMP socket")?;
        let writer = stream.try_clone().context("QMP socket")?;
        let mut qmp = Qmp { reader: BufReader::new(stream), writer };
        let greeting = qmp.read_message().context("reading the QMP greeting")?;
        if greeting.get("QMP").is_none() {
            return Err(error(format!("QMP: unexpected greeting {greeting}")));
        }
        qmp.execute("qmp_capabilities", None)?;
        Ok(qmp)
    }

    /// Runs one command; returns its `return` value.
    pub fn execute(&mut self, command: &str, arguments: Option<Value>) -> Result<Value> {
        let mut request = json!({ "execute": command });
        if let Some(arguments) = arguments {
            request["arguments"] = arguments;
        }
        let mut line = request.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).with_context(|| format!("sending QMP {command}"))?;
        loop {
            let message = self.read_message().with_context(|| format!("waiting for the reply to QMP {command}"))?;
            if let Some(value) = message.get("return") {
                return Ok(value.clone());
            }
            if let Some(err) = message.get("error") {
                return Err(error(format!("QMP {command} failed: {err}")));
            }
            // An event (or anything else): not our reply.
        }
    }

    /// `human-monitor-command`: an HMP command's text output (e.g. `info pci`).
    pub fn human(&mut self, command_line: &str) -> Result<String> {
        let reply = self.execute("human-monitor-command", Some(json!({ "command-line": command_line })))?;
        Ok(reply.as_str().unwrap_or_default().to_string())
    }

    fn read_message(&mut self) -> Result<Value> {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.reader.read_line(&mut line)?;
            if n == 0 {
                return Err(error("QEMU closed the QMP connection"));
            }
            if !line.trim().is_empty() {
                return serde_json::from_str(&line).with_context(|| format!("QMP sent bad JSON: {}", line.trim()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// A scripted QMP server on the other end of a socket pair.
    #[test]
    fn handshake_skips_events_and_returns_results() {
        let (client, mut server) = UnixStream::pair().unwrap();
        let peer = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let read_request = |server: &mut UnixStream| {
                let mut line = Vec::new();
                let mut byte = [0u8];
                while server.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
                    line.push(byte[0]);
                }
                String::from_utf8(line).unwrap()
            };
            server.write_all(b"{\"QMP\": {\"version\": {}, \"capabilities\": []}}\r\n").unwrap();
            seen.push(read_request(&mut server));
            server.write_all(b"{\"return\": {}}\r\n").unwrap();
            seen.push(read_request(&mut server));
            server
                .write_all(
                    b"{\"timestamp\": {}, \"event\": \"RESUME\"}\r\n{\"return\": [{\"bus\": 0, \"devices\": []}]}\r\n",
                )
                .unwrap();
            seen.push(read_request(&mut server));
            server.write_all(b"{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"no\"}}\r\n").unwrap();
            seen
        });
        let mut qmp = Qmp::handshake(client).unwrap();
        let pci = qmp.execute("query-pci", None).unwrap();
        assert_eq!(pci[0]["bus"], 0);
        assert!(qmp.execute("bogus", None).unwrap_err().to_string().contains("CommandNotFound"));
        let seen = peer.join().unwrap();
        assert_eq!(seen[0], r#"{"execute":"qmp_capabilities"}"#);
        assert_eq!(seen[1], r#"{"execute":"query-pci"}"#);
    }
}
