//! What a commit protocol is: the trait, its durability contract and what the registry
//! (`crate::protocol`) records about each.
//!
//! A commit protocol decides how a group of writes becomes atomic and durable on top of
//! `FtlCore`. It owns exactly: its OOB layout (documented byte by byte in its file), what a
//! write programs, what commit and abort do, which pages GC must keep and what must happen
//! before a block is erased (`FtlHooks`), recovery from a raw image, and the DRAM its own
//! tables use. Adding a protocol is one file in `protocols/` plus one line in
//! `protocol::REGISTRY`.
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

pub use crate::config::{BpccSrs, ProtocolConfig};

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
