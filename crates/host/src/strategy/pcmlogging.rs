//! `pcmlogging`: record-level PCMLogging (PCMLogging §3.3, Algorithms 1–3) — dirty records
//! cached out of place in phase-change memory, the transaction log implicit in them, an
//! ActiveTxList in PCM whose entry removal is the commit point, recovery by scanning PCM
//! alone, and destaging of committed records to an external disk (read page, merge, write
//! back, §3.3 "Destaging") under the high-low watermark policy (§5.1).
//!
//! This is the scheme's core over `media::pcm::Pcm` and `media::disk::Disk`, driven record
//! by record (`update`, `flush_page`, `commit`, `abort`, `maintain`). It is crash-checked by
//! `crate::pcm_check` (its own random driver) and, as the host-engine strategy
//! `pcmlogging` (`pcmlogging_engine.rs`), by the host crash checker (`crate::pcm_tier`).
//!
//! # PCM layout, byte by byte (all integers little-endian u64)
//!
//! ```text
//! [0, 8)                 magic "PCMLOG01"
//! [8, 16)                ATL entries A
//! [16, 24)               record units U
//! [24, 32)               bitmap offset B (= 64 + 8A rounded up to 64)
//! [32, 40)               record area offset R (= B + 8*ceil(U/64) rounded up to unit_bytes)
//! [40, 48)               metadata regions K (0 read as 1)
//! [48, 56)               region stride D (= (B + 8*ceil(U/64) - 64) rounded up to 64)
//! [56, 64)               active region r (< K; §4.1 relocation switches it)
//! [64 + rD, …+ 8A)       ActiveTxList: entry i = XID of an in-progress transaction, 0 = free
//! [B + rD, … + 8*ceil(U/64))  FreeSlotBitmap: bit u of word u/64 = 1 ⇔ unit u holds a
//!                        valid record (R = 64 + K·D rounded up to unit_bytes)
//! [R + u*unit_bytes, …)  record unit u (Fig. 4):
//!     +0   XID   transaction that wrote this version
//!     +8   PID   DB page number
//!     +16  SNO (bits 0..16) | version (bits 16..18, mod 4) | payload length (bits 32..48)
//!     +24  value (the record's contents in the host's data model: a 64-bit digest)
//!     +32  payload bytes (zeros; record bytes are not modelled, written for wear and time)
//! ```
//!
//! DRAM (volatile): the Mapping Table (per RID: committed unit and version, uncommitted unit,
//! XID and version — the uncommitted entry is the "latest" mapping and the committed one is
//! what the Dirty Page Table keeps while it is overwritten), the Transaction Table (per XID:
//! ATL entry, dirty records in DRAM and in PCM), a DRAM copy of the bitmap and of the ATL,
//! and the dirty records still in DRAM (the buffer pool's part of them).
//!
//! # Ordering rules (each "then" waits for the previous write to complete)
//!
//! - Flush of record t by T (Alg. 1): if T has no ATL entry, write XID into a free entry,
//!   then write the record unit (XID, PID, SNO, version, value), then set its bitmap bit;
//!   then, if T had an older uncommitted copy of t, clear that copy's bit.
//! - Commit (Alg. 2): flush T's DRAM records as above, then write 0 into T's ATL entry (the
//!   commit point; the ack is its completion), then clear the bits of the previous committed
//!   versions T replaced.
//! - Abort (Alg. 2): drop T's DRAM records, clear the bits of T's PCM records, then clear
//!   T's ATL entry.
//! - Destage of page P: read P from disk, merge the committed PCM records of P, write P,
//!   then clear the destaged records' bits.
//!
//! Every PCM step is issued when the previous one completed (the core keeps one clock);
//! the chips' parallelism applies within a step (the two lines of a record unit). A
//! destage runs on the disk's own queue: its read and write are issued at once, and its
//! bit clears wait for a `maintain` after the write completed (`complete_destages`).
//!
//! # Recovery (Alg. 3)
//!
//! Read the ATL; scan the bitmap; for each valid unit, discard it if its XID is in the ATL;
//! of two committed versions of one RID keep the one whose version is the successor mod 4
//! of the other (§3.2 "Discussion"). The database is the disk overlaid with the kept
//! records. No disk write, no log; the time is the PCM scan.
//!
//! # Crash argument, case by case
//!
//! - *Crash before T's ATL entry persisted*: T has no valid record (a record's bit is set
//!   only after the entry write completed... and after the record write completed), so
//!   nothing of T is visible.
//! - *Crash while T is in the ATL* (flushes, steals, commit flushes, abort's bit clearing):
//!   every valid unit carrying XID T is discarded. A unit whose record write was torn has
//!   its bit clear (the bit is set only after the write completed), unless the bit is that
//!   of an earlier copy in the same unit — impossible, a unit is reused only after its
//!   bit-clear completed and the bit is set again only after the new record completed.
//!   A torn unit with a set bit therefore cannot exist. The committed versions T replaced
//!   are still valid (freed only after the commit point), so the pre-T state is recovered.
//! - *Crash after the ATL clear persisted*: every record of T was flushed and its bit set
//!   before the clear was issued, so all of T is valid and committed. Previous committed
//!   versions may still be valid: the version rule picks T's (at most two committed
//!   versions of a RID coexist: T's and the one it replaced, since a third writer needs T's
//!   lock, released at the ack, after which T's commit finished freeing the old one).
//! - *Crash mid-abort*: T is still in the ATL until all its bits are clear → discarded.
//! - *XID reuse*: the host engine's XID is the transaction's number, kept when wait-die
//!   restarts it (§4.2 measures residence in XIDs; §6.1's wait-die keeps a transaction's
//!   timestamp), so a restarted T writes records under the XID of its aborted attempt. The
//!   reuse starts only after the abort completed (the engine begins the next attempt after
//!   the rollback's ack): every unit of the earlier attempt had its bit cleared and then the
//!   ATL entry was cleared, so no valid unit carries T's XID when it re-enters the ATL, and
//!   the cases above apply to the new attempt alone. A moved committed record's pseudo XID
//!   is the largest *committed* XID, which never re-enters the ATL; the largest finished
//!   one could be an aborted XID about to come back (`fault_pseudo_xid_of_aborts`).
//! - *Crash mid-destage*: the disk page write may be torn at slot granularity; the slots it
//!   changes are exactly destaged committed records, which stay valid in PCM until the
//!   write completed, and override the disk at recovery. Uncommitted records never reach
//!   disk (only committed PCM records are merged; DRAM-dirty records are not).
//! - *Reads* (§3.3 "Serving read/write requests": a buffer miss served from PCM records
//!   alone, or from the disk page with the PCM records merged over it; `needs_disk`,
//!   `read_record_for_miss`, `complete_partial`) write nothing to PCM or disk, so they add
//!   no crash state; they only change when clients proceed. What a reader sees is
//!   `current_page` (DRAM over PCM over disk), whichever medium the timing charged.
//! - ATL and bitmap updates are single aligned 8-byte words: atomic under the crash model.
//!   Two writes to one word are on the same line and chip, so they complete in issue order.
//!
//! # Run-on restart (`restart`, `PcmLogging::open`)
//!
//! Algorithm 3 only reads PCM; the paper does not say what the medium looks like when the
//! DBMS runs on after it. The restart the crash checker's run-on mode uses (and the engine
//! resumes from, `pcmlogging_engine`) finishes what Algorithm 2 left undone, as ARIES'
//! restart finishes the losers' rollback before new work starts: 1) clear the bits of every
//! valid unit whose XID is in the ActiveTxList (the losers' records) and of every committed
//! version a newer one replaced (a commit cut short between its commit point and its
//! frees; a second copy of one version left by a wear-leveling move cut short), all bitmap
//! words issued at once; 2) once they completed, clear the ActiveTxList entries. The result:
//! every valid unit is the one committed version of its RID and the ActiveTxList is empty —
//! the state of a run with no transaction in flight, which `open` rebuilds the DRAM tables
//! from (Mapping Table, bitmap copy, destage order by XID). Crash cases:
//! - *inside step 1*: the ActiveTxList is intact, so every loser unit still valid is
//!   discarded, and a replaced version still valid loses to its successor (the version
//!   rule); each bitmap word write is atomic. Recovery finds what it found before.
//! - *inside step 2*: no valid unit carries a loser's XID any more, so an entry cleared or
//!   not changes nothing. (Clearing the entries first — `RestartFault::AtlFirst` — would
//!   leave loser units valid with no entry: visible.)
//! - *in the run after it*: the cases above, with two more rules. XIDs continue above
//!   every XID the crash image names (`Restarted::xid_max`; the engine adds it to its
//!   transaction numbers): a new transaction reusing a committed record's XID would have
//!   that record discarded with it if it crashed in the ActiveTxList, and Algorithm 4's
//!   X_c − X_t would run backwards. The pseudo XID of a moved record (`place`) starts there
//!   too. And no replaced version may survive the restart (`RestartFault::KeepReplaced`):
//!   the resumed Mapping Table does not know it, so the next commit of its RID writes the
//!   version after the kept one and two non-consecutive versions are valid, or a destage
//!   frees the kept one and the stale one is recovered over the disk.
//!
//! Destaging policy: the high-low watermark (§5.1) or the cost-based adaptive rate (§5.2,
//! `pcm_destage::Adaptive`, `adaptive_segment_bytes`); either way a flush into a full PCM
//! waits for destages at full rate. Page-level PCMLogging is `pcmlogging_page.rs`.
//!
//! Relocation (§4.1, `relocate_every`): the ActiveTxList and FreeSlotBitmap live in one of
//! `regions` metadata regions (region r starts `r × stride` after region 0; superblock words
//! [40) regions, [48) stride, [56) the active region). Every `relocate_every` metadata word
//! writes, `maintain` copies both to the next region and then switches word [56)
//! (`relocate`, with its crash argument).
//!
//! # Reads (§3.3 "Serving read/write requests")
//!
//! A buffer miss for a record the Mapping Table (or DRAM) holds reads that page's PCM
//! records and no disk page; the frame is then partial, and a later access to a record
//! PCM lacks reads the disk page and merges it (`complete_partial`). A miss for a record
//! only the disk holds, or for a whole page, reads the disk page and the PCM records in
//! parallel, unless PCM and DRAM hold every record the disk page holds (`needs_disk`).
//!
//! Not here yet: records larger than one unit.

use super::pcm_destage::{DestageCore, Destages};
use media::disk::Disk;
use media::pcm::Pcm;
use sim::SimTime;
use std::collections::{BTreeMap, BTreeSet};

pub const MAGIC: u64 = u64::from_le_bytes(*b"PCMLOG01");
/// Superblock word holding the active metadata region (§4.1 relocation).
const ACTIVE_REGION: u64 = 56;
const HDR: u64 = 32;

/// A record identifier: (PID, SNO).
pub type Rid = (u64, u16);

/// A transaction id as written in PCM (never 0).
pub type Xid = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub atl_entries: u64,
    pub units: u64,
    pub unit_bytes: u64,
    /// The bitmap's offset in metadata region 0.
    pub bitmap_off: u64,
    pub records_off: u64,
    /// Metadata regions (ActiveTxList + FreeSlotBitmap copies the §4.1 relocation rotates
    /// through; 1 = no relocation) and the distance between two.
    pub regions: u64,
    pub stride: u64,
}

impl Geometry {
    pub fn new(pcm_bytes: u64, unit_bytes: u64, atl_entries: u64) -> Result<Geometry, String> {
        Geometry::with_regions(pcm_bytes, unit_bytes, atl_entries, 1)
    }

    /// As `new` with `regions` metadata regions (§4.1 relocation).
    pub fn with_regions(
        pcm_bytes: u64,
        unit_bytes: u64,
        atl_entries: u64,
        regions: u64,
    ) -> Result<Geometry, String> {
        if atl_entries == 0 {
            return Err("pcmlogging.atl_entries must be at least 1".into());
        }
        if regions == 0 || regions > 64 {
            return Err(format!("{regions} metadata regions: need 1 to 64"));
        }
        let bitmap_off = (64 + 8 * atl_entries).div_ceil(64) * 64;
        // Largest U such that the metadata regions and U units fit.
        let mut units = pcm_bytes.saturating_sub(bitmap_off) / unit_bytes;
        loop {
            let stride = (bitmap_off + 8 * units.div_ceil(64) - 64).div_ceil(64) * 64;
            let records_off = (64 + regions * stride).div_ceil(unit_bytes) * unit_bytes;
            if records_off + units * unit_bytes <= pcm_bytes {
                if units == 0 {
                    return Err(format!("pcm of {pcm_bytes} bytes has no room for records"));
                }
                return Ok(Geometry {
                    atl_entries,
                    units,
                    unit_bytes,
                    bitmap_off,
                    records_off,
                    regions,
                    stride,
                });
            }
            if units == 0 {
                return Err(format!("pcm of {pcm_bytes} bytes has no room for records"));
            }
            units -= 1;
        }
    }

    /// Reads the geometry back from a PCM image's superblock.
    pub fn read(img: &[u8], unit_bytes: u64) -> Result<Geometry, String> {
        if img.len() < 64 {
            return Err("pcm holds no PCMLogging superblock".into());
        }
        let w = |i: usize| u64::from_le_bytes(img[i * 8..i * 8 + 8].try_into().expect("8"));
        if w(0) != MAGIC {
            return Err("pcm holds no PCMLogging superblock".into());
        }
        let g = Geometry {
            atl_entries: w(1),
            units: w(2),
            unit_bytes,
            bitmap_off: w(3),
            records_off: w(4),
            regions: w(5).max(1),
            stride: w(6),
        };
        let meta_end = g
            .regions
            .checked_sub(1)
            .and_then(|r| r.checked_mul(g.stride))
            .and_then(|x| x.checked_add(g.bitmap_off + 8 * g.units.div_ceil(64)));
        let end = g
            .units
            .checked_mul(unit_bytes)
            .and_then(|x| x.checked_add(g.records_off));
        if end.is_none_or(|e| e > img.len() as u64)
            || meta_end.is_none_or(|m| m > g.records_off)
            || 64 + 8 * g.atl_entries > g.bitmap_off
        {
            return Err(format!("pcm superblock is inconsistent: {g:?}"));
        }
        Ok(g)
    }

    fn atl_addr(&self, region: u64, i: u64) -> u64 {
        region * self.stride + 64 + 8 * i
    }
    fn bitmap_word_addr(&self, region: u64, u: u64) -> u64 {
        region * self.stride + self.bitmap_off + 8 * (u / 64)
    }
    fn unit_addr(&self, u: u64) -> u64 {
        self.records_off + u * self.unit_bytes
    }
}

/// The loaded value of a record in the PCMLogging checks' databases (never 0).
pub fn initial_record(rid: Rid) -> u64 {
    crate::data::mix64(rid.0 << 16 | u64::from(rid.1)) | 1
}

pub use super::pcm_destage::watermark;

#[derive(Clone, Debug)]
pub struct PcmLogConfig {
    pub atl_entries: u64,
    /// Record payload bytes written after the 32-byte header (clamped to the unit).
    pub record_bytes: u64,
    pub high_watermark: f64,
    pub low_watermark: f64,
    /// Slots per DB page (a disk page's length).
    pub slots_per_page: u16,
    /// A record's value in the loaded database (a disk page never written holds these).
    pub initial: fn(Rid) -> u64,
    /// A planted bug for the checker: commit removes T from the ActiveTxList at the same
    /// instant it starts flushing T's DRAM records, not after they completed.
    pub fault_early_atl_removal: bool,
    /// Wear leveling (§4.2, Algorithm 4): the swapping threshold δ in XIDs; None = off.
    pub wear_delta: Option<u64>,
    /// Seed of the swapping coin.
    pub wear_seed: u64,
    /// A planted bug for the checker: the paper's pseudo-XID rule ("the largest XID that
    /// has been used but not in the ActiveTxList"), which can name a running transaction
    /// that has not flushed yet.
    pub fault_paper_pseudo_xid: bool,
    /// A planted bug for the checker: the pseudo XID is the largest XID of a *finished*
    /// transaction, aborts included — unsafe once a restart reuses its aborted attempt's
    /// XID (`xid` reuse, module docs).
    pub fault_pseudo_xid_of_aborts: bool,
    /// A planted bug for the checker: a destage frees its records' units when it issues
    /// the disk write, not when the write has completed.
    pub fault_early_destage_free: bool,
    /// Adaptive destaging (§5.2, `pcm_destage::Adaptive`) with this segment size in bytes;
    /// None: the high-low watermark (§5.1).
    pub adaptive_segment_bytes: Option<u64>,
    /// Interval of the destage I/O series (Fig. 12b), ns.
    pub destage_interval_ns: u64,
    /// §4.1: relocate the ActiveTxList and FreeSlotBitmap to the next metadata region after
    /// this many metadata word writes; 0 = never (one region).
    pub relocate_every: u64,
    /// Metadata regions the relocation rotates through (when `relocate_every > 0`).
    pub meta_regions: u64,
    /// A planted bug for the checker: the relocation switches the active region at the
    /// instant it starts copying, not after the copy completed.
    pub fault_early_relocation_switch: bool,
}

impl Default for PcmLogConfig {
    fn default() -> Self {
        PcmLogConfig {
            atl_entries: 64,
            record_bytes: 85, // the paper's 117 B average record less our 32 B header
            high_watermark: 0.99,
            low_watermark: 0.975,
            slots_per_page: 64,
            initial: initial_record,
            fault_early_atl_removal: false,
            wear_delta: None,
            wear_seed: 1,
            fault_paper_pseudo_xid: false,
            fault_pseudo_xid_of_aborts: false,
            fault_early_destage_free: false,
            adaptive_segment_bytes: None,
            destage_interval_ns: 100_000_000,
            relocate_every: 0,
            meta_regions: 4,
            fault_early_relocation_switch: false,
        }
    }
}

/// A map looked up by key only, never iterated (so its order cannot reach a result): the
/// transaction table, the commit sequence of each committed record, the records of pending
/// destages. Ordered maps made every commit a handful of tree searches over up to a full
/// PCM's records.
type RidHash<K, V> = hashbrown::HashMap<K, V, crate::lock::FixedHash>;

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    committed: Option<(u64, u8)>,
    /// (unit, xid, version)
    uncommitted: Option<(u64, Xid, u8)>,
}

#[derive(Clone, Debug, Default)]
struct Tx {
    atl: Option<u64>,
    dram: BTreeSet<Rid>,
    pcm: BTreeSet<Rid>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcmLogCounters {
    pub records_flushed: u64,
    pub commits: u64,
    pub aborts: u64,
    pub destaged_pages: u64,
    pub destaged_records: u64,
    pub swaps: u64,
    pub relocations: u64,
    /// Buffer misses served by PCM alone (§3.3, Fig. 8c's "PCM hits").
    pub pcm_hits: u64,
    /// Buffer misses that read the disk page (and merged PCM records over it).
    pub miss_disk_reads: u64,
    /// Of `pcm_hits`: misses served by the accessed record in PCM, leaving a partial frame.
    pub pcm_record_hits: u64,
    /// Disk reads that completed a partial frame (a later access to a record PCM lacks).
    pub partial_completions: u64,
}

pub struct PcmLogging {
    pub cfg: PcmLogConfig,
    pub pcm: Pcm,
    pub disk: Disk,
    geo: Geometry,
    clock: SimTime,
    bitmap: Vec<u64>,
    used: u64,
    cursor: u64,
    atl: Vec<Xid>,
    map: BTreeMap<Rid, Entry>,
    unit_value: Vec<u64>,
    txs: RidHash<Xid, Tx>,
    /// Dirty records in DRAM: value and the transaction that wrote it.
    dram: BTreeMap<Rid, (u64, Xid)>,
    /// Committed records in PCM in commit order (seq → rid), for destage selection.
    /// (A record's entry is live while `committed_seq` holds its seq: a recommit or a
    /// destage drops the record from `committed_seq` only, and dead entries leave from the
    /// front when destage selection passes them. Seqs only grow, so the oldest live entry
    /// is the first live one, as in an ordered map of the live entries.)
    committed_fifo: std::collections::VecDeque<(u64, Rid)>,
    committed_seq: RidHash<Rid, u64>,
    seq: u64,
    pub counters: PcmLogCounters,
    swap_ptr: u64,
    max_xid: Xid,
    /// The largest XID of a committed transaction: the pseudo XID of a moved committed
    /// record (`place`). A committed XID never enters the ActiveTxList again.
    max_committed_xid: Xid,
    /// The largest XID of a finished transaction, aborts included (only for
    /// `fault_pseudo_xid_of_aborts`).
    max_finished_xid: Xid,
    rng: sim::Rng,
    /// The loaded contents of a page never written to disk (default: `cfg.initial` over
    /// `cfg.slots_per_page` slots; the host engine sets its layout's).
    initial_page: Option<InitialPage>,
    /// The destages in flight, the destage policy and its series (`pcm_destage::Destages`):
    /// a destaged record's unit stays valid until the write completed.
    pub destages: Destages<Rid>,
    /// The active metadata region (§4.1) and the metadata word writes since it became so.
    region: u64,
    meta_writes: u64,
}

/// A page's loaded contents by page number.
pub type InitialPage = std::sync::Arc<dyn Fn(u64) -> Vec<u64> + Send + Sync>;

fn werr(e: String) -> String {
    format!("pcm: {e}")
}

impl PcmLogging {
    /// Formats `pcm` (writes the superblock; not timed: done once at installation).
    pub fn format(cfg: PcmLogConfig, mut pcm: Pcm, disk: Disk) -> Result<PcmLogging, String> {
        let geo = PcmLogging::geometry_for(&cfg, &pcm)?;
        let mut sb = Vec::with_capacity(64);
        for w in [
            MAGIC,
            geo.atl_entries,
            geo.units,
            geo.bitmap_off,
            geo.records_off,
            geo.regions,
            geo.stride,
            0, // the active metadata region (§4.1 relocation switches it)
        ] {
            sb.extend_from_slice(&w.to_le_bytes());
        }
        pcm.write(0, &sb, SimTime::ZERO).map_err(werr)?;
        pcm.counters = Default::default();
        Ok(PcmLogging::fresh(cfg, pcm, disk, geo))
    }

    /// The geometry `cfg` gives a PCM like `pcm`, or why `cfg` cannot be honoured.
    fn geometry_for(cfg: &PcmLogConfig, pcm: &Pcm) -> Result<Geometry, String> {
        if !(0.0..=1.0).contains(&cfg.low_watermark)
            || cfg.low_watermark > cfg.high_watermark
            || cfg.high_watermark > 1.0
        {
            return Err(format!(
                "pcmlogging watermarks: need 0 <= low ({}) <= high ({}) <= 1",
                cfg.low_watermark, cfg.high_watermark
            ));
        }
        let ub = u64::from(pcm.config().unit_bytes);
        if ub < HDR {
            return Err(format!(
                "pcm.unit_bytes = {ub}: a record needs at least {HDR}"
            ));
        }
        let geo = Geometry::with_regions(
            pcm.config().bytes,
            ub,
            cfg.atl_entries,
            if cfg.relocate_every > 0 {
                cfg.meta_regions
            } else {
                1
            },
        )?;
        if cfg.wear_delta == Some(0) {
            return Err("pcmlogging.wear_delta must be at least 1".into());
        }
        Ok(geo)
    }

    /// The volatile state of a PCM holding no record, no ActiveTxList entry and metadata
    /// region 0 (`format`, and `open` before it reads the medium).
    fn fresh(cfg: PcmLogConfig, pcm: Pcm, disk: Disk, geo: Geometry) -> PcmLogging {
        let ub = geo.unit_bytes;
        let cfg_seed = cfg.wear_seed;
        let adaptive = cfg.adaptive_segment_bytes.map(|seg| {
            let (r, w) = disk.kind.latency_ns();
            super::pcm_destage::Adaptive::new(geo.units, ub, seg, r + w)
        });
        let destages = Destages::new(adaptive, cfg.destage_interval_ns);
        PcmLogging {
            destages,
            region: 0,
            meta_writes: 0,
            bitmap: vec![0; geo.units.div_ceil(64) as usize],
            atl: vec![0; geo.atl_entries as usize],
            unit_value: vec![0; geo.units as usize],
            geo,
            cfg,
            pcm,
            disk,
            clock: SimTime::ZERO,
            used: 0,
            cursor: 0,
            map: BTreeMap::new(),
            txs: RidHash::default(),
            dram: BTreeMap::new(),
            committed_fifo: Default::default(),
            committed_seq: RidHash::default(),
            seq: 0,
            counters: PcmLogCounters::default(),
            swap_ptr: 0,
            max_xid: 0,
            max_committed_xid: 0,
            max_finished_xid: 0,
            rng: sim::Rng::new(cfg_seed).fork("pcm-wear"),
            initial_page: None,
        }
    }

    /// Resumes on a PCM a restart that writes back left (`restart`): every valid unit is
    /// the one committed version of its RID and the ActiveTxList is empty; anything else is
    /// refused. The DRAM tables are rebuilt from the medium (Mapping Table, bitmap copy,
    /// destage order: oldest XID first), the core's clock starts at `clock` (the restart's
    /// end) and XIDs — and the pseudo XID of moved records — continue above `xid_max`.
    pub fn open(
        cfg: PcmLogConfig,
        pcm: Pcm,
        disk: Disk,
        clock: SimTime,
        xid_max: Xid,
    ) -> Result<PcmLogging, String> {
        let geo = PcmLogging::geometry_for(&cfg, &pcm)?;
        let sc = scan(pcm.image(), geo.unit_bytes)?;
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
        if let Some(u) = sc.replaced.first() {
            return Err(format!(
                "unit {u} holds a replaced committed version: the restart did not free it"
            ));
        }
        let mut c = PcmLogging::fresh(cfg, pcm, disk, geo);
        c.region = sc.region;
        c.clock = clock;
        let mut order: Vec<(Xid, u64, Rid)> = Vec::with_capacity(sc.keep.len());
        for (&rid, &(ver, value, u)) in &sc.keep {
            if rid.1 >= c.cfg.slots_per_page {
                return Err(format!(
                    "unit {u} holds record {rid:?} outside a page of {} slots",
                    c.cfg.slots_per_page
                ));
            }
            c.bitmap[(u / 64) as usize] |= 1 << (u % 64);
            c.unit_value[u as usize] = value;
            c.used += 1;
            c.map.insert(
                rid,
                Entry {
                    committed: Some((u, ver)),
                    uncommitted: None,
                },
            );
            let xid = word(c.pcm.image(), geo.unit_addr(u));
            order.push((xid, u, rid));
        }
        order.sort_unstable();
        for (_, _, rid) in order {
            c.seq += 1;
            c.committed_fifo.push_back((c.seq, rid));
            c.committed_seq.insert(rid, c.seq);
        }
        let x = xid_max.max(sc.xid_max);
        c.max_xid = x;
        c.max_committed_xid = x;
        c.max_finished_xid = x;
        Ok(c)
    }

    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    /// Sets the loaded contents of never-written pages (the host engine's layout).
    pub fn set_initial_page(&mut self, f: InitialPage) {
        self.initial_page = Some(f);
    }

    fn initial_page_of(&self, page: u64) -> Vec<u64> {
        match &self.initial_page {
            Some(f) => f(page),
            None => (0..self.cfg.slots_per_page)
                .map(|s| (self.cfg.initial)((page, s)))
                .collect(),
        }
    }

    /// Records of `page` in PCM (committed or not).
    pub fn pcm_records_of(&self, page: u64) -> usize {
        self.map.range((page, 0)..=(page, u16::MAX)).count()
    }

    pub fn counters(&self) -> &PcmLogCounters {
        &self.counters
    }

    /// Fig. 11's wear figures over the record area only (the PCM units the records use;
    /// metadata units are excluded — their relocation, §4.1, is not implemented).
    pub fn record_wear(&self) -> media::pcm::WearFigures {
        let ub = u64::from(self.pcm.config().unit_bytes);
        let first = (self.geo.records_off / ub) as usize;
        self.pcm.wear_of(first..first + self.geo.units as usize)
    }

    pub fn used_units(&self) -> u64 {
        self.used
    }

    fn at(&self, now: SimTime) -> SimTime {
        now.max(self.clock)
    }

    /// A metadata word write (ActiveTxList entry or bitmap word).
    fn w64(&mut self, addr: u64, v: u64, t: SimTime) -> Result<SimTime, String> {
        self.meta_writes += 1;
        self.pcm.write_u64(addr, v, t).map_err(werr)
    }

    /// §4.1: moves the ActiveTxList and FreeSlotBitmap to the next metadata region so their
    /// words do not become hot spots. Copy both from their DRAM mirrors (which equal the
    /// PCM: every earlier step completed, the core keeps one clock), then — once the copy
    /// completed — switch the superblock's active-region word (one atomic 8-byte write).
    /// A crash before the switch persisted recovers from the old region, which no write
    /// touched during the copy; after it, from the complete copy.
    fn relocate(&mut self, now: SimTime) -> Result<SimTime, String> {
        let start = self.at(now);
        let next = (self.region + 1) % self.geo.regions;
        let atl: Vec<u8> = self.atl.iter().flat_map(|x| x.to_le_bytes()).collect();
        let bm: Vec<u8> = self.bitmap.iter().flat_map(|x| x.to_le_bytes()).collect();
        let a = self
            .pcm
            .write(self.geo.atl_addr(next, 0), &atl, start)
            .map_err(werr)?;
        let b = self
            .pcm
            .write(self.geo.bitmap_word_addr(next, 0), &bm, start)
            .map_err(werr)?;
        // BUG when planted: the switch does not wait for the copy.
        let at = if self.cfg.fault_early_relocation_switch {
            start
        } else {
            a.max(b)
        };
        let t = self
            .pcm
            .write_u64(ACTIVE_REGION, next, at)
            .map_err(werr)?
            .max(a)
            .max(b);
        self.region = next;
        self.meta_writes = 0;
        self.counters.relocations += 1;
        self.clock = t;
        Ok(t)
    }

    fn set_bit(&mut self, u: u64, on: bool, t: SimTime) -> Result<SimTime, String> {
        let i = (u / 64) as usize;
        if on {
            self.bitmap[i] |= 1 << (u % 64);
        } else {
            self.bitmap[i] &= !(1 << (u % 64));
        }
        let w = self.bitmap[i];
        self.w64(self.geo.bitmap_word_addr(self.region, u), w, t)
    }

    /// The first free unit at or after the cursor, wrapping around (next fit).
    fn alloc(&mut self) -> Option<u64> {
        let n = self.geo.units;
        let u = first_free_in(&self.bitmap, self.cursor, n)
            .or_else(|| first_free_in(&self.bitmap, 0, self.cursor))?;
        self.cursor = (u + 1) % n;
        Some(u)
    }

    fn free_unit(&mut self, u: u64, t: SimTime) -> Result<SimTime, String> {
        self.used -= 1;
        self.set_bit(u, false, t)
    }

    /// The value a reader sees now: DRAM dirty, else latest PCM version, else disk, else
    /// `initial`. Untimed (the caller's buffer pool holds the page).
    pub fn current(&self, rid: Rid) -> u64 {
        if let Some((v, _)) = self.dram.get(&rid) {
            return *v;
        }
        if let Some(e) = self.map.get(&rid) {
            if let Some((u, _, _)) = e.uncommitted {
                return self.unit_value[u as usize];
            }
            if let Some((u, _)) = e.committed {
                return self.unit_value[u as usize];
            }
        }
        match self.disk.image().get(&rid.0) {
            Some(p) => p.get(rid.1 as usize).copied().unwrap_or(0),
            None => match &self.initial_page {
                Some(f) => f(rid.0).get(rid.1 as usize).copied().unwrap_or(0),
                None => (self.cfg.initial)(rid),
            },
        }
    }

    /// T wrote `value` into record `rid` in its buffered page (DRAM only). The caller holds
    /// T's exclusive lock on `rid`.
    pub fn update(&mut self, xid: Xid, rid: Rid, value: u64) -> Result<(), String> {
        if xid == 0 {
            return Err("xid 0 is reserved".into());
        }
        if rid.1 >= self.cfg.slots_per_page {
            return Err(format!(
                "slot {} outside a page of {} slots",
                rid.1, self.cfg.slots_per_page
            ));
        }
        self.max_xid = self.max_xid.max(xid);
        self.dram.insert(rid, (value, xid));
        self.txs.entry(xid).or_default().dram.insert(rid);
        Ok(())
    }

    /// Algorithm 1 for one DRAM record. Returns when its last write completed.
    fn flush_record(&mut self, rid: Rid, mut t: SimTime) -> Result<SimTime, String> {
        let Some((value, xid)) = self.dram.remove(&rid) else {
            return Ok(t);
        };
        if self.used >= self.geo.units {
            t = self.destage_until_free(t)?;
        }
        let tx = self.txs.entry(xid).or_default();
        tx.dram.remove(&rid);
        if tx.atl.is_none() {
            let Some(i) = self.atl.iter().position(|&x| x == 0) else {
                return Err(format!(
                    "ActiveTxList full ({} entries)",
                    self.geo.atl_entries
                ));
            };
            self.atl[i] = xid;
            self.txs.get_mut(&xid).expect("tx").atl = Some(i as u64);
            t = self.w64(self.geo.atl_addr(self.region, i as u64), xid, t)?;
        }
        let (u, t1) = self.place(t)?;
        t = t1;
        let e = self.map.get(&rid).copied().unwrap_or_default();
        let version = match e.committed {
            Some((_, v)) => (v + 1) % 4,
            None => 0,
        };
        let payload = self.cfg.record_bytes.min(self.geo.unit_bytes - HDR) as usize;
        let mut rec = Vec::with_capacity(HDR as usize + payload);
        let meta = u64::from(rid.1) | u64::from(version) << 16 | (payload as u64) << 32;
        for w in [xid, rid.0, meta, value] {
            rec.extend_from_slice(&w.to_le_bytes());
        }
        rec.resize(HDR as usize + payload, 0);
        t = self
            .pcm
            .write(self.geo.unit_addr(u), &rec, t)
            .map_err(werr)?;
        self.used += 1;
        self.unit_value[u as usize] = value;
        t = self.set_bit(u, true, t)?;
        if let Some((old, oxid, _)) = e.uncommitted {
            debug_assert_eq!(
                oxid, xid,
                "record {rid:?} written by two active transactions"
            );
            t = self.free_unit(old, t)?;
        }
        self.map.entry(rid).or_default().uncommitted = Some((u, xid, version));
        self.txs.get_mut(&xid).expect("tx").pcm.insert(rid);
        self.counters.records_flushed += 1;
        Ok(t)
    }

    /// Where a new record goes: a free unit, or — wear leveling (Algorithm 4) — the unit
    /// of the record under the swap pointer, which first moves to a free unit (copy, set
    /// its bit, then clear the old bit: a crash in between leaves two identical copies,
    /// which recovery tolerates). A moved committed record gets a pseudo XID: the largest
    /// XID of a *committed* transaction (see docs/HOST.md, "PCM strategies": the paper's rule is unsafe, and
    /// an aborted XID comes back when its transaction restarts).
    ///
    /// The swap decision (§4.2) reads X_c − X_t as the number of transactions begun since
    /// the record under the pointer was written: the host engine's XIDs are transaction
    /// numbers kept across wait-die restarts (`pcmlogging_engine`), so a restart does not
    /// advance the clock.
    fn place(&mut self, mut t: SimTime) -> Result<(u64, SimTime), String> {
        let fresh = |s: &mut Self| {
            s.alloc()
                .ok_or_else(|| "pcm full of uncommitted records (nothing to destage)".to_string())
        };
        let Some(delta) = self.cfg.wear_delta else {
            return Ok((fresh(self)?, t));
        };
        let p = self.swap_ptr;
        self.swap_ptr = (p + 1) % self.geo.units;
        if self.bitmap[(p / 64) as usize] >> (p % 64) & 1 == 0 {
            return Ok((fresh(self)?, t));
        }
        let a = self.geo.unit_addr(p);
        let (hdr, t1) = self.pcm.read(a, HDR as usize, t).map_err(werr)?;
        t = t1;
        let w = |i: usize| u64::from_le_bytes(hdr[i * 8..i * 8 + 8].try_into().expect("8"));
        let (xt, pid, meta, value) = (w(0), w(1), w(2), w(3));
        let diff = self.max_xid.saturating_sub(xt);
        let pr = if diff >= delta {
            1.0
        } else {
            diff as f64 / delta as f64
        };
        if pr <= self.rng.unit_f64() {
            return Ok((fresh(self)?, t));
        }
        let rid = (pid, (meta & 0xffff) as u16);
        let e = self.map.get(&rid).copied().unwrap_or_default();
        let committed = e.committed.is_some_and(|(u, _)| u == p);
        let uncommitted = e.uncommitted.is_some_and(|(u, _, _)| u == p);
        if !committed && !uncommitted {
            return Err(format!(
                "internal: unit {p} holds {rid:?}, which is not mapped there"
            ));
        }
        let n = fresh(self)?;
        let new_xid = if !committed {
            xt
        } else if self.cfg.fault_paper_pseudo_xid {
            let atl = &self.atl;
            (1..=self.max_xid)
                .rev()
                .find(|x| !atl.contains(x))
                .unwrap_or(0)
        } else if self.cfg.fault_pseudo_xid_of_aborts {
            self.max_finished_xid
        } else {
            self.max_committed_xid
        };
        let payload = self.cfg.record_bytes.min(self.geo.unit_bytes - HDR) as usize;
        let mut rec = Vec::with_capacity(HDR as usize + payload);
        for x in [new_xid, pid, meta, value] {
            rec.extend_from_slice(&x.to_le_bytes());
        }
        rec.resize(HDR as usize + payload, 0);
        t = self
            .pcm
            .write(self.geo.unit_addr(n), &rec, t)
            .map_err(werr)?;
        self.used += 1;
        self.unit_value[n as usize] = value;
        t = self.set_bit(n, true, t)?;
        t = self.free_unit(p, t)?;
        if committed {
            self.destages.moved(&rid, p, n);
        }
        let m = self.map.get_mut(&rid).expect("mapped");
        if committed {
            m.committed = m.committed.map(|(_, v)| (n, v));
        } else {
            m.uncommitted = m.uncommitted.map(|(_, x, v)| (n, x, v));
        }
        self.counters.swaps += 1;
        Ok((p, t))
    }

    /// A buffered page leaves DRAM (steal): its dirty records go to PCM.
    pub fn flush_page(&mut self, page: u64, now: SimTime) -> Result<SimTime, String> {
        let rids: Vec<Rid> = self
            .dram
            .range((page, 0)..=(page, u16::MAX))
            .map(|(r, _)| *r)
            .collect();
        let mut t = self.at(now);
        for r in rids {
            t = self.flush_record(r, t)?;
        }
        self.clock = t;
        Ok(t)
    }

    /// Algorithm 2, commit. Returns the ack instant (the ATL removal's completion).
    pub fn commit(&mut self, xid: Xid, now: SimTime) -> Result<SimTime, String> {
        let start = self.at(now);
        let mut t = start;
        // The records still in DRAM, in rid order; each flush takes its own out of the
        // transaction's set, so the set is moved out rather than copied.
        let (atl, dram) = match self.txs.get_mut(&xid) {
            Some(tx) => (tx.atl, std::mem::take(&mut tx.dram)),
            None => (None, BTreeSet::new()),
        };
        let mut ack = start;
        let mut early = None;
        if self.cfg.fault_early_atl_removal {
            if let Some(i) = atl {
                // BUG (planted): the commit point is issued before the flushes complete.
                early = Some(i);
                ack = self.w64(self.geo.atl_addr(self.region, i), 0, start)?;
            }
        }
        for r in &dram {
            t = self.flush_record(*r, t)?;
        }
        let tx = self.txs.remove(&xid).unwrap_or_default();
        if let Some(i) = tx.atl {
            if early.is_none() {
                t = self.w64(self.geo.atl_addr(self.region, i), 0, t)?;
                ack = t;
            }
            self.atl[i as usize] = 0;
        }
        ack = ack.max(t);
        for r in &tx.pcm {
            let e = self.map.get_mut(r).expect("mapped");
            let (u, _, v) = e.uncommitted.take().expect("uncommitted");
            let old = e.committed.replace((u, v));
            if let Some((ou, _)) = old {
                self.destages.forget(r, ou);
                t = self.free_unit(ou, t)?;
            }
            // The record's older entry, if any, dies with its seq.
            self.committed_seq.remove(r);
            self.seq += 1;
            self.committed_fifo.push_back((self.seq, *r));
            self.committed_seq.insert(*r, self.seq);
        }
        self.clock = t;
        self.max_committed_xid = self.max_committed_xid.max(xid);
        self.max_finished_xid = self.max_finished_xid.max(xid);
        self.counters.commits += 1;
        Ok(ack)
    }

    /// Algorithm 2, abort. Returns when the rollback is durable.
    pub fn abort(&mut self, xid: Xid, now: SimTime) -> Result<SimTime, String> {
        let mut t = self.at(now);
        let tx = self.txs.remove(&xid).unwrap_or_default();
        for r in &tx.dram {
            self.dram.remove(r);
        }
        for r in &tx.pcm {
            let e = self.map.get_mut(r).expect("mapped");
            let (u, _, _) = e.uncommitted.take().expect("uncommitted");
            if e.committed.is_none() {
                self.map.remove(r);
            }
            t = self.free_unit(u, t)?;
        }
        if let Some(i) = tx.atl {
            t = self.w64(self.geo.atl_addr(self.region, i), 0, t)?;
            self.atl[i as usize] = 0;
        }
        self.clock = t;
        self.max_finished_xid = self.max_finished_xid.max(xid);
        self.counters.aborts += 1;
        Ok(t)
    }

    /// PCM is full: wait for (or start) destages until a unit is free.
    fn destage_until_free(&mut self, now: SimTime) -> Result<SimTime, String> {
        super::pcm_destage::until_free(self, now, "records")
    }

    /// Between events: finish completed destages, relocate the metadata when due (§4.1),
    /// then start new destages under the high-low watermark or the adaptive policy
    /// (`pcm_destage::start_destages`; occupancy counts units of pending destages as free).
    pub fn maintain(&mut self, now: SimTime) -> Result<SimTime, String> {
        let mut t = self.complete_destages(now)?;
        if self.cfg.relocate_every > 0
            && self.geo.regions > 1
            && self.meta_writes >= self.cfg.relocate_every
        {
            t = self.relocate(t)?;
        }
        super::pcm_destage::start_destages(self, now, t)
    }

    /// Finishes every pending destage (end of a run, tests). Returns when the last
    /// unit is free.
    pub fn drain_destages(&mut self) -> Result<SimTime, String> {
        let mut t = self.clock;
        while let Some(end) = self.destages.next_end() {
            t = self.complete_destages(t.max(end))?;
        }
        Ok(t)
    }

    /// Serves a buffer-pool miss of `page` (§3.3 "Serving read/write requests": "By
    /// consulting the Mapping Table, a record can be directly accessed from PCM, if
    /// available. Otherwise, if an entire page is requested, the page is loaded from
    /// external storage and merged with the latest contents of the relevant records cached
    /// in PCM"). The engine's buffer pool requests whole pages, so the request is for every
    /// record of the page: the page's PCM records are read (header and payload each), and
    /// the disk page is read too unless PCM and DRAM hold every record the disk page holds
    /// (`needs_disk`) — then PCM alone serves the miss (a PCM hit, Fig. 8c). Returns whether
    /// the disk was read and when the page is complete in DRAM ("loading page contents
    /// from external disk and PCM is a parallel process": both start at `now`).
    pub fn read_page_for_miss(
        &mut self,
        page: u64,
        now: SimTime,
    ) -> Result<(bool, SimTime), String> {
        let disk = self.needs_disk(page);
        let mut t = now;
        if disk {
            let (_, e) = self.disk.read(page, now);
            t = e;
            self.counters.miss_disk_reads += 1;
        } else {
            self.counters.pcm_hits += 1;
        }
        t = t.max(self.read_pcm_records(page, now)?);
        Ok((disk, t))
    }

    /// Serves a buffer-pool miss caused by an access to record `(page, slot)` (§3.3: "By
    /// consulting the Mapping Table, a record can be directly accessed from PCM, if
    /// available"): when PCM (or DRAM) holds that record, the page's PCM records are read and
    /// the disk page is not — the frame is then *partial* (the disk page is not merged)
    /// unless PCM holds the whole page's state (`needs_disk`). Otherwise as
    /// `read_page_for_miss`. Returns (disk read, completion, partial).
    pub fn read_record_for_miss(
        &mut self,
        page: u64,
        slot: Option<u16>,
        now: SimTime,
    ) -> Result<(bool, SimTime, bool), String> {
        let held = slot.is_some_and(|s| self.holds((page, s)));
        if !held || !self.needs_disk(page) {
            let (disk, t) = self.read_page_for_miss(page, now)?;
            return Ok((disk, t, false));
        }
        self.counters.pcm_hits += 1;
        self.counters.pcm_record_hits += 1;
        let t = self.read_pcm_records(page, now)?;
        Ok((false, t, true))
    }

    /// A partial frame of `page` (built from PCM records alone) is accessed at a record PCM
    /// does not hold: read the disk page and merge it under the PCM records (§3.3 "the page
    /// is loaded from external storage and merged"). Returns its completion.
    pub fn complete_partial(&mut self, page: u64, now: SimTime) -> SimTime {
        self.counters.partial_completions += 1;
        self.disk.read(page, now).1
    }

    /// Is the newest version of `rid` in PCM or DRAM (not only on disk)?
    pub fn holds(&self, rid: Rid) -> bool {
        self.map.contains_key(&rid) || self.dram.contains_key(&rid)
    }

    /// Reads every PCM record of `page` (header and payload); returns the last completion.
    fn read_pcm_records(&mut self, page: u64, now: SimTime) -> Result<SimTime, String> {
        let len = HDR as usize + self.cfg.record_bytes.min(self.geo.unit_bytes - HDR) as usize;
        let units: Vec<u64> = self
            .map
            .range((page, 0)..=(page, u16::MAX))
            .filter_map(|(_, e)| e.uncommitted.map(|x| x.0).or(e.committed.map(|x| x.0)))
            .collect();
        let mut t = now;
        for u in units {
            // The values are in `unit_value`: only the reads' timing is needed.
            let e = self
                .pcm
                .read_lines(self.geo.unit_addr(u), len, now)
                .map_err(werr)?;
            t = t.max(e);
        }
        Ok(t)
    }

    /// Does a read of `page` need the external disk? Yes unless every slot the disk page
    /// holds a record in is covered by a newer record in PCM or DRAM. The storage manager
    /// knows which slots a disk page holds without reading it: a page never written to disk
    /// holds the loaded records (the loader wrote them), a destaged page holds what the
    /// destage composed. A slot empty on disk and absent from PCM is empty (no record was
    /// ever inserted there), so a page of inserted records that are all still in PCM — or
    /// a page whose every record was updated since its last destage — needs no disk read.
    pub fn needs_disk(&self, page: u64) -> bool {
        let covered = |s: usize| {
            let rid = (page, s as u16);
            self.map.contains_key(&rid) || self.dram.contains_key(&rid)
        };
        match self.disk.image().get(&page) {
            Some(img) => img.iter().enumerate().any(|(s, &v)| v != 0 && !covered(s)),
            None => self
                .initial_page_of(page)
                .iter()
                .enumerate()
                .any(|(s, &v)| v != 0 && !covered(s)),
        }
    }

    /// The page a reader sees now: `current` of every slot, with the disk page (or the
    /// loaded page) built once.
    pub fn current_page(&self, page: u64, slots: u16) -> Vec<u64> {
        let mut vals = match self.disk.image().get(&page) {
            Some(p) => p.clone(),
            None => self.initial_page_of(page),
        };
        vals.resize(slots as usize, 0);
        for (r, e) in self.map.range((page, 0)..=(page, u16::MAX)) {
            let u = e.uncommitted.map(|x| x.0).or(e.committed.map(|x| x.0));
            if let (Some(u), Some(v)) = (u, vals.get_mut(r.1 as usize)) {
                *v = self.unit_value[u as usize];
            }
        }
        for (r, (val, _)) in self.dram.range((page, 0)..=(page, u16::MAX)) {
            if let Some(v) = vals.get_mut(r.1 as usize) {
                *v = *val;
            }
        }
        vals
    }
}

impl DestageCore for PcmLogging {
    type Key = Rid;

    fn destages(&mut self) -> &mut Destages<Rid> {
        &mut self.destages
    }

    fn occupancy(&self) -> (u64, u64, f64, f64) {
        (
            self.used,
            self.geo.units,
            self.cfg.high_watermark,
            self.cfg.low_watermark,
        )
    }

    fn at(&self, now: SimTime) -> SimTime {
        PcmLogging::at(self, now)
    }

    /// Destages the page of the oldest committed record not already being destaged: read
    /// the page, merge every committed PCM record of it, write it. The records' units are
    /// freed when the write has completed (`complete_destages`), so the disk queue runs
    /// beside PCM work (§6.1: "asynchronously flushed out"). Returns the write's end.
    fn destage_one(&mut self, now: SimTime) -> Result<Option<SimTime>, String> {
        while let Some(&(s, r)) = self.committed_fifo.front() {
            if self.committed_seq.get(&r) == Some(&s) {
                break;
            }
            self.committed_fifo.pop_front();
        }
        let Some(&(_, rid)) = self.committed_fifo.front() else {
            return Ok(None);
        };
        let page = rid.0;
        let (img, t) = self.disk.read(page, now);
        let mut vals = img.unwrap_or_else(|| self.initial_page_of(page));
        let mut units = Vec::new();
        let id = self.destages.next_id();
        let rids: Vec<Rid> = self
            .map
            .range((page, 0)..=(page, u16::MAX))
            .map(|(r, _)| *r)
            .collect();
        for r in rids {
            let e = self.map.get(&r).copied().expect("mapped");
            if let Some((u, _)) = e.committed {
                if self.destages.carries(&r) {
                    // An earlier write of this page carries it already (FIFO disk).
                    if let Some(v) = vals.get_mut(r.1 as usize) {
                        *v = self.unit_value[u as usize];
                    }
                    continue;
                }
                self.committed_seq.remove(&r);
                let Some(slot) = vals.get_mut(r.1 as usize) else {
                    return Err(format!(
                        "record {r:?} beyond its page's {} slots",
                        vals.len()
                    ));
                };
                *slot = self.unit_value[u as usize];
                units.push(r);
                self.destages.carry(r, u, id);
            }
        }
        let end = self.disk.write(page, vals, t)?;
        self.counters.destaged_pages += 1;
        self.counters.destaged_records += units.len() as u64;
        // A destage reads and writes the page: two disk I/Os.
        self.destages.issue(now, end, id, units, 2);
        Ok(Some(end))
    }

    /// Frees the units of destages whose disk write completed by `now` (a unit whose record
    /// was replaced by a newer commit meanwhile was freed by that commit).
    fn complete_destages(&mut self, now: SimTime) -> Result<SimTime, String> {
        let mut t = self.at(now);
        // BUG when planted (`fault_early_destage_free`): units freed before the disk write
        // completed.
        let early = self.cfg.fault_early_destage_free;
        for (r, u) in self.destages.complete(now, early) {
            let e = self.map.get_mut(&r).expect("mapped");
            debug_assert_eq!(e.committed.map(|c| c.0), Some(u));
            e.committed = None;
            if e.uncommitted.is_none() {
                self.map.remove(&r);
            }
            t = self.free_unit(u, t)?;
        }
        self.clock = t;
        Ok(t)
    }
}

/// The lowest unit in `[from, to)` whose bit in `bitmap` is clear, a 64-bit word at a
/// time: with PCM full, a unit-by-unit scan from the cursor crossed long runs of used units
/// on every allocation.
fn first_free_in(bitmap: &[u64], from: u64, to: u64) -> Option<u64> {
    let mut i = from;
    while i < to {
        let free = !bitmap[(i / 64) as usize] >> (i % 64);
        if free != 0 {
            let u = i + u64::from(free.trailing_zeros());
            return (u < to).then_some(u);
        }
        i = (i / 64 + 1) * 64;
    }
    None
}

/// What recovery rebuilt: the latest committed value of every record PCM holds, and the
/// time of the scan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    pub records: BTreeMap<Rid, u64>,
    pub scan_ns: u64,
    pub discarded_uncommitted: u64,
    pub discarded_older: u64,
}

/// What Algorithm 3's scan of a PCM image finds (`scan`): the record each RID recovers to,
/// and the valid units recovery discards.
struct Scan {
    g: Geometry,
    region: u64,
    /// Non-empty ActiveTxList entries: (entry, XID).
    atl: Vec<(u64, Xid)>,
    /// Per RID: (version, value, unit) of the committed version recovery keeps.
    keep: BTreeMap<Rid, (u8, u64, u64)>,
    /// Valid units of transactions in the ActiveTxList.
    losers: Vec<u64>,
    /// Valid units holding a committed version older than the kept one, or a second copy
    /// of it (a wear-leveling move cut short).
    replaced: Vec<u64>,
    valid: u64,
    /// The largest XID the ActiveTxList or a valid unit names.
    xid_max: Xid,
}

/// The little-endian word at `a` of a PCM image (`a` inside it: the superblock was checked).
fn word(img: &[u8], a: u64) -> u64 {
    img.get(a as usize..a as usize + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

fn scan(img: &[u8], ub: u64) -> Result<Scan, String> {
    let g = Geometry::read(img, ub)?;
    let w = |a: u64| u64::from_le_bytes(img[a as usize..a as usize + 8].try_into().expect("8"));
    let region = w(ACTIVE_REGION);
    if region >= g.regions {
        return Err(format!(
            "active metadata region {region} of {} regions",
            g.regions
        ));
    }
    let atl: Vec<(u64, Xid)> = (0..g.atl_entries)
        .map(|i| (i, w(g.atl_addr(region, i))))
        .filter(|&(_, x)| x != 0)
        .collect();
    let active: BTreeSet<u64> = atl.iter().map(|&(_, x)| x).collect();
    let mut out = Scan {
        g,
        region,
        xid_max: active.iter().copied().max().unwrap_or(0),
        atl,
        keep: BTreeMap::new(),
        losers: Vec::new(),
        replaced: Vec::new(),
        valid: 0,
    };
    for wi in 0..g.units.div_ceil(64) {
        let word = w(g.bitmap_word_addr(region, wi * 64));
        for b in 0..64 {
            if word >> b & 1 == 0 {
                continue;
            }
            let u = wi * 64 + b;
            if u >= g.units {
                return Err(format!(
                    "bitmap marks unit {u} beyond the {} units",
                    g.units
                ));
            }
            out.valid += 1;
            let a = g.unit_addr(u);
            let (xid, pid, meta, value) = (w(a), w(a + 8), w(a + 16), w(a + 24));
            out.xid_max = out.xid_max.max(xid);
            if active.contains(&xid) {
                out.losers.push(u);
                continue;
            }
            let rid = (pid, (meta & 0xffff) as u16);
            let ver = ((meta >> 16) & 3) as u8;
            match out.keep.get(&rid).copied() {
                None => {
                    out.keep.insert(rid, (ver, value, u));
                }
                Some((v0, _, u0)) if (v0 + 1) % 4 == ver => {
                    out.keep.insert(rid, (ver, value, u));
                    out.replaced.push(u0);
                }
                Some((v0, _, _)) if (ver + 1) % 4 == v0 => out.replaced.push(u),
                // Two copies of one version: a wear-leveling move cut short (§4.2).
                Some((v0, v, _)) if v0 == ver && v == value => out.replaced.push(u),
                Some((v0, _, _)) => {
                    return Err(format!(
                        "record {rid:?} has committed versions {v0} and {ver}, not consecutive"
                    ))
                }
            }
        }
    }
    Ok(out)
}

/// Algorithm 3 over a PCM image alone (no disk I/O).
pub fn recover(pcm: &Pcm) -> Result<Recovered, String> {
    let sc = scan(pcm.image(), u64::from(pcm.config().unit_bytes))?;
    // The scan reads the superblock, the active region's ATL and bitmap, and the valid
    // units' headers.
    Ok(Recovered {
        records: sc.keep.iter().map(|(r, &(_, v, _))| (*r, v)).collect(),
        scan_ns: pcm.scan_ns(64 + sc.g.stride) + pcm.scan_ns(sc.valid * HDR),
        discarded_uncommitted: sc.losers.len() as u64,
        discarded_older: sc.replaced.len() as u64,
    })
}

/// What a restart that writes back (`restart`) did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restarted {
    /// What Algorithm 3 recovered (as `recover` on the crash image).
    pub recovered: Recovered,
    /// The largest XID the crash image names (ActiveTxList, valid units): the resumed run's
    /// XIDs start above it (module docs, "Run-on restart").
    pub xid_max: Xid,
    /// Units whose bit the restart cleared.
    pub freed: u64,
    /// When the restart's last write completed.
    pub end: SimTime,
}

/// A planted bug in the restart that writes back (`restart`); never set outside tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RestartFault {
    #[default]
    None,
    /// The committed versions a newer one replaced (a commit cut short between its commit
    /// point and its frees) stay valid.
    KeepReplaced,
    /// The ActiveTxList is cleared before the losers' units are freed.
    AtlFirst,
}

/// The writes of a restart that writes back, record and page level alike: clear the
/// FreeSlotBitmap bits of the units (or page slots) `free` — `bit_word` gives the address of
/// a unit's bitmap word; every word is one aligned write (atomic), all independent, so
/// issued at once from `t` — then, once they completed, the ActiveTxList entries at `atl`.
/// `RestartFault::AtlFirst` plants the reverse order. Returns when the last write completed.
pub fn restart_writes(
    pcm: &mut Pcm,
    mut t: SimTime,
    free: &[u64],
    bit_word: impl Fn(u64) -> u64,
    atl: &[u64],
    fault: RestartFault,
) -> Result<SimTime, String> {
    let mut words: BTreeMap<u64, u64> = BTreeMap::new();
    for &u in free {
        let a = bit_word(u);
        let w = match words.get(&a) {
            Some(&w) => w,
            None => word(pcm.image(), a),
        };
        words.insert(a, w & !(1 << (u % 64)));
    }
    let clear_atl = |pcm: &mut Pcm, t: SimTime| -> Result<SimTime, String> {
        let mut end = t;
        for &a in atl {
            end = end.max(pcm.write_u64(a, 0, t).map_err(werr)?);
        }
        Ok(end)
    };
    // BUG when planted (`AtlFirst`): the losers' units outlive their ActiveTxList entries.
    if fault == RestartFault::AtlFirst {
        t = clear_atl(pcm, t)?;
    }
    let mut end = t;
    for (&a, &w) in &words {
        end = end.max(pcm.write_u64(a, w, t).map_err(werr)?);
    }
    t = end;
    if fault != RestartFault::AtlFirst {
        t = clear_atl(pcm, t)?;
    }
    Ok(t)
}

/// The restart that writes back (module docs, "Run-on restart"): Algorithm 3's scan, then
/// what Algorithm 2's abort and commit would have finished — clear the bits of every valid
/// unit of a transaction in the ActiveTxList and of every replaced committed version, then,
/// once those clears completed, the ActiveTxList entries. Leaves a PCM whose every valid
/// unit is the one committed version of its RID and whose ActiveTxList is empty: the state
/// `PcmLogging::open` resumes from.
pub fn restart(pcm: &mut Pcm, now: SimTime, fault: RestartFault) -> Result<Restarted, String> {
    let recovered = recover(pcm)?;
    let sc = scan(pcm.image(), u64::from(pcm.config().unit_bytes))?;
    let mut free: Vec<u64> = sc.losers.clone();
    if fault != RestartFault::KeepReplaced {
        free.extend(&sc.replaced);
    }
    let g = sc.g;
    let atl: Vec<u64> = sc
        .atl
        .iter()
        .map(|&(i, _)| g.atl_addr(sc.region, i))
        .collect();
    // The writes follow the scan.
    let t = restart_writes(
        pcm,
        now + recovered.scan_ns,
        &free,
        |u| g.bitmap_word_addr(sc.region, u),
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

#[cfg(test)]
mod tests {
    use super::*;
    use media::disk::DiskKind;
    use media::pcm::PcmConfig;

    fn core(bytes: u64) -> PcmLogging {
        let pcm = Pcm::new(PcmConfig {
            bytes,
            ..PcmConfig::default()
        })
        .unwrap();
        PcmLogging::format(
            PcmLogConfig {
                atl_entries: 8,
                slots_per_page: 4,
                ..Default::default()
            },
            pcm,
            Disk::new(DiskKind::Hdd),
        )
        .unwrap()
    }

    /// The word-at-a-time search gives the unit a unit-by-unit scan gives, on bitmaps from
    /// empty to full, over unit counts that do and do not end on a word boundary.
    #[test]
    fn the_word_search_finds_the_unit_the_unit_scan_finds() {
        let mut rng = sim::Rng::new(7);
        for units in [1u64, 63, 64, 65, 130, 1000] {
            for fill_permille in [0u64, 500, 990, 1000] {
                let mut bitmap = vec![0u64; units.div_ceil(64) as usize];
                for u in 0..units {
                    if rng.below(1000) < fill_permille {
                        bitmap[(u / 64) as usize] |= 1 << (u % 64);
                    }
                }
                for cursor in 0..units {
                    let scan = (0..units)
                        .map(|k| (cursor + k) % units)
                        .find(|&u| bitmap[(u / 64) as usize] >> (u % 64) & 1 == 0);
                    let words = first_free_in(&bitmap, cursor, units)
                        .or_else(|| first_free_in(&bitmap, 0, cursor));
                    assert_eq!(words, scan, "units {units}, cursor {cursor}");
                }
            }
        }
    }

    #[test]
    fn watermark_hysteresis() {
        assert!(!watermark(98, 100, false, 0.99, 0.975));
        assert!(watermark(99, 100, false, 0.99, 0.975));
        assert!(watermark(98, 100, true, 0.99, 0.975));
        assert!(!watermark(97, 100, true, 0.99, 0.975));
    }

    #[test]
    fn geometry_fits_and_is_read_back() {
        let g = Geometry::new(8192, 128, 8).unwrap();
        assert_eq!(g.bitmap_off, 128);
        assert!(g.records_off + g.units * 128 <= 8192);
        assert_eq!(g.units, 62);
        let c = core(8192);
        assert_eq!(Geometry::read(c.pcm.image(), 128).unwrap(), c.geometry());
    }

    #[test]
    fn commit_abort_and_recovery_by_hand() {
        let mut c = core(8192);
        c.update(1, (0, 1), 11).unwrap();
        c.update(2, (0, 2), 22).unwrap();
        // Steal: page 0 goes to PCM with both uncommitted records.
        let t = c.flush_page(0, SimTime::ZERO).unwrap();
        let r = recover(&c.pcm).unwrap();
        assert!(r.records.is_empty());
        assert_eq!(r.discarded_uncommitted, 2);
        let ack = c.commit(1, t).unwrap();
        assert!(ack > t);
        c.abort(2, ack).unwrap();
        let r = recover(&c.pcm).unwrap();
        assert_eq!(r.records, BTreeMap::from([((0, 1), 11)]));
        // A second committed version replaces the first.
        c.update(3, (0, 1), 33).unwrap();
        let t = c.commit(3, SimTime(10_000_000)).unwrap();
        assert_eq!(
            recover(&c.pcm).unwrap().records,
            BTreeMap::from([((0, 1), 33)])
        );
        assert_eq!(c.used_units(), 1);
        // Destage: the record moves to disk and PCM becomes empty once the write is done.
        c.destage_one(t).unwrap().unwrap();
        assert_eq!(c.used_units(), 1);
        c.drain_destages().unwrap();
        assert_eq!(c.used_units(), 0);
        assert_eq!(
            c.disk.image()[&0],
            vec![
                initial_record((0, 0)),
                33,
                initial_record((0, 2)),
                initial_record((0, 3))
            ]
        );
        assert!(recover(&c.pcm).unwrap().records.is_empty());
        assert_eq!(c.current((0, 1)), 33);
        assert_eq!(c.current((0, 2)), initial_record((0, 2)));
    }

    /// The run-on restart (module docs, "Run-on restart") on a crash image holding a loser
    /// (in the ActiveTxList, one stolen record) and a commit cut short between its commit
    /// point and its frees (two committed versions of one record): it frees both, clears the
    /// ActiveTxList, recovers what Algorithm 3 recovers, and `open` resumes on the result
    /// with the tier's records, units and XID clock carried over. `open` refuses the crash
    /// image itself, and the image a restart that keeps replaced versions leaves.
    #[test]
    fn a_restart_that_writes_back_leaves_a_tier_the_core_resumes_on() {
        let mut c = core(8192);
        let g = c.geo;
        let bm = g.bitmap_word_addr(0, 0);
        c.update(1, (0, 1), 11).unwrap();
        let t = c.commit(1, SimTime::ZERO).unwrap();
        let first = word(c.pcm.image(), bm);
        c.update(3, (0, 1), 33).unwrap();
        let t = c.commit(3, t).unwrap();
        c.update(4, (1, 2), 44).unwrap();
        let t = c.flush_page(1, t).unwrap();
        let mut img = c.pcm.image().to_vec();
        // The older version's bit set again: its free did not persist.
        let w = word(&img, bm) | first;
        img[bm as usize..bm as usize + 8].copy_from_slice(&w.to_le_bytes());
        let crashed = Pcm::from_image(c.pcm.config().clone(), img.clone()).unwrap();
        let want = recover(&crashed).unwrap();
        assert_eq!(want.records, BTreeMap::from([((0, 1), 33)]));
        assert_eq!((want.discarded_uncommitted, want.discarded_older), (1, 1));
        let cfg = PcmLogConfig {
            atl_entries: 8,
            slots_per_page: 4,
            ..Default::default()
        };
        let open =
            |pcm: Pcm, x: Xid| PcmLogging::open(cfg.clone(), pcm, Disk::new(DiskKind::Hdd), t, x);
        let e = open(crashed, 4).err().unwrap();
        assert!(e.contains("ActiveTxList"), "{e}");
        let mut kept = Pcm::from_image(c.pcm.config().clone(), img.clone()).unwrap();
        restart(&mut kept, t, RestartFault::KeepReplaced).unwrap();
        let e = open(kept, 4).err().unwrap();
        assert!(e.contains("replaced"), "{e}");
        let mut pcm = Pcm::from_image(c.pcm.config().clone(), img).unwrap();
        pcm.set_logging(true);
        let r = restart(&mut pcm, t, RestartFault::None).unwrap();
        assert_eq!((r.freed, r.xid_max), (2, 4));
        assert!(r.end > t);
        // Two bit clears in one word (both units are in word 0, written once), then the
        // ActiveTxList entry.
        assert_eq!(pcm.take_log().len(), 2);
        let after = recover(&pcm).unwrap();
        assert_eq!(after.records, want.records);
        assert_eq!((after.discarded_uncommitted, after.discarded_older), (0, 0));
        let mut d = open(pcm, r.xid_max).unwrap();
        assert_eq!(d.used_units(), 1);
        assert_eq!(d.current((0, 1)), 33);
        assert_eq!(d.current((1, 2)), initial_record((1, 2)));
        assert_eq!(d.max_committed_xid, 4);
        // The resumed core runs on: a new transaction's record joins the recovered one, and
        // the next commit of (0, 1) replaces version 1 with version 2.
        d.update(5, (1, 2), 55).unwrap();
        let t = d.commit(5, r.end).unwrap();
        d.update(6, (0, 1), 66).unwrap();
        d.commit(6, t).unwrap();
        assert_eq!(
            recover(&d.pcm).unwrap().records,
            BTreeMap::from([((0, 1), 66), ((1, 2), 55)])
        );
        assert_eq!(d.used_units(), 2);
    }

    /// §3.3: a miss is served by PCM alone when PCM holds every record the disk page
    /// holds; otherwise the disk page is read and the PCM records merged over it. (On the
    /// code before this rule every miss read the disk: `pcm_hits` stayed 0.)
    #[test]
    fn a_miss_reads_the_disk_only_when_pcm_lacks_a_record_of_the_page() {
        let mut c = core(8192);
        // Page 0: all four loaded records updated and committed; page 1: two of four.
        for s in 0..4u16 {
            c.update(1, (0, s), 10 + u64::from(s)).unwrap();
        }
        c.update(1, (1, 0), 20).unwrap();
        c.update(1, (1, 1), 21).unwrap();
        let t = c.commit(1, SimTime::ZERO).unwrap();
        let reads = c.disk.counters.reads;
        let (disk, t0) = c.read_page_for_miss(0, t).unwrap();
        assert!(!disk);
        assert_eq!(c.disk.counters.reads, reads, "PCM holds all of page 0");
        // Four records of one 128 B unit each = 8 lines over 4 chips: two PCM read rounds.
        assert_eq!(t0, t + 100);
        assert_eq!(c.counters.pcm_hits, 1);
        assert_eq!(c.current_page(0, 4), vec![10, 11, 12, 13]);
        let (disk, t1) = c.read_page_for_miss(1, t).unwrap();
        assert!(disk);
        assert_eq!(c.disk.counters.reads, reads + 1);
        assert!(t1 >= t + 8_000_000, "an HDD read: {t1:?}");
        assert_eq!(
            c.current_page(1, 4),
            vec![20, 21, initial_record((1, 2)), initial_record((1, 3))]
        );
        // An uncommitted record covers its slot too (its writer holds the lock and its
        // before-image); a DRAM-dirty record likewise.
        c.update(2, (1, 2), 22).unwrap();
        c.flush_page(1, t1).unwrap();
        c.update(2, (1, 3), 23).unwrap();
        assert!(!c.needs_disk(1));
        c.abort(2, t1).unwrap();
        assert!(c.needs_disk(1));
        // Once destaged, page 0's disk image holds its records and PCM none: disk again.
        c.destage_one(t1).unwrap();
        c.drain_destages().unwrap();
        assert!(c.needs_disk(0));
        assert_eq!(c.current_page(0, 4), vec![10, 11, 12, 13]);
    }

    /// §3.3 record hits: a miss for a record PCM holds reads PCM only and leaves the
    /// frame partial; a miss for a record only the disk holds reads the disk.
    #[test]
    fn a_miss_for_a_record_in_pcm_reads_no_disk_page() {
        let mut c = core(8192);
        c.update(1, (2, 1), 77).unwrap();
        let t = c.commit(1, SimTime::ZERO).unwrap();
        let reads = c.disk.counters.reads;
        let (disk, t1, partial) = c.read_record_for_miss(2, Some(1), t).unwrap();
        assert!(!disk && partial);
        assert_eq!(
            t1,
            t + 50,
            "one record of 2 lines on 2 chips: one read round"
        );
        assert_eq!(c.disk.counters.reads, reads);
        assert_eq!(c.counters.pcm_record_hits, 1);
        let (disk, _, partial) = c.read_record_for_miss(2, Some(0), t).unwrap();
        assert!(disk && !partial);
        let (disk, _, partial) = c.read_record_for_miss(2, None, t).unwrap();
        assert!(disk && !partial);
        assert_eq!(c.disk.counters.reads, reads + 2);
        c.complete_partial(2, t);
        assert_eq!(c.disk.counters.reads, reads + 3);
        assert_eq!(c.counters.partial_completions, 1);
    }

    /// A page with no loaded records (inserts beyond the loaded database) is not on disk:
    /// its inserted records in PCM are all of it.
    #[test]
    fn a_page_of_inserted_records_in_pcm_needs_no_disk_read() {
        let mut c = core(8192);
        c.set_initial_page(std::sync::Arc::new(|p| {
            if p >= 5 {
                vec![0; 4]
            } else {
                (0..4).map(|s| initial_record((p, s))).collect()
            }
        }));
        assert!(!c.needs_disk(5));
        c.update(1, (5, 0), 50).unwrap();
        let t = c.commit(1, SimTime::ZERO).unwrap();
        let (disk, _) = c.read_page_for_miss(5, t).unwrap();
        assert!(!disk);
        assert_eq!(c.current_page(5, 4), vec![50, 0, 0, 0]);
        assert!(c.needs_disk(4));
    }

    #[test]
    fn full_pcm_destages_committed_records() {
        let mut c = core(4096);
        let units = c.geometry().units;
        let mut t = SimTime::ZERO;
        for i in 0..units + 5 {
            let x = i + 1;
            c.update(x, (i / 4, (i % 4) as u16), 100 + i).unwrap();
            t = c.commit(x, t).unwrap();
        }
        assert!(c.counters.destaged_records > 0);
        assert!(c.used_units() <= units);
        for i in 0..units + 5 {
            assert_eq!(c.current((i / 4, (i % 4) as u16)), 100 + i);
        }
    }

    #[test]
    fn recovery_scan_time_and_wear_by_hand() {
        // 1 MiB PCM, 8 ATL entries: bitmap at 128, records at 128 + 8*ceil(U/64) rounded to 128.
        let mut c = core(1 << 20);
        let g = c.geometry();
        let mut t = SimTime::ZERO;
        for i in 0..100u64 {
            c.update(i + 1, (i / 4, (i % 4) as u16), i + 5).unwrap();
            t = c.commit(i + 1, t).unwrap();
        }
        let r = recover(&c.pcm).unwrap();
        assert_eq!(r.records.len(), 100);
        // metadata lines / 4 chips * 50 ns + 100 headers of 32 B (50 lines) / 4 chips * 50 ns
        let meta_lines = (64 + g.stride) / 64;
        assert_eq!(
            r.scan_ns,
            meta_lines.div_ceil(4) * 50 + 50u64.div_ceil(4) * 50
        );
        // Each commit: ATL append (1 line), record (2 lines: 32 + 85 = 117 B), bitmap (1),
        // ATL clear (1) = 5 line writes.
        assert_eq!(c.pcm.counters.line_writes, 500);
        let w = c.pcm.wear();
        assert_eq!(w.total_line_writes, 500);
        // Unit 0 holds the superblock (written once at format) and ATL entry 0 (two writes
        // per commit): the hottest unit, which is what §4 wear leveling is for.
        assert_eq!(c.pcm.unit_writes()[0], 201);
    }
}
