//! The PCI cross-check: the functions QEMU says it emulates (QMP `query-pci`) against the
//! functions the kernel enumerated (its `pci ...` log lines).
//!
//! QEMU's `query-pci` gives each function's bus, slot, function, vendor and device IDs and a
//! 16-bit class (base class and subclass, no programming interface), recursing through bridges.
//! So the comparison is on (bus, device, function, vendor, device ID, base class, subclass); the
//! kernel's programming-interface byte cannot be checked this way. QEMU's root buses (pcie.0 and
//! any pxb-pcie buses) all lie in PCI segment 0.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::klog::KernelPciFunction;
use crate::util::{error, Context, Result};

/// A PCI function as both sides can name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciIdentity {
    pub segment: u16,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
    pub vendor_id: u16,
    pub device_id: u16,
    /// Base class << 8 | subclass.
    pub class: u16,
}

impl PciIdentity {
    fn address(&self) -> (u16, u8, u8, u8) {
        (self.segment, self.bus, self.device, self.function)
    }
}

impl fmt::Display for PciIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{} [{:04x}:{:04x}] class {:04x}",
            self.segment, self.bus, self.device, self.function, self.vendor_id, self.device_id, self.class
        )
    }
}

impl From<&KernelPciFunction> for PciIdentity {
    fn from(f: &KernelPciFunction) -> Self {
        PciIdentity {
            segment: f.segment,
            bus: f.bus,
            device: f.device,
            function: f.function,
            vendor_id: f.vendor_id,
            device_id: f.device_id,
            class: (f.class_code >> 8) as u16,
        }
    }
}

/// The functions in a `query-pci` reply (the value of its `return`), bridges followed.
pub fn from_query_pci(reply: &Value) -> Result<Vec<PciIdentity>> {
    let buses = reply.as_array().context("query-pci: the reply is not a list of buses")?;
    let mut found = Vec::new();
    for bus in buses {
        let devices = bus.get("devices").and_then(Value::as_array).context("query-pci: a bus without 'devices'")?;
        collect_devices(devices, &mut found)?;
    }
    Ok(found)
}

fn collect_devices(devices: &[Value], found: &mut Vec<PciIdentity>) -> Result<()> {
    for dev in devices {
        let field = |path: &[&str]| -> Result<u64> {
            let mut v = dev;
            for key in path {
                v = v.get(key).with_context(|| format!("query-pci: a device without '{}'", path.join(".")))?;
            }
            v.as_u64().with_context(|| format!("query-pci: '{}' is not a number: {v}", path.join(".")))
        };
        let narrow = |path: &[&str], max: u64| -> Result<u64> {
            let value = field(path)?;
            if value > max {
                return Err(error(format!("query-pci: '{}' = {value} is out of range", path.join("."))));
            }
            Ok(value)
        };
        found.push(PciIdentity {
            segment: 0,
            bus: narrow(&["bus"], 0xff)? as u8,
            device: narrow(&["slot"], 0x1f)? as u8,
            function: narrow(&["function"], 7)? as u8,
            vendor_id: narrow(&["id", "vendor"], 0xffff)? as u16,
            device_id: narrow(&["id", "device"], 0xffff)? as u16,
            class: narrow(&["class_info", "class"], 0xffff)? as u16,
        });
        if let Some(behind) = dev.get("pci_bridge").and_then(|b| b.get("devices")).and_then(Value::as_array) {
            collect_devices(behind, found)?;
        }
    }
    Ok(())
}

/// How the two views differ.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PciMismatch {
    /// QEMU has them, the kernel did not report them.
    pub missed_by_kernel: Vec<PciIdentity>,
    /// The kernel reported them, QEMU has nothing like them.
    pub unknown_to_qemu: Vec<PciIdentity>,
    /// The kernel reported the same address more than once.
    pub reported_twice: Vec<PciIdentity>,
    /// The kernel's own count (`scan complete, N functions`) against its lines.
    pub count_disagrees: Option<(usize, usize)>,
}

impl fmt::Display for PciMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let list = |items: &[PciIdentity]| items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("; ");
        if !self.missed_by_kernel.is_empty() {
            parts.push(format!("QEMU has, kernel did not report: {}", list(&self.missed_by_kernel)));
        }
        if !self.unknown_to_qemu.is_empty() {
            parts.push(format!("kernel reported, QEMU does not have: {}", list(&self.unknown_to_qemu)));
        }
        if !self.reported_twice.is_empty() {
            parts.push(format!("kernel reported more than once: {}", list(&self.reported_twice)));
        }
        if let Some((said, lines)) = self.count_disagrees {
            parts.push(format!("kernel said 'scan complete, {said} functions' but printed {lines} pci lines"));
        }
        write!(f, "PCI mismatch: {}", parts.join(" | "))
    }
}

/// Compares the kernel's functions (and its announced count, if any) with QEMU's.
/// Ok gives the number of functions both agree on.
pub fn compare(
    kernel: &[KernelPciFunction],
    kernel_count: Option<usize>,
    qemu: &[PciIdentity],
) -> std::result::Result<usize, PciMismatch> {
    let mut mismatch = PciMismatch::default();

    let mut by_address: BTreeMap<(u16, u8, u8, u8), PciIdentity> = BTreeMap::new();
    for f in kernel {
        let id = PciIdentity::from(f);
        if by_address.insert(id.address(), id).is_some() {
            mismatch.reported_twice.push(id);
        }
    }
    let qemu_set: BTreeMap<(u16, u8, u8, u8), PciIdentity> = qemu.iter().map(|q| (q.address(), *q)).collect();

    for (address, q) in &qemu_set {
        if by_address.get(address) != Some(q) {
            mismatch.missed_by_kernel.push(*q);
        }
    }
    for (address, k) in &by_address {
        if qemu_set.get(address) != Some(k) {
            mismatch.unknown_to_qemu.push(*k);
        }
    }
    if let Some(said) = kernel_count {
        if said != kernel.len() {
            mismatch.count_disagrees = Some((said, kernel.len()));
        }
    }

    if mismatch == PciMismatch::default() {
        Ok(qemu_set.len())
    } else {
        Err(mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::klog::parse_pci_line;

    /// `query-pci` from QEMU 7.2 on q35 with a pcie-root-port (bus 1, e1000e behind it) and a
    /// pxb-pcie root bus 0x80 (root port to bus 0x81, e1000e behind it), after the firmware
    /// numbered the buses; regions and ranges trimmed.
    const QUERY_PCI: &str = r#"[
      {"bus": 128, "devices": [
        {"bus": 128, "slot": 0, "function": 0, "qdev_id": "rp2",
         "class_info": {"class": 1540, "desc": "PCI bridge"}, "id": {"device": 12, "vendor": 6966},
         "pci_bridge": {"bus": {"number": 129, "secondary": 129, "subordinate": 129},
           "devices": [
             {"bus": 129, "slot": 0, "function": 0, "qdev_id": "",
              "class_info": {"class": 512, "desc": "Ethernet controller"},
              "id": {"device": 4307, "vendor": 32902}, "regions": []}]},
         "regions": []}]},
      {"bus": 0, "devices": [
        {"bus": 0, "slot": 0, "function": 0, "class_info": {"class": 1536, "desc": "Host bridge"},
         "id": {"device": 10688, "vendor": 32902, "subsystem": 4352, "subsystem-vendor": 6900}, "regions": []},
        {"bus": 0, "slot": 1, "function": 0, "class_info": {"class": 768}, "id": {"device": 4369, "vendor": 4660}},
        {"bus": 0, "slot": 3, "function": 0, "class_info": {"class": 1536, "desc": "Host bridge"},
         "id": {"device": 11, "vendor": 6966}},
        {"bus": 0, "slot": 4, "function": 0, "class_info": {"class": 1540},
         "id": {"device": 12, "vendor": 6966},
         "pci_bridge": {"bus": {"number": 1, "secondary": 1, "subordinate": 1},
           "devices": [{"bus": 1, "slot": 0, "function": 0, "class_info": {"class": 512},
                        "id": {"device": 4307, "vendor": 32902}}]}},
        {"bus": 0, "slot": 31, "function": 0, "class_info": {"class": 1537}, "id": {"device": 10520, "vendor": 32902}},
        {"bus": 0, "slot": 31, "function": 2, "class_info": {"class": 262}, "id": {"device": 10530, "vendor": 32902}},
        {"bus": 0, "slot": 31, "function": 3, "class_info": {"class": 3077}, "id": {"device": 10544, "vendor": 32902}}
      ]}
    ]"#;

    const KERNEL_LOG: &str = "\
[  5 ms] INFO  pci: pci 0000:00:00.0 [8086:29c0] class 060000
[  5 ms] INFO  pci: pci 0000:00:01.0 [1234:1111] class 030000
                 bar0: mem 0xfd000000 size 0x1000000 prefetchable
[  5 ms] INFO  pci: pci 0000:00:03.0 [1b36:000b] class 060000
[  5 ms] INFO  pci: pci 0000:00:04.0 [1b36:000c] class 060400
[  5 ms] INFO  pci: pci 0000:01:00.0 [8086:10d3] class 020000
[  5 ms] INFO  pci: pci 0000:00:1f.0 [8086:2918] class 060100
[  5 ms] INFO  pci: pci 0000:00:1f.2 [8086:2922] class 010601
[  5 ms] INFO  pci: pci 0000:00:1f.3 [8086:2930] class 0c0500
[  6 ms] INFO  pci: pci 0000:80:00.0 [1b36:000c] class 060400
[  6 ms] INFO  pci: pci 0000:81:00.0 [8086:10d3] class 020000
[  6 ms] INFO  pci: scan complete, 10 functions; waiting for host
";

    fn qemu() -> Vec<PciIdentity> {
        from_query_pci(&serde_json::from_str(QUERY_PCI).unwrap()).unwrap()
    }

    fn kernel(log: &str) -> Vec<KernelPciFunction> {
        log.lines().filter_map(parse_pci_line).collect()
    }

    #[test]
    fn query_pci_follows_bridges_and_root_buses() {
        let q = qemu();
        assert_eq!(q.len(), 10);
        assert!(q.contains(&PciIdentity {
            segment: 0,
            bus: 0x81,
            device: 0,
            function: 0,
            vendor_id: 0x8086,
            device_id: 0x10d3,
            class: 0x0200
        }));
        assert!(q.iter().any(|f| f.bus == 1 && f.class == 0x0200));
        assert!(q.iter().any(|f| (f.bus, f.device, f.function, f.class) == (0, 0x1f, 2, 0x0106)));
    }

    #[test]
    fn query_pci_rejects_malformed_replies() {
        for bad in [
            r#"{"bus": 0}"#,
            r#"[{"bus": 0}]"#,
            r#"[{"bus": 0, "devices": [{"bus": 0, "slot": 0, "function": 0, "id": {"vendor": 1, "device": 2}}]}]"#,
            r#"[{"bus": 0, "devices": [{"bus": 0, "slot": 40, "function": 0, "class_info": {"class": 1}, "id": {"vendor": 1, "device": 2}}]}]"#,
        ] {
            assert!(from_query_pci(&serde_json::from_str(bad).unwrap()).is_err(), "{bad}");
        }
    }

    #[test]
    fn equal_views_agree() {
        assert_eq!(compare(&kernel(KERNEL_LOG), Some(10), &qemu()), Ok(10));
    }

    #[test]
    fn a_missed_bus_behind_the_extra_root_is_reported() {
        let log: String = KERNEL_LOG.lines().filter(|l| !l.contains("0000:81:")).map(|l| format!("{l}\n")).collect();
        let err = compare(&kernel(&log), Some(9), &qemu()).unwrap_err();
        assert_eq!(err.missed_by_kernel.len(), 1);
        assert_eq!(err.missed_by_kernel[0].bus, 0x81);
        assert!(err.unknown_to_qemu.is_empty());
        assert!(err.to_string().contains("0000:81:00.0 [8086:10d3] class 0200"));
    }

    #[test]
    fn wrong_ids_duplicates_and_counts_are_reported() {
        let log = KERNEL_LOG.replace("[8086:2922] class 010601", "[8086:2922] class 010101");
        let err = compare(&kernel(&log), Some(10), &qemu()).unwrap_err();
        assert_eq!(err.missed_by_kernel.len(), 1);
        assert_eq!(err.unknown_to_qemu.len(), 1);
        assert_eq!(err.unknown_to_qemu[0].class, 0x0101);

        let log = format!("{KERNEL_LOG}pci 0000:00:1f.3 [8086:2930] class 0c0500\n");
        let err = compare(&kernel(&log), Some(11), &qemu()).unwrap_err();
        assert_eq!(err.reported_twice.len(), 1);

        let err = compare(&kernel(KERNEL_LOG), Some(12), &qemu()).unwrap_err();
        assert_eq!(err.count_disagrees, Some((12, 10)));
        assert!(err.to_string().contains("scan complete, 12 functions"));
    }

    #[test]
    fn the_programming_interface_is_not_compared() {
        let log = KERNEL_LOG.replace("class 010601", "class 010602");
        assert_eq!(compare(&kernel(&log), None, &qemu()), Ok(10));
    }

    #[test]
    fn a_nonzero_segment_is_not_qemus() {
        let log = KERNEL_LOG.replace("pci 0000:81:00.0", "pci 0001:81:00.0");
        let err = compare(&kernel(&log), None, &qemu()).unwrap_err();
        assert_eq!(err.unknown_to_qemu[0].segment, 1);
    }
}
