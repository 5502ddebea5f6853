//! Every hardware fact the driver declares, checked against NVIDIA's own sources.
//!
//! The driver's register declarations and constants each carry NVIDIA's name and the header that
//! defines it, all declared in `nvgpu::hw` (`nvgpu::hw::all_facts()`; the chip table, the HAL and
//! the GPU model import them from there). This test reads those headers from the trees
//! `scripts/fetch-real-data.sh` unpacks under `target/real-data/` and compares value by value:
//! offsets, field bit ranges, named field values, register arrays, chip and class numbers. It also
//! checks what is not a `#define`: which classes RM lists for each chip, which firmware file and
//! signature section each chip takes (against the Debian firmware itself), and board names
//! against the README's supported-GPU table.
//!
//! Missing Debian data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root)
//! first. The one exception is the two trees Debian does not carry (570.133.07 for Blackwell,
//! open-gpu-doc for QMD versions and Ada/Hopper/Blackwell methods): without them their four tests
//! record a skip that names the facts left unchecked (by header, chip or board), and `cargo xtask
//! test` lists it in its summary.
//! `NVGPU_REAL_DATA` overrides the data directory.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use nvgpu::chip::{self, Chipset};
use nvgpu::hal::Family;
use nvgpu::hw::{self, headers, FactValue, Header, HeaderFact};

// ---------------------------------------------------------------------------------------------
// Where the data is.

fn data_root() -> PathBuf {
    match std::env::var_os("NVGPU_REAL_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/real-data"),
    }
}

/// The directory holding source tree `release` (as `Header::release` names it).
fn tree_dir(release: &str) -> PathBuf {
    if release == headers::LINUX_SOURCE || release == headers::TINYGRAD {
        return data_root().join(release);
    }
    match release.strip_prefix("open-gpu-doc@") {
        Some(commit) => data_root().join(format!("open-gpu-doc-{commit}")),
        None => data_root().join(format!("open-gpu-kernel-modules-{release}")),
    }
}

fn require_dir(dir: &Path, what: &str) {
    assert!(
        dir.is_dir(),
        "missing real data: {} ({what}).\n\
         This test never passes without NVIDIA's sources: run `sudo scripts/fetch-real-data.sh` \
         from the workspace root (CI={}).",
        dir.display(),
        std::env::var("CI").unwrap_or_else(|_| "unset".into())
    );
}

/// Why a tree Debian does not carry is absent, for a skip's message.
fn absent_because(release: &str) -> String {
    let (what, clone) = match release.strip_prefix("open-gpu-doc@") {
        Some(commit) => (format!("NVIDIA/open-gpu-doc at {commit}"), "OPEN_GPU_DOC_GIT"),
        None => (
            format!(
                "NVIDIA/open-gpu-kernel-modules {release} (Debian's newest NVIDIA source, 550.163.01, has no Blackwell)"
            ),
            "OGKM_GIT",
        ),
    };
    format!(
        "{} is absent (no Debian package carries {what}; {clone}=<clone> for scripts/fetch-real-data.sh)",
        tree_dir(release).display()
    )
}

/// Whether the tree of `release`, one Debian does not carry (open-gpu-kernel-modules 570.133.07
/// for Blackwell, open-gpu-doc for the QMD layouts and some class methods), is there:
/// `scripts/fetch-real-data.sh` puts it in `target/real-data` when given a local clone
/// (`OGKM_GIT`, `OPEN_GPU_DOC_GIT`). Without it the test records a skip
/// ([`tests::skips::record`]) naming `facts`, the group it could not check, which `cargo xtask
/// test` lists in its summary.
fn tree_or_skip(test: &str, release: &str, facts: &str) -> bool {
    if tree_dir(release).is_dir() {
        return true;
    }
    tests::skips::record(test, &format!("{facts} not checked: {}", absent_because(release)));
    false
}

/// A group of driver facts by the release they cite: how many, from which headers.
fn fact_group(release: &str) -> String {
    let mut by_header: BTreeMap<&str, usize> = BTreeMap::new();
    for fact in driver_facts().filter(|f| f.header.release == release) {
        let short = fact.header.path.rsplit_once("/published/").map_or(fact.header.path, |(_, p)| p);
        let short = short.rsplit_once("/inc/class/").map_or(short, |(_, p)| p);
        *by_header.entry(short).or_default() += 1;
    }
    let total: usize = by_header.values().sum();
    let list: Vec<String> = by_header.iter().map(|(h, n)| format!("{h} {n}")).collect();
    format!("{total} facts citing {release} ({})", list.join(", "))
}

fn require_release(release: &str) -> PathBuf {
    let dir = tree_dir(release);
    require_dir(&dir, &format!("NVIDIA source tree {release}"));
    dir
}

// ---------------------------------------------------------------------------------------------
// A small reader for NVIDIA's `#define`s.

/// One definition's right-hand side.
#[derive(Clone, Debug)]
enum Body {
    /// `#define NAME body` (or an enum member `NAME = value,`).
    Object(String),
    /// `#define NAME(params) body`.
    Function { params: Vec<String>, body: String },
}

/// A value a definition evaluates to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Number(u64),
    Bits(u64, u64),
    Indexed {
        base: u64,
        stride: u64,
    },
    /// Something this reader does not evaluate (kept as text for messages).
    Other(String),
}

#[derive(Default)]
struct Defines {
    /// What the header itself defines.
    defs: HashMap<String, Vec<Body>>,
    /// What the other headers of its directory define: addenda name registers of the main
    /// header (`NV_USABLE_FB_SIZE_IN_MB` is `NV_PGC6_AON_SECURE_SCRATCH_GROUP_42`), so references
    /// resolve through these, while a fact's own name must be in its cited header.
    context: HashMap<String, Vec<Body>>,
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        match rest[start + 2..].find("*/") {
            Some(end) => rest = &rest[start + 2 + end + 2..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn parse_defines(text: &str) -> Defines {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let clean = strip_comments(&joined);
    let mut defines = Defines::default();
    for line in clean.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("#define") {
            let rest = rest.trim_start();
            let name_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            let (name, after) = rest.split_at(name_len);
            if name.is_empty() {
                continue;
            }
            let body = if let Some(params) = after.strip_prefix('(') {
                let Some(close) = params.find(')') else { continue };
                Body::Function {
                    params: params[..close].split(',').map(|p| p.trim().to_owned()).collect(),
                    body: params[close + 1..].trim().to_owned(),
                }
            } else {
                Body::Object(after.trim().to_owned())
            };
            defines.defs.entry(name.to_owned()).or_default().push(body);
        } else if let Some((name, value)) = line.strip_prefix("const ").and_then(|l| l.split_once('=')) {
            // Typed C constants, as RM declares some inside functions:
            // `const NvU32 ESTIMATED_RESERVE_FB = 0x200000;`.
            let name = name.split_whitespace().last().unwrap_or_default();
            let value = value.trim().trim_end_matches(';').trim();
            if is_ident(name) && parse_number(value).is_some() {
                defines.defs.entry(name.to_owned()).or_default().push(Body::Object(value.to_owned()));
            }
        } else if let Some((name, value)) = line.split_once('=') {
            // C enum members: `NV_FIRMWARE_CHIP_FAMILY_TU10X = 1,`.
            let name = name.trim();
            let value = value.trim().trim_end_matches(',').trim();
            if is_ident(name) && name.starts_with("NV") && parse_number(value).is_some() {
                defines.defs.entry(name.to_owned()).or_default().push(Body::Object(value.to_owned()));
            }
        }
    }
    defines
}

fn parse_number(s: &str) -> Option<u64> {
    let s = s.trim().trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

/// `s` without parentheses that enclose all of it.
fn strip_parens(mut s: &str) -> &str {
    loop {
        s = s.trim();
        if !(s.starts_with('(') && s.ends_with(')')) {
            return s;
        }
        // Only strip if the opening parenthesis closes at the very end.
        let mut depth = 0;
        for (i, c) in s.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 && i != s.len() - 1 {
                        return s;
                    }
                }
                _ => {}
            }
        }
        s = &s[1..s.len() - 1];
    }
}

/// `(base+(i)*stride)` for parameter `param`.
fn indexed_form(param: &str, body: &str) -> Option<(u64, u64)> {
    let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    let inner = strip_parens(&compact);
    let (base, scaled) = inner.split_once('+')?;
    let (index, stride) = scaled.split_once('*').unwrap_or((scaled, "1"));
    (strip_parens(index) == param).then_some(())?;
    Some((parse_number(strip_parens(base))?, parse_number(strip_parens(stride))?))
}

impl Defines {
    fn body(&self, name: &str) -> Result<&[Body], String> {
        self.defs
            .get(name)
            .or_else(|| self.context.get(name))
            .map(Vec::as_slice)
            .ok_or_else(|| format!("{name} is not defined"))
    }

    fn eval_name(&self, name: &str, depth: u32) -> Result<Value, String> {
        let bodies = self.body(name)?;
        let mut values = Vec::new();
        for body in bodies {
            match body {
                Body::Object(text) => values.push(self.eval(text, depth + 1)?),
                Body::Function { params, body } => match (params.as_slice(), indexed_form(&params[0], body)) {
                    ([_], Some((base, stride))) => values.push(Value::Indexed { base, stride }),
                    _ => values.push(Value::Other(format!("{name}({}) {body}", params.join(",")))),
                },
            }
        }
        let first = values[0].clone();
        if values.iter().any(|v| *v != first) {
            return Err(format!("{name} is defined {} times with different values: {values:?}", values.len()));
        }
        Ok(first)
    }

    fn eval(&self, text: &str, depth: u32) -> Result<Value, String> {
        if depth > 16 {
            return Err(format!("definitions nest too deep at {text}"));
        }
        let e = strip_parens(text);
        if let Some(n) = parse_number(e) {
            return Ok(Value::Number(n));
        }
        if let Some((hi, lo)) = e.split_once(':') {
            if let (Some(hi), Some(lo)) = (parse_number(strip_parens(hi)), parse_number(strip_parens(lo))) {
                return Ok(Value::Bits(hi, lo));
            }
        }
        if is_ident(e) {
            return self.eval_name(e, depth + 1);
        }
        if let Some(open) = e.find('(') {
            let callee = e[..open].trim();
            if is_ident(callee) && e.ends_with(')') {
                let args: Vec<&str> = e[open + 1..e.len() - 1].split(',').map(str::trim).collect();
                // nv_arch.h: GPU_ARCHITECTURE(series, arch) puts the series in bits 31:24
                // (NVGPU_ARCHITECTURE_SERIES) and the architecture in bits 23:0.
                if callee == "GPU_ARCHITECTURE" && args.len() == 2 {
                    let series = match self.eval_name(&format!("NVGPU_ARCHITECTURE_SERIES{}", args[0]), depth + 1)? {
                        Value::Number(n) => n,
                        other => return Err(format!("series {} is {other:?}", args[0])),
                    };
                    let arch = parse_number(args[1]).ok_or_else(|| format!("bad architecture in {e}"))?;
                    return Ok(Value::Number((series << 24) | arch));
                }
                // nvmisc.h: `NVBIT(b)` is `(1U << (b))` (`PCI_LAST_IMAGE` is `NVBIT(7)`).
                if callee == "NVBIT" && args.len() == 1 {
                    if let Some(bit) = parse_number(args[0]).filter(|&b| b < 32) {
                        return Ok(Value::Number(1 << bit));
                    }
                }
                // A register array at a literal index: `NV_PGC6_AON_SECURE_SCRATCH_GROUP_05(0)`.
                if let ([arg], Ok(Value::Indexed { base, stride })) =
                    (args.as_slice(), self.eval_name(callee, depth + 1))
                {
                    if let Some(i) = parse_number(arg) {
                        return Ok(Value::Number(base + i * stride));
                    }
                }
            }
        }
        Ok(Value::Other(e.to_owned()))
    }
}

/// Headers read so far, by release and path.
#[derive(Default)]
struct HeaderCache(BTreeMap<Header, Result<Defines, String>>);

impl HeaderCache {
    fn get(&mut self, header: Header) -> Result<&Defines, String> {
        self.0
            .entry(header)
            .or_insert_with(|| {
                let path = tree_dir(header.release).join(header.path);
                let mut defines = std::fs::read(&path)
                    .map(|bytes| parse_defines(&String::from_utf8_lossy(&bytes)))
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                if header.path.ends_with(".h") {
                    for sibling in
                        std::fs::read_dir(path.parent().unwrap_or(Path::new("."))).into_iter().flatten().flatten()
                    {
                        let sibling = sibling.path();
                        if sibling != path && sibling.extension().is_some_and(|e| e == "h") {
                            if let Ok(bytes) = std::fs::read(&sibling) {
                                for (name, bodies) in parse_defines(&String::from_utf8_lossy(&bytes)).defs {
                                    defines.context.entry(name).or_default().extend(bodies);
                                }
                            }
                        }
                    }
                }
                Ok(defines)
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

// ---------------------------------------------------------------------------------------------
// Checking facts.

fn check_fact(cache: &mut HeaderCache, fact: &HeaderFact) -> Result<(), String> {
    check_fact_in(cache, fact, fact.header)
}

/// `fact`'s value against `header`'s definition of the fact's name.
fn check_fact_in(cache: &mut HeaderCache, fact: &HeaderFact, header: Header) -> Result<(), String> {
    let defines = cache.get(header)?;
    if !defines.defs.contains_key(fact.name) {
        return Err(format!("{} is not defined in this header", fact.name));
    }
    let got = match fact.value {
        FactValue::Defined => return Ok(()),
        FactValue::Number(n) => (defines.eval_name(fact.name, 0)?, Value::Number(n)),
        FactValue::Bits { hi, lo } => (defines.eval_name(fact.name, 0)?, Value::Bits(hi.into(), lo.into())),
        FactValue::Indexed { base, stride } => {
            (defines.eval_name(fact.name, 0)?, Value::Indexed { base: base.into(), stride: stride.into() })
        }
    };
    if got.0 == got.1 {
        Ok(())
    } else {
        Err(format!("driver says {:?}, header says {:?}", got.1, got.0))
    }
}

/// For one-bit fields read as `bool`, the header's `_TRUE`/`_ENABLE`/`_SET` value must be 1 and
/// `_FALSE`/`_DISABLE` 0, or `true` would mean the opposite of what the header says.
fn check_bool_sense(cache: &mut HeaderCache, fact: &HeaderFact) -> Vec<Result<String, String>> {
    let FactValue::Bits { hi, lo } = fact.value else { return Vec::new() };
    if hi != lo {
        return Vec::new();
    }
    let Ok(defines) = cache.get(fact.header) else { return Vec::new() };
    let mut results = Vec::new();
    for (suffix, expected) in [("_TRUE", 1), ("_ENABLE", 1), ("_SET", 1), ("_FALSE", 0), ("_DISABLE", 0)] {
        let name = format!("{}{suffix}", fact.name);
        if defines.defs.contains_key(&name) {
            results.push(match defines.eval_name(&name, 0) {
                Ok(Value::Number(v)) if v == expected => Ok(name),
                other => Err(format!("{name}: expected {expected}, header says {other:?}")),
            });
        }
    }
    results
}

struct Report {
    checked: usize,
    failures: Vec<String>,
    per_release: BTreeMap<&'static str, usize>,
    headers: BTreeSet<Header>,
}

fn check_facts<'a>(facts: impl Iterator<Item = &'a HeaderFact>, releases: &[&str]) -> Report {
    let mut cache = HeaderCache::default();
    let mut report =
        Report { checked: 0, failures: Vec::new(), per_release: BTreeMap::new(), headers: BTreeSet::new() };
    for fact in facts.filter(|f| releases.contains(&f.header.release)) {
        report.checked += 1;
        *report.per_release.entry(fact.header.release).or_default() += 1;
        report.headers.insert(fact.header);
        if let Err(e) = check_fact(&mut cache, fact) {
            report.failures.push(format!("{} ({} {}): {e}", fact.name, fact.header.release, fact.header.path));
        }
        for result in check_bool_sense(&mut cache, fact) {
            report.checked += 1;
            if let Err(e) = result {
                report.failures.push(format!("{} ({}): {e}", fact.name, fact.header.path));
            }
        }
    }
    report
}

fn driver_facts() -> impl Iterator<Item = &'static HeaderFact> {
    hw::all_facts()
}

fn finish(what: &str, report: Report) {
    let mut summary = format!(
        "{what}: checked {} values ({:?}) against {} headers",
        report.checked,
        report.per_release,
        report.headers.len()
    );
    if report.failures.is_empty() {
        println!("{summary}");
        return;
    }
    let _ = writeln!(summary, "; {} mismatches:", report.failures.len());
    for failure in &report.failures {
        let _ = writeln!(summary, "  {failure}");
    }
    panic!("{summary}");
}

#[test]
fn every_fact_names_a_known_release() {
    let known = [headers::OGKM_PINNED, headers::OGKM_BLACKWELL, headers::OPEN_GPU_DOC];
    for fact in driver_facts() {
        assert!(known.contains(&fact.header.release), "{}: unknown release {}", fact.name, fact.header.release);
        assert!(!fact.header.path.is_empty(), "{}: no header path", fact.name);
    }
}

#[test]
fn pinned_release_facts_match_nvidia_headers() {
    require_release(headers::OGKM_PINNED);
    let report = check_facts(driver_facts(), &[headers::OGKM_PINNED]);
    assert!(report.checked > 250, "only {} facts: did a fact table fall out of hw::FACT_TABLES?", report.checked);
    finish("open-gpu-kernel-modules 535.261.03", report);
}

/// The facts citing the two trees Debian does not carry, each tree checked when present; a
/// missing one is recorded as a skip naming its facts by header.
#[test]
fn blackwell_and_qmd_facts_match_nvidia_headers() {
    let test = "blackwell_and_qmd_facts_match_nvidia_headers";
    let releases = [headers::OGKM_BLACKWELL, headers::OPEN_GPU_DOC];
    let (present, absent): (Vec<&str>, Vec<&str>) = releases.iter().partition(|r| tree_dir(r).is_dir());
    if !absent.is_empty() {
        let groups: Vec<String> =
            absent.iter().map(|r| format!("{} not checked: {}", fact_group(r), absent_because(r))).collect();
        tests::skips::record(test, &groups.join("; "));
    }
    if present.is_empty() {
        return;
    }
    let report = check_facts(driver_facts(), &present);
    for release in &present {
        let n = report.per_release.get(release).copied().unwrap_or(0);
        assert!(n > 30, "only {n} facts cite {release}");
    }
    finish(&format!("{present:?}"), report);
}

// ---------------------------------------------------------------------------------------------
// Blackwell facts against Debian's linux-source-7.2 (nouveau's and Nova's NVIDIA-derived files).

/// Nova's `NAME = 0x...,` enum members in `text` (its `Chipset` and `Architecture` tables).
fn nova_enum_values(text: &str) -> BTreeMap<String, u64> {
    let mut values = BTreeMap::new();
    for line in text.lines() {
        let Some((name, value)) = line.trim().split_once(" = ") else { continue };
        let Some(hex) = value.strip_suffix(',').and_then(|v| v.strip_prefix("0x")) else { continue };
        if is_ident(name) {
            if let Ok(v) = u64::from_str_radix(hex, 16) {
                values.insert(name.to_owned(), v);
            }
        }
    }
    values
}

/// Nova's register declarations in `text`, as NVIDIA's names: `NV_X(u32) @ 0x1234 {` gives
/// `NV_X` = Number(0x1234) and each `hi:lo name ...;` inside it `NV_X_NAME` = Bits.
fn nova_registers(text: &str) -> BTreeMap<String, FactValue> {
    let mut facts = BTreeMap::new();
    let mut register: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('}') {
            register = None;
            continue;
        }
        if let Some((head, offset)) = line.strip_suffix('{').and_then(|l| l.split_once(" @ ")) {
            let name = head.rsplit(' ').next().unwrap_or("").split('(').next().unwrap_or("");
            let offset = offset.trim().strip_prefix("0x").and_then(|o| u64::from_str_radix(o, 16).ok());
            if let (true, Some(offset)) = (name.starts_with("NV_"), offset) {
                facts.insert(name.to_owned(), FactValue::Number(offset));
                register = Some(name.to_owned());
            }
            continue;
        }
        let Some(reg) = &register else { continue };
        let mut words = line.split_whitespace();
        let (Some(range), Some(field)) = (words.next(), words.next()) else { continue };
        let field = field.trim_end_matches(';');
        let Some((hi, lo)) = range.split_once(':') else { continue };
        if let (Ok(hi), Ok(lo), true) = (hi.parse(), lo.parse(), is_ident(field)) {
            facts.insert(format!("{reg}_{}", field.to_uppercase()), FactValue::Bits { hi, lo });
        }
    }
    facts
}

/// The last two parts of a header's path (`gb202/dev_therm.h`).
fn chip_and_file(path: &str) -> Vec<&str> {
    path.rsplit('/').take(2).collect()
}

/// The driver's value of the `GPU_ARCHITECTURE_*` / `GPU_IMPLEMENTATION_*` / ... fact `name`.
fn fact_number(name: &str) -> Option<u64> {
    driver_facts().find(|f| f.name == name).and_then(|f| match f.value {
        FactValue::Number(n) => Some(n),
        _ => None,
    })
}

/// Every fact citing 570.133.07 that Debian's linux-source-7.2 also holds, against it: names
/// nouveau's headers define (its excerpt of gb202's `dev_therm.h`, its class numbers) by value,
/// nv_ref.h's BOOT_0/BOOT_42 registers and fields against Nova's register table, and the chip ids
/// and architectures of nv_arch.h/nv_ref.h against Nova's chip table (every chip the driver knows,
/// through `chip::identify`). What no Debian file holds is named: a skip while
/// the 570.133.07 tree is absent, a note when `blackwell_and_qmd_facts_match_nvidia_headers`
/// checks it against its release.
#[test]
fn blackwell_facts_match_debian_linux_source() {
    let tree = tree_dir(headers::LINUX_SOURCE);
    require_dir(&tree, "Debian linux-source-7.2 7.2.13-1 (sid): nouveau and Nova");
    let mut cache = HeaderCache::default();
    let mut failures = Vec::new();
    let mut covered: BTreeSet<&str> = BTreeSet::new();
    let witnesses = [headers::NOUVEAU_GB202_DEV_THERM, headers::NOUVEAU_NVIF_CLASS];
    for fact in driver_facts().filter(|f| f.header.release == headers::OGKM_BLACKWELL) {
        // A witness only counts for a fact of the same chip's header (`gb202/dev_therm.h`) or,
        // for class numbers, nouveau's class list.
        for witness in witnesses {
            let defined = cache.get(witness).map(|d| d.defs.contains_key(fact.name)).unwrap_or_else(|e| panic!("{e}"));
            let same_file = chip_and_file(fact.header.path) == chip_and_file(witness.path);
            let class_number = witness == headers::NOUVEAU_NVIF_CLASS && fact.header.path.contains("/inc/class/cl");
            if defined && (same_file || class_number) {
                covered.insert(fact.name);
                if let Err(e) = check_fact_in(&mut cache, fact, witness) {
                    failures.push(format!("{} ({}): {e}", fact.name, witness.path));
                }
            }
        }
    }

    // Registers and fields Nova declares under NVIDIA's names (nv_ref.h's BOOT_0 and BOOT_42).
    let regs_path = tree.join(headers::NOVA_REGS_RS.path);
    let nova_regs =
        nova_registers(&std::fs::read_to_string(&regs_path).unwrap_or_else(|e| panic!("{}: {e}", regs_path.display())));
    assert!(nova_regs.contains_key("NV_PMC_BOOT_42_ARCHITECTURE"), "could not read {}", regs_path.display());
    for fact in driver_facts().filter(|f| f.header.release == headers::OGKM_BLACKWELL) {
        if let (Some(theirs), true) = (nova_regs.get(fact.name), fact.header == headers::NV_REF_570) {
            covered.insert(fact.name);
            if *theirs != fact.value {
                failures.push(format!(
                    "{}: driver says {:?}, Nova's {} {theirs:?}",
                    fact.name,
                    fact.value,
                    headers::NOVA_REGS_RS.path
                ));
            }
        }
    }

    // Chip ids: Nova's `Chipset` is NV_PMC_BOOT_42_CHIP_ID, its `Architecture` the BOOT_42
    // architecture field.
    let nova_path = tree.join(headers::NOVA_GPU_RS.path);
    let nova = nova_enum_values(
        &std::fs::read_to_string(&nova_path).unwrap_or_else(|e| panic!("{}: {e}", nova_path.display())),
    );
    let mut chips = 0;
    for &chip in Chipset::ALL {
        let Some(&id) = nova.get(chip.name()) else {
            failures.push(format!("{chip}: not in Nova's Chipset ({})", headers::NOVA_GPU_RS.path));
            continue;
        };
        chips += 1;
        let boot42 = (id as u32) << 20 | 0xa1 << 12;
        match chip::identify(0, boot42) {
            Ok(found) if found.chipset == chip => {}
            other => failures.push(format!("{chip}: Nova's id {id:#x} (BOOT42 {boot42:#x}) gives {other:?}")),
        }
        if chip.architecture() == chip::Architecture::Blackwell {
            let arch = fact_number(nv_arch_name(chip.family()));
            let implementation = fact_number(&format!("GPU_IMPLEMENTATION_{}", chip.name()));
            match (arch, implementation) {
                (Some(a), Some(i)) if (a & 0xff0) | i == id => {
                    covered.insert(nv_arch_name(chip.family()));
                    covered.extend(
                        driver_facts().map(|f| f.name).filter(|n| *n == format!("GPU_IMPLEMENTATION_{}", chip.name())),
                    );
                }
                other => failures.push(format!("{chip}: nv_arch.h facts {other:?}, Nova's chip id {id:#x}")),
            }
        }
    }
    for (nova_name, fact) in [
        ("BlackwellGB10x", "NV_PMC_BOOT_42_ARCHITECTURE_GB100"),
        ("BlackwellGB20x", "NV_PMC_BOOT_42_ARCHITECTURE_GB200"),
    ] {
        match (nova.get(nova_name), fact_number(fact)) {
            (Some(&n), Some(ours)) if n == ours => {
                covered.insert(fact);
            }
            other => failures.push(format!("{fact}: ours and Nova's {nova_name}: {other:?}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreements with {}:\n  {}",
        failures.len(),
        headers::LINUX_SOURCE,
        failures.join("\n  ")
    );
    assert!(chips >= 20, "only {chips} chips in Nova's table");

    let blackwell: Vec<&HeaderFact> = driver_facts().filter(|f| f.header.release == headers::OGKM_BLACKWELL).collect();
    let left: Vec<String> = blackwell
        .iter()
        .filter(|f| !covered.contains(f.name))
        .map(|f| format!("{} ({})", f.name, f.header.path.rsplit_once("/published/").map_or(f.header.path, |(_, p)| p)))
        .collect();
    println!(
        "{} of {} facts citing {} checked against {}, and {chips} chip ids against Nova's table",
        blackwell.len() - left.len(),
        blackwell.len(),
        headers::OGKM_BLACKWELL,
        headers::LINUX_SOURCE
    );
    if tree_dir(headers::OGKM_BLACKWELL).is_dir() {
        println!("not in {}: {} (checked against {})", headers::LINUX_SOURCE, left.join(", "), headers::OGKM_BLACKWELL);
    } else if !left.is_empty() {
        tests::skips::record(
            "blackwell_facts_match_debian_linux_source",
            &format!(
                "{} facts citing {} are in no Debian file, so not checked at all: {}; {}",
                left.len(),
                headers::OGKM_BLACKWELL,
                left.join(", "),
                absent_because(headers::OGKM_BLACKWELL)
            ),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Chip identification from header values.

/// nv_arch.h's name for a family's architecture (spelled here, independently of the driver).
fn nv_arch_name(family: Family) -> &'static str {
    match family {
        Family::Turing => "GPU_ARCHITECTURE_TURING",
        Family::Ga100 | Family::Ga10x => "GPU_ARCHITECTURE_AMPERE",
        Family::Ada => "GPU_ARCHITECTURE_ADA",
        Family::Hopper => "GPU_ARCHITECTURE_HOPPER",
        Family::BlackwellGb10x => "GPU_ARCHITECTURE_BLACKWELL_GB1XX",
        Family::BlackwellGb20x => "GPU_ARCHITECTURE_BLACKWELL_GB2XX",
    }
}

#[test]
fn chips_before_blackwell_are_identified_from_header_values() {
    require_release(headers::OGKM_PINNED);
    identify_from_header_values(|c| c.architecture() != chip::Architecture::Blackwell);
}

#[test]
fn blackwell_chips_are_identified_from_header_values() {
    if !tree_or_skip(
        "blackwell_chips_are_identified_from_header_values",
        headers::OGKM_BLACKWELL,
        &format!("Blackwell chip identification ({} from {})", blackwell_chips(), headers::NV_ARCH_570.path),
    ) {
        return;
    }
    require_release(headers::OGKM_BLACKWELL);
    identify_from_header_values(|c| c.architecture() == chip::Architecture::Blackwell);
}

/// The Blackwell chips the driver knows, for messages.
fn blackwell_chips() -> String {
    let names: Vec<&str> =
        Chipset::ALL.iter().filter(|c| c.architecture() == chip::Architecture::Blackwell).map(|c| c.name()).collect();
    names.join(", ")
}

fn identify_from_header_values(selected: impl Fn(Chipset) -> bool) {
    let mut cache = HeaderCache::default();
    let mut failures = Vec::new();
    let mut checked = 0;
    for &chip in Chipset::ALL.iter().filter(|c| selected(**c)) {
        checked += 1;
        let header = match chip.architecture() {
            chip::Architecture::Blackwell => headers::NV_ARCH_570,
            _ => headers::NV_ARCH,
        };
        let defines = cache.get(header).expect("nv_arch.h");
        let arch = defines.eval_name(nv_arch_name(chip.family()), 0);
        let implementation = defines.eval_name(&format!("GPU_IMPLEMENTATION_{}", chip.name()), 0);
        let (Ok(Value::Number(arch)), Ok(Value::Number(implementation))) = (arch.clone(), implementation.clone())
        else {
            failures.push(format!("{chip}: nv_arch.h gives {arch:?} / {implementation:?}"));
            continue;
        };
        // GPU_ARCHITECTURE_* is the architecture shifted left by 4; the chip id is
        // NV_PMC_BOOT_42_CHIP_ID (bits 28:20), the same number BOOT_0 spreads over 28:24 and 23:20.
        let chip_id = (arch & 0xfff) | implementation;
        let boot42 = (chip_id as u32) << 20 | 0xa1 << 12;
        let boot0 = ((arch as u32 & 0xff0) << 20) | (implementation as u32) << 20 | 0xa1;
        for (boot0, boot42) in [(0, boot42), (boot0, 0)] {
            match chip::identify(boot0, boot42) {
                Ok(id) if id.chipset == chip => {}
                other => failures.push(format!("{chip}: BOOT0 {boot0:#x} BOOT42 {boot42:#x} gives {other:?}")),
            }
        }
    }
    assert!(checked > 0, "no chip selected");
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------------------------------------
// Classes each chip exposes, per RM's generated class lists.

fn class_list(text: &str, chip: &str) -> Option<BTreeSet<String>> {
    let start = text.find(&format!("gpuGetClassDescriptorList_{chip}("))?;
    let body = &text[start..];
    let end = body[1..].find("\ngpuGetClassDescriptorList_").map_or(body.len(), |e| e + 1);
    let mut names = BTreeSet::new();
    for entry in body[..end].split('{').skip(1) {
        let name = entry.split(',').next().unwrap_or("").trim();
        if is_ident(name) {
            names.insert(name.to_owned());
        }
    }
    Some(names)
}

#[test]
fn hal_classes_before_blackwell_are_the_ones_rm_lists() {
    require_release(headers::OGKM_PINNED);
    hal_classes_match_rm(|c| c.architecture() != chip::Architecture::Blackwell);
}

#[test]
fn blackwell_hal_classes_are_the_ones_rm_lists() {
    if !tree_or_skip(
        "blackwell_hal_classes_are_the_ones_rm_lists",
        headers::OGKM_BLACKWELL,
        &format!(
            "Blackwell HAL classes (gpfifo, copy, compute, usermode of {} against {})",
            blackwell_chips(),
            headers::GPU_CLASS_LIST_570.path
        ),
    ) {
        return;
    }
    require_release(headers::OGKM_BLACKWELL);
    hal_classes_match_rm(|c| c.architecture() == chip::Architecture::Blackwell);
}

fn hal_classes_match_rm(selected: impl Fn(Chipset) -> bool) {
    // The driver's class constants by value, so a HAL's number maps back to NVIDIA's name.
    let names: HashMap<u64, &str> = hw::classes::FACTS
        .iter()
        .flat_map(|g| g.iter())
        .flat_map(|f| f.iter())
        .filter_map(|f| match f.value {
            FactValue::Number(n) => Some((n, f.name)),
            _ => None,
        })
        .collect();
    let mut failures = Vec::new();
    let mut checked = 0;
    for &chip in Chipset::ALL.iter().filter(|c| selected(**c)) {
        let header = match chip.architecture() {
            chip::Architecture::Blackwell => headers::GPU_CLASS_LIST_570,
            _ => headers::GPU_CLASS_LIST,
        };
        let path = tree_dir(header.release).join(header.path);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Some(listed) = class_list(&text, chip.name()) else {
            failures.push(format!("{chip}: no gpuGetClassDescriptorList_{chip} in {}", path.display()));
            continue;
        };
        let classes = chip.hal().classes;
        for (role, class) in [
            ("gpfifo", classes.gpfifo),
            ("copy", classes.copy),
            ("compute", classes.compute),
            ("usermode", classes.usermode),
        ] {
            checked += 1;
            match names.get(&u64::from(class)) {
                Some(name) if listed.contains(*name) => {}
                Some(name) => {
                    failures.push(format!("{chip}: {role} class {name} ({class:#x}) not in RM's list {listed:?}"))
                }
                None => failures.push(format!("{chip}: {role} class {class:#x} is not a declared class constant")),
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    println!("checked {checked} HAL class choices against RM's class lists");
}

// ---------------------------------------------------------------------------------------------
// GSP firmware: file names per nv-firmware.h, signature sections per the Debian firmware.

/// `nv_firmware_path`'s GSP branch: firmware family name -> file name.
fn gsp_files_by_family(text: &str) -> BTreeMap<String, String> {
    let start = text.find("if (fw_type == NV_FIRMWARE_TYPE_GSP)").unwrap_or(0);
    let end = text[start..].find("NV_FIRMWARE_TYPE_GSP_LOG").map_or(text.len(), |e| start + e);
    let mut pending = Vec::new();
    let mut map = BTreeMap::new();
    for line in text[start..end].lines() {
        let line = line.trim();
        if let Some(case) = line.strip_prefix("case NV_FIRMWARE_CHIP_FAMILY_") {
            pending.push(case.split(':').next().unwrap_or("").trim().to_owned());
        } else if let Some(q) = line.find("(\"") {
            let file = line[q + 2..].split('"').next().unwrap_or("").to_owned();
            for family in pending.drain(..) {
                map.insert(family, file.clone());
            }
        }
    }
    map
}

/// Section names and contents of an ELF64 little-endian file, read without trusting it.
fn elf_sections(bytes: &[u8]) -> Result<BTreeMap<String, &[u8]>, String> {
    let u16_at = |o: usize| bytes.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u32_at = |o: usize| bytes.get(o..o + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize);
    let u64_at = |o: usize| bytes.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap()) as usize);
    if bytes.get(..5) != Some(b"\x7fELF\x02") {
        return Err("not an ELF64 file".into());
    }
    let bad = || "truncated ELF".to_string();
    let (shoff, shentsize, shnum, shstrndx) = (
        u64_at(0x28).ok_or_else(bad)?,
        u16_at(0x3a).ok_or_else(bad)?,
        u16_at(0x3c).ok_or_else(bad)?,
        u16_at(0x3e).ok_or_else(bad)?,
    );
    let section = |i: usize| -> Option<(usize, &[u8])> {
        let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
        let (name, offset, size) = (u32_at(h)?, u64_at(h + 0x18)?, u64_at(h + 0x20)?);
        Some((name, bytes.get(offset..offset.checked_add(size)?)?))
    };
    let (_, strtab) = section(shstrndx).ok_or_else(bad)?;
    let mut sections = BTreeMap::new();
    for i in 0..shnum {
        let (name_offset, data) = section(i).ok_or_else(bad)?;
        let name = strtab.get(name_offset..).ok_or_else(bad)?;
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        sections.insert(String::from_utf8_lossy(name).into_owned(), data);
    }
    Ok(sections)
}

#[test]
fn gsp_firmware_choices_match_nvidia_and_debian() {
    let tree = require_release(headers::OGKM_PINNED);
    let firmware_dir = data_root().join("firmware-nvidia-gsp/lib/firmware/nvidia").join(chip::GSP_FIRMWARE_VERSION);
    require_dir(&firmware_dir, "Debian firmware-nvidia-gsp 535.261.03-1");
    let nv_firmware = std::fs::read_to_string(tree.join(headers::NV_FIRMWARE.path)).expect("nv-firmware.h");
    let by_family = gsp_files_by_family(&nv_firmware);
    assert!(by_family.len() >= 6, "could not read nv_firmware_path: {by_family:?}");

    let mut images = BTreeMap::new();
    let mut failures = Vec::new();
    for &chip in Chipset::ALL {
        let family = chip.firmware_family();
        let (Some(file), Some(section)) = (chip.gsp_firmware_file(), chip.gsp_signature_section()) else {
            // Blackwell: 535.261.03 has no firmware family for it at all.
            assert!(
                !by_family.contains_key(&family.suffix().to_uppercase()),
                "{chip}: 535 has firmware for {family:?}"
            );
            continue;
        };
        // nv_firmware_chip_family_to_string gives the suffix the section names use.
        let to_string =
            format!("case NV_FIRMWARE_CHIP_FAMILY_{}: return \"{}\";", family.suffix().to_uppercase(), family.suffix());
        if !nv_firmware.lines().any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == to_string) {
            failures.push(format!("{chip}: nv-firmware.h has no `{to_string}`"));
        }
        match by_family.get(&family.suffix().to_uppercase()) {
            Some(expected) if expected == file => {}
            other => failures.push(format!("{chip}: driver picks {file}, nv-firmware.h says {other:?}")),
        }
        let bytes = images
            .entry(file)
            .or_insert_with(|| std::fs::read(firmware_dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}")));
        let sections = elf_sections(bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        match sections.get(section) {
            Some(data) if data.len() == 0x1000 => {}
            Some(data) => failures.push(format!("{chip}: {file} {section} is {:#x} bytes, not 0x1000", data.len())),
            None => failures
                .push(format!("{chip}: {file} has no {section} (has {:?})", sections.keys().collect::<Vec<_>>())),
        }
        let version = sections.get(".fwversion").map(|v| String::from_utf8_lossy(v).trim_end_matches('\0').to_owned());
        if version.as_deref() != Some(chip::GSP_FIRMWARE_VERSION) {
            failures.push(format!("{chip}: {file} .fwversion is {version:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------------------------------------
// Board names from the README's supported-GPU table.

/// `(name, device id, has a subsystem id)` rows of a README's GPU tables.
fn readme_boards(text: &str) -> Vec<(String, u16, bool)> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[0].is_empty() {
            continue;
        }
        let ids: Vec<&str> = cells[2].split_whitespace().collect();
        let Some(device) = ids.first().filter(|id| id.len() == 4).and_then(|id| u16::from_str_radix(id, 16).ok())
        else {
            continue;
        };
        rows.push((cells[1].to_owned(), device, ids.len() > 1));
    }
    rows
}

#[test]
fn board_names_match_the_535_supported_gpu_table() {
    board_names_match(headers::OGKM_PINNED);
}

#[test]
fn board_names_match_the_570_supported_gpu_table() {
    let boards: Vec<String> = chip::BOARDS
        .iter()
        .filter(|b| b.source.release == headers::OGKM_BLACKWELL)
        .map(|b| format!("{:#06x} {}", b.device_id, b.name))
        .collect();
    if !tree_or_skip(
        "board_names_match_the_570_supported_gpu_table",
        headers::OGKM_BLACKWELL,
        &format!(
            "Board names of {} boards ({}) against the supported-GPU table of {} {}",
            boards.len(),
            boards.join(", "),
            headers::README_570.release,
            headers::README_570.path
        ),
    ) {
        return;
    }
    board_names_match(headers::OGKM_BLACKWELL);
}

fn board_names_match(release: &str) {
    let mut failures = Vec::new();
    let boards: Vec<_> = chip::BOARDS.iter().filter(|b| b.source.release == release).collect();
    assert!(!boards.is_empty(), "no board cites {release}");
    for board in boards {
        let dir = require_release(board.source.release);
        let text = std::fs::read_to_string(dir.join(board.source.path)).expect("README.md");
        let rows: Vec<_> = readme_boards(&text).into_iter().filter(|r| r.1 == board.device_id).collect();
        let preferred = rows.iter().find(|r| !r.2).or(rows.first());
        match preferred {
            Some((name, _, _)) if name == board.name => {}
            other => failures.push(format!(
                "{:#06x}: driver says {:?}, {} {} says {other:?} (all rows: {rows:?})",
                board.device_id, board.name, board.source.release, board.source.path
            )),
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------------------------------------
// The reader itself.

#[test]
fn define_reader_handles_nvidia_forms() {
    let d = parse_defines(
        "#define NV_A 0x00000A00 /* R--4R */\n\
         #define NV_A_F 28:20 /* R-XVF */\n\
         #define NV_R(i) (0x00118234+(i)*4) /* RW-4A */\n\
         #define NV_ALIAS NV_R(2)\n\
         #define NV_RANGE 0x113fff:0x110000 /* RW--D */\n\
         #define NV_P (0x0000C46F)\n\
         #define NV_PROM(i) (0x00300000+(i)) /* RW-1A */\n\
         #define NV_M(i) (i):(i)\n\
         #define GPU_ARCHITECTURE(series, arch) (DRF_DEF(GPU, _ARCHITECTURE, _SERIES, series) | \\\n    DRF_NUM(GPU, _ARCHITECTURE, _ARCH, arch))\n\
         #define NVGPU_ARCHITECTURE_SERIES_CLASSIC 0x00\n\
         #define GPU_ARCHITECTURE_TURING GPU_ARCHITECTURE(_CLASSIC, 0x0160)\n\
         #define PCI_LAST_IMAGE NVBIT(7)\n\
         typedef enum {\n    NV_FIRMWARE_CHIP_FAMILY_GA10X = 4,\n} t;\n\
         {\n        const NvU32 ESTIMATED_RESERVE_FB = 0x200000;\n        const NvU32 NOT_A_NUMBER = a + b;\n}\n",
    );
    assert_eq!(d.eval_name("NV_A", 0), Ok(Value::Number(0xa00)));
    assert_eq!(d.eval_name("NV_A_F", 0), Ok(Value::Bits(28, 20)));
    assert_eq!(d.eval_name("NV_R", 0), Ok(Value::Indexed { base: 0x118234, stride: 4 }));
    assert_eq!(d.eval_name("NV_ALIAS", 0), Ok(Value::Number(0x11823c)));
    assert_eq!(d.eval_name("NV_RANGE", 0), Ok(Value::Bits(0x113fff, 0x110000)));
    assert_eq!(d.eval_name("NV_P", 0), Ok(Value::Number(0xc46f)));
    assert_eq!(d.eval_name("NV_PROM", 0), Ok(Value::Indexed { base: 0x300000, stride: 1 }));
    assert!(matches!(d.eval_name("NV_M", 0), Ok(Value::Other(_))));
    assert_eq!(d.eval_name("GPU_ARCHITECTURE_TURING", 0), Ok(Value::Number(0x160)));
    assert_eq!(d.eval_name("NV_FIRMWARE_CHIP_FAMILY_GA10X", 0), Ok(Value::Number(4)));
    assert_eq!(d.eval_name("PCI_LAST_IMAGE", 0), Ok(Value::Number(0x80)));
    assert_eq!(d.eval_name("ESTIMATED_RESERVE_FB", 0), Ok(Value::Number(0x200000)));
    assert!(d.eval_name("NOT_A_NUMBER", 0).is_err());
    assert!(d.eval_name("NV_MISSING", 0).is_err());
}

// ---------------------------------------------------------------------------------------------
// One home for every fact: `nvgpu::hw` declares each fact once, and every header path once, in
// `hw::headers`. Nothing else builds a `Header` or a `HeaderFact`, so no fact can escape the
// tables this test checks.

/// The workspace's source trees.
const SOURCE_TREES: &[&str] =
    &["drivers", "sim", "uvm", "nvlink", "app", "kernel", "tools", "xtask", "boot", "tests", "fuzz"];
/// Where facts are declared.
const HW_DIR: &str = "drivers/gpu/src/hw/";
/// Where header paths are written.
const HEADERS_FILE: &str = "drivers/gpu/src/hw/headers.rs";
/// This file, which names the identifiers it looks for.
const THIS_FILE: &str = "tests/tests/header_conformance.rs";
/// `nvgpu::hw`'s macros that declare facts (each builds `HeaderFact`s).
const FACT_MACROS: &[&str] = &["registers", "constants", "field_values", "defined_names"];
/// What to do instead of building a fact outside `hw`.
const FACT_ADVICE: &str = "declare the fact once in a module of drivers/gpu/src/hw/ (registers!, constants!, \
     field_values! or defined_names!), add its table to hw::FACT_TABLES, and import the declaration";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir` (relative to the workspace root), skipping build output.
fn rust_files(root: &Path, dir: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{dir}/{name}");
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() && name != "target" && !name.starts_with('.') {
            rust_files(root, &rel, out);
        } else if kind.is_file() && name.ends_with(".rs") {
            out.push(rel);
        }
    }
}

/// A Rust source with its comments and literals blanked out (same length in chars, newlines
/// kept), and its string literals' contents with the line each starts on.
struct Lexed {
    code: Vec<char>,
    strings: Vec<(usize, String)>,
}

impl Lexed {
    fn line_of(&self, at: usize) -> usize {
        1 + self.code[..at].iter().filter(|&&c| c == '\n').count()
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn lex(text: &str) -> Lexed {
    let src: Vec<char> = text.chars().collect();
    let mut code = src.clone();
    let mut strings = Vec::new();
    let blank = |code: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut code[from..to.min(src.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let at = |i: usize| src.get(i).copied().unwrap_or('\0');
    let mut line = 1;
    let mut i = 0;
    while i < src.len() {
        let c = src[i];
        let prev_ident = i > 0 && is_ident_char(src[i - 1]);
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            let end = src[i..].iter().position(|&c| c == '\n').map_or(src.len(), |n| i + n);
            blank(&mut code, i, end);
            i = end;
        } else if c == '/' && at(i + 1) == '*' {
            let (start, mut depth) = (i, 0);
            while i < src.len() {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(at(i) == '\n');
                    i += 1;
                }
            }
            blank(&mut code, start, i);
        } else if !prev_ident && (c == 'r' || (matches!(c, 'b' | 'c') && at(i + 1) == 'r')) && {
            let hashes = if c == 'r' { i + 1 } else { i + 2 };
            let quote = (hashes..src.len()).find(|&j| src[j] != '#').unwrap_or(src.len());
            at(quote) == '"'
        } {
            // A raw string: r"..", r#".."#, br#".."#.
            let hashes_at = if c == 'r' { i + 1 } else { i + 2 };
            let quote = (hashes_at..src.len()).find(|&j| src[j] != '#').unwrap_or(src.len());
            let hashes = quote - hashes_at;
            let body = quote + 1;
            let mut end = body;
            while end < src.len() && !(src[end] == '"' && (1..=hashes).all(|k| at(end + k) == '#')) {
                end += 1;
            }
            let content: String = src[body..end.min(src.len())].iter().collect();
            strings.push((line, content.clone()));
            line += content.matches('\n').count();
            blank(&mut code, i, end + 1 + hashes);
            i = end + 1 + hashes;
        } else if c == '"' || (!prev_ident && matches!(c, 'b' | 'c') && at(i + 1) == '"') {
            let body = if c == '"' { i + 1 } else { i + 2 };
            let mut end = body;
            while end < src.len() && src[end] != '"' {
                end += if src[end] == '\\' { 2 } else { 1 };
            }
            let content: String = src[body..end.min(src.len())].iter().collect();
            strings.push((line, content.clone()));
            line += content.matches('\n').count();
            blank(&mut code, i, end + 1);
            i = end + 1;
        } else if c == '\'' && (at(i + 1) == '\\' || (at(i + 1) != '\'' && at(i + 2) == '\'')) {
            // A char literal ('a', '\n', '\u{1F}'); anything else after a quote is a lifetime.
            let mut end = if at(i + 1) == '\\' { i + 3 } else { i + 2 };
            while end < src.len() && src[end] != '\'' {
                end += 1;
            }
            blank(&mut code, i, end + 1);
            i = end + 1;
        } else {
            i += 1;
        }
    }
    Lexed { code, strings }
}

/// The identifiers of `code` with their offsets.
fn idents(code: &[char]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        if is_ident_char(code[i]) {
            let start = i;
            while i < code.len() && is_ident_char(code[i]) {
                i += 1;
            }
            if !code[start].is_ascii_digit() {
                out.push((start, code[start..i].iter().collect()));
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The code after `at`, without leading whitespace.
fn after(code: &[char], at: usize) -> String {
    code[at..].iter().skip_while(|c| c.is_whitespace()).take(3).collect()
}

/// The code before `at`, without trailing whitespace, reversed.
fn before(code: &[char], at: usize) -> String {
    code[..at].iter().rev().skip_while(|c| c.is_whitespace()).take(3).collect()
}

/// Where `rel` (outside `hw`) builds a `Header` or `HeaderFact`: a struct literal (or pattern),
/// an associated-function call, a `const fn` returning one, or one of `hw`'s fact macros used
/// from here.
fn fact_constructions(rel: &str, lexed: &Lexed) -> Vec<String> {
    let code = &lexed.code;
    let tokens = idents(code);
    let mut found = Vec::new();
    for (k, (at, word)) in tokens.iter().enumerate() {
        let end = at + word.len();
        let prev_word = k.checked_sub(1).map(|p| tokens[p].1.as_str());
        let where_ = format!("{rel}:{}", lexed.line_of(*at));
        if word == "Header" || word == "HeaderFact" {
            let qualified = before(code, *at).starts_with("::");
            // `Other::Header`: another path's item of that name (an enum variant, say).
            if qualified && !matches!(prev_word, Some("hw" | "headers")) {
                continue;
            }
            if matches!(prev_word, Some("struct" | "enum" | "impl" | "for" | "trait")) && !qualified {
                continue;
            }
            let next = after(code, end);
            if before(code, *at).starts_with(">-") {
                // `-> Header`: a constructor if the function is a `const fn`.
                let func = tokens[..k].iter().rposition(|(_, w)| w == "fn");
                if func.is_some_and(|f| f > 0 && tokens[f - 1].1 == "const") {
                    found.push(format!("{where_}: a `const fn` returning `{word}` builds facts outside nvgpu::hw"));
                }
            } else if next.starts_with('{') {
                found.push(format!("{where_}: a `{word} {{ .. }}` literal builds a fact outside nvgpu::hw"));
            } else if next.starts_with("::") {
                let call = tokens.get(k + 1).is_some_and(|(a, w)| after(code, a + w.len()).starts_with('('));
                if call {
                    found.push(format!("{where_}: `{word}::{}(..)` builds a fact outside nvgpu::hw", tokens[k + 1].1));
                }
            }
        } else if FACT_MACROS.contains(&word.as_str()) {
            let root = |p: Option<&str>| matches!(p, Some("nvgpu" | "crate" | "hw"));
            let invoked = after(code, end).starts_with('!');
            let qualified = before(code, *at).starts_with("::") && root(prev_word);
            // Imported by a `use` rooted at `nvgpu` (or, in the driver, at `crate`).
            let in_use = {
                let text: String = code[..*at].iter().collect();
                let start = text
                    .rmatch_indices("use ")
                    .map(|(u, _)| u)
                    .find(|&u| !text[..u].chars().next_back().is_some_and(is_ident_char));
                start.map(|u| &text[u..]).is_some_and(|stmt| {
                    !stmt.contains(';')
                        && (stmt.starts_with("use nvgpu::")
                            || (rel.starts_with("drivers/gpu/src/") && stmt.starts_with("use crate::")))
                })
            };
            if (invoked && qualified) || (in_use && !invoked) {
                found.push(format!("{where_}: `{word}!` (nvgpu::hw's fact macro) used outside nvgpu::hw"));
            }
        }
    }
    found
}

/// The NVIDIA path a string literal names, if it ends in one (`src/.../x.h`, `kernel-open/...`,
/// `classes/...` of open-gpu-doc; `.h` or `.c`), also inside a longer path.
fn header_path(literal: &str) -> Option<&str> {
    if !(literal.ends_with(".h") || literal.ends_with(".c")) {
        return None;
    }
    ["src/", "kernel-open/", "classes/"]
        .iter()
        .filter_map(|root| {
            literal.match_indices(root).map(|(i, _)| i).find(|&i| i == 0 || literal.as_bytes()[i - 1] == b'/')
        })
        .min()
        .map(|i| &literal[i..])
}

#[test]
fn facts_and_header_paths_are_declared_once_in_hw() {
    let root = workspace_root();
    let mut files = Vec::new();
    for tree in SOURCE_TREES {
        rust_files(&root, tree, &mut files);
    }
    assert!(files.iter().any(|f| f == HEADERS_FILE), "{HEADERS_FILE} not found under {}", root.display());
    let mut problems = Vec::new();
    let mut paths: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut scanned = 0;
    for rel in &files {
        if rel == THIS_FILE {
            continue;
        }
        let text = std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let lexed = lex(&text);
        scanned += 1;
        if !rel.starts_with(HW_DIR) {
            problems.extend(fact_constructions(rel, &lexed));
        }
        for (line, literal) in &lexed.strings {
            if let Some(path) = header_path(literal) {
                paths.entry(path.to_owned()).or_default().push(format!("{rel}:{line}"));
            }
        }
    }
    for (path, places) in &paths {
        let outside: Vec<&String> = places.iter().filter(|p| !p.starts_with(&format!("{HEADERS_FILE}:"))).collect();
        if outside.len() >= 2 || (!outside.is_empty() && outside.len() < places.len()) {
            for place in &outside {
                problems.push(format!(
                    "{place}: header path \"{path}\" is written {} times ({}); name it once in {HEADERS_FILE} \
                     (`NAME = RELEASE: \"{path}\";`) and use `headers::NAME` (or `headers::NAME.path`)",
                    places.len(),
                    places.join(", ")
                ));
            }
        }
    }
    assert!(scanned > 100, "only {scanned} source files scanned under {}", root.display());
    assert!(
        problems.is_empty(),
        "{} place(s) keep a fact or a header path outside nvgpu::hw (for a fact: {FACT_ADVICE}):\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
    println!("{scanned} source files: no fact built and no header path written outside nvgpu::hw");
}

#[test]
fn each_header_is_named_once() {
    let mut seen = BTreeMap::new();
    for h in headers::ALL {
        let tinygrad = h.release == headers::TINYGRAD && h.path.starts_with("tinygrad/") && h.path.ends_with(".py");
        let linux = h.release == headers::LINUX_SOURCE && h.path.starts_with("drivers/gpu/");
        assert!(
            header_path(h.path).is_some() || h.path == "README.md" || tinygrad || linux,
            "{}: not a source path",
            h.path
        );
        if let Some(previous) = seen.insert((h.release, h.path), h) {
            panic!("{} {} is named twice in hw::headers ({previous:?})", h.release, h.path);
        }
    }
}

/// The scanner itself finds what it must and nothing else.
#[test]
fn the_fact_scanner_tells_constructions_from_lookalikes() {
    let bad = lex(concat!(
        "use nvgpu::hw::{Header, HeaderFact, FactValue};\n",
        "const A: Header = Header { release: R, path: P };\n",
        "const B: HeaderFact = nvgpu::hw::HeaderFact { name: \"N\", header: A, value: FactValue::Defined };\n",
        "const fn pinned(path: &'static str) -> Header { todo!() }\n",
        "const C: Header = Header::new(\"x\");\n",
        "nvgpu::constants! { pub const F; }\n",
        "use nvgpu::{registers, hw};\n",
    ));
    let found = fact_constructions("sim/src/x.rs", &bad);
    assert_eq!(found.len(), 6, "{found:#?}");
    for (line, want) in [
        (2, "`Header { .. }`"),
        (3, "`HeaderFact { .. }`"),
        (4, "const fn"),
        (5, "Header::new"),
        (6, "constants!"),
        (7, "registers!"),
    ] {
        assert!(
            found.iter().any(|f| f.starts_with(&format!("sim/src/x.rs:{line}:")) && f.contains(want)),
            "{line}: {found:#?}"
        );
    }
    let fine = lex(concat!(
        "// A `Header { release, path }` in a comment, /* or HeaderFact { .. } here */\n",
        "let s = \"Header { path }\"; let r = r#\"HeaderFact { x }\"#; let c = '{';\n",
        "let e = GspRmImageError::ModelHeader { what: \"x\" };\n",
        "let t = SdtHeader { len: 0 }; let v = Token::Header { at: 0 };\n",
        "fn f<'a>(h: &'a Header) -> &'a str { h.path }\n",
        "fn g(fact: &HeaderFact) -> u64 { 0 }\n",
        "use super::layout::{c_constant, ConstantFact}; let k = constants! { A in B = 1; };\n",
    ));
    assert_eq!(fact_constructions("drivers/gpu/src/gsp/x.rs", &fine), Vec::<String>::new());
    assert_eq!(header_path("src/nvidia/generated/g_gpu_nvoc.h"), Some("src/nvidia/generated/g_gpu_nvoc.h"));
    assert_eq!(header_path("open-gpu-kernel-modules-535.261.03/src/x/y.h"), Some("src/x/y.h"));
    assert_eq!(header_path("src/kernel/gpu/gsp/x.c\\0"), None);
    assert_eq!(fine.strings.len(), 3);
}
