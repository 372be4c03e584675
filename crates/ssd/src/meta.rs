//! Mapping checkpoints on flash: translation pages, the root-record log and the scan set.
//!
//! With checkpoints on (`ftl.checkpoint_interval > 0`, or a protocol that needs them), the
//! mapping table is persisted in *translation pages* (one per `entries_per_page` logical
//! pages, rewritten only when dirty) and a *root record* names where they are. Root records
//! are appended to a log in two reserved blocks used ping-pong: when the current block is
//! full, the other is erased (after every record in the current one is durable) and the log
//! continues there.
//!
//! Recovery then reads the newest complete root, the translation pages it names, and scans
//! only the blocks in the root's *scan set*: every block that may have been written since
//! the translation pages were taken. To make that true, allocation only opens blocks from a
//! per-unit *window* recorded in the root; when a unit's window runs out, a new root that adds
//! more blocks is written first, and the first program into a window block waits until the
//! root that recorded it is durable. Blocks that were open when the checkpoint was taken are
//! in the scan set from their then write pointer on: the pages below it are covered by the
//! translation pages, and scanning them would resurrect versions the checkpoint superseded.
//!
//! A protocol that logs every mapping change itself (AW, MHL-M) turns write tracking off
//! (`FtlCore::set_write_tracking`): there is no window, and the scan set holds only the
//! blocks the protocol names, so recovery reads the root, the translation pages and the
//! protocol's log, no data pages.
//!
//! Root record body (little-endian):
//!
//! ```text
//! u32 magic 0x544F_4F52 ("ROOT")   u32 checkpoint sequence   u32 logical pages
//! u32 n_chunks, n_chunks × u32 translation page address (u32::MAX: chunk never written)
//! u32 n_journal, n_journal × u32 journal page address, in order
//! u32 n_scan,   n_scan × (u32 block, u32 first page to scan)
//! u32 blob_len, blob_len bytes of protocol state (LightTx zones)
//! ```
//!
//! A record spans as many pages as it needs, all in one meta block. Each page's data area:
//! `u32 record seq, u16 index, u16 count, u32 chunk length, u32 CRC-32 of the chunk, chunk`;
//! its OOB: kind META, record seq, index, count. A record counts only if every page is present
//! with a matching CRC, so a torn root is ignored and the previous one is used.
//!
//! Translation page data area: `u32 magic 0x4E41_5254 ("TRAN"), u32 chunk, u32 checkpoint
//! sequence, u32 count, count × u32 physical page (u32::MAX: unmapped)`.
//!
//! **Mapping journal.** A checkpoint need not rewrite every translation page an update
//! touched: scattered updates touch nearly every page of a large mapping table, which would
//! cost a full table write per checkpoint. Instead it appends the entries that changed since
//! the previous checkpoint to a journal (`u32 magic 0x4C4E_524A ("JRNL"), u32 checkpoint
//! sequence, u32 position, u32 count, count × (u32 lpn, u32 physical page)`), which the root
//! names after the translation pages; recovery applies it in order on top of them. A
//! checkpoint rewrites the dirty translation pages instead (and empties the journal) when
//! that is no more pages than journaling, or when the journal would grow past as many pages
//! as the mapping table has (`ftl.map_journal_pages`, 0 = that bound), so recovery never
//! reads more than twice the table. `ftl.map_journal = false` always rewrites.
//! Journal and translation pages carry OOB kind MAP; journal pages hold `JOURNAL_MARK` where
//! a translation page holds its chunk number.
//!
//! **Placement** (`ftl.map_placement`). By default a checkpoint's translation and journal
//! pages fill one map block at a time (`FtlCore::program`, map stream), which queues them on
//! one plane; `striped` spreads them over the parallel units like a transaction's pages, at
//! the price of an open map block in every unit. Recovery finds them through the root's
//! directory either way, never by scanning, so placement does not change the crash
//! argument.

use crate::config::FtlConfig;
use crate::core::hooks::FtlHooks;
use crate::core::{FtlCore, Stream, NSTREAMS};
use crate::error::{Result, SsdError};
use crate::oob::{self, kind, Reader, Writer};
use media::{BlockId, Content, Geometry, PageView, Ppa, PuId};
use sim::{Lpn, SimTime};

const ROOT_MAGIC: u32 = 0x544F_4F52;
const TRAN_MAGIC: u32 = 0x4E41_5254;
const JRNL_MAGIC: u32 = 0x4C4E_524A;
/// OOB chunk field of a journal page.
const JOURNAL_MARK: u32 = 0xFFFF_FFF0;
const PAGE_HDR: usize = 16;

#[derive(Clone)]
pub(crate) struct Ckpt {
    pub(crate) enabled: bool,
    meta: Vec<BlockId>,
    cur_meta: usize,
    meta_next_page: u32,
    record_seq: u32,
    pub(crate) ckpt_seq: u32,
    pub(crate) entries_per_page: u32,
    /// Translation page of each chunk as recorded (or about to be recorded) in the root.
    pub(crate) dir: Vec<Ppa>,
    /// Journal pages named by the root, in order (see the module docs).
    pub(crate) journal: Vec<Ppa>,
    /// Chunks whose translation page is stale (changed since it was written; the journal
    /// holds the changes).
    dirty: Vec<bool>,
    dirty_count: u32,
    /// Logical pages changed since the last checkpoint, once each (`pending_bits`).
    pending: Vec<u32>,
    pending_bits: Vec<u64>,
    journal_on: bool,
    journal_max: u32,
    pub(crate) scan_set: Vec<(BlockId, u32)>,
    pub(crate) writes_since: u64,
    pub(crate) root_end: SimTime,
    proto_blocks: Vec<BlockId>,
    pub(crate) proto_blob: Vec<u8>,
    window_blocks: u32,
    /// Whether blocks written since a checkpoint are recorded (window) and scanned at
    /// recovery; see `FtlCore::set_write_tracking`.
    pub(crate) track_writes: bool,
}

/// Blocks of the root-record log (two, written alternately).
pub(crate) const META_BLOCKS: u32 = 2;

impl Ckpt {
    pub(crate) fn new(geo: &Geometry, cfg: &FtlConfig) -> Ckpt {
        let enabled = cfg.checkpoint_interval > 0;
        let meta = if enabled {
            let b0 = BlockId(0);
            let b1 = if geo.pus() > 1 {
                geo.blocks_of_pu(PuId(1)).next().unwrap_or(BlockId(1))
            } else {
                BlockId(1)
            };
            vec![b0, b1]
        } else {
            Vec::new()
        };
        let entries_per_page = (geo.page_bytes - 16) / 4;
        Ckpt {
            enabled,
            meta,
            cur_meta: 0,
            meta_next_page: 0,
            record_seq: 0,
            ckpt_seq: 0,
            entries_per_page,
            dir: Vec::new(),
            journal: Vec::new(),
            dirty: Vec::new(),
            dirty_count: 0,
            pending: Vec::new(),
            pending_bits: Vec::new(),
            journal_on: cfg.map_journal,
            journal_max: cfg.map_journal_pages,
            scan_set: Vec::new(),
            writes_since: 0,
            root_end: SimTime::ZERO,
            proto_blocks: Vec::new(),
            proto_blob: Vec::new(),
            window_blocks: cfg.checkpoint_window_blocks,
            track_writes: true,
        }
    }

    pub(crate) fn meta_blocks(&self) -> &[BlockId] {
        &self.meta
    }
    pub(crate) fn meta_block_count(&self) -> u32 {
        self.meta.len() as u32
    }

    fn init_chunks(&mut self, logical_pages: u32) {
        let n = logical_pages.div_ceil(self.entries_per_page) as usize;
        self.dir = vec![Ppa::NONE; n];
        self.journal.clear();
        self.dirty = vec![false; n];
        self.dirty_count = 0;
        self.pending.clear();
        self.pending_bits = vec![0; (logical_pages as usize).div_ceil(64)];
        if self.journal_max == 0 {
            self.journal_max = n as u32;
        }
    }

    fn clear_pending(&mut self) {
        for l in std::mem::take(&mut self.pending) {
            self.pending_bits[(l / 64) as usize] &= !(1u64 << (l % 64));
        }
    }

    #[inline]
    pub(crate) fn mark_dirty(&mut self, lpn: Lpn) {
        if !self.enabled {
            return;
        }
        let c = (lpn.0 / self.entries_per_page) as usize;
        if let Some(d) = self.dirty.get_mut(c) {
            if !*d {
                *d = true;
                self.dirty_count += 1;
            }
        }
        if let Some(w) = self.pending_bits.get_mut((lpn.0 / 64) as usize) {
            let bit = 1u64 << (lpn.0 % 64);
            if *w & bit == 0 {
                *w |= bit;
                self.pending.push(lpn.0);
            }
        }
    }

    /// A translation page moved (GC): the next root must name its new place.
    pub(crate) fn on_moved(&mut self, old: Ppa, new: Ppa) -> bool {
        if let Some(c) = self.dir.iter().position(|p| *p == old) {
            self.dir[c] = new;
            return true;
        }
        if let Some(j) = self.journal.iter().position(|p| *p == old) {
            self.journal[j] = new;
            return true;
        }
        false
    }

    /// Whether a full checkpoint should be taken now.
    pub(crate) fn due(&self, interval: u64, pus: u32) -> bool {
        self.enabled
            && (self.writes_since >= interval
                || self.scan_set.len() as u32 > pus * (4 * self.window_blocks + NSTREAMS as u32))
    }
}

/// Initializes checkpointing on a fresh device: chunk table, window and the first root.
pub(crate) fn format(core: &mut FtlCore, now: SimTime) -> Result<SimTime> {
    let lp = core.logical_pages();
    core.ckpt.init_chunks(lp);
    let ready = refill_windows(core, now, None)?;
    checkpoint_scan_set(core);
    write_root(core, ready)
}

/// Tops every unit's window up to `checkpoint_window_blocks` with clean blocks; returns
/// the instant they are all clean (a root naming them must not be durable before: recovery
/// would scan a block whose erase had not finished and resurrect its old pages; found by the
/// crash checker on `none` with checkpoints once windows were topped up together).
fn refill_windows(core: &mut FtlCore, now: SimTime, extra: Option<PuId>) -> Result<SimTime> {
    let mut ready = now;
    if !core.ckpt.track_writes {
        return Ok(ready);
    }
    let w = core.ckpt.window_blocks as usize;
    for u in 0..core.geo.pus() as usize {
        let target = if extra == Some(PuId(u as u32)) {
            2 * w
        } else {
            w
        };
        while core.pus[u].window.len() < target {
            let Some(b) = core.pop_free(PuId(u as u32)) else {
                break;
            };
            let Some(clean) = core.make_clean(b, now)? else {
                continue;
            };
            ready = ready.max(clean);
            core.pus[u].window.push_back((b, SimTime::MAX));
            core.note_pool(PuId(u as u32));
            add_scan(core, b, 0);
        }
    }
    Ok(ready)
}

/// Adds a block to the scan set from `from` on (keeping the lower start if present).
fn add_scan(core: &mut FtlCore, block: BlockId, from: u32) {
    match core.ckpt.scan_set.iter_mut().find(|(b, _)| *b == block) {
        Some(e) => e.1 = e.1.min(from),
        None => core.ckpt.scan_set.push((block, from)),
    }
}

/// The scan set of a fresh checkpoint: open blocks from their write pointer, window blocks
/// and the protocol's blocks whole (only the protocol's blocks without write tracking).
fn checkpoint_scan_set(core: &mut FtlCore) {
    core.ckpt.scan_set.clear();
    let mut entries = Vec::new();
    for p in core.pus.iter().filter(|_| core.ckpt.track_writes) {
        for h in p.heads {
            if h != u32::MAX {
                entries.push((BlockId(h), u32::from(core.blocks[h as usize].next_page)));
            }
        }
        entries.extend(p.window.iter().map(|(b, _)| (*b, 0)));
    }
    entries.extend(core.ckpt.proto_blocks.iter().map(|b| (*b, 0)));
    for (b, f) in entries {
        add_scan(core, b, f);
    }
    core.ckpt.scan_set.sort_unstable();
}

/// Stamps window entries recorded by the root that ended at `end`.
fn stamp_windows(core: &mut FtlCore, end: SimTime) {
    for p in &mut core.pus {
        for e in p.window.iter_mut() {
            if e.1 == SimTime::MAX {
                e.1 = end;
            }
        }
    }
}

/// Adds blocks to a unit's window and records them in a new root (same translation pages).
///
/// Every unit's window is topped up to `checkpoint_window_blocks` at the same time, so one
/// root record serves them all: the units drain their windows at similar rates, and a root
/// per unit would put a root write on the log's plane every few host pages.
pub(crate) fn extend_window(core: &mut FtlCore, pu: PuId, now: SimTime) -> Result<()> {
    // Window blocks still count as the unit's free blocks (GC writes into them too), so
    // moving free blocks into windows never starves GC. The unit that ran out gets a double
    // batch: units run out when GC concentrates writes in them, and a unit under GC keeps
    // draining fast, so this halves the root records it causes.
    let ready = refill_windows(core, now, Some(pu))?;
    write_root(core, ready)?;
    Ok(())
}

/// Takes a full checkpoint: rewrites dirty translation pages, then a root naming them, the
/// new scan set and the protocol's state. Returns when the root is durable.
pub fn checkpoint(core: &mut FtlCore, hooks: &mut dyn FtlHooks, now: SimTime) -> Result<SimTime> {
    if !core.ckpt.enabled {
        return Ok(now);
    }
    hooks.before_checkpoint(core, now)?;
    // Everything mapped must be durable before a translation page may point at it.
    let mut ready = now.max(core.program_end_max);
    let ready0 = ready;
    let mut released = Vec::new();
    let mut fresh = Vec::new();
    let epp = core.ckpt.entries_per_page;
    let n_chunks = core.ckpt.dir.len();
    let seq = core.ckpt.ckpt_seq.wrapping_add(1);
    // Journal the changed entries, or rewrite the stale translation pages (see module docs).
    let per_journal_page = ((core.geo.page_bytes as usize - 16) / 8).max(1);
    let journal_cost = core.ckpt.pending.len().div_ceil(per_journal_page);
    let compact = !core.ckpt.journal_on
        || core.ckpt.dirty_count as usize <= journal_cost
        || core.ckpt.journal.len() + journal_cost > core.ckpt.journal_max as usize;
    if !compact {
        let mut pending = std::mem::take(&mut core.ckpt.pending);
        pending.sort_unstable();
        let mut new_pages = Vec::new();
        for (k, part) in pending.chunks(per_journal_page).enumerate() {
            let mut w = Writer::default();
            w.u32(JRNL_MAGIC)
                .u32(seq)
                .u32((core.ckpt.journal.len() + k) as u32)
                .u32(part.len() as u32);
            for l in part {
                w.u32(*l)
                    .u32(core.lookup(Lpn(*l)).map_or(u32::MAX, |p| p.0));
            }
            let mut o = crate::core::blank_oob(core, kind::MAP);
            oob::put_u32(&mut o, 1, JOURNAL_MARK);
            oob::put_u32(&mut o, 5, seq);
            let (ppa, t) =
                core.program(Stream::MAP, None, Content::Bytes(w.0.into()), &o, ready0)?;
            core.pin_core(ppa);
            core.stats.map_persist_writes += 1;
            core.stats.map_journal_writes += 1;
            ready = ready.max(t.end);
            new_pages.push(ppa);
        }
        core.ckpt.pending = pending;
        core.ckpt.clear_pending();
        // As with translation pages below: named only once all are issued.
        core.ckpt.journal.extend(new_pages);
    }
    for c in 0..n_chunks {
        if !compact || !core.ckpt.dirty[c] {
            continue;
        }
        let first = c as u32 * epp;
        let count = epp.min(core.logical_pages() - first);
        let mut w = Writer::default();
        w.u32(TRAN_MAGIC).u32(c as u32).u32(seq).u32(count);
        for l in first..first + count {
            w.u32(core.lookup(Lpn(l)).map_or(u32::MAX, |p| p.0));
        }
        let mut o = crate::core::blank_oob(core, kind::MAP);
        oob::put_u32(&mut o, 1, c as u32);
        oob::put_u32(&mut o, 5, seq);
        let (ppa, t) = core.program(Stream::MAP, None, Content::Bytes(w.0.into()), &o, ready0)?;
        core.pin_core(ppa);
        core.stats.map_persist_writes += 1;
        core.stats.map_translation_writes += 1;
        ready = ready.max(t.end);
        fresh.push((c, ppa));
        core.ckpt.dirty[c] = false;
    }
    // Only now may the directory name the new translation pages: a root written while they
    // were being programmed (a window extension opening a block for one of them) must still
    // name the old ones, which stay pinned until this checkpoint's root is durable.
    // Found by the crash checker on lighttx (seed 3, state 927).
    for (c, ppa) in fresh {
        let old = core.ckpt.dir[c];
        if old != Ppa::NONE {
            released.push(old);
        }
        core.ckpt.dir[c] = ppa;
    }
    if compact {
        // Every translation page is current: the journal is no longer needed once the root
        // naming the new pages is durable.
        released.append(&mut core.ckpt.journal);
        core.ckpt.dirty_count = 0;
        core.ckpt.clear_pending();
    }
    core.ckpt.ckpt_seq = seq;
    ready = ready.max(refill_windows(core, now, None)?);
    core.ckpt.proto_blocks = hooks.checkpoint_blocks(core);
    core.ckpt.proto_blob = hooks.checkpoint_blob(core);
    checkpoint_scan_set(core);
    let end = write_root(core, ready)?;
    for p in released {
        core.unpin_core(p, end);
    }
    core.ckpt.writes_since = 0;
    core.stats.checkpoints += 1;
    hooks.on_checkpoint_durable(core, end);
    Ok(end)
}

/// Whether the next checkpoint's translation or journal pages fit where the map stream may
/// write without GC: the room left in open map blocks plus every free block but the one
/// each unit keeps for GC (an upper bound on the pages: every stale chunk rewritten, or
/// every changed entry journaled).
pub(crate) fn checkpoint_fits(core: &FtlCore) -> bool {
    if !core.ckpt.enabled {
        return true;
    }
    let per_journal_page = ((core.geo.page_bytes as usize - 16) / 8).max(1);
    let need = (core.ckpt.dirty_count as u64)
        .max(core.ckpt.pending.len().div_ceil(per_journal_page) as u64);
    let dp = u64::from(core.data_pages_per_block());
    let mut room = 0u64;
    for pu in 0..core.geo.pus() {
        let pu = PuId(pu);
        let head = core.pus[pu.0 as usize].heads[Stream::MAP.0 as usize];
        if head != u32::MAX {
            room += dp.saturating_sub(u64::from(core.block(BlockId(head)).next_page));
        }
        room += u64::from(core.free_blocks(pu).saturating_sub(1)) * dp;
    }
    room >= need
}

/// Appends a root record describing the current directory and scan set. Returns its end.
pub(crate) fn write_root(core: &mut FtlCore, ready: SimTime) -> Result<SimTime> {
    let mut w = Writer::default();
    w.u32(ROOT_MAGIC)
        .u32(core.ckpt.ckpt_seq)
        .u32(core.logical_pages());
    w.u32(core.ckpt.dir.len() as u32);
    for p in &core.ckpt.dir {
        w.u32(p.0);
    }
    w.u32(core.ckpt.journal.len() as u32);
    for p in &core.ckpt.journal {
        w.u32(p.0);
    }
    w.u32(core.ckpt.scan_set.len() as u32);
    for (b, from) in &core.ckpt.scan_set {
        w.u32(b.0).u32(*from);
    }
    w.u32(core.ckpt.proto_blob.len() as u32);
    w.bytes(&core.ckpt.proto_blob);
    let body = w.0;
    let per_page = core.geo.page_bytes as usize - PAGE_HDR;
    let count = body.len().div_ceil(per_page).max(1);
    let ppb = core.geo.pages_per_block;
    if count as u32 > ppb {
        return Err(SsdError::Config {
            key: "nand.pages_per_block".into(),
            reason: format!("a root record needs {count} pages, more than a meta block holds"),
        });
    }
    let mut ready = ready;
    if core.ckpt.meta_next_page + count as u32 > ppb {
        // Switch blocks: every record in the current block must be durable first.
        let other = 1 - core.ckpt.cur_meta;
        let block = core.ckpt.meta[other];
        let (t, _worn) = core.nand.erase(block, ready.max(core.ckpt.root_end))?;
        ready = ready.max(t.end);
        core.ckpt.cur_meta = other;
        core.ckpt.meta_next_page = 0;
    }
    core.ckpt.record_seq = core.ckpt.record_seq.wrapping_add(1);
    let rseq = core.ckpt.record_seq;
    let block = core.ckpt.meta[core.ckpt.cur_meta];
    let mut end = ready;
    for (i, chunk) in body.chunks(per_page).enumerate() {
        let mut page = Writer::default();
        page.u32(rseq)
            .u16(i as u16)
            .u16(count as u16)
            .u32(chunk.len() as u32);
        page.u32(sim::crc::crc32(chunk)).bytes(chunk);
        let mut o = crate::core::blank_oob(core, kind::META);
        oob::put_u32(&mut o, 1, rseq);
        oob::put_u16(&mut o, 5, i as u16);
        oob::put_u16(&mut o, 7, count as u16);
        let ppa = core.geo.ppa(block, core.ckpt.meta_next_page);
        core.ckpt.meta_next_page += 1;
        let t = core
            .nand
            .program(ppa, Content::Bytes(page.0.into()), &o, ready)?;
        core.stats.map_persist_writes += 1;
        core.stats.map_root_writes += 1;
        end = end.max(t.end);
    }
    core.ckpt.root_end = end;
    stamp_windows(core, end);
    Ok(end)
}

/// What recovery learns from the newest complete root.
#[derive(Clone, Debug, Default)]
pub struct RootView {
    pub ckpt_seq: u32,
    /// The mapping as of the checkpoint, journal applied (`Ppa::NONE`: unmapped).
    pub l2p: Vec<Ppa>,
    /// Chunks whose translation page the journal overrides somewhere.
    pub journal_chunks: Vec<u32>,
    /// Blocks to scan, each from the given page on.
    pub scan_set: Vec<(BlockId, u32)>,
    pub blob: Vec<u8>,
}

struct MetaPage {
    rseq: u32,
    idx: u16,
    count: u16,
    block: usize,
    page: u32,
    chunk: Vec<u8>,
}

/// Reads the root log and the translation pages; leaves the meta log positioned after the
/// newest record. Returns `None` for a device that was never checkpointed (blank).
pub(crate) fn load_root(core: &mut FtlCore, ready: SimTime) -> Result<(Option<RootView>, SimTime)> {
    let corrupt = |d: String| SsdError::CorruptImage { detail: d };
    let lp = core.logical_pages();
    core.ckpt.init_chunks(lp);
    let mut pages: Vec<MetaPage> = Vec::new();
    let mut end = ready;
    let ppb = core.geo.pages_per_block;
    let mut last_prog = [0u32; 2];
    let _ = &mut last_prog;
    for (bi, block) in core.ckpt.meta.clone().into_iter().enumerate() {
        for pg in 0..ppb {
            let ppa = core.geo.ppa(block, pg);
            let at = core.recovery_read_at(ready, end);
            let (t, view) = core.nand.read(ppa, at)?;
            end = end.max(t.end);
            match view {
                PageView::Erased => break,
                PageView::Uncorrectable => {
                    last_prog[bi] = pg + 1;
                    continue;
                }
                PageView::Programmed { data, .. } => {
                    last_prog[bi] = pg + 1;
                    let media::image::DataRef::Bytes(b) = data else {
                        continue;
                    };
                    let mut r = Reader::new(b);
                    let (Some(rseq), Some(idx), Some(count), Some(len), Some(crc)) =
                        (r.u32(), r.u16(), r.u16(), r.u32(), r.u32())
                    else {
                        continue;
                    };
                    // Compare with the page, not the stored slice: tag mode stores a raw
                    // page without its trailing 0xFF bytes (the reader yields 0xFF past
                    // them), and a root page whose chunk ends in directory entries of
                    // never-written translation chunks (u32::MAX) is such a page. Taking it
                    // for torn lost every root from 1,024 blocks per plane up.
                    if len as usize > (core.geo.page_bytes as usize).saturating_sub(PAGE_HDR) {
                        continue;
                    }
                    let chunk = r.bytes(len as usize);
                    if sim::crc::crc32(&chunk) != crc || count == 0 || idx >= count {
                        continue;
                    }
                    pages.push(MetaPage {
                        rseq,
                        idx,
                        count,
                        block: bi,
                        page: pg,
                        chunk,
                    });
                }
            }
        }
    }
    // Newest complete record: all `count` pages of one sequence present, contiguous.
    let mut best: Option<(u32, Vec<&MetaPage>)> = None;
    let mut seqs: Vec<u32> = pages.iter().map(|p| p.rseq).collect();
    seqs.sort_unstable();
    seqs.dedup();
    for s in seqs.into_iter().rev() {
        let mut parts: Vec<&MetaPage> = pages.iter().filter(|p| p.rseq == s).collect();
        parts.sort_by_key(|p| p.idx);
        let count = parts[0].count as usize;
        let complete = parts.len() == count
            && parts
                .iter()
                .enumerate()
                .all(|(i, p)| p.idx as usize == i && p.count as usize == count)
            && parts.iter().all(|p| p.block == parts[0].block);
        if complete {
            best = Some((s, parts));
            break;
        }
    }
    let Some((rseq, parts)) = best else {
        // No complete record: a blank device, or the very first root was cut short (nothing
        // else can have been written, since every write waits for the root of its block).
        // Start the log afresh in erased meta blocks.
        for block in core.ckpt.meta.clone() {
            let (t, _) = core.nand.erase(block, end)?;
            end = end.max(t.end);
        }
        core.ckpt.cur_meta = 0;
        core.ckpt.meta_next_page = 0;
        return Ok((None, end));
    };
    let block_idx = parts[0].block;
    let body: Vec<u8> = parts.iter().flat_map(|p| p.chunk.iter().copied()).collect();
    core.ckpt.cur_meta = block_idx;
    core.ckpt.meta_next_page = last_prog[block_idx];
    core.ckpt.record_seq = rseq;
    let _ = parts.last().map(|p| p.page);

    let mut r = Reader::new(&body);
    let bad = |what: &str| corrupt(format!("root record {rseq}: {what}"));
    if r.u32() != Some(ROOT_MAGIC) {
        return Err(bad("bad magic"));
    }
    let ckpt_seq = r.u32().ok_or_else(|| bad("truncated"))?;
    let rec_lp = r.u32().ok_or_else(|| bad("truncated"))?;
    if rec_lp != lp {
        return Err(bad(&format!(
            "written for {rec_lp} logical pages, this configuration has {lp}"
        )));
    }
    let n_chunks = r.u32().ok_or_else(|| bad("truncated"))? as usize;
    if n_chunks != core.ckpt.dir.len() {
        return Err(bad(&format!(
            "{n_chunks} translation chunks, expected {}",
            core.ckpt.dir.len()
        )));
    }
    let pages_total = core.geo.pages();
    let mut dir = Vec::with_capacity(n_chunks);
    for _ in 0..n_chunks {
        let p = r.u32().ok_or_else(|| bad("truncated directory"))?;
        if p != u32::MAX && p >= pages_total {
            return Err(bad(&format!("translation page {p} outside the device")));
        }
        dir.push(Ppa(p));
    }
    let n_journal = r.u32().ok_or_else(|| bad("truncated"))? as usize;
    if n_journal > pages_total as usize {
        return Err(bad(&format!("a journal of {n_journal} pages")));
    }
    let mut journal = Vec::with_capacity(n_journal);
    for _ in 0..n_journal {
        let p = r.u32().ok_or_else(|| bad("truncated journal list"))?;
        if p >= pages_total {
            return Err(bad(&format!("journal page {p} outside the device")));
        }
        journal.push(Ppa(p));
    }
    let n_scan = r.u32().ok_or_else(|| bad("truncated"))? as usize;
    if n_scan > core.geo.blocks() as usize {
        return Err(bad(&format!("scan set of {n_scan} blocks")));
    }
    let mut scan_set = Vec::with_capacity(n_scan);
    for _ in 0..n_scan {
        let b = r.u32().ok_or_else(|| bad("truncated scan set"))?;
        let from = r.u32().ok_or_else(|| bad("truncated scan set"))?;
        if b >= core.geo.blocks() || from > core.geo.pages_per_block {
            return Err(bad(&format!(
                "scan-set entry ({b}, {from}) outside the device"
            )));
        }
        scan_set.push((BlockId(b), from));
    }
    let blob_len = r.u32().ok_or_else(|| bad("truncated"))? as usize;
    if blob_len > body.len() {
        return Err(bad("protocol state longer than the record"));
    }
    let blob = r.bytes(blob_len);

    // Translation pages.
    let root_read = end;
    let mut l2p = vec![Ppa::NONE; lp as usize];
    let epp = core.ckpt.entries_per_page;
    for (c, p) in dir.iter().enumerate() {
        if *p == Ppa::NONE {
            continue;
        }
        let at = core.recovery_read_at(root_read, end);
        let (t, view) = core.nand.read(*p, at)?;
        end = end.max(t.end);
        let PageView::Programmed {
            data: media::image::DataRef::Bytes(b),
            oob,
        } = view
        else {
            return Err(corrupt(format!(
                "translation page {} of chunk {c} is unreadable",
                p.0
            )));
        };
        if oob[0] != kind::MAP {
            return Err(corrupt(format!(
                "translation page {} of chunk {c} has page kind {:#x}",
                p.0, oob[0]
            )));
        }
        let mut r = Reader::new(b);
        if r.u32() != Some(TRAN_MAGIC) || r.u32() != Some(c as u32) {
            return Err(corrupt(format!(
                "translation page {} does not hold chunk {c}",
                p.0
            )));
        }
        let _seq = r.u32();
        let count = r.u32().unwrap_or(0);
        let first = c as u32 * epp;
        if count != epp.min(lp - first) {
            return Err(corrupt(format!(
                "translation page {} holds {count} entries",
                p.0
            )));
        }
        for l in first..first + count {
            let e = r.u32().unwrap_or(u32::MAX);
            if e != u32::MAX && e >= pages_total {
                return Err(corrupt(format!("lpn {l} maps outside the device ({e})")));
            }
            l2p[l as usize] = Ppa(e);
        }
    }
    // The journal, in order, on top of the translation pages.
    let mut journal_chunks = Vec::new();
    for (j, p) in journal.iter().enumerate() {
        let at = core.recovery_read_at(root_read, end);
        let (t, view) = core.nand.read(*p, at)?;
        end = end.max(t.end);
        let PageView::Programmed {
            data: media::image::DataRef::Bytes(b),
            oob,
        } = view
        else {
            return Err(corrupt(format!(
                "journal page {} ({j} of {n_journal}) is unreadable",
                p.0
            )));
        };
        if oob[0] != kind::MAP || oob::get_u32(oob, 1) != JOURNAL_MARK {
            return Err(corrupt(format!(
                "journal page {} is not a journal page",
                p.0
            )));
        }
        let mut r = Reader::new(b);
        if r.u32() != Some(JRNL_MAGIC) || {
            let _seq = r.u32();
            r.u32()
        } != Some(j as u32)
        {
            return Err(corrupt(format!(
                "journal page {} is not entry {j} of the journal",
                p.0
            )));
        }
        let count = r.u32().unwrap_or(0) as usize;
        // (Stored payloads drop trailing 0xFF bytes, so compare with the page, not the slice.)
        if count > (core.geo.page_bytes as usize - 16) / 8 {
            return Err(corrupt(format!(
                "journal page {} claims {count} entries",
                p.0
            )));
        }
        for _ in 0..count {
            let (l, e) = (r.u32().unwrap_or(u32::MAX), r.u32().unwrap_or(u32::MAX));
            if l >= lp || (e != u32::MAX && e >= pages_total) {
                return Err(corrupt(format!("journal page {} maps lpn {l} to {e}", p.0)));
            }
            l2p[l as usize] = Ppa(e);
            journal_chunks.push(l / epp);
        }
    }
    journal_chunks.sort_unstable();
    journal_chunks.dedup();
    core.ckpt.dir = dir;
    core.ckpt.journal = journal;
    core.ckpt.ckpt_seq = ckpt_seq;
    Ok((
        Some(RootView {
            ckpt_seq,
            l2p,
            journal_chunks,
            scan_set,
            blob,
        }),
        end,
    ))
}

/// After recovery: pin the translation and journal pages the root names, and rebuild what
/// the next checkpoint must persist: chunks whose translation page is stale (the journal
/// overrides it, or the recovered mapping differs from the checkpoint's) and the logical
/// pages that differ from the checkpoint (for the journal).
pub(crate) fn after_recovery(core: &mut FtlCore, root: Option<&RootView>) {
    if !core.ckpt.enabled {
        return;
    }
    if core.ckpt.dir.is_empty() {
        let lp = core.logical_pages();
        core.ckpt.init_chunks(lp);
    }
    // Until the checkpoint that ends recovery is durable, a root written by GC (a moved
    // translation page, a window extension) must describe what the recovered-from root
    // does: its scan set and protocol state, plus whatever blocks are added to the scan set
    // meanwhile. Without this such a root named an empty scan set and no protocol state,
    // and a crash before the checkpoint lost every write since the previous one (found by an
    // adversarial test campaign).
    if let Some(r) = root {
        core.ckpt.scan_set = r.scan_set.clone();
        core.ckpt.proto_blob = r.blob.clone();
    }
    // Recovery's own `map` calls marked everything; start over from the comparison.
    core.ckpt.clear_pending();
    core.ckpt.dirty.fill(false);
    core.ckpt.dirty_count = 0;
    let named: Vec<Ppa> = core
        .ckpt
        .dir
        .iter()
        .chain(core.ckpt.journal.iter())
        .copied()
        .collect();
    for p in named {
        if p != Ppa::NONE {
            core.mark_written(p);
            core.pin_core(p);
        }
    }
    let epp = core.ckpt.entries_per_page as usize;
    for c in 0..core.ckpt.dir.len() {
        let first = c * epp;
        let last = (first + epp).min(core.logical_pages() as usize);
        let mut stale = core.ckpt.dir[c] == Ppa::NONE
            || root.is_some_and(|r| r.journal_chunks.binary_search(&(c as u32)).is_ok());
        for l in first..last {
            let now = core.lookup(Lpn(l as u32)).unwrap_or(Ppa::NONE);
            let then = root.map_or(Ppa::NONE, |r| r.l2p[l]);
            if now != then {
                stale = true;
                core.ckpt.mark_dirty(Lpn(l as u32));
            }
        }
        if stale && !core.ckpt.dirty[c] {
            core.ckpt.dirty[c] = true;
            core.ckpt.dirty_count += 1;
        }
    }
}
