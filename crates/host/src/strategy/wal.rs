//! `wal`: ARIES-style physiological write-ahead logging over the plain FTL (`none`) — the
//! WAL baseline of Flag Commit §5.3 (Mohan et al., ARIES).
//!
//! # On-device layout
//!
//! ```text
//! lpn 0 .. D-1          data area: DB page p, part k at lpn p*parts + k   (D = pages*parts)
//! lpn D                 master record: the last complete checkpoint
//! lpn D+1 .. D+L        the log, circular: log page s at lpn D+1 + (s mod L)   (L = host.log_pages)
//! ```
//!
//! With `host.log_device = "separate"` the master record and the log are on a device of
//! their own, at the same offsets from its lpn 0 (master at lpn 0, log page s at
//! lpn 1 + (s mod L)), and the data device holds the data area alone (and, under `ipl`'s
//! `separate` layout, IPL's log regions right after it: they are the database's pages, not
//! the WAL's). Both devices are on the engine's clock and in one power domain (the crash
//! checker cuts both at the same instant); every rule below holds unchanged, because
//! every ordering it relies on is between *completions* (a page write issued at the
//! force's ack, a master issued after its page writes and force completed), never
//! between positions in one device's queue.
//!
//! A log page is one device page (`B` = the flash page size). LSN = `s * B + offset`:
//! records never straddle pages (a record that does not fit seals the page and starts the
//! next), so the LSN names the page and the position. Every record takes
//! `host.log_record_bytes` (50 B, Flag Commit Table 2) on the device, the checkpoint-end
//! record 16 B more per active transaction. A record as it would be laid out byte by byte
//! (little-endian; the tag model stores its fields, not the bytes):
//!
//! ```text
//! [0]       kind: 1 BEGIN 2 UPDATE 3 CLR 4 COMMIT 5 ABORT 6 END 7 CKPT-BEGIN 8 CKPT-END
//! [1..9]    txn id, u64
//! [9..17]   prevLSN (this transaction's previous record; all ones = none), u64
//! UPDATE:   [17..25] page, u64   [25..27] slot, u16   [27..35] before, u64   [35..43] after, u64
//! CLR:      [17..25] page        [25..27] slot        [27..35] after         [35..43] undoNextLSN
//! CKPT-END: [17..25] its CKPT-BEGIN LSN, [25..27] n, then n × (txn u64, lastLSN u64)
//! padding to log_record_bytes
//! ```
//!
//! A log page carries its sequence number `s` and whether it is *sealed* (complete: the
//! next record went to page s+1). The tail page is rewritten in place (same lpn) as it
//! grows; `none` makes each page write atomic, so a page reads as one of its written
//! versions, each a prefix of the final one.
//!
//! Values are *record images* (value logging): UPDATE carries the slot's whole before and
//! after value (a record value is a 64-bit digest in the data model, `data.rs`), so redo
//! and undo are idempotent and a DB page torn across its device pages is repaired part by
//! part (see "Recovery").
//!
//! # Normal processing
//!
//! - BEGIN at the start of every attempt; UPDATE after every record change; the frame's
//!   page LSN becomes the record's LSN, its recLSN is set when it goes from clean to dirty.
//! - Log buffer: records are appended to the tail page in memory; a sealed page is written
//!   at once (the log buffer holds the tail page); forces write the tail page as it is.
//! - Commit: COMMIT, then force the log up to it; the ack is when every log write issued so
//!   far is complete (group commit falls out: one force covers every earlier record). With
//!   `host.force` the transaction's dirty pages are then written too. END follows.
//! - WAL rule on steal: a dirty page is written only after the log up to its page LSN is
//!   durable: the page write is issued at the force's ack. With `host.steal = false` a page
//!   holding an uncommitted change is not evicted.
//! - Rollback (ARIES): ABORT, then the transaction's updates are undone newest first, each
//!   by fetching its page (possibly a miss; log pages no longer in memory are read back),
//!   restoring the before value and appending a CLR whose undoNext is the undone record's
//!   prevLSN; then END. No force.
//! - Fuzzy checkpoint every `host.checkpoint_log_bytes` of log (§4.3's three steps, done at
//!   one instant): CKPT-BEGIN; every dirty page is written (after one log force, WAL rule),
//!   except under no-steal those holding uncommitted changes; CKPT-END with the active
//!   transactions; force; when the page writes and the force are complete, the master
//!   record is written with the checkpoint's LSN and its redo LSN (the CKPT-BEGIN LSN, or an
//!   older recLSN of a page the checkpoint could not write). The master write also waits
//!   for every data page write issued before it (an evicted page is clean in the pool while
//!   its write may still be in flight). A checkpoint starts only when
//!   the previous master write is acked.
//! - Log space: page s may overwrite page s−L only if that page is older than everything
//!   restart may read: the redo LSN of the newest *acked* master and the first record of
//!   every active transaction. Otherwise the run fails naming `host.log_pages`.
//!
//! # Recovery (restart from the surviving image)
//!
//! 1. The device recovers (`none`: newest persisted version of each lpn).
//! 2. Master: checkpoint LSN C and redo LSN R (none: C = R = 0).
//! 3. Read log pages from page(min(C, R)) on while each holds the expected sequence number,
//!    stopping after the first page that is not sealed.
//! 4. Analysis from C: transaction table from BEGIN/UPDATE/CLR/ABORT, CKPT-END's list;
//!    COMMIT and END remove. What remains are losers.
//! 5. Redo from R: each UPDATE/CLR is applied to its slot if its LSN is above the page LSN
//!    of the device page (part) holding that slot.
//! 6. Undo: losers are rolled back newest LSN first, following prevLSN (undoNext through
//!    CLRs), reading older log pages as needed.
//!
//! # Why it is right, case by case
//!
//! - Acked commit: its COMMIT record is on a page whose write (and every earlier log write)
//!   completed before the ack, so the log up to COMMIT is durable; its updates are either in
//!   data pages or redone from the log (R is at or before every update not yet on a data
//!   page: the checkpoint wrote every page dirtied before CKPT-BEGIN and the master is
//!   written after those writes completed), so it is a winner with all its updates.
//! - Uncommitted or aborted transaction at the crash: without a durable COMMIT it is a
//!   loser (or ended: fully compensated by CLRs, which redo replays); undo restores every
//!   before value it wrote, including those stolen to data pages (their log records are
//!   durable first, by the WAL rule).
//! - Commit in flight: either the page with COMMIT persisted (a winner; every earlier page
//!   is sealed and durable or the scan stops before it — prefix rule below) or not (a loser).
//! - Log prefix: the scan stops at the first missing page or after the first unsealed page,
//!   so a hole (a page write lost while a later one persisted) hides everything after it;
//!   nothing acked is hidden because an ack waits for every log write issued before it.
//! - Torn DB page: each device page of a DB page carries the image (and its page LSN) it was
//!   written from; a crash may leave parts from two images. Each part is a consistent
//!   snapshot of its slots at its LSN, and every change after that LSN is in the redo range,
//!   so redo per part repairs it.
//! - Crash in a checkpoint: the master still names the previous checkpoint, whose log is
//!   kept until the new master is acked.
//!
//! # Run-on restart (write-back)
//!
//! By default restart writes nothing: it returns the recovered database (the crash
//! checker's single and double modes, `recover --host`, the recovery measured at the end of
//! a run). With `RecoverCtx::write_back` (the checker's run-on mode, `check::check_run_on`)
//! it finishes as ARIES's restart does (Mohan et al. 1992, §6: a CLR for every update the
//! undo pass undoes, an END for every loser, a checkpoint at the end of restart), so the
//! engine can start on the recovered medium and crash again (`restart_write_back`):
//!
//! 1. Log pages beyond the end — a page whose sequence number is above the scan's last page
//!    (the crashed run wrote it after a page that did not persist) — are overwritten with a
//!    void page (sequence number `u64::MAX`, which no scan expects), and the restart's own
//!    log writes wait for those writes. Otherwise, once the restart's records seal the tail
//!    page, a later scan would run on into the crashed run's lost records (a COMMIT of a
//!    transaction this restart undid, UPDATEs redone over the recovered pages).
//! 2. The CLRs (prevLSN: the loser's last record; undoNext: the undone update's prevLSN) and
//!    ENDs, in undo order, are appended at the log's tail: into the scan's last page when it
//!    was not sealed (rewritten in place as it grows, as the run's tail page is), else into
//!    a new page at the first missing sequence number. A page is written only where it may
//!    overwrite page s−L: older than the old master's scan start and than every record the
//!    undo read (a crash before the new master is durable restarts from the old one).
//! 3. The end-of-restart checkpoint, with the run's steps: CKPT-BEGIN; a force (the WAL rule:
//!    the CLRs are durable before any page they describe); every page the restart read or
//!    changed written back whole, its page LSN the CKPT-BEGIN LSN (the checkpoint record has
//!    no dirty page table, so redo from CKPT-BEGIN needs every recovered page on the medium);
//!    CKPT-END with no active transaction; a force; the master (checkpoint and redo LSN:
//!    CKPT-BEGIN) once the page writes and the forces are complete.
//! 4. The engine resumes (`engine::Engine::resume`, `Resume`) with the log tail after the
//!    restart's records (every one issued), the restart's master as the only acked one, and
//!    the written pages as the data area's images.
//!
//! Case by case, a crash during the write-back: before the CLRs are durable, the medium is
//! the first crash's plus void pages beyond the end (which no scan reads) — restart again
//! from the old master; after the CLRs, before the master, the old master's scan reads the
//! CLRs and ENDs (losers are closed; redo replays the CLRs; a page written back carries
//! every change up to CKPT-BEGIN, so redo skips them there); after the master, restart
//! begins at the end-of-restart checkpoint.
//!
//! With `ipa` and `ipa-block` (In-Place Appends §3) the write-back is the same: every page
//! is written out of place, a fresh physical page whose delta area is empty (the records
//! the crashed run appended are folded into the image and stay behind on the old copy,
//! which the FTL invalidates), so the engine resumes with no record on any page
//! (`update::ipa::Ipa::resumed`) and its next append to a page goes to slot 0 of that
//! fresh page, after the write-back's program. A page the restart did not write back would
//! keep its crashed run's records in slots the engine counts as empty: the next append
//! would program over them (the planted `fault_restart = "ipa-stale-area"`).
//!
//! With the log on a device of its own (`host.log_device = "separate"`) the void pages,
//! the CLRs, ENDs, checkpoint records and the master go to the log device and the pages to
//! the data device; every order above is between completions, which hold across devices
//! as they do on one.
//!
//! With `ipl`'s `in-block` layout (In-Page Logging, Lee & Moon §4.3) the pages live in
//! host-managed erase units whose log regions hold the crashed run's sectors, so the
//! checkpoint's page writes are merges (`update::ipl::restart_merge`): every unit that holds
//! a block or a recovered page is programmed into a fresh block of a generation above every
//! block the device kept for it — the recovered pages with the CKPT-BEGIN LSN, the unit's
//! other pages as loaded — and its older blocks are erased once those programs are
//! complete. The engine resumes with every unit's block the restart's and its log region
//! empty (`update::ipl::Ipl::resumed`). A crash before a unit's fresh block is complete
//! finds the block the first restart chose intact (its erase waits); after, the fresh
//! block's generation wins over the others, erased or not. With the `separate` layout the
//! pages go through the FTL as out-of-place ones do; the units' log pages keep the crashed
//! run's sectors, whose images are older than the checkpoint's LSN (the highest-LSN rule of
//! IPL's restart never prefers them), and the engine's next sector of a unit programs its
//! first log page afresh.

use crate::buffer::Frame;
use crate::data::{PageImage, PageNo, TagContent};
use crate::engine::{data_lpns, fetch, Core, Fetch};
use crate::hooks::{RecoverCtx, RecoveredDb, Strategy, StrategyInfo};
use crate::lock::FixedHash;
use crate::strategy::pages::read_data_pages;
use crate::{HostConfig, HostError, Result};
use sim::{Lpn, SimTime, TxnId};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub static INFO: StrategyInfo = StrategyInfo {
    name: "wal",
    summary: "ARIES-style undo/redo write-ahead logging over the plain FTL (protocol none)",
    lock_level: crate::LockLevel::Record,
    check,
    create,
    recover,
};

fn check(_cfg: &HostConfig, p: &'static ssd::ProtocolInfo) -> Result<()> {
    if p.name != "none" {
        return Err(HostError::Config {
            key: "protocol.name".into(),
            reason: format!(
                "wal runs over the plain FTL (protocol none), not {} (use host.strategy = \"device-tx\" for it)",
                p.name
            ),
        });
    }
    Ok(())
}

/// A log record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogRec {
    Begin {
        txn: TxnId,
    },
    Update {
        txn: TxnId,
        prev: Option<u64>,
        page: PageNo,
        slot: u16,
        before: u64,
        after: u64,
    },
    Clr {
        txn: TxnId,
        prev: Option<u64>,
        page: PageNo,
        slot: u16,
        after: u64,
        undo_next: Option<u64>,
    },
    Commit {
        txn: TxnId,
        prev: Option<u64>,
    },
    Abort {
        txn: TxnId,
        prev: Option<u64>,
    },
    End {
        txn: TxnId,
        prev: Option<u64>,
    },
    CkptBegin,
    CkptEnd {
        begin: u64,
        att: Vec<(TxnId, u64)>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    pub lsn: u64,
    pub rec: LogRec,
}

/// A log page as written (one version of it).
#[derive(Clone, Debug)]
pub struct LogPageImage {
    pub seq: u64,
    pub sealed: bool,
    pub entries: Vec<LogEntry>,
}

impl crate::data::StrategyTag for LogPageImage {
    fn max_txn(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| match &e.rec {
                LogRec::Begin { txn }
                | LogRec::Update { txn, .. }
                | LogRec::Clr { txn, .. }
                | LogRec::Commit { txn, .. }
                | LogRec::Abort { txn, .. }
                | LogRec::End { txn, .. } => txn.0,
                LogRec::CkptBegin | LogRec::CkptEnd { .. } => 0,
            })
            .max()
            .unwrap_or(0)
    }
}

/// (lsn, page, slot, before, prev) of an update.
type UndoRec = (u64, PageNo, u16, u64, Option<u64>);

struct Tx {
    txn: TxnId,
    first: u64,
    last: u64,
    /// Its updates, oldest first.
    undo: Vec<UndoRec>,
    pages: Vec<PageNo>,
}

pub struct Wal {
    page_bytes: u64,
    rec_bytes: u64,
    master: Lpn,
    log_base: u32,
    log_pages: u64,
    /// The tail page: its sequence number, fill and records.
    seq: u64,
    off: u64,
    tail: Vec<LogEntry>,
    /// Everything below this LSN has had its log write issued.
    issued_upto: u64,
    /// The latest completion of any log write issued.
    issued_ack: SimTime,
    txs: Vec<Option<Tx>>,
    /// Per client: the `undo` and `pages` vectors of its last transaction, emptied, for the
    /// next one (two to four allocations per transaction saved).
    spare: Vec<(Vec<UndoRec>, Vec<PageNo>)>,
    /// No-steal: active transactions holding uncommitted changes per page (not kept under
    /// steal, where nothing reads it).
    uncommitted: HashMap<PageNo, u32, FixedHash>,
    steal: bool,
    force_at_commit: bool,
    skip_commit_force: bool,
    /// The latest completion of any data page write issued.
    data_ack: SimTime,
    /// Rollback steps done through a private frame (no buffer frame was free).
    private_undos: u64,
    /// Masters written: (ack, redo LSN).
    masters: Vec<(SimTime, u64)>,
    bytes_since_ckpt: u64,
    ckpt_every: u64,
    /// The `ipa` update strategy (None: out-of-place).
    ipa: Option<crate::update::ipa::Ipa>,
    /// The `ipl` update strategy.
    ipl: Option<crate::update::ipl::Ipl>,
    /// The value the last `on_update` replaced (the engine calls `on_op` right after it;
    /// `update::net::changed_ranges` needs it).
    last_before: u64,
}

/// The state a run-on restart leaves (`restart_write_back`): the log tail positioned after
/// the restart's records, its master record, the completions the next writes wait for.
#[derive(Debug)]
pub struct Resume {
    seq: u64,
    off: u64,
    tail: Vec<LogEntry>,
    issued_ack: SimTime,
    data_ack: SimTime,
    /// The restart's master: (ack, redo LSN).
    master: (SimTime, u64),
    /// `ipl`: the erase units as the restart left them (`update::ipl::restart_merge`).
    ipl: Option<crate::update::ipl::Resume>,
}

/// Where the master record and the log start: after the data area (shared device), or at
/// lpn 0 of the log device (module docs).
fn log_position(cfg: &HostConfig, layout: &crate::data::Layout) -> (Lpn, u32) {
    if cfg.separate_log() {
        (Lpn(0), 1)
    } else {
        let d = data_lpns(layout) as u32;
        (Lpn(d), d + 1)
    }
}

/// The first data-device lpn past what `wal` lays out there (`update::ipl`, which IPL's log
/// regions start at and which sits below `wal`).
pub use crate::update::ipl::data_device_end;

fn create(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    // Every mutable frame access below and in the engine goes through `Core::frame_mut`.
    core.lazy_disk = true;
    let page_bytes = u64::from(core.device.core.geo.page_bytes);
    let d = data_lpns(&core.layout);
    let need = data_device_end(cfg, &core.layout);
    let (master, log_base) = log_position(cfg, &core.layout);
    let log_need = u64::from(log_base) + u64::from(cfg.log_pages);
    if log_need > u64::from(core.log_dev().logical_pages()) {
        return Err(HostError::Config {
            key: "host.log_pages".into(),
            reason: if cfg.separate_log() {
                format!(
                    "the master record and {} log pages need {log_need} pages of the log device; it has {}",
                    cfg.log_pages,
                    core.log_dev().logical_pages()
                )
            } else {
                format!(
                    "data ({d} device pages), the master record and {} log pages need {log_need} device pages; the device has {}",
                    cfg.log_pages,
                    core.device.logical_pages()
                )
            },
        });
    }
    if core.log_device.is_some()
        && core.log_dev().core.geo.page_bytes != core.device.core.geo.page_bytes
    {
        return Err(HostError::Config {
            key: "host.log_device".into(),
            reason: "the log device's pages must be the data device's size (an LSN names a log page by the flash page size)".into(),
        });
    }
    if cfg.log_pages < 4 {
        return Err(HostError::Config {
            key: "host.log_pages".into(),
            reason: "at least 4 log pages are needed".into(),
        });
    }
    let rec = u64::from(cfg.log_record_bytes);
    if rec + 16 * u64::from(cfg.clients) > page_bytes {
        return Err(HostError::Config {
            key: "host.log_record_bytes".into(),
            reason: format!(
                "a checkpoint record for {} clients ({} B) does not fit a {page_bytes} B log page",
                cfg.clients,
                rec + 16 * u64::from(cfg.clients)
            ),
        });
    }
    let mut wal = Box::new(Wal {
        page_bytes,
        rec_bytes: rec,
        master,
        log_base,
        log_pages: u64::from(cfg.log_pages),
        seq: 0,
        off: 0,
        tail: Vec::new(),
        issued_upto: 0,
        issued_ack: SimTime::ZERO,
        txs: (0..cfg.clients).map(|_| None).collect(),
        spare: (0..cfg.clients).map(|_| Default::default()).collect(),
        uncommitted: HashMap::default(),
        steal: cfg.steal,
        force_at_commit: cfg.force,
        skip_commit_force: cfg.fault_early_commit_ack,
        data_ack: SimTime::ZERO,
        private_undos: 0,
        masters: Vec::new(),
        bytes_since_ckpt: 0,
        ckpt_every: cfg.checkpoint_log_bytes,
        ipa: if matches!(cfg.update.as_str(), "ipa" | "ipa-block") {
            let nc = core.device.core.nand.image().params();
            crate::update::ipa::check(
                cfg,
                nc.geometry.page_bytes,
                nc.append_bytes,
                core.device.appends_supported(),
            )?;
            Some(crate::update::ipa::Ipa::new(cfg, core.layout.pages))
        } else {
            None
        },
        ipl: if cfg.update == "ipl" {
            Some(crate::update::ipl::Ipl::new(cfg, core, need)?)
        } else {
            None
        },
        last_before: 0,
    });
    if let Some(Ok(r)) = core.resume.take().map(crate::hooks::Resume::take::<Resume>) {
        // The engine starts on a medium whose restart wrote back (`restart_write_back`):
        // the log continues at the restart's tail, every record of it already issued.
        wal.seq = r.seq;
        if cfg.fault_restart != "no-tail" {
            wal.off = r.off;
            wal.tail = r.tail;
        }
        wal.issued_upto = wal.end_lsn();
        wal.issued_ack = r.issued_ack;
        wal.data_ack = r.data_ack;
        wal.masters = vec![r.master];
        if let Some(ipa) = wal.ipa.as_mut() {
            // Every page the restart wrote back is a fresh physical page with an empty
            // delta area (`Ipa::new`: no records), written by `data_ack`.
            ipa.resumed(r.data_ack);
        }
        if let (Some(ipl), Some(x)) = (wal.ipl.as_mut(), r.ipl) {
            // Every erase unit the restart merged starts with an empty log region.
            ipl.resumed(x);
        }
    }
    Ok(wal)
}

fn log_lpn(base: u32, pages: u64, seq: u64) -> Lpn {
    Lpn(base + (seq % pages) as u32)
}

impl Wal {
    fn end_lsn(&self) -> u64 {
        self.seq * self.page_bytes + self.off
    }

    /// The oldest log page restart may still read.
    fn needed_seq(&self, now: SimTime) -> u64 {
        let mut lsn = self
            .masters
            .iter()
            .rev()
            .find(|m| m.0 <= now)
            .map_or(0, |m| m.1);
        #[cfg(feature = "mutants")]
        if ssd::mutant::on("wal-wrap-over-active") {
            return lsn / self.page_bytes;
        }
        for t in self.txs.iter().flatten() {
            lsn = lsn.min(t.first);
        }
        lsn / self.page_bytes
    }

    fn write_log_page(&mut self, core: &mut Core, sealed: bool, now: SimTime) -> Result<SimTime> {
        if self.seq < self.log_pages || self.seq - self.log_pages < self.needed_seq(now) {
            // fine: the page overwritten is older than anything restart reads
        } else {
            return Err(HostError::Config {
                key: "host.log_pages".into(),
                reason: format!(
                    "the log area ({} pages) is full: log page {} would overwrite page {}, which restart still needs (acked masters' redo LSNs {:?}, oldest active transaction's first LSN {:?}); raise host.log_pages or lower host.checkpoint_log_bytes",
                    self.log_pages,
                    self.seq,
                    self.seq - self.log_pages,
                    self.masters.iter().filter(|m| m.0 <= now).map(|m| m.1).collect::<Vec<_>>(),
                    self.txs.iter().flatten().map(|t| t.first).min()
                ),
            });
        }
        let (seq, entries) = (self.seq, &self.tail);
        let tag = core.tags.add(|| {
            TagContent::Strategy(Arc::new(LogPageImage {
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

    fn append(&mut self, core: &mut Core, rec: LogRec, now: SimTime) -> Result<u64> {
        let size = match &rec {
            LogRec::CkptEnd { att, .. } => self.rec_bytes + 16 * att.len() as u64,
            _ => self.rec_bytes,
        };
        if self.off + size > self.page_bytes {
            self.write_log_page(core, true, now)?;
            self.seq += 1;
            self.off = 0;
            self.tail.clear();
            self.issued_upto = self.end_lsn();
        }
        let lsn = self.end_lsn();
        self.tail.push(LogEntry { lsn, rec });
        self.off += size;
        core.stats.log_bytes += size;
        core.stats.log_records += 1;
        self.bytes_since_ckpt += size;
        Ok(lsn)
    }

    /// Makes the log durable up to and including the record at `lsn`; returns when.
    fn force(&mut self, core: &mut Core, lsn: u64, now: SimTime) -> Result<SimTime> {
        if lsn >= self.issued_upto {
            core.stats.log_forces += 1;
            self.write_log_page(core, false, now)?;
            self.issued_upto = self.end_lsn();
        }
        Ok(self.issued_ack.max(now))
    }

    fn tx(&mut self, c: u32) -> Result<&mut Tx> {
        self.txs[c as usize]
            .as_mut()
            .ok_or_else(|| HostError::Stuck(format!("internal: client {c} has no transaction")))
    }

    /// Writes `fr` (a copy, or a frame leaving the pool: its values move into the image).
    fn write_page(&mut self, core: &mut Core, fr: Frame, now: SimTime) -> Result<SimTime> {
        let at = self.force(core, fr.lsn, now)?;
        // The page's previous image, when no one else holds it (its values were usually
        // taken by the frame: `Core::frame_mut`), becomes the new one: no allocation, and
        // the replaced entry frees nothing.
        let img = match &mut core.disk[fr.page.0 as usize] {
            Some((_, old)) if Arc::strong_count(old) == 1 && Arc::weak_count(old) == 0 => {
                let o = Arc::get_mut(old).expect("the only reference");
                o.lsn = fr.lsn;
                o.values = fr.values;
                old.clone()
            }
            _ => Arc::new(PageImage {
                page: fr.page,
                lsn: fr.lsn,
                values: fr.values,
            }),
        };
        if let Some(ipa) = self.ipa.as_mut() {
            if let Some(end) = ipa.try_append(core, &img, at)? {
                self.data_ack = self.data_ack.max(end);
                return Ok(end);
            }
        }
        if let Some(ipl) = self.ipl.as_mut() {
            if let Some(end) = ipl.write_back(core, &img, at)? {
                self.data_ack = self.data_ack.max(end);
                return Ok(end);
            }
        }
        let (t0, end) =
            core.write_image(&img, None, at, |d, lpn, tag| d.write_plain(lpn, tag, at))?;
        core.disk[fr.page.0 as usize] = Some((t0, img));
        if let Some(ipa) = self.ipa.as_mut() {
            ipa.written(fr.page, end);
        }
        self.data_ack = self.data_ack.max(end);
        Ok(end)
    }

    fn finish_tx(&mut self, c: u32) {
        let Some(mut tx) = self.txs[c as usize].take() else {
            return;
        };
        if !self.steal {
            for p in &tx.pages {
                if let Some(n) = self.uncommitted.get_mut(p) {
                    *n -= 1;
                    if *n == 0 {
                        self.uncommitted.remove(p);
                    }
                }
            }
        }
        tx.undo.clear();
        tx.pages.clear();
        self.spare[c as usize] = (tx.undo, tx.pages);
    }

    /// Writes dirty frame `f` and leaves it clean in the pool: its values move into the
    /// written image and the frame refers to it (`buffer::Unbuilt::Disk`), so a checkpoint
    /// or a commit-time force copies no page.
    fn write_frame_in_place(&mut self, core: &mut Core, f: u32, now: SimTime) -> Result<SimTime> {
        let fr = if core.lazy_disk {
            let (page, lsn) = {
                let fr = core.pool.frame(f);
                (fr.page, fr.lsn)
            };
            Frame::new(page, core.pool.unbuild_to_disk(f), lsn, now)
        } else {
            core.pool.frame(f).clone()
        };
        let t = self.write_page(core, fr, now)?;
        if !core.lazy_disk {
            let fm = core.pool.frame_mut(f);
            fm.dirty = false;
            fm.rec_lsn = 0;
        }
        Ok(t)
    }

    fn checkpoint(&mut self, core: &mut Core, now: SimTime) -> Result<()> {
        core.stats.checkpoints += 1;
        self.bytes_since_ckpt = 0;
        let begin = self.append(core, LogRec::CkptBegin, now)?;
        let mut redo = begin;
        let dirty: Vec<u32> = core
            .pool
            .occupied()
            .filter(|(_, f)| f.dirty)
            .map(|(i, _)| i)
            .collect();
        let mut done = now;
        for f in dirty {
            let fr = core.pool.frame(f);
            if !self.steal && self.uncommitted.contains_key(&fr.page) {
                redo = redo.min(fr.rec_lsn);
                continue;
            }
            done = done.max(self.write_frame_in_place(core, f, now)?);
        }
        let att: Vec<(TxnId, u64)> = self.txs.iter().flatten().map(|t| (t.txn, t.last)).collect();
        let end = self.append(core, LogRec::CkptEnd { begin, att }, now)?;
        done = done.max(self.force(core, end, now)?);
        // Pages written back before the checkpoint (evictions) are clean in the pool but
        // may still be in flight: the master waits for them too.
        done = done.max(self.data_ack);
        let tag = core.tags.add(|| TagContent::Master {
            ckpt_lsn: begin,
            redo_lsn: redo,
        });
        let ack = core.write_master(self.master, tag, done)?;
        self.masters.push((ack, redo));
        if self.masters.len() > 4 {
            self.masters.remove(0);
        }
        Ok(())
    }
}

impl Strategy for Wal {
    fn name(&self) -> &'static str {
        "wal"
    }

    fn begin(&mut self, core: &mut Core, c: u32, txn: TxnId, now: SimTime) -> Result<()> {
        let lsn = self.append(core, LogRec::Begin { txn }, now)?;
        let (undo, pages) = std::mem::take(&mut self.spare[c as usize]);
        self.txs[c as usize] = Some(Tx {
            txn,
            first: lsn,
            last: lsn,
            undo,
            pages,
        });
        Ok(())
    }

    fn on_update(
        &mut self,
        core: &mut Core,
        c: u32,
        frame: u32,
        slot: u16,
        before: u64,
        after: u64,
        now: SimTime,
    ) -> Result<()> {
        self.last_before = before;
        let page = core.pool.frame(frame).page;
        let (txn, prev) = {
            let t = self.tx(c)?;
            (t.txn, t.last)
        };
        let lsn = self.append(
            core,
            LogRec::Update {
                txn,
                prev: Some(prev),
                page,
                slot,
                before,
                after,
            },
            now,
        )?;
        let fr = core.frame_mut(frame);
        fr.lsn = lsn;
        if fr.rec_lsn == 0 {
            fr.rec_lsn = lsn.max(1);
        }
        let steal = self.steal;
        let t = self.tx(c)?;
        t.last = lsn;
        t.undo.push((lsn, page, slot, before, Some(prev)));
        if !t.pages.contains(&page) {
            t.pages.push(page);
            if !steal {
                *self.uncommitted.entry(page).or_insert(0) += 1;
            }
        }
        Ok(())
    }

    fn read_page(&mut self, core: &mut Core, page: PageNo, now: SimTime) -> Result<SimTime> {
        match self.ipl.as_mut() {
            // In-Page Logging's in-block layout keeps DB pages in host-managed blocks.
            Some(ipl) if ipl.is_in_block() => ipl.read_page(core, page, now),
            _ => core.read_page(page, now),
        }
    }

    fn evictable(&self, frame: &Frame) -> bool {
        self.steal || !self.uncommitted.contains_key(&frame.page)
    }

    fn write_back(&mut self, core: &mut Core, frame: Frame, now: SimTime) -> Result<SimTime> {
        self.write_page(core, frame, now)
    }

    fn commit(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let (txn, prev) = {
            let t = self.tx(c)?;
            (t.txn, t.last)
        };
        let lsn = self.append(
            core,
            LogRec::Commit {
                txn,
                prev: Some(prev),
            },
            now,
        )?;
        let mut ack = if self.skip_commit_force {
            now
        } else {
            self.force(core, lsn, now)?
        };
        if self.force_at_commit {
            let pages = self.tx(c)?.pages.clone();
            let at = ack;
            for p in pages {
                if let Some(f) = core.pool.find(p) {
                    if core.pool.frame(f).dirty {
                        ack = ack.max(self.write_frame_in_place(core, f, at)?);
                    }
                }
            }
        }
        self.append(
            core,
            LogRec::End {
                txn,
                prev: Some(lsn),
            },
            now,
        )?;
        self.finish_tx(c);
        Ok(ack)
    }

    fn abort(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let (txn, prev) = {
            let t = self.tx(c)?;
            (t.txn, t.last)
        };
        let mut last = self.append(
            core,
            LogRec::Abort {
                txn,
                prev: Some(prev),
            },
            now,
        )?;
        let mut undo = std::mem::take(&mut self.tx(c)?.undo);
        let mut done = now;
        // Undo records whose log pages have left the log buffer are read back, one read
        // per page.
        let tail_start = self.seq * self.page_bytes;
        let mut read_seqs: Vec<u64> = undo
            .iter()
            .filter(|u| u.0 < tail_start)
            .map(|u| u.0 / self.page_bytes)
            .collect();
        read_seqs.dedup();
        for s in read_seqs {
            let lpn = log_lpn(self.log_base, self.log_pages, s);
            core.trace(now, workload::txn::TxCmd::Read { lpn, pages: 1 });
            let (_, t) = core
                .log_dev()
                .read(lpn, now)
                .map_err(Core::dev_err(now, format!("reading log page {s}")))?;
            core.stats.log_page_reads += 1;
            done = done.max(t);
        }
        for &(_, page, slot, before, uprev) in undo.iter().rev() {
            let f = match fetch(core, self, c, page, now, true)? {
                Fetch::Ready(f, t) => {
                    done = done.max(t);
                    Some(f)
                }
                // Every frame is waiting for its read: undo through a private frame, written
                // back at once (after its CLR is durable, by the WAL rule).
                Fetch::NoRoom => None,
            };
            let clr = self.append(
                core,
                LogRec::Clr {
                    txn,
                    prev: Some(last),
                    page,
                    slot,
                    after: before,
                    undo_next: uprev,
                },
                now,
            )?;
            last = clr;
            if let Some(ipa) = self.ipa.as_mut() {
                ipa.on_undo(core, page, slot);
            }
            if let Some(ipl) = self.ipl.as_mut() {
                ipl.on_undo(core, page, slot);
            }
            core.net.on_undo(&core.layout, page, slot);
            match f {
                Some(f) => {
                    let fr = core.frame_mut(f);
                    fr.values[slot as usize] = before;
                    fr.lsn = clr;
                    fr.dirty = true;
                    if fr.rec_lsn == 0 {
                        fr.rec_lsn = clr.max(1);
                    }
                }
                None => {
                    self.private_undos += 1;
                    let (mut values, _) = core.disk_image(page);
                    let t = self.read_page(core, page, now)?;
                    values[slot as usize] = before;
                    let fr = Frame::new(page, values, clr, t);
                    done = done.max(self.write_page(core, fr, t)?);
                }
            }
        }
        undo.clear();
        self.tx(c)?.undo = undo;
        self.append(
            core,
            LogRec::End {
                txn,
                prev: Some(last),
            },
            now,
        )?;
        self.finish_tx(c);
        Ok(done)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("log_pages_used", self.seq + 1),
            ("private_undos", self.private_undos),
        ];
        if let Some(ipa) = &self.ipa {
            v.extend(ipa.counters());
        }
        if let Some(ipl) = &self.ipl {
            v.extend(ipl.counters());
        }
        v
    }

    fn on_op(&mut self, core: &Core, page: PageNo, op: &workload::db::RecOp) {
        if let Some(ipa) = self.ipa.as_mut() {
            ipa.on_op(core, page, op, self.last_before);
        }
        if let Some(ipl) = self.ipl.as_mut() {
            ipl.on_op(core, page, op, self.last_before);
        }
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
}

/// Restart: analysis, redo, undo from the master record and the log (module docs).
fn recover(ctx: &mut RecoverCtx<'_>) -> Result<RecoveredDb> {
    let start = ctx.now;
    let before = ctx.device.core.nand.counters();
    let log_before = ctx.log_device.as_ref().map(|l| l.core.nand.counters());
    let page_bytes = u64::from(ctx.device.core.geo.page_bytes);
    let (master, base) = log_position(ctx.cfg, ctx.layout);
    let pages = u64::from(ctx.cfg.log_pages);
    let corrupt = |s: String| HostError::Corrupt(s);
    // Reads of the master record and the log: on the log's device.
    let read = |ctx: &mut RecoverCtx<'_>, lpn: Lpn| -> Result<ssd::ReadOutcome> {
        let now = ctx.now;
        let (o, t) = ctx
            .log_dev()
            .read(lpn, now)
            .map_err(|e| corrupt(format!("reading {lpn}: {e}")))?;
        ctx.now = ctx.now.max(t);
        Ok(o)
    };
    let (ckpt, redo) = match read(ctx, master)? {
        ssd::ReadOutcome::Unmapped => (0, 0),
        ssd::ReadOutcome::Tag(t) => match ctx.tags.get(t) {
            Some(TagContent::Master { ckpt_lsn, redo_lsn }) => (*ckpt_lsn, *redo_lsn),
            other => return Err(corrupt(format!("the master record holds {other:?}"))),
        },
        other => return Err(corrupt(format!("the master record reads {other:?}"))),
    };
    // Log pages by sequence number, read on demand.
    let mut log: BTreeMap<u64, Arc<LogPageImage>> = BTreeMap::new();
    let mut read_log = |ctx: &mut RecoverCtx<'_>, seq: u64| -> Result<Option<Arc<LogPageImage>>> {
        if let Some(p) = log.get(&seq) {
            return Ok(Some(p.clone()));
        }
        let lpn = log_lpn(base, pages, seq);
        match read(ctx, lpn)? {
            ssd::ReadOutcome::Tag(t) => match ctx.tags.get(t) {
                Some(c) => match c.strategy_arc::<LogPageImage>() {
                    Some(p) if p.seq == seq => {
                        log.insert(seq, p.clone());
                        Ok(Some(p))
                    }
                    Some(_) => Ok(None),
                    None => Err(corrupt(format!("log {lpn} holds {:?}", Some(c)))),
                },
                other => Err(corrupt(format!("log {lpn} holds {other:?}"))),
            },
            ssd::ReadOutcome::Unmapped => Ok(None),
            other => Err(corrupt(format!("log {lpn} reads {other:?}"))),
        }
    };
    // The forward scan.
    let mut entries: Vec<LogEntry> = Vec::new();
    let first = ckpt.min(redo) / page_bytes;
    let mut seq = first;
    // The last page read when it is not sealed: the log's tail page (run-on restarts
    // continue it).
    let mut tail_page: Option<Arc<LogPageImage>> = None;
    loop {
        let Some(p) = read_log(ctx, seq)? else {
            if seq == first && (ckpt, redo) != (0, 0) {
                return Err(corrupt(format!(
                    "log page {seq}, where the master's checkpoint is, is missing"
                )));
            }
            break;
        };
        entries.extend(p.entries.iter().cloned());
        if !p.sealed {
            tail_page = Some(p);
            break;
        }
        seq += 1;
    }
    // Analysis.
    let mut att: BTreeMap<TxnId, Option<u64>> = BTreeMap::new(); // txn -> next LSN to undo
                                                                 // txn -> its last record's LSN (the prevLSN of the CLRs a run-on restart writes).
    let mut last: BTreeMap<TxnId, u64> = BTreeMap::new();
    for e in entries.iter().filter(|e| e.lsn >= ckpt) {
        match &e.rec {
            LogRec::Begin { txn }
            | LogRec::Update { txn, .. }
            | LogRec::Clr { txn, .. }
            | LogRec::Commit { txn, .. }
            | LogRec::Abort { txn, .. }
            | LogRec::End { txn, .. } => {
                last.insert(*txn, e.lsn);
            }
            LogRec::CkptEnd { att: list, .. } => {
                for (t, l) in list {
                    last.entry(*t).or_insert(*l);
                }
            }
            LogRec::CkptBegin => {}
        }
        match &e.rec {
            LogRec::Begin { txn } => {
                att.insert(*txn, None);
            }
            #[cfg(feature = "mutants")]
            LogRec::Abort { txn, .. } if ssd::mutant::on("aries-abort-closes") => {
                att.remove(txn);
            }
            LogRec::Update { txn, .. } | LogRec::Abort { txn, .. } => {
                att.insert(*txn, Some(e.lsn));
            }
            LogRec::Clr { txn, undo_next, .. } => {
                att.insert(*txn, *undo_next);
            }
            LogRec::Commit { txn, .. } | LogRec::End { txn, .. } => {
                att.remove(txn);
            }
            LogRec::CkptBegin => {}
            LogRec::CkptEnd { att: list, .. } => {
                for (t, last) in list {
                    att.entry(*t).or_insert(Some(*last));
                }
            }
        }
    }
    // Redo.
    let on_disk = read_data_pages(ctx)?;
    let mut db: BTreeMap<PageNo, (Vec<u64>, Vec<u64>)> = BTreeMap::new(); // values, lsn per slot
    let layout = ctx.layout;
    let page_state = |p: PageNo, db: &mut BTreeMap<PageNo, (Vec<u64>, Vec<u64>)>| -> Result<()> {
        if db.contains_key(&p) {
            return Ok(());
        }
        if p.0 >= layout.pages {
            return Err(corrupt(format!(
                "a log record names page {}, beyond the database",
                p.0
            )));
        }
        let slots = layout.slots(p);
        let mut values = layout.initial_page(p);
        let mut lsns = vec![0u64; slots as usize];
        if let Some(imgs) = on_disk.get(&p) {
            for (k, img) in imgs.iter().enumerate() {
                if let Some(img) = img {
                    for s in layout.part_range(slots, k as u32) {
                        values[s] = img.values[s];
                        lsns[s] = img.lsn;
                    }
                }
            }
        }
        db.insert(p, (values, lsns));
        Ok(())
    };
    for p in on_disk.keys() {
        page_state(*p, &mut db)?;
    }
    let slot_check = |slot: u16, v: &Vec<u64>| -> Result<()> {
        if slot as usize >= v.len() {
            return Err(corrupt(format!(
                "a log record names slot {slot} beyond its page"
            )));
        }
        Ok(())
    };
    for e in entries.iter().filter(|e| e.lsn >= redo) {
        let (page, slot, after) = match &e.rec {
            LogRec::Update {
                page, slot, after, ..
            }
            | LogRec::Clr {
                page, slot, after, ..
            } => (*page, *slot, *after),
            _ => continue,
        };
        page_state(page, &mut db)?;
        let (values, lsns) = db.get_mut(&page).expect("page state just made");
        slot_check(slot, values)?;
        if e.lsn > lsns[slot as usize] {
            values[slot as usize] = after;
        }
    }
    // Undo, newest LSN first across all losers.
    let find = |ctx: &mut RecoverCtx<'_>,
                read_log: &mut dyn FnMut(
        &mut RecoverCtx<'_>,
        u64,
    ) -> Result<Option<Arc<LogPageImage>>>,
                lsn: u64|
     -> Result<LogRec> {
        let Some(p) = read_log(ctx, lsn / page_bytes)? else {
            return Err(corrupt(format!(
                "log record {lsn} needed for undo is missing"
            )));
        };
        p.entries
            .iter()
            .find(|e| e.lsn == lsn)
            .map(|e| e.rec.clone())
            .ok_or_else(|| {
                corrupt(format!(
                    "log page {} holds no record {lsn}",
                    lsn / page_bytes
                ))
            })
    };
    let mut todo: Vec<Option<u64>> = att.values().copied().collect();
    let losers: Vec<TxnId> = att.keys().copied().collect();
    // What a run-on restart logs for the undo, in undo order (ARIES §6.3: a CLR per undone
    // update, an END when a loser is fully undone).
    let mut comp: Vec<Comp> = losers
        .iter()
        .zip(&todo)
        .filter(|(_, l)| l.is_none())
        .map(|(t, _)| Comp::End(*t))
        .collect();
    // The oldest record undo read: a run-on restart's log must not overwrite it before its
    // new master is durable.
    let mut undo_min = u64::MAX;
    loop {
        let Some((i, lsn)) = todo
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.map(|l| (i, l)))
            .max_by_key(|x| x.1)
        else {
            break;
        };
        let rec = find(ctx, &mut read_log, lsn)?;
        undo_min = undo_min.min(lsn);
        todo[i] = match rec {
            LogRec::Update {
                prev,
                page,
                slot,
                before,
                ..
            } => {
                page_state(page, &mut db)?;
                let (values, _) = db.get_mut(&page).expect("page state just made");
                slot_check(slot, values)?;
                values[slot as usize] = before;
                comp.push(Comp::Clr {
                    txn: losers[i],
                    page,
                    slot,
                    after: before,
                    undo_next: prev,
                });
                prev
            }
            LogRec::Clr { undo_next, .. } => undo_next,
            LogRec::Abort { prev, .. } => prev,
            LogRec::Begin { .. } => None,
            other => return Err(corrupt(format!("undo reached {other:?} at {lsn}"))),
        };
        if todo[i].is_none() {
            comp.push(Comp::End(losers[i]));
        }
    }
    if ctx.write_back.is_some() {
        let values: BTreeMap<PageNo, Vec<u64>> =
            db.iter().map(|(p, (v, _))| (*p, v.clone())).collect();
        let keep_from = first.min(undo_min / page_bytes);
        // The planted bug (`HostConfig::fault_restart = "ipa-stale-area"`): pages whose
        // recovered values are those the medium already shows (body and delta records)
        // are not written back, though the engine resumes as if they were.
        let stale: Vec<PageNo> = if ctx.cfg.fault_restart == "ipa-stale-area" {
            on_disk
                .iter()
                .filter(|(p, imgs)| {
                    matches!(imgs.first(), Some(Some(img)) if values.get(*p) == Some(&img.values))
                })
                .map(|(p, _)| *p)
                .collect()
        } else {
            Vec::new()
        };
        restart_write_back(
            ctx, seq, tail_page, keep_from, &comp, &last, &values, &stale,
        )?;
    }
    if ctx.cfg.fault_recovery_reuses_log {
        // The planted bug (`HostConfig::fault_recovery_reuses_log`): the scan's first log
        // page overwritten with the next one's contents before any redone page is durable.
        if let ssd::ReadOutcome::Tag(t) = read(ctx, log_lpn(base, pages, first + 1))? {
            let now = ctx.now;
            ctx.log_dev()
                .write_plain(log_lpn(base, pages, first), t, now)
                .map_err(|e| corrupt(format!("the planted log overwrite: {e}")))?;
        }
    }
    let after = ctx.device.core.nand.counters();
    let log_reads = match (ctx.log_device.as_ref(), log_before) {
        (Some(l), Some(b)) => l.core.nand.counters().reads - b.reads,
        _ => 0,
    };
    Ok(RecoveredDb {
        pages: db.into_iter().map(|(p, (v, _))| (p, v)).collect(),
        pages_read: after.reads - before.reads + log_reads,
        time_ns: ctx.now.since(start),
    })
}

/// A record a run-on restart writes for its undo (`restart_write_back`).
enum Comp {
    Clr {
        txn: TxnId,
        page: PageNo,
        slot: u16,
        after: u64,
        undo_next: Option<u64>,
    },
    End(TxnId),
}

/// The sequence number of a void log page: a run-on restart writes one over every page
/// beyond the log's end (`restart_write_back`); no scan expects it.
const VOID_SEQ: u64 = u64::MAX;

/// The end of a run-on restart (module docs, "Run-on restart"; ARIES §6): the log beyond
/// its end voided, the undo's CLRs and ENDs appended at the log's tail, every recovered page
/// written back under a checkpoint, and a new master. Leaves the engine's state in
/// `ctx.write_back` (`Resume`).
#[allow(clippy::too_many_arguments)]
fn restart_write_back(
    ctx: &mut RecoverCtx<'_>,
    tail_seq: u64,
    tail_page: Option<Arc<LogPageImage>>,
    keep_from: u64,
    comp: &[Comp],
    last: &BTreeMap<TxnId, u64>,
    db: &BTreeMap<PageNo, Vec<u64>>,
    stale: &[PageNo],
) -> Result<()> {
    let Some(wb) = ctx.write_back.take() else {
        return Ok(());
    };
    let out = write_back_into(
        ctx, wb, tail_seq, tail_page, keep_from, comp, last, db, stale,
    );
    ctx.write_back = Some(wb);
    out
}

/// The log tail a run-on restart appends to.
struct RestartTail {
    seq: u64,
    off: u64,
    entries: Vec<LogEntry>,
    issued_ack: SimTime,
}

#[allow(clippy::too_many_arguments)]
fn write_back_into(
    ctx: &mut RecoverCtx<'_>,
    wb: &mut crate::hooks::WriteBack,
    tail_seq: u64,
    tail_page: Option<Arc<LogPageImage>>,
    keep_from: u64,
    comp: &[Comp],
    last: &BTreeMap<TxnId, u64>,
    db: &BTreeMap<PageNo, Vec<u64>>,
    stale: &[PageNo],
) -> Result<()> {
    let cfg = ctx.cfg;
    let page_bytes = u64::from(ctx.device.core.geo.page_bytes);
    let rec_bytes = u64::from(cfg.log_record_bytes);
    let (master, base) = log_position(cfg, ctx.layout);
    let pages = u64::from(cfg.log_pages);
    let dev_err = |what: String| move |e: ssd::SsdError| HostError::Corrupt(format!("{what}: {e}"));
    // 1. Pages beyond the log's end (written by the crashed run after a page that did not
    //    persist) are voided before any page of the restart's log is written: a later scan
    //    that reads the restart's pages must stop at the end of what is written after them,
    //    not run on into the crashed run's lost records.
    let mut void_done = ctx.now;
    for s in tail_seq + 1..tail_seq + pages {
        let lpn = log_lpn(base, pages, s);
        let at = ctx.now;
        let (o, t) = ctx
            .log_dev()
            .read(lpn, at)
            .map_err(dev_err(format!("reading {lpn}")))?;
        ctx.now = ctx.now.max(t);
        let stale = match o {
            ssd::ReadOutcome::Tag(tag) => matches!(
                ctx.tags.get(tag),
                Some(c) if c.strategy::<LogPageImage>().is_some_and(|p| p.seq > tail_seq && p.seq != VOID_SEQ)
            ),
            _ => false,
        };
        if stale && ctx.cfg.fault_restart != "no-void" {
            let void = wb.tags.add(|| {
                TagContent::Strategy(Arc::new(LogPageImage {
                    seq: VOID_SEQ,
                    sealed: false,
                    entries: Vec::new(),
                }))
            });
            let at = ctx.now;
            let t = ctx
                .log_dev()
                .write_plain(lpn, void, at)
                .map_err(dev_err(format!("voiding {lpn}")))?;
            void_done = void_done.max(t);
            wb.voided += 1;
        }
    }
    let at = void_done.max(ctx.now);
    // 2. The restart's records at the tail: the scan's last page when it was not sealed, or
    //    a new page where the scan found none.
    let size = |r: &LogRec| match r {
        LogRec::CkptEnd { att, .. } => rec_bytes + 16 * att.len() as u64,
        _ => rec_bytes,
    };
    let mut tail = match tail_page {
        Some(p) => RestartTail {
            seq: tail_seq,
            off: p.entries.iter().map(|e| size(&e.rec)).sum(),
            entries: p.entries.clone(),
            issued_ack: at,
        },
        None => RestartTail {
            seq: tail_seq,
            off: 0,
            entries: Vec::new(),
            issued_ack: at,
        },
    };
    let write = |ctx: &mut RecoverCtx<'_>,
                 wb: &mut crate::hooks::WriteBack,
                 tail: &mut RestartTail,
                 sealed: bool,
                 at: SimTime|
     -> Result<()> {
        if tail.seq >= pages && tail.seq - pages >= keep_from {
            return Err(HostError::Config {
                key: "host.log_pages".into(),
                reason: format!(
                    "restart's log page {} would overwrite page {}, which a restart still needs until the new master is durable; raise host.log_pages",
                    tail.seq,
                    tail.seq - pages
                ),
            });
        }
        let (seq, entries) = (tail.seq, tail.entries.clone());
        let tag = wb.tags.add(|| {
            TagContent::Strategy(Arc::new(LogPageImage {
                seq,
                sealed,
                entries,
            }))
        });
        let lpn = log_lpn(base, pages, seq);
        let t = ctx
            .log_dev()
            .write_plain(lpn, tag, at)
            .map_err(dev_err(format!("writing log page {seq}")))?;
        tail.issued_ack = tail.issued_ack.max(t);
        Ok(())
    };
    let append = |ctx: &mut RecoverCtx<'_>,
                  wb: &mut crate::hooks::WriteBack,
                  tail: &mut RestartTail,
                  rec: LogRec|
     -> Result<u64> {
        let n = size(&rec);
        if tail.off + n > page_bytes {
            write(ctx, wb, tail, true, at)?;
            tail.seq += 1;
            tail.off = 0;
            tail.entries.clear();
        }
        let lsn = tail.seq * page_bytes + tail.off;
        tail.entries.push(LogEntry { lsn, rec });
        tail.off += n;
        Ok(lsn)
    };
    let mut last = last.clone();
    for c in comp {
        let rec = match c {
            Comp::Clr {
                txn,
                page,
                slot,
                after,
                undo_next,
            } => LogRec::Clr {
                txn: *txn,
                prev: last.get(txn).copied(),
                page: *page,
                slot: *slot,
                after: *after,
                undo_next: *undo_next,
            },
            Comp::End(txn) => LogRec::End {
                txn: *txn,
                prev: last.get(txn).copied(),
            },
        };
        let txn = match &rec {
            LogRec::Clr { txn, .. } | LogRec::End { txn, .. } => *txn,
            _ => unreachable!("only CLRs and ENDs are built above"),
        };
        let lsn = append(ctx, wb, &mut tail, rec)?;
        last.insert(txn, lsn);
    }
    // 3. The end-of-restart checkpoint (§4.3's steps, as a run's): CKPT-BEGIN; every page
    //    the restart read or changed written back after the log up to it is durable (the
    //    WAL rule: the CLRs first); CKPT-END with no active transaction; force; the master
    //    once the page writes and the force are complete.
    let begin = append(ctx, wb, &mut tail, LogRec::CkptBegin)?;
    write(ctx, wb, &mut tail, false, at)?;
    let forced = tail.issued_ack;
    let mut data_ack = forced;
    let layout = ctx.layout;
    let mut ipl = None;
    if cfg.update == "ipl" && cfg.ipl.layout == "in-block" {
        // In-Page Logging's erase units: every unit merged into a fresh block holding the
        // recovered pages, its log region empty (`update::ipl::restart_merge`).
        let imgs: BTreeMap<PageNo, Arc<PageImage>> = db
            .iter()
            .map(|(p, values)| {
                let img = Arc::new(PageImage {
                    page: *p,
                    lsn: begin,
                    values: values.clone(),
                });
                (*p, img)
            })
            .collect();
        let (end, r) =
            crate::update::ipl::restart_merge(ctx, &mut wb.tags, &imgs, &mut wb.disk, forced)?;
        data_ack = data_ack.max(end);
        ipl = Some(r);
    }
    for (p, values) in db.iter().filter(|_| ipl.is_none()) {
        let img = Arc::new(crate::data::PageImage {
            page: *p,
            lsn: begin,
            values: values.clone(),
        });
        let mut first_tag = 0;
        if stale.contains(p) {
            // The planted bug above: the page's physical copy, delta records and all, stays.
            first_tag = wb.tags.add(|| TagContent::Data {
                image: img.clone(),
                part: 0,
            });
            wb.disk.insert(*p, (first_tag, img));
            continue;
        }
        for k in 0..layout.parts {
            let tag = wb.tags.add(|| TagContent::Data {
                image: img.clone(),
                part: k,
            });
            if k == 0 {
                first_tag = tag;
            }
            let lpn = crate::engine::data_lpn(layout, *p, k);
            let t = ctx
                .device
                .write_plain(lpn, tag, forced)
                .map_err(dev_err(format!("writing back page {} at {lpn}", p.0)))?;
            data_ack = data_ack.max(t);
        }
        wb.disk.insert(*p, (first_tag, img));
    }
    if cfg.update == "ipl" && ipl.is_none() {
        // `separate`: the pages went through the FTL above; the units' log pages keep the
        // crashed run's sectors, whose images are older than the checkpoint's.
        ipl = Some(crate::update::ipl::Resume::separate(data_ack));
    }
    append(
        ctx,
        wb,
        &mut tail,
        LogRec::CkptEnd {
            begin,
            att: Vec::new(),
        },
    )?;
    write(ctx, wb, &mut tail, false, forced)?;
    let done = data_ack.max(tail.issued_ack);
    let tag = wb.tags.add(|| TagContent::Master {
        ckpt_lsn: begin,
        redo_lsn: begin,
    });
    let master_ack = if ctx.cfg.fault_restart == "no-master" {
        // The planted bug (`HostConfig::fault_restart`): no master written, the engine told
        // there is one.
        done
    } else {
        ctx.log_dev()
            .write_plain(master, tag, done)
            .map_err(dev_err("writing the master record".into()))?
    };
    ctx.now = ctx.now.max(master_ack);
    wb.resume = Some(crate::hooks::Resume::new(Resume {
        seq: tail.seq,
        off: tail.off,
        tail: tail.entries,
        issued_ack: tail.issued_ack,
        data_ack,
        master: (master_ack, begin),
        ipl,
    }));
    Ok(())
}
