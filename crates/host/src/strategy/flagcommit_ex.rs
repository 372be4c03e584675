//! `flagcommit-ex`: the host side of Flag Commit §4 (CFC_ex / AFC_ex) — no-force buffer
//! management with a redo-only log (§4.1), record-level locking with *pending records*
//! that carry ⟨RID, XID, usn⟩ in the page (§4.2, Fig. 10), at most `host.max_c`
//! concurrent updaters per page (Algorithm 1, line 2), fuzzy checkpoints and recovery
//! (§4.3, Algorithm 3), over the plain FTL (`none`).
//!
//! # What this is, and what it is not (read this first)
//!
//! Done: no undo, no CLRs, no BEGIN/END records — an abort only drops the transaction's
//! pending records from memory (Algorithm 2, Abort) and its unwritten log records from the
//! log buffer; a dirty page carrying other transactions' uncommitted pending records may be
//! written at any time (steal) because a pending record is visible after recovery only if
//! its XID committed; commit appends COMMIT and forces the log (Algorithm 2, Commit, lines
//! 1–3); max_c admission per page.
//!
//! NOT done (decided under time pressure, docs/DECISIONS.md "Flag Commit extended"):
//! - the commit flag is not reprogrammed into the flash page (no partial program on the
//!   `none` path), so a transaction whose pending records are all on disk still writes and
//!   forces a COMMIT record (Algorithm 2 line 4's log-free commit is missing), and CFC_ex and
//!   AFC_ex would behave identically: there is no cfc|afc variant setting;
//! - Algorithm 1 lines 8–9 (dropping an evicted page's records from the log buffer): a
//!   COMMIT record shares the log tail with other transactions' forces and could become
//!   durable before the evicted page's write completes; keeping the records makes a durable
//!   COMMIT sufficient on its own;
//! - the Back link and version merging, and the GC reclaim rules of §4.3: every version
//!   this strategy writes carries *all* committed records of its slots (merged in memory at
//!   write time), so the newest surviving version of each part is self-sufficient and older
//!   versions are plain garbage the FTL reclaims; there is nothing to merge;
//! - blocking beyond max_c: a transaction that would be the (max_c+1)-th updater of a page
//!   restarts (counted as `max_c_restarts`) instead of waiting.
//!
//! # On-device layout
//!
//! ```text
//! lpn 0 .. D-1     data: DB page p, part k at lpn p*parts + k     (D = pages*parts)
//! lpn D            master record: checkpoint log page B, committed-XID list L
//! lpn D+1 .. D+L'  redo log, circular: log page s at D+1 + (s mod host.log_pages)
//! ```
//!
//! A data part as it would be laid out (little-endian; the tag model stores the fields):
//!
//! ```text
//! [0..8]      page number          [8..10] part      [10..12] n pending
//! then per slot of the part: the committed value (its record bytes) and its usn, u64
//! then n pending records: RID (slot u16), XID u64, usn u64, the new record bytes
//! ```
//!
//! The `usn` (update sequence number) is a global counter stamped on every update. Record
//! locks are held to the commit's ack, so for one slot the committed writes have increasing
//! usns in commit order: recovery takes, per slot, the committed candidate with the highest
//! usn (a part's committed value, a pending record of a committed XID, a redo record of a
//! committed XID). Redo is therefore idempotent and order-free.
//!
//! A redo record: `[0] kind (1 UPDATE, 2 COMMIT) [1..9] XID [9..17] page [17..19] slot
//! [19..27] usn [27..] after image`, padded to `host.log_record_bytes`. A log page carries
//! its sequence number and whether it is sealed (as in `wal.rs`).
//!
//! # Normal processing
//!
//! - Update: admission (max_c), then the pending record ⟨slot, XID, usn, after⟩ is kept in
//!   the page's metadata and a redo UPDATE appended to the log buffer. A slot's previous
//!   pending record of a *committed* XID is folded into the committed value first.
//! - Write-back (eviction, checkpoint): pending records of XIDs whose commit was acked by the
//!   write's issue instant are folded into the committed values; the others are written as
//!   pending records. Steal is always allowed.
//! - Commit: COMMIT appended, the log forced; the ack is when every log write issued so far
//!   is complete.
//! - Abort: the transaction's pending records are removed from the page metadata and the
//!   buffered (or the host's view of the on-disk) page gets the committed value back; its
//!   records still in the log buffer are removed. Nothing is written.
//! - Fuzzy checkpoint every `host.checkpoint_log_bytes` of log: B = the tail log page;
//!   every dirty page is written; the master ⟨B, L⟩ is written once those writes, every
//!   earlier data write and every log write issued are complete. L lists every committed XID
//!   that may still appear as a pending record in a surviving data version (those still
//!   pending in memory, and those folded by a write not yet complete).
//! - Log space: page s may overwrite page s − host.log_pages only if that page is below the
//!   B of the newest acked master (else the run fails naming host.log_pages).
//!
//! # Recovery (Algorithm 3)
//!
//! Master ⟨B, L⟩ (none: B = 0, L = ∅); scan log pages B, B+1, … while each holds its
//! expected sequence number, stopping after the first unsealed one; committed set
//! C = L ∪ {XID of every COMMIT scanned}; for every slot, the highest-usn candidate among
//! the newest version of its part (committed value; pending records with XID ∈ C) and the
//! scanned UPDATEs with XID ∈ C.
//!
//! # Why it is right, case by case
//!
//! - Acked T: its COMMIT and every log write issued before it are complete, so the scan
//!   (a prefix) reaches COMMIT(T) unless it is below B; T's updates in log pages ≥ B are
//!   redone; those below B were in the pool or on disk at the checkpoint, so they are in
//!   data writes complete before the master. Every later version of that part carries T's
//!   value as committed value, as a pending record of T, or overwritten by a later committed
//!   write with a higher usn. If T's COMMIT is below B, T is in L whenever a surviving
//!   version can hold T's pending record.
//! - Uncommitted or aborted T: no COMMIT(T) is ever written and T ∉ L, so none of its
//!   pending records or UPDATEs is a candidate; committed values are only ever written from
//!   acked commits.
//! - Commit in flight: COMMIT(T) is durable or not; if durable, every earlier log page is
//!   (prefix), so all of T's updates ≥ B are scanned: all of T or nothing.
//! - Torn data part: the part's previous version survives; its slots' later committed
//!   writes are in the log above B (no checkpoint completed since, or the torn write
//!   belonged to that checkpoint, whose master is then not written).
//! - Crash in a checkpoint: the previous master still names its B, whose log is kept until
//!   the new master is acked.

use crate::buffer::Frame;
use crate::data::{PageImage, PageNo, TagContent};
use crate::engine::{data_lpn, data_lpns, Core};
use crate::strategy::{RecoverCtx, RecoveredDb, Strategy, StrategyInfo};
use crate::{HostConfig, HostError, Result};
use sim::{Lpn, SimTime, TxnId};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub static INFO: StrategyInfo = StrategyInfo {
    name: "flagcommit-ex",
    summary: "Flag Commit §4 host side: no-force, redo-only log, pending records, max_c per page (protocol none)",
    lock_level: crate::LockLevel::Record,
    check,
    create,
    recover,
};

fn check(cfg: &HostConfig, p: &'static ssd::ProtocolInfo) -> Result<()> {
    if p.name != "none" {
        return Err(HostError::Config {
            key: "protocol.name".into(),
            reason: format!(
                "flagcommit-ex runs over the plain FTL (protocol none), not {}",
                p.name
            ),
        });
    }
    if cfg.max_c == 0 {
        return Err(HostError::Config {
            key: "host.max_c".into(),
            reason: "must be at least 1".into(),
        });
    }
    Ok(())
}

/// What a `flagcommit-ex` device tag stands for.
#[derive(Clone, Debug)]
pub enum FcTag {
    /// Part `part` of a DB page: (slot, committed value, usn) for the part's slots, and the
    /// pending records (slot, XID, usn, value) of those slots.
    Data {
        page: PageNo,
        part: u32,
        committed: Vec<(u16, u64, u64)>,
        pending: Vec<(u16, TxnId, u64, u64)>,
    },
    Log {
        seq: u64,
        sealed: bool,
        entries: Vec<Redo>,
    },
    Master {
        ckpt_seq: u64,
        committed: Vec<TxnId>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redo {
    Update {
        xid: TxnId,
        page: PageNo,
        slot: u16,
        usn: u64,
        after: u64,
    },
    Commit {
        xid: TxnId,
    },
}

impl Redo {
    fn xid(&self) -> TxnId {
        match self {
            Redo::Update { xid, .. } | Redo::Commit { xid } => *xid,
        }
    }
}

#[derive(Clone, Debug)]
struct Pending {
    slot: u16,
    xid: TxnId,
    usn: u64,
    after: u64,
}

/// Per touched page: committed (value, usn) per slot and the pending records.
struct Meta {
    committed: Vec<(u64, u64)>,
    pending: Vec<Pending>,
}

struct Tx {
    xid: TxnId,
    pages: Vec<PageNo>,
}

pub struct FlagCommitEx {
    page_bytes: u64,
    rec_bytes: u64,
    master: Lpn,
    log_base: u32,
    log_pages: u64,
    seq: u64,
    tail: Vec<Redo>,
    issued_ack: SimTime,
    data_ack: SimTime,
    usn: u64,
    meta: BTreeMap<PageNo, Meta>,
    txs: Vec<Option<Tx>>,
    /// Commit ack per committed XID that may still be pending somewhere.
    acks: BTreeMap<TxnId, SimTime>,
    /// Writes that folded committed XIDs: (write completion, XIDs).
    folded: Vec<(SimTime, Vec<TxnId>)>,
    /// Active updaters per page (max_c admission).
    updaters: BTreeMap<PageNo, Vec<u32>>,
    max_c: usize,
    masters: Vec<(SimTime, u64)>,
    bytes_since_ckpt: u64,
    ckpt_every: u64,
    fault_early_ack: bool,
    fault_empty_list: bool,
    max_c_restarts: u64,
    checkpoints: u64,
}

fn create(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    let page_bytes = u64::from(core.device.core.geo.page_bytes);
    let d = data_lpns(&core.layout);
    let need = d + 1 + u64::from(cfg.log_pages);
    if need > u64::from(core.device.logical_pages()) {
        return Err(HostError::Config {
            key: "host.log_pages".into(),
            reason: format!(
                "data ({d} device pages), the master and {} log pages need {need} device pages; the device has {}",
                cfg.log_pages,
                core.device.logical_pages()
            ),
        });
    }
    if cfg.log_pages < 4 {
        return Err(HostError::Config {
            key: "host.log_pages".into(),
            reason: "at least 4 log pages are needed".into(),
        });
    }
    if u64::from(cfg.log_record_bytes) > page_bytes {
        return Err(HostError::Config {
            key: "host.log_record_bytes".into(),
            reason: format!("larger than a {page_bytes} B log page"),
        });
    }
    Ok(Box::new(FlagCommitEx {
        page_bytes,
        rec_bytes: u64::from(cfg.log_record_bytes),
        master: Lpn(d as u32),
        log_base: d as u32 + 1,
        log_pages: u64::from(cfg.log_pages),
        seq: 0,
        tail: Vec::new(),
        issued_ack: SimTime::ZERO,
        data_ack: SimTime::ZERO,
        usn: 0,
        meta: BTreeMap::new(),
        txs: (0..cfg.clients).map(|_| None).collect(),
        acks: BTreeMap::new(),
        folded: Vec::new(),
        updaters: BTreeMap::new(),
        max_c: cfg.max_c as usize,
        masters: Vec::new(),
        bytes_since_ckpt: 0,
        ckpt_every: cfg.checkpoint_log_bytes,
        fault_early_ack: cfg.fault_early_commit_ack,
        fault_empty_list: cfg.fault_fc_empty_commit_list,
        max_c_restarts: 0,
        checkpoints: 0,
    }))
}

fn log_lpn(base: u32, pages: u64, seq: u64) -> Lpn {
    Lpn(base + (seq % pages) as u32)
}

impl FlagCommitEx {
    fn tx(&mut self, c: u32) -> Result<&mut Tx> {
        self.txs[c as usize]
            .as_mut()
            .ok_or_else(|| HostError::Stuck(format!("internal: client {c} has no transaction")))
    }

    fn write_log_page(&mut self, core: &mut Core, sealed: bool, now: SimTime) -> Result<SimTime> {
        if self.seq >= self.log_pages {
            let acked_b = self
                .masters
                .iter()
                .rev()
                .find(|m| m.0 <= now)
                .map_or(0, |m| m.1);
            if self.seq - self.log_pages >= acked_b {
                return Err(HostError::Config {
                    key: "host.log_pages".into(),
                    reason: format!(
                        "the log area ({} pages) is full: log page {} would overwrite page {}, which restart still needs (acked checkpoint at page {acked_b}); raise host.log_pages or lower host.checkpoint_log_bytes",
                        self.log_pages,
                        self.seq,
                        self.seq - self.log_pages
                    ),
                });
            }
        }
        let (seq, entries) = (self.seq, &self.tail);
        let tag = core.tags.add(|| {
            TagContent::FlagCommit(Arc::new(FcTag::Log {
                seq,
                sealed,
                entries: entries.clone(),
            }))
        });
        let lpn = log_lpn(self.log_base, self.log_pages, self.seq);
        let t = core.write_log_page(lpn, tag, self.seq, now)?;
        self.issued_ack = self.issued_ack.max(t);
        Ok(t)
    }

    fn append(&mut self, core: &mut Core, rec: Redo, now: SimTime) -> Result<()> {
        let per_page = (self.page_bytes / self.rec_bytes).max(1) as usize;
        if self.tail.len() >= per_page {
            self.write_log_page(core, true, now)?;
            self.seq += 1;
            self.tail.clear();
        }
        self.tail.push(rec);
        self.bytes_since_ckpt += self.rec_bytes;
        core.stats.log_bytes += self.rec_bytes;
        Ok(())
    }

    fn force(&mut self, core: &mut Core, now: SimTime) -> Result<SimTime> {
        if !self.tail.is_empty() {
            self.write_log_page(core, false, now)?;
        }
        Ok(self.issued_ack.max(now))
    }

    fn meta_of<'a>(
        meta: &'a mut BTreeMap<PageNo, Meta>,
        core: &Core,
        page: PageNo,
    ) -> &'a mut Meta {
        meta.entry(page).or_insert_with(|| Meta {
            committed: core
                .layout
                .initial_page(page)
                .into_iter()
                .map(|v| (v, 0))
                .collect(),
            pending: Vec::new(),
        })
    }

    /// Writes the page in `frame` (its metadata merged), returns its completion.
    fn write_page(&mut self, core: &mut Core, frame: &Frame, now: SimTime) -> Result<SimTime> {
        let page = frame.page;
        let acks = &self.acks;
        let m = Self::meta_of(&mut self.meta, core, page);
        // Fold pending records of commits acked by now into the committed values.
        let mut folded = Vec::new();
        m.pending.retain(|p| {
            if acks.get(&p.xid).is_some_and(|a| *a <= now) {
                m.committed[p.slot as usize] = (p.after, p.usn);
                folded.push(p.xid);
                false
            } else {
                true
            }
        });
        let slots = core.layout.slots(page);
        let parts = core.layout.parts;
        let mut tags = Vec::with_capacity(parts as usize);
        for k in 0..parts {
            let range = core.layout.part_range(slots, k);
            let committed: Vec<(u16, u64, u64)> = range
                .clone()
                .map(|s| (s as u16, m.committed[s].0, m.committed[s].1))
                .collect();
            let pending: Vec<(u16, TxnId, u64, u64)> = m
                .pending
                .iter()
                .filter(|p| range.contains(&(p.slot as usize)))
                .map(|p| (p.slot, p.xid, p.usn, p.after))
                .collect();
            let t = core.tags.add(|| {
                TagContent::FlagCommit(Arc::new(FcTag::Data {
                    page,
                    part: k,
                    committed,
                    pending,
                }))
            });
            tags.push(t);
        }
        core.trace(
            now,
            workload::txn::TxCmd::Write {
                tx: None,
                lpn: data_lpn(&core.layout, page, 0),
                pages: parts,
            },
        );
        let mut end = now;
        for (k, tag) in tags.iter().enumerate() {
            let lpn = data_lpn(&core.layout, page, k as u32);
            let t = core
                .device
                .write_plain(lpn, *tag, now)
                .map_err(Core::dev_err(now, format!("writing {lpn}")))?;
            end = end.max(t);
        }
        core.stats.page_writes += 1;
        let img = Arc::new(PageImage {
            page,
            lsn: 0,
            values: frame.values.clone(),
        });
        core.disk[page.0 as usize] = Some((tags[0], img));
        self.data_ack = self.data_ack.max(end);
        if !folded.is_empty() {
            self.folded.push((end, folded));
        }
        Ok(end)
    }

    fn checkpoint(&mut self, core: &mut Core, now: SimTime) -> Result<()> {
        self.bytes_since_ckpt = 0;
        self.checkpoints += 1;
        core.stats.checkpoints += 1;
        // Seal the tail so B starts on a fresh page (everything below is in data writes).
        if !self.tail.is_empty() {
            self.write_log_page(core, true, now)?;
            self.seq += 1;
            self.tail.clear();
        }
        let b = self.seq;
        let dirty: Vec<u32> = core
            .pool
            .occupied()
            .filter(|(_, f)| f.dirty)
            .map(|(i, _)| i)
            .collect();
        let mut done = now;
        for f in dirty {
            let fr = core.pool.frame(f).clone();
            done = done.max(self.write_page(core, &fr, now)?);
            core.pool.frame_mut(f).dirty = false;
        }
        done = done.max(self.data_ack).max(self.issued_ack);
        // L: committed XIDs that may still be pending in a surviving version.
        self.folded.retain(|(end, _)| *end > now);
        let mut l: BTreeSet<TxnId> = BTreeSet::new();
        for m in self.meta.values() {
            for p in &m.pending {
                if self.acks.contains_key(&p.xid) {
                    l.insert(p.xid);
                }
            }
        }
        for (_, xs) in &self.folded {
            l.extend(xs.iter().copied());
        }
        // Acks no longer needed: neither pending nor folded by an incomplete write.
        self.acks.retain(|x, _| l.contains(x));
        let committed: Vec<TxnId> = if self.fault_empty_list {
            Vec::new()
        } else {
            l.into_iter().collect()
        };
        let tag = core.tags.add(|| {
            TagContent::FlagCommit(Arc::new(FcTag::Master {
                ckpt_seq: b,
                committed,
            }))
        });
        core.trace(
            done,
            workload::txn::TxCmd::Write {
                tx: None,
                lpn: self.master,
                pages: 1,
            },
        );
        let ack = core
            .device
            .write_plain(self.master, tag, done)
            .map_err(Core::dev_err(done, "writing the master record"))?;
        self.masters.push((ack, b));
        if self.masters.len() > 4 {
            self.masters.remove(0);
        }
        Ok(())
    }

    fn release(&mut self, c: u32) -> Option<Tx> {
        let t = self.txs[c as usize].take()?;
        for p in &t.pages {
            if let Some(v) = self.updaters.get_mut(p) {
                v.retain(|x| *x != c);
                if v.is_empty() {
                    self.updaters.remove(p);
                }
            }
        }
        Some(t)
    }
}

impl Strategy for FlagCommitEx {
    fn name(&self) -> &'static str {
        "flagcommit-ex"
    }

    fn begin(&mut self, _core: &mut Core, c: u32, txn: TxnId, _now: SimTime) -> Result<()> {
        self.txs[c as usize] = Some(Tx {
            xid: txn,
            pages: Vec::new(),
        });
        Ok(())
    }

    fn admit_update(&mut self, c: u32, page: PageNo) -> bool {
        let v = self.updaters.entry(page).or_default();
        if v.contains(&c) {
            return true;
        }
        if v.len() >= self.max_c {
            self.max_c_restarts += 1;
            return false;
        }
        v.push(c);
        if let Some(t) = self.txs[c as usize].as_mut() {
            t.pages.push(page);
        }
        true
    }

    fn on_update(
        &mut self,
        core: &mut Core,
        c: u32,
        frame: u32,
        slot: u16,
        _before: u64,
        after: u64,
        now: SimTime,
    ) -> Result<()> {
        let page = core.pool.frame(frame).page;
        let xid = self.tx(c)?.xid;
        self.usn += 1;
        let usn = self.usn;
        let acks = &self.acks;
        let m = Self::meta_of(&mut self.meta, core, page);
        let mut own = false;
        let mut i = 0;
        while i < m.pending.len() {
            let p = &m.pending[i];
            if p.slot != slot {
                i += 1;
                continue;
            }
            if p.xid == xid {
                m.pending[i].after = after;
                m.pending[i].usn = usn;
                own = true;
                i += 1;
            } else if acks.get(&p.xid).is_some_and(|a| *a <= now) {
                m.committed[slot as usize] = (p.after, p.usn);
                m.pending.remove(i);
            } else {
                return Err(HostError::Stuck(format!(
                    "internal: slot {slot} of page {} has a pending record of unfinished {:?}",
                    page.0, p.xid
                )));
            }
        }
        if !own {
            m.pending.push(Pending {
                slot,
                xid,
                usn,
                after,
            });
        }
        self.append(
            core,
            Redo::Update {
                xid,
                page,
                slot,
                usn,
                after,
            },
            now,
        )
    }

    fn evictable(&self, _frame: &Frame) -> bool {
        true
    }

    fn write_back(&mut self, core: &mut Core, frame: Frame, now: SimTime) -> Result<SimTime> {
        self.write_page(core, &frame, now)
    }

    fn commit(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let xid = self.tx(c)?.xid;
        let wrote = !self.tx(c)?.pages.is_empty();
        let ack = if wrote {
            self.append(core, Redo::Commit { xid }, now)?;
            let a = self.force(core, now)?;
            if self.fault_early_ack {
                now
            } else {
                a
            }
        } else {
            now
        };
        if wrote {
            self.acks.insert(xid, ack);
        }
        self.release(c);
        Ok(ack)
    }

    fn abort(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let Some(t) = self.release(c) else {
            return Ok(now);
        };
        for page in &t.pages {
            let Some(m) = self.meta.get_mut(page) else {
                continue;
            };
            let mine: Vec<u16> = m
                .pending
                .iter()
                .filter(|p| p.xid == t.xid)
                .map(|p| p.slot)
                .collect();
            m.pending.retain(|p| p.xid != t.xid);
            for slot in mine {
                let v = m.committed[slot as usize].0;
                if let Some(f) = core.pool.find(*page) {
                    core.pool.frame_mut(f).values[slot as usize] = v;
                }
                // The host's view of the on-disk version too: a clean frame is dropped
                // without a write, and the next fetch must not see the aborted value (found
                // by the exhaustive crash check of the tiny run: a refetched page carried an
                // aborted update into a later transaction's before image).
                if let Some((tag, img)) = &core.disk[page.0 as usize] {
                    let mut values = img.values.clone();
                    values[slot as usize] = v;
                    let img = Arc::new(PageImage {
                        page: *page,
                        lsn: 0,
                        values,
                    });
                    core.disk[page.0 as usize] = Some((*tag, img));
                }
            }
        }
        self.tail.retain(|r| r.xid() != t.xid);
        Ok(now)
    }

    fn maintain(&mut self, core: &mut Core, now: SimTime) -> Result<()> {
        if self.ckpt_every > 0
            && self.bytes_since_ckpt >= self.ckpt_every
            && self.masters.last().is_none_or(|m| m.0 <= now)
        {
            self.checkpoint(core, now)?;
        }
        Ok(())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("log_pages_used", self.seq + 1),
            ("max_c_restarts", self.max_c_restarts),
            ("fc_checkpoints", self.checkpoints),
        ]
    }
}

/// Algorithm 3 (module docs).
fn recover(ctx: &mut RecoverCtx<'_>) -> Result<RecoveredDb> {
    let start = ctx.now;
    let before = ctx.device.core.nand.counters();
    let d = data_lpns(ctx.layout);
    let master = Lpn(d as u32);
    let base = d as u32 + 1;
    let pages = u64::from(ctx.cfg.log_pages);
    let corrupt = HostError::Corrupt;
    let read = |ctx: &mut RecoverCtx<'_>, lpn: Lpn| -> Result<Option<Arc<FcTag>>> {
        let (o, t) = ctx
            .device
            .read(lpn, ctx.now)
            .map_err(|e| corrupt(format!("reading {lpn}: {e}")))?;
        ctx.now = ctx.now.max(t);
        match o {
            ssd::ReadOutcome::Unmapped => Ok(None),
            ssd::ReadOutcome::Tag(t) => match ctx.tags.get(t) {
                Some(TagContent::FlagCommit(x)) => Ok(Some(x.clone())),
                other => Err(corrupt(format!("{lpn} holds {other:?}"))),
            },
            other => Err(corrupt(format!("{lpn} reads {other:?}"))),
        }
    };
    let (b, mut committed): (u64, BTreeSet<TxnId>) = match read(ctx, master)?.as_deref() {
        None => (0, BTreeSet::new()),
        Some(FcTag::Master {
            ckpt_seq,
            committed,
        }) => (*ckpt_seq, committed.iter().copied().collect()),
        Some(other) => return Err(corrupt(format!("the master holds {other:?}"))),
    };
    let mut redo: Vec<Redo> = Vec::new();
    let mut seq = b;
    loop {
        match read(ctx, log_lpn(base, pages, seq))?.as_deref() {
            Some(FcTag::Log {
                seq: s,
                sealed,
                entries,
            }) if *s == seq => {
                redo.extend(entries.iter().cloned());
                if !sealed {
                    break;
                }
            }
            Some(FcTag::Log { .. }) | None => break,
            Some(other) => return Err(corrupt(format!("log page {seq} holds {other:?}"))),
        }
        seq += 1;
    }
    for r in &redo {
        if let Redo::Commit { xid } = r {
            committed.insert(*xid);
        }
    }
    // Per page: (value, usn) per slot, the highest-usn committed candidate.
    let mut db: BTreeMap<PageNo, Vec<(u64, u64)>> = BTreeMap::new();
    let layout = ctx.layout;
    let take = |db: &mut BTreeMap<PageNo, Vec<(u64, u64)>>,
                p: PageNo,
                slot: u16,
                v: u64,
                usn: u64|
     -> Result<()> {
        if p.0 >= layout.pages {
            return Err(corrupt(format!("a record names page {}", p.0)));
        }
        let e = db
            .entry(p)
            .or_insert_with(|| layout.initial_page(p).into_iter().map(|v| (v, 0)).collect());
        let Some(s) = e.get_mut(slot as usize) else {
            return Err(corrupt(format!("slot {slot} beyond page {}", p.0)));
        };
        if usn >= s.1 {
            *s = (v, usn);
        }
        Ok(())
    };
    for p in 0..layout.pages {
        for k in 0..layout.parts {
            let lpn = data_lpn(layout, PageNo(p), k);
            match read(ctx, lpn)?.as_deref() {
                None => {}
                Some(FcTag::Data {
                    page,
                    part,
                    committed: cv,
                    pending,
                }) if *page == PageNo(p) && *part == k => {
                    for (s, v, u) in cv {
                        take(&mut db, *page, *s, *v, *u)?;
                    }
                    for (s, x, u, v) in pending {
                        if committed.contains(x) {
                            take(&mut db, *page, *s, *v, *u)?;
                        }
                    }
                }
                Some(other) => return Err(corrupt(format!("{lpn} holds {other:?}"))),
            }
        }
    }
    for r in &redo {
        if let Redo::Update {
            xid,
            page,
            slot,
            usn,
            after,
        } = r
        {
            if committed.contains(xid) {
                take(&mut db, *page, *slot, *after, *usn)?;
            }
        }
    }
    let after = ctx.device.core.nand.counters();
    Ok(RecoveredDb {
        pages: db
            .into_iter()
            .map(|(p, v)| (p, v.into_iter().map(|x| x.0).collect()))
            .collect(),
        pages_read: after.reads - before.reads,
        time_ns: ctx.now.since(start),
    })
}
