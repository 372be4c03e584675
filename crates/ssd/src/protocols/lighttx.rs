//! `lighttx`: LightTx (Lu et al., IEEE TC 2015, §3): a page-independent commit protocol with
//! an Active TxTable and zone-based transaction state tracking.
//!
//! This file also holds the engine MHL-D (`mhl_d.rs`) runs on: MHL-D differs only in where
//! a transaction's pages go (`Placement`) and in refusing more concurrent transactions than
//! it has log heads. Everything below about OOB layout, zones and recovery holds for both.
//! The Active TxTable's bookkeeping (rows, held pages, transaction ids, log heads) is
//! `txtable.rs`, shared with AW's engine.
//!
//! # Commit protocol (§3.2)
//!
//! Every page a transaction writes carries its TxID; the *last-written* page also carries
//! TxCnt (how many pages the transaction wrote) and TxVer (the commit sequence number); all
//! other pages carry zero in both (Fig. 3, Fig. 4). The latest page of each active
//! transaction is held in controller DRAM until that transaction's next command (§3.2
//! "Operation"): another WRITE programs it with TxCnt = TxVer = 0, COMMIT programs it with
//! TxCnt = page count and TxVer = the next commit version, ABORT drops it. A plain
//! (non-transactional) write is a one-page transaction with no TxID, TxCnt = 1 and a TxVer.
//!
//! Mapping-table updates are deferred to commit: a write records LPN → PPN in the Active
//! TxTable (Fig. 4, top) and pins the page; COMMIT copies the transaction's entries into the
//! mapping table in one step; ABORT drops them. Concurrent transactions may write the same
//! logical page (serializable isolation): each has its own copy, and the one whose COMMIT is
//! issued last wins, which is also TxVer order. COMMIT is acked when every page of the
//! transaction has been programmed (the flagged last page included).
//!
//! TxIDs on flash are a device-internal counter (unique for the device's lifetime, recovered
//! from the medium), not the host's TxId, so a host that reuses TxIds cannot confuse
//! recovery (`protocol.rs`).
//!
//! # OOB layout of data pages (29 bytes, all integers little-endian)
//!
//! ```text
//! [0]       page kind: 0x01 DATA
//! [1..5]    lpn, u32
//! [5..9]    TxID, u32 (0xFFFF_FFFF: a plain write, "TxID not set", §3.2)
//! [9..13]   TxCnt, u32: 0 on every page but a transaction's last-written one, which holds
//!           the number of pages the transaction wrote; 1 on a plain write
//! [13..17]  TxVer, u32: 0 except on the last-written page: the commit version
//! [17..21]  index of the page within its transaction, u32 (0-based, in write order)
//! [21..25]  copy stamp, u32: 0xFFFF_FFFF on a page the protocol wrote; on a GC copy, the
//!           commit version current when it was copied
//! [25..29]  copy epoch, u32: 0xFFFF_FFFF on a page the protocol wrote; on a GC copy, the
//!           commit version of the checkpoint that released the source block to GC (0:
//!           released by a checkpoint already durable)
//! ```
//!
//! Bytes [0..17] are Fig. 3 (TxID, TxCnt, TxVer, 4 bytes each) plus the lpn. The page index
//! is our addition: a transaction may write one logical page twice, and recovery must know
//! which copy is the later one (the paper does not say); it also makes the page count exact
//! (distinct indices, so no page can be counted twice). The copy fields exist because GC
//! moves pages of dead transactions while their translation-page entry still points at the
//! source; see "GC" below. The FTL's own pages (summary, translation, root) keep their
//! layouts (`oob.rs`).
//!
//! # Zones (§3.3) on the FTL's checkpoint machinery (`meta.rs`)
//!
//! - *Free zone*: the FTL's free pools.
//! - *Available zone*: the blocks host writes may go to until the next checkpoint: the
//!   FTL's per-unit window (recorded in each root) and the open blocks from their write
//!   pointer. Every block this protocol programs a data page into becomes *protected*:
//!   `set_eligible(false)`, so neither GC nor static wear leveling (§3.3.3) may pick it.
//!   (GC's own blocks, which hold only copies of dead transactions' pages, are not.)
//! - *Unavailable zone*: protected blocks holding pages of live (active) transactions.
//!   `checkpoint_blocks` returns them, so each root's scan set holds them whole.
//! - *Checkpointed zone*: every other full block. At a checkpoint (zone sliding), protected
//!   full blocks that hold no page of an active transaction are released to GC.
//!
//! A checkpoint is zone sliding (§3.3.2): it writes the dirty translation pages (mapping
//! persistence happens only here, §3.3.3), refills the windows (free → available) and
//! records the unavailable zone in the root's scan set. It is taken when a unit's window is
//! used up (the available zone ran short, `wants_checkpoint`), when a unit at its GC
//! threshold has nothing left to collect but protected blocks could be released, and every
//! `ftl.checkpoint_interval` host writes. Its cost is every translation page dirtied since
//! the last one, so its share of writes (Fig. 19) falls with larger zones
//! (`ftl.checkpoint_window_blocks`) and with locality, and rises with the logical space. The paper also keeps in the unavailable zone the
//! blocks of *dead* transactions that still have pages in the available zone; we do not need
//! to: the root records the commit version `V` current at the checkpoint, and recovery redoes
//! only transactions with TxVer > V. Every transaction committed before the checkpoint is in
//! its translation pages, so a dead transaction partly seen by the scan is simply ignored.
//!
//! # GC
//!
//! GC only collects checkpointed blocks, so it only ever copies pages of dead transactions
//! that are mapped (committed). The copy carries a stamp (the commit version current when it
//! was copied) and the epoch at which its source block was released. After a crash the
//! root's translation page may still point at the source, which GC may have erased: the copy
//! in the scan set stands for it. A released block's erase waits until the root that
//! released it is durable (`hold_erase_until`), but GC may copy from it earlier; a copy whose
//! epoch is newer than the root recovery uses is ignored (its source is then still intact,
//! and may belong to a transaction that root did not capture).
//!
//! # Recovery (§3.4.2)
//!
//! The FTL reads the newest complete root (mapping table as of the checkpoint, `V`, the next
//! TxID) and scans only its scan set: the available zone (window blocks, open blocks from
//! their write pointer) and the unavailable zone (whole blocks). Then:
//! 1. every scanned page of a transaction is grouped by TxID; a transaction is committed if
//!    it has a page with non-zero TxCnt, TxVer > V, and exactly the indices 0..TxCnt among
//!    its readable pages (§3.2: "counts the number of its pages and checks ... TxCnt");
//!    a plain write is committed if its TxVer > V;
//! 2. trusted GC copies (epoch ≤ V, stamp ≥ V) replace the checkpoint's entry of their lpn;
//! 3. committed transactions are redone in TxVer order (step 3 of §3.4.2); within one, the
//!    page with the highest index wins.
//!
//! Nothing else is read: no data page outside the two zones. After recovery every scanned
//! block is protected until the checkpoint recovery ends with is durable, the commit version
//! and TxID counter resume above everything found, and there are no active transactions.
//!
//! # Crash during recovery
//!
//! Until the checkpoint that ends recovery is durable, a second crash recovers from the same
//! root and scan set again, so it must find every transaction the first recovery redid
//! *whole*: all indices 0..TxCnt, the flagged last page included. A redone transaction's
//! page may already be superseded by a later one (its flagged page rewritten by the next
//! transaction, say), which left its block with no mapped page; such a block used to go to
//! the free pool, and that checkpoint's first operations (refilling the window, opening a
//! map block) erased it, so the second recovery found the transaction incomplete and lost
//! it. Found by the double-crash check on mhl-d (seed 11, timing
//! `host=1,channel=20,erase=3788981`: the flagged page of a 3-page transaction, superseded,
//! in the only block recovery's checkpoint erased before its root). So recovery pins every
//! page of every redone transaction; their blocks stay full and protected, and the pins go
//! when that checkpoint's root is durable (`on_checkpoint_durable`, erases wait for it).
//!
//! # Why it is atomic and durable, case by case
//!
//! - *Crash before COMMIT is issued*: no page of the transaction has non-zero TxCnt (the last
//!   page was only in DRAM), so it is not committed; its pages are not in the mapping table.
//! - *Crash while COMMIT is in flight*: its pages are all durable or not. If every page
//!   (indices 0..TxCnt) is readable it is redone, else ignored: all or nothing. A torn page
//!   reads uncorrectable and is not counted.
//! - *Acked COMMIT*: every page was durable at the ack. Every page lies in the root's scan
//!   set: written after the checkpoint (available zone) or before it while the transaction
//!   was active (then its block was in the unavailable zone of that checkpoint, scanned
//!   whole, and protected so GC could not move or erase it). TxVer > V unless the root is
//!   newer than the commit, in which case its translation pages hold it (they wait for every
//!   program issued before the checkpoint).
//! - *Newest version*: translation pages hold versions ≤ V; copies hold those same versions
//!   (a copy of a newer version has an epoch > V, see GC); redone transactions are newer and
//!   applied in TxVer = commit order; a page superseded by a later commit stays unerased until
//!   that commit is durable (`map` with the ack as `durable_at`).
//! - *Stale pages*: after a recovery, pages of transactions judged uncommitted stay on flash;
//!   the commit version and TxID resume above every value recovery saw, and every page outside
//!   a scan set predates its root, so none of them can later count as committed.
//! - *Crash inside recovery*: see "Crash during recovery": nothing a redone transaction
//!   needs is erased before the root naming the recovered state is durable.
//!
//! Assumptions about the medium: as `docs/CRASH-MODEL.md` (torn programs read uncorrectable,
//! one plane executes in issue order). Reads return the newest committed version: the
//! mapping table only ever holds committed pages.

use crate::commit::{CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo, TxRef};
use crate::core::{blank_oob, BlockState, FtlCore, Stream};
use crate::error::{Result, SsdError};
use crate::gc::FtlHooks;
use crate::oob::{get_u32, kind, put_u32, Reader, Writer};
use crate::protocols::txtable::{self, Active, Written};
use crate::recovery::RecoveryCtx;
use media::{BlockId, Content, Ppa, PuId};
use sim::{Lpn, SimTime};
use std::collections::{BTreeMap, BTreeSet};

pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "lighttx",
    summary: "LightTx: page-independent commit (TxID/TxCnt/TxVer in OOB), Active TxTable, zone-based state tracking",
    oob_bytes: OOB_BYTES,
    atomic: true,
    needs_checkpoints: true,
    supports_checkpoints: true,
    isolation: &Isolation::ALL,
    supports_trim: false,
    create,
    recover,
};

pub(crate) const OOB_BYTES: u32 = 29;
const OFF_LPN: usize = 1;
const OFF_TXID: usize = 5;
const OFF_CNT: usize = 9;
const OFF_VER: usize = 13;
const OFF_IDX: usize = 17;
const OFF_STAMP: usize = 21;
const OFF_EPOCH: usize = 25;
/// "Not set": a plain write's TxID, an original page's copy fields.
const NONE32: u32 = u32::MAX;
const BLOB_MAGIC: u32 = 0x3158_544C; // "LTX1"

fn create(_: &ProtocolConfig, core: &mut FtlCore) -> Result<Box<dyn CommitProtocol>> {
    Ok(Box::new(ZoneTx::new("lighttx", Placement::Striped, core)))
}

fn recover(ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    Ok(Box::new(ZoneTx::recover(
        "lighttx",
        Placement::Striped,
        ctx,
    )?))
}

/// Where a transaction's pages go.
#[derive(Clone, Debug)]
pub(crate) enum Placement {
    /// LightTx: striped over every parallel unit (the host stream), one page at a time.
    Striped,
    /// MHL-D: each active transaction holds one log head, a (unit, stream) pair, and its
    /// pages go to consecutive pages of that log.
    Heads(Vec<(PuId, Stream)>),
}

impl Placement {
    /// MHL-D's log heads for `n` requested heads: head k is stream PROTO0 + k / units in unit
    /// k mod units. At most units × 5 (the protocol streams there are).
    pub(crate) fn heads(core: &FtlCore, n: u32) -> Placement {
        let pus = core.geo.pus();
        let streams = (crate::core::NSTREAMS as u32) - u32::from(Stream::PROTO0.0);
        let n = n.clamp(1, pus * streams);
        Placement::Heads(
            (0..n)
                .map(|k| (PuId(k % pus), Stream(Stream::PROTO0.0 + (k / pus) as u8)))
                .collect(),
        )
    }
}

/// The LightTx / MHL-D engine.
#[derive(Clone)]
pub(crate) struct ZoneTx {
    name: &'static str,
    placement: Placement,
    /// Per log head (MHL-D), the transaction holding it.
    head_owner: Vec<Option<u32>>,
    /// The Active TxTable, by device transaction sequence.
    active: Active,
    next_txid: u32,
    /// The last commit version issued (TxVer).
    last_ver: u32,
    /// Available and unavailable zones: blocks GC must not touch.
    protected: BTreeSet<BlockId>,
    /// Blocks released at a checkpoint whose root may not be durable yet, with that
    /// checkpoint's commit version (the copy epoch).
    released: BTreeMap<BlockId, u32>,
    /// (root end, epoch, blocks) of recent releases, pruned once the root is durable.
    pending: Vec<(SimTime, u32, Vec<BlockId>)>,
    page_bytes: u64,
    slidings: u64,
    released_total: u64,
    unavailable_last: u64,
    spills: u64,
    /// Where MHL-D's search for a free log head starts (round robin).
    head_cursor: usize,
    /// Every page of the transactions recovery redid, pinned until the checkpoint that ends
    /// recovery is durable (see "Crash during recovery" in the module docs).
    recovery_pins: Vec<Ppa>,
}

fn corrupt(detail: String) -> SsdError {
    SsdError::CorruptImage { detail }
}

impl ZoneTx {
    pub(crate) fn new(name: &'static str, placement: Placement, core: &FtlCore) -> ZoneTx {
        let heads = match &placement {
            Placement::Striped => 0,
            Placement::Heads(h) => h.len(),
        };
        ZoneTx {
            name,
            placement,
            head_owner: vec![None; heads],
            active: BTreeMap::new(),
            next_txid: 0,
            last_ver: 0,
            protected: BTreeSet::new(),
            released: BTreeMap::new(),
            pending: Vec::new(),
            page_bytes: u64::from(core.geo.page_bytes),
            slidings: 0,
            released_total: 0,
            unavailable_last: 0,
            spills: 0,
            head_cursor: 0,
            recovery_pins: Vec::new(),
        }
    }

    /// Blocks holding programmed pages of active transactions: the unavailable zone.
    fn unavailable(&self, core: &FtlCore) -> BTreeSet<BlockId> {
        self.active
            .values()
            .flat_map(|a| a.pages.iter())
            .map(|w| core.geo.block_of(w.ppa))
            .collect()
    }

    fn protect(&mut self, core: &mut FtlCore, block: BlockId) {
        if core.block(block).eligible {
            core.set_eligible(block, false);
        }
        self.protected.insert(block);
    }

    /// Forgets releases whose root is durable by `now` (their copies need no epoch).
    fn prune(&mut self, now: SimTime) {
        if self.pending.iter().all(|(at, _, _)| *at > now) {
            return;
        }
        let mut keep = Vec::new();
        for (at, epoch, blocks) in std::mem::take(&mut self.pending) {
            if at > now {
                keep.push((at, epoch, blocks));
                continue;
            }
            for b in blocks {
                if self.released.get(&b) == Some(&epoch) {
                    self.released.remove(&b);
                }
            }
        }
        self.pending = keep;
    }

    /// Programs one data page of a transaction (or a plain write) and protects its block.
    #[allow(clippy::too_many_arguments)]
    fn program_page(
        &mut self,
        core: &mut FtlCore,
        head: Option<usize>,
        txid: u32,
        lpn: Lpn,
        tag: u64,
        index: u32,
        cnt: u32,
        ver: u32,
        ready: SimTime,
    ) -> Result<(Ppa, SimTime)> {
        let mut oob = blank_oob(core, kind::DATA);
        put_u32(&mut oob, OFF_LPN, lpn.0);
        put_u32(&mut oob, OFF_TXID, txid);
        put_u32(&mut oob, OFF_CNT, cnt);
        put_u32(&mut oob, OFF_VER, ver);
        put_u32(&mut oob, OFF_IDX, index);
        let (ppa, t) = match (&self.placement, head) {
            (Placement::Heads(h), Some(k)) => {
                let (pu, stream) = h[k];
                match core.program(stream, Some(pu), Content::Tag(tag), &oob, ready) {
                    Ok(x) => x,
                    // The head's unit has no free block left: the page spills over to the
                    // striped host stream (recovery does not depend on placement).
                    Err(SsdError::OutOfSpace { .. }) => {
                        self.spills += 1;
                        core.program(Stream::HOST, None, Content::Tag(tag), &oob, ready)?
                    }
                    Err(e) => return Err(e),
                }
            }
            _ => core.program(Stream::HOST, None, Content::Tag(tag), &oob, ready)?,
        };
        let block = core.geo.block_of(ppa);
        self.protect(core, block);
        Ok((ppa, t.end))
    }

    fn release_head(&mut self, head: Option<usize>) {
        txtable::release_head(&mut self.head_owner, head);
    }

    /// GC is (about to be) needed on `pu` and has nothing to collect there
    /// (`FtlCore::short_units_without_victims`), while a checkpoint could release a protected
    /// full block without pages of active transactions.
    fn releasable(&self, core: &FtlCore, pu: PuId, unavailable: &BTreeSet<BlockId>) -> bool {
        let bpp = core.geo.blocks_per_plane;
        let first = pu.0 * bpp;
        self.protected
            .range(BlockId(first)..BlockId(first + bpp))
            .any(|b| core.block(*b).state == BlockState::Full && !unavailable.contains(b))
    }

    fn blob(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(BLOB_MAGIC).u32(self.last_ver).u32(self.next_txid);
        w.0
    }

    /// Rebuilds the engine from a crash image (see the module docs, "Recovery").
    pub(crate) fn recover(
        name: &'static str,
        placement: Placement,
        ctx: &mut RecoveryCtx<'_>,
    ) -> Result<ZoneTx> {
        let lp = ctx.core.logical_pages() as usize;
        let mut l2p = vec![Ppa::NONE; lp];
        let (mut v_root, mut next_txid) = (0u32, 0u32);
        if let Some(root) = ctx.root.as_ref() {
            l2p.clone_from(&root.l2p);
            if !root.blob.is_empty() {
                let mut r = Reader::new(&root.blob);
                if r.u32() != Some(BLOB_MAGIC) {
                    return Err(corrupt(format!(
                        "root {}: protocol state is not {name}'s",
                        root.ckpt_seq
                    )));
                }
                v_root = r.u32().unwrap_or(0);
                next_txid = r.u32().unwrap_or(0);
            }
        }
        if l2p.len() != lp {
            return Err(corrupt("root mapping has the wrong length".into()));
        }
        let mut pages = Vec::with_capacity(ctx.scan.len());
        for (ppa, oob) in ctx.scan.of_kind(kind::DATA) {
            let m = PageMeta::parse(oob);
            if m.lpn as usize >= lp {
                return Err(corrupt(format!(
                    "{ppa} claims lpn {}, beyond {lp} logical pages",
                    m.lpn
                )));
            }
            pages.push((ppa, m));
        }
        let seen = redo(&pages, v_root, &mut l2p);
        next_txid = next_txid.max(seen.next_txid);
        let max_seen = seen.max_version.max(v_root);
        for (lpn, ppa) in l2p.iter().enumerate() {
            if *ppa != Ppa::NONE {
                ctx.map(Lpn(lpn as u32), *ppa)?;
            }
        }
        // A second crash before the checkpoint that ends recovery recovers from the same
        // root and must find every redone transaction whole again, superseded pages (its
        // flagged last page above all) included: pinned, their blocks stay full and
        // protected until that checkpoint is durable.
        for ppa in &seen.redone_pages {
            ctx.pin(*ppa);
        }
        let mut z = ZoneTx::new(name, placement, ctx.core);
        z.recovery_pins = seen.redone_pages;
        z.next_txid = next_txid;
        // Above every version on flash, so no page seen now can ever count again.
        z.last_ver = max_seen.saturating_add(1);
        // Every scanned block may hold pages the new checkpoint is about to capture: keep
        // them from GC until that checkpoint is durable (then zone sliding releases them).
        let scanned: BTreeSet<BlockId> = ctx.scanned_blocks.iter().map(|(b, _)| *b).collect();
        for b in scanned {
            if ctx.core.live(b) > 0 {
                z.protect(ctx.core, b);
            }
        }
        Ok(z)
    }

    fn check(&self, core: &FtlCore) -> std::result::Result<(), String> {
        for (seq, a) in &self.active {
            for w in &a.pages {
                if core.page_flags(w.ppa) & crate::core::PIN_PROTO == 0 {
                    return Err(format!("tx {seq}: page {} is not pinned", w.ppa));
                }
                let b = core.geo.block_of(w.ppa);
                if !self.protected.contains(&b) || core.block(b).eligible {
                    return Err(format!("tx {seq}: {b} holds its page but GC may take it"));
                }
            }
            if let Some(k) = a.head {
                if self.head_owner.get(k) != Some(&Some(*seq)) {
                    return Err(format!("tx {seq}: log head {k} not recorded as its"));
                }
            }
        }
        for b in &self.protected {
            let m = core.block(*b);
            if matches!(m.state, BlockState::Full | BlockState::Open) && m.eligible {
                return Err(format!(
                    "{b} is in the available/unavailable zone but eligible"
                ));
            }
        }
        Ok(())
    }
}

/// The protocol's fields of a data page's OOB (see the layout above).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PageMeta {
    pub lpn: u32,
    pub txid: u32,
    pub cnt: u32,
    pub ver: u32,
    pub idx: u32,
    pub stamp: u32,
    pub epoch: u32,
}

impl PageMeta {
    pub(crate) fn parse(oob: &[u8]) -> PageMeta {
        PageMeta {
            lpn: get_u32(oob, OFF_LPN),
            txid: get_u32(oob, OFF_TXID),
            cnt: get_u32(oob, OFF_CNT),
            ver: get_u32(oob, OFF_VER),
            idx: get_u32(oob, OFF_IDX),
            stamp: get_u32(oob, OFF_STAMP),
            epoch: get_u32(oob, OFF_EPOCH),
        }
    }
}

/// What recovery saw besides the mapping it rebuilt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    /// Highest TxVer, copy stamp or copy epoch on any readable page.
    pub max_version: u32,
    /// Above every TxID seen.
    pub next_txid: u32,
    /// Every page of the transactions redone (not plain writes), superseded ones included.
    pub redone_pages: Vec<Ppa>,
}

/// A scanned page of a transaction: (lpn, index, page).
type TxPage = (u32, u32, Ppa);

/// Recovery's decision (§3.2, §3.4.2), a pure function of the pages the scan read and the
/// root: applies trusted GC copies and then every transaction committed after the root
/// (TxVer > `v_root`, all indices 0..TxCnt present) in TxVer order onto `l2p`.
pub(crate) fn redo(pages: &[(Ppa, PageMeta)], v_root: u32, l2p: &mut [Ppa]) -> Seen {
    let mut seen = Seen::default();
    // Per TxID: its pages (lpn, index, page) and its TxCnt page (count, version).
    let mut by_tx: BTreeMap<u32, Vec<TxPage>> = BTreeMap::new();
    let mut last_page: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    let mut redo: Vec<(u32, Vec<TxPage>)> = Vec::new();
    let mut copies: BTreeMap<u32, (u32, Ppa)> = BTreeMap::new();
    for &(ppa, m) in pages {
        if m.txid != NONE32 {
            seen.next_txid = seen.next_txid.max(m.txid.saturating_add(1));
        }
        seen.max_version = seen.max_version.max(m.ver);
        if m.stamp != NONE32 {
            seen.max_version = seen.max_version.max(m.stamp).max(m.epoch);
            // A copy stands for the root's version of its page unless its source was
            // released by a checkpoint newer than the root, or it predates the root.
            if m.epoch <= v_root && m.stamp >= v_root {
                let e = copies.entry(m.lpn).or_insert((m.stamp, ppa));
                if (m.stamp, ppa) > *e {
                    *e = (m.stamp, ppa);
                }
            }
            continue;
        }
        if m.txid == NONE32 {
            if m.cnt == 1 && m.ver > v_root {
                redo.push((m.ver, vec![(m.lpn, 0, ppa)]));
            }
            continue;
        }
        by_tx.entry(m.txid).or_default().push((m.lpn, m.idx, ppa));
        if m.cnt != 0 {
            last_page.insert(m.txid, (m.cnt, m.ver));
        }
    }
    for (txid, (cnt, ver)) in last_page {
        if ver <= v_root {
            continue;
        }
        let pages = by_tx.remove(&txid).unwrap_or_default();
        let idx: BTreeSet<u32> = pages.iter().map(|p| p.1).collect();
        let complete =
            idx.len() == cnt as usize && idx.iter().next_back().is_some_and(|m| *m + 1 == cnt);
        if complete {
            seen.redone_pages.extend(pages.iter().map(|p| p.2));
            redo.push((ver, pages));
        }
    }
    redo.sort_by_key(|(v, _)| *v);
    for (lpn, (_, ppa)) in copies {
        if let Some(e) = l2p.get_mut(lpn as usize) {
            *e = ppa;
        }
    }
    for (_, mut pages) in redo {
        pages.sort_by_key(|p| p.1);
        for (lpn, _, ppa) in pages {
            if let Some(e) = l2p.get_mut(lpn as usize) {
                *e = ppa;
            }
        }
    }
    seen
}

impl FtlHooks for ZoneTx {
    fn migrate_oob(&mut self, _core: &FtlCore, from: Ppa, oob: &mut [u8]) {
        if oob.first() != Some(&kind::DATA) || oob.len() < OOB_BYTES as usize {
            return;
        }
        let block = _core.geo.block_of(from);
        let src_epoch = if get_u32(oob, OFF_STAMP) == NONE32 {
            0
        } else {
            get_u32(oob, OFF_EPOCH)
        };
        let epoch = src_epoch.max(self.released.get(&block).copied().unwrap_or(0));
        put_u32(oob, OFF_STAMP, self.last_ver);
        put_u32(oob, OFF_EPOCH, epoch);
    }

    fn on_moved(&mut self, _core: &mut FtlCore, from: Ppa, to: Ppa) {
        // Pages of active transactions sit in protected blocks, which GC never collects;
        // follow a move anyway rather than lose track of a page.
        debug_assert!(false, "a pinned page moved from {from} to {to}");
        for a in self.active.values_mut() {
            for w in a.pages.iter_mut().filter(|w| w.ppa == from) {
                w.ppa = to;
            }
        }
    }

    fn before_erase(
        &mut self,
        _core: &mut FtlCore,
        block: BlockId,
        ready: SimTime,
    ) -> Result<SimTime> {
        self.released.remove(&block);
        self.protected.remove(&block);
        Ok(ready)
    }

    fn checkpoint_blocks(&mut self, core: &FtlCore) -> Vec<BlockId> {
        let u = self.unavailable(core);
        self.unavailable_last = u.len() as u64;
        u.into_iter().collect()
    }

    fn checkpoint_blob(&mut self, _core: &FtlCore) -> Vec<u8> {
        self.blob()
    }

    /// Zone sliding (§3.3.2): protected full blocks without pages of active transactions
    /// move to the checkpointed zone. GC may copy from them at once, but may erase them only
    /// after the root is durable.
    fn on_checkpoint_durable(&mut self, core: &mut FtlCore, at: SimTime) {
        // The root ending recovery captures every redone transaction: its pages are no
        // longer needed whole once it is durable.
        for ppa in std::mem::take(&mut self.recovery_pins) {
            core.unpin(ppa, at);
        }
        let unavailable = self.unavailable(core);
        let mut out = Vec::new();
        for b in &self.protected {
            let st = core.block(*b).state;
            match st {
                BlockState::Full if !unavailable.contains(b) => out.push(*b),
                BlockState::Full | BlockState::Open => {}
                _ => out.push(*b),
            }
        }
        let epoch = self.last_ver;
        let mut released = Vec::new();
        for b in out {
            self.protected.remove(&b);
            if core.block(b).state != BlockState::Full {
                continue;
            }
            core.set_eligible(b, true);
            core.hold_erase_until(b, at);
            self.released.insert(b, epoch);
            released.push(b);
        }
        self.released_total += released.len() as u64;
        if !released.is_empty() {
            self.pending.push((at, epoch, released));
            // GC may have given up on a unit with nothing to collect; it has now.
            core.want_gc_everywhere();
        }
        self.slidings += 1;
    }

    /// Asked before every command, so both conditions are read from per-unit facts the FTL
    /// keeps as they change (`units.rs`), not by visiting every unit and searching its
    /// blocks.
    fn wants_checkpoint(&mut self, core: &FtlCore, now: SimTime) -> bool {
        self.prune(now);
        // The available zone of a unit ran out and the free zone can refill it.
        if core.units_to_refill() > 0 {
            return true;
        }
        // GC is (about to be) needed in a unit and has nothing to collect there: release
        // what a checkpoint can, while a free block for its translation pages is left. (The
        // set of blocks holding active transactions' pages is built only when such a unit
        // exists.)
        let mut unavailable = None;
        for pu in core.short_units_without_victims() {
            let u = unavailable.get_or_insert_with(|| self.unavailable(core));
            if self.releasable(core, pu, u) {
                return true;
            }
        }
        false
    }
}

impl CommitProtocol for ZoneTx {
    fn name(&self) -> &'static str {
        self.name
    }

    fn begin(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        self.prune(now);
        let head = match &mut self.placement {
            Placement::Striped => None,
            Placement::Heads(h) => {
                // A free head, preferring one whose log block has space (so at most one
                // partly written log block per head), then the unit holding the fewest
                // mapped pages, then round robin. A head whose block is full moves to the
                // unit with the fewest mapped pages that no other head uses: a whole
                // transaction lands in one unit and GC keeps data in its unit, so heads
                // pinned to units would leave the rest of the device's space to nobody
                // (with 8 heads on 64 units MHL-D ran at write amplification 4.6).
                let n = h.len();
                let cursor = self.head_cursor;
                self.head_cursor = (self.head_cursor + 1) % n;
                let pick = (0..n)
                    .filter(|k| self.head_owner[*k].is_none())
                    .min_by_key(|k| {
                        let (pu, s) = h[*k];
                        (
                            !core.has_head_space(pu, s),
                            core.unit_valid(pu),
                            (k + n - cursor) % n,
                        )
                    });
                if let Some(k) = pick {
                    let (pu, s) = h[k];
                    let taken = |u: PuId| h.iter().any(|&(x, y)| x == u && y == s);
                    let to = (0..core.geo.pus())
                        .map(PuId)
                        .filter(|&u| u == pu || !taken(u))
                        .min_by_key(|&u| (core.unit_valid(u), !core.has_head_space(u, s)));
                    // Stay while the head's block has space and its unit holds at most a
                    // block more mapped pages than the emptiest unit; the block it leaves
                    // behind is resumed by whichever head moves to that unit next.
                    let slack = u64::from(core.data_pages_per_block());
                    if let Some(to) = to {
                        if !core.has_head_space(pu, s)
                            || core.unit_valid(pu) > core.unit_valid(to) + slack
                        {
                            h[k] = (to, s);
                        }
                    }
                }
                Some(txtable::claim_head(
                    &mut self.head_owner,
                    pick,
                    self.name,
                    tx.seq,
                )?)
            }
        };
        txtable::open(&mut self.active, &mut self.next_txid, tx.seq, head);
        Ok(now)
    }

    fn write(
        &mut self,
        core: &mut FtlCore,
        tx: TxRef,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        self.prune(now);
        let Some(a) = self.active.get(&tx.seq) else {
            return Err(SsdError::UnknownTx { tx: tx.host });
        };
        let (txid, head, held, index) = a.next();
        if let Some((hl, ht)) = held {
            // The next command is another write: the held page gets TxCnt = TxVer = 0.
            let (ppa, end) = self.program_page(core, head, txid, hl, ht, index, 0, 0, now)?;
            core.pin(ppa);
            txtable::programmed(
                &mut self.active,
                tx.seq,
                Written { lpn: hl, ppa, end },
                false,
            );
        }
        txtable::hold(&mut self.active, tx.seq, lpn, tag);
        Ok(core.host_transfer_done(now))
    }

    fn commit(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        self.prune(now);
        let Some(a) = self.active.get(&tx.seq) else {
            return Ok(now);
        };
        let (txid, head, held, index) = a.next();
        if let Some((hl, ht)) = held {
            let ver = self.last_ver.wrapping_add(1);
            let (ppa, end) =
                self.program_page(core, head, txid, hl, ht, index, index + 1, ver, now)?;
            self.last_ver = ver;
            core.pin(ppa);
            txtable::programmed(
                &mut self.active,
                tx.seq,
                Written { lpn: hl, ppa, end },
                true,
            );
        }
        let Some(a) = self.active.remove(&tx.seq) else {
            return Ok(now);
        };
        let ack = a.durable_at(now);
        #[cfg(feature = "mutants")]
        let ack = if crate::mutant::on("lighttx-ack-early") {
            now
        } else {
            ack
        };
        // The Active TxTable's entries go into the mapping table; the last write of a page
        // within the transaction wins.
        for (lpn, ppa) in &a.last_writes() {
            core.map(*lpn, *ppa, ack);
        }
        a.unpin_all(core, ack);
        self.release_head(a.head);
        Ok(ack)
    }

    fn abort(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        self.prune(now);
        if let Some(a) = self.active.remove(&tx.seq) {
            a.unpin_all(core, now);
            self.release_head(a.head);
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
        self.prune(now);
        let ver = self.last_ver.wrapping_add(1);
        let ready = core.host_transfer_done(now);
        let (ppa, end) = self.program_page(core, None, NONE32, lpn, tag, 0, 1, ver, ready)?;
        self.last_ver = ver;
        core.map(lpn, ppa, end);
        Ok(end)
    }

    fn dram_bytes(&self) -> Vec<(&'static str, u64)> {
        let entries: u64 = self.active.values().map(|a| a.pages.len() as u64).sum();
        let held = self.active.values().filter(|a| a.held.is_some()).count() as u64;
        let mut v = vec![
            // Per transaction: TxID, head, counts (16 B); per page: LPN → PPN (8 B).
            (
                "active TxTable",
                self.active.len() as u64 * 16 + entries * 8,
            ),
            ("held last pages", held * self.page_bytes),
            (
                "zone table",
                self.protected.len() as u64 * 4 + self.released.len() as u64 * 8,
            ),
        ];
        if !self.head_owner.is_empty() {
            v.push(("log heads", self.head_owner.len() as u64 * 8));
        }
        v
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("zone_slidings", self.slidings),
            ("zone_protected_blocks", self.protected.len() as u64),
            ("zone_unavailable_blocks", self.unavailable_last),
            ("zone_released_blocks", self.released_total),
            ("log_spills", self.spills),
        ]
    }

    fn check_invariants(&self, core: &FtlCore) -> std::result::Result<(), String> {
        self.check(core)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(txid: u32, lpn: u32, idx: u32, cnt: u32, ver: u32) -> PageMeta {
        PageMeta {
            lpn,
            txid,
            cnt,
            ver,
            idx,
            stamp: NONE32,
            epoch: NONE32,
        }
    }

    const A: u32 = 0;
    const B: u32 = 1;
    const C: u32 = 2;
    const D: u32 = 3;
    const E: u32 = 4;
    const F: u32 = 5;

    /// Fig. 4 after a crash: Tx0 (A, B, C) and Tx1 (A, D) have every page and their TxCnt;
    /// Tx2 (E, F) lost its last page, so no page has a non-zero TxCnt; Tx3 (A, B, D) has its
    /// TxCnt page but lost B, so its page count does not match.
    fn fig4(ver0: u32, ver1: u32) -> Vec<(Ppa, PageMeta)> {
        vec![
            (Ppa(0), page(0, A, 0, 0, 0)),
            (Ppa(1), page(1, A, 0, 0, 0)),
            (Ppa(2), page(0, B, 1, 0, 0)),
            (Ppa(3), page(2, E, 0, 0, 0)),
            (Ppa(5), page(1, D, 1, 2, ver1)),
            (Ppa(6), page(2, F, 1, 0, 0)),
            (Ppa(7), page(0, C, 2, 3, ver0)),
            (Ppa(8), page(3, A, 0, 0, 0)),
            (Ppa(9), page(3, D, 2, 3, 9)),
        ]
    }

    #[test]
    fn fig4_committed_transactions_are_those_whose_pages_match_their_txcnt() {
        let mut l2p = vec![Ppa::NONE; 6];
        let seen = redo(&fig4(1, 2), 0, &mut l2p);
        assert_eq!(l2p[A as usize], Ppa(1), "Tx1 committed after Tx0");
        assert_eq!(l2p[B as usize], Ppa(2));
        assert_eq!(l2p[C as usize], Ppa(7));
        assert_eq!(l2p[D as usize], Ppa(5), "Tx3 is not committed");
        assert_eq!(l2p[E as usize], Ppa::NONE, "Tx2 is not committed");
        assert_eq!(l2p[F as usize], Ppa::NONE);
        assert_eq!(
            seen.max_version, 9,
            "Tx3's version is seen though not redone"
        );
        assert_eq!(seen.next_txid, 4);
    }

    #[test]
    fn redo_follows_txver_not_page_order() {
        let mut l2p = vec![Ppa::NONE; 6];
        redo(&fig4(5, 2), 0, &mut l2p);
        assert_eq!(l2p[A as usize], Ppa(0), "Tx0 committed last");
    }

    #[test]
    fn transactions_the_root_already_holds_are_not_redone() {
        let mut l2p = vec![Ppa(40), Ppa(41), Ppa(42), Ppa(43), Ppa::NONE, Ppa::NONE];
        redo(&fig4(1, 2), 2, &mut l2p);
        assert_eq!(&l2p[..4], &[Ppa(40), Ppa(41), Ppa(42), Ppa(43)]);
    }

    #[test]
    fn plain_writes_are_one_page_transactions() {
        let mut l2p = vec![Ppa::NONE; 2];
        let pages = [
            (Ppa(3), page(NONE32, 1, 0, 1, 7)),
            (Ppa(4), page(NONE32, 1, 0, 1, 6)),
            (Ppa(5), page(NONE32, 0, 0, 1, 2)),
        ];
        let seen = redo(&pages, 2, &mut l2p);
        assert_eq!(
            l2p,
            vec![Ppa::NONE, Ppa(3)],
            "version 2 is in the root; 7 wins"
        );
        assert_eq!(seen.next_txid, 0);
    }

    #[test]
    fn gc_copies_stand_for_the_root_version_only_when_trusted() {
        let copy = |lpn, stamp, epoch| PageMeta {
            lpn,
            txid: 9,
            cnt: 0,
            ver: 0,
            idx: 0,
            stamp,
            epoch,
        };
        let mut l2p = vec![Ppa(10), Ppa(11), Ppa(12)];
        let pages = [
            // Released by a durable checkpoint, copied after the root: trusted.
            (Ppa(20), copy(0, 5, 0)),
            // Its source was released by a checkpoint newer than the root: ignored.
            (Ppa(21), copy(1, 6, 6)),
            // Copied before the root (a stale copy found in a reused block): ignored.
            (Ppa(22), copy(2, 3, 0)),
        ];
        let seen = redo(&pages, 5, &mut l2p);
        assert_eq!(l2p, vec![Ppa(20), Ppa(11), Ppa(12)]);
        assert_eq!(seen.max_version, 6);
        // Copies never count toward a transaction's pages.
        let mut l2p = vec![Ppa::NONE; 2];
        let pages = [
            (Ppa(1), page(4, 0, 0, 0, 0)),
            (Ppa(2), copy(0, 8, 0)),
            (Ppa(3), page(4, 1, 1, 3, 8)),
        ];
        redo(&pages, 8, &mut l2p);
        assert_eq!(l2p, vec![Ppa(2), Ppa::NONE], "Tx4 has 2 of 3 pages");
    }
}
