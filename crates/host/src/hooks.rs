//! The seam between the engine core and the recovery strategies: the `Strategy` trait the
//! engine calls, what it exchanges with a strategy (`Admit`, `RecoverCtx`, `WriteBack`,
//! `RecoveredDb`, `Resume`) and a strategy's registry entry (`StrategyInfo`). The
//! strategies themselves and their registry are above it (`strategy`), which re-exports
//! all of this under its old paths (`strategy::Strategy`, …).
//!
//! The engine calls a strategy at the points where recovery decides something:
//! `begin`, `on_update` (after a record changed in a buffered page), `evictable` and
//! `write_back` (a dirty page leaves the pool), `commit`, `abort`, and `maintain` (between
//! events: checkpoints). `recover` rebuilds the database from a crashed device alone.
//!
//! Durability contract, for every strategy: `commit` returns the instant the transaction is
//! durable (its ack); the engine releases the transaction's locks then. `abort` returns the
//! instant the rollback is complete (locks are released then); nothing of an aborted
//! transaction may ever be visible after recovery.
//!
//! A restart's strategy state (`Resume`) is opaque here, as strategy device content is in
//! `data::TagContent::Strategy`: the core carries it from the restart to the strategy's
//! `create` and never looks into it, so the core names no strategy (docs/ARCHITECTURE.md,
//! "Host core").

use crate::buffer::Frame;
use crate::data::{Layout, PageImage, PageNo, TagTable};
use crate::state::Core;
pub use crate::state::{Resume, ResumeState};
use crate::{HostConfig, Result};
use sim::{SimTime, TxnId};
use ssd::Device;
use std::collections::BTreeMap;
use std::sync::Arc;

pub trait Strategy {
    fn name(&self) -> &'static str;

    /// A transaction attempt starts on client `c`.
    fn begin(&mut self, core: &mut Core, c: u32, txn: TxnId, now: SimTime) -> Result<()>;

    /// Client `c` changed slot `slot` of the page in `frame` from `before` to `after` (the
    /// frame is already updated and marked dirty and owned by `c`).
    #[allow(clippy::too_many_arguments)]
    fn on_update(
        &mut self,
        core: &mut Core,
        c: u32,
        frame: u32,
        slot: u16,
        before: u64,
        after: u64,
        now: SimTime,
    ) -> Result<()>;

    /// May client `c` update a record of `page` now? `Restart` rolls the transaction back
    /// and restarts it; `Block(cs)` makes the client wait until one of clients `cs` ends its
    /// transaction, then retry the operation; the wait is an edge of the wait-for graph.
    /// (`flagcommit-ex`: at most max_c concurrent updaters per page, Flag Commit Algorithm 1
    /// line 16.) Default: `Yes`.
    fn admit(&mut self, _c: u32, _page: PageNo, _now: SimTime) -> Admit {
        Admit::Yes
    }

    /// May this dirty frame be written back now?
    fn evictable(&self, frame: &Frame) -> bool;

    /// May the engine write back a dirty frame that `evictable` refuses, of the oldest
    /// active transaction, when that transaction will not write the page again
    /// (`engine::Engine::no_room`)? device-tx over SCC/BPCC: its no-steal rule exists only
    /// because those protocols cannot write one page twice in a transaction.
    fn steal_if_final(&self) -> bool {
        false
    }

    /// Writes a dirty frame leaving the pool; returns when the frame may be reused.
    fn write_back(&mut self, core: &mut Core, frame: Frame, now: SimTime) -> Result<SimTime>;

    /// The contents a fetch of `page` by client `c` must see when the page is not buffered,
    /// if not the device's current version (a transaction reading its own stolen page).
    fn own_page(&self, _c: u32, _page: PageNo) -> Option<Arc<PageImage>> {
        None
    }

    /// Commits client `c`'s transaction; returns the ack instant.
    fn commit(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime>;

    /// Rolls back client `c`'s transaction; returns when the rollback is complete.
    fn abort(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime>;

    /// Runs between events (checkpoints).
    fn maintain(&mut self, _core: &mut Core, _now: SimTime) -> Result<()> {
        Ok(())
    }

    /// A record operation changed `page` (after `on_update`): update strategies track the
    /// changed bytes here (`update::ipa`).
    fn on_op(&mut self, _core: &Core, _page: PageNo, _op: &workload::db::RecOp) {}

    /// Strategy counters for the report.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// Reads `page` for a buffer miss; returns when its contents are in DRAM. Strategies
    /// with their own external store (the PCM tier's disks) read it there.
    fn read_page(&mut self, core: &mut Core, page: PageNo, now: SimTime) -> Result<SimTime> {
        core.read_page(page, now)
    }

    /// The PCM tier's hooks (`TierHooks`: record-level reads, the write logs for the crash
    /// checker, a restart from the tier's own media), for the strategies built on it
    /// (`pcm_tier`); None for the others.
    fn tier(&mut self) -> Option<&mut dyn TierHooks> {
        None
    }
}

/// The hooks of the strategies built on the PCM tier (`pcm_tier`), reached through
/// `Strategy::tier`: defined here, below the strategies, so that the engine calls them
/// without naming the tier.
pub trait TierHooks {
    /// Reads `page` for a buffer miss caused by an access to record `slot` of it (`None`:
    /// the whole page is wanted); returns when what the access needs is in DRAM.
    /// Record-level PCMLogging serves the record from PCM when it is there (§3.3 "Serving
    /// read/write requests") and leaves the frame partial. None (the default, the
    /// page-level schemes): the miss reads the whole page (`Strategy::read_page`).
    fn read_page_for(
        &mut self,
        _core: &mut Core,
        _page: PageNo,
        _slot: Option<u16>,
        _now: SimTime,
    ) -> Option<Result<SimTime>> {
        None
    }

    /// A buffer hit on `frame` by an access to record `slot` (`None`: the whole page), the
    /// frame usable from `ready`. A strategy whose frames may hold only part of a page
    /// (`read_page_for`) completes it here and returns when the access may proceed.
    fn on_hit(
        &mut self,
        _core: &mut Core,
        _frame: u32,
        _slot: Option<u16>,
        ready: SimTime,
    ) -> Result<SimTime> {
        Ok(ready)
    }

    /// The PCM and disk write logs of a recorded run, for the crash checker
    /// (`pcm_tier::check`).
    fn take_tier_log(&mut self) -> Option<TierLog>;

    /// Cuts power at `now` and restarts from the tier's media as they stand, reporting the
    /// work (instead of the engine's device restart).
    fn measure_recovery(&self, now: SimTime) -> Result<crate::metrics::HostRecoveryMetrics>;
}

/// A strategy's answer to an update of a page (`Strategy::admit`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admit {
    Yes,
    /// Roll back and restart the transaction.
    Restart,
    /// Block until one of these clients (the page's current updaters, never the requester)
    /// ends its transaction; then retry the operation. The engine adds the edges to the
    /// wait-for graph and resolves a cycle through them like a lock deadlock.
    Block(Vec<u32>),
}

/// What a restart has to work with: the recovered device and the tag table (the
/// decompression of the page contents the device holds).
pub struct RecoverCtx<'a> {
    pub cfg: &'a HostConfig,
    pub layout: &'a Layout,
    pub device: &'a mut Device,
    /// The recovered log device (`host.log_device = "separate"`); None: the log is on
    /// `device`.
    pub log_device: Option<&'a mut Device>,
    pub tags: &'a TagTable,
    pub now: SimTime,
    /// Run-on restarts (`check::check_run_on`): the restart writes its results back so the
    /// engine can start on the recovered medium (`WriteBack`). None: the restart only
    /// returns the database (the crash checker's other modes, `recover --host`, the
    /// recovery measured at the end of a run).
    pub write_back: Option<&'a mut WriteBack>,
}

/// What a restart that writes back leaves for the engine that starts on the recovered
/// medium (`engine::Engine::resume`): the tag table grown by the restart's own writes, the
/// DB page images the data area holds after it, and the strategy's own state (its log
/// tail, master records).
#[derive(Debug, Default)]
pub struct WriteBack {
    pub tags: TagTable,
    /// Per DB page the restart wrote: its first tag and image (`engine::Core::disk`).
    pub disk: BTreeMap<PageNo, (u64, Arc<crate::data::PageImage>)>,
    /// Set by a restart that can run on; the engine refuses to resume without it.
    pub resume: Option<Resume>,
    /// Log pages beyond the log's end the restart voided (wal: written by the crashed run
    /// after a page that did not persist).
    pub voided: u64,
    /// When the restart's own writes end, if they are not on the device (the PCM tier's):
    /// the engine starts then.
    pub start: SimTime,
}

/// A recovered database: the pages that differ from the loaded state may be listed; a page
/// not listed is as loaded.
#[derive(Clone, Debug, Default)]
pub struct RecoveredDb {
    pub pages: BTreeMap<PageNo, Vec<u64>>,
    pub pages_read: u64,
    pub time_ns: u64,
}

pub struct StrategyInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// The lock level `auto` means.
    pub lock_level: crate::LockLevel,
    /// Refuses a configuration (or a device protocol) the strategy cannot honour.
    pub check: fn(&HostConfig, &'static ssd::ProtocolInfo) -> Result<()>,
    pub create: fn(&HostConfig, &mut Core) -> Result<Box<dyn Strategy>>,
    pub recover: fn(&mut RecoverCtx<'_>) -> Result<RecoveredDb>,
}

impl RecoverCtx<'_> {
    /// The device holding the log and its master record.
    pub fn log_dev(&mut self) -> &mut Device {
        match self.log_device.as_mut() {
            Some(d) => d,
            None => self.device,
        }
    }
}

/// What a run of a PCM strategy leaves for the crash checker (`Strategy::take_tier_log`,
/// `pcm_tier::check`; also `pcm_tier::TierLog`). Here, with the hook that returns it, so
/// the engine core names no PCM module.
#[derive(Clone, Debug)]
pub struct TierLog {
    pub pcm_cfg: media::pcm::PcmConfig,
    /// The PCM image after formatting, before the run.
    pub pcm_base: Vec<u8>,
    pub pcm_ops: Vec<media::pcm::PcmWrite>,
    /// The external store's page writes, and its flash operations on the emulated SSD.
    pub disk_ops: media::disk::DiskLog,
    /// The latency-constant disk's pages before the run (empty: as loaded; a run on a
    /// restarted tier, `check_run_on`: the crash image's).
    pub disk_base: BTreeMap<u64, Vec<u64>>,
}
