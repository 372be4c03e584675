//! `device-tx`: atomicity and durability from the device's transactional interface
//! (BEGIN / WRITE / COMMIT / ABORT), with force at commit — how Flag Commit §5.2 runs CFC,
//! AFC, SCC and BPCC under a DBMS. Works with any protocol whose writes are atomic and that
//! allows concurrent transactions on disjoint pages (`no-page-conflict` isolation).
//!
//! # What reaches the device
//!
//! - A transaction's first write-back opens a device transaction `TxId(txn id)` (BEGIN).
//! - Steal: a dirty page evicted before commit is written inside that transaction (one
//!   WRITE per device page of the DB page): a *shadow page* in the paper's words, invisible
//!   until COMMIT is acked.
//! - Commit: every page the transaction still has dirty in the pool is written inside the
//!   transaction, then COMMIT; the ack is the device's (durable). A transaction that wrote
//!   nothing commits without device I/O.
//! - Abort: ABORT (if a device transaction was opened), and every buffered page the
//!   transaction touched is dropped from the pool (its device version is the committed one).
//!
//! There is no log: the on-device layout is only the data area, DB page `p`'s part `k` at
//! logical page `p * parts + k` (`engine::data_lpn`), tags as in `data.rs`.
//!
//! # Decisions the paper leaves open
//!
//! - **Page-level locking only** (§5.2): two active transactions never write one page, which
//!   is what the protocols' no-page-conflict isolation requires. `host.lock_level =
//!   "record"` is refused.
//! - **Reading one's own stolen page**: the device's READ returns the newest committed
//!   version (the device contract), so a transaction that fetches a page it already wrote
//!   back gets the contents from its own shadow table (the I/O is still a device read).
//!   Flag Commit §3.1.1 maps the shadow page at write time, which gives the same result.
//! - **SCC and BPCC** may not write a page twice in one transaction once its intention is
//!   programmed, and the paper requires each in-progress transaction's last shadow page to
//!   stay in the buffer pool. We honour both with one stronger rule: under `scc` and `bpcc`
//!   a page dirtied by an active transaction is never evicted (no-steal), so every write
//!   happens at commit, once per page. A transaction that finds no evictable frame restarts
//!   (`buffer_full_restarts`) — except the oldest active one (`engine::Engine::no_room`),
//!   which first steals one of its own pages that it will not write again (written once,
//!   inside its device transaction, as any steal: allowed by the device, `steal_if_final`),
//!   else rolls back the youngest other holder of pinned pages, else waits for a read.
//!
//! # Crash argument
//!
//! - Crash before COMMIT is issued: every write of the transaction is a shadow of an open
//!   device transaction; the protocol's recovery discards it. Nothing is visible.
//! - Crash while COMMIT is in flight: the protocol makes the transaction all or nothing;
//!   every DB page the transaction changed is inside it (pages it changed and evicted were
//!   written in it, the rest are written at commit before COMMIT), so the database shows
//!   all of its updates or none.
//! - Acked commit: durable by the protocol's contract; later transactions change a page
//!   only after this one's locks are released (at the ack), so their versions are newer.
//! - Abort: ABORT discards the shadows; buffered changes are dropped, never written.
//! - Every device page of a DB page is written in the same transaction as the others, so a
//!   DB page is never torn across its parts.

use crate::buffer::Frame;
use crate::data::{PageImage, PageNo};
use crate::engine::Core;
use crate::strategy::{read_data_pages, RecoverCtx, RecoveredDb, Strategy, StrategyInfo};
use crate::{HostConfig, HostError, LockLevel, Result};
use sim::{SimTime, TxId, TxnId};
use ssd::Isolation;
use std::collections::BTreeMap;
use std::sync::Arc;

pub static INFO: StrategyInfo = StrategyInfo {
    name: "device-tx",
    summary: "force at commit through the device's BEGIN/WRITE/COMMIT/ABORT (any atomic protocol), page-level locks",
    lock_level: crate::LockLevel::Page,
    check,
    create,
    recover,
};

fn check(cfg: &HostConfig, p: &'static ssd::ProtocolInfo) -> Result<()> {
    if !p.atomic {
        return Err(HostError::Config {
            key: "protocol.name".into(),
            reason: format!(
                "device-tx needs a protocol with atomic transactions; {} has none (use wal over it)",
                p.name
            ),
        });
    }
    if !p.supports(Isolation::NoPageConflict) {
        return Err(HostError::Config {
            key: "protocol.name".into(),
            reason: format!(
                "device-tx runs concurrent transactions on disjoint pages; {} supports only {} isolation",
                p.name,
                p.isolation.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    if cfg.lock_level == LockLevel::Record {
        return Err(HostError::Config {
            key: "host.lock_level".into(),
            reason: "device-tx needs page-level locking (two active transactions may not write one device page; Flag Commit §5.2)".into(),
        });
    }
    Ok(())
}

struct Tx {
    txn: TxnId,
    opened: bool,
    /// Pages it changed (buffered or written back).
    pages: Vec<PageNo>,
    /// Pages it wrote back before commit: first tag and image.
    shadows: BTreeMap<PageNo, (u64, Arc<PageImage>)>,
}

pub struct DeviceTx {
    txs: Vec<Option<Tx>>,
    /// SCC/BPCC: no page of an active transaction leaves the pool.
    pin_active: bool,

    early_ack: bool,
    device_commits: u64,
    device_aborts: u64,
    stolen_pages: u64,
}

fn create(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    let name = core.device.info().name;
    Ok(Box::new(DeviceTx {
        txs: (0..cfg.clients).map(|_| None).collect(),
        pin_active: matches!(name, "scc" | "bpcc"),
        early_ack: cfg.fault_early_commit_ack,
        device_commits: 0,
        device_aborts: 0,
        stolen_pages: 0,
    }))
}

impl DeviceTx {
    fn tx(&mut self, c: u32) -> Result<&mut Tx> {
        self.txs[c as usize]
            .as_mut()
            .ok_or_else(|| HostError::Stuck(format!("internal: client {c} has no transaction")))
    }

    fn write_in_tx(
        &mut self,
        core: &mut Core,
        c: u32,
        frame: &Frame,
        now: SimTime,
    ) -> Result<SimTime> {
        let tx = self.tx(c)?;
        let id = TxId(tx.txn.0);
        let mut t = now;
        if !tx.opened {
            core.trace(now, workload::txn::TxCmd::Begin { tx: id });
            t = core
                .device
                .begin(id, now)
                .map_err(Core::dev_err(now, format!("BEGIN {id}")))?;
            tx.opened = true;
        }
        let img = Arc::new(PageImage {
            page: frame.page,
            lsn: 0,
            values: frame.values.clone(),
        });
        let (t0, end) =
            core.write_image(&img, Some(id), now, |d, lpn, tag| d.write(id, lpn, tag, t))?;
        self.tx(c)?.shadows.insert(frame.page, (t0, img));
        Ok(end)
    }
}

impl DeviceTx {
    /// Writes the transaction's last dirty page at commit and commits with it: every part
    /// but the last as a WRITE, the last with the COMMIT (`Device::commit_write`). Returns
    /// the COMMIT's ack.
    fn write_commit_in_tx(
        &mut self,
        core: &mut Core,
        c: u32,
        frame: &Frame,
        now: SimTime,
    ) -> Result<SimTime> {
        let tx = self.tx(c)?;
        let id = TxId(tx.txn.0);
        let mut t = now;
        if !tx.opened {
            core.trace(now, workload::txn::TxCmd::Begin { tx: id });
            t = core
                .device
                .begin(id, now)
                .map_err(Core::dev_err(now, format!("BEGIN {id}")))?;
            tx.opened = true;
        }
        let img = Arc::new(PageImage {
            page: frame.page,
            lsn: 0,
            values: frame.values.clone(),
        });
        let parts = core.layout.parts;
        let last = crate::engine::data_lpn(&core.layout, frame.page, parts - 1);
        let mut ack = now;
        let mut k = 0;
        let (t0, _) = core.write_image_with_commit(&img, id, now, |d, lpn, tag| {
            k += 1;
            if lpn == last {
                let a = d.commit_write(id, lpn, tag, t)?;
                ack = a;
                Ok(a)
            } else {
                d.write(id, lpn, tag, t)
            }
        })?;
        debug_assert_eq!(k, parts);
        self.tx(c)?.shadows.insert(frame.page, (t0, img));
        Ok(ack)
    }
}

impl Strategy for DeviceTx {
    fn name(&self) -> &'static str {
        "device-tx"
    }

    fn begin(&mut self, _core: &mut Core, c: u32, txn: TxnId, _now: SimTime) -> Result<()> {
        self.txs[c as usize] = Some(Tx {
            txn,
            opened: false,
            pages: Vec::new(),
            shadows: BTreeMap::new(),
        });
        Ok(())
    }

    fn on_update(
        &mut self,
        core: &mut Core,
        c: u32,
        frame: u32,
        _slot: u16,
        _before: u64,
        _after: u64,
        _now: SimTime,
    ) -> Result<()> {
        let page = core.pool.frame(frame).page;
        let tx = self.tx(c)?;
        if !tx.pages.contains(&page) {
            tx.pages.push(page);
        }
        Ok(())
    }

    fn evictable(&self, frame: &Frame) -> bool {
        !(self.pin_active && frame.owner.is_some())
    }

    fn steal_if_final(&self) -> bool {
        self.pin_active
    }

    fn write_back(&mut self, core: &mut Core, frame: Frame, now: SimTime) -> Result<SimTime> {
        let Some(c) = frame.owner else {
            return Err(HostError::Stuck(format!(
                "internal: dirty page {:?} without an owning transaction",
                frame.page
            )));
        };
        self.stolen_pages += 1;
        self.write_in_tx(core, c, &frame, now)
    }

    fn own_page(&self, c: u32, page: PageNo) -> Option<Arc<PageImage>> {
        self.txs[c as usize]
            .as_ref()
            .and_then(|t| t.shadows.get(&page).map(|s| s.1.clone()))
    }

    fn commit(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let pages = self.tx(c)?.pages.clone();
        let dirty: Vec<u32> = pages
            .iter()
            .filter_map(|&page| core.pool.find(page))
            .filter(|&f| core.pool.frame(f).dirty)
            .collect();
        // The last page written at commit goes with the COMMIT itself (Flag Commit §3.3: a
        // buffered last shadow page carries the commit flag; `Device::commit_write`).
        let mut fused_ack = None;
        for (i, &f) in dirty.iter().enumerate() {
            let fr = core.pool.frame(f).clone();
            if i + 1 == dirty.len() {
                fused_ack = Some(self.write_commit_in_tx(core, c, &fr, now)?);
            } else {
                self.write_in_tx(core, c, &fr, now)?;
            }
            let fm = core.pool.frame_mut(f);
            fm.dirty = false;
            fm.owner = None;
        }
        let Some(tx) = self.txs[c as usize].take() else {
            return Err(HostError::Stuck(
                "internal: commit without a transaction".into(),
            ));
        };
        if !tx.opened {
            return Ok(now);
        }
        let id = TxId(tx.txn.0);
        let ack = match fused_ack {
            Some(a) => a,
            None => {
                core.trace(
                    now,
                    workload::txn::TxCmd::Commit {
                        tx: id,
                        write: None,
                    },
                );
                core.device
                    .commit(id, now)
                    .map_err(Core::dev_err(now, format!("COMMIT {id}")))?
            }
        };
        self.device_commits += 1;
        for (page, (t0, img)) in tx.shadows {
            core.disk[page.0 as usize] = Some((t0, img));
        }
        Ok(if self.early_ack { now } else { ack })
    }

    fn abort(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let Some(tx) = self.txs[c as usize].take() else {
            return Err(HostError::Stuck(
                "internal: abort without a transaction".into(),
            ));
        };
        for page in &tx.pages {
            if let Some(f) = core.pool.find(*page) {
                core.pool.remove(f);
            }
        }
        if !tx.opened {
            return Ok(now);
        }
        let id = TxId(tx.txn.0);
        core.trace(now, workload::txn::TxCmd::Abort { tx: id });
        let t = core
            .device
            .abort(id, now)
            .map_err(Core::dev_err(now, format!("ABORT {id}")))?;
        self.device_aborts += 1;
        Ok(t)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("device_commits", self.device_commits),
            ("device_aborts", self.device_aborts),
            ("stolen_pages", self.stolen_pages),
        ]
    }
}

/// Restart: the device's own recovery has already run; the database is what the data
/// area holds (every part's tag turned back into its image's slots).
fn recover(ctx: &mut RecoverCtx<'_>) -> Result<RecoveredDb> {
    let start = ctx.now;
    let before = ctx.device.core.nand.counters();
    let parts = read_data_pages(ctx)?;
    let mut db = RecoveredDb::default();
    for (page, imgs) in parts {
        let slots = ctx.layout.slots(page);
        let mut values = ctx.layout.initial_page(page);
        for (k, img) in imgs.iter().enumerate() {
            if let Some(img) = img {
                for s in ctx.layout.part_range(slots, k as u32) {
                    values[s] = img.values[s];
                }
            }
        }
        db.pages.insert(page, values);
    }
    let after = ctx.device.core.nand.counters();
    db.pages_read = after.reads - before.reads;
    db.time_ns = ctx.now.since(start);
    Ok(db)
}
