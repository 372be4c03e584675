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
//!   until COMMIT is acked. Which dirty pages may be stolen: `host.device_tx.pin` (below).
//! - Commit: every page the transaction still has dirty in the pool is written inside the
//!   transaction (its last shadow page last), then COMMIT; the ack is the device's (durable). A transaction that wrote
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
//! - **SCC and BPCC: steal all but the last shadow page** (`host.device_tx.pin = "last"`,
//!   the default). Flag Commit §5.1: "SCC and BPCC protocols require the last shadow page
//!   of each in-progress transaction to be resident in the buffer pool"; §1 says why: a
//!   shadow page's next-link names the transaction's next shadow page, so the current one
//!   must wait until the next is known, and the last one links back to the first at commit
//!   (TxFlash §3.4, dynamic transactions). Transactions here are dynamic, so *last* is
//!   defined by what the transaction has done so far: its last shadow page is the page of
//!   its most recent update (`Tx::last`). That page is never stolen, and commit writes it
//!   after every other page, so at every instant the page that would close the cycle if
//!   the transaction committed now is resident, as §5.1 requires. Every other dirty page
//!   may be stolen: it is written inside the transaction's device transaction as an
//!   uncommitted intention (the device holds the most recent write until the next one
//!   names it, cyclic.rs `Held`). When the transaction updates another page, that page
//!   becomes the last one and the previous one may be stolen. An abort of a transaction
//!   that stole pages leaves their intentions on flash: SCC erases them before their pages
//!   get a newer version, BPCC straddles and keeps them — the costs §5.2 attributes to
//!   the two protocols (`uncommitted_pages_left`, the device's `forced_relocations`,
//!   `uncommitted_intentions`, `live_straddlers`).
//! - **A stolen page updated again** must reach flash again inside the same atomic unit.
//!   SCC and BPCC cannot take a second intention of one page in one transaction once the
//!   first is programmed (`cyclic::Txs::check`): the first one's predecessor names it by
//!   version, and once a newer version of the page exists, recovery's case I reads that
//!   link as committed (SCC Invariant) or, in BPCC, as straddled by the newer version —
//!   wrong before the commit under SCC, wrong after it under BPCC. TxFlash's own remedy
//!   for an uncommitted intention in the way of a new version is to get rid of it
//!   ("Handling Uncommitted Intention Records"), and doing that inside the transaction
//!   would cascade back along the chain to its first page. So the engine does what the
//!   device interface allows (TxFlash §3.4 leaves transaction management to the
//!   database): it *reopens* the device transaction — ABORT, BEGIN with the same id, and
//!   write again every page the aborted one had written (from the transaction's shadow
//!   table, or later from the pool for a page that is dirty there), then the page itself.
//!   The aborted intentions are uncommitted pages like a rollback's, handled by each
//!   protocol's own rules. The one exception is the page the device still holds (the
//!   transaction's most recent write, when a DB page is one device page): writing it
//!   again replaces the held data (`WriteCase::ReplaceHeld`), no reopen. Counted in
//!   `device_tx_reopens` and `reopen_rewrites`.
//! - **`host.device_tx.pin = "all"`** keeps the former rule: no page an active
//!   transaction dirtied leaves the pool (no-steal), so every write happens at commit,
//!   once per page. A transaction that finds no evictable frame restarts
//!   (`buffer_full_restarts`) — except the oldest active one (`engine::Engine::no_room`),
//!   which first steals one of its own pages that it will not write again (written once,
//!   inside its device transaction, as any steal: allowed by the device, `steal_if_final`),
//!   else rolls back the youngest other holder of pinned pages, else waits for a read.
//!   Under scc and bpcc an aborted transaction then leaves almost nothing on flash.
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
//! - Reopen: the ABORT makes everything the first device transaction wrote uncommitted
//!   (the protocol's abort case); the new one, under the same id, is written from the
//!   transaction's current images of every page it changed so far, so it carries the
//!   whole transaction and commits all of it or nothing, as above. A crash between the
//!   two leaves nothing of the transaction visible.
//! - The last shadow page: pinning it only keeps memory the way §5.1 accounts for it; the
//!   device's holding buffer is what keeps the cycle open, so no correctness argument
//!   rests on the pin.
//! - Every device page of a DB page is written in the same transaction as the others, so a
//!   DB page is never torn across its parts.
//!
//! # Run-on restart
//!
//! With `RecoverCtx::write_back` (the checker's run-on mode, `check::check_run_on`) the
//! restart writes nothing: the device's own recovery has settled every device transaction
//! (TxFlash §4 for tc, scc and bpcc; Flag Commit §3–§4 for cfc and afc; LightTx and its
//! baselines likewise: committed ones visible, the others' writes discarded or left as
//! uncommitted pages each protocol's rules handle), which is all ARIES's restart has to
//! finish for a force-at-commit, no-log strategy. The engine gets the data area as the device
//! holds it (`resume_state`: per page, part 0's tag and the image) and starts its
//! transactions at ids above every attempt of the crashed run (`check::next_txn_after`):
//! an aborted or unfinished attempt's device transaction may still have uncommitted pages
//! on flash under its id, and a new transaction under that id could adopt them. The data
//! area handed over must be the committed one the device reads back: a restart that handed
//! over each page's newest write, committed or not (the planted `fault_restart =
//! "uncommitted"`), would let the run build on an uncommitted intention the device has
//! discarded. Case by case, a second crash: before the
//! first COMMIT of the run after the restart, the medium is the first crash's plus
//! uncommitted writes under new ids — the device's recovery discards them, as it did the
//! first time; after it, as for any run (above).

use crate::buffer::Frame;
use crate::data::{PageImage, PageNo};
use crate::engine::Core;
use crate::hooks::{RecoverCtx, RecoveredDb, Strategy, StrategyInfo};
use crate::strategy::pages::read_data_pages;
use crate::{DeviceTxPin, HostConfig, HostError, LockLevel, Result};
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

/// device-tx's state after a restart that wrote back (`hooks::Resume`): nothing but the data
/// area (`WriteBack::disk`); the device's own recovery settled every transaction.
#[derive(Debug)]
pub struct Resume;

struct Tx {
    txn: TxnId,
    opened: bool,
    /// Pages it changed (buffered or written back).
    pages: Vec<PageNo>,
    /// Pages written inside the open device transaction: first tag and image.
    shadows: BTreeMap<PageNo, (u64, Arc<PageImage>)>,
    /// The page of its most recent update: its last shadow page (pinned under
    /// `DeviceTxPin::Last` over scc/bpcc, written last at commit).
    last: Option<PageNo>,
    /// The page of its most recent device write (the device holds that write's last part
    /// until the next write names it).
    held: Option<PageNo>,
}

/// Planted bugs for the crash checker (`HostConfig::fault_device_tx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    /// Commit does not write a page again that was stolen and then updated again.
    SkipRewrite,
    /// A reopened device transaction does not carry the pages the aborted one wrote.
    ReopenForgets,
}

pub struct DeviceTx {
    txs: Vec<Option<Tx>>,
    fault: Fault,
    pin: DeviceTxPin,
    /// scc/bpcc: one intention per page per device transaction, and the §5.1 pin rule.
    cyclic: bool,
    /// Device pages per DB page.
    parts: u32,
    early_ack: bool,
    device_commits: u64,
    device_aborts: u64,
    stolen_pages: u64,
    reopens: u64,
    reopen_rewrites: u64,
    uncommitted_pages_left: u64,
}

fn create(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    let name = core.device.info().name;
    let fault = match cfg.fault_device_tx.as_str() {
        "" => Fault::None,
        "skip-rewrite" => Fault::SkipRewrite,
        "reopen-forgets" => Fault::ReopenForgets,
        other => {
            return Err(HostError::Config {
                key: "host.fault_device_tx".into(),
                reason: format!("unknown planted bug '{other}'"),
            })
        }
    };
    if core.resume.as_ref().is_some_and(|r| r.is::<Resume>()) {
        // The engine starts on a medium whose restart wrote back (`recover`): no state
        // beyond the data area, which `Engine::resume` installed.
        core.resume = None;
    }
    Ok(Box::new(DeviceTx {
        txs: (0..cfg.clients).map(|_| None).collect(),
        fault,
        pin: cfg.device_tx.pin,
        cyclic: matches!(name, "scc" | "bpcc"),
        parts: core.layout.parts,
        early_ack: cfg.fault_early_commit_ack,
        device_commits: 0,
        device_aborts: 0,
        stolen_pages: 0,
        reopens: 0,
        reopen_rewrites: 0,
        uncommitted_pages_left: 0,
    }))
}

impl DeviceTx {
    fn tx(&mut self, c: u32) -> Result<&mut Tx> {
        self.txs[c as usize]
            .as_mut()
            .ok_or_else(|| HostError::Stuck(format!("internal: client {c} has no transaction")))
    }

    /// Device pages an aborted device transaction leaves programmed on flash: every part
    /// of every page it wrote, less the held write a cyclic protocol drops unprogrammed.
    fn programmed(&self, tx: &Tx) -> u64 {
        let pages = tx.shadows.len() as u64 * u64::from(self.parts);
        pages - u64::from(self.cyclic && tx.held.is_some()).min(pages)
    }

    /// Writes page `page` holding `values` (a frame's, taken by the caller: moved out of an
    /// evicted frame, copied once from a resident one) inside client `c`'s device
    /// transaction (opening it if needed). Under scc/bpcc a page the device transaction
    /// already programmed reopens it first (module docs, "A stolen page updated again").
    fn write_in_tx(
        &mut self,
        core: &mut Core,
        c: u32,
        page: PageNo,
        values: Vec<u64>,
        now: SimTime,
    ) -> Result<SimTime> {
        self.reopen_if_programmed(core, c, page, now)?;
        let img = Arc::new(PageImage {
            page,
            lsn: 0,
            values,
        });
        self.write_image(core, c, img, now)
    }

    fn write_image(
        &mut self,
        core: &mut Core,
        c: u32,
        img: Arc<PageImage>,
        now: SimTime,
    ) -> Result<SimTime> {
        let (id, t) = self.open(core, c, now)?;
        let (t0, end) =
            core.write_image(&img, Some(id), now, |d, lpn, tag| d.write(id, lpn, tag, t))?;
        let tx = self.tx(c)?;
        tx.held = Some(img.page);
        tx.shadows.insert(img.page, (t0, img));
        Ok(end)
    }

    /// Client `c`'s device transaction id, BEGIN issued on its first write: returns the id
    /// and the instant its writes may be issued.
    fn open(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<(TxId, SimTime)> {
        let tx = self.tx(c)?;
        let id = TxId(tx.txn.0);
        if tx.opened {
            return Ok((id, now));
        }
        core.trace(now, workload::txn::TxCmd::Begin { tx: id });
        let t = core
            .device
            .begin(id, now)
            .map_err(Core::dev_err(now, format!("BEGIN {id}")))?;
        tx.opened = true;
        Ok((id, t))
    }

    /// scc/bpcc take one intention per page per device transaction: before `page` is written
    /// again after it was programmed (not merely held by the device), reopen the transaction.
    fn reopen_if_programmed(
        &mut self,
        core: &mut Core,
        c: u32,
        page: PageNo,
        now: SimTime,
    ) -> Result<()> {
        let (again, held) = {
            let tx = self.tx(c)?;
            (tx.shadows.contains_key(&page), tx.held == Some(page))
        };
        if self.cyclic && again && !(held && self.parts == 1) {
            self.reopen(core, c, page, now)?;
        }
        Ok(())
    }

    /// Client `c` must write `page` again after its device transaction programmed it:
    /// ABORT that device transaction and BEGIN a new one under the same id carrying every
    /// page written so far (from the shadow table; a page dirty in the pool is written
    /// from there later, and `page` by the caller).
    fn reopen(&mut self, core: &mut Core, c: u32, page: PageNo, now: SimTime) -> Result<()> {
        let programmed = {
            let tx = self.txs[c as usize].as_ref();
            tx.map_or(0, |t| self.programmed(t))
        };
        let tx = self.tx(c)?;
        let id = TxId(tx.txn.0);
        let old = std::mem::take(&mut tx.shadows);
        tx.opened = false;
        tx.held = None;
        core.trace(now, workload::txn::TxCmd::Abort { tx: id });
        core.device
            .abort(id, now)
            .map_err(Core::dev_err(now, format!("ABORT {id} (reopen)")))?;
        self.reopens += 1;
        self.uncommitted_pages_left += programmed;
        for (p, (_, img)) in old {
            if p == page {
                continue;
            }
            let dirty = core.pool.find(p).is_some_and(|f| core.pool.frame(f).dirty);
            if dirty || self.fault == Fault::ReopenForgets {
                continue;
            }
            self.reopen_rewrites += 1;
            self.write_image(core, c, img, now)?;
        }
        Ok(())
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
        page: PageNo,
        values: Vec<u64>,
        now: SimTime,
    ) -> Result<SimTime> {
        self.reopen_if_programmed(core, c, page, now)?;
        let (id, t) = self.open(core, c, now)?;
        let img = Arc::new(PageImage {
            page,
            lsn: 0,
            values,
        });
        let parts = core.layout.parts;
        let last = crate::engine::data_lpn(&core.layout, page, parts - 1);
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
        self.tx(c)?.shadows.insert(page, (t0, img));
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
            last: None,
            held: None,
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
        tx.last = Some(page);
        Ok(())
    }

    fn evictable(&self, frame: &Frame) -> bool {
        match self.pin {
            DeviceTxPin::All => frame.owner.is_none(),
            DeviceTxPin::Last => {
                !self.cyclic
                    || frame.owner.is_none_or(|c| {
                        self.txs[c as usize]
                            .as_ref()
                            .is_none_or(|t| t.last != Some(frame.page))
                    })
            }
        }
    }

    fn steal_if_final(&self) -> bool {
        self.pin == DeviceTxPin::All
    }

    fn write_back(&mut self, core: &mut Core, frame: Frame, now: SimTime) -> Result<SimTime> {
        let Some(c) = frame.owner else {
            return Err(HostError::Stuck(format!(
                "internal: dirty page {:?} without an owning transaction",
                frame.page
            )));
        };
        if self.pin == DeviceTxPin::Last
            && self.cyclic
            && self.txs[c as usize].as_ref().and_then(|t| t.last) == Some(frame.page)
        {
            return Err(HostError::Stuck(format!(
                "internal: the last shadow page {:?} of client {c}'s transaction was stolen (Flag Commit §5.1)",
                frame.page
            )));
        }
        self.stolen_pages += 1;
        self.write_in_tx(core, c, frame.page, frame.values, now)
    }

    fn own_page(&self, c: u32, page: PageNo) -> Option<Arc<PageImage>> {
        self.txs[c as usize]
            .as_ref()
            .and_then(|t| t.shadows.get(&page).map(|s| s.1.clone()))
    }

    fn commit(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        // The last shadow page is written last: its write closes the cycle (module docs).
        let tx = self.tx(c)?;
        let mut pages = tx.pages.clone();
        if let Some(l) = tx.last {
            if let Some(i) = pages.iter().position(|&p| p == l) {
                let p = pages.remove(i);
                pages.push(p);
            }
        }
        let mut dirty = Vec::new();
        for page in pages {
            if let Some(f) = core.pool.find(page) {
                if core.pool.frame(f).dirty {
                    let planted =
                        self.fault == Fault::SkipRewrite && self.tx(c)?.shadows.contains_key(&page);
                    dirty.push((f, planted));
                }
            }
        }
        // The last page written at commit goes with the COMMIT itself (Flag Commit §3.3: a
        // buffered last shadow page carries the commit flag; `Device::commit_write`).
        let fused = dirty.iter().rposition(|&(_, planted)| !planted);
        let mut fused_ack = None;
        for (i, &(f, planted)) in dirty.iter().enumerate() {
            if !planted {
                let fr = core.pool.frame(f);
                let (page, values) = (fr.page, fr.values.clone());
                if Some(i) == fused {
                    fused_ack = Some(self.write_commit_in_tx(core, c, page, values, now)?);
                } else {
                    self.write_in_tx(core, c, page, values, now)?;
                }
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
        self.uncommitted_pages_left += self.programmed(&tx);
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
            ("device_tx_reopens", self.reopens),
            ("reopen_rewrites", self.reopen_rewrites),
            ("uncommitted_pages_left", self.uncommitted_pages_left),
        ]
    }
}

/// Restart: the device's own recovery has already run; the database is what the data
/// area holds (every part's tag turned back into its image's slots).
fn recover(ctx: &mut RecoverCtx<'_>) -> Result<RecoveredDb> {
    let start = ctx.now;
    let before = ctx.device.core.nand.counters();
    let parts = read_data_pages(ctx)?;
    if ctx.write_back.is_some() {
        resume_state(ctx, &parts)?;
    }
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

/// A run-on restart (`RecoverCtx::write_back`, module docs "Run-on restart"): the device's
/// recovery has settled every device transaction (committed ones visible, the others'
/// writes discarded by the protocol's own rules), so nothing is written; the engine gets
/// the data area as the device now holds it — per page its first part's tag and image
/// (every part of a DB page is written in one device transaction from one image, tags
/// `t0 + k`).
fn resume_state(
    ctx: &mut RecoverCtx<'_>,
    parts: &BTreeMap<PageNo, Vec<Option<Arc<PageImage>>>>,
) -> Result<()> {
    let mut disk = BTreeMap::new();
    for (page, imgs) in parts {
        let lpn = crate::engine::data_lpn(ctx.layout, *page, 0);
        let (o, t) = ctx
            .device
            .read(lpn, ctx.now)
            .map_err(|e| HostError::Corrupt(format!("reading {lpn}: {e}")))?;
        ctx.now = ctx.now.max(t);
        let (ssd::ReadOutcome::Tag(t0), Some(Some(img))) = (o, imgs.first()) else {
            return Err(HostError::Corrupt(format!(
                "page {} is on the device only in part: a run-on restart of device-tx needs every part of a written page",
                page.0
            )));
        };
        if imgs
            .iter()
            .any(|i| !matches!(i, Some(x) if Arc::ptr_eq(x, img)))
        {
            return Err(HostError::Corrupt(format!(
                "page {}'s parts hold different images: device-tx writes a page's parts in one transaction",
                page.0
            )));
        }
        disk.insert(*page, (t0, img.clone()));
    }
    if ctx.cfg.fault_restart == "uncommitted" {
        // The planted bug (`HostConfig::fault_restart`): each page's newest write of the
        // crashed run, committed or not, handed to the engine as the data area.
        for t in 1..=ctx.tags.len() {
            if let Some(crate::data::TagContent::Data { image, part: 0 }) = ctx.tags.get(t) {
                if image.page.0 < ctx.layout.pages {
                    disk.insert(image.page, (t, image.clone()));
                }
            }
        }
    }
    if let Some(wb) = ctx.write_back.as_mut() {
        wb.disk = disk;
        wb.resume = Some(crate::hooks::Resume::new(Resume));
    }
    Ok(())
}
