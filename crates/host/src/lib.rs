//! The DBMS host layer (DESIGN.md, "Host (DBMS layer)"): clients that run transactions
//! from a schema-aware workload (`workload::db::TxnSource`), a strict two-phase lock
//! manager at page or record level with wait-for-graph deadlock detection or wait-die, an
//! LRU buffer pool with steal/no-steal and force/no-force, and recovery strategies that
//! decide what reaches the emulated SSD and when:
//!
//! - `wal`: ARIES-style physiological write-ahead logging over the plain FTL (`none`);
//! - `device-tx`: force at commit through the device's BEGIN/WRITE/COMMIT/ABORT interface,
//!   any atomic commit protocol (Flag Commit §5.2's setting).
//!
//! Everything runs on one simulated clock (`sim::EventQueue`): each client is a state
//! machine with no I/O inside; the engine carries out its actions against the device, whose
//! commands apply their state change at issue and return when they complete. Same
//! configuration and seed ⇒ byte-identical results.
//!
//! `check` is the host-level crash checker: it records a run's NAND operations, crashes it
//! at media operations, recovers with the strategy's own restart from the surviving image
//! alone and compares the database with a serial replay of exactly the committed
//! transactions.
//!
//! - `cfc-ex` / `afc-ex` (`flagcommit-ex` = `cfc-ex`): Flag Commit §4's CFC_ex and AFC_ex
//!   over `none` (no-force, redo-only log, pending records with commit flags programmed in
//!   each flash page's record area, version slots with Back, §4.3 reclaim rules, max_c
//!   blocking); see `strategy::flagcommit_ex` for what of §4 it does not model.
//!
//! `source` picks the transaction source (`host.workload`): the TPC-C, TPC-B, TATP and
//! synthetic-record generators of `workload`, or the built-in `bank` test source.
//!
//! - `pcmlogging`: record-level PCMLogging over a PCM tier and a Table 2 disk
//!   (`pcm_tier`: `[host.pcm]` sizes, recovery from PCM + disk, PCM crash points);
//!   `pcmlogging-page`: the page-level scheme (§3.1–3.2) with page locks. Both destage
//!   under §5.2's adaptive rate or the high-low watermark (`strategy::pcm_destage`).
//! - `wal-pcm`, `scmlogging`: PCMLogging §6.1's WAL baselines over the same tier (ARIES with
//!   a PCM page cache and log buffer / with the whole log in PCM; `strategy::wal_pcm`).
//!
//! Update strategies (`host.update`, `update`): out-of-place page writes, In-Place Appends
//! (`ipa`, `ipa-block`: a page's changed bytes appended to its flash page) and in-page
//! logging (`ipl`: per erase unit log regions), composed into `wal`.
//!
//! Layers (docs/ARCHITECTURE.md, "Host core"): the data model (`data`, `lock`, `buffer`),
//! the shared state (`state::Core`), the seam (`hooks`: the `Strategy` trait and what it
//! exchanges), the event loop (`engine`) — none of which names a strategy — then the
//! strategies (`strategy::*`, `update::*`), their registry (`strategy`), the entry points
//! that look a strategy up and run it (`entry`), and the checkers (`check`).

pub mod acklog;
pub mod bank;
pub mod buffer;
pub mod check;
pub mod consistency;
pub mod data;
pub mod deadlock;
pub mod engine;
pub mod entry;
pub mod external;
pub mod hooks;
pub mod lock;
pub mod lru;
pub mod metrics;
pub mod pcm_check;
pub mod pcm_tier;
#[cfg(feature = "mutants")]
pub mod planted;
pub mod source;
pub mod state;
pub mod strategy;
pub mod update;

pub use engine::{run, Engine, HostRun};
pub use metrics::HostMetrics;

use serde::{Deserialize, Serialize};

/// Lock granularity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockLevel {
    /// The strategy's own: record for wal, page for device-tx.
    Auto,
    Page,
    Record,
}

/// How deadlocks are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeadlockPolicy {
    /// Wait-for graph, checked each time a transaction blocks; the youngest in the cycle
    /// restarts after a random backoff (Flag Commit §5.1).
    Detect,
    /// A transaction may wait only for younger ones; a younger requester dies (restarts,
    /// keeping its age) — PCMLogging's setting.
    WaitDie,
}

/// `host.device_tx.pin`: which pages of an in-progress transaction `device-tx` keeps in
/// the buffer pool (never steals).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceTxPin {
    /// Flag Commit §5.1: under scc and bpcc, each in-progress transaction's last shadow
    /// page stays resident and every other page may be stolen; other protocols pin nothing.
    Last,
    /// No page an active transaction dirtied is stolen, under any protocol (no-steal; the
    /// rule SCC and BPCC ran under before, kept for comparison).
    All,
}

/// The `[host.device_tx]` section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceTxConfig {
    pub pin: DeviceTxPin,
}

impl Default for DeviceTxConfig {
    fn default() -> Self {
        DeviceTxConfig {
            pin: DeviceTxPin::Last,
        }
    }
}

/// The `[host]` configuration section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Recovery strategy: a name from `strategy::REGISTRY` ("wal", "device-tx",
    /// "flagcommit-ex").
    pub strategy: String,
    /// Concurrent clients, each running one transaction at a time (Flag Commit: 50).
    pub clients: u32,
    /// Transactions to run (each counted once, however often it restarts).
    pub transactions: u64,
    /// Mean think time between a client's transactions (exponential), ns; 0 = none.
    pub think_ns: u64,
    /// CPU time per record operation, ns.
    pub op_cpu_ns: u64,
    pub lock_level: LockLevel,
    pub deadlock: DeadlockPolicy,
    /// A restarted transaction waits a uniform random time up to this, ns.
    pub backoff_ns_max: u64,
    /// Buffer pool frames (Flag Commit: 512 pages).
    pub buffer_frames: u32,
    /// wal only: dirty pages of uncommitted transactions may be written back.
    pub steal: bool,
    /// wal only: a transaction's dirty pages are written at commit (device-tx always forces).
    pub force: bool,
    /// Logical DB page size in bytes (Flag Commit: 8 KiB over 2 KiB flash pages).
    pub page_bytes: u32,
    /// Bytes of one log record on the device (Flag Commit Table 2: 50 B).
    pub log_record_bytes: u32,
    /// wal: device pages reserved for the log (a circular area after the data pages).
    pub log_pages: u32,
    /// wal: take a fuzzy checkpoint after this many bytes of log (0 = never).
    pub checkpoint_log_bytes: u64,
    /// wal: where the log and its master record live: "shared" (after the data pages on the
    /// one device) or "separate" (on a second device of the same configuration, on the same
    /// clock and in the same power domain; the data device then holds only the database and
    /// IPL's log regions). docs/HOST.md, "The WAL log on its own device".
    pub log_device: String,
    /// flagcommit-ex: at most this many transactions update one DB page at a time (Flag
    /// Commit §4.3 max_c, Algorithm 1; the paper uses 3).
    pub max_c: u32,
    /// device-tx: which pages of an in-progress transaction stay in the buffer pool.
    pub device_tx: DeviceTxConfig,
    /// cfc-ex/afc-ex ablation, off by default: a fetch reads only the newest version of the
    /// page instead of every version holding its live committed records (§4.3's merge), to
    /// show what the merge reads cost (§5.3.1's second reason for Fig. 15's drop).
    #[serde(default)]
    pub fc_no_merge_reads: bool,
    /// cfc-ex/afc-ex ablation, off by default: a new version of a page takes the slot of
    /// its oldest reclaimable version before a free slot (by default a free slot first), so
    /// fewer out-of-date versions stay mapped for the FTL's GC to copy. See
    /// docs/HOST.md, "CFC_ex / AFC_ex: a new version takes a free slot before a reclaimable one".
    #[serde(default)]
    pub fc_reuse_slots_first: bool,
    /// The workload: "bank" (the built-in test source of `bank.rs`), "tpcc", "tpcb", "tatp"
    /// or "records" (the `workload` crate's generators), or "trace" (a recorded page-access
    /// trace), configured by its section below.
    pub workload: String,
    pub bank: bank::BankConfig,
    pub tpcc: workload::tpcc::TpccConfig,
    pub tpcb: workload::tpcb::TpcbConfig,
    pub tatp: workload::tatp::TatpConfig,
    pub records: workload::records::RecordsConfig,
    /// `trace`: the page-access trace to replay (`workload::pagetrace`).
    pub trace: workload::pagetrace::PageTraceConfig,
    /// After the run, cut power, restart (device recovery, then the strategy's) and report
    /// the cost. Keeps every written page image in memory during the run.
    pub measure_recovery: bool,
    /// Record contents the crash checker judges: "tag" (each record a digest of its
    /// history, compared with the serial replay) or "full" (also decode every record's
    /// contents — arithmetic fields and inserted rows' keys — and check the workload's
    /// consistency conditions: TPC-C §3.3.2.1–4, TPC-B's balance sums; `consistency.rs`).
    pub data: String,
    /// Update strategy (`update::NAMES`): "out-of-place" or "ipa" (wal only).
    pub update: String,
    /// `ipa`'s N×M (in-place-appends.md §3).
    pub ipa: update::IpaConfig,
    /// `ipl`'s erase-unit and log-sector layout (update/ipl.rs).
    pub ipl: update::ipl::IplConfig,
    /// The PCM tier of the PCM strategies (`pcmlogging`): sizes, external store, destaging.
    pub pcm: pcm_tier::PcmSettings,
    /// A planted bug for testing the crash checker: restart accepts IPA delta records
    /// without checking their CRC. Never set this outside tests.
    #[serde(skip)]
    pub fault_ipa_skip_crc: bool,
    /// A planted bug for testing the crash checker: commits are acked at issue (wal: without
    /// forcing the log; device-tx: before the device's COMMIT completes). Never set this
    /// outside tests.
    #[serde(skip)]
    pub fault_early_commit_ack: bool,
    /// A planted bug for testing the crash checker (wal): the log's device acks a log page
    /// write at issue, before it is durable (with `host.log_device = "separate"`, the log
    /// device's write cache lying about durability). Never set this outside tests.
    #[serde(skip)]
    pub fault_log_acked_at_issue: bool,
    /// A planted bug for testing crashes inside recovery (wal): restart overwrites the first
    /// log page it scanned with a later one before any redone page is durable, so a second
    /// crash during that restart loses the log the next restart needs. Recovery that is not
    /// idempotent; a single crash cannot see it. Never set this outside tests.
    #[serde(skip)]
    pub fault_recovery_reuses_log: bool,
    /// A planted bug for testing the crash checker (flagcommit-ex): the checkpoint's master
    /// does not wait for commit-flag programs, so commit status can be lost with the
    /// truncated log. Never set this outside tests.
    #[serde(skip)]
    pub fault_fc_empty_commit_list: bool,
    /// Planted bugs for the crash checker (flagcommit-ex family; see
    /// `strategy::flagcommit_ex::Fault`); empty = none. Never set this outside tests.
    #[serde(skip)]
    pub fault_fc: String,
    /// Planted bugs for the crash checker (device-tx): "skip-rewrite" (commit does not
    /// write again a page stolen and then updated again), "reopen-forgets" (a reopened
    /// device transaction does not carry the pages written before); empty = none. Never
    /// set this outside tests.
    #[serde(skip)]
    pub fault_device_tx: String,
    /// A planted bug for testing the full-mode consistency check: the checker's recovered
    /// database loses its changes to the first changed page of the workload's second table
    /// (TPC-C district, TPC-B teller), as a recovery that drops one page would. Never set
    /// this outside tests.
    #[serde(skip)]
    pub fault_drop_page: bool,
    /// Planted bugs for run-on checking (wal's restart that writes back,
    /// `strategy::wal::restart_write_back`): "no-master" (the restart writes no new master
    /// but the engine resumes as if it had, so the run after it overwrites log pages the old
    /// master still needs), "no-void" (the log pages beyond the end are not voided, so a
    /// later scan runs on from the restart's pages into the crashed run's lost ones),
    /// "no-tail" (the engine resumes at the restart's tail page but not after its records:
    /// the run's first log write overwrites them), "ipa-stale-area" (`ipa`: pages whose
    /// recovered values the medium already shows are not written back, delta records and
    /// all, but the engine resumes with no records on them), "uncommitted" (device-tx: the
    /// restart hands the engine each page's newest write, committed or not),
    /// "ipl-erase-early" (`ipl`, in-block: the restart erases an erase unit's older blocks
    /// with the programs of its fresh block instead of after them,
    /// `update::ipl::restart_merge`); empty = none. Single and double crashes cannot see either: the restart's database is right.
    /// Never set this outside tests.
    #[serde(skip)]
    pub fault_restart: String,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            strategy: "wal".into(),
            clients: 50,
            transactions: 2000,
            think_ns: 0,
            op_cpu_ns: 0,
            lock_level: LockLevel::Auto,
            deadlock: DeadlockPolicy::Detect,
            backoff_ns_max: 1_000_000,
            buffer_frames: 512,
            steal: true,
            force: false,
            page_bytes: workload::db::DB_PAGE_BYTES,
            log_record_bytes: 50,
            log_pages: 4096,
            checkpoint_log_bytes: 1 << 20,
            log_device: "shared".into(),
            max_c: 3,
            device_tx: DeviceTxConfig::default(),
            fc_no_merge_reads: false,
            fc_reuse_slots_first: false,
            workload: "bank".into(),
            bank: bank::BankConfig::default(),
            tpcc: Default::default(),
            tpcb: Default::default(),
            tatp: Default::default(),
            records: Default::default(),
            trace: Default::default(),
            measure_recovery: false,
            data: "tag".into(),
            update: "out-of-place".into(),
            ipa: update::IpaConfig::default(),
            ipl: Default::default(),
            pcm: pcm_tier::PcmSettings::default(),
            fault_ipa_skip_crc: false,
            fault_early_commit_ack: false,
            fault_log_acked_at_issue: false,
            fault_recovery_reuses_log: false,
            fault_fc_empty_commit_list: false,
            fault_fc: String::new(),
            fault_device_tx: String::new(),
            fault_drop_page: false,
            fault_restart: String::new(),
        }
    }
}

impl HostConfig {
    /// Checks what can be checked without a device; errors name the key.
    /// `host.log_device = "separate"`: the wal log is on a device of its own.
    pub fn separate_log(&self) -> bool {
        self.log_device == "separate"
    }

    pub fn validate(&self) -> Result<()> {
        let bad = |key: &str, reason: String| {
            Err(HostError::Config {
                key: format!("host.{key}"),
                reason,
            })
        };
        strategy::lookup(&self.strategy)?;
        self.pcm.validate()?;
        if self.clients == 0 {
            return bad("clients", "must be at least 1".into());
        }
        if self.buffer_frames < 2 {
            return bad("buffer_frames", "must be at least 2".into());
        }
        if self.page_bytes == 0 {
            return bad("page_bytes", "must be positive".into());
        }
        if self.log_record_bytes < 16 {
            return bad(
                "log_record_bytes",
                format!("{} is too small (at least 16)", self.log_record_bytes),
            );
        }
        if self.max_c == 0 {
            return bad("max_c", "must be at least 1".into());
        }
        if self.data != "tag" && self.data != "full" {
            return bad(
                "data",
                format!("unknown data mode '{}' (known: tag, full)", self.data),
            );
        }
        if self.ipl.layout != "in-block" && self.ipl.layout != "separate" {
            return bad(
                "ipl.layout",
                format!(
                    "unknown In-Page Logging layout '{}' (known: in-block, separate)",
                    self.ipl.layout
                ),
            );
        }
        match self.log_device.as_str() {
            "shared" => {}
            "separate" if self.strategy == "wal" => {}
            "separate" => {
                return bad(
                    "log_device",
                    format!(
                        "\"separate\" puts the wal strategy's log on its own device; {} keeps no log there (device-tx has no log, the flagcommit-ex family keeps its redo log beside its versions, the PCM strategies log to PCM)",
                        self.strategy
                    ),
                )
            }
            other => {
                return bad(
                    "log_device",
                    format!("unknown log device '{other}' (known: shared, separate)"),
                )
            }
        }
        if !update::NAMES.contains(&self.update.as_str()) {
            return bad(
                "update",
                format!(
                    "unknown update strategy '{}'{} (known: {})",
                    self.update,
                    ssd::protocol::did_you_mean(&self.update, update::NAMES),
                    update::NAMES.join(", ")
                ),
            );
        }
        if self.update != "out-of-place" && self.strategy != "wal" {
            return bad(
                "update",
                format!("{} runs with the wal recovery strategy only", self.update),
            );
        }
        source::validate(self)
    }
}

/// Why a host run or a host recovery failed.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("config: {key}: {reason}")]
    Config { key: String, reason: String },
    #[error("host workload: {0}")]
    Workload(String),
    #[error("at {at}, {what}: {error}")]
    Device {
        at: sim::SimTime,
        what: String,
        #[source]
        error: ssd::SsdError,
    },
    /// The recovered image is not one this strategy could have left.
    #[error("host recovery: {0}")]
    Corrupt(String),
    /// The engine cannot make progress (a bug or a configuration that starves itself).
    #[error("host engine: {0}")]
    Stuck(String),
    /// Writing what the run reports outside (the ack log) failed.
    #[error("host output: {0}")]
    Output(String),
}

pub type Result<T> = std::result::Result<T, HostError>;
