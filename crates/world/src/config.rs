//! The configuration: one TOML document (sections `[nand]`, `[nand.timing]`, `[ftl]`,
//! `[protocol]`, `[workload]`, `[run]` and a top-level `seed`), built in layers:
//!
//! 1. the built-in defaults (a small device that runs in well under a minute);
//! 2. a preset, named by `--preset` or by a top-level `preset = "…"` key in the file;
//! 3. the file given with `--config`;
//! 4. `--set key=value` overrides, in order, where `key` is a dotted path and `value` is TOML
//!    (a bare word that is not valid TOML is taken as a string).
//!
//! Unknown keys and values of the wrong type are errors that name the key; values that
//! cannot work (an impossible geometry, a GC threshold above the device) are errors that
//! name the key when the device or workload is built.

use crate::presets;
use serde::{Deserialize, Serialize};
use ssd::{DeviceConfig, FtlConfig, ProtocolConfig};
use std::path::{Path, PathBuf};
use toml::{Table, Value};
use workload::synthetic::SyntheticConfig;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    /// Page-level synthetic requests (`[workload.synthetic]`).
    Synthetic,
    /// Synthetic transactions (`[workload.txn]`, TxFlash §5).
    Txn,
    /// The sequential writer of TxFlash Fig. 6 (`[workload.seqwriter]`).
    Seqwriter,
    /// A trace file (`[workload.trace]`).
    Trace,
    /// A DBMS host run (`[host]`): clients, locks, a buffer pool and a recovery strategy
    /// on the device (`host_run.rs`).
    Host,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// DiskSim / MQSim ASCII block traces.
    Disksim,
    /// commitlab's transactional trace format (docs/TRACES.md).
    Txn,
    /// blkreplay `.load` files (Debian's blkreplay-examples), plain or gzip.
    Blkreplay,
    /// MSR Cambridge CSV (SNIA IOTTA).
    Msr,
    /// SPC-1 / UMass Trace Repository CSV.
    Spc,
    /// A DBMS's page-access trace (`workload::pagetrace`), replayed as device transactions.
    Pages,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    pub path: String,
    pub format: TraceFormat,
    /// Multiplies arrival times (0.5 replays twice as fast).
    pub time_scale: f64,
    /// Fold addresses beyond the device modulo its logical pages (block traces).
    pub fold: bool,
    /// Transactions replayed at once (txn traces).
    pub concurrency: u32,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            path: String::new(),
            format: TraceFormat::Disksim,
            time_scale: 1.0,
            fold: true,
            concurrency: 16,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    pub kind: WorkloadKind,
    /// Fraction of the logical space written sequentially before measuring.
    pub prefill: f64,
    /// Ageing after the prefill, before measuring: uniformly random single-page overwrites
    /// of the prefilled pages, this many times their number (1.0 rewrites as many pages as
    /// were prefilled). Brings the device to the papers' steady state (free pool at the GC
    /// threshold, blocks holding a mix of valid and stale pages) so that GC is active from
    /// the first measured request, whatever the workload's length.
    pub age: f64,
    /// Requests run before measuring starts (counters and latencies reset after them).
    pub warmup_requests: u64,
    pub synthetic: SyntheticConfig,
    pub txn: workload::txn::TxnConfig,
    pub seqwriter: workload::txn::SeqWriterConfig,
    pub trace: TraceConfig,
}

impl WorkloadConfig {
    pub fn kind_name(&self) -> String {
        format!("{:?}", self.kind).to_lowercase()
    }
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            kind: WorkloadKind::Synthetic,
            prefill: 0.5,
            age: 0.0,
            warmup_requests: 0,
            synthetic: SyntheticConfig::default(),
            txn: workload::txn::TxnConfig::default(),
            seqwriter: workload::txn::SeqWriterConfig::default(),
            trace: TraceConfig::default(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// After the run, cut power and recover, reporting recovery cost.
    pub measure_recovery: bool,
    /// Check every FTL and protocol invariant every this many requests (0: never).
    pub check_invariants_every: u64,
    /// How the recovery measured after the run issues its reads (`ssd::RecoveryReads`):
    /// overlapped across planes and channels (the default) or one after another. Timing
    /// only; device-level runs (a host run's recovery is the host engine's).
    pub recovery_reads: ssd::RecoveryReads,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            measure_recovery: true,
            check_invariants_every: 0,
            recovery_reads: ssd::RecoveryReads::Overlapped,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub seed: u64,
    pub nand: media::NandConfig,
    pub ftl: FtlConfig,
    pub protocol: ProtocolConfig,
    pub workload: WorkloadConfig,
    pub run: RunConfig,
    /// The DBMS host (`workload.kind = "host"` or `commitlab run --host S`).
    pub host: host::HostConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 1,
            nand: media::NandConfig::default(),
            ftl: FtlConfig::default(),
            protocol: ProtocolConfig::default(),
            workload: WorkloadConfig::default(),
            run: RunConfig::default(),
            host: host::HostConfig::default(),
        }
    }
}

/// A configuration problem, with the key or file it concerns.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("config: {0}")]
pub struct ConfigError(pub String);

/// Where a configuration comes from.
#[derive(Clone, Debug, Default)]
pub struct ConfigSource {
    pub preset: Option<String>,
    pub file: Option<PathBuf>,
    pub sets: Vec<String>,
}

fn merge(base: &mut Table, over: Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Parses `value` as a TOML value, or takes it as a string if it is not valid TOML.
fn parse_value(value: &str) -> Value {
    match format!("v = {value}").parse::<Table>() {
        Ok(mut t) => t.remove("v").unwrap_or(Value::String(value.into())),
        Err(_) => Value::String(value.into()),
    }
}

fn set_path(table: &mut Table, key: &str, value: Value) -> Result<(), ConfigError> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(ConfigError(format!("--set: bad key '{key}'")));
    }
    let mut t = table;
    for p in &parts[..parts.len() - 1] {
        let entry = t
            .entry(p.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        t = match entry {
            Value::Table(x) => x,
            _ => {
                return Err(ConfigError(format!(
                    "--set {key}: '{p}' is a value, not a section"
                )))
            }
        };
    }
    t.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

impl Config {
    /// Builds a configuration from its layers (see the module docs).
    pub fn load(src: &ConfigSource) -> Result<Config, ConfigError> {
        Config::load_over(None, src)
    }

    /// As `load`, but layer 1 is `base` instead of the built-in defaults when no preset is
    /// named (how `commitlab crash` starts from its small device).
    pub fn load_over(base: Option<&Config>, src: &ConfigSource) -> Result<Config, ConfigError> {
        let mut file_table = Table::new();
        if let Some(path) = &src.file {
            file_table = read_table(path)?;
        }
        let file_preset = match file_table.remove("preset") {
            Some(Value::String(s)) => Some(s),
            Some(other) => {
                return Err(ConfigError(format!(
                    "preset: expected a string, found {other}"
                )))
            }
            None => None,
        };
        let mut table = Table::new();
        match (src.preset.clone().or(file_preset), base) {
            (Some(p), _) => table = presets::table(&p)?,
            (None, Some(b)) => {
                table = Table::try_from(b)
                    .map_err(|e| ConfigError(format!("internal: base configuration: {e}")))?
            }
            (None, None) => {}
        }
        merge(&mut table, file_table);
        for s in &src.sets {
            let Some((k, v)) = s.split_once('=') else {
                return Err(ConfigError(format!("--set '{s}': expected key=value")));
            };
            set_path(&mut table, k.trim(), parse_value(v.trim()))?;
        }
        Config::from_table(table)
    }

    /// Deserializes a merged table; errors name the key.
    pub fn from_table(table: Table) -> Result<Config, ConfigError> {
        let mut c = Config::deserialize(Value::Table(table))
            .map_err(|e| ConfigError(e.to_string().replace('\n', " ")))?;
        // A protocol named in any case runs as the registry spells it (an unknown name is
        // refused, with a suggestion, when the device is built).
        if let Ok(name) = ssd::protocol::canonical(&c.protocol.name) {
            c.protocol.name = name.to_string();
        }
        Ok(c)
    }

    pub fn device(&self) -> DeviceConfig {
        DeviceConfig {
            nand: self.nand.clone(),
            ftl: self.ftl.clone(),
            protocol: self.protocol.clone(),
        }
    }

    /// Checks everything that can be checked without running: device parameters against the
    /// geometry and the protocol, and workload parameters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let d = self.device();
        let e = |e: ssd::SsdError| ConfigError(e.to_string());
        d.image_params().map_err(e)?;
        let ftl = d.effective_ftl().map_err(e)?;
        ftl.validate(self.nand.blocks_per_plane).map_err(e)?;
        let params = d.image_params().map_err(e)?;
        check_memory(&params)?;
        if ftl.summary_pages
            && (self.nand.pages_per_block - 1) * params.oob_used > self.nand.page_bytes
        {
            return Err(ConfigError(format!(
                "ftl.summary_pages: a summary page must hold {} OOB areas of {} bytes but a page has {} bytes; use larger pages, fewer pages per block, or summary_pages = false",
                self.nand.pages_per_block - 1,
                params.oob_used,
                self.nand.page_bytes
            )));
        }
        if !(0.0..=1.0).contains(&self.workload.prefill) {
            return Err(ConfigError(format!(
                "workload.prefill must be in [0, 1], got {}",
                self.workload.prefill
            )));
        }
        if !(self.workload.age.is_finite() && (0.0..=100.0).contains(&self.workload.age)) {
            return Err(ConfigError(format!(
                "workload.age must be in [0, 100], got {}",
                self.workload.age
            )));
        }
        let w = &self.workload;
        match w.kind {
            WorkloadKind::Synthetic => w.synthetic.validate().map_err(|w| ConfigError(w.what))?,
            WorkloadKind::Txn => {
                w.txn.validate().map_err(|w| ConfigError(w.what))?;
                let info = d.protocol_info().map_err(e)?;
                let level = match w.txn.isolation {
                    workload::txn::Isolation::Strict => ssd::Isolation::Strict,
                    workload::txn::Isolation::NoPageConflict => ssd::Isolation::NoPageConflict,
                    workload::txn::Isolation::Serializable => ssd::Isolation::Serializable,
                };
                if !info.supports(level) {
                    let ok: Vec<&str> = info.isolation.iter().map(|i| i.name()).collect();
                    return Err(ConfigError(format!(
                        "workload.txn.isolation: protocol {} does not support {} isolation (it supports: {})",
                        info.name,
                        level.name(),
                        ok.join(", ")
                    )));
                }
            }
            WorkloadKind::Seqwriter | WorkloadKind::Trace | WorkloadKind::Host => {}
        }
        // The [host] section is checked whatever the workload, so a misspelt strategy is
        // refused at once rather than when a later `run --host` reads it.
        self.host.validate().map_err(|e| match e {
            // ConfigError says "config: " itself.
            host::HostError::Config { key, reason } => ConfigError(format!("{key}: {reason}")),
            other => ConfigError(other.to_string()),
        })?;
        self.validate_protocol_fit()?;
        if w.kind == WorkloadKind::Host && self.run.recovery_reads != ssd::RecoveryReads::Overlapped
        {
            return Err(ConfigError(
                "run.recovery_reads: only device-level runs measure recovery with serial reads; a host run's recovery (host.measure_recovery) overlaps them".into(),
            ));
        }
        if w.kind == WorkloadKind::Trace && w.trace.concurrency == 0 {
            return Err(ConfigError(
                "workload.trace.concurrency must be at least 1".into(),
            ));
        }
        if self.workload.kind == WorkloadKind::Trace && self.workload.trace.path.is_empty() {
            return Err(ConfigError(
                "workload.trace.path: a trace workload needs a file (--trace PATH)".into(),
            ));
        }
        Ok(())
    }

    /// Refuses workloads that ask for something the protocol cannot do, before anything runs
    /// (these used to fail mid-run with exit 1): trims on a protocol
    /// without trim, aborts on a protocol without atomicity, more concurrent transactions
    /// than a log-head protocol has heads.
    fn validate_protocol_fit(&self) -> Result<(), ConfigError> {
        let Ok(info) = ssd::protocol::lookup(&self.protocol.name) else {
            return Ok(()); // reported by the device checks
        };
        let w = &self.workload;
        if w.kind == WorkloadKind::Synthetic && w.synthetic.trim_ratio > 0.0 && !info.supports_trim
        {
            return Err(ConfigError(format!(
                "workload.synthetic.trim_ratio is {} but protocol {} does not support TRIM; set it to 0 or choose a protocol with TRIM (`commitlab protocols`)",
                w.synthetic.trim_ratio, info.name
            )));
        }
        if w.kind == WorkloadKind::Txn && w.txn.abort_ratio > 0.0 && !info.atomic {
            return Err(ConfigError(format!(
                "workload.txn.abort_ratio is {} but protocol {} has no atomicity and cannot abort a transaction; set it to 0 or choose another protocol",
                w.txn.abort_ratio, info.name
            )));
        }
        let concurrency = match w.kind {
            WorkloadKind::Txn => Some(("workload.txn.concurrency", w.txn.concurrency)),
            WorkloadKind::Trace
                if matches!(w.trace.format, TraceFormat::Txn | TraceFormat::Pages) =>
            {
                Some(("workload.trace.concurrency", w.trace.concurrency))
            }
            _ => None,
        };
        if let Some((key, n)) = concurrency {
            if info.name.starts_with("mhl") && n > self.protocol.log_heads {
                return Err(ConfigError(format!(
                    "{key} is {n} but protocol {} runs at most protocol.log_heads = {} transactions at once (one per log head); lower {key} or raise protocol.log_heads",
                    info.name, self.protocol.log_heads
                )));
            }
            if n > self.ftl.max_active_txs {
                return Err(ConfigError(format!(
                    "{key} is {n} but the device accepts at most ftl.max_active_txs = {} active transactions; lower {key} or raise ftl.max_active_txs",
                    self.ftl.max_active_txs
                )));
            }
        }
        Ok(())
    }

    /// As `load`, with the TOML `fragment` layered between the built-in defaults and the
    /// preset: how `commitlab compare` puts its transactional main job under any preset
    /// (a preset sets the device; the fragment's workload stays unless the file or a `--set`
    /// changes it).
    pub fn load_under(fragment: &str, src: &ConfigSource) -> Result<Config, ConfigError> {
        let mut table = fragment
            .parse::<Table>()
            .map_err(|e| ConfigError(format!("internal: base fragment: {e}")))?;
        let mut file_table = Table::new();
        if let Some(path) = &src.file {
            file_table = read_table(path)?;
        }
        let file_preset = match file_table.remove("preset") {
            Some(Value::String(s)) => Some(s),
            Some(other) => {
                return Err(ConfigError(format!(
                    "preset: expected a string, found {other}"
                )))
            }
            None => None,
        };
        if let Some(p) = src.preset.clone().or(file_preset) {
            merge(&mut table, presets::table(&p)?);
        }
        merge(&mut table, file_table);
        for s in &src.sets {
            let Some((k, v)) = s.split_once('=') else {
                return Err(ConfigError(format!("--set '{s}': expected key=value")));
            };
            set_path(&mut table, k.trim(), parse_value(v.trim()))?;
        }
        Config::from_table(table)
    }

    /// The configuration as TOML (what `commitlab config` prints).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot render: {e}"))
    }
}

/// Refuses a device whose simulation would not fit in this machine's memory, before any
/// allocation: a failed allocation aborts the process, and with overcommit a large one can
/// succeed and get the process killed later. The estimate per page is the image's page
/// record (state, program count, tag, OOB), the data bytes in full mode, and the FTL's
/// mapping, reverse map and flags (about 9 bytes); measured use is within 20 % of it.
fn check_memory(params: &media::image::ImageParams) -> Result<(), ConfigError> {
    let need = memory_need(params);
    let g = &params.geometry;
    let pages = u64::from(g.pages());
    let (data, mode, hint) = match params.data_mode {
        media::DataMode::Full => (
            u64::from(g.page_bytes),
            "full",
            ", or nand.data_mode = \"tag\"",
        ),
        media::DataMode::Tag => (0, "tag", ""),
    };
    debug_assert_eq!(need, pages * (10 + u64::from(params.oob_used) + 9 + data));
    let Some(avail) = mem_available() else {
        return Ok(());
    };
    if need > avail {
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        return Err(ConfigError(format!(
            "nand: the device has {pages} pages and needs about {:.1} GiB of memory in {mode} data mode, but {:.1} GiB is available; use fewer channels, chips, dies, planes or blocks per plane{hint}",
            gib(need),
            gib(avail),
        )));
    }
    Ok(())
}

/// The memory estimate `check_memory` uses, in bytes.
fn memory_need(params: &media::image::ImageParams) -> u64 {
    let pages = u64::from(params.geometry.pages());
    let data = match params.data_mode {
        media::DataMode::Full => u64::from(params.geometry.page_bytes),
        media::DataMode::Tag => 0,
    };
    pages * (10 + u64::from(params.oob_used) + 9 + data)
}

impl Config {
    /// About how many bytes a run of this configuration needs (the estimate `validate`
    /// checks against available memory); None if the device parameters are invalid. Callers
    /// running several points at once use it to bound how many run together.
    pub fn memory_estimate_bytes(&self) -> Option<u64> {
        self.device().image_params().ok().map(|p| memory_need(&p))
    }
}

/// `MemAvailable` from /proc/meminfo, in bytes (None where it cannot be read).
pub fn mem_available_bytes() -> Option<u64> {
    mem_available()
}

/// `MemAvailable` from /proc/meminfo, in bytes (None where it cannot be read).
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn read_table(path: &Path) -> Result<Table, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
    text.parse::<Table>()
        .map_err(|e| ConfigError(format!("{}: {}", path.display(), e.to_string().trim())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(sets: &[&str]) -> Result<Config, ConfigError> {
        Config::load(&ConfigSource {
            sets: sets.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        })
    }

    #[test]
    fn defaults_validate() {
        Config::default().validate().unwrap();
        assert_eq!(load(&[]).unwrap(), Config::default());
    }

    #[test]
    fn a_device_too_big_for_memory_is_refused_before_allocation() {
        // 4.19 G pages need about 170 GiB even in tag mode. Before this check, the run
        // aborted on a failed allocation or was killed by the OOM killer.
        let c = load(&[
            "nand.channels=16384",
            "nand.chips_per_channel=1",
            "nand.dies_per_chip=1",
            "nand.planes_per_die=2",
            "nand.blocks_per_plane=2000",
            "nand.pages_per_block=64",
        ])
        .unwrap();
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("GiB of memory") && e.contains("4194304000 pages"),
            "{e}"
        );
    }

    #[test]
    fn set_overrides_any_key() {
        let c = load(&[
            "nand.channels=4",
            "protocol.name=none",
            "ftl.gc_policy=cost-benefit",
            "seed=9",
        ])
        .unwrap();
        assert_eq!(c.nand.channels, 4);
        assert_eq!(c.seed, 9);
        assert_eq!(c.ftl.gc_policy, ssd::GcPolicyKind::CostBenefit);
        let c = load(&["nand.timing.program_ns=1000"]).unwrap();
        assert_eq!(c.nand.timing.program_ns, 1000);
    }

    #[test]
    fn bad_keys_and_values_name_the_key() {
        let e = load(&["nand.chanels=4"]).unwrap_err().to_string();
        assert!(e.contains("chanels") && e.contains("nand"), "{e}");
        let e = load(&["nand.channels=-3"]).unwrap_err().to_string();
        assert!(e.contains("nand.channels"), "{e}");
        let e = load(&["nand.channels"]).unwrap_err().to_string();
        assert!(e.contains("key=value"), "{e}");
        let e = load(&["ftl.gc_policy=fifo"]).unwrap_err().to_string();
        assert!(e.contains("ftl.gc_policy"), "{e}");
        let e = load(&["nand.pages_per_block=1"])
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("nand.pages_per_block"), "{e}");
        let e = load(&["ftl.gc_threshold=0.95"])
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("ftl.gc_threshold"), "{e}");
        let e = load(&["protocol.name=bogus"])
            .unwrap()
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown protocol 'bogus'"), "{e}");
    }

    /// `run.recovery_reads`: both positions load for device-level runs; a host run, whose
    /// recovery the host engine measures, refuses `serial` naming the key; a misspelt mode
    /// is refused.
    #[test]
    fn recovery_reads_is_honoured_or_refused() {
        let c = load(&["run.recovery_reads=\"serial\""]).unwrap();
        assert_eq!(c.run.recovery_reads, ssd::RecoveryReads::Serial);
        c.validate().unwrap();
        let host = |mode: &str| {
            load(&[
                &format!("run.recovery_reads=\"{mode}\""),
                "workload.kind=\"host\"",
            ])
            .unwrap()
            .validate()
        };
        host("overlapped").unwrap();
        let e = host("serial").unwrap_err();
        assert!(e.0.contains("run.recovery_reads"), "{e:?}");
        assert!(load(&["run.recovery_reads=\"sequential\""]).is_err());
    }

    #[test]
    fn presets_layer_under_files_and_sets() {
        let c = Config::load(&ConfigSource {
            preset: Some("txflash".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.nand.page_bytes, 4096);
        assert_eq!(c.nand.geometry().capacity_bytes(), 32 << 30);
        let c = Config::load(&ConfigSource {
            preset: Some("txflash".into()),
            sets: vec!["nand.channels=2".into()],
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.nand.channels, 2);
        let e = Config::load(&ConfigSource {
            preset: Some("nope".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("unknown preset 'nope'"), "{e}");
    }

    #[test]
    fn every_preset_validates() {
        for p in presets::NAMES {
            let c = Config::load(&ConfigSource {
                preset: Some(p.to_string()),
                ..Default::default()
            })
            .unwrap();
            c.validate().unwrap_or_else(|e| panic!("{p}: {e}"));
        }
    }

    #[test]
    fn a_malformed_file_is_an_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("commitlab-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.toml");
        std::fs::write(&f, "[nand\nchannels = 2").unwrap();
        let e = Config::load(&ConfigSource {
            file: Some(f.clone()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("bad.toml"), "{e}");
        std::fs::write(&f, "preset = \"lighttx\"\n[ftl]\ngc_threshold = 0.1\n").unwrap();
        let c = Config::load(&ConfigSource {
            file: Some(f),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.ftl.gc_threshold, 0.1);
        assert_eq!(c.nand.planes_per_die, 8);
    }
}
