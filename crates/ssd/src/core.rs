//! `FtlCore`: the page-mapping FTL every commit protocol stands on.
//!
//! It owns the mapping table (logical → physical) and its reverse, per-page liveness flags,
//! per-block bookkeeping, one allocation head per (parallel unit, stream), the free pools,
//! summary pages and (with `meta`) mapping checkpoints. It does not decide what a write
//! means: commit protocols call `program`, `map`, `pin` and friends, and GC (in `gc`) calls
//! back into the protocol through `GcHooks`.
//!
//! A page is *live* when it is mapped (`VALID`) or pinned by the protocol (`PIN_PROTO`, e.g.
//! the intentions of an active transaction, a TC commit record, a BPCC straddler) or by the
//! FTL (`PIN_CORE`, translation pages). GC copies live pages and discards the rest.
//!
//! Invariants (`check_invariants`):
//! - `l2p[lpn] = p` ⇔ the reverse map of `p` holds `lpn` and `VALID` is set on `p`;
//! - each block's `live` and `valid` counts equal the flags of its pages;
//! - a block is in its parallel unit's free pool (or window) iff its state is `Free`;
//! - every open head points at an `Open` block of that stream.
//!
//! Erase ordering: a page that stops being live because of a newer write stays physically
//! needed until that write is durable. `invalidate` records that instant in the block's
//! `erase_not_before`, and GC never starts an erase earlier. This is what keeps a crash
//! between "new copy in flight" and "old copy erased" from losing data.

use crate::config::{FtlConfig, MapPlacement, Striping};
use crate::error::{Result, SsdError};
use crate::oob::{self, kind};
use crate::stats::FtlStats;
use media::{BlockId, Content, Geometry, Nand, OpTiming, PageView, Ppa, PuId};
use sim::{Lpn, SimTime};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[path = "hooks.rs"]
pub mod hooks;
#[path = "meta.rs"]
pub mod meta;

use meta::Ckpt;

pub const VALID: u8 = 1;
pub const PIN_PROTO: u8 = 2;
pub const PIN_CORE: u8 = 4;
pub const WRITTEN: u8 = 8;
const LIVE: u8 = VALID | PIN_PROTO | PIN_CORE;

/// "No logical page" in the reverse map.
const NO_LPN: u32 = u32::MAX;

/// Four flag bits per physical page, two pages to a byte (4 MiB for 8 M pages). A page's
/// flags sit together and apart from the 32 MiB reverse map, so invalidating the old copy on
/// every remap costs at most one cache miss.
#[derive(Clone, Debug)]
struct Nibbles(sim::mem::HugeTable<u8>);

impl Nibbles {
    fn new(n: usize) -> Nibbles {
        Nibbles(sim::mem::HugeTable::zeroed(n.div_ceil(2)))
    }
    #[inline]
    fn get(&self, i: u32) -> u8 {
        (self.0[(i >> 1) as usize] >> ((i & 1) * 4)) & 0xF
    }
    #[inline]
    fn put(&mut self, i: u32, v: u8) {
        let b = &mut self.0[(i >> 1) as usize];
        let sh = (i & 1) * 4;
        *b = (*b & !(0xF << sh)) | ((v & 0xF) << sh);
    }
    fn clear_all(&mut self) {
        self.0.fill(0);
    }
    fn bytes(&self) -> u64 {
        self.0.len() as u64
    }
}

/// Number of allocation streams per parallel unit.
pub const NSTREAMS: usize = 8;
/// Blocks per parallel unit kept out of the logical space for open heads (host, GC, map,
/// one protocol stream).
const OPEN_RESERVE: u32 = 4;

/// An allocation stream: pages of one stream fill their own open block in each parallel unit,
/// so data of different lifetimes (host writes, GC copies, translation pages) do not mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stream(pub u8);

impl Stream {
    pub const HOST: Stream = Stream(0);
    pub const GC: Stream = Stream(1);
    pub const MAP: Stream = Stream(2);
    /// Streams 3..8 are free for protocols (commit records, per-transaction logs).
    pub const PROTO0: Stream = Stream(3);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockState {
    Free,
    Open,
    Full,
    Bad,
    /// Reserved for the root-record log; never allocated or collected.
    Meta,
}

#[derive(Clone, Debug)]
pub struct BlockMeta {
    pub state: BlockState,
    pub next_page: u16,
    pub stream: u8,
    /// Whether GC may choose this block (a protocol may protect blocks, e.g. LightTx zones).
    pub eligible: bool,
    /// Free but possibly not cleanly erased (found after recovery): erase before use.
    pub dirty: bool,
}

impl BlockMeta {
    fn new() -> BlockMeta {
        BlockMeta {
            state: BlockState::Free,
            next_page: 0,
            stream: 0,
            eligible: true,
            dirty: false,
        }
    }
}

/// A parallel unit's clean free blocks: first in first out, or least worn first with dynamic
/// wear leveling (erase counts of free blocks do not change while they wait).
#[derive(Clone, Debug)]
pub(crate) enum FreePool {
    Fifo(VecDeque<BlockId>),
    LeastWorn(BinaryHeap<Reverse<(u32, u32)>>),
}

impl FreePool {
    fn new(least_worn: bool) -> FreePool {
        if least_worn {
            FreePool::LeastWorn(BinaryHeap::new())
        } else {
            FreePool::Fifo(VecDeque::new())
        }
    }
    fn push(&mut self, b: BlockId, erase_count: u32) {
        match self {
            FreePool::Fifo(q) => q.push_back(b),
            FreePool::LeastWorn(h) => h.push(Reverse((erase_count, b.0))),
        }
    }
    fn pop(&mut self) -> Option<BlockId> {
        match self {
            FreePool::Fifo(q) => q.pop_front(),
            FreePool::LeastWorn(h) => h.pop().map(|Reverse((_, b))| BlockId(b)),
        }
    }
    fn len(&self) -> usize {
        match self {
            FreePool::Fifo(q) => q.len(),
            FreePool::LeastWorn(h) => h.len(),
        }
    }
    fn contains(&self, b: BlockId) -> bool {
        match self {
            FreePool::Fifo(q) => q.contains(&b),
            FreePool::LeastWorn(h) => h.iter().any(|Reverse((_, x))| *x == b.0),
        }
    }
    fn remove(&mut self, b: BlockId) {
        match self {
            FreePool::Fifo(q) => q.retain(|x| *x != b),
            FreePool::LeastWorn(h) => h.retain(|Reverse((_, x))| *x != b.0),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct PuAlloc {
    pub(crate) free: FreePool,
    /// With checkpoints: blocks recorded in the latest root as where writes go next, with the
    /// instant that root became durable (no program may start in them earlier).
    pub(crate) window: VecDeque<(BlockId, SimTime)>,
    pub(crate) heads: [u32; NSTREAMS],
}

/// What a host read finds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    Unmapped,
    Tag(u64),
    Bytes(Vec<u8>),
    /// The mapped page could not be read (a bug or an unrecoverable medium).
    Uncorrectable,
}

#[derive(Clone)]
pub struct FtlCore {
    pub nand: Nand,
    pub cfg: FtlConfig,
    pub geo: Geometry,
    logical_pages: u32,
    data_pages_per_block: u32,
    l2p: sim::mem::HugeTable<Ppa>,
    /// Per physical page: the logical page it was mapped from when programmed. Meaningful
    /// only while the page's VALID bit is set; not cleared when the page is invalidated.
    /// Starts as untouched zeroed memory (every read is guarded by VALID), so a 32 GiB
    /// device does not write 64 MiB of "no page" at construction.
    rmap: sim::mem::HugeTable<u32>,
    flags: Nibbles,
    pub(crate) blocks: Vec<BlockMeta>,
    /// Per block, kept apart from `BlockMeta` in compact arrays because they change on
    /// every remap or are scanned by victim selection: live pages (mapped or pinned), mapped
    /// pages, whether GC may collect the block (full and eligible), the host-write clock at
    /// its last program (its age, for cost-benefit), and the instant before which GC must not
    /// start erasing it (see the module docs).
    live: Vec<u16>,
    valid: Vec<u16>,
    /// Mapped pages per parallel unit (the sum of `valid` over its blocks).
    unit_valid: Vec<u64>,
    gcable: Vec<bool>,
    stamp: Vec<u64>,
    erase_not_before: Vec<SimTime>,
    /// When each block's last erase completes: before then it still holds its old pages.
    clean_at: Vec<SimTime>,
    pub(crate) pus: Vec<PuAlloc>,
    stripe_order: Vec<PuId>,
    stripe_cursor: usize,
    /// Where the map stream opens its next block: its own rotation over the units, apart
    /// from the host striping (see `program`).
    map_cursor: usize,
    pub stats: FtlStats,
    /// Host page writes so far: the FTL's notion of age.
    pub clock: u64,
    /// Latest end of any program issued so far.
    pub program_end_max: SimTime,
    /// Latest end of any program issued since the device last reset it to zero: the device
    /// resets it around each command to learn when that command's programs finish (an
    /// ABORT is acked no earlier).
    pub program_end_since: SimTime,
    pub(crate) ckpt: Ckpt,
    gc_threshold_blocks: u32,
    pub(crate) erases_since_wl_check: u64,
    /// Units that fell below the GC threshold since GC last ran (so the device need not
    /// look at every unit before every command).
    gc_wanted: Vec<PuId>,
    /// Blocks a protocol took out of allocation for its own use (`reserve_block`): state
    /// `Meta`, never pooled, allocated or collected.
    pub(crate) owned: Vec<BlockId>,
    /// Per parallel unit, emptied GC victims a protocol keeps un-erased until a record of
    /// their moves is durable (`defer_erase`): owned meanwhile, and counted with the free
    /// blocks when deciding whether the unit needs GC (their erase is already decided).
    deferred: Vec<u32>,
    /// Free blocks the protocol needs beyond each unit's GC block (`set_reserve_blocks`).
    reserve_blocks: u32,
    /// GC is collecting a victim for the free-block reserve (`gc::restore_reserve`).
    pub(crate) reserve_gc: bool,
    /// How recovery's scans issue their reads (`Device::recover_with`); timing only.
    pub(crate) recovery_reads: crate::config::RecoveryReads,
    /// Per unit, whether its window needs a refill and whether it is short of free blocks
    /// with nothing to collect, kept as they change (`units.rs`).
    units: crate::units::UnitTrack,
}

impl FtlCore {
    /// When recovery's next read of a scan may start: with the scan (`ready`) when reads
    /// overlap, after the scan's last read so far (`end`) when they are serial
    /// (`RecoveryReads`).
    pub(crate) fn recovery_read_at(&self, ready: SimTime, end: SimTime) -> SimTime {
        match self.recovery_reads {
            crate::config::RecoveryReads::Overlapped => ready,
            crate::config::RecoveryReads::Serial => end,
        }
    }

    /// An FTL over a freshly erased device. Validates the configuration against the geometry.
    pub fn new(nand: Nand, cfg: FtlConfig) -> Result<FtlCore> {
        let geo = nand.geometry().clone();
        cfg.validate(geo.blocks_per_plane)?;
        crate::modes::validate(
            cfg.mlc_mode,
            nand.image().params().cell,
            geo.pages_per_block,
        )?;
        let summary = u32::from(cfg.summary_pages);
        // pSLC: only every other (LSB) page is a slot (`modes`).
        let data_pages_per_block = geo.pages_per_block / cfg.mlc_mode.stride() - summary;
        let oob = nand.image().oob_used() as u32;
        if cfg.summary_pages && data_pages_per_block * oob > geo.page_bytes {
            return Err(SsdError::Config {
                key: "ftl.summary_pages".into(),
                reason: format!(
                    "a summary page must hold {data_pages_per_block} OOB areas of {oob} bytes ({} bytes) but a page has {}; use larger pages, fewer pages per block, or summary_pages = false",
                    data_pages_per_block * oob,
                    geo.page_bytes
                ),
            });
        }
        let blocks = geo.blocks() as usize;
        let ckpt = Ckpt::new(&geo, &cfg);
        // The root log's blocks are left out of the logical space whether or not this
        // configuration checkpoints, for the same reason as the window below.
        let meta_blocks = meta::META_BLOCKS.max(ckpt.meta_block_count());
        let usable =
            u64::from(geo.blocks().saturating_sub(meta_blocks)) * u64::from(data_pages_per_block);
        let logical = ((usable as f64) * (1.0 - cfg.over_provisioning)).floor() as u64;
        // Keep at least the GC threshold (`capacity_gc_threshold`'s when set: a sweep over
        // the threshold keeps one capacity) plus a few open blocks free in every parallel unit,
        // and the window each unit holds recorded for writes after a checkpoint. The window
        // is reserved whether or not checkpoints are on, so that every protocol exports the
        // same logical capacity from one configuration and comparisons are like for like.
        let window = cfg.checkpoint_window_blocks;
        let reserve = u64::from(geo.pus())
            * u64::from(
                cfg.capacity_threshold_blocks(geo.blocks_per_plane) + OPEN_RESERVE + window,
            )
            * u64::from(data_pages_per_block);
        let logical = logical.min(usable.saturating_sub(reserve));
        if logical == 0 {
            return Err(SsdError::Config {
                key: "ftl.over_provisioning".into(),
                reason: "leaves no logical space on this geometry".into(),
            });
        }
        let mut core = FtlCore {
            nand,
            gc_threshold_blocks: cfg.gc_threshold_blocks(geo.blocks_per_plane),
            logical_pages: logical as u32,
            data_pages_per_block,
            l2p: sim::mem::HugeTable(sim::mem::huge_vec(logical as usize, Ppa::NONE)),
            rmap: sim::mem::HugeTable::zeroed(geo.pages() as usize),
            flags: Nibbles::new(geo.pages() as usize),
            blocks: vec![BlockMeta::new(); blocks],
            live: vec![0; blocks],
            valid: vec![0; blocks],
            unit_valid: vec![0; geo.pus() as usize],
            gcable: vec![false; blocks],
            stamp: vec![0; blocks],
            erase_not_before: vec![SimTime::ZERO; blocks],
            clean_at: vec![SimTime::ZERO; blocks],
            pus: Vec::new(),
            stripe_order: Vec::new(),
            stripe_cursor: 0,
            map_cursor: 0,
            stats: FtlStats::default(),
            clock: 0,
            program_end_max: SimTime::ZERO,
            recovery_reads: crate::config::RecoveryReads::Overlapped,
            program_end_since: SimTime::ZERO,
            ckpt,
            cfg,
            geo,
            erases_since_wl_check: 0,
            gc_wanted: Vec::new(),
            owned: Vec::new(),
            deferred: Vec::new(),
            reserve_blocks: 0,
            reserve_gc: false,
            units: crate::units::UnitTrack::default(),
        };
        core.deferred = vec![0; core.geo.pus() as usize];
        core.stripe_order = stripe_order(&core.geo, core.cfg.striping);
        core.rebuild_pools(false);
        Ok(core)
    }

    /// Rebuilds free pools from block states. `after_recovery` marks free blocks dirty: their
    /// contents are unknown until erased.
    pub(crate) fn rebuild_pools(&mut self, after_recovery: bool) {
        let meta: Vec<BlockId> = self.ckpt.meta_blocks().to_vec();
        let least_worn = self.cfg.dynamic_wear_leveling;
        self.pus = (0..self.geo.pus())
            .map(|_| PuAlloc {
                free: FreePool::new(least_worn),
                window: VecDeque::new(),
                heads: [u32::MAX; NSTREAMS],
            })
            .collect();
        for b in 0..self.geo.blocks() {
            let block = BlockId(b);
            if meta.contains(&block) || self.owned.contains(&block) {
                self.blocks[b as usize].eligible = false;
                self.set_state(block, BlockState::Meta);
                continue;
            }
            if self.nand.image().is_bad(block) {
                self.set_state(block, BlockState::Bad);
                continue;
            }
            let m = &mut self.blocks[b as usize];
            if m.state == BlockState::Free {
                if after_recovery {
                    m.dirty = true;
                }
                let pu = self.geo.pu_of_block(block);
                let e = self.nand.image().erase_count(block);
                self.pus[pu.0 as usize].free.push(block, e);
            }
            self.set_state(block, self.blocks[b as usize].state);
        }
        self.units = self.count_units();
    }

    /// Sets a block's state, keeping the GC-candidate flag in step.
    pub(crate) fn set_state(&mut self, block: BlockId, state: BlockState) {
        let m = &mut self.blocks[block.0 as usize];
        m.state = state;
        let b = block.0 as usize;
        let was = self.gcable[b];
        self.gcable[b] = state == BlockState::Full && m.eligible;
        if was != self.gcable[b] && u32::from(self.live[b]) < self.data_pages_per_block {
            self.collectable_moved(b, self.gcable[b]);
        }
    }

    /// Whether GC may collect `block` and win space by it (`units.rs`).
    fn collectable(&self, b: usize) -> bool {
        self.gcable[b] && u32::from(self.live[b]) < self.data_pages_per_block
    }

    /// A block became collectable (`now`) or stopped being so: its unit's count moves, and
    /// the unit's facts with it when the count reaches or leaves zero.
    #[cold]
    fn collectable_moved(&mut self, b: usize, now: bool) {
        let pu = self.geo.pu_of_block(BlockId(b as u32));
        let Some(c) = self.units.collectable.get_mut(pu.0 as usize) else {
            return;
        };
        let before = *c;
        *c = if now {
            before + 1
        } else {
            before.saturating_sub(1)
        };
        if (before == 0) != (*c == 0) {
            self.note_pool(pu);
        }
    }

    /// Records unit `pu`'s facts after a change to its free pool, window or collectable
    /// blocks (`units.rs`).
    pub(crate) fn note_pool(&mut self, pu: PuId) {
        let Some(p) = self.pus.get(pu.0 as usize) else {
            return;
        };
        let free = (p.free.len() + p.window.len()) as u32;
        let refill = p.window.is_empty() && free > self.gc_threshold_blocks;
        let short = free <= self.gc_threshold_blocks
            && self.units.collectable.get(pu.0 as usize) == Some(&0);
        self.units.set(pu, refill, short);
    }

    /// The unit facts counted from scratch.
    fn count_units(&self) -> crate::units::UnitTrack {
        let mut t = crate::units::UnitTrack::new(self.pus.len());
        for b in 0..self.blocks.len() {
            if self.collectable(b) {
                t.collectable[self.geo.pu_of_block(BlockId(b as u32)).0 as usize] += 1;
            }
        }
        for (u, p) in self.pus.iter().enumerate() {
            let free = (p.free.len() + p.window.len()) as u32;
            t.set(
                PuId(u as u32),
                p.window.is_empty() && free > self.gc_threshold_blocks,
                free <= self.gc_threshold_blocks && t.collectable[u] == 0,
            );
        }
        t
    }

    /// Units whose checkpoint window is empty while they hold more clean free blocks than
    /// the GC threshold (a checkpoint could refill it). Kept as it changes.
    pub fn units_to_refill(&self) -> u32 {
        self.units.refill_count()
    }

    /// Units with at most the GC threshold of clean free blocks and no block GC may collect
    /// that frees space (full, eligible, not wholly live), in unit order. Kept as it changes.
    pub fn short_units_without_victims(&self) -> impl Iterator<Item = PuId> + '_ {
        self.units.short_units()
    }

    /// Live pages (mapped or pinned) of a block.
    #[inline]
    pub fn live(&self, block: BlockId) -> u32 {
        u32::from(self.live[block.0 as usize])
    }

    /// The slices victim policies decide over, for the blocks `first..first+n`.
    pub(crate) fn gc_slices(&self, first: u32, n: u32) -> (&[u16], &[bool], &[u64]) {
        let r = first as usize..(first + n) as usize;
        (
            &self.live[r.clone()],
            &self.gcable[r.clone()],
            &self.stamp[r],
        )
    }

    pub fn logical_pages(&self) -> u32 {
        self.logical_pages
    }
    pub fn data_pages_per_block(&self) -> u32 {
        self.data_pages_per_block
    }
    /// Physical pages per slot of a block: data page k is page `k * page_stride()` (2 in
    /// pSLC mode, `modes`).
    pub fn page_stride(&self) -> u32 {
        self.cfg.mlc_mode.stride()
    }
    /// Where a block's summary page goes: its last usable page.
    pub fn summary_ppa(&self, block: BlockId) -> Ppa {
        let s = self.page_stride();
        self.geo.ppa(block, (self.geo.pages_per_block / s - 1) * s)
    }
    pub fn gc_threshold_blocks(&self) -> u32 {
        self.gc_threshold_blocks
    }
    pub fn checkpoints_enabled(&self) -> bool {
        self.ckpt.enabled
    }

    pub fn check_lpn(&self, lpn: Lpn) -> Result<()> {
        if lpn.0 < self.logical_pages {
            Ok(())
        } else {
            Err(SsdError::LpnOutOfRange {
                lpn,
                logical_pages: self.logical_pages,
            })
        }
    }

    #[inline]
    pub fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        let p = self.l2p[lpn.0 as usize];
        (p != Ppa::NONE).then_some(p)
    }

    /// The logical page a physical page is mapped from, if it is mapped.
    #[inline]
    pub fn reverse(&self, ppa: Ppa) -> Option<Lpn> {
        (self.flags.get(ppa.0) & VALID != 0).then(|| Lpn(self.rmap[ppa.0 as usize]))
    }

    /// The page's flags (`VALID`, `PIN_PROTO`, `PIN_CORE`, `WRITTEN`).
    #[inline]
    pub fn page_flags(&self, ppa: Ppa) -> u8 {
        self.flags.get(ppa.0)
    }

    pub fn block(&self, block: BlockId) -> &BlockMeta {
        &self.blocks[block.0 as usize]
    }

    /// Clean free blocks (free pool plus window) of a parallel unit.
    pub fn free_blocks(&self, pu: PuId) -> u32 {
        let p = &self.pus[pu.0 as usize];
        (p.free.len() + p.window.len()) as u32
    }

    pub fn needs_gc(&self, pu: PuId) -> bool {
        self.free_blocks(pu) + self.deferred[pu.0 as usize] < self.gc_threshold_blocks
    }

    /// Declares the protocol's free-block reserve: clean free blocks the device must hold,
    /// beyond the one each parallel unit keeps for GC's own destination, whenever a command
    /// starts (see `reserve_shortfall`). AW and MHL-M declare one per mapping-log chain and
    /// one for the translation pages of the checkpoint that ends a recovery.
    pub fn set_reserve_blocks(&mut self, n: u32) {
        self.reserve_blocks = n;
    }

    /// The protocol's free-block reserve (`set_reserve_blocks`).
    pub fn reserve_blocks(&self) -> u32 {
        self.reserve_blocks
    }

    /// Clean free blocks beyond each unit's GC block: what streams other than GC, and
    /// blocks a protocol reserves, may take. Deferred GC victims do not count: they are
    /// erased only after a record that may itself need a new block.
    pub fn spare_free_blocks(&self) -> u32 {
        (0..self.geo.pus())
            .map(|p| self.free_blocks(PuId(p)).saturating_sub(1))
            .sum()
    }

    /// Why the free-block reserve does not hold, or `None` when it does (always, for a
    /// protocol that declares none). The reserve holds when every unit has a clean free
    /// block for GC to copy into and `spare_free_blocks` covers the protocol's reserve.
    /// `Device::maintain` restores it before every command and recovery before it ends, so
    /// that a crash at any instant leaves recovery, and the first writes after it, the
    /// blocks they take (see `gc::restore_reserve`).
    pub fn reserve_shortfall(&self) -> Option<String> {
        if self.reserve_blocks == 0 {
            return None;
        }
        let units = || (0..self.geo.pus()).map(PuId);
        let short = units().find(|&p| self.free_blocks(p) == 0);
        let spare = self.spare_free_blocks();
        if short.is_none() && spare >= self.reserve_blocks {
            return None;
        }
        let why = match short {
            Some(p) => format!("{p} has no free block for GC"),
            None => format!(
                "{spare} spare free blocks, the reserve is {}",
                self.reserve_blocks
            ),
        };
        let units: Vec<String> = units().map(|p| self.space_summary(p)).collect();
        Some(format!("{why} ({})", units.join("; ")))
    }

    /// Whether the victim GC is emptying now is collected for the free-block reserve
    /// (`gc::restore_reserve`): its erase must not be deferred, or it would win no block.
    pub fn collecting_for_reserve(&self) -> bool {
        self.reserve_gc
    }

    /// GC victims of `pu` whose erase a protocol has deferred (`defer_erase`).
    pub fn deferred_blocks(&self, pu: PuId) -> u32 {
        self.deferred[pu.0 as usize]
    }

    /// Units that may need GC, in the order they fell below the threshold; drains the list.
    pub fn take_gc_wanted(&mut self) -> Vec<PuId> {
        std::mem::take(&mut self.gc_wanted)
    }

    /// Marks every unit as possibly needing GC (after recovery).
    pub fn want_gc_everywhere(&mut self) {
        self.gc_wanted = (0..self.geo.pus()).map(PuId).collect();
    }

    /// Protect a block from (or expose it to) GC victim selection.
    pub fn set_eligible(&mut self, block: BlockId, eligible: bool) {
        self.blocks[block.0 as usize].eligible = eligible;
        let st = self.blocks[block.0 as usize].state;
        self.set_state(block, st);
    }

    /// Earliest instant GC may erase `block`.
    pub fn hold_erase_until(&mut self, block: BlockId, t: SimTime) {
        let e = &mut self.erase_not_before[block.0 as usize];
        *e = (*e).max(t);
    }

    /// The earliest instant GC may start erasing `block`.
    pub fn erase_not_before(&self, block: BlockId) -> SimTime {
        self.erase_not_before[block.0 as usize]
    }

    /// Mapped pages of a block.
    pub fn valid(&self, block: BlockId) -> u32 {
        u32::from(self.valid[block.0 as usize])
    }

    /// Mapped pages of a parallel unit.
    pub fn unit_valid(&self, pu: PuId) -> u64 {
        self.unit_valid[pu.0 as usize]
    }

    // ---------------------------------------------------------------- liveness and mapping

    fn set_flag(&mut self, ppa: Ppa, flag: u8) {
        let i = ppa.0;
        let f = self.flags.get(i);
        if f & flag != 0 {
            return;
        }
        self.flags.put(i, f | flag);
        let b = (i / self.geo.pages_per_block) as usize;
        if f & LIVE == 0 {
            self.live[b] += 1;
            if u32::from(self.live[b]) == self.data_pages_per_block && self.gcable[b] {
                self.collectable_moved(b, false);
            }
        }
        if flag == VALID {
            self.valid[b] += 1;
            self.unit_valid[self.geo.pu_of_block(BlockId(b as u32)).0 as usize] += 1;
        }
    }

    fn clear_flag(&mut self, ppa: Ppa, flag: u8, durable_at: SimTime) {
        let i = ppa.0;
        let f = self.flags.get(i);
        if f & flag == 0 {
            return;
        }
        let nf = f & !flag;
        self.flags.put(i, nf);
        let b = (i / self.geo.pages_per_block) as usize;
        if nf & LIVE == 0 {
            self.live[b] -= 1;
            if u32::from(self.live[b]) + 1 == self.data_pages_per_block && self.gcable[b] {
                self.collectable_moved(b, true);
            }
        }
        if flag == VALID {
            self.valid[b] -= 1;
            self.unit_valid[self.geo.pu_of_block(BlockId(b as u32)).0 as usize] -= 1;
        }
        #[cfg(feature = "mutants")]
        let durable_at = if crate::mutant::on("core-release-now") {
            SimTime::ZERO
        } else {
            durable_at
        };
        let e = &mut self.erase_not_before[b];
        *e = (*e).max(durable_at);
    }

    /// Maps `lpn` to `ppa`. The page it replaces stays physically needed until `durable_at`
    /// (when the new mapping survives a crash).
    pub fn map(&mut self, lpn: Lpn, ppa: Ppa, durable_at: SimTime) {
        debug_assert!(
            self.page_flags(ppa) & WRITTEN != 0,
            "mapping unwritten {ppa}"
        );
        let old = self.l2p[lpn.0 as usize];
        if old == ppa {
            return;
        }
        if old != Ppa::NONE {
            self.clear_flag(old, VALID, durable_at);
            self.stats.page_invalidations += 1;
        }
        self.l2p[lpn.0 as usize] = ppa;
        self.rmap[ppa.0 as usize] = lpn.0;
        self.set_flag(ppa, VALID);
        self.ckpt.mark_dirty(lpn);
    }

    /// Hints the CPU to fetch `lpn`'s mapping entry: GC calls this for a whole victim block
    /// before copying it, and the world for the next request's page, so the mapping
    /// accesses that follow do not each wait on memory. Changes speed only.
    #[inline]
    pub fn prefetch_mapping(&self, lpn: Lpn) {
        if let Some(e) = self.l2p.get(lpn.0 as usize) {
            sim::mem::prefetch(e);
        }
    }

    /// Hints the CPU to fetch what a read or overwrite of `lpn` touches next: the page record
    /// of its current physical page and that page's flags. The host issues it for every part
    /// of a DB page before reading or writing them, so the parts' cache misses (scattered
    /// physical pages of a large device) overlap instead of following one another. Changes
    /// speed only.
    #[inline]
    pub fn prefetch_page(&self, lpn: Lpn) {
        if let Some(ppa) = self.l2p.get(lpn.0 as usize).copied() {
            if ppa != Ppa::NONE {
                self.nand.image().prefetch_record(ppa);
                if let Some(b) = self.flags.0.get((ppa.0 >> 1) as usize) {
                    sim::mem::prefetch(b);
                }
            }
        }
    }

    /// Hints the CPU to fetch what remapping `lpn` touches in the block of its current copy
    /// (`clear_flag`): the page's flags and the block's live and valid counts and erase
    /// bound. A protocol calls it before programming the new copy, so those misses (a random
    /// block of a large device; ~2 % of a host TPC-C run waited on them) overlap with the
    /// program's own work. Changes speed only.
    #[inline]
    pub fn prefetch_remap(&self, lpn: Lpn) {
        let Some(ppa) = self.l2p.get(lpn.0 as usize).copied() else {
            return;
        };
        if ppa == Ppa::NONE {
            return;
        }
        if let Some(f) = self.flags.0.get((ppa.0 >> 1) as usize) {
            sim::mem::prefetch(f);
        }
        let b = self.geo.block_of(ppa).0 as usize;
        if let (Some(l), Some(v), Some(e)) = (
            self.live.get(b),
            self.valid.get(b),
            self.erase_not_before.get(b),
        ) {
            sim::mem::prefetch(l);
            sim::mem::prefetch(v);
            sim::mem::prefetch(e);
        }
    }

    /// Hints the CPU to fetch what the next program of `stream` through the striping
    /// rotation will touch: the page its unit's open block hands out next (page record,
    /// block state in the image, flags and reverse-map entry) and that block's counters.
    /// Called at the end of such a program, so the misses overlap with whatever the caller
    /// does before the next write instead of stalling it. Not for `LeastBusy` striping,
    /// whose next unit depends on the time of the next write. Changes speed only.
    #[inline]
    fn prefetch_next_alloc(&self, stream: Stream) {
        if self.cfg.striping == Striping::LeastBusy {
            return;
        }
        let Some(pu) = self.stripe_order.get(self.stripe_cursor) else {
            return;
        };
        let head = self.pus[pu.0 as usize].heads[stream.0 as usize];
        let Some(m) = self.blocks.get(head as usize) else {
            return;
        };
        let page = u32::from(m.next_page) * self.page_stride();
        if page >= self.geo.pages_per_block {
            return;
        }
        let ppa = self.geo.ppa(BlockId(head), page);
        self.nand.image().prefetch_program(ppa);
        let b = head as usize;
        if let Some(f) = self.flags.0.get((ppa.0 >> 1) as usize) {
            sim::mem::prefetch(f);
        }
        if let Some(r) = self.rmap.get(ppa.0 as usize) {
            sim::mem::prefetch(r);
        }
        if let (Some(st), Some(l), Some(v)) =
            (self.stamp.get(b), self.live.get(b), self.valid.get(b))
        {
            sim::mem::prefetch(st);
            sim::mem::prefetch(l);
            sim::mem::prefetch(v);
        }
    }

    /// Moves a mapped page: `lpn` was at `from` and is now at `to` (GC knows both, so the
    /// mapping table is written without being read first).
    pub fn remap_moved(&mut self, lpn: Lpn, from: Ppa, to: Ppa, durable_at: SimTime) {
        debug_assert_eq!(self.l2p[lpn.0 as usize], from);
        self.clear_flag(from, VALID, durable_at);
        self.l2p[lpn.0 as usize] = to;
        self.rmap[to.0 as usize] = lpn.0;
        self.set_flag(to, VALID);
        self.ckpt.mark_dirty(lpn);
    }

    /// Unmaps `lpn` (trim, or rollback of a mapping).
    pub fn unmap(&mut self, lpn: Lpn, durable_at: SimTime) {
        let old = self.l2p[lpn.0 as usize];
        if old != Ppa::NONE {
            self.clear_flag(old, VALID, durable_at);
            self.l2p[lpn.0 as usize] = Ppa::NONE;
            self.ckpt.mark_dirty(lpn);
        }
    }

    /// Keeps a page live for the protocol (GC copies it and reports the move).
    pub fn pin(&mut self, ppa: Ppa) {
        self.set_flag(ppa, PIN_PROTO);
    }

    /// Releases a protocol pin; the page stays physically needed until `durable_at`.
    pub fn unpin(&mut self, ppa: Ppa, durable_at: SimTime) {
        self.clear_flag(ppa, PIN_PROTO, durable_at);
    }

    pub(crate) fn pin_core(&mut self, ppa: Ppa) {
        self.set_flag(ppa, PIN_CORE);
    }
    pub(crate) fn unpin_core(&mut self, ppa: Ppa, durable_at: SimTime) {
        self.clear_flag(ppa, PIN_CORE, durable_at);
    }

    // ---------------------------------------------------------------- allocation

    /// The next parallel unit for a host-stream page under the striping policy.
    pub fn next_pu(&mut self) -> PuId {
        match self.cfg.striping {
            Striping::LeastBusy => {
                let n = self.stripe_order.len();
                let mut best = self.stripe_order[self.stripe_cursor % n];
                let mut best_t = self.nand.array_free_at(best);
                for k in 1..n {
                    let pu = self.stripe_order[(self.stripe_cursor + k) % n];
                    let t = self.nand.array_free_at(pu);
                    if t < best_t {
                        best = pu;
                        best_t = t;
                    }
                }
                self.stripe_cursor = (self.stripe_cursor + 1) % n;
                best
            }
            _ => {
                let pu = self.stripe_order[self.stripe_cursor];
                self.stripe_cursor = (self.stripe_cursor + 1) % self.stripe_order.len();
                pu
            }
        }
    }

    /// Whether `stream` has an open block with space in `pu`.
    pub fn has_head_space(&self, pu: PuId, stream: Stream) -> bool {
        self.pus[pu.0 as usize].heads[stream.0 as usize] != u32::MAX
    }

    /// Picks a clean block for a new head: from the window with checkpoints on, otherwise from
    /// the free pool (lowest erase count first with dynamic wear leveling). Streams other than
    /// GC leave the last free block of a parallel unit to GC.
    fn take_free_block(
        &mut self,
        pu: PuId,
        stream: Stream,
        now: SimTime,
    ) -> Result<Option<(BlockId, SimTime)>> {
        let reserve = if stream == Stream::GC { 0 } else { 1 };
        if self.free_blocks(pu) <= reserve {
            return Ok(None);
        }
        // Translation pages are found through the root's directory, never by scanning, so
        // the map stream does not need blocks recorded in a root (and a checkpoint right
        // after recovery, when every window is empty, must not write a root per unit).
        let taken = if self.ckpt.enabled && self.ckpt.track_writes {
            match (stream == Stream::MAP).then(|| self.pop_free(pu)).flatten() {
                Some(b) => Some((b, SimTime::ZERO)),
                None => {
                    if self.pus[pu.0 as usize].window.is_empty() {
                        meta::extend_window(self, pu, now)?;
                    }
                    self.pus[pu.0 as usize].window.pop_front()
                }
            }
        } else {
            self.pop_free(pu).map(|b| (b, SimTime::ZERO))
        };
        self.note_pool(pu);
        if self.needs_gc(pu) && !self.gc_wanted.contains(&pu) {
            self.gc_wanted.push(pu);
        }
        Ok(taken)
    }

    /// Makes a free block clean: erases it now if recovery left it dirty. Returns when its
    /// last erase completes (`None` if that erase wore it out and it was retired). A block may
    /// be named in a root's scan set only from that instant: recovery scans such blocks, and
    /// one still holding old pages would bring superseded versions back.
    pub(crate) fn make_clean(&mut self, block: BlockId, now: SimTime) -> Result<Option<SimTime>> {
        if self.blocks[block.0 as usize].dirty {
            let (t, worn) = self.nand.erase(block, now)?;
            self.stats.lazy_erases += 1;
            self.blocks[block.0 as usize].dirty = false;
            self.clean_at[block.0 as usize] = t.end;
            if worn {
                self.retire(block);
                return Ok(None);
            }
        }
        Ok(Some(self.clean_at[block.0 as usize]))
    }

    /// Removes a block from a parallel unit's free pool under the wear-leveling policy.
    pub(crate) fn pop_free(&mut self, pu: PuId) -> Option<BlockId> {
        let b = self.pus[pu.0 as usize].free.pop();
        self.note_pool(pu);
        b
    }

    /// Whether recovery finds the writes made since the last checkpoint by scanning (the
    /// default, see `meta`). A protocol that persists every mapping change in its own log
    /// (AW, MHL-M) turns this off: allocation then ignores the checkpoint window, and a
    /// checkpoint's scan set holds only the protocol's `checkpoint_blocks`, so recovery
    /// reads no data pages. Window blocks go back to the free pools.
    pub fn set_write_tracking(&mut self, on: bool) {
        self.ckpt.track_writes = on;
        if !on {
            for pu in 0..self.pus.len() {
                while let Some((b, _)) = self.pus[pu].window.pop_front() {
                    let e = self.nand.image().erase_count(b);
                    self.pus[pu].free.push(b, e);
                }
                self.note_pool(PuId(pu as u32));
            }
        }
    }

    /// Takes a free block of `pu` out of allocation for the protocol's own use (AW and
    /// MHL-M keep their mapping logs in such blocks): it is never allocated to a stream,
    /// collected or scanned, and goes back with `release_block`. Leaves the unit at least
    /// `keep` free blocks (1 keeps GC able to start, as for every stream but GC's). Returns
    /// the block and the instant it is known erased: a pooled block's erase may still be
    /// queued on its plane (GC pools a victim when it issues the erase), so this is when the
    /// plane is done with everything issued so far, or the end of the erase of a block found
    /// dirty after recovery. Programs into the block itself queue behind the erase anyway;
    /// the instant matters to writes elsewhere that must not become durable before it (AW's
    /// log link naming the block).
    pub fn reserve_block(
        &mut self,
        pu: PuId,
        keep: u32,
        now: SimTime,
    ) -> Result<Option<(BlockId, SimTime)>> {
        loop {
            if self.pus[pu.0 as usize].free.len() as u32 <= keep {
                return Ok(None);
            }
            let Some(block) = self.pop_free(pu) else {
                return Ok(None);
            };
            let mut ready = now.max(self.nand.array_free_at(pu));
            if self.blocks[block.0 as usize].dirty {
                let (t, worn) = self.nand.erase(block, now)?;
                self.stats.lazy_erases += 1;
                self.blocks[block.0 as usize].dirty = false;
                if worn {
                    self.retire(block);
                    continue;
                }
                ready = t.end;
            }
            self.take_owned(block);
            if self.needs_gc(pu) && !self.gc_wanted.contains(&pu) {
                self.gc_wanted.push(pu);
            }
            return Ok(Some((block, ready)));
        }
    }

    /// Marks a block (already out of the pools) as owned by the protocol.
    pub(crate) fn take_owned(&mut self, block: BlockId) {
        if !self.owned.contains(&block) {
            self.owned.push(block);
        }
        let m = &mut self.blocks[block.0 as usize];
        m.eligible = false;
        m.next_page = self.geo.pages_per_block as u16;
        self.erase_not_before[block.0 as usize] = SimTime::ZERO;
        self.set_state(block, BlockState::Meta);
    }

    /// Keeps an emptied GC victim out of the free pool, un-erased, for the protocol to erase
    /// later with `release_deferred` (AW without move records keeps a victim until a record
    /// carrying its moved entries is durable). The block is owned meanwhile (never
    /// allocated, collected or scanned); its `erase_not_before` is kept, so the erase still
    /// waits for whatever its cleared pages were waiting for. GC counts it as free when
    /// deciding whether the unit needs collecting.
    pub fn defer_erase(&mut self, block: BlockId) {
        let keep = self.erase_not_before[block.0 as usize];
        self.take_owned(block);
        self.erase_not_before[block.0 as usize] = keep;
        self.deferred[self.geo.pu_of_block(block).0 as usize] += 1;
    }

    /// Erases a victim kept by `defer_erase` (not before `ready`, nor before its
    /// `erase_not_before`) into its unit's free pool.
    pub fn release_deferred(&mut self, block: BlockId, ready: SimTime) -> Result<OpTiming> {
        let pu = self.geo.pu_of_block(block).0 as usize;
        self.deferred[pu] = self.deferred[pu].saturating_sub(1);
        let keep = self.erase_not_before[block.0 as usize];
        self.release_block(block, ready.max(keep))
    }

    /// Whether `block` is one the protocol owns.
    pub fn is_owned(&self, block: BlockId) -> bool {
        self.owned.contains(&block)
    }

    /// Programs a page of a block the protocol owns (pages in ascending order).
    pub fn program_owned(
        &mut self,
        ppa: Ppa,
        content: Content,
        oob: &[u8],
        ready: SimTime,
    ) -> Result<OpTiming> {
        let block = self.geo.block_of(ppa);
        if !self.is_owned(block) {
            return Err(SsdError::OutOfSpace {
                detail: format!("internal: program_owned into {block}, which is not owned"),
            });
        }
        let t = self.nand.program(ppa, content, oob, ready)?;
        self.mark_written(ppa);
        self.program_end_max = self.program_end_max.max(t.end);
        self.program_end_since = self.program_end_since.max(t.end);
        Ok(t)
    }

    /// Gives an owned block back: erases it (not before `ready`) into its unit's free pool.
    pub fn release_block(&mut self, block: BlockId, ready: SimTime) -> Result<OpTiming> {
        if !self.is_owned(block) {
            return Err(SsdError::OutOfSpace {
                detail: format!("internal: release of {block}, which is not owned"),
            });
        }
        self.owned.retain(|b| *b != block);
        self.blocks[block.0 as usize].state = BlockState::Full;
        self.erase_block(block, ready)
    }

    /// Allocates the next page of `stream` in `pu`, opening a block if needed. Returns the
    /// page and the earliest instant it may be programmed (after a lazy erase, or after the
    /// root that recorded its block).
    fn alloc_in(
        &mut self,
        pu: PuId,
        stream: Stream,
        now: SimTime,
    ) -> Result<Option<(Ppa, SimTime)>> {
        let s = stream.0 as usize;
        let mut ready = SimTime::ZERO;
        if !self.has_head_space(pu, stream) {
            let Some((block, usable_at)) = self.take_free_block(pu, stream, now)? else {
                return Ok(None);
            };
            ready = ready.max(usable_at);
            let m = &self.blocks[block.0 as usize];
            debug_assert_eq!(m.state, BlockState::Free);
            if m.dirty {
                let (t, worn) = self.nand.erase(block, now.max(ready))?;
                self.stats.lazy_erases += 1;
                self.clean_at[block.0 as usize] = t.end;
                ready = ready.max(t.end);
                self.blocks[block.0 as usize].dirty = false;
                if worn {
                    self.retire(block);
                    return self.alloc_in(pu, stream, now);
                }
            }
            let m = &mut self.blocks[block.0 as usize];
            m.next_page = 0;
            m.stream = stream.0;
            m.eligible = true;
            self.erase_not_before[block.0 as usize] = SimTime::ZERO;
            self.set_state(block, BlockState::Open);
            self.pus[pu.0 as usize].heads[s] = block.0;
        }
        let block = BlockId(self.pus[pu.0 as usize].heads[s]);
        let page = u32::from(self.blocks[block.0 as usize].next_page);
        let ppa = self.geo.ppa(block, page * self.page_stride());
        self.blocks[block.0 as usize].next_page += 1;
        Ok(Some((ppa, ready)))
    }

    fn retire(&mut self, block: BlockId) {
        self.set_state(block, BlockState::Bad);
        self.stats.bad_blocks += 1;
    }

    /// Programs a page in `stream`: in `pu` if given (GC and per-unit logs), otherwise in the
    /// unit the striping policy picks, falling back to any unit with space. Writes the block's
    /// summary page when its last data page is programmed.
    pub fn program(
        &mut self,
        stream: Stream,
        pu: Option<PuId>,
        content: Content,
        oob: &[u8],
        ready: SimTime,
    ) -> Result<(Ppa, OpTiming)> {
        debug_assert!(oob.len() == self.nand.image().oob_used());
        let (ppa, ready_min) = match pu {
            Some(pu) => self
                .alloc_in(pu, stream, ready)?
                .ok_or_else(|| SsdError::OutOfSpace {
                    detail: format!(
                        "{pu} has no free block for stream {} ({})",
                        stream.0,
                        self.space_summary(pu)
                    ),
                })?,
            None => {
                let mut found = None;
                // Striped (`ftl.map_placement = "striped"`): each map page goes to the next
                // unit of the map stream's own rotation, so a checkpoint's pages are
                // programmed in parallel, but every unit keeps an open map block
                // (docs/FTL.md, "Mapping checkpoint placement").
                if stream == Stream::MAP && self.cfg.map_placement == MapPlacement::Striped {
                    let n = self.stripe_order.len();
                    for k in 0..n {
                        let i = (self.map_cursor + k) % n;
                        found = self.alloc_in(self.stripe_order[i], stream, ready)?;
                        if found.is_some() {
                            self.map_cursor = (i + 1) % n;
                            break;
                        }
                    }
                } else if stream == Stream::MAP {
                    // One unit (the default): translation and journal pages fill one open
                    // block before another is opened: striped like host pages they would
                    // keep a nearly empty map block open in every unit, space GC cannot
                    // reclaim (docs/FTL.md, "Map stream placement", "Mapping checkpoint
                    // placement").
                    let n = self.stripe_order.len();
                    if let Some(pu) = (0..n)
                        .map(|k| self.stripe_order[k])
                        .find(|&pu| self.has_head_space(pu, stream))
                    {
                        found = self.alloc_in(pu, stream, ready)?;
                    }
                    // A new map block is opened by the map stream's own rotation, not by
                    // `next_pu`: taking a host page's turn would leave that unit a page
                    // behind the others for good, so its blocks would fill, and its GC run,
                    // a stripe round after theirs (a separate stall instead of a shared one).
                    for k in 0..n {
                        if found.is_some() {
                            break;
                        }
                        let i = (self.map_cursor + k) % n;
                        found = self.alloc_in(self.stripe_order[i], stream, ready)?;
                        if found.is_some() {
                            self.map_cursor = (i + 1) % n;
                        }
                    }
                } else {
                    // The striping policy's unit first, then every other unit. Round-robin
                    // and plane-first name each unit once in n turns; least-busy names the
                    // least busy unit again and again, so a unit it already tried is
                    // replaced by the first untried one in stripe order (without that, a
                    // stream whose head was full in the least busy unit found no block
                    // while another unit had free blocks: mhl-m with checkpoints every 40
                    // writes under least-busy striping, `option_matrix.rs`).
                    let n = self.stripe_order.len();
                    let mut tried: Vec<PuId> = Vec::with_capacity(n);
                    for _ in 0..n {
                        let mut pu = self.next_pu();
                        if tried.contains(&pu) {
                            match self.stripe_order.iter().find(|p| !tried.contains(p)) {
                                Some(&p) => pu = p,
                                None => break,
                            }
                        }
                        tried.push(pu);
                        found = self.alloc_in(pu, stream, ready)?;
                        if found.is_some() {
                            break;
                        }
                    }
                }
                match found {
                    Some(f) => f,
                    None => {
                        let units: Vec<String> = (0..self.geo.pus())
                            .map(|p| self.space_summary(PuId(p)))
                            .collect();
                        return Err(SsdError::OutOfSpace {
                            detail: format!(
                                "no parallel unit has a free block ({})",
                                units.join("; ")
                            ),
                        });
                    }
                }
            }
        };
        let t = self.nand.program(ppa, content, oob, ready.max(ready_min))?;
        self.after_program(ppa, t, ready)?;
        if pu.is_none() && stream != Stream::MAP {
            self.prefetch_next_alloc(stream);
        }
        Ok((ppa, t))
    }

    /// A GC copy of the page at `src` into `pu`'s GC head by copyback (`ftl.gc_copyback`):
    /// the data stays in the plane (see `Nand::copyback_program`; from another plane it
    /// crosses the channel as a normal program).
    pub fn program_copyback(
        &mut self,
        pu: PuId,
        src: Ppa,
        content: Content,
        oob: &[u8],
        ready: SimTime,
    ) -> Result<(Ppa, OpTiming)> {
        let (ppa, ready_min) =
            self.alloc_in(pu, Stream::GC, ready)?
                .ok_or_else(|| SsdError::OutOfSpace {
                    detail: format!(
                        "{pu} has no free block for stream {} ({})",
                        Stream::GC.0,
                        self.space_summary(pu)
                    ),
                })?;
        let t = self
            .nand
            .copyback_program(src, ppa, content, oob, ready.max(ready_min))?;
        self.after_program(ppa, t, ready)?;
        Ok((ppa, t))
    }

    fn after_program(&mut self, ppa: Ppa, t: OpTiming, ready: SimTime) -> Result<()> {
        // With checkpoints, record the unit's next window blocks once its open block is three
        // quarters written and its window is empty: early enough that the root recording them
        // is durable before the block fills (no stall waiting for it), late enough that GC
        // has had time to free blocks for a whole batch (refilling at the moment the last
        // window block is taken finds the free pool at its lowest and costs a root per block).
        if self.ckpt.enabled && self.ckpt.track_writes {
            let page = self.geo.page_in_block(ppa) / self.page_stride();
            let pu = self.geo.pu_of(ppa);
            let stream = self.blocks[self.geo.block_of(ppa).0 as usize].stream;
            if stream != Stream::MAP.0
                && page + 1 == self.data_pages_per_block * 3 / 4
                && self.pus[pu.0 as usize].window.is_empty()
                && self.free_blocks(pu) > 1
            {
                meta::extend_window(self, pu, ready)?;
            }
        }
        self.mark_written(ppa);
        self.program_end_max = self.program_end_max.max(t.end);
        self.program_end_since = self.program_end_since.max(t.end);
        let block = self.geo.block_of(ppa);
        let page = self.geo.page_in_block(ppa) / self.page_stride();
        self.stamp[block.0 as usize] = self.clock;
        if page + 1 == self.data_pages_per_block {
            let stream = self.blocks[block.0 as usize].stream as usize;
            if self.cfg.summary_pages {
                self.write_summary(block, ready)?;
            }
            self.blocks[block.0 as usize].next_page = self.geo.pages_per_block as u16;
            self.set_state(block, BlockState::Full);
            let pu = self.geo.pu_of_block(block);
            self.pus[pu.0 as usize].heads[stream] = u32::MAX;
        }
        Ok(())
    }

    /// The summary page: the OOB of every data page of the block, in page order.
    fn write_summary(&mut self, block: BlockId, ready: SimTime) -> Result<()> {
        let n = self.nand.image().oob_used();
        let mut payload = Vec::with_capacity(n * self.data_pages_per_block as usize);
        for page in 0..self.data_pages_per_block {
            let ppa = self.geo.ppa(block, page * self.page_stride());
            match self.nand.image().oob(ppa) {
                Some(o) => payload.extend_from_slice(o),
                None => payload.extend(std::iter::repeat_n(0xFF, n)),
            }
        }
        let mut oob = vec![0xFF; n];
        oob[0] = kind::SUMMARY;
        let ppa = self.summary_ppa(block);
        let t = self
            .nand
            .program(ppa, Content::Bytes(payload.into()), &oob, ready)?;
        self.mark_written(ppa);
        self.program_end_max = self.program_end_max.max(t.end);
        self.program_end_since = self.program_end_since.max(t.end);
        self.stats.summary_writes += 1;
        Ok(())
    }

    /// Erases a block that GC or a protocol has emptied of live pages and returns it to its
    /// parallel unit's free pool (or retires it if it wore out). Starts no earlier than the
    /// block's `erase_not_before`.
    pub fn erase_block(&mut self, block: BlockId, ready: SimTime) -> Result<OpTiming> {
        let live = self.live(block);
        if live != 0 {
            return Err(SsdError::OutOfSpace {
                detail: format!("internal: erase of {block} with {live} live pages"),
            });
        }
        let was_free = self.blocks[block.0 as usize].state == BlockState::Free;
        #[cfg(feature = "mutants")]
        let ready = if crate::mutant::on("core-erase-early") {
            ready
        } else {
            ready.max(self.erase_not_before[block.0 as usize])
        };
        #[cfg(not(feature = "mutants"))]
        let ready = ready.max(self.erase_not_before[block.0 as usize]);
        let (t, worn) = self.nand.erase(block, ready)?;
        self.clean_at[block.0 as usize] = t.end;
        let first = self.geo.first_page(block).0;
        for p in first..first + self.geo.pages_per_block {
            self.flags.put(p, 0);
            self.rmap[p as usize] = NO_LPN;
        }
        self.erase_not_before[block.0 as usize] = SimTime::ZERO;
        let pu = self.geo.pu_of_block(block);
        let m = &mut self.blocks[block.0 as usize];
        m.next_page = 0;
        m.dirty = false;
        m.eligible = true;
        self.erases_since_wl_check += 1;
        if worn {
            if was_free {
                self.pus[pu.0 as usize].free.remove(block);
                self.pus[pu.0 as usize].window.retain(|(b, _)| *b != block);
                self.note_pool(pu);
            }
            self.retire(block);
        } else if !was_free {
            self.set_state(block, BlockState::Free);
            let e = self.nand.image().erase_count(block);
            self.pus[pu.0 as usize].free.push(block, e);
            self.note_pool(pu);
        }
        Ok(t)
    }

    // ---------------------------------------------------------------- reads

    /// Reads the page mapped from `lpn`.
    pub fn read_lpn(&mut self, lpn: Lpn, ready: SimTime) -> Result<(ReadOutcome, SimTime)> {
        self.check_lpn(lpn)?;
        let Some(ppa) = self.lookup(lpn) else {
            return Ok((ReadOutcome::Unmapped, ready));
        };
        let (t, view) = self.nand.read(ppa, ready)?;
        Ok((outcome_of(view), t.end))
    }

    /// Reads a physical page (timed) and returns its view.
    pub fn read_page(&mut self, ppa: Ppa, ready: SimTime) -> Result<(OpTiming, PageView<'_>)> {
        Ok(self.nand.read(ppa, ready)?)
    }

    /// Reads only a page's OOB (timed) and returns its view.
    pub fn read_oob(&mut self, ppa: Ppa, ready: SimTime) -> Result<(OpTiming, PageView<'_>)> {
        Ok(self.nand.read_oob(ppa, ready)?)
    }

    /// Moves a page into the device over the host interface: when its data is buffered.
    pub fn host_transfer_done(&self, now: SimTime) -> SimTime {
        if self.cfg.interface_mbps == 0 {
            now
        } else {
            now + (u64::from(self.geo.page_bytes) * 1_000).div_ceil(self.cfg.interface_mbps)
        }
    }

    // ---------------------------------------------------------------- accounting

    /// DRAM the FTL itself uses, by structure (bytes).
    pub fn dram_bytes(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("mapping table", self.l2p.len() as u64 * 4),
            ("reverse map", self.rmap.len() as u64 * 4),
            ("page flags", self.flags.bytes()),
            (
                "block table",
                self.blocks.len() as u64 * (std::mem::size_of::<BlockMeta>() as u64 + 21),
            ),
        ]
    }

    /// Where a unit's blocks are, for out-of-space diagnostics: free (clean pool + window),
    /// deferred GC victims, other owned blocks, open heads by stream, full blocks (with their
    /// live pages), bad and root-log blocks.
    pub fn space_summary(&self, pu: PuId) -> String {
        let p = &self.pus[pu.0 as usize];
        let (mut owned, mut full, mut bad, mut meta) = (0u32, Vec::new(), 0u32, 0u32);
        for b in self.geo.blocks_of_pu(pu) {
            match self.blocks[b.0 as usize].state {
                BlockState::Meta if self.owned.contains(&b) => owned += 1,
                BlockState::Meta => meta += 1,
                BlockState::Full => full.push(self.live(b)),
                BlockState::Bad => bad += 1,
                _ => {}
            }
        }
        let heads: Vec<String> = p
            .heads
            .iter()
            .enumerate()
            .filter(|(_, h)| **h != u32::MAX)
            .map(|(s, h)| format!("s{s}@{}", self.blocks[*h as usize].next_page))
            .collect();
        format!(
            "{pu}: free {} deferred {} owned {} heads [{}] full live {:?} bad {bad} root-log {meta}",
            self.free_blocks(pu),
            self.deferred[pu.0 as usize],
            owned.saturating_sub(self.deferred[pu.0 as usize]),
            heads.join(" "),
            full
        )
    }

    /// Number of mapped logical pages.
    pub fn mapped_pages(&self) -> u64 {
        self.valid.iter().map(|v| u64::from(*v)).sum()
    }

    /// Verifies the mapping, reverse map, per-block counts and pools agree.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        for (lpn, ppa) in self.l2p.iter().enumerate() {
            if *ppa == Ppa::NONE {
                continue;
            }
            if self.rmap[ppa.0 as usize] != lpn as u32 {
                return Err(format!(
                    "l2p[{lpn}] = {ppa} but the reverse map says {}",
                    self.rmap[ppa.0 as usize]
                ));
            }
            if self.page_flags(*ppa) & VALID == 0 {
                return Err(format!("lpn {lpn} maps to {ppa}, which is not VALID"));
            }
        }
        for b in 0..self.geo.blocks() {
            let block = BlockId(b);
            let m = &self.blocks[b as usize];
            let (mut live, mut valid) = (0u16, 0u16);
            for p in 0..self.geo.pages_per_block {
                let ppa = self.geo.ppa(block, p);
                let f = self.page_flags(ppa);
                if f & LIVE != 0 {
                    live += 1;
                }
                if f & VALID != 0 {
                    valid += 1;
                    let lpn = self.rmap[ppa.0 as usize];
                    if lpn == NO_LPN || self.l2p.get(lpn as usize) != Some(&ppa) {
                        return Err(format!("{ppa} VALID but not the mapping of its lpn {lpn}"));
                    }
                }
            }
            if live != self.live[b as usize] || valid != self.valid[b as usize] {
                return Err(format!(
                    "{block}: counts live={} valid={} but pages say live={live} valid={valid}",
                    self.live[b as usize], self.valid[b as usize]
                ));
            }
            if self.gcable[b as usize] != (m.state == BlockState::Full && m.eligible) {
                return Err(format!(
                    "{block}: GC-candidate flag out of step with {:?}",
                    m.state
                ));
            }
            let pu = self.geo.pu_of_block(block);
            let pooled = self.pus[pu.0 as usize].free.contains(block)
                || self.pus[pu.0 as usize]
                    .window
                    .iter()
                    .any(|(x, _)| *x == block);
            if pooled != (m.state == BlockState::Free) {
                return Err(format!("{block}: state {:?} but pooled={pooled}", m.state));
            }
            if self.owned.contains(&block) && m.state != BlockState::Meta {
                return Err(format!(
                    "{block} is owned by the protocol but {:?}",
                    m.state
                ));
            }
            if m.state == BlockState::Free && live != 0 {
                return Err(format!("{block} is free with {live} live pages"));
            }
        }
        for (pu, a) in self.pus.iter().enumerate() {
            let sum: u64 = self
                .geo
                .blocks_of_pu(PuId(pu as u32))
                .map(|b| u64::from(self.valid[b.0 as usize]))
                .sum();
            if sum != self.unit_valid[pu] {
                return Err(format!(
                    "pu {pu}: counts {} mapped pages but its blocks hold {sum}",
                    self.unit_valid[pu]
                ));
            }
            for (s, h) in a.heads.iter().enumerate() {
                if *h != u32::MAX {
                    let m = &self.blocks[*h as usize];
                    if m.state != BlockState::Open || m.stream as usize != s {
                        return Err(format!(
                            "pu {pu} stream {s} head block {h} is {:?}/{}",
                            m.state, m.stream
                        ));
                    }
                }
            }
        }
        let counted = self.count_units();
        if counted != self.units {
            return Err(format!(
                "unit facts out of step with the pools and blocks: kept {:?}, counted {:?}",
                self.units, counted
            ));
        }
        Ok(())
    }

    // ---------------------------------------------------------------- recovery support

    /// Resets all bookkeeping to "nothing live", ready for recovery to map and pin pages.
    pub(crate) fn clear_for_recovery(&mut self) {
        self.l2p.fill(Ppa::NONE);
        self.rmap.fill(NO_LPN);
        self.flags.clear_all();
        self.live.fill(0);
        self.valid.fill(0);
        self.gcable.fill(false);
        self.stamp.fill(0);
        self.erase_not_before.fill(SimTime::ZERO);
        for m in &mut self.blocks {
            *m = BlockMeta::new();
        }
        self.units = self.count_units();
    }

    /// Marks a page as programmed (recovery found it on the medium).
    pub(crate) fn mark_written(&mut self, ppa: Ppa) {
        let f = self.flags.get(ppa.0);
        self.flags.put(ppa.0, f | WRITTEN);
    }

    /// After recovery has mapped and pinned pages: blocks holding live pages are full, the
    /// rest are free but dirty: erased before reuse, since an interrupted erase may have left
    /// a block that reads as erased but cannot be programmed, and no read can tell.
    ///
    /// Partly written blocks that hold live pages are resumed where the scan found their
    /// first erased page (`tails`): up to one per parallel unit for GC and one for host
    /// writes, the emptiest first. Without this, a crash just after GC opened a unit's last
    /// free block would leave that unit with no block for GC to write into.
    pub(crate) fn finish_recovery(&mut self, tails: &[(BlockId, u32)]) {
        for b in 0..self.geo.blocks() {
            let block = BlockId(b);
            if self.live[b as usize] > 0 {
                self.blocks[b as usize].next_page = self.geo.pages_per_block as u16;
                self.set_state(block, BlockState::Full);
            } else {
                self.set_state(block, BlockState::Free);
            }
        }
        self.rebuild_pools(true);
        let mut tails: Vec<(BlockId, u32)> = tails
            .iter()
            .copied()
            .filter(|(b, next)| {
                self.blocks[b.0 as usize].state == BlockState::Full
                    && *next < self.data_pages_per_block
            })
            .collect();
        tails.sort_by_key(|(b, next)| (*next, b.0));
        for (b, next) in tails {
            let pu = self.geo.pu_of_block(b);
            let heads = &mut self.pus[pu.0 as usize].heads;
            let stream = if heads[Stream::GC.0 as usize] == u32::MAX {
                Stream::GC
            } else if heads[Stream::HOST.0 as usize] == u32::MAX {
                Stream::HOST
            } else {
                continue;
            };
            heads[stream.0 as usize] = b.0;
            let m = &mut self.blocks[b.0 as usize];
            m.stream = stream.0;
            m.next_page = next as u16;
            self.set_state(b, BlockState::Open);
        }
    }
}

/// Turns a page view into what a host read returns.
pub fn outcome_of(view: PageView<'_>) -> ReadOutcome {
    match view {
        PageView::Erased => ReadOutcome::Unmapped,
        PageView::Uncorrectable => ReadOutcome::Uncorrectable,
        PageView::Programmed { data, .. } => match data {
            media::image::DataRef::Tag { tag, .. } => ReadOutcome::Tag(tag),
            media::image::DataRef::Bytes(b) => ReadOutcome::Bytes(b.to_vec()),
        },
    }
}

/// The order in which round-robin striping visits parallel units.
fn stripe_order(g: &Geometry, s: Striping) -> Vec<PuId> {
    let mut pus: Vec<PuId> = (0..g.pus()).map(PuId).collect();
    if s == Striping::ChannelFirst {
        // Sort by (plane, die, chip, channel): consecutive picks change channel first.
        pus.sort_by_key(|pu| {
            let a = g.addr(g.first_page(g.blocks_of_pu(*pu).next().unwrap_or(BlockId(0))));
            (a.plane, a.die, a.chip, a.channel)
        });
    }
    pus
}

/// The widest OOB layout a protocol may define (bytes actually stored per page).
pub const MAX_OOB_BYTES: usize = 64;

/// An OOB buffer on the stack: programs happen millions of times a second.
#[derive(Clone, Copy)]
pub struct OobBuf {
    buf: [u8; MAX_OOB_BYTES],
    len: usize,
}

impl std::ops::Deref for OobBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}
impl std::ops::DerefMut for OobBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.buf[..self.len]
    }
}

impl OobBuf {
    /// A copy of `oob` (at most `MAX_OOB_BYTES`, which `DeviceConfig` enforces).
    pub fn copy_of(oob: &[u8]) -> OobBuf {
        let len = oob.len().min(MAX_OOB_BYTES);
        let mut b = OobBuf {
            buf: [0xFF; MAX_OOB_BYTES],
            len,
        };
        b.buf[..len].copy_from_slice(&oob[..len]);
        b
    }
}

/// An OOB buffer of the device's width with the kind byte set and the rest erased.
pub fn blank_oob(core: &FtlCore, page_kind: u8) -> OobBuf {
    let mut b = OobBuf {
        buf: [0xFF; MAX_OOB_BYTES],
        len: core.nand.image().oob_used().min(MAX_OOB_BYTES),
    };
    b.buf[0] = page_kind;
    b
}

/// Convenience for layouts: write a u32 field.
pub fn oob_u32(buf: &mut [u8], off: usize, v: u32) {
    oob::put_u32(buf, off, v);
}

/// Puts every block of a freshly formatted device (but the checkpoint root log's) in the
/// configured mode.
pub(crate) fn format_modes(core: &mut FtlCore) -> Result<()> {
    let mode = core.cfg.mlc_mode;
    if mode == crate::modes::MlcMode::Mlc {
        return Ok(());
    }
    let meta: Vec<media::BlockId> = core.ckpt.meta_blocks().to_vec();
    for b in 0..core.geo.blocks() {
        let block = media::BlockId(b);
        if meta.contains(&block) {
            continue;
        }
        core.nand
            .set_block_mode(block, mode.block_mode(), sim::SimTime::ZERO)?;
    }
    Ok(())
}

/// Recovery tie-break for GC duplicates (`none`): a GC copy carries the original's write
/// sequence and the original's delta area (one program, gc/mod.rs), so while both exist
/// they are equal or the copy has more records cleared (appends after the move). The copy
/// with fewer 1 bits in its delta area is the one to keep. 0 when the device has no delta
/// area.
pub(crate) fn tail_ones(core: &FtlCore, ppa: media::Ppa) -> u32 {
    match core.nand.image().view(ppa) {
        media::PageView::Programmed {
            data: media::image::DataRef::Tag { tail, .. },
            ..
        } => {
            let stored: u32 = tail.iter().map(|b| b.count_ones()).sum();
            // Bytes never stored read as 0xFF.
            let area = core.nand.image().params().append_bytes as usize;
            stored + 8 * area.saturating_sub(tail.len()) as u32
        }
        _ => 0,
    }
}
