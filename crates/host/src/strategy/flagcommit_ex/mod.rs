//! `cfc-ex` / `afc-ex` (and `flagcommit-ex`, the name of `cfc-ex` kept for existing
//! configurations): Flag Commit §4 — CFC_ex and AFC_ex. No-force buffer management with a
//! redo-only log (§4.1), record-level locking with *pending records* carrying
//! ⟨RID, Link, XID, CommitFlag⟩ in the flash page (§4.2, Fig. 10), commit flags reprogrammed
//! in place by a partial program (§3.1 CFC: one bit, FALSE→TRUE; §3.2 AFC: two bits), at
//! most `host.max_c` transactions with pending records per page and **blocking** beyond it
//! (Algorithm 1), several physical versions per logical page linked by *Back* and merged
//! (§4.3), the §4.3 reclaim rules with the CFC/AFC flag moves (§3.1.2, §3.2), fuzzy
//! checkpoints and recovery per Algorithm 3. Runs over the plain FTL (`none`); the flags are
//! programmed with `Device::write_delta` into the *record area* at the end of each flash
//! page (`nand.append_bytes`), which a page program leaves erased.
//!
//! Roles: this file (tables and normal processing: update, admission, commit, abort),
//! `versions.rs` (writing a page version, flags, the reclaim rules), `checkpoint.rs`
//! (fuzzy checkpoints, §4.3), `recovery.rs` (Algorithm 3).
//!
//! # Why not the device protocols `cfc` / `afc`
//! They commit device transactions of whole pages; §4.2 needs one flag per (page version,
//! transaction) — several transactions' pending records share one flash page. The host owns
//! that metadata, as the paper's DBMS does, and sets flags with the plain FTL's partial-program
//! command. The FTL's own GC moves a page with its record area (`ssd/src/delta.rs`), so a
//! physical *version* here is a logical version slot that the FTL may relocate: Link and Back
//! name version slots (page, slot, version number), which survive relocation (§3.1.2's
//! broken-chain repair is not needed).
//!
//! # On-device layout
//!
//! ```text
//! lpn 0 .. D-1        version slot 0 of DB page p, part k at p*parts + k   (D = pages*parts)
//! lpn D               master: the checkpoint's first log page B
//! lpn D+1 .. D+L      redo log, circular (as in wal.rs): log page s at D+1 + (s mod L)
//! lpn D+1+L ..        version slots 1..V-1: page p, slot v, part k at
//!                     D+1+L + ((p*(V-1) + v-1)*parts + k)                  (V = VERSIONS)
//! ```
//!
//! One page *version* is `parts` flash pages. Each part's data area holds (little-endian;
//! the tag model stores the fields, `VersionTag`):
//!
//! ```text
//! [0..8] page  [8] slot  [9..17] version number  [17] back slot (0xFF: none)  [18..26] back vno
//! [26] n nodes, then per node i: XID u64, Link (page u64, slot u8, vno u64), init u8
//! then per DB slot of this part: present u8, committed value + usn (u64, u64),
//!      has-pending u8, node index u8, pending value + usn (u64, u64)
//! ```
//!
//! The record area (the last `nand.append_bytes` bytes of every part) holds the commit
//! flags: node i's flag is byte `i / parts` of part `i % parts` (so a version's ≤ max_c flag
//! programs spread over its parts' NOP budgets). CFC: `0xFF` FALSE, programmed to `0x00`
//! TRUE; any cleared bit reads TRUE. AFC (§3.2): two bits, `init & byte`: a node written
//! FALSE has init `11`, TRUE `10`; commit programs `0xFE` (`11`→`10`), an abort mark
//! programs `0xFC` (`10`→`00`); exactly `10` reads TRUE. A node's flag is programmed at
//! most once (commit, a CFC move, or an AFC abort mark), so a version needs at most
//! `ceil(max_c / parts)` partial programs per part (checked against `nand.nop` at start).
//!
//! A redo record: `[0] kind (1 UPDATE, 2 COMMIT) [1..9] XID [9..17] page [17..19] slot
//! [19..27] usn [27..] after image`, padded to `host.log_record_bytes`; a log page carries
//! its sequence number and whether it is sealed.
//!
//! # Normal processing
//! - *usn*: a global counter stamped on every update. Record locks are held to the commit's
//!   ack, so one slot's committed writes have increasing usns in commit order; recovery takes
//!   per slot the committed candidate with the highest usn, so redo and version merging are
//!   idempotent and order-free.
//! - *Update* (Algorithm 1): admission — at most max_c distinct XIDs with a pending record
//!   on, or an admitted update of, the page; beyond it the update **blocks** until one of
//!   the page's current updaters ends (`Admit::Block`: the engine puts the wait in the
//!   wait-for graph, so a deadlock through it is found and its youngest member restarts,
//!   as for lock waits, and wakes the waiter when an updater finishes). Then a pending record
//!   ⟨slot, XID, usn, after⟩ in the page's metadata and a redo UPDATE in the log buffer.
//! - *Write-back* (eviction, checkpoint): a new version in a free or reclaimable slot
//!   (`versions.rs`): committed values of every slot whose committed value the buffer knows,
//!   pending records with one node per XID (Link = the XID's previous node, the CFC
//!   *LastPage*), Back = the previous version. Pending records of commits acked by then are
//!   folded into committed values first (§4.3 "the metadata of r_6 can be safely removed").
//!   At eviction (Algorithm 1 lines 8–9) the page's UPDATE records still only in the log
//!   buffer (`tail[forced..]`, all of active transactions: a commit forces its own) are
//!   removed; a later COMMIT of such a transaction raises the *log floor* to the version's
//!   completion, and no log page write starts before the floor.
//! - *Commit* (Algorithm 2): if some pending record of T is only in memory, COMMIT is
//!   appended and the log forced. Then, once that force **and every version holding a node
//!   of T** is complete, the flags: CFC sets T's last node TRUE; AFC sets each node written
//!   FALSE to TRUE. The ack is the last of these. A node written while T's commit is in
//!   flight gets its flag programmed at max(its write, T's ack).
//! - *Abort* (Algorithm 2): T's pending records leave the page metadata and its log
//!   records the log buffer. A slot whose committed value is in a written version is marked
//!   *invalid* (the next version omits it: "restored later by reading from disk", found via
//!   Back); one whose committed value is only in memory gets it back in memory. The next
//!   write-back of the page restores it ("restored later by reading from disk"): it reads
//!   the version holding the value and puts the value into the new version, so no older
//!   version stays pinned as the only holder of an invalid record (`versions.rs`). A buffered
//!   page whose only unwritten changes were T's is discarded from the pool (line 6).
//! - *Reclaim* (§4.3 GC, `versions.rs`): a version is reclaimed only to make room for a new
//!   one of the same page, when it is settled (its write and flag programs complete), every
//!   node's XID is finished (aborted, or committed and acked), and every committed record it
//!   holds is held committed, with at least its usn, by a newer settled version (which makes
//!   rule 1, "all pending records aborted", the case of a version whose committed values are
//!   all superseded). CFC first sets TRUE on the node each committed node links to (§3.1.2
//!   cases 1 and 2); AFC first moves a FALSE flag of an aborted transaction onto another of
//!   its nodes (§3.2), and reclaims the last node of an aborted transaction only once every
//!   earlier overwrite of its nodes is complete (else a stale TRUE node could outlive it).
//! - *Fuzzy checkpoint* every `host.checkpoint_log_bytes` (§4.3's three steps): B = the
//!   sealed tail; every dirty page is written — at once where it has a free or reclaimable
//!   version slot, else *noted* and written at the first event where it has one (or counted
//!   written when an eviction wrote it meanwhile); the master ⟨B⟩ is written once no noted
//!   page is left and every version write, flag program and log write issued by then is
//!   complete. No checkpoint starts while one is pending ("the next checkpoint is not taken
//!   until all dirty pages noted at the previous checkpoint have been written"), so the
//!   restart point never passes an unwritten page. Log page s may overwrite s − L only below
//!   the B of the newest acked master. Planted `master-before-noted` (master at once) is
//!   caught.
//!
//! # Recovery (Algorithm 3, `recovery.rs`)
//! Master ⟨B⟩; scan the log from B while pages hold their expected sequence numbers,
//! stopping after the first unsealed one; read every version slot of every page and keep the
//! complete versions (every part present with one version number). Committed XIDs C = COMMITs
//! scanned ∪ flag-committed XIDs (CFC: some node TRUE, Def. 3.1; AFC: every node TRUE,
//! Def. 3.3). Per slot: the highest-usn candidate among the complete versions' committed
//! values and pending records of XIDs in C, and the scanned UPDATEs of XIDs in C. Pending
//! records are judged by XID (C includes the log's COMMITs), which is what makes a pending
//! record of a transaction committed only by its COMMIT record count (Algorithm 3 line 1).
//! Merging every complete version is a superset of following Back from the newest one
//! (§4.3); the `back-chain-only` test hook merges only the chain and the crash checker
//! finds the same results (tests/flagcommit_ex.rs).
//!
//! # Why it is right, case by case
//! - Acked T: its COMMIT (if written) and every log write before it are complete, and its
//!   flags were programmed after the force and after every version holding its nodes. If
//!   COMMIT(T) is at or after B, T ∈ C and its UPDATEs are redone. If below B, the checkpoint
//!   wrote every page T changed in memory and waited for every flag program, so each
//!   surviving node of T is flag-committed, and each value folded is a committed value.
//! - Uncommitted or aborted T: no COMMIT(T) exists; CFC flags are only set after T's
//!   durability point; AFC: T's first durable node is FALSE (a node is written TRUE only when
//!   a FALSE node of T is already durable) and stays FALSE, or its FALSE is moved before it
//!   is reclaimed. So T ∉ C and none of its records is a candidate.
//! - Commit in flight: COMMIT durable or not (prefix of the log); flags are programmed only
//!   after the force, so a durable flag implies a durable COMMIT when one was needed: all of
//!   T or nothing. CFC: one flag decides; AFC: a FALSE node left decides abort.
//! - Torn or missing version part: the version is incomplete and ignored; nothing relied on
//!   it (flags and reclaims wait for its completion), its records are in the log above B or
//!   in an older version. Torn flag byte: the commit or move was not acked, either reading
//!   is a legal outcome, and no reclaim followed it.
//! - A reclaimed version reappearing (its slot's overwrite torn, the FTL restores the old
//!   copy): its committed values have lower usns than the newer versions', CFC TRUE flags
//!   stay true statements, AFC stale nodes are covered by the overwrite rule above.
//! - Crash in a checkpoint (also while noted pages wait for a slot): the previous master
//!   still names its B, whose log is kept until the new master is acked. A noted page
//!   written late holds every committed change it had at the note (versions carry every
//!   committed value, `versions.rs`), so at the new master's ack the changes below B are
//!   in complete versions.
//! - An UPDATE dropped at eviction (lines 8–9): it is in the evicted version, complete at
//!   its ack. If its transaction needs a COMMIT, the log write holding it starts after that
//!   ack (log floor), so a durable COMMIT implies the version is complete; with a log-free
//!   commit the flags wait for every version holding a node anyway. Uncommitted: nothing
//!   changes (the record was never durable in the log). Planted `no-log-floor` is caught.
//!
//! Not modelled: merge reads at fetch time (the host knows the merged contents; a fetch
//! reads the page's `parts` flash pages of slot 0, same count, not the slot's own LPNs).
//! Checkpoint write-backs do not drop log records (the paper's lines 8–9 are for eviction).

mod checkpoint;
mod recovery;
mod versions;

use crate::buffer::Frame;
use crate::data::{PageNo, TagContent};
use crate::engine::{data_lpns, Core};
use crate::strategy::{Admit, Strategy, StrategyInfo};
use crate::{HostConfig, HostError, Result};
use sim::{Lpn, SimTime, TxnId};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub use versions::{NodeTag, RecTag, VersionTag};

/// Version slots per DB page (DECISIONS.md "Flag Commit extended, flags and versions").
pub const VERSIONS: u8 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Cfc,
    Afc,
}

/// Planted bugs (`HostConfig::fault_fc`), each caught by a test in tests/flagcommit_ex.rs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    /// CFC: reclaim a committed node without setting its predecessor's flag.
    SkipFlagMove,
    /// Program commit flags without waiting for the log force.
    FlagBeforeLog,
    /// AFC: reclaim an aborted transaction's last FALSE node without waiting for earlier
    /// overwrites, and without moving its FALSE flag.
    AfcNoFalseMove,
    /// Reclaim a version without checking that newer versions cover it.
    NoCover,
    /// Algorithm 1 lines 8–9 without the log floor: a COMMIT may reach the log before the
    /// evicted version that took the place of the transaction's dropped records.
    NoLogFloor,
    /// Not a bug but the paper's literal merge, for comparison: recovery merges only the
    /// versions reached by Back from each page's newest complete version (§4.3), not every
    /// complete version (`recovery.rs`).
    BackChainOnly,
    /// §4.3 checkpoint rule broken: a checkpoint that noted dirty pages it could not write
    /// yet (no free version slot) writes its master at once instead of after those pages.
    MasterBeforeNoted,
}

impl Fault {
    fn parse(s: &str) -> Result<Fault> {
        Ok(match s {
            "" => Fault::None,
            "skip-flag-move" => Fault::SkipFlagMove,
            "flag-before-log" => Fault::FlagBeforeLog,
            "afc-no-false-move" => Fault::AfcNoFalseMove,
            "no-cover" => Fault::NoCover,
            "no-log-floor" => Fault::NoLogFloor,
            "back-chain-only" => Fault::BackChainOnly,
            "master-before-noted" => Fault::MasterBeforeNoted,
            other => {
                return Err(HostError::Config {
                    key: "host.fault_fc".into(),
                    reason: format!("unknown planted bug '{other}'"),
                })
            }
        })
    }
}

pub static INFO: StrategyInfo = StrategyInfo {
    name: "flagcommit-ex",
    summary: "Flag Commit §4 CFC_ex (same as cfc-ex): no-force, redo log, pending records with on-flash commit flags, max_c",
    lock_level: crate::LockLevel::Record,
    check,
    create: create_cfc,
    recover: recovery::recover_cfc,
};

pub static CFC_INFO: StrategyInfo = StrategyInfo {
    name: "cfc-ex",
    summary:
        "Flag Commit §4 CFC_ex: commit-based flags (one TRUE flag commits), record-level, no-force",
    lock_level: crate::LockLevel::Record,
    check,
    create: create_cfc,
    recover: recovery::recover_cfc,
};

pub static AFC_INFO: StrategyInfo = StrategyInfo {
    name: "afc-ex",
    summary:
        "Flag Commit §4 AFC_ex: abort-based flags (no FALSE flag commits), record-level, no-force",
    lock_level: crate::LockLevel::Record,
    check,
    create: create_afc,
    recover: recovery::recover_afc,
};

fn check(cfg: &HostConfig, p: &'static ssd::ProtocolInfo) -> Result<()> {
    if p.name != "none" {
        return Err(HostError::Config {
            key: "protocol.name".into(),
            reason: format!(
                "{} runs over the plain FTL (protocol none), not {}",
                cfg.strategy, p.name
            ),
        });
    }
    if cfg.max_c == 0 {
        return Err(HostError::Config {
            key: "host.max_c".into(),
            reason: "must be at least 1".into(),
        });
    }
    Fault::parse(&cfg.fault_fc)?;
    Ok(())
}

/// What a `flagcommit-ex` device tag stands for.
#[derive(Clone, Debug)]
pub enum FcTag {
    /// Part `part` of a page version.
    Data {
        part: u32,
        v: Arc<VersionTag>,
    },
    Log {
        seq: u64,
        sealed: bool,
        entries: Vec<Redo>,
    },
    Master {
        ckpt_seq: u64,
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

/// One DB slot of a page as the host knows it.
#[derive(Clone, Debug)]
struct SlotState {
    /// The committed value and its usn (0: as loaded).
    committed: (u64, u64),
    /// The committed value is in a written version (so an abort may mark the slot invalid).
    on_disk: bool,
    /// Invalid in the buffered copy: the next version omits the committed value (Back).
    absent: bool,
    /// A pending record: XID, value, usn, and whether that value is in a written version.
    pending: Option<(TxnId, u64, u64, bool)>,
    /// Changed since the last version write.
    dirty: bool,
}

/// A live physical version of a page.
#[derive(Clone, Debug)]
struct Version {
    slot: u8,
    vno: u64,
    /// Completion of its write.
    ack: SimTime,
    tag: Arc<VersionTag>,
    /// Per node: completion of its flag program (None: never programmed).
    flags: Vec<Option<SimTime>>,
    /// AFC: which node programs were abort marks (0xFC) rather than commits.
    marks: Vec<bool>,
}

impl Version {
    /// Its write and every flag program are complete.
    fn settled(&self, now: SimTime) -> bool {
        self.ack <= now && self.flags.iter().all(|f| f.is_none_or(|t| t <= now))
    }
}

struct PageMeta {
    slots: Vec<SlotState>,
    /// Live versions, ascending version number.
    versions: Vec<Version>,
    next_vno: u64,
    /// The slots with a pending record, ascending: `fold`, admission and commit look at
    /// these only (a TPC-C page has up to hundreds of slots and `maintain` folds every
    /// page with an admitted updater at each event).
    pending_at: Vec<u16>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Active,
    /// Commit issued; durable at `ack`.
    Committed(SimTime),
    Aborted,
}

/// A node: (page, version slot, version number, node index).
type NodeRef = (PageNo, u8, u64, usize);

struct Txn {
    status: Status,
    /// The client running it (a blocked updater waits for the clients of the page's
    /// occupants).
    client: u32,
    /// Live nodes, in write order (the last is the CFC LastPage).
    nodes: Vec<NodeRef>,
    pages: BTreeSet<PageNo>,
    /// Completion of the latest overwrite of a reclaimed node of this transaction.
    gone_ack: SimTime,
    /// Completion of the latest version write whose log records of this transaction were
    /// dropped from the log buffer (Algorithm 1 lines 8–9).
    dropped_ack: SimTime,
    /// Committed, acked and its pages folded once by `forget` (folding them again changes
    /// nothing: no pending record of it is left). Keeps `forget` from refolding every old
    /// transaction that still has live nodes on each call (that was quadratic in the run).
    folded: bool,
}

pub struct FlagCommitEx {
    variant: Variant,
    fault: Fault,
    page_bytes: u64,
    rec_bytes: u64,
    master: Lpn,
    log_base: u32,
    log_pages: u64,
    slots_base: u32,
    seq: u64,
    tail: Vec<Redo>,
    /// `tail[..forced]` has been written to the log (the tail page is rewritten in place);
    /// the rest is only in the log buffer ("still cached", Algorithm 1 line 8).
    forced: usize,
    /// No log page write starts before this: the completion of every version write that
    /// replaced dropped log records of a transaction whose COMMIT is in the log buffer.
    log_floor: SimTime,
    issued_ack: SimTime,
    data_ack: SimTime,
    flag_ack: SimTime,
    usn: u64,
    meta: BTreeMap<PageNo, PageMeta>,
    txns: BTreeMap<TxnId, Txn>,
    /// Issued commits not yet folded, by (ack, XID) (`forget`).
    unfolded: BTreeSet<(SimTime, TxnId)>,
    /// Transactions that may satisfy `forget`'s drop rule.
    gone_candidates: BTreeSet<TxnId>,
    clients: Vec<Option<TxnId>>,
    /// Admitted updaters per page (max_c), by client.
    updaters: BTreeMap<PageNo, Vec<u32>>,
    /// Per client: since when its update is blocked.
    blocked_since: Vec<Option<SimTime>>,
    max_c: usize,
    masters: Vec<(SimTime, u64)>,
    /// A fuzzy checkpoint whose master waits for noted dirty pages (§4.3).
    ckpt: Option<checkpoint::PendingCkpt>,
    bytes_since_ckpt: u64,
    ckpt_every: u64,
    fault_early_ack: bool,
    fault_master_early: bool,
    now_hint: SimTime,
    n: Counters,
}

#[derive(Default)]
struct Counters {
    max_c_blocks: u64,
    max_c_block_ns: u64,
    max_c_restarts: u64,
    checkpoints: u64,
    flag_programs: u64,
    flag_moves: u64,
    reclaims: u64,
    versions_written: u64,
    invalidated: u64,
    /// Invalid records read back from an older version into a new one (`versions.rs`).
    restored: u64,
    discards: u64,
    /// Checkpoints that found a dirty page without a free version slot, noted it, and wrote
    /// their master only once every noted page was written (§4.3).
    checkpoints_deferred: u64,
    /// Noted pages written after their checkpoint began (by the checkpoint or by eviction).
    checkpoint_late_writes: u64,
    /// Deferred checkpoints whose master was written (after their noted pages).
    checkpoints_deferred_done: u64,
    /// UPDATE records removed from the log buffer at eviction (Algorithm 1 lines 8–9).
    log_records_dropped: u64,
    log_free_commits: u64,
}

fn create_cfc(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    create(cfg, core, Variant::Cfc)
}

fn create_afc(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    create(cfg, core, Variant::Afc)
}

/// Device pages before the version slots 1.. (data slot 0, master, log).
fn slots_base(layout: &crate::data::Layout, log_pages: u32) -> u32 {
    data_lpns(layout) as u32 + 1 + log_pages
}

fn create(cfg: &HostConfig, core: &mut Core, variant: Variant) -> Result<Box<dyn Strategy>> {
    let page_bytes = u64::from(core.device.core.geo.page_bytes);
    let d = data_lpns(&core.layout);
    let need = d * u64::from(VERSIONS) + 1 + u64::from(cfg.log_pages);
    if need > u64::from(core.device.logical_pages()) {
        return Err(HostError::Config {
            key: "host.log_pages".into(),
            reason: format!(
                "{VERSIONS} version slots of the data ({d} device pages each), the master and {} log pages need {need} device pages; the device has {}",
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
    let parts = core.layout.parts.max(1);
    let per_part = cfg.max_c.div_ceil(parts);
    let area = core.device.delta_area_bytes();
    if area < per_part {
        return Err(HostError::Config {
            key: "nand.append_bytes".into(),
            reason: format!(
                "{} keeps commit flags in each flash page's record area: max_c {} over {parts} flash pages per DB page needs at least {per_part} B (got {area}); set nand.append_bytes",
                cfg.strategy, cfg.max_c
            ),
        });
    }
    let nop = u32::from(core.device.core.nand.image().params().nop);
    if nop < 1 + per_part {
        return Err(HostError::Config {
            key: "host.max_c".into(),
            reason: format!(
                "max_c {} needs {per_part} flag programs per flash page after its program ({parts} flash pages per DB page), but nand.nop is {nop}",
                cfg.max_c
            ),
        });
    }
    Ok(Box::new(FlagCommitEx {
        variant,
        fault: Fault::parse(&cfg.fault_fc)?,
        page_bytes,
        rec_bytes: u64::from(cfg.log_record_bytes),
        master: Lpn(d as u32),
        log_base: d as u32 + 1,
        log_pages: u64::from(cfg.log_pages),
        slots_base: slots_base(&core.layout, cfg.log_pages),
        seq: 0,
        tail: Vec::new(),
        forced: 0,
        log_floor: SimTime::ZERO,
        issued_ack: SimTime::ZERO,
        data_ack: SimTime::ZERO,
        flag_ack: SimTime::ZERO,
        usn: 0,
        meta: BTreeMap::new(),
        txns: BTreeMap::new(),
        unfolded: BTreeSet::new(),
        gone_candidates: BTreeSet::new(),
        clients: vec![None; cfg.clients as usize],
        updaters: BTreeMap::new(),
        blocked_since: vec![None; cfg.clients as usize],
        max_c: cfg.max_c as usize,
        masters: Vec::new(),
        ckpt: None,
        bytes_since_ckpt: 0,
        ckpt_every: cfg.checkpoint_log_bytes,
        fault_early_ack: cfg.fault_early_commit_ack,
        fault_master_early: cfg.fault_fc_empty_commit_list,
        now_hint: SimTime::ZERO,
        n: Counters::default(),
    }))
}

pub(crate) fn log_lpn(base: u32, pages: u64, seq: u64) -> Lpn {
    Lpn(base + (seq % pages) as u32)
}

/// The device page of part `k` of version slot `v` of `page`.
pub(crate) fn version_lpn(
    layout: &crate::data::Layout,
    slots_base: u32,
    page: PageNo,
    v: u8,
    k: u32,
) -> Lpn {
    if v == 0 {
        return crate::engine::data_lpn(layout, page, k);
    }
    let idx = (page.0 * u64::from(VERSIONS - 1) + u64::from(v - 1)) * u64::from(layout.parts)
        + u64::from(k);
    Lpn(slots_base + idx as u32)
}

impl FlagCommitEx {
    fn xid_of(&self, c: u32) -> Result<TxnId> {
        self.clients[c as usize]
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
        let at = if self.fault == Fault::NoLogFloor {
            now
        } else {
            now.max(self.log_floor)
        };
        let t = core.write_log_page(lpn, tag, self.seq, at)?;
        self.issued_ack = self.issued_ack.max(t);
        self.forced = self.tail.len();
        Ok(t)
    }

    fn append(&mut self, core: &mut Core, rec: Redo, now: SimTime) -> Result<()> {
        let per_page = (self.page_bytes / self.rec_bytes).max(1) as usize;
        if self.tail.len() >= per_page {
            self.write_log_page(core, true, now)?;
            self.seq += 1;
            self.tail.clear();
            self.forced = 0;
        }
        self.tail.push(rec);
        self.bytes_since_ckpt += self.rec_bytes;
        core.stats.log_bytes += self.rec_bytes;
        core.stats.log_records += 1;
        Ok(())
    }

    fn force(&mut self, core: &mut Core, now: SimTime) -> Result<SimTime> {
        if !self.tail.is_empty() {
            self.write_log_page(core, false, now)?;
            core.stats.log_forces += 1;
        }
        Ok(self.issued_ack.max(now))
    }

    fn committed_by(&self, xid: TxnId, now: SimTime) -> bool {
        matches!(self.txns.get(&xid), Some(Txn { status: Status::Committed(a), .. }) if *a <= now)
    }

    fn meta_of<'a>(
        meta: &'a mut BTreeMap<PageNo, PageMeta>,
        core: &Core,
        page: PageNo,
    ) -> &'a mut PageMeta {
        meta.entry(page).or_insert_with(|| PageMeta {
            slots: core
                .layout
                .initial_page(page)
                .into_iter()
                .map(|v| SlotState {
                    committed: (v, 0),
                    on_disk: false,
                    absent: false,
                    pending: None,
                    dirty: false,
                })
                .collect(),
            versions: Vec::new(),
            next_vno: 1,
            pending_at: Vec::new(),
        })
    }

    /// Folds pending records of commits acked by `now` into committed values (§4.3).
    fn fold(&mut self, page: PageNo, now: SimTime) {
        let txns = &self.txns;
        let Some(m) = self.meta.get_mut(&page) else {
            return;
        };
        let slots = &mut m.slots;
        m.pending_at.retain(|&i| {
            let s = &mut slots[i as usize];
            if let Some((x, v, u, on)) = s.pending {
                if matches!(txns.get(&x), Some(Txn { status: Status::Committed(a), .. }) if *a <= now)
                {
                    s.committed = (v, u);
                    s.on_disk = on;
                    s.absent = false;
                    s.pending = None;
                    return false;
                }
            }
            true
        });
    }

    /// XIDs that occupy one of the page's max_c places.
    fn occupants(&self, page: PageNo) -> BTreeSet<TxnId> {
        let mut set = BTreeSet::new();
        if let Some(m) = self.meta.get(&page) {
            for &i in &m.pending_at {
                if let Some((x, ..)) = m.slots[i as usize].pending {
                    set.insert(x);
                }
            }
        }
        if let Some(cs) = self.updaters.get(&page) {
            for c in cs {
                if let Some(x) = self.clients[*c as usize] {
                    set.insert(x);
                }
            }
        }
        set
    }

    fn release(&mut self, c: u32) {
        let pages: Vec<PageNo> = self.updaters.keys().copied().collect();
        for p in pages {
            if let Some(v) = self.updaters.get_mut(&p) {
                v.retain(|x| *x != c);
                if v.is_empty() {
                    self.updaters.remove(&p);
                }
            }
        }
        if let Some(t) = self.blocked_since[c as usize].take() {
            // Rolled back while blocked beyond max_c (a deadlock victim through the wait).
            self.n.max_c_block_ns += self.now_hint.since(t);
            self.n.max_c_restarts += 1;
        }
        self.clients[c as usize] = None;
    }

    /// Drops finished transactions with no live node and no pending record left (a
    /// committed one's pending records are folded first, once its commit is acked).
    ///
    /// Works from two small sets instead of scanning `txns`: `unfolded` (commits not yet
    /// folded, by ack) and `gone_candidates` (transactions that may have become droppable:
    /// just finished, commit still in flight, or their last node just reclaimed). A scan of
    /// `txns` on every call was linear in the transactions that still have live nodes —
    /// which grows with the run on a large database, where a version is reclaimed only when
    /// its page is written again — and made a long run quadratic (PERFORMANCE.md, fcex).
    /// Drops happen at the same calls as with the scan: every transaction that satisfies
    /// the drop rule is in `gone_candidates` (see `mark_maybe_gone`).
    fn forget(&mut self) {
        let now = self.now_hint;
        let mut done: Vec<TxnId> = Vec::new();
        while let Some(&(a, x)) = self.unfolded.first() {
            if a > now {
                break;
            }
            self.unfolded.pop_first();
            if let Some(t) = self.txns.get(&x) {
                if !t.folded && t.status == Status::Committed(a) {
                    done.push(x);
                }
            }
        }
        // Folding is per page and idempotent at one `now`, so the order is immaterial;
        // TxnId order as the scan had.
        done.sort_unstable();
        for x in &done {
            let pages: Vec<PageNo> = self.txns[x].pages.iter().copied().collect();
            for p in pages {
                self.fold(p, now);
            }
            if let Some(t) = self.txns.get_mut(x) {
                t.folded = true;
            }
        }
        if self.gone_candidates.is_empty() {
            return;
        }
        let cands = std::mem::take(&mut self.gone_candidates);
        for x in cands {
            let Some(t) = self.txns.get(&x) else {
                continue;
            };
            match t.status {
                Status::Active => {}
                // Not droppable before its ack; look again later.
                Status::Committed(a) if a > now => {
                    self.gone_candidates.insert(x);
                }
                Status::Committed(_) | Status::Aborted => {
                    if t.nodes.is_empty() {
                        self.txns.remove(&x);
                    }
                    // Else: its last reclaim marks it again.
                }
            }
        }
    }

    /// `xid` finished or lost its last live node: `forget` checks it at its next call.
    pub(super) fn mark_maybe_gone(&mut self, xid: TxnId) {
        self.gone_candidates.insert(xid);
    }

    /// `xid`'s commit was issued with ack `ack`: fold its pending records once acked.
    fn mark_committed(&mut self, xid: TxnId, ack: SimTime) {
        if let Some(t) = self.txns.get_mut(&xid) {
            t.status = Status::Committed(ack);
            self.unfolded.insert((ack, xid));
            self.gone_candidates.insert(xid);
        }
    }

    /// Algorithm 1 lines 8–9: page `page` was just written as a version (complete at `ack`);
    /// its UPDATE records still only in the log buffer are removed, since the version holds
    /// them (each is an active transaction's, whose pending record for the slot is in the
    /// version with its latest value; committed transactions' records were forced by their
    /// COMMIT). Such a transaction's COMMIT, if it needs one, is then written no earlier
    /// than `ack` (`log_floor`), so a durable COMMIT never names an update that is neither
    /// in the log nor in a complete version.
    fn drop_cached(&mut self, page: PageNo, ack: SimTime) {
        let forced = self.forced;
        let mut dropped: Vec<TxnId> = Vec::new();
        let txns = &self.txns;
        let mut i = 0usize;
        self.tail.retain(|r| {
            let keep = i < forced
                || !matches!(r, Redo::Update { page: p, xid, .. }
                    if *p == page && matches!(txns.get(xid), Some(Txn { status: Status::Active, .. })));
            if !keep {
                dropped.push(r.xid());
            }
            i += 1;
            keep
        });
        self.n.log_records_dropped += dropped.len() as u64;
        for x in dropped {
            if let Some(t) = self.txns.get_mut(&x) {
                t.dropped_ack = t.dropped_ack.max(ack);
            }
        }
    }
}

impl Strategy for FlagCommitEx {
    fn name(&self) -> &'static str {
        match self.variant {
            Variant::Cfc => "cfc-ex",
            Variant::Afc => "afc-ex",
        }
    }

    fn begin(&mut self, _core: &mut Core, c: u32, txn: TxnId, now: SimTime) -> Result<()> {
        self.now_hint = now;
        self.clients[c as usize] = Some(txn);
        self.blocked_since[c as usize] = None;
        self.txns.insert(
            txn,
            Txn {
                status: Status::Active,
                client: c,
                nodes: Vec::new(),
                pages: BTreeSet::new(),
                gone_ack: SimTime::ZERO,
                dropped_ack: SimTime::ZERO,
                folded: false,
            },
        );
        Ok(())
    }

    fn admit(&mut self, c: u32, page: PageNo, now: SimTime) -> Admit {
        self.now_hint = now;
        let Some(xid) = self.clients[c as usize] else {
            return Admit::Restart;
        };
        self.fold(page, now);
        let occ = self.occupants(page);
        let admitted = occ.contains(&xid) || occ.len() < self.max_c;
        if admitted {
            if let Some(t) = self.blocked_since[c as usize].take() {
                self.n.max_c_block_ns += now.since(t);
            }
            let v = self.updaters.entry(page).or_default();
            if !v.contains(&c) {
                v.push(c);
            }
            if let Some(t) = self.txns.get_mut(&xid) {
                t.pages.insert(page);
            }
            return Admit::Yes;
        }
        if self.blocked_since[c as usize].is_none() {
            self.n.max_c_blocks += 1;
            self.blocked_since[c as usize] = Some(now);
        }
        // Algorithm 1 line 16: wait for the page's current updaters. Every occupant is an
        // active transaction or a commit in flight (acked commits were folded above, an
        // abort drops its pending records), so each has a client that will end it.
        let mut by: Vec<u32> = occ
            .iter()
            .filter_map(|x| self.txns.get(x).map(|t| t.client))
            .filter(|&o| o != c)
            .collect();
        by.sort_unstable();
        by.dedup();
        if by.is_empty() {
            // Not reachable by the argument above; restart rather than wait for nobody.
            debug_assert!(false, "max_c wait for page {page:?} with no live occupant");
            self.n.max_c_restarts += 1;
            return Admit::Restart;
        }
        Admit::Block(by)
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
        self.now_hint = now;
        let page = core.pool.frame(frame).page;
        let xid = self.xid_of(c)?;
        self.usn += 1;
        let usn = self.usn;
        self.fold(page, now);
        let m = Self::meta_of(&mut self.meta, core, page);
        let s = &mut m.slots[slot as usize];
        if let Some((x, ..)) = s.pending {
            if x != xid {
                return Err(HostError::Stuck(format!(
                    "internal: slot {slot} of page {} has a pending record of unfinished {x:?}",
                    page.0
                )));
            }
        }
        let was_pending = s.pending.is_some();
        s.pending = Some((xid, after, usn, false));
        s.dirty = true;
        if !was_pending {
            if let Err(at) = m.pending_at.binary_search(&slot) {
                m.pending_at.insert(at, slot);
            }
        }
        if let Some(t) = self.txns.get_mut(&xid) {
            t.pages.insert(page);
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

    fn evictable(&self, frame: &Frame) -> bool {
        self.has_room(frame.page, self.now_hint)
    }

    fn write_back(&mut self, core: &mut Core, frame: Frame, now: SimTime) -> Result<SimTime> {
        self.now_hint = now;
        let ack = self.write_version(core, frame.page, now)?;
        self.drop_cached(frame.page, ack);
        Ok(ack)
    }

    fn own_page(&self, _c: u32, page: PageNo) -> Option<Arc<crate::data::PageImage>> {
        let m = self.meta.get(&page)?;
        Some(Arc::new(crate::data::PageImage {
            page,
            lsn: 0,
            values: m
                .slots
                .iter()
                .map(|s| s.pending.map_or(s.committed.0, |p| p.1))
                .collect(),
        }))
    }

    fn commit(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        self.now_hint = now;
        let xid = self.xid_of(c)?;
        let pages: Vec<PageNo> = self
            .txns
            .get(&xid)
            .map(|t| t.pages.iter().copied().collect())
            .unwrap_or_default();
        let mut wrote = false;
        let mut unflushed = false;
        for p in &pages {
            if let Some(m) = self.meta.get(p) {
                for &i in &m.pending_at {
                    if let Some((x, _, _, on)) = m.slots[i as usize].pending {
                        if x == xid {
                            wrote = true;
                            unflushed |= !on;
                        }
                    }
                }
            }
        }
        let nodes: Vec<NodeRef> = self
            .txns
            .get(&xid)
            .map(|t| t.nodes.clone())
            .unwrap_or_default();
        if !wrote && nodes.is_empty() {
            self.release(c);
            self.mark_committed(xid, now);
            self.forget();
            return Ok(now);
        }
        // Algorithm 2 lines 1–3. The COMMIT must not be durable before the versions that
        // replaced this transaction's dropped log records (Algorithm 1 lines 8–9).
        let log_ack = if unflushed {
            if let Some(t) = self.txns.get(&xid) {
                self.log_floor = self.log_floor.max(t.dropped_ack);
            }
            self.append(core, Redo::Commit { xid }, now)?;
            self.force(core, now)?
        } else {
            self.n.log_free_commits += 1;
            now
        };
        // Line 4: the flags, after the force and after every version holding a node of T.
        let mut start = if self.fault == Fault::FlagBeforeLog {
            now
        } else {
            log_ack
        };
        for n in &nodes {
            start = start.max(self.version(n).map_or(now, |v| v.ack));
        }
        let mut ack = log_ack;
        match self.variant {
            Variant::Cfc => {
                if let Some(last) = nodes.last() {
                    if let Some(t) = self.program_flag(core, *last, 0x00, false, start)? {
                        ack = ack.max(t);
                    }
                }
            }
            Variant::Afc => {
                for n in &nodes {
                    let init_true = self.version(n).is_some_and(|v| v.tag.nodes[n.3].init_true);
                    if !init_true {
                        if let Some(t) = self.program_flag(core, *n, 0xFE, false, start)? {
                            ack = ack.max(t);
                        }
                    }
                }
            }
        }
        if self.fault_early_ack {
            ack = now;
        }
        self.mark_committed(xid, ack);
        self.release(c);
        Ok(ack)
    }

    fn abort(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        self.now_hint = now;
        let Some(xid) = self.clients[c as usize] else {
            return Ok(now);
        };
        let pages: Vec<PageNo> = self
            .txns
            .get(&xid)
            .map(|t| t.pages.iter().copied().collect())
            .unwrap_or_default();
        for page in pages {
            let Some(m) = self.meta.get_mut(&page) else {
                continue;
            };
            let mut mine = Vec::new();
            let slots = &mut m.slots;
            let invalidated = &mut self.n.invalidated;
            m.pending_at.retain(|&i16| {
                let i = i16 as usize;
                let s = &mut slots[i];
                if s.pending.is_some_and(|p| p.0 == xid) {
                    s.pending = None;
                    // Algorithm 2 line 4: invalid, restored from disk later — possible only
                    // when the committed value is in a written version.
                    if s.on_disk {
                        s.absent = true;
                        *invalidated += 1;
                    }
                    mine.push(i);
                    return false;
                }
                true
            });
            if mine.is_empty() {
                continue;
            }
            // Line 6: a page whose only unwritten changes were T's is discarded — not when
            // a slot of T holds a committed value only the buffer has (line 3's "committed
            // but not yet written", which includes r's own predecessor; found by the random
            // crash check, seed 11 of tests/flagcommit_ex.rs `larger`).
            let only_mine = m
                .slots
                .iter()
                .enumerate()
                .all(|(i, s)| !s.dirty || (mine.contains(&i) && s.on_disk));
            if let Some(f) = core.pool.find(page) {
                if only_mine && core.pool.frame(f).ready_at <= now {
                    core.pool.remove(f);
                    for &i in &mine {
                        m.slots[i].dirty = false;
                    }
                    self.n.discards += 1;
                } else {
                    let fr = core.pool.frame_mut(f);
                    for &i in &mine {
                        fr.values[i] = m.slots[i].committed.0;
                    }
                }
            }
        }
        let kept_forced = self.tail[..self.forced]
            .iter()
            .filter(|r| r.xid() != xid)
            .count();
        self.tail.retain(|r| r.xid() != xid);
        self.forced = kept_forced;
        if let Some(t) = self.txns.get_mut(&xid) {
            t.status = Status::Aborted;
        }
        self.mark_maybe_gone(xid);
        self.release(c);
        self.forget();
        Ok(now)
    }

    fn maintain(&mut self, core: &mut Core, now: SimTime) -> Result<()> {
        self.now_hint = now;
        // `forget` folds every page of each commit acked by now (each of its pending records
        // is on one of its pages), so folding every page with an admitted updater here as
        // well changed nothing and cost a walk over those pages at every event.
        self.forget();
        if self.ckpt.is_some() {
            self.advance_checkpoint(core, now)?;
        }
        if self.ckpt_every > 0
            && self.ckpt.is_none()
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
            ("max_c_blocks", self.n.max_c_blocks),
            ("max_c_block_ns", self.n.max_c_block_ns),
            ("max_c_restarts", self.n.max_c_restarts),
            ("fc_checkpoints", self.n.checkpoints),
            ("fc_checkpoints_deferred", self.n.checkpoints_deferred),
            ("fc_checkpoint_late_writes", self.n.checkpoint_late_writes),
            (
                "fc_checkpoints_deferred_done",
                self.n.checkpoints_deferred_done,
            ),
            ("fc_flag_programs", self.n.flag_programs),
            ("fc_flag_moves", self.n.flag_moves),
            ("fc_reclaims", self.n.reclaims),
            ("fc_versions_written", self.n.versions_written),
            ("fc_invalidated_records", self.n.invalidated),
            ("fc_restored_records", self.n.restored),
            ("fc_discarded_pages", self.n.discards),
            ("fc_log_free_commits", self.n.log_free_commits),
            ("fc_log_records_dropped", self.n.log_records_dropped),
        ]
    }
}
