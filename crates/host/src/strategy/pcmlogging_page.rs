//! `pcmlogging-page`: page-level PCMLogging (PCMLogging §3.1–3.2) on the host engine —
//! whole dirty pages cached out of place in phase-change memory with PID / XID / version,
//! the transaction log implicit in them, an ActiveTxList in PCM whose entry removal is the
//! commit point, recovery by scanning PCM alone, page-level locking (§3.1: "a page can be
//! updated by at most one transaction at a time"), and destaging of committed pages to the
//! external disk under the high-low watermark (§5.1). With whole pages in PCM a buffer miss
//! on a cached page is served from PCM (no disk read), and a destage writes the cached page
//! as it is (no read-merge: that is the record-level scheme's cost, §3.3).
//!
//! The page-level scheme was not evaluated in the paper (§6.1: "it does not support
//! record-level concurrency control"); it is here so the two granularities can be compared
//! on one engine.
//!
//! # PCM layout, byte by byte (all integers little-endian u64)
//!
//! ```text
//! [0, 8)                 magic "PCMPAGE1"
//! [8, 16)                ATL entries A
//! [16, 24)               page slots S
//! [24, 32)               slot bytes Z (64 + page bytes, rounded up to the PCM unit)
//! [32, 40)               bitmap offset B (= 64 + 8A rounded up to 64)
//! [40, 48)               slot area offset R (= B + 8*ceil(S/64) rounded up to the unit)
//! [48, 64)               zero
//! [64, 64 + 8A)          ActiveTxList: entry i = XID of an in-progress transaction, 0 = free
//! [B, B + 8*ceil(S/64))  FreeSlotBitmap: bit s of word s/64 = 1 ⇔ slot s holds a valid page
//! [R + s*Z, …)           page slot s (Fig. 2):
//!     +0   XID   transaction that last made this page dirty
//!     +8   PID   DB page number (the inverse mapping)
//!     +16  version (bits 0..2, mod 4) | values n (bits 16..32)
//!     +24  zero (to +64: the header is one line)
//!     +64  the page: n values of 8 bytes (the host's data model), then zeros to the page size
//! ```
//!
//! DRAM (volatile, counted against the buffer pool, §6.1): the Mapping Table (per PID: the
//! committed slot and version, and the uncommitted slot, XID and version — the uncommitted
//! one is the paper's mapping, the committed one what its Dirty Page Table keeps while a
//! transaction overwrites the page), the Transaction Table (per XID: ATL entry, pages in
//! PCM; per client: pages dirty in DRAM and before-images), mirrors of the bitmap and ATL.
//!
//! # Ordering rules (each "then" waits for the previous write to complete)
//!
//! - Flush of page P by T (§3.2 "Flushing dirty pages to PCM"): if T has no ATL entry,
//!   write XID into a free entry, then write the page slot (header and page, all lines in
//!   parallel over the chips), then set its bitmap bit; then, if T had an older uncommitted
//!   copy of P in PCM, clear that copy's bit.
//! - Commit (§3.2): flush T's pages still in DRAM as above, then write 0 into T's ATL entry
//!   (the commit point; the ack is its completion), then clear the bits of the previous
//!   committed versions T replaced (the Dirty Page Table's entries).
//! - Abort: clear the bits of T's PCM pages, then clear T's ATL entry.
//! - Destage of page P: write P's committed version to disk (on the disk's own queue), then,
//!   at a `maintain` after the write completed, clear the slot's bit.
//!
//! # Recovery (§3.2 "Recovery")
//!
//! Read the ATL; scan the bitmap; for each valid slot read its header and discard it if its
//! XID is in the ATL; of two committed versions of one PID keep the one whose version is the
//! successor mod 4 of the other (§3.2 "Discussion"). The database is the disk overlaid with
//! the kept pages. No disk I/O; the time is the scan of the metadata and the valid headers
//! (the pages stay in PCM, the rebuilt Mapping Table points at them).
//!
//! # Crash argument, case by case
//!
//! - *Before T's ATL entry persisted*: no slot of T has its bit set (a bit is set only after
//!   the entry write and the slot write completed), so nothing of T is visible.
//! - *While T is in the ATL* (steals, commit flushes, abort's bit clearing): every valid
//!   slot carrying XID T is discarded. A slot whose write tore has its bit clear: a slot is
//!   reused only after its bit-clear completed, and the bit is set again only after the new
//!   write completed. The committed versions T replaced stay valid until after the commit
//!   point, so the state before T is recovered.
//! - *After the ATL clear persisted*: every page of T was flushed and its bit set before the
//!   clear was issued, so all of T is valid and committed. A previous committed version may
//!   still be valid: the version rule keeps T's (at most two committed versions of a page
//!   coexist — T's and the one it replaced — because the next writer needs T's page lock,
//!   released at the ack, after which T's commit had already freed the older one).
//! - *Mid-destage*: a torn disk write changes only the page's committed contents, which stay
//!   valid in PCM until the write completed and override the disk at recovery. Uncommitted
//!   pages never reach the disk (only committed PCM versions are destaged).
//! - ATL and bitmap updates are single aligned 8-byte words: atomic under the crash model;
//!   two writes to one word share a line and chip, so they complete in issue order.
//!
//! # Run-on restart (`restart`, `PageLogging::open`)
//!
//! §3.2's recovery only reads PCM; the paper does not say what the medium looks like when
//! the DBMS runs on after it. The restart the crash checker's run-on mode uses (and the
//! engine resumes from) finishes what commit and abort left undone, as ARIES' restart
//! finishes the losers' rollback before new work starts, with the record-level scheme's
//! order (`pcmlogging.rs`, "Run-on restart"): 1) clear the bits of every valid slot whose
//! XID is in the ActiveTxList (the losers' pages) and of every committed version a newer one
//! replaced (a commit cut short between its ATL clear and its frees), all bitmap words
//! issued at once; 2) once they completed, clear the ActiveTxList entries. The result: every
//! valid slot is the one committed version of its page and the ActiveTxList is empty, which
//! `open` rebuilds the DRAM tables from (Mapping Table, bitmap and ATL mirrors, slot
//! contents, destage order by XID) and refuses otherwise. Crash cases:
//! - *inside step 1*: the ActiveTxList is intact, so every loser slot still valid is
//!   discarded, and a replaced version still valid loses to its successor (the version
//!   rule); each bitmap word write is atomic. Recovery finds what it found before.
//! - *inside step 2*: no valid slot carries a loser's XID any more, so an entry cleared or
//!   not changes nothing. (Clearing the entries first — `RestartFault::AtlFirst` — leaves
//!   loser slots valid with no entry: visible.)
//! - *in the run after it*: the cases above, with three more rules. XIDs continue above
//!   every XID the crash image names (`Restarted::xid_max`, added to the engine's attempt
//!   ids): a new transaction reusing a committed page's XID would have that page discarded
//!   with it if it crashed in the ActiveTxList. No replaced version survives the restart
//!   (`RestartFault::KeepReplaced`): the resumed Mapping Table does not know it, so the
//!   next commit of its page writes the version after the kept one and two non-consecutive
//!   versions are valid. And the DRAM bitmap mirror is rebuilt from the valid slots (a
//!   mirror that forgot them, planted `fault_restart = "pcm-page-forget-bitmap"`, lets the
//!   run on allocate over committed pages and write bitmap words that drop them).
//!
//! Destaging: the high-low watermark or the adaptive rate of §5.2 (`host.pcm.destage`), in
//! page slots as the space unit.
//!
//! Not here: wear leveling (§4 is stated for records), the emulated SSD as external store.

use super::pcm_destage::{DestageCore, Destages};
use super::{RecoverCtx, RecoveredDb, Strategy, StrategyInfo};
use crate::buffer::Frame;
use crate::data::{Layout, PageImage, PageNo};
use crate::engine::Core;
use crate::pcm_tier::{TierHooks, TierLog, TierRecording};
use crate::{HostConfig, HostError, LockLevel, Result};
use media::disk::Disk;
use media::pcm::Pcm;
use sim::{SimTime, TxnId};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub const MAGIC: u64 = u64::from_le_bytes(*b"PCMPAGE1");
/// A page slot's header: one line.
const HDR: u64 = 64;

type Xid = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub atl_entries: u64,
    pub slots: u64,
    pub slot_bytes: u64,
    pub bitmap_off: u64,
    pub slots_off: u64,
}

impl Geometry {
    /// The largest number of slots of `slot_bytes` (a multiple of `unit_bytes`) that fit.
    pub fn new(
        pcm_bytes: u64,
        unit_bytes: u64,
        slot_bytes: u64,
        atl_entries: u64,
    ) -> std::result::Result<Geometry, String> {
        if atl_entries == 0 || slot_bytes == 0 || !slot_bytes.is_multiple_of(unit_bytes) {
            return Err(format!(
                "page slots of {slot_bytes} B in units of {unit_bytes} B with {atl_entries} ATL entries"
            ));
        }
        let bitmap_off = (64 + 8 * atl_entries).div_ceil(64) * 64;
        let mut slots = pcm_bytes.saturating_sub(bitmap_off) / slot_bytes;
        loop {
            let slots_off = (bitmap_off + 8 * slots.div_ceil(64)).div_ceil(unit_bytes) * unit_bytes;
            if slots > 0 && slots_off + slots * slot_bytes <= pcm_bytes {
                return Ok(Geometry {
                    atl_entries,
                    slots,
                    slot_bytes,
                    bitmap_off,
                    slots_off,
                });
            }
            if slots == 0 {
                return Err(format!(
                    "a pcm of {pcm_bytes} B has no room for one page slot of {slot_bytes} B besides its metadata"
                ));
            }
            slots -= 1;
        }
    }

    /// Reads the geometry back from a PCM image's superblock.
    pub fn read(img: &[u8]) -> std::result::Result<Geometry, String> {
        if img.len() < 64 {
            return Err("pcm smaller than a superblock".into());
        }
        let w = |i: usize| u64::from_le_bytes(img[i * 8..i * 8 + 8].try_into().expect("8"));
        if w(0) != MAGIC {
            return Err("pcm holds no page-level PCMLogging superblock".into());
        }
        let g = Geometry {
            atl_entries: w(1),
            slots: w(2),
            slot_bytes: w(3),
            bitmap_off: w(4),
            slots_off: w(5),
        };
        let end = g
            .slots
            .checked_mul(g.slot_bytes)
            .and_then(|x| x.checked_add(g.slots_off));
        if end.is_none_or(|e| e > img.len() as u64)
            || g.slot_bytes < HDR
            || g.bitmap_off + 8 * g.slots.div_ceil(64) > g.slots_off
            || 64 + 8 * g.atl_entries > g.bitmap_off
        {
            return Err(format!("pcm superblock is inconsistent: {g:?}"));
        }
        Ok(g)
    }

    fn atl_addr(&self, i: u64) -> u64 {
        64 + 8 * i
    }
    fn bitmap_word_addr(&self, s: u64) -> u64 {
        self.bitmap_off + 8 * (s / 64)
    }
    fn slot_addr(&self, s: u64) -> u64 {
        self.slots_off + s * self.slot_bytes
    }
}

/// Is `pcm` formatted for page-level PCMLogging (its magic)?
pub fn formatted(pcm: &Pcm) -> bool {
    pcm.image().len() >= 8 && pcm.peek_u64(0) == MAGIC
}

#[derive(Clone, Debug)]
pub struct PageLogConfig {
    pub atl_entries: u64,
    /// Logical page bytes written after the header (§6.1: 8 KiB).
    pub page_bytes: u64,
    pub high_watermark: f64,
    pub low_watermark: f64,
    /// A planted bug for the checker: commit frees the previous committed versions (the
    /// Dirty Page Table's entries) before it clears the ATL entry, not after.
    pub fault_free_before_commit_point: bool,
    /// Adaptive destaging (§5.2) with this segment size in bytes; None: the watermark.
    pub adaptive_segment_bytes: Option<u64>,
    /// Interval of the destage I/O series (Fig. 12b), ns.
    pub destage_interval_ns: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// (slot, version)
    committed: Option<(u64, u8)>,
    /// (slot, xid, version)
    uncommitted: Option<(u64, Xid, u8)>,
}

#[derive(Clone, Debug, Default)]
struct Tx {
    atl: Option<u64>,
    pcm: BTreeSet<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageLogCounters {
    pub pages_flushed: u64,
    pub commits: u64,
    pub aborts: u64,
    pub destaged_pages: u64,
    /// Buffer misses served from PCM (no disk read).
    pub pcm_page_hits: u64,
    pub disk_page_reads: u64,
}

/// The scheme's core over a `Pcm` and a `Disk`, driven page by page.
pub struct PageLogging {
    pub cfg: PageLogConfig,
    pub pcm: Pcm,
    pub disk: Disk,
    geo: Geometry,
    clock: SimTime,
    bitmap: Vec<u64>,
    used: u64,
    cursor: u64,
    atl: Vec<Xid>,
    map: BTreeMap<u64, Entry>,
    /// DRAM mirror of each slot's page contents.
    slot_vals: Vec<Option<Arc<Vec<u64>>>>,
    txs: BTreeMap<Xid, Tx>,
    committed_fifo: BTreeMap<u64, u64>,
    committed_seq: BTreeMap<u64, u64>,
    seq: u64,
    pub counters: PageLogCounters,
    initial_page: super::pcmlogging::InitialPage,
    /// The destages in flight (a destaged page's slot stays valid until the write
    /// completed), the destage policy — adaptive in slots as its space units — and its
    /// series (`pcm_destage::Destages`).
    pub destages: Destages<u64>,
}

fn werr(e: String) -> String {
    format!("pcm: {e}")
}

impl PageLogging {
    /// Formats `pcm` (the superblock; untimed, done once at installation).
    pub fn format(
        cfg: PageLogConfig,
        mut pcm: Pcm,
        disk: Disk,
        initial_page: super::pcmlogging::InitialPage,
    ) -> std::result::Result<PageLogging, String> {
        if !(0.0..=1.0).contains(&cfg.low_watermark)
            || cfg.low_watermark > cfg.high_watermark
            || cfg.high_watermark > 1.0
        {
            return Err(format!(
                "watermarks: need 0 <= low ({}) <= high ({}) <= 1",
                cfg.low_watermark, cfg.high_watermark
            ));
        }
        let ub = u64::from(pcm.config().unit_bytes);
        let slot_bytes = (HDR + cfg.page_bytes).div_ceil(ub) * ub;
        let geo = Geometry::new(pcm.config().bytes, ub, slot_bytes, cfg.atl_entries)?;
        let mut sb = Vec::with_capacity(64);
        for w in [
            MAGIC,
            geo.atl_entries,
            geo.slots,
            geo.slot_bytes,
            geo.bitmap_off,
            geo.slots_off,
            0,
            0,
        ] {
            sb.extend_from_slice(&w.to_le_bytes());
        }
        pcm.write(0, &sb, SimTime::ZERO).map_err(werr)?;
        pcm.counters = Default::default();
        Ok(PageLogging::fresh(cfg, pcm, disk, geo, initial_page))
    }

    /// A core with empty DRAM tables over a PCM of geometry `geo`.
    fn fresh(
        cfg: PageLogConfig,
        pcm: Pcm,
        disk: Disk,
        geo: Geometry,
        initial_page: super::pcmlogging::InitialPage,
    ) -> PageLogging {
        let adaptive = cfg.adaptive_segment_bytes.map(|seg| {
            super::pcm_destage::Adaptive::new(
                geo.slots,
                geo.slot_bytes,
                seg,
                disk.kind.latency_ns().1,
            )
        });
        let destages = Destages::new(adaptive, cfg.destage_interval_ns);
        PageLogging {
            destages,
            bitmap: vec![0; geo.slots.div_ceil(64) as usize],
            atl: vec![0; geo.atl_entries as usize],
            slot_vals: vec![None; geo.slots as usize],
            geo,
            cfg,
            pcm,
            disk,
            clock: SimTime::ZERO,
            used: 0,
            cursor: 0,
            map: BTreeMap::new(),
            txs: BTreeMap::new(),
            committed_fifo: BTreeMap::new(),
            committed_seq: BTreeMap::new(),
            seq: 0,
            counters: PageLogCounters::default(),
            initial_page,
        }
    }

    /// Resumes on a PCM a restart that writes back left (`restart`; module docs, "Run-on
    /// restart"): every valid slot is the one committed version of its page and the
    /// ActiveTxList is empty; anything else is refused. The DRAM tables are rebuilt from the
    /// medium — Mapping Table (committed slot and version per page), the bitmap and ATL
    /// mirrors, the slots' contents, the destage order (oldest XID first) — and the core's
    /// clock starts at `clock` (the restart's end). `forget_bitmap` plants a bug for the
    /// checker (`HostConfig::fault_restart = "pcm-page-forget-bitmap"`): the DRAM mirror of
    /// the FreeSlotBitmap starts empty.
    pub fn open(
        cfg: PageLogConfig,
        pcm: Pcm,
        disk: Disk,
        initial_page: super::pcmlogging::InitialPage,
        clock: SimTime,
        forget_bitmap: bool,
    ) -> std::result::Result<PageLogging, String> {
        let ub = u64::from(pcm.config().unit_bytes);
        let slot_bytes = (HDR + cfg.page_bytes).div_ceil(ub) * ub;
        let geo = Geometry::new(pcm.config().bytes, ub, slot_bytes, cfg.atl_entries)?;
        let sc = scan(pcm.image())?;
        if sc.g != geo {
            return Err(format!(
                "the PCM's superblock ({:?}) is not the configuration's ({geo:?})",
                sc.g
            ));
        }
        if let Some(&(i, x)) = sc.atl.first() {
            return Err(format!(
                "ActiveTxList entry {i} holds XID {x}: the restart did not settle it"
            ));
        }
        if let Some(s) = sc.replaced.first() {
            return Err(format!(
                "slot {s} holds a replaced committed version: the restart did not free it"
            ));
        }
        let mut c = PageLogging::fresh(cfg, pcm, disk, geo, initial_page);
        c.clock = clock;
        let mut order: Vec<(Xid, u64)> = Vec::with_capacity(sc.keep.len());
        for (&pid, &(ver, s)) in &sc.keep {
            if !forget_bitmap {
                c.bitmap[(s / 64) as usize] |= 1 << (s % 64);
            } // else BUG when planted: the valid slots look free to `alloc`
            c.slot_vals[s as usize] = Some(Arc::new(slot_values(c.pcm.image(), &geo, s)?));
            c.used += 1;
            c.map.insert(
                pid,
                Entry {
                    committed: Some((s, ver)),
                    uncommitted: None,
                },
            );
            order.push((word(c.pcm.image(), geo.slot_addr(s)), pid));
        }
        order.sort_unstable();
        for (_, pid) in order {
            c.seq += 1;
            c.committed_fifo.insert(c.seq, pid);
            c.committed_seq.insert(pid, c.seq);
        }
        Ok(c)
    }

    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    pub fn used_slots(&self) -> u64 {
        self.used
    }

    fn at(&self, now: SimTime) -> SimTime {
        now.max(self.clock)
    }

    fn w64(&mut self, addr: u64, v: u64, t: SimTime) -> std::result::Result<SimTime, String> {
        self.pcm.write_u64(addr, v, t).map_err(werr)
    }

    fn set_bit(&mut self, s: u64, on: bool, t: SimTime) -> std::result::Result<SimTime, String> {
        let i = (s / 64) as usize;
        if on {
            self.bitmap[i] |= 1 << (s % 64);
        } else {
            self.bitmap[i] &= !(1 << (s % 64));
        }
        let w = self.bitmap[i];
        self.w64(self.geo.bitmap_word_addr(s), w, t)
    }

    fn alloc(&mut self) -> Option<u64> {
        for k in 0..self.geo.slots {
            let s = (self.cursor + k) % self.geo.slots;
            if self.bitmap[(s / 64) as usize] >> (s % 64) & 1 == 0 {
                self.cursor = (s + 1) % self.geo.slots;
                return Some(s);
            }
        }
        None
    }

    fn free_slot(&mut self, s: u64, t: SimTime) -> std::result::Result<SimTime, String> {
        self.used -= 1;
        self.slot_vals[s as usize] = None;
        self.set_bit(s, false, t)
    }

    /// The newest version of `page` in PCM (uncommitted first), if any.
    pub fn cached(&self, page: u64) -> Option<&Arc<Vec<u64>>> {
        let e = self.map.get(&page)?;
        let s = e.uncommitted.map(|x| x.0).or(e.committed.map(|x| x.0))?;
        self.slot_vals[s as usize].as_ref()
    }

    /// The page's newest contents outside DRAM: PCM, else disk, else as loaded.
    pub fn current(&self, page: u64) -> Vec<u64> {
        if let Some(v) = self.cached(page) {
            return v.as_ref().clone();
        }
        match self.disk.image().get(&page) {
            Some(v) => v.clone(),
            None => (self.initial_page)(page),
        }
    }

    /// Flushes T's dirty `page` (contents `values`) to a free PCM slot (§3.2). Returns when
    /// its last write completed.
    pub fn flush(
        &mut self,
        xid: Xid,
        page: u64,
        values: &[u64],
        now: SimTime,
    ) -> std::result::Result<SimTime, String> {
        if xid == 0 {
            return Err("xid 0 is reserved".into());
        }
        if values.len() as u64 * 8 > self.cfg.page_bytes || values.len() > 0xffff {
            return Err(format!(
                "page {page} has {} values: more than a {} B page holds",
                values.len(),
                self.cfg.page_bytes
            ));
        }
        let mut t = self.at(now);
        if self.used >= self.geo.slots {
            t = self.destage_until_free(t)?;
        }
        let tx = self.txs.entry(xid).or_default();
        if tx.atl.is_none() {
            let Some(i) = self.atl.iter().position(|&x| x == 0) else {
                return Err(format!(
                    "ActiveTxList full ({} entries)",
                    self.geo.atl_entries
                ));
            };
            self.atl[i] = xid;
            self.txs.get_mut(&xid).expect("tx").atl = Some(i as u64);
            t = self.w64(self.geo.atl_addr(i as u64), xid, t)?;
        }
        let s = self
            .alloc()
            .ok_or_else(|| "pcm full of uncommitted pages (nothing to destage)".to_string())?;
        let e = self.map.get(&page).copied().unwrap_or_default();
        let version = match e.committed {
            Some((_, v)) => (v + 1) % 4,
            None => 0,
        };
        let mut buf = Vec::with_capacity((HDR + self.cfg.page_bytes) as usize);
        for w in [xid, page, u64::from(version) | (values.len() as u64) << 16] {
            buf.extend_from_slice(&w.to_le_bytes());
        }
        buf.resize(HDR as usize, 0);
        for v in values {
            buf.extend_from_slice(&v.to_le_bytes());
        }
        buf.resize((HDR + self.cfg.page_bytes) as usize, 0);
        t = self
            .pcm
            .write(self.geo.slot_addr(s), &buf, t)
            .map_err(werr)?;
        self.used += 1;
        self.slot_vals[s as usize] = Some(Arc::new(values.to_vec()));
        t = self.set_bit(s, true, t)?;
        if let Some((old, oxid, _)) = e.uncommitted {
            if oxid != xid {
                return Err(format!(
                    "internal: page {page} written by transactions {oxid} and {xid} at once"
                ));
            }
            t = self.free_slot(old, t)?;
        }
        self.map.entry(page).or_default().uncommitted = Some((s, xid, version));
        self.txs.get_mut(&xid).expect("tx").pcm.insert(page);
        self.counters.pages_flushed += 1;
        self.clock = t;
        Ok(t)
    }

    /// Commit (§3.2): flush T's DRAM pages, clear its ATL entry (the ack), discard the
    /// previous versions. Returns the ack instant.
    pub fn commit(
        &mut self,
        xid: Xid,
        dram: &[(u64, Vec<u64>)],
        now: SimTime,
    ) -> std::result::Result<SimTime, String> {
        let mut t = self.at(now);
        for (p, v) in dram {
            t = self.flush(xid, *p, v, t)?;
        }
        let tx = self.txs.remove(&xid).unwrap_or_default();
        let mut old = Vec::new();
        for p in &tx.pcm {
            let e = self.map.get_mut(p).expect("mapped");
            let (s, _, v) = e.uncommitted.take().expect("uncommitted");
            if let Some((os, _)) = e.committed.replace((s, v)) {
                old.push((*p, os));
            }
        }
        let early = self.cfg.fault_free_before_commit_point;
        if early {
            // BUG (planted): the previous versions are freed before the commit point.
            t = self.free_replaced(&old, t)?;
        }
        let mut ack = t;
        if let Some(i) = tx.atl {
            t = self.w64(self.geo.atl_addr(i), 0, t)?;
            self.atl[i as usize] = 0;
            ack = t;
        }
        if !early {
            t = self.free_replaced(&old, t)?;
        }
        for p in &tx.pcm {
            if let Some(s) = self.committed_seq.remove(p) {
                self.committed_fifo.remove(&s);
            }
            self.seq += 1;
            self.committed_fifo.insert(self.seq, *p);
            self.committed_seq.insert(*p, self.seq);
        }
        self.clock = t;
        self.counters.commits += 1;
        Ok(ack)
    }

    fn free_replaced(
        &mut self,
        old: &[(u64, u64)],
        mut t: SimTime,
    ) -> std::result::Result<SimTime, String> {
        for &(p, os) in old {
            self.destages.forget(&p, os);
            t = self.free_slot(os, t)?;
        }
        Ok(t)
    }

    /// Abort (§3.2): discard T's PCM pages (the committed versions stay mapped), then clear
    /// its ATL entry. Returns when the rollback is durable.
    pub fn abort(&mut self, xid: Xid, now: SimTime) -> std::result::Result<SimTime, String> {
        let mut t = self.at(now);
        let tx = self.txs.remove(&xid).unwrap_or_default();
        for p in &tx.pcm {
            let e = self.map.get_mut(p).expect("mapped");
            let (s, _, _) = e.uncommitted.take().expect("uncommitted");
            if e.committed.is_none() {
                self.map.remove(p);
            }
            t = self.free_slot(s, t)?;
        }
        if let Some(i) = tx.atl {
            t = self.w64(self.geo.atl_addr(i), 0, t)?;
            self.atl[i as usize] = 0;
        }
        self.clock = t;
        self.counters.aborts += 1;
        Ok(t)
    }

    /// Reads `page` for a buffer miss: from PCM when cached there (header and values), else
    /// from disk. Returns when the read completes.
    pub fn read_page_time(
        &mut self,
        page: u64,
        now: SimTime,
    ) -> std::result::Result<SimTime, String> {
        let e = self.map.get(&page).copied().unwrap_or_default();
        match e.uncommitted.map(|x| x.0).or(e.committed.map(|x| x.0)) {
            Some(s) => {
                self.counters.pcm_page_hits += 1;
                let n = self.slot_vals[s as usize].as_ref().map_or(0, |v| v.len());
                let (_, t) = self
                    .pcm
                    .read(self.geo.slot_addr(s), HDR as usize + 8 * n, now)
                    .map_err(werr)?;
                Ok(t)
            }
            None => {
                self.counters.disk_page_reads += 1;
                Ok(self.disk.read(page, now).1)
            }
        }
    }

    /// PCM is full: wait for (or start) destages until a slot is free.
    fn destage_until_free(&mut self, now: SimTime) -> std::result::Result<SimTime, String> {
        super::pcm_destage::until_free(self, now, "pages")
    }

    /// Between events: finish completed destages, then start new ones under the high-low
    /// watermark or the adaptive policy (`pcm_destage::start_destages`; slots of pending
    /// destages count as free).
    pub fn maintain(&mut self, now: SimTime) -> std::result::Result<SimTime, String> {
        let t = self.complete_destages(now)?;
        super::pcm_destage::start_destages(self, now, t)
    }
}

impl DestageCore for PageLogging {
    type Key = u64;

    fn destages(&mut self) -> &mut Destages<u64> {
        &mut self.destages
    }

    fn occupancy(&self) -> (u64, u64, f64, f64) {
        (
            self.used,
            self.geo.slots,
            self.cfg.high_watermark,
            self.cfg.low_watermark,
        )
    }

    fn at(&self, now: SimTime) -> SimTime {
        PageLogging::at(self, now)
    }

    /// Destages the committed page longest in PCM: its cached version is written to disk
    /// as it is; the slot is freed when the write completed (`complete_destages`).
    fn destage_one(&mut self, now: SimTime) -> std::result::Result<Option<SimTime>, String> {
        let Some((&sq, &page)) = self.committed_fifo.iter().next() else {
            return Ok(None);
        };
        self.committed_fifo.remove(&sq);
        self.committed_seq.remove(&page);
        let Some((s, _)) = self.map.get(&page).and_then(|e| e.committed) else {
            return Err(format!(
                "internal: page {page} queued for destaging is not committed in pcm"
            ));
        };
        let vals = self.slot_vals[s as usize]
            .as_ref()
            .ok_or_else(|| format!("internal: slot {s} has no contents"))?
            .as_ref()
            .clone();
        let id = self.destages.next_id();
        let end = self.disk.write(page, vals, now)?;
        self.destages.carry(page, s, id);
        // A destage writes the page as PCM caches it: one disk I/O.
        self.destages.issue(now, end, id, vec![page], 1);
        self.counters.destaged_pages += 1;
        Ok(Some(end))
    }

    /// Frees the slots of destages whose disk write completed by `now`.
    fn complete_destages(&mut self, now: SimTime) -> std::result::Result<SimTime, String> {
        let mut t = self.at(now);
        for (page, s) in self.destages.complete(now, false) {
            let e = self.map.get_mut(&page).expect("mapped");
            debug_assert_eq!(e.committed.map(|c| c.0), Some(s));
            e.committed = None;
            if e.uncommitted.is_none() {
                self.map.remove(&page);
            }
            t = self.free_slot(s, t)?;
        }
        self.clock = t;
        Ok(t)
    }
}

/// What recovery rebuilt: the newest committed contents of every page PCM holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    pub pages: BTreeMap<u64, Vec<u64>>,
    pub scan_ns: u64,
    pub discarded_uncommitted: u64,
    pub discarded_older: u64,
}

fn word(img: &[u8], a: u64) -> u64 {
    let a = a as usize;
    img.get(a..a + 8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8")))
}

/// The values slot `s` holds (its header's count, checked against the slot's size).
fn slot_values(img: &[u8], g: &Geometry, s: u64) -> std::result::Result<Vec<u64>, String> {
    let a = g.slot_addr(s);
    let n = word(img, a + 16) >> 16 & 0xffff;
    if HDR + 8 * n > g.slot_bytes {
        return Err(format!("slot {s} claims {n} values, more than it holds"));
    }
    Ok((0..n).map(|i| word(img, a + HDR + 8 * i)).collect())
}

/// What a scan of the metadata and the valid slots' headers finds (§3.2 "Recovery").
struct Scan {
    g: Geometry,
    /// Non-zero ActiveTxList entries: (entry, XID).
    atl: Vec<(u64, Xid)>,
    /// Valid slots whose XID is in the ActiveTxList.
    losers: Vec<u64>,
    /// Valid committed slots whose page has the successor version valid too.
    replaced: Vec<u64>,
    /// Per page: (version, slot) of its newest committed version.
    keep: BTreeMap<u64, (u8, u64)>,
    /// The largest XID the ActiveTxList and the valid slots name.
    xid_max: Xid,
    valid: u64,
}

fn scan(img: &[u8]) -> std::result::Result<Scan, String> {
    let g = Geometry::read(img)?;
    let w = |a: u64| word(img, a);
    let atl: Vec<(u64, Xid)> = (0..g.atl_entries)
        .map(|i| (i, w(g.atl_addr(i))))
        .filter(|&(_, x)| x != 0)
        .collect();
    let active: BTreeSet<u64> = atl.iter().map(|&(_, x)| x).collect();
    let mut sc = Scan {
        g,
        xid_max: active.iter().copied().max().unwrap_or(0),
        atl,
        losers: Vec::new(),
        replaced: Vec::new(),
        keep: BTreeMap::new(),
        valid: 0,
    };
    for wi in 0..g.slots.div_ceil(64) {
        let word = w(g.bitmap_off + 8 * wi);
        for b in 0..64 {
            if word >> b & 1 == 0 {
                continue;
            }
            let s = wi * 64 + b;
            if s >= g.slots {
                return Err(format!(
                    "bitmap marks slot {s} beyond the {} slots",
                    g.slots
                ));
            }
            sc.valid += 1;
            let a = g.slot_addr(s);
            let (xid, pid, meta) = (w(a), w(a + 8), w(a + 16));
            sc.xid_max = sc.xid_max.max(xid);
            if active.contains(&xid) {
                sc.losers.push(s);
                continue;
            }
            let ver = (meta & 3) as u8;
            match sc.keep.get(&pid).copied() {
                None => {
                    sc.keep.insert(pid, (ver, s));
                }
                Some((v0, s0)) if (v0 + 1) % 4 == ver => {
                    sc.keep.insert(pid, (ver, s));
                    sc.replaced.push(s0);
                }
                Some((v0, _)) if (ver + 1) % 4 == v0 => sc.replaced.push(s),
                Some((v0, _)) => {
                    return Err(format!(
                        "page {pid} has committed versions {v0} and {ver}, not consecutive"
                    ))
                }
            }
        }
    }
    Ok(sc)
}

/// §3.2 "Recovery" over a PCM image alone (no disk I/O).
pub fn recover(pcm: &Pcm) -> std::result::Result<Recovered, String> {
    let img = pcm.image();
    let sc = scan(img)?;
    let mut out = Recovered {
        discarded_uncommitted: sc.losers.len() as u64,
        discarded_older: sc.replaced.len() as u64,
        ..Recovered::default()
    };
    for (&pid, &(_, s)) in &sc.keep {
        out.pages.insert(pid, slot_values(img, &sc.g, s)?);
    }
    out.scan_ns = pcm.scan_ns(sc.g.slots_off) + pcm.scan_ns(sc.valid * 32);
    Ok(out)
}

/// What a restart that writes back (`restart`) did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restarted {
    /// What §3.2's recovery found (as `recover` on the crash image).
    pub recovered: Recovered,
    /// The largest XID the crash image names (ActiveTxList, valid slots): the resumed run's
    /// XIDs start above it (module docs, "Run-on restart").
    pub xid_max: Xid,
    /// Slots whose bit the restart cleared.
    pub freed: u64,
    /// When the restart's last write completed.
    pub end: SimTime,
}

/// The restart that writes back (module docs, "Run-on restart"): §3.2's scan, then what
/// abort and commit would have finished — clear the bits of every valid slot of a
/// transaction in the ActiveTxList and of every replaced committed version, then, once those
/// clears completed, the ActiveTxList entries. Leaves a PCM whose every valid slot is the one
/// committed version of its page and whose ActiveTxList is empty: the state
/// `PageLogging::open` resumes from. `fault` plants the record-level scheme's restart bugs
/// (`pcmlogging::RestartFault`) here too.
pub fn restart(
    pcm: &mut Pcm,
    now: SimTime,
    fault: super::pcmlogging::RestartFault,
) -> std::result::Result<Restarted, String> {
    use super::pcmlogging::RestartFault;
    let recovered = recover(pcm)?;
    let sc = scan(pcm.image())?;
    let mut free: Vec<u64> = sc.losers.clone();
    if fault != RestartFault::KeepReplaced {
        free.extend(&sc.replaced);
    }
    let g = sc.g;
    let atl: Vec<u64> = sc.atl.iter().map(|&(i, _)| g.atl_addr(i)).collect();
    // The writes follow the scan (the record level's order, `pcmlogging::restart_writes`).
    let t = super::pcmlogging::restart_writes(
        pcm,
        now + recovered.scan_ns,
        &free,
        |s| g.bitmap_word_addr(s),
        &atl,
        fault,
    )?;
    Ok(Restarted {
        recovered,
        xid_max: sc.xid_max,
        freed: free.len() as u64,
        end: t,
    })
}

/// Restart from a PCM image and a disk image alone: the disk overlaid with the committed
/// pages recovery keeps (`pcm_tier::recover_db` dispatches here on the magic).
pub fn recover_db(
    layout: &Layout,
    pcm: &Pcm,
    disk: &BTreeMap<u64, Vec<u64>>,
) -> std::result::Result<RecoveredDb, String> {
    let r = recover(pcm)?;
    let mut pages: BTreeMap<PageNo, Vec<u64>> =
        disk.iter().map(|(p, v)| (PageNo(*p), v.clone())).collect();
    for (p, v) in r.pages {
        if p >= layout.pages {
            return Err(format!("pcm page {p} is beyond the database"));
        }
        let want = layout.slots(PageNo(p)) as usize;
        if v.len() != want {
            return Err(format!(
                "pcm page {p} holds {} values, its table's pages have {want}",
                v.len()
            ));
        }
        pages.insert(PageNo(p), v);
    }
    Ok(RecoveredDb {
        pages,
        pages_read: 0,
        time_ns: r.scan_ns,
    })
}

// ---------------------------------------------------------------------------------------
// The host-engine strategy.

pub static INFO: StrategyInfo = StrategyInfo {
    name: "pcmlogging-page",
    summary: "page-level PCMLogging: whole dirty pages cached out of place in PCM with PID/XID/version, ActiveTxList commit, recovery by PCM scan, page locks (PCMLogging §3.1-3.2) over a Table 2 disk",
    lock_level: LockLevel::Page,
    check,
    create,
    recover: recover_device,
};

fn check(cfg: &HostConfig, p: &'static ssd::ProtocolInfo) -> Result<()> {
    crate::pcm_tier::check_protocol("pcmlogging-page", p)?;
    cfg.pcm.validate()?;
    if cfg.lock_level == LockLevel::Record {
        return Err(HostError::Config {
            key: "host.lock_level".into(),
            reason: "page-level PCMLogging updates a page by one transaction at a time (§3.1); use \"page\" or \"auto\"".into(),
        });
    }
    Ok(())
}

fn cerr(e: String) -> HostError {
    if e.starts_with("pcm full of uncommitted") || e.starts_with("ActiveTxList full") {
        return HostError::Config {
            key: "host.pcm.pcm_bytes".into(),
            reason: format!(
                "{e}: the PCM is too small for the pages of the transactions in flight"
            ),
        };
    }
    HostError::Stuck(format!("pcmlogging-page: {e}"))
}

/// DRAM and PCM sizes as `pcm_tier::PcmSettings::sizes`, with the tables reserved per
/// page slot (one Mapping Table / Dirty Page Table entry each) rather than per unit, and at
/// least 8 page slots besides the metadata.
fn sizes(cfg: &HostConfig, layout: &Layout, slot_bytes: u64) -> Result<crate::pcm_tier::Sizes> {
    cfg.pcm
        .sizes_per(cfg, layout, slot_bytes, 8 * slot_bytes + 4096)
}

struct Client {
    xid: u64,
    /// (page, slot, before) of each record changed, first change first.
    undo: Vec<(PageNo, u16, u64)>,
    /// Pages this transaction dirtied that are still only in DRAM (the Transaction
    /// Table's DRAM part).
    dram: BTreeSet<PageNo>,
}

pub struct PcmPageStrategy {
    core: PageLogging,
    clients: Vec<Client>,
    sizes: crate::pcm_tier::Sizes,
    recording: TierRecording,
    /// Added to every XID: on a resumed PCM the largest XID it names (module docs, "Run-on
    /// restart"); 0 on a formatted one.
    xid_base: u64,
}

fn create(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    let s = &cfg.pcm;
    let ub = u64::from(s.unit_bytes);
    let page_bytes = u64::from(cfg.page_bytes);
    let slot_bytes = (HDR + page_bytes).div_ceil(ub) * ub;
    let max_slots = core
        .layout
        .schema
        .tables
        .iter()
        .map(|t| u64::from(t.records_per_page))
        .max()
        .unwrap_or(0);
    if max_slots * 8 > page_bytes {
        return Err(HostError::Config {
            key: "host.page_bytes".into(),
            reason: format!(
                "a page of {max_slots} records needs {} B in PCM, more than {page_bytes}",
                max_slots * 8
            ),
        });
    }
    let sizes = sizes(cfg, &core.layout, slot_bytes)?;
    crate::pcm_tier::size_dram(core, sizes.frames);
    let pcm = crate::pcm_tier::new_pcm(s, sizes.pcm_bytes)?;
    let layout = core.layout.clone();
    let lcfg = PageLogConfig {
        atl_entries: u64::from(cfg.clients) + 2,
        page_bytes,
        high_watermark: s.high_watermark,
        low_watermark: s.low_watermark,
        fault_free_before_commit_point: s.fault_page_free_before_commit_point,
        adaptive_segment_bytes: s.adaptive_segment_bytes(),
        destage_interval_ns: s.destage_interval_ns,
    };
    let initial: super::pcmlogging::InitialPage = Arc::new(move |p| layout.initial_page(PageNo(p)));
    let disk = crate::external::open(cfg, core)?;
    // An engine resumed on the medium a run-on restart left (module docs, "Run-on restart").
    let resume = crate::pcm_tier::take_resume(core, "pcmlogging-page", &disk, &pcm)?;
    let (mut pl, xid_base, resumed_base, disk_base) = match resume {
        None => {
            let pl =
                PageLogging::format(lcfg, pcm, disk, initial).map_err(|e| HostError::Config {
                    key: "host.pcm.pcm_bytes".into(),
                    reason: e,
                })?;
            (pl, 0, None, BTreeMap::new())
        }
        Some(r) => {
            let d = Disk::from_image(disk.kind, r.disk.clone());
            let forget = cfg.fault_restart == "pcm-page-forget-bitmap";
            let pl = PageLogging::open(lcfg, r.pcm, d, initial, r.end, forget).map_err(|e| {
                HostError::Corrupt(format!(
                    "pcmlogging-page cannot resume on its restarted PCM: {e}"
                ))
            })?;
            (pl, r.xid_max, Some(r.pcm_base), r.disk)
        }
    };
    let record = core.tags.keep;
    let recording = if record {
        pl.disk.set_logging(true);
        let base = match resumed_base {
            // The restart's writes are in the PCM's log already (`PcmResume::pcm`).
            Some(b) => b,
            None => {
                pl.pcm.set_logging(true);
                pl.pcm.image().to_vec()
            }
        };
        TierRecording::new(base, disk_base)
    } else {
        TierRecording::off()
    };
    crate::pcm_tier::attach_tier_sink(core, &mut pl.pcm, &mut pl.disk)?;
    Ok(Box::new(PcmPageStrategy {
        core: pl,
        clients: (0..cfg.clients)
            .map(|_| Client {
                xid: 0,
                undo: Vec::new(),
                dram: BTreeSet::new(),
            })
            .collect(),
        sizes,
        recording,
        xid_base,
    }))
}

fn recover_device(_ctx: &mut RecoverCtx<'_>) -> Result<RecoveredDb> {
    Err(HostError::Config {
        key: "host.strategy".into(),
        reason: "pcmlogging-page recovers from its PCM and disk images (pcm_tier::recover_db), not from the device".into(),
    })
}

impl Strategy for PcmPageStrategy {
    fn name(&self) -> &'static str {
        "pcmlogging-page"
    }

    /// The XID is the attempt's `TxnId`, above every XID a resumed PCM names.
    fn begin(&mut self, _core: &mut Core, c: u32, txn: TxnId, _now: SimTime) -> Result<()> {
        let cl = &mut self.clients[c as usize];
        cl.xid = self.xid_base + txn.0;
        cl.undo.clear();
        cl.dram.clear();
        Ok(())
    }

    fn on_update(
        &mut self,
        core: &mut Core,
        c: u32,
        frame: u32,
        slot: u16,
        before: u64,
        _after: u64,
        _now: SimTime,
    ) -> Result<()> {
        let page = core.pool.frame(frame).page;
        let cl = &mut self.clients[c as usize];
        cl.undo.push((page, slot, before));
        cl.dram.insert(page);
        Ok(())
    }

    fn evictable(&self, _frame: &Frame) -> bool {
        true
    }

    /// Steal: a dirty page leaves DRAM with its owner's uncommitted changes; it is cached in
    /// PCM as the owner's version. Nothing goes to disk.
    fn write_back(&mut self, _core: &mut Core, frame: Frame, now: SimTime) -> Result<SimTime> {
        let Some(c) = frame.owner else {
            return Err(HostError::Stuck(format!(
                "pcmlogging-page: dirty page {} has no owner",
                frame.page.0
            )));
        };
        let cl = &mut self.clients[c as usize];
        if !cl.dram.remove(&frame.page) {
            return Err(HostError::Stuck(format!(
                "pcmlogging-page: dirty page {} is not in its owner's transaction table",
                frame.page.0
            )));
        }
        let xid = cl.xid;
        self.core
            .flush(xid, frame.page.0, &frame.values, now)
            .map_err(cerr)
    }

    fn read_page(&mut self, core: &mut Core, page: PageNo, now: SimTime) -> Result<SimTime> {
        core.stats.page_reads += 1;
        self.core.read_page_time(page.0, now).map_err(cerr)
    }

    fn own_page(&self, _c: u32, page: PageNo) -> Option<Arc<PageImage>> {
        Some(Arc::new(PageImage {
            page,
            lsn: 0,
            values: self.core.current(page.0),
        }))
    }

    fn commit(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let cl = &mut self.clients[c as usize];
        cl.undo.clear();
        let pages = std::mem::take(&mut cl.dram);
        let xid = cl.xid;
        let mut dram = Vec::with_capacity(pages.len());
        for p in pages {
            let Some(f) = core.pool.find(p) else {
                return Err(HostError::Stuck(format!(
                    "pcmlogging-page: page {} of transaction {xid} left DRAM unflushed",
                    p.0
                )));
            };
            let fr = core.pool.frame_mut(f);
            fr.dirty = false;
            fr.owner = None;
            dram.push((p.0, fr.values.clone()));
        }
        self.core.commit(xid, &dram, now).map_err(cerr)
    }

    fn abort(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let cl = &mut self.clients[c as usize];
        let undo = std::mem::take(&mut cl.undo);
        cl.dram.clear();
        let mut touched = BTreeSet::new();
        for (page, slot, before) in undo.into_iter().rev() {
            if let Some(f) = core.pool.find(page) {
                core.pool.frame_mut(f).values[slot as usize] = before;
                touched.insert(f);
            }
        }
        // The frames hold the committed contents again (PCM's committed version or disk).
        for f in touched {
            let fr = core.pool.frame_mut(f);
            fr.dirty = false;
            fr.owner = None;
        }
        let xid = cl.xid;
        self.core.abort(xid, now).map_err(cerr)
    }

    fn maintain(&mut self, _core: &mut Core, now: SimTime) -> Result<()> {
        self.core.maintain(now).map_err(cerr)?;
        Ok(())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let k = &self.core.counters;
        let w = self.core.pcm.wear();
        [
            ("pcm_pages_flushed", k.pages_flushed),
            ("pcm_commits", k.commits),
            ("pcm_aborts", k.aborts),
            ("pcm_destaged_pages", k.destaged_pages),
            ("pcm_page_hits", k.pcm_page_hits),
            ("pcm_line_writes", self.core.pcm.counters.line_writes),
            ("pcm_line_reads", self.core.pcm.counters.line_reads),
            ("pcm_slots", self.core.geometry().slots),
            ("pcm_slots_used", self.core.used_slots()),
            ("pcm_bytes", self.sizes.pcm_bytes),
            ("dram_bytes", self.sizes.dram_bytes),
            ("dram_table_reserve_bytes", self.sizes.table_reserve_bytes),
            ("buffer_frames", u64::from(self.sizes.frames)),
            ("disk_reads", self.core.disk.counters.reads),
            ("disk_writes", self.core.disk.counters.writes),
        ]
        .into_iter()
        .chain(w.counters()) // Fig. 11: mean, worst 1 % / 5 %, variance, max
        .chain(self.core.destages.counters())
        .chain(self.core.disk.medium_counters())
        .collect()
    }

    fn tier(&mut self) -> Option<&mut dyn TierHooks> {
        Some(self)
    }
}

impl TierHooks for PcmPageStrategy {
    fn measure_recovery(&self, _now: SimTime) -> Result<crate::metrics::HostRecoveryMetrics> {
        crate::pcm_tier::measure_restart("pcmlogging-page", || {
            recover(&self.core.pcm).map(|r| (r.scan_ns, 0))
        })
    }

    fn take_tier_log(&mut self) -> Option<TierLog> {
        self.recording.take(&mut self.core.pcm, &mut self.core.disk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use media::pcm::PcmConfig;

    fn core(bytes: u64) -> PageLogging {
        let pcm = Pcm::new(PcmConfig {
            bytes,
            ..PcmConfig::default()
        })
        .unwrap();
        PageLogging::format(
            PageLogConfig {
                atl_entries: 4,
                page_bytes: 512,
                high_watermark: 0.99,
                low_watermark: 0.975,
                fault_free_before_commit_point: false,
                adaptive_segment_bytes: None,
                destage_interval_ns: 100_000_000,
            },
            pcm,
            Disk::new(media::disk::DiskKind::Ssd),
            Arc::new(|p| vec![p * 100; 4]),
        )
        .unwrap()
    }

    #[test]
    fn geometry_by_hand_and_read_back() {
        // 8 KiB PCM, 4 ATL entries: bitmap at 128; slots of 64 + 512 → 640 B; slots at 256.
        let c = core(8192);
        let g = c.geometry();
        assert_eq!((g.bitmap_off, g.slot_bytes, g.slots_off), (128, 640, 256));
        assert_eq!(g.slots, (8192 - 256) / 640);
        assert_eq!(Geometry::read(c.pcm.image()).unwrap(), g);
        assert!(formatted(&c.pcm));
    }

    #[test]
    fn fig_3_commit_abort_and_recovery_by_hand() {
        let mut c = core(8192);
        // T1 steals page 5, T2 commits page 7.
        let t = c.flush(1, 5, &[1, 1, 1, 1], SimTime::ZERO).unwrap();
        let ack = c.commit(2, &[(7, vec![2, 2, 2, 2])], t).unwrap();
        let r = recover(&c.pcm).unwrap();
        assert_eq!(r.pages, BTreeMap::from([(7, vec![2, 2, 2, 2])]));
        assert_eq!(r.discarded_uncommitted, 1);
        // T3 overwrites page 7 out of place: both versions valid until T3 commits.
        let t = c.flush(3, 7, &[3, 3, 3, 3], ack).unwrap();
        assert_eq!(c.used_slots(), 3);
        assert_eq!(recover(&c.pcm).unwrap().pages[&7], vec![2, 2, 2, 2]);
        let t = c.commit(3, &[], t).unwrap();
        assert_eq!(c.used_slots(), 2);
        assert_eq!(recover(&c.pcm).unwrap().pages[&7], vec![3, 3, 3, 3]);
        // T1 aborts: its page is discarded, page 5 reads as on disk.
        let t = c.abort(1, t).unwrap();
        assert_eq!(c.used_slots(), 1);
        assert_eq!(c.current(5), vec![500; 4]);
        // A buffer miss on page 7 is a PCM hit; on page 5 a disk read.
        c.read_page_time(7, t).unwrap();
        c.read_page_time(5, t).unwrap();
        assert_eq!(
            (c.counters.pcm_page_hits, c.counters.disk_page_reads),
            (1, 1)
        );
    }

    #[test]
    fn a_full_pcm_destages_committed_pages_to_disk() {
        let mut c = core(8192);
        let slots = c.geometry().slots;
        let mut t = SimTime::ZERO;
        for i in 0..slots + 3 {
            t = c.commit(i + 1, &[(i, vec![i + 7; 4])], t).unwrap();
            t = c.maintain(t).unwrap();
        }
        assert!(c.counters.destaged_pages > 0);
        for i in 0..slots + 3 {
            assert_eq!(c.current(i), vec![i + 7; 4]);
        }
        // Destaged pages are on disk with their committed contents.
        assert_eq!(c.disk.image()[&0], vec![7; 4]);
    }

    /// A crash with a loser's page in PCM and a commit cut short between its commit point
    /// and its frees (both versions of page 7 valid): the restart frees the loser's slot and
    /// the replaced version, then clears the ActiveTxList; recovery finds what it found
    /// before, and `open` resumes on the result and runs on. The planted restart bugs leave
    /// a PCM `open` refuses, or one whose recovery shows the loser.
    #[test]
    fn a_restart_that_writes_back_leaves_a_pcm_the_core_resumes_on() {
        use crate::strategy::pcmlogging::RestartFault;
        let mut c = core(8192);
        let t = c.commit(1, &[(7, vec![1; 4])], SimTime::ZERO).unwrap();
        let t = c.flush(2, 5, &[2; 4], t).unwrap();
        let t = c.flush(3, 7, &[3; 4], t).unwrap();
        // Commit 3's ATL clear persisted, its free of version 0 of page 7 did not.
        let i = c.atl.iter().position(|&x| x == 3).unwrap() as u64;
        let t = c.w64(c.geo.atl_addr(i), 0, t).unwrap();
        let img = c.pcm.image().to_vec();
        let cfg = c.pcm.config().clone();
        let before = recover(&c.pcm).unwrap();
        assert_eq!(before.pages[&7], vec![3; 4]);
        assert_eq!(
            (before.discarded_uncommitted, before.discarded_older),
            (1, 1)
        );
        let mut pcm = Pcm::from_image(cfg.clone(), img.clone()).unwrap();
        let r = restart(&mut pcm, t, RestartFault::None).unwrap();
        assert_eq!((r.freed, r.xid_max), (2, 3));
        assert!(r.end > t);
        let after = recover(&pcm).unwrap();
        assert_eq!(after.pages, before.pages);
        assert_eq!((after.discarded_uncommitted, after.discarded_older), (0, 0));
        let ssd = Disk::new(media::disk::DiskKind::Ssd);
        let init: crate::strategy::pcmlogging::InitialPage = Arc::new(|p| vec![p * 100; 4]);
        let mut d = PageLogging::open(c.cfg.clone(), pcm, ssd, init, r.end, false).unwrap();
        assert_eq!(d.used_slots(), 1);
        assert_eq!(d.current(7), vec![3; 4]);
        assert_eq!(d.current(5), vec![500; 4]);
        // Running on: the next version of page 7 replaces the resumed one.
        let t = d
            .commit(4, &[(7, vec![4; 4]), (5, vec![4; 4])], r.end)
            .unwrap();
        assert_eq!(d.used_slots(), 2);
        let again = recover(&d.pcm).unwrap();
        assert_eq!(again.pages[&7], vec![4; 4]);
        assert_eq!(again.pages[&5], vec![4; 4]);
        d.maintain(t).unwrap();
        // Planted: a replaced version kept is refused by `open`.
        let mut pcm = Pcm::from_image(cfg, img).unwrap();
        let r = restart(&mut pcm, t, RestartFault::KeepReplaced).unwrap();
        let ssd = Disk::new(media::disk::DiskKind::Ssd);
        let e = PageLogging::open(
            c.cfg.clone(),
            pcm,
            ssd,
            Arc::new(|p| vec![p; 4]),
            r.end,
            false,
        );
        assert!(e.is_err());
    }

    #[test]
    fn versions_wrap_mod_4_and_a_torn_superblock_is_an_error() {
        let mut c = core(8192);
        let mut t = SimTime::ZERO;
        for v in 0..6u64 {
            t = c.commit(v + 1, &[(2, vec![v; 4])], t).unwrap();
        }
        assert_eq!(recover(&c.pcm).unwrap().pages[&2], vec![5; 4]);
        let mut img = c.pcm.image().to_vec();
        img[16] = 0xff; // slots count beyond the image
        let p = Pcm::from_image(c.pcm.config().clone(), img).unwrap();
        assert!(recover(&p).is_err());
    }
}
