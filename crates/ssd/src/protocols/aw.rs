//! `aw`: Atomic-Write (Ouyang et al., HPCA 2011; Park et al., ICCE 2005), the baseline of
//! LightTx §2.3 and §4.1: a log-structured FTL that appends each atomic group's pages, tags
//! the last page of the group, supports only strict isolation, and persists the mapping at
//! every commit.
//!
//! This file also holds the engine MHL-M (`mhl_m.rs`) runs on: "MHL-M is an extension to
//! Atomic-Write with multi-head logging" (§4.1) of the mappings. Everything below holds for
//! both; MHL-M's differences are in its file.
//! The open groups' bookkeeping (rows, held pages, transaction ids, log heads) is
//! `txtable.rs`, shared with LightTx's engine.
//!
//! # Operation
//!
//! Data pages are appended log-structured, striped over the parallel units (the host
//! stream). The latest page of the open atomic group is held in DRAM until the group's next
//! command, so that the last page can be tagged: another WRITE programs it with flag 0,
//! COMMIT with flag 1, ABORT drops it (AW tags "the last block in each atomic group ... with
//! flag 1 while leaving the others 0", §2.3). The group's LPN → PPN entries stay in DRAM
//! (pages pinned) until COMMIT. COMMIT then appends one *mapping record* with the group's
//! entries to the mapping log, after every data page of the group is durable, and is acked
//! when the record is: that is the per-commit mapping persistence of §2.3 ("the FTL mapping
//! table is written back to the flash device after each transaction commits"), one page per
//! transaction (more only past `entries_per_page` pages), counted in
//! `stats.map_persist_writes` (Fig. 19). A plain write is a one-page group: its page (flag 1)
//! then its record. ABORT discards the entries (§4.3: AW "discard[s] the dirty volatile
//! mapping table on aborts"). AW declares strict isolation only: a BEGIN while another
//! transaction is active is refused with `SsdError::Unsupported` (§2.3, §4.2).
//!
//! Mapping checkpoints (translation pages and a root, `meta.rs`) run every
//! `ftl.checkpoint_interval` host writes and when a log grows long; they bound the log
//! recovery reads.
//!
//! # GC (`protocol.aw_gc_move_records`)
//!
//! GC moves mapped pages like any FTL. A persisted mapping must never point at an erased
//! page, so a victim may be erased only once a durable record (or checkpoint) maps its moved
//! pages elsewhere. Two ways, by option:
//!
//! - **Carried moves (default, `false`).** LightTx's AW baseline writes mapping pages at
//!   commits only: Fig. 19 gives AW/MHL-M 3.70 % mapping-persistence writes, about one page
//!   per transaction of 27.2 pages (§4.1, §4.5), with nothing for GC. So GC writes no record:
//!   the victim's moved entries (lpn → copy) wait in DRAM and the emptied victim is kept
//!   un-erased (`FtlCore::defer_erase`, owned meanwhile, counted as free by GC's trigger).
//!   The next commit or plain-write record carries them (record kind 3: carried entries
//!   first, dropping any that the record's own entries or a later mapping superseded); the
//!   record waits for the copies and for every record issued before it, and the victims are
//!   erased after it is durable. A full checkpoint also covers them (its translation pages
//!   wait for every program issued before them, and hold the moved entries): the victims are
//!   erased once its root is durable. When the device runs short while victims wait — no
//!   unit has more than the one free block kept for GC, or a checkpoint's pages would not
//!   fit, checked before every command and every checkpoint — or GC finds its unit with no
//!   free block, the pending moves go out as a move record of their own (as below); so do
//!   they when GC collecting for the free-block reserve (below), which kept victims do not
//!   count towards, finds no other victim. A victim collected for the reserve is never
//!   kept. During recovery (until its checkpoint) GC always writes move records.
//! - **Move records (`true`; the earlier behaviour, kept as an option).** Before GC erases a victim it
//!   appends one *move record* with the victim's moved entries and the erase waits for it.
//!
//! # Log chains (`protocol.aw_log_chains`)
//!
//! AW's records go round-robin over `min(aw_log_chains, parallel units)` chains (default 8:
//! one per package of LightTx's Table 2 device, as §4.1 gives MHL its 8 log heads), so
//! successive records are programmed on different planes; every record carries one
//! device-wide sequence number, so the chains together are one logical log ("sequentially
//! appends the mappings", §2.3). 1 is a single serial chain.
//!
//! # Where the mapping log lives
//!
//! In blocks the protocol owns (`FtlCore::reserve_block`): taken out of the free pools, never
//! allocated to a stream, collected or scanned. The log is a chain: records fill a block
//! from page 0; a *link* page names the next block, reserved just before the link is
//! written, and the link waits until that block's plane has finished erasing it. A commit
//! links early, once its block has no more than 2 record pages left, so that GC's move
//! records (which cannot wait for free space: the victim's erase waits for them) find room;
//! GC links only when no log has room. Every log page waits for the previous page of its
//! chain to complete, so the chain is durable as a prefix. Each root's protocol state (blob) names
//! where every chain stood at the checkpoint; blocks wholly before that point go back to
//! the free pool once the root is durable. Write tracking is off
//! (`FtlCore::set_write_tracking(false)`): the root's scan set is empty, so recovery reads the
//! root, the translation pages and the log since the checkpoint: no data page at all.
//!
//! # Free-block reserve
//!
//! A device that refuses every write after a power cut has lost its user's service even if
//! no acked page was lost. So the engine declares a reserve (`FtlCore::set_reserve_blocks`):
//! one clean free block per chain and one more, beyond the block each unit keeps for GC to
//! copy into. `Device::maintain` restores it before every command (`gc::restore_reserve`:
//! GC where a block is cheapest to win, kept victims given back only if nothing else can be
//! collected) and recovery before it hands the device over; the crash checker asserts it
//! after every recovery.
//! Why it suffices, by what takes blocks:
//!
//! - *A command*: a host block and a link (or two on 4-page blocks, with an early link):
//!   taken with the reserve in place, so a unit with a block to spare exists; GC is never
//!   left without a destination (streams other than GC leave a unit's last block).
//! - *A crash during the command*: what it took is durable and needed by no recovery (a
//!   durable link is where its chain goes on, in place), or holds nothing live after the
//!   crash and is free again.
//! - *Victims kept for a carrier*: never counted in the reserve (after a crash a kept
//!   victim still holds the current copies, and its GC copies are garbage in full blocks),
//!   so a crash that leaves them takes nothing from it.
//! - *Recovery*: at most one fresh block per chain (`RecoveryCtx::take_unused_block`, in
//!   the unit with the most unused blocks) and the translation pages of the checkpoint it
//!   ends with (the extra block; GC first when they would not fit); the old log blocks
//!   come back once that checkpoint is durable, and GC restores the reserve after it.
//!
//! The blocks are those `check_reserve` already budgets out of the logical space (a
//! fresh block per chain, a GC block per unit, one for the translation pages), so the
//! exported capacity is unchanged. Found by a held-out seed campaign: without the reserve,
//! `commitlab crash --protocol aw --double --schedules 4096 --min-states 100000 --seed
//! 1000` left 150 of 100,803 recovered devices unable to write ("aw: no free block for the
//! mapping log"). The planted mutant `core-no-reserve` (never restored) is caught
//! (`crates/check/tests/reserve.rs`).
//!
//! # OOB layout of data pages (14 bytes, little-endian)
//!
//! ```text
//! [0]       page kind: 0x01 DATA
//! [1..5]    lpn, u32
//! [5..9]    TxID, u32 (device-internal; 0xFFFF_FFFF on a plain write)
//! [9]       group flag: 0x01 on the last page of an atomic group (and a plain write),
//!           0x00 on the others (AW §2.3)
//! [10..14]  index of the page within its group, u32
//! ```
//!
//! Recovery does not read data pages; the layout is what a scan-based recovery (AW's own)
//! would need, and what `commitlab` tools show.
//!
//! # Mapping-log pages (owned blocks)
//!
//! OOB (kind RECORD, 10 bytes used):
//!
//! ```text
//! [0]       page kind: 0x05 RECORD
//! [1..5]    chain, u32
//! [5..9]    log sequence number of the page, u32 (device-wide, increasing in issue order)
//! [9]       0x01 record part, 0x02 link
//! ```
//!
//! Data area (little-endian): `u32 magic 0x474F_4C4D ("MLOG"), u32 body length, u32 CRC-32
//! of the body`, then the body: `u32 chain, u32 sequence, u8 type`, then for a record part
//! `u8 kind (1 commit, 2 GC moves), u32 record id (sequence of its first part), u16 part, u16
//! parts, u32 TxID, u32 n, n × (u32 lpn, u32 page)`, for a link `u32 next block`. Kind 3
//! is a commit or plain-write record carrying GC moves (the carried entries first, then the
//! record's own; replayed like kind 1). (Lengths
//! come from the header because the medium may drop a page's trailing erased bytes.)
//!
//! Root blob: `u32 magic 0x3157_414D ("MAW1"), u32 next log sequence, u32 next TxID, u32
//! chains, chains × (u32 block, u32 page)` (where each chain's next page would go), `u32
//! continuations, continuations × (u32 chain, u32 block, u32 page)` (see "Crash during
//! recovery"; absent in older images: none).
//!
//! # Recovery
//!
//! The mapping table of the newest root; then each chain is read from its recorded position:
//! a page counts if it is readable, its CRC matches, it names this chain and its sequence is
//! at least the root's next sequence and above the previous page's (a block found still
//! holding an older life's log ends the chain); a link moves to the next block; the first
//! page that does not count ends the chain. Records complete in all their parts are replayed
//! in sequence order over the mapping. A chain goes on where it ended if that page reads
//! erased in a block known to be cleanly erased (one of its pages was accepted, or an
//! accepted link named it; after a torn page, at the next page) and at least 3 record pages
//! are left; otherwise in a freshly erased block of the unit with the most unused blocks
//! (`RecoveryCtx::take_unused_block`). Log blocks the chain left stay owned until the
//! checkpoint that ends recovery is durable.
//!
//! # Crash during recovery
//!
//! Until the checkpoint that ends recovery is durable, a second crash recovers from the same
//! root again. Recovery may have restarted a chain where reading from that root's positions
//! never arrives (a fresh block, or the page after a torn one, which ends a reading), and GC
//! run before the checkpoint (when the checkpoint has no room for its translation pages)
//! appends move records there and then erases their victims. So such a place is a
//! *continuation*: `after_recovery` writes a root whose blob holds the recovered-from root's
//! positions followed by `u32 n, n × (u32 chain, u32 block, u32 page)`, before anything is
//! appended there (the chains wait for that root). Recovery reads each chain from the root's
//! position and then from each of its continuations in order (a second interrupted recovery
//! adds its own after them). A checkpoint's blob has `n = 0`. Found by an adversarial test campaign
//! (a crash during recovery made the next recovery map pages GC had erased).
//!
//! # Why it is atomic and durable, case by case
//!
//! - *Crash before the record is durable*: the group's entries are in no durable mapping
//!   (translation pages only hold committed entries, and a checkpoint before the commit saw
//!   none of them), so none of it is visible.
//! - *Record durable*: every data page it names was durable before it was programmed
//!   (`ready` = the pages' ends). All entries are in one record, replayed whole or not at all
//!   (a multi-part record counts only with every part; a torn part reads uncorrectable).
//! - *Acked commit*: its record is durable and lies at or after the root's position of its
//!   chain (or the root is newer and its translation pages, which wait for every program
//!   issued before them, hold the entries).
//! - *Newest version*: records replay in sequence = issue order; a page superseded by a
//!   commit is not erased before that commit's record is durable (`map` with the ack as
//!   `durable_at`); a page moved by GC is not erased before the move record is durable.
//! - *GC with move records*: a move record waits for the copies and (with several chains)
//!   for every record issued before it, so a move never becomes durable ahead of the commit
//!   that made the moved page current; the victim's erase waits for the move record. Pages
//!   of the active group are pinned and followed when moved.
//! - *GC with carried moves*, by crash instant (the victim V, a moved page P → copy P',
//!   the carrier record R):
//!   - before R is durable: V is not erased (it is owned and its erase is issued only
//!     after R is, or after a checkpoint root is, durable), so every durable mapping that
//!     names P still reads P's data; P' is an unmapped page recovery ignores. Nothing
//!     acked is lost and nothing unacked appears (P holds the same committed data as P').
//!   - R durable, V's erase in flight, torn or done: R maps P → P', and P' was durable
//!     before R was programmed (R waits for the copies). R also waited for every record
//!     issued before it, so a record that superseded P (its entry dropped from R) is
//!     durable too, and replay in sequence order puts the newer mapping last. A move is
//!     never durable ahead of the commit that made P current (that commit's record was
//!     issued before R). So no durable mapping names V after replay.
//!   - R torn or partly durable (a multi-part R): R counts only complete, so as "before R is
//!     durable"; V's erase waits for R's last part.
//!   - R is the commit record of the transaction that owns the carrier: the transaction's
//!     own entries and the carried ones are in one record, all or nothing; a carried entry
//!     for a page the transaction rewrites is dropped (its own entry wins).
//!   - A checkpoint instead of R: its translation or journal pages wait for every program
//!     issued before them and hold the current mapping (P → P'), its root waits for them,
//!     V is erased only after the root is durable; a crash before leaves the previous
//!     root's view, in which V's pages are intact.
//!   - A second crash during recovery: recovery writes move records (never defers), as the
//!     "Crash during recovery" section requires.
//!   The checker catches the planted mutant `aw-carrier-not-awaited` (the victim erased at
//!   once, not after its carrier): docs/PROTOCOLS.md, "LightTx and its baselines".
//! - *Log blocks*: a block leaves a chain only after a durable root no longer needs it (its
//!   erase waits for the root); a link is programmed only after its block's erase completed,
//!   so a durable link never leads into stale data that could pass for new records, nor into
//!   a block a torn erase left unprogrammable; a block found still holding an older life's
//!   pages (sequence below the root's) ends the chain.

use crate::commit::{CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo, TxRef};
use crate::core::{blank_oob, FtlCore, Stream};
use crate::error::{Result, SsdError};
use crate::gc::FtlHooks;
use crate::oob::{kind, put_u32, Reader, Writer};
use crate::protocols::txtable::{self, Active, Written};
use crate::recovery::{OwnedPage, RecoveryCtx};
use media::{BlockId, Content, Ppa, PuId};
use sim::{Lpn, SimTime};
use std::collections::BTreeMap;

pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "aw",
    summary: "Atomic-Write: log-structured, last page of each atomic group flagged, mapping persisted at every commit; strict isolation",
    oob_bytes: DATA_OOB_BYTES,
    atomic: true,
    needs_checkpoints: true,
    supports_checkpoints: true,
    isolation: &[Isolation::Strict],
    supports_trim: false,
    create,
    recover,
};

pub(crate) const DATA_OOB_BYTES: u32 = 14;
const OFF_LPN: usize = 1;
const OFF_TXID: usize = 5;
const OFF_FLAG: usize = 9;
const OFF_IDX: usize = 10;
const NONE32: u32 = u32::MAX;
/// Record pages a chain's block keeps for GC move records before it links early.
const GC_SLOTS: u32 = 2;

const LOG_MAGIC: u32 = 0x474F_4C4D; // "MLOG"
const BLOB_MAGIC: u32 = 0x3157_414D; // "MAW1"
const PAGE_PART: u8 = 1;
const PAGE_LINK: u8 = 2;
const REC_COMMIT: u8 = 1;
const REC_MOVES: u8 = 2;
/// A commit (or plain-write) record that also carries GC moves (carried entries first).
const REC_COMMIT_MOVES: u8 = 3;
/// Record-part header: magic, length, CRC, chain, seq, type, kind, id, part, parts, txid, n.
const PART_HDR: usize = 4 + 4 + 4 + 4 + 4 + 1 + 1 + 4 + 2 + 2 + 4 + 4;

fn create(cfg: &ProtocolConfig, core: &mut FtlCore) -> Result<Box<dyn CommitProtocol>> {
    let opts = Opts::aw(cfg)?;
    Ok(Box::new(MapLog::create("aw", 1, opts, true, core)?))
}

fn recover(ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    let opts = Opts::aw(ctx.params)?;
    Ok(Box::new(MapLog::recover("aw", 1, opts, true, ctx)?))
}

/// The engine's options (`protocol.aw_log_chains`, `protocol.aw_gc_move_records`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opts {
    /// Mapping-log chains wanted (capped at the parallel units).
    pub chains: u32,
    /// A move record per GC victim that the victim's erase waits for (else moves are
    /// carried by the next record; see the module docs).
    pub move_records: bool,
}

impl Opts {
    fn aw(cfg: &ProtocolConfig) -> Result<Opts> {
        if cfg.aw_log_chains == 0 {
            return Err(SsdError::Config {
                key: "protocol.aw_log_chains".into(),
                reason: "must be at least 1".into(),
            });
        }
        Ok(Opts {
            chains: cfg.aw_log_chains,
            move_records: cfg.aw_gc_move_records,
        })
    }
}

fn corrupt(detail: String) -> SsdError {
    SsdError::CorruptImage { detail }
}

/// One mapping-log chain.
#[derive(Clone, Debug)]
struct Chain {
    /// The unit its blocks are reserved in (preferably).
    pu: PuId,
    /// Owned blocks still holding records a durable root may need, oldest first; the last
    /// one is being written.
    blocks: Vec<BlockId>,
    next_page: u32,
    /// End of the chain's latest page: the next page waits for it.
    ready: SimTime,
    /// Index in `blocks` of the block being written at the last checkpoint.
    ckpt_block: usize,
}

/// A root's next log sequence, next TxID and chain positions (block, page).
type RootHead = (u32, u32, Vec<(u32, u32)>);

/// The AW / MHL-M engine.
#[derive(Clone)]
pub(crate) struct MapLog {
    name: &'static str,
    /// AW: one transaction at a time.
    strict: bool,
    /// Per log head (MHL-M), the transaction holding it.
    head_owner: Vec<Option<u32>>,
    chains: Vec<Chain>,
    active: Active,
    next_txid: u32,
    next_seq: u32,
    /// Latest end of any mapping-log page: a move record waits for it.
    log_end_max: SimTime,
    /// Logical pages whose mapped page GC is copying out of the current victim.
    gc_moves: Vec<Lpn>,
    /// The unit GC is collecting while a move record is written.
    gc_pu: Option<PuId>,
    /// Old log blocks to give back once the next checkpoint is durable (after recovery).
    retired: Vec<BlockId>,
    plain_rr: usize,
    page_bytes: u32,
    ppb: u32,
    /// Most blocks a chain may hold before it asks for a checkpoint.
    chain_limit: usize,
    log_pages: u64,
    links: u64,
    move_records: u64,
    /// Move records per GC victim (`protocol.aw_gc_move_records`), else carried moves.
    move_records_on: bool,
    /// Set by recovery until the checkpoint that ends it: GC then writes move records
    /// whatever the option (see "Crash during recovery").
    recovering: bool,
    /// GC moves no durable record holds yet, (lpn, copy), in the order GC made them.
    pending_moves: Vec<(Lpn, Ppa)>,
    /// The victims those moves emptied, kept un-erased (`FtlCore::defer_erase`).
    pending_victims: Vec<BlockId>,
    /// When the copies of the pending moves are durable (and every record issued before
    /// the latest of them): a record carrying them waits for it.
    pending_ready: SimTime,
    /// Moved entries carried by commit / plain-write records, and victims whose erase was
    /// deferred to such a record (or a checkpoint).
    carried_moves: u64,
    deferred_victims: u64,
    /// Where chains went on after the recovered-from root's positions, in order (chain,
    /// block, page): a fresh block, or the page after a torn one. Named in every root until
    /// the next checkpoint (see the module docs, "Crash during recovery").
    cont: Vec<(u32, u32, u32)>,
    /// The recovered-from root's next sequence, next TxID and chain positions, while `cont`
    /// is in force; and whether this recovery added continuations not yet in a root.
    root_head: Option<RootHead>,
    cont_unrecorded: bool,
}

impl MapLog {
    fn blank(name: &'static str, heads: u32, opts: Opts, strict: bool, core: &FtlCore) -> MapLog {
        let pus = core.geo.pus();
        let heads = heads.max(1);
        let nchains = opts.chains.min(pus).max(1);
        MapLog {
            name,
            strict,
            head_owner: vec![None; heads as usize],
            chains: (0..nchains)
                .map(|c| Chain {
                    pu: PuId(c % pus),
                    blocks: Vec::new(),
                    next_page: 0,
                    ready: SimTime::ZERO,
                    ckpt_block: 0,
                })
                .collect(),
            active: BTreeMap::new(),
            next_txid: 0,
            next_seq: 1,
            log_end_max: SimTime::ZERO,
            gc_moves: Vec::new(),
            gc_pu: None,
            retired: Vec::new(),
            plain_rr: 0,
            page_bytes: core.geo.page_bytes,
            ppb: core.geo.pages_per_block,
            chain_limit: (core.geo.blocks_per_plane / 16).clamp(1, 16) as usize,
            log_pages: 0,
            links: 0,
            move_records: 0,
            move_records_on: opts.move_records,
            recovering: false,
            pending_moves: Vec::new(),
            pending_victims: Vec::new(),
            pending_ready: SimTime::ZERO,
            carried_moves: 0,
            deferred_victims: 0,
            cont: Vec::new(),
            root_head: None,
            cont_unrecorded: false,
        }
    }

    /// A fresh device: write tracking off, a block for every chain, and a checkpoint so that
    /// every root names the chains.
    pub(crate) fn create(
        name: &'static str,
        heads: u32,
        opts: Opts,
        strict: bool,
        core: &mut FtlCore,
    ) -> Result<MapLog> {
        if core.geo.pages_per_block < 2 {
            return Err(SsdError::Config {
                key: "nand.pages_per_block".into(),
                reason: format!("{name} needs at least 2 pages per block for its log links"),
            });
        }
        core.set_write_tracking(false);
        let mut m = MapLog::blank(name, heads, opts, strict, core);
        m.check_reserve(core)?;
        core.set_reserve_blocks(m.reserve_blocks());
        for c in 0..m.chains.len() {
            let (b, t) = m.reserve(core, m.chains[c].pu, SimTime::ZERO)?;
            let ch = &mut m.chains[c];
            ch.blocks.push(b);
            ch.ready = t;
        }
        crate::meta::checkpoint(core, &mut m, SimTime::ZERO)?;
        Ok(m)
    }

    /// Refuses a configuration whose spare blocks cannot hold the mapping log and what a
    /// recovery needs on top. Spare blocks are those the logical space
    /// leaves (blocks minus the root log minus the blocks the logical pages fill). They
    /// must hold the log in normal operation (each chain up to `chain_limit` + 1 blocks
    /// before it asks for a checkpoint) and, at recovery, a fresh block per chain, a free
    /// block per unit for GC to start in and a block for the translation pages of the
    /// checkpoint that ends recovery (the old log blocks stay owned until then).
    fn check_reserve(&self, core: &FtlCore) -> Result<()> {
        let g = &core.geo;
        let dp = core.data_pages_per_block();
        let data_blocks = core.logical_pages().div_ceil(dp);
        let spare = g
            .blocks()
            .saturating_sub(crate::meta::META_BLOCKS)
            .saturating_sub(data_blocks);
        let chains = self.chains.len() as u32;
        let need = chains * (self.chain_limit as u32 + 1) + chains + g.pus() + 1;
        if spare < need {
            return Err(SsdError::Config {
                key: "ftl.over_provisioning".into(),
                reason: format!(
                    "{} needs {need} spare blocks for its {chains} mapping-log chains and recovery, but the logical space leaves {spare}; raise over_provisioning or use fewer log heads",
                    self.name
                ),
            });
        }
        Ok(())
    }

    /// The free-block reserve (`FtlCore::set_reserve_blocks`): one block per chain and one
    /// for the translation pages of the checkpoint that ends a recovery, the blocks
    /// `check_reserve` budgets beyond each unit's GC block. In normal operation a chain's
    /// block is its next link (a link cannot wait for GC: a move record may need it while
    /// GC is emptying a victim); after a crash it is the fresh block recovery restarts the
    /// chain in when the chain cannot go on in place, and then the translation pages of
    /// the checkpoint recovery ends with must fit before the old log blocks come back. A
    /// command starts with the reserve in place (`Device::maintain`), and what one command
    /// takes from it (a host block, a link) is either durable, and then needed by no
    /// recovery (a durable link is where its chain goes on), or comes back as a free block
    /// after a crash.
    fn reserve_blocks(&self) -> u32 {
        self.chains.len() as u32 + 1
    }

    /// A block for a chain: in `pu` if it has one to spare, else in any unit that has; failing
    /// that, the last free block of a unit GC is not collecting right now (during GC a move
    /// record must be written before the victim can be erased, so it cannot wait).
    fn reserve(&self, core: &mut FtlCore, pu: PuId, now: SimTime) -> Result<(BlockId, SimTime)> {
        let n = core.geo.pus();
        for k in 0..n {
            let p = PuId((pu.0 + k) % n);
            if let Some(x) = core.reserve_block(p, 1, now)? {
                return Ok(x);
            }
        }
        for k in 0..n {
            let p = PuId((pu.0 + k) % n);
            // Only where GC can still copy without a new block (its open block has room).
            let gc_head = core.pus[p.0 as usize].heads[Stream::GC.0 as usize];
            let gc_room = gc_head != u32::MAX
                && u32::from(core.block(BlockId(gc_head)).next_page) + 1
                    < core.data_pages_per_block();
            if Some(p) == self.gc_pu || !gc_room {
                continue;
            }
            if let Some(x) = core.reserve_block(p, 0, now)? {
                return Ok(x);
            }
        }
        let units: Vec<String> = (0..n).map(|p| core.space_summary(PuId(p))).collect();
        Err(SsdError::OutOfSpace {
            detail: format!(
                "{}: no free block for the mapping log ({})",
                self.name,
                units.join("; ")
            ),
        })
    }

    fn entries_per_page(&self) -> usize {
        (self.page_bytes as usize).saturating_sub(PART_HDR) / 8
    }

    /// Programs one page of chain `c` after `ready` and the chain's previous page.
    fn log_page(
        &mut self,
        core: &mut FtlCore,
        c: usize,
        ty: u8,
        body: &[u8],
        seq: u32,
        ready: SimTime,
    ) -> Result<SimTime> {
        let ch = &self.chains[c];
        let block = *ch.blocks.last().ok_or_else(|| SsdError::OutOfSpace {
            detail: format!("internal: {} chain {c} has no block", self.name),
        })?;
        let ppa = core.geo.ppa(block, ch.next_page);
        let page = encode_log_page(c as u32, seq, ty, body);
        let mut oob = blank_oob(core, kind::RECORD);
        put_u32(&mut oob, 1, c as u32);
        put_u32(&mut oob, 5, seq);
        oob[9] = ty;
        let t = core.program_owned(ppa, Content::Bytes(page.into()), &oob, ready.max(ch.ready))?;
        let ch = &mut self.chains[c];
        ch.next_page += 1;
        ch.ready = t.end;
        self.log_end_max = self.log_end_max.max(t.end);
        self.log_pages += 1;
        core.stats.map_persist_writes += 1;
        Ok(t.end)
    }

    /// Appends a record (one or more parts) to chain `c`, each page after `ready`. Returns
    /// when the whole record is durable.
    fn append(
        &mut self,
        core: &mut FtlCore,
        c: usize,
        rec_kind: u8,
        txid: u32,
        entries: &[(Lpn, Ppa)],
        ready: SimTime,
    ) -> Result<SimTime> {
        let epp = self.entries_per_page().max(1);
        let parts = entries.len().div_ceil(epp).max(1);
        if parts > usize::from(u16::MAX) {
            return Err(SsdError::Unsupported {
                protocol: self.name,
                what: format!("write a mapping record of {} entries", entries.len()),
            });
        }
        let id = self.next_seq;
        let mut end = ready;
        for part in 0..parts {
            if self.chains[c].next_page + 1 >= self.ppb {
                self.link(core, c, ready)?;
            }
            let chunk =
                &entries[(part * epp).min(entries.len())..((part + 1) * epp).min(entries.len())];
            let mut w = Writer::default();
            w.u8(rec_kind)
                .u32(id)
                .u16(part as u16)
                .u16(parts as u16)
                .u32(txid)
                .u32(chunk.len() as u32);
            for (l, p) in chunk {
                w.u32(l.0).u32(p.0);
            }
            let seq = self.next_seq;
            self.next_seq = self.next_seq.wrapping_add(1);
            end = self.log_page(core, c, PAGE_PART, &w.0, seq, ready)?;
        }
        Ok(end)
    }

    /// Ends the chain's current block with a link to a freshly reserved, erased one.
    fn link(&mut self, core: &mut FtlCore, c: usize, now: SimTime) -> Result<()> {
        let (next, usable) = self.reserve(core, self.chains[c].pu, now)?;
        let mut w = Writer::default();
        w.u32(next.0);
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        // The link waits for the new block's erase: it must never point into old contents.
        self.log_page(core, c, PAGE_LINK, &w.0, seq, usable)?;
        let ch = &mut self.chains[c];
        ch.blocks.push(next);
        ch.next_page = 0;
        self.links += 1;
        Ok(())
    }

    /// Links a chain to its next block while GC is not running, once its block has no more
    /// than `GC_SLOTS` record pages left: GC's move records then rarely need a new block
    /// (when every unit is short of free blocks).
    fn link_early(&mut self, core: &mut FtlCore, c: usize, now: SimTime) -> Result<()> {
        if self.chains[c].next_page + 1 + GC_SLOTS >= self.ppb
            && self.chains[c].next_page + 1 < self.ppb
        {
            // Best effort: if no block is free now, the link happens when the block is full.
            if core.free_blocks(self.chains[c].pu) > 1
                || (0..core.geo.pus()).any(|p| core.free_blocks(PuId(p)) > 1)
            {
                self.link(core, c, now)?;
            }
        }
        Ok(())
    }

    /// The chain a transaction's record goes to: its head's (MHL-M), or, without heads
    /// (AW), the next chain in rotation.
    fn chain_for(&mut self, head: Option<usize>) -> usize {
        match head {
            Some(k) => k % self.chains.len(),
            None => self.next_rr(),
        }
    }

    fn next_rr(&mut self) -> usize {
        let c = self.plain_rr % self.chains.len();
        self.plain_rr = self.plain_rr.wrapping_add(1);
        c
    }

    /// Takes the pending GC moves for a record about to be issued that holds `own` (sorted
    /// by lpn; its own entries win): the moves still current (a move whose page was
    /// superseded since is dropped: the record that superseded it was issued earlier, and
    /// the carrier waits for every earlier record), the victims they emptied, and the
    /// instant the carrier must wait for (the copies, and every record issued so far).
    fn take_pending(
        &mut self,
        core: &FtlCore,
        own: &[(Lpn, Ppa)],
    ) -> (Vec<(Lpn, Ppa)>, Vec<BlockId>, SimTime) {
        if self.pending_victims.is_empty() {
            return (Vec::new(), Vec::new(), SimTime::ZERO);
        }
        let moves: Vec<(Lpn, Ppa)> = std::mem::take(&mut self.pending_moves)
            .into_iter()
            .filter(|(l, p)| core.lookup(*l) == Some(*p))
            .filter(|(l, _)| own.binary_search_by_key(l, |e| e.0).is_err())
            .collect();
        let victims = std::mem::take(&mut self.pending_victims);
        let ready = self.pending_ready.max(self.log_end_max);
        self.pending_ready = SimTime::ZERO;
        (moves, victims, ready)
    }

    /// Erases the victims a carrier (or move record, or checkpoint) durable at `at` covers.
    fn release_victims(core: &mut FtlCore, victims: Vec<BlockId>, at: SimTime) -> Result<()> {
        for v in victims {
            core.release_deferred(v, at)?;
        }
        Ok(())
    }

    /// A chain whose block has room, starting from the rotation, so that GC rarely needs a
    /// new log block.
    fn move_chain(&self) -> usize {
        let n = self.chains.len();
        let first = self.move_records as usize % n;
        (0..n)
            .map(|k| (first + k) % n)
            .find(|c| self.chains[*c].next_page + 1 < self.ppb)
            .unwrap_or(first)
    }

    /// Writes the pending moves as a move record of their own and erases their victims
    /// after it, when the device is too short of free blocks to wait for the next commit
    /// (no unit has more than the one free block GC keeps, or a checkpoint's translation
    /// pages would not fit): the host stream could not open a block, nor a log chain a link
    /// to one, nor a checkpoint its pages, while the victims hold theirs.
    fn relieve(&mut self, core: &mut FtlCore, now: SimTime) -> Result<()> {
        if self.pending_victims.is_empty()
            || ((0..core.geo.pus()).any(|p| core.free_blocks(PuId(p)) > 1)
                && crate::meta::checkpoint_fits(core))
        {
            return Ok(());
        }
        self.give_back(core, now)
    }

    /// Writes the pending moves as a move record of their own (none when every one was
    /// superseded) and erases their victims after it, whatever the free blocks.
    fn give_back(&mut self, core: &mut FtlCore, now: SimTime) -> Result<()> {
        if self.pending_victims.is_empty() {
            return Ok(());
        }
        let (moves, victims, ready) = self.take_pending(core, &[]);
        let at = if moves.is_empty() {
            ready.max(now)
        } else {
            let c = self.move_chain();
            let end = self.append(core, c, REC_MOVES, NONE32, &moves, ready.max(now))?;
            self.move_records += 1;
            end
        };
        Self::release_victims(core, victims, at)
    }

    fn blob(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u32(BLOB_MAGIC)
            .u32(self.next_seq)
            .u32(self.next_txid)
            .u32(self.chains.len() as u32);
        for ch in &self.chains {
            let b = ch.blocks.last().map_or(u32::MAX, |b| b.0);
            w.u32(b).u32(ch.next_page);
        }
        w.u32(0);
        w.0
    }

    /// The root blob while recovery's continuations are in force: the recovered-from root's
    /// positions, then the continuations.
    fn blob_with_continuations(&self) -> Option<Vec<u8>> {
        let (seq, txid, starts) = self.root_head.as_ref()?;
        let mut w = Writer::default();
        w.u32(BLOB_MAGIC)
            .u32(*seq)
            .u32(*txid)
            .u32(starts.len() as u32);
        for (b, p) in starts {
            w.u32(*b).u32(*p);
        }
        w.u32(self.cont.len() as u32);
        for (c, b, p) in &self.cont {
            w.u32(*c).u32(*b).u32(*p);
        }
        Some(w.0)
    }

    #[allow(clippy::too_many_arguments)]
    fn program_data(
        &mut self,
        core: &mut FtlCore,
        txid: u32,
        lpn: Lpn,
        tag: u64,
        last: bool,
        index: u32,
        ready: SimTime,
    ) -> Result<(Ppa, SimTime)> {
        let mut oob = blank_oob(core, kind::DATA);
        put_u32(&mut oob, OFF_LPN, lpn.0);
        put_u32(&mut oob, OFF_TXID, txid);
        oob[OFF_FLAG] = u8::from(last);
        put_u32(&mut oob, OFF_IDX, index);
        let (ppa, t) = core.program(Stream::HOST, None, Content::Tag(tag), &oob, ready)?;
        Ok((ppa, t.end))
    }

    /// Rebuilds the engine from a crash image (see the module docs, "Recovery").
    pub(crate) fn recover(
        name: &'static str,
        heads: u32,
        opts: Opts,
        strict: bool,
        ctx: &mut RecoveryCtx<'_>,
    ) -> Result<MapLog> {
        ctx.core.set_write_tracking(false);
        let lp = ctx.core.logical_pages();
        let pages_total = ctx.core.geo.pages();
        let blocks_total = ctx.core.geo.blocks();
        let mut m = MapLog::blank(name, heads, opts, strict, ctx.core);
        ctx.core.set_reserve_blocks(m.reserve_blocks());
        m.recovering = true;
        let mut l2p = vec![Ppa::NONE; lp as usize];
        let mut starts: Vec<(u32, u32)> = Vec::new();
        let (mut next_seq, mut next_txid) = (1u32, 0u32);
        let mut conts: Vec<(u32, u32, u32)> = Vec::new();
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
                let bad = || corrupt(format!("root {}: truncated {name} state", root.ckpt_seq));
                next_seq = r.u32().ok_or_else(bad)?;
                next_txid = r.u32().ok_or_else(bad)?;
                let n = r.u32().ok_or_else(bad)?;
                if n as usize != m.chains.len() {
                    return Err(corrupt(format!(
                        "root {}: {n} mapping-log chains, this configuration has {}",
                        root.ckpt_seq,
                        m.chains.len()
                    )));
                }
                for _ in 0..n {
                    let b = r.u32().ok_or_else(bad)?;
                    let p = r.u32().ok_or_else(bad)?;
                    starts.push((b, p));
                }
                // Continuations written by an interrupted recovery (absent in images made
                // before they existed: none).
                let nc = r.u32().unwrap_or(0);
                if nc > blocks_total.saturating_mul(2) {
                    return Err(corrupt(format!(
                        "root {}: {nc} mapping-log continuations",
                        root.ckpt_seq
                    )));
                }
                for _ in 0..nc {
                    let c = r.u32().ok_or_else(bad)?;
                    let b = r.u32().ok_or_else(bad)?;
                    let p = r.u32().ok_or_else(bad)?;
                    conts.push((c, b, p));
                }
            }
        }
        let root_head = ctx
            .root
            .as_ref()
            .map(|_| (next_seq, next_txid, starts.clone()));
        if l2p.len() != lp as usize {
            return Err(corrupt("root mapping has the wrong length".into()));
        }
        // Read every chain from where the root left it.
        let mut parts: Vec<RecordPart> = Vec::new();
        let mut max_seq = next_seq.wrapping_sub(1);
        let mut claimed: Vec<BlockId> = Vec::new();
        let ppb = ctx.core.geo.pages_per_block;
        let mut resume: Vec<Option<(BlockId, u32, bool)>> = vec![None; m.chains.len()];
        for (c, &(b0, p0)) in starts.iter().enumerate() {
            if b0 == u32::MAX || b0 >= blocks_total || p0 >= ppb {
                continue;
            }
            let got = read_chain(ctx, c as u32, BlockId(b0), p0, next_seq, false)?;
            max_seq = max_seq.max(got.max_seq);
            next_txid = next_txid.max(got.next_txid);
            parts.extend(got.parts);
            resume[c] = got.resume;
            claimed.extend(got.blocks);
            // Where an interrupted recovery went on, in order; the last read decides where
            // this one goes on.
            for &(cc, b, p) in conts.iter().filter(|x| x.0 == c as u32) {
                if b >= blocks_total || p >= ppb {
                    return Err(corrupt(format!(
                        "mapping-log continuation ({cc}, {b}, {p}) outside the device"
                    )));
                }
                let got = read_chain(ctx, c as u32, BlockId(b), p, next_seq, true)?;
                max_seq = max_seq.max(got.max_seq);
                next_txid = next_txid.max(got.next_txid);
                parts.extend(got.parts);
                resume[c] = got.resume;
                claimed.extend(got.blocks);
            }
        }
        // Complete records, replayed in sequence (= issue) order.
        let mut by_id: BTreeMap<u32, Vec<RecordPart>> = BTreeMap::new();
        for p in parts {
            by_id.entry(p.1).or_default().push(p);
        }
        for (id, mut ps) in by_id {
            ps.sort_by_key(|p| p.2);
            let n = ps[0].3 as usize;
            let complete = ps.len() == n && ps.iter().enumerate().all(|(i, p)| p.2 as usize == i);
            if !complete {
                continue;
            }
            for (_, _, _, _, es) in ps {
                for (l, p) in es {
                    if l >= lp || p >= pages_total {
                        return Err(corrupt(format!(
                            "mapping record {id} maps lpn {l} to page {p}, outside the device"
                        )));
                    }
                    l2p[l as usize] = Ppa(p);
                }
            }
        }
        for (lpn, ppa) in l2p.iter().enumerate() {
            if *ppa != Ppa::NONE {
                ctx.map(Lpn(lpn as u32), *ppa)?;
            }
        }
        // Each chain goes on where it ended if that page is known to be clean, else in a
        // fresh block; the rest of the old log stays until the checkpoint recovery ends with
        // is durable.
        for b in &claimed {
            ctx.claim_block(*b);
        }
        for (c, res) in resume.iter().enumerate() {
            // Go on in the old block if it leaves GC room for move records, or, when free
            // blocks are scarce, if it has room for a record and a link: a fresh block could
            // take the last block GC needs to start (on 4-page blocks, where
            // no block is ever roomy, recovery ran out of space).
            let scarce = (0..ctx.core.geo.pus()).all(|p| ctx.unused_blocks(media::PuId(p)) <= 1);
            let roomy = |p: u32| p + 1 + GC_SLOTS < ppb || (scarce && p + 1 < ppb);
            let (b, page, t) = match *res {
                Some((b, page, in_place)) if roomy(page) => {
                    if !in_place {
                        conts.push((c as u32, b.0, page));
                        m.cont_unrecorded = true;
                    }
                    (b, page, ctx.ready)
                }
                _ => {
                    let (b, t) =
                        ctx.take_unused_block(None)?
                            .ok_or_else(|| SsdError::OutOfSpace {
                                detail: format!("{name}: no block to restart the mapping log in"),
                            })?;
                    conts.push((c as u32, b.0, 0));
                    m.cont_unrecorded = true;
                    (b, 0, t)
                }
            };
            claimed.retain(|x| *x != b);
            let ch = &mut m.chains[c];
            ch.blocks = vec![b];
            ch.next_page = page;
            ch.ready = t;
            ch.ckpt_block = 0;
        }
        m.retired = claimed;
        if root_head.is_some() {
            m.cont = conts;
            m.root_head = root_head;
        } else {
            m.cont_unrecorded = false;
        }
        m.next_seq = max_seq.wrapping_add(1).max(next_seq);
        m.next_txid = next_txid;
        Ok(m)
    }
}

/// A mapping-log page's data area: magic, body length, CRC-32 of the body, body (chain,
/// sequence, type, then `rest`).
fn encode_log_page(chain: u32, seq: u32, ty: u8, rest: &[u8]) -> Vec<u8> {
    let mut inner = Writer::default();
    inner.u32(chain).u32(seq).u8(ty).bytes(rest);
    let mut w = Writer::default();
    w.u32(LOG_MAGIC)
        .u32(inner.0.len() as u32)
        .u32(sim::crc::crc32(&inner.0))
        .bytes(&inner.0);
    w.0
}

/// Decodes a mapping-log page: (chain, sequence, type, rest), or `None` if it is not one or
/// its CRC does not match. Lengths come from the header, not from what the medium returned:
/// it may drop a page's trailing erased (0xFF) bytes.
fn decode_log_page(bytes: &[u8], page_bytes: u32) -> Option<(u32, u32, u8, Vec<u8>)> {
    let mut h = Reader::new(bytes);
    let (magic, len, crc) = (h.u32()?, h.u32()?, h.u32()?);
    if magic != LOG_MAGIC || len as usize > page_bytes as usize || len < 9 {
        return None;
    }
    let body = h.bytes(len as usize);
    if sim::crc::crc32(&body) != crc {
        return None;
    }
    let mut r = Reader::new(&body);
    let (chain, seq, ty) = (r.u32()?, r.u32()?, r.u8()?);
    Some((chain, seq, ty, body[9..].to_vec()))
}

/// What reading one mapping-log chain found.
struct ChainRead {
    parts: Vec<RecordPart>,
    max_seq: u32,
    next_txid: u32,
    /// Blocks the chain passed through, in order.
    blocks: Vec<BlockId>,
    /// Where the chain can go on: in its last block, at a page known to be erased in a block
    /// known to be cleanly erased (a page of it was programmed, or an accepted link names it).
    /// The flag says whether that is where reading stopped (an erased page): a second
    /// reading from the same start then reaches what is written there; after a torn page
    /// it does not (reading stops at the torn page), so the place is a continuation.
    resume: Option<(BlockId, u32, bool)>,
}

/// (kind, record id, part, parts, entries).
type RecordPart = (u8, u32, u16, u16, Vec<(u32, u32)>);

/// Reads chain `c` from `(block, page)` (see the module docs, "Recovery").
fn read_chain(
    ctx: &mut RecoveryCtx<'_>,
    c: u32,
    block0: BlockId,
    page0: u32,
    next_seq: u32,
    known_clean: bool,
) -> Result<ChainRead> {
    let g = ctx.core.geo.clone();
    let ppb = g.pages_per_block;
    let blocks_total = g.blocks();
    let mut out = ChainRead {
        parts: Vec::new(),
        max_seq: 0,
        next_txid: 0,
        blocks: vec![block0],
        resume: None,
    };
    let (mut block, mut page) = (block0, page0);
    // Pages below the root's position were programmed before the root: the erase is done.
    // So is a continuation's block: recovery erased it before the root naming it.
    let mut clean = page0 > 0 || known_clean;
    let mut min_seq = next_seq;
    let mut budget = g.pages();
    // Whether the page the chain stopped at reads erased.
    let mut stop_erased = false;
    while page < ppb && budget > 0 {
        budget -= 1;
        let page_read = ctx.read_page(g.ppa(block, page))?;
        let (bytes, oob) = match page_read {
            OwnedPage::Bytes { bytes, oob } => (bytes, oob),
            OwnedPage::Erased => {
                stop_erased = true;
                break;
            }
            _ => break,
        };
        if oob.first() != Some(&kind::RECORD) {
            break;
        }
        let Some((chain, seq, ty, body)) = decode_log_page(&bytes, g.page_bytes) else {
            break;
        };
        let mut r = Reader::new(&body);
        if chain != c || seq < min_seq {
            break;
        }
        min_seq = seq.saturating_add(1);
        out.max_seq = out.max_seq.max(seq);
        match ty {
            PAGE_LINK => {
                let next = r.u32().unwrap_or(u32::MAX);
                if next >= blocks_total || out.blocks.contains(&BlockId(next)) {
                    break;
                }
                block = BlockId(next);
                page = 0;
                out.blocks.push(block);
                // The link was programmed only after its successor's erase completed.
                clean = true;
            }
            PAGE_PART => {
                let (Some(k), Some(id), Some(part), Some(nparts), Some(txid), Some(n)) =
                    (r.u8(), r.u32(), r.u16(), r.u16(), r.u32(), r.u32())
                else {
                    break;
                };
                if n as usize > body.len() / 8 {
                    break;
                }
                let mut es = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    let l = r.u32().unwrap_or(u32::MAX);
                    let p = r.u32().unwrap_or(u32::MAX);
                    es.push((l, p));
                }
                if txid != NONE32 {
                    out.next_txid = out.next_txid.max(txid.wrapping_add(1));
                }
                out.parts.push((k, id, part, nparts, es));
                clean = true;
                page += 1;
            }
            _ => break,
        }
    }
    if clean && page < ppb {
        if stop_erased {
            out.resume = Some((block, page, true));
        } else if page + 1 < ppb {
            // A torn (or otherwise unusable) page: nothing after it was programmed, so the
            // next one should read erased.
            if matches!(ctx.read_page(g.ppa(block, page + 1))?, OwnedPage::Erased) {
                out.resume = Some((block, page + 1, false));
            }
        }
    }
    Ok(out)
}

impl FtlHooks for MapLog {
    fn migrate_oob(&mut self, core: &FtlCore, from: Ppa, _oob: &mut [u8]) {
        if let Some(lpn) = core.reverse(from) {
            self.gc_moves.push(lpn);
        }
    }

    fn on_moved(&mut self, core: &mut FtlCore, from: Ppa, to: Ppa) {
        let end = core.program_end_max;
        for g in self.active.values_mut() {
            for w in g.pages.iter_mut().filter(|w| w.ppa == from) {
                w.ppa = to;
                w.end = w.end.max(end);
            }
        }
    }

    fn before_erase(
        &mut self,
        core: &mut FtlCore,
        block: BlockId,
        ready: SimTime,
    ) -> Result<SimTime> {
        if self.gc_moves.is_empty() {
            return Ok(ready);
        }
        let moves: Vec<(Lpn, Ppa)> = std::mem::take(&mut self.gc_moves)
            .into_iter()
            .filter_map(|l| core.lookup(l).map(|p| (l, p)))
            .filter(|(_, p)| core.geo.block_of(*p) != block)
            .collect();
        if moves.is_empty() {
            return Ok(ready);
        }
        let pu = core.geo.pu_of_block(block);
        // Without move records (the default): keep the victim un-erased and let the next
        // commit or plain-write record carry its moves (module docs, "GC"), while its unit
        // keeps a free block for GC to go on with. During recovery, and when the unit is
        // out of free blocks, a move record as below.
        // A victim GC collects for the free-block reserve (`gc::restore_reserve`) is not
        // kept: it would win no block.
        if !self.move_records_on
            && !self.recovering
            && core.free_blocks(pu) >= 1
            && !core.collecting_for_reserve()
        {
            self.pending_moves.extend(moves);
            self.pending_ready = self.pending_ready.max(ready).max(self.log_end_max);
            self.pending_victims.push(block);
            self.deferred_victims += 1;
            core.defer_erase(block);
            #[cfg(feature = "mutants")]
            if crate::mutant::on("aw-carrier-not-awaited") {
                // Planted bug: the victim is erased at once, not after the carrier.
                self.pending_victims.pop();
                core.release_deferred(block, ready)?;
            }
            return Ok(ready);
        }
        // A move record: this victim's moves, and any pending ones (their victims are
        // erased after it too). After the copies, and after every record issued so far: a
        // move must not become durable ahead of the commit that made the moved page current.
        // GC for the reserve leaves the pending moves to their carrier: its record holds its
        // own victim's moves only (a pending move this victim superseded is dropped when
        // the carrier is written, `take_pending`, as the record that superseded it comes
        // first in the log).
        let (mut all, victims, pready) = if core.collecting_for_reserve() {
            (Vec::new(), Vec::new(), SimTime::ZERO)
        } else {
            self.take_pending(core, &[])
        };
        all.extend(moves);
        let c = self.move_chain();
        self.gc_pu = Some(pu);
        let end = self.append(
            core,
            c,
            REC_MOVES,
            NONE32,
            &all,
            ready.max(self.log_end_max).max(pready),
        );
        self.gc_pu = None;
        let end = end?;
        self.move_records += 1;
        Self::release_victims(core, victims, end)?;
        Ok(ready.max(end))
    }

    fn before_checkpoint(&mut self, core: &mut FtlCore, now: SimTime) -> Result<()> {
        self.relieve(core, now)
    }

    /// The reserve is short and GC finds no other victim to collect for it: the victims
    /// kept for a carrier go back now (a move record), so that they count as free blocks.
    fn before_reserve(&mut self, core: &mut FtlCore, now: SimTime) -> Result<()> {
        self.give_back(core, now)
    }

    fn checkpoint_blob(&mut self, _core: &FtlCore) -> Vec<u8> {
        for ch in &mut self.chains {
            ch.ckpt_block = ch.blocks.len().saturating_sub(1);
        }
        self.recovering = false;
        // A checkpoint's root names where every chain stands now: no continuation needed.
        self.cont.clear();
        self.root_head = None;
        self.cont_unrecorded = false;
        self.blob()
    }

    /// Log blocks wholly before the root's positions are no longer needed once it is durable.
    fn on_checkpoint_durable(&mut self, core: &mut FtlCore, at: SimTime) {
        // The checkpoint's translation (or journal) pages hold every pending move: they
        // wait for every program issued before them, copies and records included, and the
        // root for them. So the victims kept for a carrier can go now.
        self.pending_moves.clear();
        self.pending_ready = SimTime::ZERO;
        for v in std::mem::take(&mut self.pending_victims) {
            // A failed erase (a worn block) leaves it out of circulation, as below.
            let _ = core.release_deferred(v, at);
        }
        let mut old: Vec<BlockId> = std::mem::take(&mut self.retired);
        for ch in &mut self.chains {
            let k = ch.ckpt_block.min(ch.blocks.len().saturating_sub(1));
            old.extend(ch.blocks.drain(..k));
            ch.ckpt_block = 0;
        }
        for b in old {
            if core.is_owned(b) && core.release_block(b, at).is_err() {
                // The erase failed (a worn block): it stays out of circulation.
                continue;
            }
        }
    }

    fn wants_checkpoint(&mut self, _core: &FtlCore, _now: SimTime) -> bool {
        self.chains
            .iter()
            .any(|c| c.blocks.len() > self.chain_limit)
    }
}

impl CommitProtocol for MapLog {
    fn name(&self) -> &'static str {
        self.name
    }

    /// After recovery restarted a chain somewhere a reading from the root's positions does
    /// not reach (a fresh block, the page after a torn one), a root naming those
    /// continuations is written before anything is appended there: GC that recovery runs
    /// before its checkpoint appends move records and then erases their victims, and a
    /// crash before the checkpoint must still find those records.
    fn after_recovery(&mut self, core: &mut FtlCore, now: SimTime) -> Result<SimTime> {
        if !self.cont_unrecorded {
            return Ok(now);
        }
        let Some(blob) = self.blob_with_continuations() else {
            return Ok(now);
        };
        core.ckpt.proto_blob = blob;
        let ready = self.chains.iter().map(|c| c.ready).fold(now, SimTime::max);
        let end = crate::meta::write_root(core, ready)?;
        for ch in &mut self.chains {
            ch.ready = ch.ready.max(end);
        }
        self.log_end_max = self.log_end_max.max(end);
        self.cont_unrecorded = false;
        Ok(end)
    }

    fn begin(&mut self, _core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        if self.strict && !self.active.is_empty() {
            return Err(SsdError::Unsupported {
                protocol: self.name,
                what: "run a second transaction while one is active (strict isolation only)".into(),
            });
        }
        let head = if self.strict {
            None
        } else {
            let pick = self.head_owner.iter().position(Option::is_none);
            Some(txtable::claim_head(
                &mut self.head_owner,
                pick,
                self.name,
                tx.seq,
            )?)
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
        if !self.active.contains_key(&tx.seq) {
            return Err(SsdError::UnknownTx { tx: tx.host });
        }
        self.relieve(core, now)?;
        let Some(g) = self.active.get(&tx.seq) else {
            return Err(SsdError::UnknownTx { tx: tx.host });
        };
        let (txid, _, held, index) = g.next();
        if let Some((hl, ht)) = held {
            let (ppa, end) = self.program_data(core, txid, hl, ht, false, index, now)?;
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
        if !self.active.contains_key(&tx.seq) {
            return Ok(now);
        }
        self.relieve(core, now)?;
        let Some(g) = self.active.get(&tx.seq) else {
            return Ok(now);
        };
        let (txid, _, held, index) = g.next();
        if let Some((hl, ht)) = held {
            let (ppa, end) = self.program_data(core, txid, hl, ht, true, index, now)?;
            core.pin(ppa);
            txtable::programmed(
                &mut self.active,
                tx.seq,
                Written { lpn: hl, ppa, end },
                true,
            );
        }
        let Some(g) = self.active.get(&tx.seq) else {
            return Ok(now);
        };
        if g.pages.is_empty() {
            let head = g.head;
            self.active.remove(&tx.seq);
            txtable::release_head(&mut self.head_owner, head);
            return Ok(now);
        }
        let ready = g.durable_at(now);
        #[cfg(feature = "mutants")]
        let ready = if crate::mutant::on("aw-commit-early") {
            now
        } else {
            ready
        };
        let entries: Vec<(Lpn, Ppa)> = g.last_writes().into_iter().collect();
        let head = g.head;
        let c = self.chain_for(head);
        // Pending GC moves ride on this record (module docs, "GC"): carried entries first.
        let (mut record, victims, pready) = self.take_pending(core, &entries);
        let kind = if victims.is_empty() {
            REC_COMMIT
        } else {
            self.carried_moves += record.len() as u64;
            REC_COMMIT_MOVES
        };
        let ready = ready.max(pready);
        record.extend_from_slice(&entries);
        let ack = self.append(core, c, kind, txid, &record, ready)?;
        Self::release_victims(core, victims, ack)?;
        self.link_early(core, c, now)?;
        let Some(g) = self.active.remove(&tx.seq) else {
            return Ok(ack);
        };
        for (lpn, ppa) in &entries {
            core.map(*lpn, *ppa, ack);
        }
        g.unpin_all(core, ack);
        txtable::release_head(&mut self.head_owner, g.head);
        Ok(ack)
    }

    fn abort(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        if let Some(g) = self.active.remove(&tx.seq) {
            g.unpin_all(core, now);
            txtable::release_head(&mut self.head_owner, g.head);
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
        self.relieve(core, now)?;
        let ready = core.host_transfer_done(now);
        let (ppa, end) = self.program_data(core, NONE32, lpn, tag, true, 0, ready)?;
        // The page is not live until mapped: pin it while its record is written.
        core.pin(ppa);
        let c = self.next_rr();
        let own = [(lpn, ppa)];
        let (mut record, victims, pready) = self.take_pending(core, &own);
        let kind = if victims.is_empty() {
            REC_COMMIT
        } else {
            self.carried_moves += record.len() as u64;
            REC_COMMIT_MOVES
        };
        record.extend_from_slice(&own);
        let ack = self.append(core, c, kind, NONE32, &record, end.max(pready))?;
        Self::release_victims(core, victims, ack)?;
        self.link_early(core, c, now)?;
        core.map(lpn, ppa, ack);
        core.unpin(ppa, ack);
        Ok(ack)
    }

    fn dram_bytes(&self) -> Vec<(&'static str, u64)> {
        let entries: u64 = self.active.values().map(|g| g.pages.len() as u64).sum();
        let held = self.active.values().filter(|g| g.held.is_some()).count() as u64;
        let table = if self.strict {
            "atomic group"
        } else {
            "active TxTable"
        };
        let mut v = vec![
            (table, self.active.len() as u64 * 16 + entries * 8),
            ("held last pages", held * u64::from(self.page_bytes)),
            (
                "mapping-log chains",
                self.chains
                    .iter()
                    .map(|c| 16 + 4 * c.blocks.len() as u64)
                    .sum(),
            ),
        ];
        if !self.strict {
            v.push(("log heads", self.head_owner.len() as u64 * 8));
        }
        v.push((
            "pending GC moves",
            self.pending_moves.len() as u64 * 8 + self.pending_victims.len() as u64 * 4,
        ));
        v
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let live: u64 = self
            .chains
            .iter()
            .map(|c| {
                (c.blocks.len().saturating_sub(1) as u64) * u64::from(self.ppb)
                    + u64::from(c.next_page)
            })
            .sum();
        vec![
            ("mapping_log_pages", self.log_pages),
            ("mapping_log_links", self.links),
            ("gc_move_records", self.move_records),
            ("gc_moves_carried", self.carried_moves),
            ("gc_victims_deferred", self.deferred_victims),
            ("live_record_pages", live),
        ]
    }

    fn check_invariants(&self, core: &FtlCore) -> std::result::Result<(), String> {
        for (seq, g) in &self.active {
            for w in &g.pages {
                if core.page_flags(w.ppa) & crate::core::PIN_PROTO == 0 {
                    return Err(format!("tx {seq}: page {} is not pinned", w.ppa));
                }
            }
        }
        for (c, ch) in self.chains.iter().enumerate() {
            for b in &ch.blocks {
                if !core.is_owned(*b) {
                    return Err(format!("mapping-log chain {c}: {b} is not owned"));
                }
            }
        }
        for b in &self.pending_victims {
            if !core.is_owned(*b) || core.live(*b) != 0 {
                return Err(format!(
                    "GC victim {b} kept for a carrier is not owned or holds live pages"
                ));
            }
            if self.chains.iter().any(|c| c.blocks.contains(b)) {
                return Err(format!("GC victim {b} is also a mapping-log block"));
            }
        }
        let deferred: u32 = (0..core.geo.pus())
            .map(|p| core.deferred_blocks(PuId(p)))
            .sum();
        if deferred as usize != self.pending_victims.len() {
            return Err(format!(
                "{} victims kept for a carrier, the FTL counts {deferred}",
                self.pending_victims.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_pages_decode_even_when_the_medium_drops_trailing_erased_bytes() {
        // Found by the crash checker (aw, seed 1, exhaustive state 2892): a page whose CRC
        // ended in 0xFF came back one byte short and the chain ended there, losing an acked
        // plain write. Lengths now come from the header.
        for seq in 0..2_000u32 {
            let rest = [1u8, 2, 3, 0xFF, 0xFF];
            let page = encode_log_page(3, seq, PAGE_PART, &rest);
            let mut trimmed = page.clone();
            while trimmed.last() == Some(&0xFF) {
                trimmed.pop();
            }
            assert_eq!(
                decode_log_page(&trimmed, 512),
                Some((3, seq, PAGE_PART, rest.to_vec())),
                "seq {seq}"
            );
        }
    }

    #[test]
    fn damaged_log_pages_do_not_decode() {
        let mut page = encode_log_page(0, 7, PAGE_LINK, &9u32.to_le_bytes());
        assert!(decode_log_page(&page, 512).is_some());
        page[14] ^= 1;
        assert_eq!(decode_log_page(&page, 512), None);
        assert_eq!(decode_log_page(&[0xFF; 64], 512), None, "an erased page");
        let mut long = encode_log_page(0, 7, PAGE_LINK, &[]);
        long[4] = 0xFF; // a length beyond the page
        assert_eq!(decode_log_page(&long, 512), None);
    }
}
