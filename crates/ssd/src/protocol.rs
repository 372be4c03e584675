//! The commit-protocol trait and the registry.
//!
//! A commit protocol decides how a group of writes becomes atomic and durable on top of
//! `FtlCore`. It owns exactly: its OOB layout (documented byte by byte in its file), what a
//! write programs, what commit and abort do, which pages GC must keep and what must happen
//! before a block is erased (`FtlHooks`), recovery from a raw image, and the DRAM its own
//! tables use. Adding a protocol is one file in `protocols/` plus one line in `REGISTRY`;
//! the device, the CLI, the crash checker and the reproduction suite find it there.
//!
//! Durability contract, for every implementation:
//! - `write_plain` returns the instant the page is durable (the ack);
//! - `write` (inside a transaction) returns when the device has accepted the data, which is
//!   *not* durability: nothing of a transaction need survive a crash before its commit is
//!   acked;
//! - `commit` returns the instant the whole transaction is durable: after that instant every
//!   page of it survives any crash, until overwritten by a later commit;
//! - `abort` returns when the transaction is rolled back; none of it may ever become visible;
//! - a transaction whose commit was issued but not acked when power failed is all or nothing.
//!
//! Transactions reach a protocol with a `TxRef`: the host's id, and a device-internal
//! sequence number that is unique for the device's lifetime (what goes into OOB areas, so a
//! host's reuse of a `TxId` can never be confused with an old transaction on flash).

use crate::core::{FtlCore, ReadOutcome};
use crate::error::{Result, SsdError};
use crate::gc::FtlHooks;
use crate::recovery::RecoveryCtx;
use serde::{Deserialize, Serialize};
use sim::{Lpn, SimTime, TxId};

/// A transaction as a protocol sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TxRef {
    pub host: TxId,
    /// Unique for the device's lifetime; recovered from the medium after a crash.
    pub seq: u32,
}

/// Isolation levels a host may run transactions under (LightTx §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// One transaction at a time, a barrier after each commit or abort.
    Strict,
    /// Concurrent transactions, but none writes a page another active one wrote.
    NoPageConflict,
    /// Concurrent transactions that may write the same pages (serializable schedules).
    Serializable,
}

impl Isolation {
    pub fn name(self) -> &'static str {
        match self {
            Isolation::Strict => "strict",
            Isolation::NoPageConflict => "no-page-conflict",
            Isolation::Serializable => "serializable",
        }
    }
    pub const ALL: [Isolation; 3] = [
        Isolation::Strict,
        Isolation::NoPageConflict,
        Isolation::Serializable,
    ];
}

/// The `[protocol]` section of a configuration. Options apply only to the protocols that
/// name them; the others ignore them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProtocolConfig {
    /// A name from the registry.
    pub name: String,
    /// CFC / AFC: the block-based flag technique of Flag Commit §3.4. On by default: §5.1
    /// evaluated "the basic CFC and AFC protocols with block-based flag technique".
    pub block_flags: bool,
    /// CFC: set the commit flag by a separate partial program after the last shadow page
    /// even when that page arrives with COMMIT (`Device::commit_write`). Off by default:
    /// Flag Commit §3.3 writes a buffered last page with its flag already TRUE ("a
    /// page-reprogramming operation is saved"); on is the rule used before, kept as an
    /// ablation of that saving.
    pub cfc_flag_reprogram: bool,
    /// MHL-D / MHL-M: number of log heads (LightTx §4.1 uses 8).
    pub log_heads: u32,
    /// SCC: start erasing an aborted transaction's intentions at ABORT, in the background
    /// (true), instead of when a page they concern is next written, on that write's path
    /// (false). TxFlash §3.2 requires only that the erase precede the newer version.
    pub scc_erase_at_abort: bool,
    /// AW: mapping-log chains its records are spread over (each chain programs its pages in
    /// order; records carry one device-wide sequence, so the chains together are one
    /// logical log). Default 8, one per package of LightTx's Table 2 device (the count
    /// §4.1 gives MHL's log heads), capped at the number of parallel units: the paper's AW
    /// baseline writes its mapping pages wherever its log-structured FTL allocates, not
    /// into one serial chain. 1 is the single serial chain.
    pub aw_log_chains: u32,
    /// AW and MHL-M (which runs on AW's engine): before GC erases a victim, write a *move
    /// record* with the victim's moved entries that the erase waits for (true), or carry
    /// the moved entries on the next commit or plain-write record and keep the victim
    /// un-erased until that record (or a checkpoint) is durable (false, the default:
    /// LightTx's AW baseline writes mapping pages at commits only, Fig. 19's 3.70 %).
    pub aw_gc_move_records: bool,
    /// BPCC: how long an uncommitted intention keeps its straddlers on flash (see
    /// `protocols::bpcc`).
    pub bpcc_srs: BpccSrs,
}

/// BPCC's straddle responsibility sets (TxFlash §3.3, "BPCC Garbage Collection").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BpccSrs {
    /// TxFlash §3.3 with its three pruning rules: an uncommitted intention leaves every SRS
    /// once a higher version of its page is committed, only the highest straddler of its
    /// next-link holds it, and aborted intentions hold nothing.
    Pruned,
    /// The BPCC LightTx §4.3 compares against: "a page whose SRS is not null, even if it is
    /// invalid, cannot be erased and has to be moved". Every committed straddler of an
    /// uncommitted intention's next-link holds it, and it leaves those SRS only when every
    /// copy of it is erased (§3.3's definition without the first two pruning rules).
    UntilErased,
}

impl Default for ProtocolConfig {
    fn default() -> Self {
        ProtocolConfig {
            name: "none".into(),
            block_flags: true,
            cfc_flag_reprogram: false,
            log_heads: 8,
            scc_erase_at_abort: true,
            aw_log_chains: 8,
            aw_gc_move_records: false,
            bpcc_srs: BpccSrs::Pruned,
        }
    }
}

/// Copies a protocol's state behind its trait object (`Device::try_clone`). Implemented for
/// every `Clone` protocol: protocols are plain data (tables, counters, no handles).
pub trait CloneProtocol {
    fn clone_protocol(&self) -> Box<dyn CommitProtocol>;
}

impl<T: CommitProtocol + Clone + 'static> CloneProtocol for T {
    fn clone_protocol(&self) -> Box<dyn CommitProtocol> {
        Box::new(self.clone())
    }
}

/// A commit protocol. See the module docs for the durability contract. `Send + Sync` so that a
/// prefilled device can be copied on several threads at once (`reproduce`'s shared prefill).
pub trait CommitProtocol: FtlHooks + CloneProtocol + Send + Sync {
    fn name(&self) -> &'static str;

    /// BEGIN(tx). Returns when the device has accepted it.
    fn begin(&mut self, _core: &mut FtlCore, _tx: TxRef, now: SimTime) -> Result<SimTime> {
        Ok(now)
    }

    /// WRITE(tx, lpn, data): returns when the data is accepted (not durable).
    fn write(
        &mut self,
        core: &mut FtlCore,
        tx: TxRef,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<SimTime>;

    /// COMMIT(tx): returns when the transaction is durable.
    fn commit(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime>;

    /// Whether `commit_write` records the commit in the last page's own program. When
    /// false (the default) the device runs a fused WRITE + COMMIT as the two commands.
    fn fuses_commit_write(&self) -> bool {
        false
    }

    /// WRITE(tx, lpn, data) of the transaction's last page, sent with its COMMIT(tx): the
    /// host had the page buffered at commit (Flag Commit §3.3). Returns when the transaction
    /// is durable, as `commit`. Called only when `fuses_commit_write`; the default is the
    /// WRITE followed by the COMMIT.
    fn commit_write(
        &mut self,
        core: &mut FtlCore,
        tx: TxRef,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        self.write(core, tx, lpn, tag, now)?;
        self.commit(core, tx, now)
    }

    /// ABORT(tx): returns when the transaction is rolled back.
    fn abort(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime>;

    /// A plain (non-transactional) write: a one-page transaction; returns when durable.
    fn write_plain(
        &mut self,
        core: &mut FtlCore,
        tx: TxRef,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<SimTime>;

    /// A plain write of a page with explicit content: a whole page image whose append area
    /// carries bytes (`media::Content::TagTail`, `Device::write_page`, in-place-appends.md
    /// §4 scenario 2) or raw bytes (IPL's log pages, `Device::write_sector`). Only the
    /// plain FTL (`none`) takes it.
    fn write_plain_content(
        &mut self,
        _core: &mut FtlCore,
        _tx: TxRef,
        _lpn: Lpn,
        _content: media::Content,
        _now: SimTime,
    ) -> Result<SimTime> {
        Err(crate::error::SsdError::Unsupported {
            protocol: self.name(),
            what: "a page write with delta-area or raw bytes (ipa-block, ipl: protocol none)"
                .into(),
        })
    }

    /// READ(lpn): the newest committed version.
    fn read(
        &mut self,
        core: &mut FtlCore,
        lpn: Lpn,
        now: SimTime,
    ) -> Result<(ReadOutcome, SimTime)> {
        core.read_lpn(lpn, now)
    }

    /// TRIM(lpn): returns when durable.
    fn trim(&mut self, _core: &mut FtlCore, _lpn: Lpn, _now: SimTime) -> Result<SimTime> {
        Err(SsdError::Unsupported {
            protocol: self.name(),
            what: "trim".into(),
        })
    }

    /// Called once after recovery, when the FTL has rebuilt its block states and free pools
    /// (blocks holding live pages are full, the rest free and erased before reuse), before any
    /// command. A protocol may release pins it took in `recover` only to keep blocks out of
    /// the free pools (a free block is erased without `FtlHooks::before_erase`). Returns when
    /// anything it issued is durable.
    fn after_recovery(&mut self, _core: &mut FtlCore, now: SimTime) -> Result<SimTime> {
        Ok(now)
    }

    /// DRAM the protocol's own tables use, by structure (bytes).
    fn dram_bytes(&self) -> Vec<(&'static str, u64)>;

    /// Protocol-specific counters for the report.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// Verifies the protocol's tables against the FTL.
    fn check_invariants(&self, _core: &FtlCore) -> std::result::Result<(), String> {
        Ok(())
    }
}

/// What the registry knows about a protocol.
pub struct ProtocolInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Width of its OOB layout in bytes (kind byte included).
    pub oob_bytes: u32,
    /// Whether writes of one transaction are atomic (false only for `none`).
    pub atomic: bool,
    /// Whether recovery needs mapping checkpoints (turned on if the configuration has none).
    pub needs_checkpoints: bool,
    /// Whether its recovery is correct with mapping checkpoints on (it reads the root's
    /// mapping and finds everything written since in the scan set). TC, SCC and BPCC
    /// recover by scanning the whole device (TxFlash §4) and refuse `ftl.checkpoint_interval
    /// > 0`: with checkpoints the scan set omits the blocks their commit evidence lives in.
    pub supports_checkpoints: bool,
    /// Isolation levels it supports.
    pub isolation: &'static [Isolation],
    pub supports_trim: bool,
    pub create: fn(&ProtocolConfig, &mut FtlCore) -> Result<Box<dyn CommitProtocol>>,
    pub recover: fn(&mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>>,
}

impl ProtocolInfo {
    pub fn supports(&self, level: Isolation) -> bool {
        self.isolation.contains(&level)
    }
}

/// Every protocol commitlab knows. One line per protocol.
pub static REGISTRY: &[&ProtocolInfo] = &[
    &crate::protocols::none::INFO,
    &crate::protocols::tc::INFO,
    &crate::protocols::scc::INFO,
    &crate::protocols::bpcc::INFO,
    &crate::protocols::cfc::INFO,
    &crate::protocols::afc::INFO,
    &crate::protocols::lighttx::INFO,
    &crate::protocols::aw::INFO,
    &crate::protocols::mhl_d::INFO,
    &crate::protocols::mhl_m::INFO,
];

/// The registered protocol called `name`, in any case (`TC`, `LightTx`).
pub fn lookup(name: &str) -> Result<&'static ProtocolInfo> {
    REGISTRY
        .iter()
        .copied()
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| SsdError::UnknownProtocol {
            name: name.into(),
            known: names(),
        })
}

/// The registered spelling of `name` (`TC` -> `tc`).
pub fn canonical(name: &str) -> Result<&'static str> {
    lookup(name).map(|p| p.name)
}

/// " (did you mean X?)" for the one of `known` nearest to `name` by edit distance, when it
/// is within a third of the name's length (at least 1); else "".
pub fn did_you_mean(name: &str, known: &[&str]) -> String {
    let name = name.to_ascii_lowercase();
    let best = known
        .iter()
        .map(|k| (edit_distance(&name, k), *k))
        .min_by_key(|(d, _)| *d);
    match best {
        Some((d, k)) if d > 0 && d <= (name.chars().count() / 3).max(1) => {
            format!(" (did you mean {k}?)")
        }
        _ => String::new(),
    }
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod suggest_tests {
    use super::*;

    #[test]
    fn names_in_any_case_and_near_misses_are_suggested() {
        assert_eq!(canonical("TC").unwrap(), "tc");
        assert_eq!(canonical("LightTx").unwrap(), "lighttx");
        let e = canonical("lightx").unwrap_err().to_string();
        assert!(e.contains("did you mean lighttx?"), "{e}");
        let e = canonical("zzzzzz").unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }
}

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|p| p.name).collect()
}
