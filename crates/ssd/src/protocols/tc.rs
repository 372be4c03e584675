//! `tc`: traditional commit (TxFlash §3.1) as TxFlash's simulator implements it (§4.1
//! "Traditional Commit in TxFlash Simulator").
//!
//! Each page a transaction writes is an *intention record* naming its logical page, its
//! transaction and its version. A transaction of two or more pages commits by writing one
//! *commit record* page once every intention is durable, and is acked when the commit record
//! is durable. A single-page transaction (every plain write, and a transaction that writes
//! one page) is flagged as such in its OOB and needs no commit record (§4.1: "tuned ... to be
//! efficient for single-page transactional write"). Since a transaction's size is not known
//! until its COMMIT, its first write is held in a buffer until its second write (programmed
//! as a multi-page intention) or its COMMIT (programmed flagged, as a single-page one).
//!
//! OOB layout of an intention (17 bytes: the kind byte and the 16 bytes of Table 1):
//!
//! ```text
//! [0]       page kind: 0x01 DATA
//! [1..8]    lpn, 56-bit LE        } the 8-byte "logical page number" of Table 1; its
//! [8]       0x00: single-page,    } high byte carries the single-page bit of §4.1
//!           0xFF: multi-page intention
//! [9..13]   transaction id, u32 LE (single-page: its commit sequence number)
//! [13..17]  version, u32 LE: per logical page, increasing in write order
//! ```
//!
//! A commit record is a page of kind RECORD (counted in `commit_record_writes`), written in
//! its own stream (`Stream::PROTO0`). Its data is a small payload naming the transaction
//! (`b"TCR1"`, txid u32, commit sequence u32, intention count u32, all LE); its OOB repeats
//! what recovery needs, so a scan through summary pages never reads the record itself:
//!
//! ```text
//! [0]       page kind: 0x05 RECORD
//! [1..5]    transaction id, u32 LE
//! [5..9]    commit sequence number, u32 LE
//! [9..17]   0xFF
//! ```
//!
//! Order of versions. The newest version of a page is the one of the transaction whose COMMIT
//! was issued last (the order the oracle and the host see). Transaction ids and commit
//! sequence numbers come from one device-wide counter: a multi-page transaction takes an id at
//! its second write and a commit sequence number when its COMMIT is issued (stored in its
//! commit record); a single-page one takes one number when its COMMIT (or the plain write) is
//! issued, used as both. A committed version is ordered by (commit sequence, version): the
//! version only breaks ties inside one transaction that wrote a page twice. Because of this,
//! TC supports every isolation level, serializable included: concurrent transactions may
//! write the same page, and the last to commit wins.
//!
//! Commit records are pinned until every intention of their transaction is obsolete, i.e. no
//! logical page maps to one of them any more ("a commit record can be released only after all
//! the intention records of the corresponding transaction are made obsolete by later
//! transactions", §3.1); a record is then unpinned with `durable_at` = the latest ack among
//! the commits that superseded its intentions, so it outlives every crash image in which one
//! of its intentions is still the newest committed version. `live_record_pages` counts them.
//! Intentions of active transactions are pinned; committed ones are mapped at the commit ack;
//! aborted ones are unpinned and left for GC (Table 1: "Leave").
//!
//! Recovery ("recovery in traditional commit scans through the stable storage and finds the
//! most recent version with a commit record for each page", §4.1): scan every block (summary
//! pages where present); the commit records found give each committed transaction's commit
//! sequence number; a flagged intention is committed with its own number; any other intention
//! without a record is uncommitted and ignored. Each page maps to its committed intention with
//! the highest (commit sequence, version). Records still naming a mapped intention are pinned
//! again; the counter resumes above every id and sequence number found.
//!
//! Why it is atomic and durable, case by case:
//! - Crash before COMMIT, or during it before the record is durable: no record (a torn one
//!   reads uncorrectable), so no intention of the transaction is committed; the held first
//!   write was never programmed.
//! - Commit record durable: it was issued only after every intention was durable, so all of
//!   them are on flash (or their GC copies, which are durable before the original is erased);
//!   all visible. The ack is the record's durability.
//! - Single-page transaction: its one flagged page is the commit; torn → invisible.
//! - Superseded versions: an older intention's block is not erased before the newer commit is
//!   durable (`map(.., durable_at = ack)`), and its record is not erased before then either,
//!   so the older version stays provably committed in every image where it is the newest one.
//! - Obsolete intentions whose records are gone look uncommitted, which is harmless: a newer
//!   committed version of their page exists and is mapped (hence kept, with its record).
//! - GC duplicates of intentions and records carry identical OOB.
//!
//! Decisions and limits:
//! - Ordering by commit sequence number rather than by version is ours: the paper's recovery
//!   "finds the most recent version with a commit record"; with concurrent (serializable)
//!   transactions the most recent *write* is not the most recent *commit*.
//! - Holding the first write is ours (the simulator knew transaction sizes up front through
//!   `WriteAtomic`); it costs nothing when the second write arrives at once.
//! - Commit records occupy pages outside the exported logical capacity (the space overhead of
//!   Table 2). A workload that writes small transactions scattered over the whole logical
//!   space keeps most records alive and can exhaust the over-provisioned space; the device
//!   then reports `OutOfSpace` rather than losing anything.
//! - TRIM is refused, like every atomic protocol here.

use crate::commit::{CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo, TxRef};
use crate::core::{blank_oob, FtlCore, ReadOutcome, Stream, PIN_PROTO};
use crate::error::{Result, SsdError};
use crate::gc::FtlHooks;
use crate::oob::{get_u32, get_u64, kind, put_u32, put_u64, Writer};
use crate::recovery::RecoveryCtx;
use media::{Content, Ppa};
use sim::{Lpn, SimTime};
use std::collections::BTreeMap;

const NAME: &str = "tc";

pub static INFO: ProtocolInfo = ProtocolInfo {
    name: NAME,
    summary: "traditional commit (TxFlash 3.1): intention records plus one commit record per multi-page transaction",
    oob_bytes: 17,
    atomic: true,
    needs_checkpoints: false,
    supports_checkpoints: false,
    isolation: &Isolation::ALL,
    supports_trim: false,
    create,
    recover,
};

const OFF_LPN: usize = 1;
const OFF_FLAGS: usize = 8;
const OFF_TXID: usize = 9;
const OFF_VER: usize = 13;
const LPN_MASK: u64 = (1 << 56) - 1;
const FLAG_SINGLE: u8 = 0x00;
const FLAG_MULTI: u8 = 0xFF;
const REC_OFF_TXID: usize = 1;
const REC_OFF_CSN: usize = 5;
/// `cur[lpn]` when the mapped version needs no commit record.
const NO_RECORD: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Intention {
    lpn: u32,
    ppa: Ppa,
    end: SimTime,
}

#[derive(Clone, Debug, Default)]
struct ActiveTx {
    /// Assigned at the second write (a multi-page transaction).
    id: Option<u32>,
    /// The first write, held until we know whether the transaction has more.
    held: Option<(u32, u64, SimTime)>,
    written: Vec<Intention>,
}

#[derive(Clone, Copy, Debug)]
struct Record {
    ppa: Ppa,
    /// Logical pages whose mapped version is an intention of this transaction.
    live: u32,
    /// Latest ack among the commits that superseded its intentions.
    obsolete_at: SimTime,
}

#[derive(Clone)]
pub struct TcFtl {
    /// The next transaction id / commit sequence number.
    next_id: u32,
    /// Per logical page, the last version used.
    ver: Vec<u32>,
    /// Per logical page, the transaction whose commit record proves the mapped version.
    cur: Vec<u32>,
    records: BTreeMap<u32, Record>,
    record_at: BTreeMap<Ppa, u32>,
    active: BTreeMap<u32, ActiveTx>,
    /// Pinned intention → (transaction, index in `written`).
    pinned: BTreeMap<Ppa, (u32, usize)>,
}

fn create(_: &ProtocolConfig, core: &mut FtlCore) -> Result<Box<dyn CommitProtocol>> {
    let lp = core.logical_pages() as usize;
    Ok(Box::new(TcFtl {
        next_id: 1,
        ver: vec![0; lp],
        cur: vec![NO_RECORD; lp],
        records: BTreeMap::new(),
        record_at: BTreeMap::new(),
        active: BTreeMap::new(),
        pinned: BTreeMap::new(),
    }))
}

fn intention_oob(core: &FtlCore, lpn: u32, single: bool, id: u32, ver: u32) -> crate::core::OobBuf {
    let mut oob = blank_oob(core, kind::DATA);
    put_u64(&mut oob, OFF_LPN, u64::from(lpn));
    oob[OFF_FLAGS] = if single { FLAG_SINGLE } else { FLAG_MULTI };
    put_u32(&mut oob, OFF_TXID, id);
    put_u32(&mut oob, OFF_VER, ver);
    oob
}

impl TcFtl {
    fn take_id(&mut self) -> Result<u32> {
        let id = self.next_id;
        if id == u32::MAX {
            return Err(SsdError::Unsupported {
                protocol: NAME,
                what: "run more than 2^32 - 2 transactions (the 4-byte transaction id of Table 1 is exhausted)".into(),
            });
        }
        self.next_id += 1;
        Ok(id)
    }

    fn bump(&mut self, lpn: u32) -> u32 {
        let v = &mut self.ver[lpn as usize];
        *v = v.wrapping_add(1);
        *v
    }

    /// Programs one intention record (multi-page, pinned) of transaction `seq`.
    fn program_intention(
        &mut self,
        core: &mut FtlCore,
        seq: u32,
        id: u32,
        lpn: u32,
        tag: u64,
        ready: SimTime,
    ) -> Result<()> {
        let ver = self.bump(lpn);
        let oob = intention_oob(core, lpn, false, id, ver);
        let (ppa, t) = core.program(Stream::HOST, None, Content::Tag(tag), &oob, ready)?;
        core.pin(ppa);
        let tx = self.active.entry(seq).or_default();
        self.pinned.insert(ppa, (seq, tx.written.len()));
        tx.written.push(Intention {
            lpn,
            ppa,
            end: t.end,
        });
        Ok(())
    }

    /// Programs a single-page transaction (flagged, its own commit); returns where and when
    /// it is durable.
    fn program_single(
        &mut self,
        core: &mut FtlCore,
        lpn: u32,
        tag: u64,
        ready: SimTime,
    ) -> Result<(Ppa, SimTime)> {
        let csn = self.take_id()?;
        let ver = self.bump(lpn);
        let oob = intention_oob(core, lpn, true, csn, ver);
        let (ppa, t) = core.program(Stream::HOST, None, Content::Tag(tag), &oob, ready)?;
        Ok((ppa, t.end))
    }

    /// Maps `lpn` to a newly committed version proven by `record` (or by itself), durable
    /// at `ack`; the record proving the version it replaces loses one live page.
    fn install(&mut self, core: &mut FtlCore, lpn: u32, ppa: Ppa, record: u32, ack: SimTime) {
        core.map(Lpn(lpn), ppa, ack);
        let old = std::mem::replace(&mut self.cur[lpn as usize], record);
        if old == NO_RECORD {
            return;
        }
        let Some(r) = self.records.get_mut(&old) else {
            return;
        };
        r.live -= 1;
        r.obsolete_at = r.obsolete_at.max(ack);
        if r.live == 0 {
            let (ppa, at) = (r.ppa, r.obsolete_at);
            self.records.remove(&old);
            self.record_at.remove(&ppa);
            core.unpin(ppa, at);
        }
    }
}

impl FtlHooks for TcFtl {
    fn on_moved(&mut self, _core: &mut FtlCore, from: Ppa, to: Ppa) {
        if let Some((seq, idx)) = self.pinned.remove(&from) {
            if let Some(i) = self
                .active
                .get_mut(&seq)
                .and_then(|t| t.written.get_mut(idx))
            {
                i.ppa = to;
            }
            self.pinned.insert(to, (seq, idx));
        } else if let Some(id) = self.record_at.remove(&from) {
            if let Some(r) = self.records.get_mut(&id) {
                r.ppa = to;
            }
            self.record_at.insert(to, id);
        }
    }
}

impl CommitProtocol for TcFtl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn write(
        &mut self,
        core: &mut FtlCore,
        tx: TxRef,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        core.check_lpn(lpn)?;
        let accepted = core.host_transfer_done(now);
        let t = self.active.entry(tx.seq).or_default();
        if t.held.is_none() && t.written.is_empty() {
            t.held = Some((lpn.0, tag, accepted));
            return Ok(accepted);
        }
        let held = t.held.take();
        let id = match t.id {
            Some(id) => id,
            None => {
                let id = self.take_id()?;
                if let Some(t) = self.active.get_mut(&tx.seq) {
                    t.id = Some(id);
                }
                id
            }
        };
        if let Some((hl, htag, hready)) = held {
            self.program_intention(core, tx.seq, id, hl, htag, hready)?;
        }
        self.program_intention(core, tx.seq, id, lpn.0, tag, accepted)?;
        Ok(accepted)
    }

    fn commit(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        let Some(t) = self.active.remove(&tx.seq) else {
            return Ok(now);
        };
        for i in &t.written {
            self.pinned.remove(&i.ppa);
        }
        if let Some((lpn, tag, ready)) = t.held {
            // A one-page transaction: the flagged page is its own commit.
            let (ppa, end) = self.program_single(core, lpn, tag, ready)?;
            let ack = end.max(now);
            self.install(core, lpn, ppa, NO_RECORD, ack);
            return Ok(ack);
        }
        let Some(id) = t.id else {
            return Ok(now);
        };
        let csn = self.take_id()?;
        let ready = t.written.iter().map(|i| i.end).fold(now, SimTime::max);
        #[cfg(feature = "mutants")]
        let ready = if crate::mutant::on("tc-commit-early") {
            now
        } else {
            ready
        };
        let mut payload = Writer::default();
        payload
            .bytes(b"TCR1")
            .u32(id)
            .u32(csn)
            .u32(t.written.len() as u32);
        let mut oob = blank_oob(core, kind::RECORD);
        put_u32(&mut oob, REC_OFF_TXID, id);
        put_u32(&mut oob, REC_OFF_CSN, csn);
        let (rppa, rt) = core.program(
            Stream::PROTO0,
            None,
            Content::Bytes(payload.0.into()),
            &oob,
            ready,
        )?;
        core.stats.commit_record_writes += 1;
        let ack = rt.end;
        core.pin(rppa);
        // The last intention of each page is the version this transaction leaves.
        let mut last: BTreeMap<u32, Ppa> = BTreeMap::new();
        for i in &t.written {
            last.insert(i.lpn, i.ppa);
        }
        self.records.insert(
            id,
            Record {
                ppa: rppa,
                live: last.len() as u32,
                obsolete_at: ack,
            },
        );
        self.record_at.insert(rppa, id);
        for (lpn, ppa) in &last {
            self.install(core, *lpn, *ppa, id, ack);
        }
        for i in &t.written {
            core.unpin(i.ppa, ack);
        }
        Ok(ack)
    }

    fn abort(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        if let Some(t) = self.active.remove(&tx.seq) {
            for i in &t.written {
                self.pinned.remove(&i.ppa);
                core.unpin(i.ppa, now);
            }
        }
        Ok(now)
    }

    fn write_plain(
        &mut self,
        core: &mut FtlCore,
        _tx: TxRef,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        core.check_lpn(lpn)?;
        let (ppa, end) = self.program_single(core, lpn.0, tag, core.host_transfer_done(now))?;
        self.install(core, lpn.0, ppa, NO_RECORD, end);
        Ok(end)
    }

    fn read(
        &mut self,
        core: &mut FtlCore,
        lpn: Lpn,
        now: SimTime,
    ) -> Result<(ReadOutcome, SimTime)> {
        core.read_lpn(lpn, now)
    }

    fn dram_bytes(&self) -> Vec<(&'static str, u64)> {
        let intents: usize = self.active.values().map(|t| t.written.len()).sum();
        vec![
            ("page versions", self.ver.len() as u64 * 4),
            ("page record owners", self.cur.len() as u64 * 4),
            ("commit records", self.records.len() as u64 * 32),
            (
                "active transactions",
                (self.active.len() * 48 + intents * 24 + self.pinned.len() * 16) as u64,
            ),
        ]
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("live_record_pages", self.records.len() as u64)]
    }

    fn check_invariants(&self, core: &FtlCore) -> std::result::Result<(), String> {
        let mut live: BTreeMap<u32, u32> = BTreeMap::new();
        for (lpn, r) in self.cur.iter().enumerate() {
            if *r != NO_RECORD {
                *live.entry(*r).or_default() += 1;
                if core.lookup(Lpn(lpn as u32)).is_none() {
                    return Err(format!("lpn {lpn} owned by record {r} but unmapped"));
                }
            }
        }
        for (id, r) in &self.records {
            if live.get(id).copied().unwrap_or(0) != r.live || r.live == 0 {
                return Err(format!(
                    "record {id}: live {} but {} pages name it",
                    r.live,
                    live.get(id).copied().unwrap_or(0)
                ));
            }
            if core.page_flags(r.ppa) & PIN_PROTO == 0 {
                return Err(format!("record {id} at {} is not pinned", r.ppa));
            }
            if self.record_at.get(&r.ppa) != Some(id) {
                return Err(format!("record {id} missing from the location index"));
            }
        }
        if live.len() != self.records.len() {
            return Err("a page names a record that is not kept".into());
        }
        for (ppa, (seq, idx)) in &self.pinned {
            if core.page_flags(*ppa) & PIN_PROTO == 0 {
                return Err(format!("intention {ppa} of seq {seq} is not pinned"));
            }
            let at = self
                .active
                .get(seq)
                .and_then(|t| t.written.get(*idx))
                .map(|i| i.ppa);
            if at != Some(*ppa) {
                return Err(format!("pinned intention {ppa} recorded at {at:?}"));
            }
        }
        Ok(())
    }
}

fn recover(ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    let lp = ctx.core.logical_pages();
    let mut max_id = 0u32;
    // Commit records: transaction id → (commit sequence, a copy).
    let mut recs: BTreeMap<u32, (u32, Ppa)> = BTreeMap::new();
    for (ppa, oob) in ctx.scan.of_kind(kind::RECORD) {
        let id = get_u32(oob, REC_OFF_TXID);
        let csn = get_u32(oob, REC_OFF_CSN);
        max_id = max_id.max(id).max(csn);
        if let Some((c, _)) = recs.get(&id) {
            if *c != csn {
                return Err(SsdError::CorruptImage {
                    detail: format!("{ppa}: two commit records for transaction {id} disagree"),
                });
            }
            continue;
        }
        recs.insert(id, (csn, ppa));
    }
    let mut ver = vec![0u32; lp as usize];
    // Per page: the best committed version as (csn, version, ppa, record or NO_RECORD).
    let mut best: Vec<Option<(u32, u32, Ppa, u32)>> = vec![None; lp as usize];
    for (ppa, oob) in ctx.scan.of_kind(kind::DATA) {
        let lpn = get_u64(oob, OFF_LPN) & LPN_MASK;
        if lpn >= u64::from(lp) {
            return Err(SsdError::CorruptImage {
                detail: format!("{ppa} claims lpn {lpn}, beyond {lp} logical pages"),
            });
        }
        let lpn = lpn as usize;
        let id = get_u32(oob, OFF_TXID);
        let v = get_u32(oob, OFF_VER);
        max_id = max_id.max(id);
        ver[lpn] = ver[lpn].max(v);
        let (csn, record) = match oob[OFF_FLAGS] {
            FLAG_SINGLE => (id, NO_RECORD),
            FLAG_MULTI => match recs.get(&id) {
                Some((csn, _)) => (*csn, id),
                None => continue, // no commit record: uncommitted, left for GC
            },
            f => {
                return Err(SsdError::CorruptImage {
                    detail: format!("{ppa}: unknown intention flags {f:#x}"),
                })
            }
        };
        if best[lpn].is_none_or(|(c, bv, _, _)| (csn, v) > (c, bv)) {
            best[lpn] = Some((csn, v, ppa, record));
        }
    }
    let mut cur = vec![NO_RECORD; lp as usize];
    let mut live: BTreeMap<u32, u32> = BTreeMap::new();
    for (lpn, b) in best.iter().enumerate() {
        if let Some((_, _, ppa, record)) = b {
            ctx.map(Lpn(lpn as u32), *ppa)?;
            cur[lpn] = *record;
            if *record != NO_RECORD {
                *live.entry(*record).or_default() += 1;
            }
        }
    }
    let mut records = BTreeMap::new();
    let mut record_at = BTreeMap::new();
    for (id, n) in live {
        let Some((_, ppa)) = recs.get(&id) else {
            continue;
        };
        ctx.pin(*ppa);
        records.insert(
            id,
            Record {
                ppa: *ppa,
                live: n,
                obsolete_at: SimTime::ZERO,
            },
        );
        record_at.insert(*ppa, id);
    }
    if max_id >= u32::MAX - 1 {
        return Err(SsdError::CorruptImage {
            detail: format!("transaction id {max_id} leaves no room for new ones"),
        });
    }
    Ok(Box::new(TcFtl {
        next_id: max_id + 1,
        ver,
        cur,
        records,
        record_at,
        active: BTreeMap::new(),
        pinned: BTreeMap::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lpn_and_single_page_bit_share_the_8_byte_field() {
        let mut oob = vec![0xFFu8; 17];
        put_u64(&mut oob, OFF_LPN, 0x12_3456);
        oob[OFF_FLAGS] = FLAG_SINGLE;
        assert_eq!(get_u64(&oob, OFF_LPN) & LPN_MASK, 0x12_3456);
        assert_eq!(oob[OFF_FLAGS], FLAG_SINGLE);
    }
}
