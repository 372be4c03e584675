//! `wal-pcm`: the WAL baseline of PCMLogging §6.1 — ARIES write-ahead logging whose DRAM
//! buffer pool is backed by a PCM page cache for dirty pages and a one-page PCM log buffer,
//! over a Table 2 disk (`host.pcm.external`). This file also holds the ARIES core shared
//! with `scmlogging` (strategy/scmlogging.rs: the whole PCM is the log, no data caching),
//! selected by [`Kind`].
//!
//! Paper (§6.1): "For WAL, we used for simplicity the whole PCM space for data caching and
//! reserved an additional page for archiving log records […] In all compared schemes, both
//! logs and data pages/records in PCM are asynchronously flushed out to the external disk."
//! The Introduction (Fig. 1b): "When a page is evicted from DRAM, it will be moved to the
//! PCM cache zone. In case the PCM cache zone is full, a replacement algorithm such as LRU
//! has to make room first. When a transaction commits, the log records buffered in DRAM
//! will be flushed to the PCM log zone." Recovery "still [has] to go through the analysis,
//! redo, and undo phases".
//!
//! # Commit rule
//!
//! A transaction is acked when its COMMIT record — and every record before it — is durable
//! in PCM (the log buffer, or the disk log for records already archived). The log is never
//! forced to the disk at commit; archiving a full log-buffer page to the disk is
//! asynchronous (§6.1 "asynchronously flushed out to the external disk").
//!
//! # PCM layout (byte by byte, little-endian u64 words)
//!
//! ```text
//! [0, 64)      superblock: w0 magic ("WALPCM01" / "SCMLOG01"), w1 page_bytes P,
//!              w2 log-area pages A, w3 cache frames K (scmlogging: 0),
//!              w4 disk log pages D (scmlogging: 0), w5 w6 0, w7 checksum(w0..w6)
//! [64, 128)    master slot 0 ┐ w0 counter (≥ 1), w1 checkpoint LSN, w2 redo LSN,
//! [128, 192)   master slot 1 ┘ w3 checksum(w0..w2); counter c lives in slot c mod 2
//! [192, 256)   unused
//! [256, +A·P)  log area. wal-pcm: the log buffer, A = `host.pcm.log_buffer_pages` (2,
//!              below). scmlogging: the
//!              whole log, circular, A = pcm_bytes / P pages.
//! then K × P   wal-pcm page frames: w0 page + 1 (0: never used), w1 page LSN,
//!              w2 slots n, w3 checksum(w0, w1, w2, values), w4.. the n slot values,
//!              zero padding to P bytes (a frame write is the whole page: ⌈P/64⌉ lines)
//! ```
//!
//! A log record is one 64 B PCM line (8 words): w0 LSN, w1 kind | txn << 8, w2 prevLSN
//! (all ones: none), w3 page, w4 slot, w5 before (UPDATE) / undoNextLSN (CLR) / lastLSN
//! (CKPT-TXN) / CKPT-BEGIN LSN (CKPT-END), w6 after, w7 checksum(w0..w6). Kinds: 1 BEGIN
//! 2 UPDATE 3 CLR 4 COMMIT 5 ABORT 6 END 7 CKPT-BEGIN 8 CKPT-TXN 9 CKPT-END. The LSN is the
//! record's number; record n lives in log page n / R at slot n mod R (R = P / 64). The
//! checksum covers the LSN, so a stale record of an earlier lap, a zeroed line and a torn
//! line (a subset of its 8-byte words) all fail to read as record n. Values are record
//! images (a record's value is a 64-bit digest in the data model), so redo and undo are
//! idempotent.
//!
//! Disk (the Table 2 store, `media::disk`): DB page p is disk page p, its slot values
//! followed by one word, the page LSN. wal-pcm archives log page s at disk page
//! `DISK_LOG_BASE + s mod D` (D = `host.log_pages`): the R records' 8 words each.
//!
//! # Normal processing
//!
//! - Every record is written to PCM when it is appended (one line write); "flush the DRAM
//!   log buffer at commit" costs the same line writes, only later. A force waits for every
//!   record write issued so far.
//! - wal-pcm log buffer: the records of log page s go to PCM buffer page s mod A. When page
//!   s is full it is archived (one disk write, asynchronous); page s+A may reuse the buffer
//!   page only once that archive write has completed — before, its records' PCM writes are
//!   issued when the archive completes (counted as `log_buffer_waits`). The paper's "one
//!   page" is the page being filled; the second is the page being archived (the paper's
//!   Fig. 14 variant is the same shape: a 1 MB buffer with a 512 KB transfer size).
//! - scmlogging log: circular in PCM; record n may overwrite record n − A·R only if that one
//!   is older than everything restart may read (the newest acked master's redo LSN and the
//!   first record of every active transaction), else the run fails naming
//!   `host.pcm.pcm_bytes`.
//! - WAL rule: a page image goes to stable storage (wal-pcm: a PCM frame; scmlogging: the
//!   disk) only once the log up to its page LSN is durable: the write is issued at the
//!   force's completion.
//! - wal-pcm page cache: a dirty page leaving DRAM is written to a free or clean frame,
//!   never over the frame holding that page's current stable version (that frame is
//!   released); so a torn frame write loses nothing stable. Frames are dirty (newer than
//!   the disk), destaging (disk write in flight), clean (same as disk; a read hit serves
//!   from it) or free. Destaging: LRU dirty frames are written to the disk when more than
//!   `high_watermark` of the frames are dirty, until at most `low_watermark` are, at most
//!   two destage writes queued on the disk at a time (its FIFO also serves log archives
//!   and page reads); a frame is clean only once its disk write completed. When no frame
//!   is reusable at the eviction and the page has no frame, the page is written to the disk
//!   instead (one disk write, as a synchronous destage would cost; a page with a frame
//!   waits for a destage). With no free or clean frame, a DRAM
//!   eviction destages the LRU dirty frame and waits for it.
//! - Commit: COMMIT, force (the ack), END. Rollback: ABORT, undo newest first with CLRs
//!   (through the buffer pool), END; no force.
//! - Checkpoint every `host.pcm.checkpoint_interval_ms` of simulated time (PostgreSQL's
//!   checkpoint_timeout, 5 minutes as in §6.2.4), or when the log written since the last
//!   one reaches half the log area (PostgreSQL's checkpoint_segments): CKPT-BEGIN, every
//!   DRAM-dirty page is written to stable storage (wal-pcm: PCM frames, which are stable;
//!   scmlogging: disk), CKPT-TXN per active transaction, CKPT-END, force; once those writes,
//!   every earlier stable write and the force are complete, the master (slot c mod 2) is
//!   written with checkpoint LSN = redo LSN = the CKPT-BEGIN LSN.
//!
//! # Recovery, from the PCM image and the disk image alone
//!
//! 1. Superblock (checked), master: the valid slot with the larger counter (none: 0, 0).
//! 2. Log: record n is read from its PCM place, else (wal-pcm) from the disk log page; the
//!    forward scan runs from the checkpoint LSN while records read, and stops at the first
//!    that does not.
//! 3. Stable page versions: every valid frame (checksum) and every disk page; per page the
//!    highest page LSN wins, a PCM frame on a tie.
//! 4. Analysis from the checkpoint (as ARIES; CKPT-TXN entries seed the losers).
//! 5. Redo: every UPDATE/CLR from the redo LSN, in LSN order, unconditionally (repeating
//!    history with value records needs no page-LSN test, and a disk page torn at slot
//!    granularity is repaired whatever its LSN word says).
//! 6. Undo: losers newest LSN first along prevLSN / undoNextLSN.
//!
//! Recovery time: the I/O this restart does — the PCM lines it reads
//! (superblock, masters, log records read from PCM, one header line per frame, whole frames
//! it loads) at `Pcm::scan_ns`, plus one disk read per disk log page and per disk data page
//! it loads for redo/undo, at Table 2's read latency, one at a time.
//!
//! # Why it is right, case by case
//!
//! - Acked commit: every record up to COMMIT was durable at the ack (force), each in PCM or
//!   archived, and a PCM buffer page is reused only after its archive completed, so all of
//!   them read; the scan reaches COMMIT (no gap before it) and the transaction is a winner.
//!   Its updates are in a stable version or after the redo LSN: the master's redo LSN is a
//!   CKPT-BEGIN whose checkpoint made every earlier change stable before the master was
//!   written.
//! - Loser (no durable COMMIT, or aborted without END): undone from its records; every
//!   change of it in a stable version has its UPDATE durable first (WAL rule), and records
//!   a restart may need are never overwritten (truncation rule). CLRs of a partial rollback
//!   are redone and followed.
//! - Commit in flight: COMMIT read (winner, all earlier records read) or not (loser).
//! - Log holes: record writes on different chips may complete out of order; the scan stops
//!   at the first unreadable record, and nothing after it was acked (an ack waits for every
//!   earlier record write).
//! - Torn frame write: fails its checksum; the page's previous stable version is intact in
//!   another frame or on the disk (a frame is overwritten only when free or clean).
//! - Torn disk page: wal-pcm destages from a frame that stays dirty (not reusable) until
//!   the disk write completes, so the PCM copy wins (same LSN, PCM first); a bypass write
//!   (wal-pcm, a page without a frame) and scmlogging: the
//!   torn mix is of two versions both at or after the checkpoint's state (the master waited
//!   for every stable write issued before it), so every slot they differ in has a record
//!   at or after the redo LSN, which unconditional redo replays.
//! - Torn master: its checksum fails and the other slot names the previous checkpoint,
//!   whose log is kept until the new master is acked.
//!
//! Not done: restart writes nothing back and the run does not continue after it; the
//! emulated SSD as the external store; update strategies other than out-of-place.

use crate::buffer::Frame;
use crate::data::{Layout, PageImage, PageNo};
use crate::engine::{fetch, Core, Fetch};
use crate::pcm_tier::{Sizes, TierHooks, TierLog, TierRecording};
use crate::strategy::{RecoverCtx, RecoveredDb, Strategy, StrategyInfo};
use crate::{HostConfig, HostError, LockLevel, Result};
use media::disk::{Disk, DiskKind};
use media::pcm::Pcm;
use sim::{SimTime, TxnId};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

pub static INFO: StrategyInfo = StrategyInfo {
    name: "wal-pcm",
    summary: "PCMLogging's WAL baseline (§6.1): ARIES with a PCM page cache for dirty pages and a PCM log buffer, log and pages archived to a Table 2 disk asynchronously",
    lock_level: LockLevel::Record,
    check,
    create: create_wal_pcm,
    recover: recover_from_device,
};

/// Which of the two WAL variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// PCM = page cache + log buffer; the log lives on the disk.
    WalPcm,
    /// PCM = the whole log; no data caching in PCM.
    ScmLogging,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::WalPcm => "wal-pcm",
            Kind::ScmLogging => "scmlogging",
        }
    }
    fn magic(self) -> u64 {
        match self {
            Kind::WalPcm => u64::from_le_bytes(*b"WALPCM01"),
            Kind::ScmLogging => u64::from_le_bytes(*b"SCMLOG01"),
        }
    }
}

/// Bytes of one log record (one PCM line).
pub const REC_BYTES: u64 = 64;
const MASTER0: u64 = 64;
const LOG_AREA: u64 = 256;
/// Disk page numbers of the archived log (far beyond any DB page).
pub const DISK_LOG_BASE: u64 = 1 << 40;
const NONE: u64 = u64::MAX;
/// wal-pcm: watermark destage writes queued on the disk at once.
const DESTAGES_IN_FLIGHT: usize = 2;

const BEGIN: u8 = 1;
const UPDATE: u8 = 2;
const CLR: u8 = 3;
const COMMIT: u8 = 4;
const ABORT: u8 = 5;
const END: u8 = 6;
const CKPT_BEGIN: u8 = 7;
const CKPT_TXN: u8 = 8;
const CKPT_END: u8 = 9;

pub(crate) fn check(cfg: &HostConfig, p: &'static ssd::ProtocolInfo) -> Result<()> {
    crate::pcm_tier::check_protocol(cfg.strategy.as_str(), p)?;
    cfg.pcm.validate()?;
    if cfg.lock_level == LockLevel::Page {
        return Err(HostError::Config {
            key: "host.lock_level".into(),
            reason: "the PCM WAL baselines run record-level locking as PCMLogging does (§6.1); use \"record\" or \"auto\"".into(),
        });
    }
    if cfg.update != "out-of-place" {
        return Err(HostError::Config {
            key: "host.update".into(),
            reason: format!(
                "{}: the PCM WAL baselines write whole pages (out-of-place), not {}",
                cfg.strategy, cfg.update
            ),
        });
    }
    let p = u64::from(cfg.page_bytes);
    if p < 2 * REC_BYTES || p % u64::from(cfg.pcm.unit_bytes.max(64)) != 0 || p % 64 != 0 {
        return Err(HostError::Config {
            key: "host.page_bytes".into(),
            reason: format!(
                "{p} B: the PCM WAL baselines need a page of at least 128 B that is a multiple of host.pcm.unit_bytes and of 64 B lines"
            ),
        });
    }
    if cfg.pcm.checkpoint_interval_ms == 0 {
        return Err(HostError::Config {
            key: "host.pcm.checkpoint_interval_ms".into(),
            reason: "must be at least 1".into(),
        });
    }
    Ok(())
}

pub(crate) fn recover_from_device(_ctx: &mut RecoverCtx<'_>) -> Result<RecoveredDb> {
    Err(HostError::Config {
        key: "host.strategy".into(),
        reason: "the PCM WAL baselines recover from their PCM and disk images (pcm_tier), not from the device".into(),
    })
}

/// A 64-bit checksum of `words` that is not 0 for all-zero input.
fn checksum(words: impl IntoIterator<Item = u64>) -> u64 {
    let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
    for w in words {
        h = (h ^ w).wrapping_mul(0x0000_0100_0000_01B3);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    }
    h ^ (h >> 31)
}

fn word(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
}

/// A log record (module docs: layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rec {
    pub lsn: u64,
    pub kind: u8,
    pub txn: u64,
    pub prev: u64,
    pub page: u64,
    pub slot: u64,
    pub a: u64,
    pub b: u64,
}

impl Rec {
    fn words(&self) -> [u64; 8] {
        let w = [
            self.lsn,
            u64::from(self.kind) | self.txn << 8,
            self.prev,
            self.page,
            self.slot,
            self.a,
            self.b,
        ];
        let c = checksum(w);
        [w[0], w[1], w[2], w[3], w[4], w[5], w[6], c]
    }

    fn bytes(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        for (i, w) in self.words().iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Reads record `lsn` from its 8 words; None if they are not that record.
    fn from_words(w: &[u64], lsn: u64) -> Option<Rec> {
        if w.len() != 8 || w[0] != lsn || checksum(w[..7].iter().copied()) != w[7] {
            return None;
        }
        Some(Rec {
            lsn,
            kind: (w[1] & 0xff) as u8,
            txn: w[1] >> 8,
            prev: w[2],
            page: w[3],
            slot: w[4],
            a: w[5],
            b: w[6],
        })
    }

    fn from_bytes(b: &[u8], lsn: u64) -> Option<Rec> {
        let w: Vec<u64> = (0..8).map(|i| word(b, i)).collect();
        Rec::from_words(&w, lsn)
    }
}

/// The PCM geometry the superblock records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geo {
    pub kind: Kind,
    pub page_bytes: u64,
    pub log_area_pages: u64,
    pub frames: u64,
    pub disk_log_pages: u64,
}

impl Geo {
    fn rpp(&self) -> u64 {
        self.page_bytes / REC_BYTES
    }
    fn log_addr(&self, n: u64) -> u64 {
        let r = self.rpp();
        LOG_AREA + (n / r % self.log_area_pages) * self.page_bytes + (n % r) * REC_BYTES
    }
    fn frame_addr(&self, f: u64) -> u64 {
        LOG_AREA + self.log_area_pages * self.page_bytes + f * self.page_bytes
    }
    fn pcm_bytes(&self) -> u64 {
        self.frame_addr(self.frames)
    }
    fn superblock(&self) -> [u8; 64] {
        let w = [
            self.kind.magic(),
            self.page_bytes,
            self.log_area_pages,
            self.frames,
            self.disk_log_pages,
            0,
            0,
        ];
        let mut out = [0u8; 64];
        for (i, x) in w.iter().chain([checksum(w)].iter()).enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&x.to_le_bytes());
        }
        out
    }
    fn read(pcm: &Pcm) -> std::result::Result<Geo, String> {
        if pcm.config().bytes < LOG_AREA {
            return Err("pcm smaller than the superblock and masters".into());
        }
        let b = pcm.peek(0, 64);
        let w: Vec<u64> = (0..8).map(|i| word(b, i)).collect();
        if checksum(w[..7].iter().copied()) != w[7] {
            return Err("superblock checksum mismatch".into());
        }
        let kind = if w[0] == Kind::WalPcm.magic() {
            Kind::WalPcm
        } else if w[0] == Kind::ScmLogging.magic() {
            Kind::ScmLogging
        } else {
            return Err(format!("superblock magic {:#x} is not a PCM WAL's", w[0]));
        };
        let g = Geo {
            kind,
            page_bytes: w[1],
            log_area_pages: w[2],
            frames: w[3],
            disk_log_pages: w[4],
        };
        if g.page_bytes < 2 * REC_BYTES
            || g.page_bytes % REC_BYTES != 0
            || g.log_area_pages == 0
            || (kind == Kind::WalPcm && g.disk_log_pages == 0)
            || g.log_area_pages.checked_mul(g.page_bytes).is_none()
            || g.frames.checked_mul(g.page_bytes).is_none()
            || g.pcm_bytes() > pcm.config().bytes
        {
            return Err(format!("superblock geometry {g:?} does not fit the PCM"));
        }
        Ok(g)
    }
}

fn master_bytes(counter: u64, ckpt: u64, redo: u64) -> [u8; 64] {
    let w = [counter, ckpt, redo];
    let mut out = [0u8; 64];
    for (i, x) in w.iter().chain([checksum(w)].iter()).enumerate() {
        out[i * 8..i * 8 + 8].copy_from_slice(&x.to_le_bytes());
    }
    out
}

/// The valid master with the larger counter: (counter, checkpoint LSN, redo LSN).
fn read_master(pcm: &Pcm) -> Option<(u64, u64, u64)> {
    (0..2)
        .filter_map(|k| {
            let b = pcm.peek(MASTER0 + 64 * k, 64);
            let w: Vec<u64> = (0..4).map(|i| word(b, i)).collect();
            (w[0] >= 1 && w[0] % 2 == k && checksum(w[..3].iter().copied()) == w[3])
                .then_some((w[0], w[1], w[2]))
        })
        .max()
}

/// Frame bytes: header, values, zero padding to the page.
fn frame_bytes(page_bytes: u64, page: u64, lsn: u64, values: &[u64]) -> Vec<u8> {
    let head = [page + 1, lsn, values.len() as u64];
    let c = checksum(head.iter().copied().chain(values.iter().copied()));
    let mut out = vec![0u8; page_bytes as usize];
    for (i, x) in head
        .iter()
        .chain([c].iter())
        .chain(values.iter())
        .enumerate()
    {
        out[i * 8..i * 8 + 8].copy_from_slice(&x.to_le_bytes());
    }
    out
}

/// A frame's (page, LSN, values) if it is valid.
fn read_frame(pcm: &Pcm, geo: &Geo, f: u64) -> Option<(u64, u64, Vec<u64>)> {
    let a = geo.frame_addr(f);
    let h = pcm.peek(a, 32);
    let (p1, lsn, n, c) = (word(h, 0), word(h, 1), word(h, 2), word(h, 3));
    if p1 == 0 || n > (geo.page_bytes - 32) / 8 {
        return None;
    }
    let vb = pcm.peek(a + 32, (n * 8) as usize);
    let values: Vec<u64> = (0..n as usize).map(|i| word(vb, i)).collect();
    if checksum([p1, lsn, n].into_iter().chain(values.iter().copied())) != c {
        return None;
    }
    Some((p1 - 1, lsn, values))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FState {
    Free,
    Dirty,
    Clean,
    /// Disk write in flight until `end`; `stale`: a newer version of the page is in another
    /// frame, so the frame becomes free (not clean) when the write completes.
    Destaging {
        end: SimTime,
        stale: bool,
    },
}

#[derive(Clone, Copy, Debug)]
struct FrameMeta {
    page: u64,
    lsn: u64,
    state: FState,
    stamp: u64,
    /// The frame may be overwritten from this instant (the write that superseded it, or
    /// the destage that made it clean, has completed).
    free_at: SimTime,
}

struct Tx {
    txn: TxnId,
    first: u64,
    last: u64,
    /// (lsn, page, slot, before, prev) of its updates, oldest first.
    undo: Vec<(u64, PageNo, u16, u64, u64)>,
}

#[derive(Default)]
struct Counters {
    log_records: u64,
    log_archive_writes: u64,
    log_buffer_waits: u64,
    pcm_page_writes: u64,
    pcm_hits: u64,
    destages: u64,
    sync_destages: u64,
    disk_bypass_writes: u64,
    checkpoints: u64,
    private_undos: u64,
    /// DB page writes to the disk, and the records they changed there (Fig. 8b).
    disk_page_writes: u64,
    disk_dirty_records: u64,
}

pub struct PcmWal {
    kind: Kind,
    geo: Geo,
    pub pcm: Pcm,
    pub disk: Disk,
    sizes: Sizes,
    buffer_frames: u32,
    layout: Layout,
    recording: TierRecording,
    // log
    next_lsn: u64,
    /// The latest completion of any log record's PCM write issued.
    log_ack: SimTime,
    /// wal-pcm: the records of the page being filled (its archive image), and per buffer
    /// page when its last archive write completes.
    tail_words: Vec<u64>,
    archive_end: Vec<SimTime>,
    txs: Vec<Option<Tx>>,
    /// Masters written: (ack, redo LSN).
    masters: Vec<(SimTime, u64)>,
    master_counter: u64,
    /// A checkpoint's master waiting for its writes: (when they complete, CKPT-BEGIN LSN).
    pending_master: Option<(SimTime, u64)>,
    last_ckpt: SimTime,
    bytes_since_ckpt: u64,
    ckpt_every_ns: u64,
    ckpt_log_bytes: u64,
    /// The latest completion of any stable page write issued (PCM frame or disk).
    data_ack: SimTime,
    // wal-pcm page cache
    frames: Vec<FrameMeta>,
    page_frame: Vec<u32>,
    free: Vec<u32>,
    clean_lru: BTreeSet<(u64, u32)>,
    dirty_lru: BTreeSet<(u64, u32)>,
    destaging: VecDeque<u32>,
    stamp: u64,
    /// Between crossing the high watermark and reaching the low one.
    destaging_on: bool,
    high: u64,
    low: u64,
    fault_skip_wal_rule: bool,
    fault_early_ack: bool,
    fault_early_destage_free: bool,
    k: Counters,
}

fn cerr(what: &str) -> impl Fn(String) -> HostError + '_ {
    move |e| HostError::Stuck(format!("{what}: {e}"))
}

fn create_wal_pcm(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    Ok(Box::new(PcmWal::create(Kind::WalPcm, cfg, core)?))
}

pub(crate) fn create_scm(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    Ok(Box::new(PcmWal::create(Kind::ScmLogging, cfg, core)?))
}

impl PcmWal {
    pub(crate) fn create(kind: Kind, cfg: &HostConfig, core: &mut Core) -> Result<PcmWal> {
        let s = &cfg.pcm;
        // DRAM and PCM sizes scale as pcmlogging's (`PcmSettings::sizes`), without its
        // per-unit Mapping Table reserve: this strategy's own tables are reserved below.
        let sizes = crate::pcm_tier::PcmSettings {
            table_entry_bytes: 0,
            ..s.clone()
        }
        .sizes(cfg, &core.layout)?;
        let p = u64::from(cfg.page_bytes);
        let cfg_err = |key: &str, reason: String| HostError::Config {
            key: key.into(),
            reason,
        };
        let slots_max = (0..core.layout.pages)
            .map(|q| u64::from(core.layout.slots(PageNo(q))))
            .max()
            .unwrap_or(0);
        if kind == Kind::WalPcm && 32 + 8 * slots_max > p {
            return Err(cfg_err(
                "host.page_bytes",
                format!(
                    "a PCM frame of {p} B cannot hold a 32 B header and {slots_max} slot values of 8 B"
                ),
            ));
        }
        let (log_area_pages, frames, disk_log_pages) = match kind {
            Kind::WalPcm => {
                if cfg.log_pages < 4 {
                    return Err(cfg_err(
                        "host.log_pages",
                        "wal-pcm archives its log to a circular disk area of host.log_pages pages; at least 4".into(),
                    ));
                }
                if s.log_buffer_pages < 2 {
                    return Err(cfg_err(
                        "host.pcm.log_buffer_pages",
                        "wal-pcm needs at least 2 PCM log-buffer pages (one filling, one being archived)".into(),
                    ));
                }
                (
                    s.log_buffer_pages,
                    sizes.pcm_bytes / p,
                    u64::from(cfg.log_pages),
                )
            }
            Kind::ScmLogging => (sizes.pcm_bytes / p, 0, 0),
        };
        if kind == Kind::WalPcm && frames < 2 {
            return Err(cfg_err(
                "host.pcm.pcm_bytes",
                format!(
                    "{} B holds {frames} page frames of {p} B; wal-pcm needs at least 2",
                    sizes.pcm_bytes
                ),
            ));
        }
        if kind == Kind::ScmLogging && log_area_pages < 2 {
            return Err(cfg_err(
                "host.pcm.pcm_bytes",
                format!(
                    "{} B holds {log_area_pages} log pages of {p} B; scmlogging needs at least 2",
                    sizes.pcm_bytes
                ),
            ));
        }
        // DRAM: the pool after the strategy's own tables (one 32 B directory entry per PCM
        // frame, one Transaction Table entry per client), as pcmlogging reserves its own.
        let reserve = frames * 32 + u64::from(cfg.clients) * s.tx_entry_bytes;
        let pool = sizes.dram_bytes.saturating_sub(reserve) / p;
        if pool < 2 {
            return Err(cfg_err(
                "host.pcm.dram_bytes",
                format!(
                    "{} B leaves {pool} buffer frames after {reserve} B of tables (need at least 2)",
                    sizes.dram_bytes
                ),
            ));
        }
        let buffer_frames = u32::try_from(pool).unwrap_or(u32::MAX);
        // §6.1 runs every scheme under wait-die.
        crate::pcm_tier::size_dram(core, buffer_frames);
        let geo = Geo {
            kind,
            page_bytes: p,
            log_area_pages,
            frames,
            disk_log_pages,
        };
        let ub = u64::from(s.unit_bytes);
        let mut pcm = crate::pcm_tier::new_pcm(s, geo.pcm_bytes().div_ceil(ub) * ub)?;
        pcm.write(0, &geo.superblock(), SimTime::ZERO)
            .map_err(cerr("formatting pcm"))?;
        // The crash checker records the run (the engine then logs NAND operations); keep
        // the PCM and disk write logs only then (`tags.keep` is also set by
        // `host.measure_recovery`, and a full-scale log would take gigabytes).
        let record = core.device.core.nand.log().is_some();
        let mut disk = crate::external::open(cfg, core)?;
        let recording = if record {
            pcm.set_logging(true);
            disk.set_logging(true);
            TierRecording::new(pcm.image().to_vec(), BTreeMap::new())
        } else {
            TierRecording::off()
        };
        crate::pcm_tier::attach_tier_sink(core, &mut pcm, &mut disk)?;
        let ckpt_log_bytes = match kind {
            Kind::WalPcm => disk_log_pages * p / 2,
            Kind::ScmLogging => log_area_pages * p / 2,
        };
        Ok(PcmWal {
            kind,
            geo,
            pcm,
            disk,
            sizes,
            buffer_frames,
            layout: core.layout.clone(),
            recording,
            next_lsn: 0,
            log_ack: SimTime::ZERO,
            tail_words: Vec::new(),
            archive_end: vec![SimTime::ZERO; log_area_pages as usize],
            txs: (0..cfg.clients).map(|_| None).collect(),
            masters: Vec::new(),
            master_counter: 0,
            pending_master: None,
            last_ckpt: SimTime::ZERO,
            bytes_since_ckpt: 0,
            ckpt_every_ns: s.checkpoint_interval_ms.saturating_mul(1_000_000),
            ckpt_log_bytes,
            data_ack: SimTime::ZERO,
            frames: (0..frames)
                .map(|_| FrameMeta {
                    page: NONE,
                    lsn: 0,
                    state: FState::Free,
                    stamp: 0,
                    free_at: SimTime::ZERO,
                })
                .collect(),
            page_frame: if kind == Kind::WalPcm {
                vec![u32::MAX; core.layout.pages as usize]
            } else {
                Vec::new()
            },
            free: (0..frames as u32).rev().collect(),
            clean_lru: BTreeSet::new(),
            dirty_lru: BTreeSet::new(),
            destaging: VecDeque::new(),
            stamp: 0,
            destaging_on: false,
            high: ((frames as f64) * s.high_watermark).floor() as u64,
            low: ((frames as f64) * s.low_watermark).floor() as u64,
            fault_skip_wal_rule: s.fault_skip_wal_rule,
            fault_early_destage_free: s.fault_early_destage_free,
            fault_early_ack: cfg.fault_early_commit_ack,
            k: Counters::default(),
        })
    }

    /// The oldest LSN restart may still read.
    fn needed_lsn(&self, now: SimTime) -> u64 {
        let mut lsn = self
            .masters
            .iter()
            .rev()
            .find(|m| m.0 <= now)
            .map_or(0, |m| m.1);
        for t in self.txs.iter().flatten() {
            lsn = lsn.min(t.first);
        }
        lsn
    }

    /// Appends a record: writes it to its PCM place (wal-pcm: archiving full buffer pages).
    fn append(&mut self, core: &mut Core, mut r: Rec, now: SimTime) -> Result<u64> {
        let n = self.next_lsn;
        r.lsn = n;
        let rpp = self.geo.rpp();
        let mut at = now;
        match self.kind {
            Kind::WalPcm => {
                if n > 0 && n % rpp == 0 {
                    self.archive(core, n / rpp - 1, now)?;
                }
                let slot = (n / rpp % self.geo.log_area_pages) as usize;
                if self.archive_end[slot] > now {
                    // The buffer page still holds a page whose archive is in flight.
                    if n % rpp == 0 {
                        self.k.log_buffer_waits += 1;
                    }
                    at = self.archive_end[slot];
                }
            }
            Kind::ScmLogging => {
                let cap = self.geo.log_area_pages * rpp;
                if n >= cap && n - cap >= self.needed_lsn(now) {
                    return Err(HostError::Config {
                        key: "host.pcm.pcm_bytes".into(),
                        reason: format!(
                            "the PCM log ({} pages) is full: record {n} would overwrite record {}, which restart still needs (oldest needed: {}); raise host.pcm.pcm_bytes or lower host.pcm.checkpoint_interval_ms",
                            self.geo.log_area_pages,
                            n - cap,
                            self.needed_lsn(now)
                        ),
                    });
                }
            }
        }
        let t = self
            .pcm
            .write(self.geo.log_addr(n), &r.bytes(), at)
            .map_err(cerr("log write"))?;
        if self.kind == Kind::WalPcm {
            self.tail_words.extend(r.words());
        }
        self.log_ack = self.log_ack.max(t);
        self.next_lsn += 1;
        self.bytes_since_ckpt += REC_BYTES;
        self.k.log_records += 1;
        core.stats.log_records += 1;
        core.stats.log_bytes += REC_BYTES;
        Ok(n)
    }

    /// wal-pcm: writes the full log page `s` (its records' words) to the disk log area.
    fn archive(&mut self, core: &mut Core, s: u64, now: SimTime) -> Result<()> {
        let d = self.geo.disk_log_pages;
        let rpp = self.geo.rpp();
        if s >= d && (s - d + 1) * rpp > self.needed_lsn(now) {
            return Err(HostError::Config {
                key: "host.log_pages".into(),
                reason: format!(
                    "the disk log area ({d} pages) is full: log page {s} would overwrite page {}, which restart still needs (oldest needed LSN {}); raise host.log_pages or lower host.pcm.checkpoint_interval_ms",
                    s - d,
                    self.needed_lsn(now)
                ),
            });
        }
        let words = std::mem::take(&mut self.tail_words);
        let end = self
            .disk
            .write(DISK_LOG_BASE + s % d, words, now)
            .map_err(cerr("log archive write"))?;
        // Not part of `log_ack`: the page's records are durable in PCM already, and the
        // buffer page is reused only after this write completes.
        self.archive_end[(s % self.geo.log_area_pages) as usize] = end;
        self.k.log_archive_writes += 1;
        core.stats.log_page_writes += 1;
        Ok(())
    }

    /// When every record appended so far is durable.
    fn force(&mut self, core: &mut Core, now: SimTime) -> SimTime {
        core.stats.log_forces += 1;
        self.log_ack.max(now)
    }

    fn tx(&mut self, c: u32) -> Result<&mut Tx> {
        self.txs[c as usize]
            .as_mut()
            .ok_or_else(|| HostError::Stuck(format!("internal: client {c} has no transaction")))
    }

    fn touch(&mut self, f: u32) {
        self.stamp += 1;
        let m = &mut self.frames[f as usize];
        match m.state {
            FState::Clean => {
                self.clean_lru.remove(&(m.stamp, f));
                self.clean_lru.insert((self.stamp, f));
            }
            FState::Dirty => {
                self.dirty_lru.remove(&(m.stamp, f));
                self.dirty_lru.insert((self.stamp, f));
            }
            _ => {}
        }
        m.stamp = self.stamp;
    }

    /// Frame `f` held the previous stable version of a page whose newer version is being
    /// written elsewhere, complete at `until`: `f` may be overwritten only from then on (a
    /// crash before leaves the newer write torn and `f` the page's stable version).
    fn release(&mut self, f: u32, until: SimTime) {
        let m = self.frames[f as usize];
        let fm = &mut self.frames[f as usize];
        fm.free_at = fm.free_at.max(until);
        match m.state {
            FState::Clean => {
                self.clean_lru.remove(&(m.stamp, f));
                self.free.push(f);
                fm.state = FState::Free;
            }
            FState::Dirty => {
                self.dirty_lru.remove(&(m.stamp, f));
                self.free.push(f);
                fm.state = FState::Free;
            }
            FState::Destaging { end, .. } => {
                fm.state = FState::Destaging { end, stale: true };
            }
            FState::Free => {}
        }
    }

    /// Writes frame `f`'s page to the disk (asynchronous); returns the write's end.
    fn destage(&mut self, f: u32, now: SimTime) -> Result<SimTime> {
        let m = self.frames[f as usize];
        debug_assert_eq!(m.state, FState::Dirty);
        let (page, lsn, mut values) = read_frame(&self.pcm, &self.geo, u64::from(f))
            .ok_or_else(|| HostError::Stuck(format!("internal: dirty frame {f} reads invalid")))?;
        if page != m.page || lsn != m.lsn {
            return Err(HostError::Stuck(format!(
                "internal: frame {f} holds page {page} lsn {lsn}, the directory says {} lsn {}",
                m.page, m.lsn
            )));
        }
        // The read of the frame out of PCM (the page's lines).
        let (_, t) = self
            .pcm
            .read(
                self.geo.frame_addr(u64::from(f)),
                self.geo.page_bytes as usize,
                now,
            )
            .map_err(cerr("destage read"))?;
        values.push(lsn);
        let end = self.disk_write_page(page, values, t)?;
        self.dirty_lru.remove(&(m.stamp, f));
        if self.fault_early_destage_free {
            // The planted bug: clean (reusable) before the disk holds the page.
            self.frames[f as usize].state = FState::Clean;
            self.clean_lru.insert((m.stamp, f));
        } else {
            self.frames[f as usize].state = FState::Destaging { end, stale: false };
            self.destaging.push_back(f);
        }
        self.k.destages += 1;
        self.data_ack = self.data_ack.max(end);
        Ok(end)
    }

    /// Completes the destages whose disk write ended by `now`.
    fn complete_destages(&mut self, now: SimTime) {
        while let Some(&f) = self.destaging.front() {
            let FState::Destaging { end, stale } = self.frames[f as usize].state else {
                self.destaging.pop_front();
                continue;
            };
            if end > now {
                break;
            }
            self.destaging.pop_front();
            let fm = &mut self.frames[f as usize];
            fm.free_at = fm.free_at.max(end);
            if stale {
                self.frames[f as usize].state = FState::Free;
                self.free.push(f);
            } else {
                self.frames[f as usize].state = FState::Clean;
                let s = self.frames[f as usize].stamp;
                self.clean_lru.insert((s, f));
            }
        }
    }

    /// Is a free or clean frame reusable at `now`?
    fn frame_ready(&mut self, now: SimTime) -> bool {
        self.complete_destages(now);
        self.free
            .last()
            .map(|&f| self.frames[f as usize].free_at <= now)
            .unwrap_or(false)
            || self
                .clean_lru
                .iter()
                .next()
                .is_some_and(|&(_, f)| self.frames[f as usize].free_at <= now)
    }

    /// A frame to write a page into, and from when it may be written.
    fn take_frame(&mut self, now: SimTime) -> Result<(u32, SimTime)> {
        self.complete_destages(now);
        if let Some(f) = self.free.pop() {
            return Ok((f, now.max(self.frames[f as usize].free_at)));
        }
        if let Some(&(s, f)) = self.clean_lru.iter().next() {
            self.clean_lru.remove(&(s, f));
            let p = self.frames[f as usize].page;
            if self.page_frame[p as usize] == f {
                self.page_frame[p as usize] = u32::MAX;
            }
            self.frames[f as usize].state = FState::Free;
            return Ok((f, now.max(self.frames[f as usize].free_at)));
        }
        // Everything is dirty or destaging: wait for the oldest destage (start one if none).
        if self.destaging.is_empty() {
            let Some(&(_, f)) = self.dirty_lru.iter().next() else {
                return Err(HostError::Stuck("internal: no pcm frame at all".into()));
            };
            self.destage(f, now)?;
        }
        self.k.sync_destages += 1;
        let Some(&f) = self.destaging.front() else {
            // (Only with the planted early-free bug: the destaged frame is clean already.)
            return self.take_frame(now);
        };
        let FState::Destaging { end, .. } = self.frames[f as usize].state else {
            return Err(HostError::Stuck(
                "internal: destage queue out of step".into(),
            ));
        };
        self.complete_destages(end);
        self.take_frame(end)
    }

    /// Makes a page image stable (wal-pcm: a PCM frame; scmlogging: the disk) under the WAL
    /// rule; returns when the write completes.
    fn write_stable(
        &mut self,
        core: &mut Core,
        page: PageNo,
        values: Vec<u64>,
        lsn: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        let at = if self.fault_skip_wal_rule {
            now
        } else {
            self.force(core, now)
        };
        core.stats.page_writes += 1;
        // Only a page with no frame: then the disk holds its newest stable version, so a
        // torn bypass write mixes two versions both at or after the last checkpoint's state,
        // which redo repairs (a page with a frame could have an older disk copy under it).
        let bypass = self.kind == Kind::WalPcm
            && self.page_frame[page.0 as usize] == u32::MAX
            && !self.frame_ready(at);
        let end = match self.kind {
            Kind::ScmLogging => {
                let mut v = values;
                v.push(lsn);
                self.disk_write_page(page.0, v, at)?
            }
            // Every frame is dirty or being destaged: the page (which has no frame) goes to
            // the disk instead of waiting for a destage (one disk write either way).
            Kind::WalPcm if bypass => {
                let mut v = values;
                v.push(lsn);
                self.k.disk_bypass_writes += 1;
                self.disk_write_page(page.0, v, at)?
            }
            Kind::WalPcm => {
                let (f, from) = self.take_frame(at)?;
                let bytes = frame_bytes(self.geo.page_bytes, page.0, lsn, &values);
                let end = self
                    .pcm
                    .write(self.geo.frame_addr(u64::from(f)), &bytes, from)
                    .map_err(cerr("frame write"))?;
                let old = self.page_frame[page.0 as usize];
                if old != u32::MAX && old != f {
                    self.release(old, end);
                }
                self.page_frame[page.0 as usize] = f;
                self.stamp += 1;
                self.frames[f as usize] = FrameMeta {
                    page: page.0,
                    lsn,
                    state: FState::Dirty,
                    stamp: self.stamp,
                    free_at: SimTime::ZERO,
                };
                self.dirty_lru.insert((self.stamp, f));
                self.k.pcm_page_writes += 1;
                end
            }
        };
        self.data_ack = self.data_ack.max(end);
        Ok(end)
    }

    /// Writes DB page `page` (its slot values, then the page LSN) to the disk, counting the
    /// records whose value differs from the disk's copy (or the initial page): the distinct
    /// records updated since the page was last written, i.e. Fig. 8b's dirty records per
    /// written page.
    fn disk_write_page(&mut self, page: u64, v: Vec<u64>, at: SimTime) -> Result<SimTime> {
        let new = &v[..v.len().saturating_sub(1)];
        let changed = |old: &[u64]| {
            (0..new.len())
                .filter(|&i| old.get(i) != Some(&new[i]))
                .count() as u64
        };
        let dirty = match self.disk.image().get(&page) {
            Some(old) if !old.is_empty() => changed(&old[..old.len() - 1]),
            _ => changed(&self.layout.initial_page(PageNo(page))),
        };
        self.k.disk_page_writes += 1;
        self.k.disk_dirty_records += dirty;
        self.disk.write(page, v, at).map_err(cerr("disk write"))
    }

    /// The newest stable image of `page` and its LSN.
    fn stable_image(&self, page: PageNo) -> (Vec<u64>, u64) {
        if self.kind == Kind::WalPcm {
            let f = self.page_frame[page.0 as usize];
            if f != u32::MAX {
                if let Some((p, lsn, v)) = read_frame(&self.pcm, &self.geo, u64::from(f)) {
                    debug_assert_eq!(p, page.0);
                    return (v, lsn);
                }
            }
        }
        match self.disk.image().get(&page.0) {
            Some(v) if !v.is_empty() => (v[..v.len() - 1].to_vec(), v[v.len() - 1]),
            _ => (self.layout.initial_page(page), 0),
        }
    }

    fn checkpoint(&mut self, core: &mut Core, now: SimTime) -> Result<()> {
        core.stats.checkpoints += 1;
        self.k.checkpoints += 1;
        self.bytes_since_ckpt = 0;
        self.last_ckpt = now;
        let begin = self.append(
            core,
            Rec {
                kind: CKPT_BEGIN,
                ..blank()
            },
            now,
        )?;
        let dirty: Vec<u32> = core
            .pool
            .occupied()
            .filter(|(_, f)| f.dirty)
            .map(|(i, _)| i)
            .collect();
        let mut done = now;
        for f in dirty {
            let fr = core.pool.frame(f).clone();
            done = done.max(self.write_stable(core, fr.page, fr.values, fr.lsn, now)?);
            let fm = core.pool.frame_mut(f);
            fm.dirty = false;
            fm.rec_lsn = 0;
        }
        let att: Vec<(u64, u64)> = self
            .txs
            .iter()
            .flatten()
            .map(|t| (t.txn.0, t.last))
            .collect();
        for (txn, last) in att {
            self.append(
                core,
                Rec {
                    kind: CKPT_TXN,
                    txn,
                    a: last,
                    ..blank()
                },
                now,
            )?;
        }
        self.append(
            core,
            Rec {
                kind: CKPT_END,
                a: begin,
                ..blank()
            },
            now,
        )?;
        done = done.max(self.force(core, now)).max(self.data_ack);
        // The master is written by `maintain` once `done` has passed: issuing it now for a
        // later instant would hold its PCM chip (and every log line on it) until then.
        self.pending_master = Some((done, begin));
        Ok(())
    }

    /// Writes the pending master once its checkpoint's writes have completed.
    fn write_master(&mut self, now: SimTime) -> Result<()> {
        let Some((done, begin)) = self.pending_master else {
            return Ok(());
        };
        if done > now {
            return Ok(());
        }
        self.pending_master = None;
        self.master_counter += 1;
        let c = self.master_counter;
        let ack = self
            .pcm
            .write(MASTER0 + 64 * (c % 2), &master_bytes(c, begin, begin), now)
            .map_err(cerr("master write"))?;
        self.masters.push((ack, begin));
        if self.masters.len() > 4 {
            self.masters.remove(0);
        }
        Ok(())
    }
}

fn blank() -> Rec {
    Rec {
        lsn: 0,
        kind: 0,
        txn: 0,
        prev: NONE,
        page: 0,
        slot: 0,
        a: 0,
        b: 0,
    }
}

impl Strategy for PcmWal {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn begin(&mut self, core: &mut Core, c: u32, txn: TxnId, now: SimTime) -> Result<()> {
        let lsn = self.append(
            core,
            Rec {
                kind: BEGIN,
                txn: txn.0,
                ..blank()
            },
            now,
        )?;
        self.txs[c as usize] = Some(Tx {
            txn,
            first: lsn,
            last: lsn,
            undo: Vec::new(),
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
        let page = core.pool.frame(frame).page;
        let (txn, prev) = {
            let t = self.tx(c)?;
            (t.txn, t.last)
        };
        let lsn = self.append(
            core,
            Rec {
                kind: UPDATE,
                txn: txn.0,
                prev,
                page: page.0,
                slot: u64::from(slot),
                a: before,
                b: after,
                ..blank()
            },
            now,
        )?;
        let fr = core.pool.frame_mut(frame);
        fr.lsn = lsn;
        if fr.rec_lsn == 0 {
            fr.rec_lsn = lsn.max(1);
        }
        let t = self.tx(c)?;
        t.last = lsn;
        t.undo.push((lsn, page, slot, before, prev));
        Ok(())
    }

    fn evictable(&self, _frame: &Frame) -> bool {
        true
    }

    fn write_back(&mut self, core: &mut Core, frame: Frame, now: SimTime) -> Result<SimTime> {
        self.write_stable(core, frame.page, frame.values, frame.lsn, now)
    }

    fn read_page(&mut self, core: &mut Core, page: PageNo, now: SimTime) -> Result<SimTime> {
        core.stats.page_reads += 1;
        if self.kind == Kind::WalPcm {
            let f = self.page_frame[page.0 as usize];
            if f != u32::MAX {
                self.k.pcm_hits += 1;
                self.touch(f);
                let (_, t) = self
                    .pcm
                    .read(
                        self.geo.frame_addr(u64::from(f)),
                        self.geo.page_bytes as usize,
                        now,
                    )
                    .map_err(cerr("page read"))?;
                return Ok(t);
            }
        }
        Ok(self.disk.read(page.0, now).1)
    }

    fn own_page(&self, _c: u32, page: PageNo) -> Option<Arc<PageImage>> {
        let (values, lsn) = self.stable_image(page);
        Some(Arc::new(PageImage { page, lsn, values }))
    }

    fn commit(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let (txn, prev) = {
            let t = self.tx(c)?;
            (t.txn, t.last)
        };
        let lsn = self.append(
            core,
            Rec {
                kind: COMMIT,
                txn: txn.0,
                prev,
                ..blank()
            },
            now,
        )?;
        let ack = if self.fault_early_ack {
            now
        } else {
            self.force(core, now)
        };
        self.append(
            core,
            Rec {
                kind: END,
                txn: txn.0,
                prev: lsn,
                ..blank()
            },
            now,
        )?;
        self.txs[c as usize] = None;
        Ok(ack)
    }

    fn abort(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        let (txn, prev) = {
            let t = self.tx(c)?;
            (t.txn, t.last)
        };
        let mut last = self.append(
            core,
            Rec {
                kind: ABORT,
                txn: txn.0,
                prev,
                ..blank()
            },
            now,
        )?;
        let undo = std::mem::take(&mut self.tx(c)?.undo);
        let mut done = now;
        for (_, page, slot, before, uprev) in undo.into_iter().rev() {
            let f = match fetch(core, self, c, page, now, true)? {
                Fetch::Ready(f, t) => {
                    done = done.max(t);
                    Some(f)
                }
                Fetch::NoRoom => None,
            };
            let clr = self.append(
                core,
                Rec {
                    kind: CLR,
                    txn: txn.0,
                    prev: last,
                    page: page.0,
                    slot: u64::from(slot),
                    a: uprev,
                    b: before,
                    ..blank()
                },
                now,
            )?;
            last = clr;
            match f {
                Some(f) => {
                    let fr = core.pool.frame_mut(f);
                    fr.values[slot as usize] = before;
                    fr.lsn = clr;
                    fr.dirty = true;
                    if fr.rec_lsn == 0 {
                        fr.rec_lsn = clr.max(1);
                    }
                }
                None => {
                    // Every frame is waiting for its read: undo through a private frame,
                    // made stable at once (after its CLR is durable, by the WAL rule).
                    self.k.private_undos += 1;
                    let (mut values, _) = self.stable_image(page);
                    let t = self.read_page(core, page, now)?;
                    values[slot as usize] = before;
                    done = done.max(self.write_stable(core, page, values, clr, t)?);
                }
            }
        }
        self.append(
            core,
            Rec {
                kind: END,
                txn: txn.0,
                prev: last,
                ..blank()
            },
            now,
        )?;
        self.txs[c as usize] = None;
        Ok(done)
    }

    fn maintain(&mut self, core: &mut Core, now: SimTime) -> Result<()> {
        if self.kind == Kind::WalPcm {
            self.complete_destages(now);
            if self.dirty_lru.len() as u64 > self.high {
                self.destaging_on = true;
            }
            // At most DESTAGES_IN_FLIGHT destage writes queue on the disk at once, so log
            // archives and page reads, which share its FIFO, are not stuck behind a burst.
            while self.destaging_on
                && self.dirty_lru.len() as u64 > self.low
                && self.destaging.len() < DESTAGES_IN_FLIGHT
            {
                let &(_, f) = self.dirty_lru.iter().next().expect("non-empty");
                self.destage(f, now)?;
            }
            if self.dirty_lru.len() as u64 <= self.low {
                self.destaging_on = false;
            }
        }
        self.write_master(now)?;
        let due = now.since(self.last_ckpt) >= self.ckpt_every_ns
            || self.bytes_since_ckpt >= self.ckpt_log_bytes;
        if due && self.pending_master.is_none() && self.masters.last().is_none_or(|m| m.0 <= now) {
            self.checkpoint(core, now)?;
        }
        Ok(())
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let k = &self.k;
        [
            ("log_records", k.log_records),
            ("log_archive_writes", k.log_archive_writes),
            ("log_buffer_waits", k.log_buffer_waits),
            ("pcm_page_writes", k.pcm_page_writes),
            ("pcm_hits", k.pcm_hits),
            ("pcm_destages", k.destages),
            ("pcm_sync_destages", k.sync_destages),
            ("pcm_disk_bypass_writes", k.disk_bypass_writes),
            ("pcm_checkpoints", k.checkpoints),
            ("private_undos", k.private_undos),
            ("pcm_frames", self.geo.frames),
            ("pcm_log_area_pages", self.geo.log_area_pages),
            ("pcm_line_writes", self.pcm.counters.line_writes),
            ("pcm_line_reads", self.pcm.counters.line_reads),
            ("pcm_bytes", self.sizes.pcm_bytes),
            ("dram_bytes", self.sizes.dram_bytes),
            ("buffer_frames", u64::from(self.buffer_frames)),
            ("disk_reads", self.disk.counters.reads),
            ("disk_writes", self.disk.counters.writes),
            ("disk_page_writes", k.disk_page_writes),
            ("disk_dirty_records", k.disk_dirty_records),
        ]
        .into_iter()
        .chain(self.disk.medium_counters())
        .chain(self.pcm.wear().counters()) // Fig. 11's wear figures, for every PCM writer
        .collect()
    }

    fn tier(&mut self) -> Option<&mut dyn TierHooks> {
        Some(self)
    }
}

impl TierHooks for PcmWal {
    /// ARIES restart (analysis / redo / undo) on the PCM and disk as they stand: the time
    /// is the PCM lines and disk pages it reads (module docs).
    fn measure_recovery(&self, _now: SimTime) -> Result<crate::metrics::HostRecoveryMetrics> {
        crate::pcm_tier::measure_restart(self.kind.name(), || {
            recover(&self.layout, &self.pcm, self.disk.image(), self.disk.kind)
                .map(|r| (r.time_ns, r.pages_read))
        })
    }

    fn take_tier_log(&mut self) -> Option<TierLog> {
        self.recording.take(&mut self.pcm, &mut self.disk)
    }
}

/// Reads log records by LSN from PCM, then (wal-pcm) from the disk log, counting the I/O.
struct LogReader<'a> {
    pcm: &'a Pcm,
    disk: &'a BTreeMap<u64, Vec<u64>>,
    geo: Geo,
    pcm_bytes: u64,
    disk_pages: BTreeSet<u64>,
}

impl LogReader<'_> {
    fn get(&mut self, n: u64) -> Option<Rec> {
        let rpp = self.geo.rpp();
        self.pcm_bytes += REC_BYTES;
        if let Some(r) = Rec::from_bytes(self.pcm.peek(self.geo.log_addr(n), REC_BYTES as usize), n)
        {
            return Some(r);
        }
        if self.geo.disk_log_pages == 0 {
            return None;
        }
        let id = DISK_LOG_BASE + (n / rpp) % self.geo.disk_log_pages;
        self.disk_pages.insert(n / rpp);
        let w = self.disk.get(&id)?;
        let i = ((n % rpp) * 8) as usize;
        Rec::from_words(w.get(i..i + 8)?, n)
    }
}

/// I/O a restart phase does: PCM bytes and disk pages read.
#[derive(Default)]
struct PhaseIo {
    pcm_bytes: u64,
    disk_reads: u64,
}

/// Restart from a PCM image and a disk image alone (module docs, "Recovery"). Pages not
/// listed are as loaded.
pub fn recover(
    layout: &Layout,
    pcm: &Pcm,
    disk: &BTreeMap<u64, Vec<u64>>,
    external: DiskKind,
) -> std::result::Result<RecoveredDb, String> {
    let geo = Geo::read(pcm)?;
    let read_ns = external.latency_ns().0;
    let master = read_master(pcm);
    let (ckpt, redo) = master.map_or((0, 0), |m| (m.1, m.2));
    let mut log = LogReader {
        pcm,
        disk,
        geo,
        pcm_bytes: LOG_AREA,
        disk_pages: BTreeSet::new(),
    };
    // Forward scan from the checkpoint (the redo point is never later).
    let mut entries: Vec<Rec> = Vec::new();
    let mut n = ckpt.min(redo);
    while let Some(r) = log.get(n) {
        entries.push(r);
        n += 1;
    }
    if master.is_some()
        && !entries
            .iter()
            .any(|r| r.lsn == ckpt && r.kind == CKPT_BEGIN)
    {
        return Err(format!(
            "the master's checkpoint record {ckpt} is missing or not a CKPT-BEGIN"
        ));
    }
    // Analysis.
    let mut att: BTreeMap<u64, u64> = BTreeMap::new(); // txn -> next LSN to undo (NONE: none)
    for r in entries.iter().filter(|r| r.lsn >= ckpt) {
        match r.kind {
            BEGIN => {
                att.insert(r.txn, NONE);
            }
            UPDATE | ABORT => {
                att.insert(r.txn, r.lsn);
            }
            CLR => {
                att.insert(r.txn, r.a);
            }
            COMMIT | END => {
                att.remove(&r.txn);
            }
            CKPT_BEGIN | CKPT_END => {}
            CKPT_TXN => {
                att.entry(r.txn).or_insert(r.a);
            }
            k => return Err(format!("log record {} has unknown kind {k}", r.lsn)),
        }
    }
    let analysis = PhaseIo {
        pcm_bytes: log.pcm_bytes,
        disk_reads: log.disk_pages.len() as u64,
    };
    // Stable page versions: every disk page, every valid frame (a header line each to
    // find them); the highest page LSN wins, a frame on a tie. A disk page's values are
    // borrowed from the disk image, not copied (a restart measured at the end of a run
    // would otherwise hold the database twice).
    let mut stable: BTreeMap<u64, (u64, Cow<'_, [u64]>, bool)> = BTreeMap::new(); // page -> (lsn, values, in pcm)
    for (&id, v) in disk.range(..layout.pages) {
        let slots = layout.slots(PageNo(id)) as usize;
        if v.len() != slots + 1 {
            return Err(format!(
                "disk page {id} holds {} words, not {slots} slots and an LSN",
                v.len()
            ));
        }
        stable.insert(id, (v[slots], Cow::Borrowed(&v[..slots]), false));
    }
    let mut redo_io = PhaseIo {
        pcm_bytes: geo.frames * 64,
        disk_reads: 0,
    };
    for f in 0..geo.frames {
        if let Some((p, lsn, v)) = read_frame(pcm, &geo, f) {
            if p >= layout.pages || v.len() != layout.slots(PageNo(p)) as usize {
                return Err(format!(
                    "pcm frame {f} holds page {p} with {} slots, not a page of the database",
                    v.len()
                ));
            }
            let keep = match stable.get(&p) {
                Some((l, _, _)) if *l > lsn => true,
                Some((l, _, true)) if *l == lsn => true,
                _ => false,
            };
            if !keep {
                stable.insert(p, (lsn, Cow::Owned(v), true));
            }
        }
    }
    let mut db: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let load = |p: u64,
                db: &mut BTreeMap<u64, Vec<u64>>,
                io: &mut PhaseIo|
     -> std::result::Result<(), String> {
        if p >= layout.pages {
            return Err(format!("a log record names page {p}, beyond the database"));
        }
        if !db.contains_key(&p) {
            match stable.get(&p) {
                Some((_, v, true)) => {
                    io.pcm_bytes += geo.page_bytes;
                    db.insert(p, v.to_vec());
                }
                Some((_, v, false)) => {
                    io.disk_reads += 1;
                    db.insert(p, v.to_vec());
                }
                None => {
                    io.disk_reads += 1;
                    db.insert(p, layout.initial_page(PageNo(p)));
                }
            }
        }
        Ok(())
    };
    let set = |db: &mut BTreeMap<u64, Vec<u64>>, p: u64, s: u64, v: u64| {
        let vals = db.get_mut(&p).expect("page loaded");
        match vals.get_mut(s as usize) {
            Some(x) => {
                *x = v;
                Ok(())
            }
            None => Err(format!("a log record names slot {s} beyond page {p}")),
        }
    };
    // Redo, unconditionally, from the redo LSN.
    for r in entries.iter().filter(|r| r.lsn >= redo) {
        if matches!(r.kind, UPDATE | CLR) {
            load(r.page, &mut db, &mut redo_io)?;
            set(&mut db, r.page, r.slot, r.b)?;
        }
    }
    // Undo, newest LSN first across the losers.
    let by_lsn: BTreeMap<u64, Rec> = entries.iter().map(|r| (r.lsn, *r)).collect();
    let mut undo_io = PhaseIo::default();
    log.pcm_bytes = 0;
    let log_before = log.disk_pages.len();
    let mut todo: Vec<u64> = att.values().copied().filter(|&l| l != NONE).collect();
    while let Some((i, lsn)) = todo
        .iter()
        .copied()
        .enumerate()
        .filter(|x| x.1 != NONE)
        .max_by_key(|x| x.1)
    {
        let r = match by_lsn.get(&lsn) {
            Some(r) => *r,
            None => log
                .get(lsn)
                .ok_or_else(|| format!("log record {lsn} needed for undo is missing"))?,
        };
        todo[i] = match r.kind {
            UPDATE => {
                load(r.page, &mut db, &mut undo_io)?;
                set(&mut db, r.page, r.slot, r.a)?;
                r.prev
            }
            CLR => r.a,
            ABORT => r.prev,
            BEGIN => NONE,
            k => return Err(format!("undo reached a record of kind {k} at {lsn}")),
        };
        if todo[i] != NONE && todo[i] >= lsn {
            return Err(format!(
                "undo chain at {lsn} does not go back ({})",
                todo[i]
            ));
        }
    }
    undo_io.pcm_bytes += log.pcm_bytes;
    undo_io.disk_reads += (log.disk_pages.len() - log_before) as u64;
    let ns = |io: &PhaseIo| pcm.scan_ns(io.pcm_bytes) + io.disk_reads * read_ns;
    let mut pages: BTreeMap<PageNo, Vec<u64>> = stable
        .into_iter()
        .map(|(p, (_, v, _))| (PageNo(p), v.into_owned()))
        .collect();
    for (p, v) in db {
        pages.insert(PageNo(p), v);
    }
    Ok(RecoveredDb {
        pages,
        pages_read: analysis.disk_reads + redo_io.disk_reads + undo_io.disk_reads,
        time_ns: ns(&analysis) + ns(&redo_io) + ns(&undo_io),
    })
}
