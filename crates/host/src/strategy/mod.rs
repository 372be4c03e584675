//! Recovery strategies: how the host gets atomicity and durability, one file each plus one
//! line in `REGISTRY` (like `ssd::protocol::REGISTRY`).
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

pub mod device_tx;
pub mod flagcommit_ex;
pub mod pcm_destage;
pub mod pcmlogging;
pub mod pcmlogging_engine;
pub mod pcmlogging_page;
pub mod scmlogging;
pub mod wal;
pub mod wal_pcm;

use crate::buffer::Frame;
use crate::data::{Layout, PageImage, PageNo, TagTable};
use crate::engine::Core;
use crate::{HostConfig, HostError, Result};
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

    /// May client `c` update a record of `page` now? (`flagcommit-ex`: at most max_c
    /// concurrent updaters per page, Flag Commit Algorithm 1.) A refusal restarts the
    /// transaction.
    fn admit_update(&mut self, _c: u32, _page: PageNo) -> bool {
        true
    }

    /// As `admit_update`, with the option to block: `Block(cs)` makes the client wait until
    /// one of clients `cs` ends its transaction, then retry the operation (Flag Commit
    /// Algorithm 1 line 16, `flagcommit-ex`); the wait is an edge of the wait-for graph.
    fn admit(&mut self, c: u32, page: PageNo, _now: SimTime) -> Admit {
        if self.admit_update(c, page) {
            Admit::Yes
        } else {
            Admit::Restart
        }
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

    /// The PCM tier's hooks (`pcm_tier::TierHooks`: record-level reads, the write logs for
    /// the crash checker, a restart from the tier's own media), for the strategies built on
    /// it; None for the others.
    fn tier(&mut self) -> Option<&mut dyn crate::pcm_tier::TierHooks> {
        None
    }
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

/// A strategy's state after a restart that wrote back, taken by its `create` when the
/// engine resumes (`engine::Core::resume`).
#[derive(Debug)]
pub enum Resume {
    Wal(wal::Resume),
    /// device-tx: nothing but the data area (`WriteBack::disk`); the device's own recovery
    /// settled every transaction.
    DeviceTx,
    FlagCommit(flagcommit_ex::Resume),
    /// pcmlogging and pcmlogging-page: the PCM and disk their restart left
    /// (`pcmlogging_engine::PcmResume`).
    Pcm(Box<pcmlogging_engine::PcmResume>),
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

/// Every recovery strategy. One line each.
pub static REGISTRY: &[&StrategyInfo] = &[
    &wal::INFO,
    &device_tx::INFO,
    &flagcommit_ex::INFO,
    &flagcommit_ex::CFC_INFO,
    &flagcommit_ex::AFC_INFO,
    &pcmlogging_engine::INFO,
    &wal_pcm::INFO,
    &scmlogging::INFO,
    &pcmlogging_page::INFO,
];

pub fn lookup(name: &str) -> Result<&'static StrategyInfo> {
    REGISTRY
        .iter()
        .copied()
        .find(|s| s.name == name)
        .ok_or_else(|| HostError::Config {
            key: "host.strategy".into(),
            reason: format!(
                "unknown recovery strategy '{name}'{} (known: {})",
                ssd::protocol::did_you_mean(name, &names()),
                names().join(", ")
            ),
        })
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

pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|s| s.name).collect()
}

/// Reads the data parts of every DB page from a recovered device and turns their tags back
/// into page images. Returns, per page that is not in its loaded state, the image of each
/// part (None: unmapped or holding its loaded tag, i.e. the loaded contents).
pub fn read_data_pages(
    ctx: &mut RecoverCtx<'_>,
) -> Result<BTreeMap<PageNo, Vec<Option<Arc<PageImage>>>>> {
    let mut out = BTreeMap::new();
    let parts = ctx.layout.parts;
    for p in 0..ctx.layout.pages {
        let mut imgs = Vec::with_capacity(parts as usize);
        let mut any = false;
        for k in 0..parts {
            let lpn = crate::engine::data_lpn(ctx.layout, PageNo(p), k);
            let (o, tail, t) = ctx
                .device
                .read_delta(lpn, ctx.now)
                .map_err(|e| HostError::Corrupt(format!("reading {lpn}: {e}")))?;
            ctx.now = ctx.now.max(t);
            match o {
                ssd::ReadOutcome::Unmapped => imgs.push(None),
                // The page as loaded, on a device the database was loaded onto
                // (`external::load_data_area`).
                ssd::ReadOutcome::Tag(tag)
                    if tag == crate::external::loaded_tag(lpn) && tail.is_empty() =>
                {
                    imgs.push(None)
                }
                ssd::ReadOutcome::Tag(tag)
                    if matches!(ctx.cfg.update.as_str(), "ipa" | "ipa-block") =>
                {
                    match ctx.tags.get(tag) {
                        Some(crate::data::TagContent::Data { image, part: 0 })
                            if image.page == PageNo(p) =>
                        {
                            any = true;
                            let img = crate::update::ipa::apply_tail(
                                ctx.cfg,
                                ctx.tags,
                                PageNo(p),
                                image.clone(),
                                &tail,
                            )?;
                            imgs.push(Some(img))
                        }
                        other => {
                            return Err(HostError::Corrupt(format!(
                                "{lpn} (page {p}) holds tag {tag}, which is {other:?}"
                            )))
                        }
                    }
                }
                ssd::ReadOutcome::Tag(tag) => match ctx.tags.get(tag) {
                    Some(crate::data::TagContent::Data { image, part })
                        if *part == k && image.page == PageNo(p) =>
                    {
                        any = true;
                        imgs.push(Some(image.clone()))
                    }
                    other => {
                        return Err(HostError::Corrupt(format!(
                            "{lpn} (page {p} part {k}) holds tag {tag}, which is {other:?}"
                        )))
                    }
                },
                other => {
                    return Err(HostError::Corrupt(format!(
                        "{lpn} (page {p} part {k}) reads {other:?}"
                    )))
                }
            }
        }
        if any {
            out.insert(PageNo(p), imgs);
        }
    }
    if ctx.cfg.update == "ipl" {
        crate::update::ipl::apply_logs(ctx, &mut out)?;
    }
    Ok(out)
}
