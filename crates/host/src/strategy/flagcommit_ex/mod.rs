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
//! Roles, one file each: this file (the header: layout, rules and crash argument; the
//! registry entries, configuration checks and the `Strategy` impl, which delegates),
//! `layout.rs` (device tags, redo records, version contents, flag encoding, LPNs),
//! `tables.rs` (the state and its invariants, folding, dropping finished transactions),
//! `normal.rs` (the transaction path: begin, admission, update, commit, abort; Algorithms
//! 1–2), `log.rs` (the redo log, §4.1, and Algorithm 1 lines 8–9), `versions.rs` (writing a
//! page version, restoring invalid records, programming flags), `gc.rs` (the §4.3 reclaim
//! rules with the CFC/AFC flag moves), `checkpoint.rs` (fuzzy checkpoints, §4.3),
//! `recovery.rs` (Algorithm 3).
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
//!                     D+1+L + ((p*(V-1) + v-1)*parts + k)      (V = versions_for(max_c))
//! ```
//!
//! A loaded database (`external::load_data_area`, the Flag Commit reproduction's §5.1
//! preparation) is slot 0 of every page holding its *loaded tag* with an untouched record
//! area: no version, every record its loaded value with usn 0, which is what a fetch of a
//! page with no version reads (`Core::read_page`) and what recovery starts each record from;
//! recovery takes such a slot 0 as it takes an unmapped one. A loaded tag anywhere else, or
//! with a flag byte programmed, is corrupt.
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
//!   (`versions.rs`, `gc.rs`): committed values of every slot whose committed value the
//!   buffer knows, pending records with one node per XID (Link = the XID's previous node, the CFC
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
//! - *Reclaim* (§4.3 GC, `gc.rs`): a version is reclaimed only to make room for a new
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
//!   page is left, every commit in flight at the checkpoint's start is acked, and every
//!   version write, flag program and log write issued by then is complete. No checkpoint starts while one is pending ("the next checkpoint is not taken
//!   until all dirty pages noted at the previous checkpoint have been written"), so the
//!   restart point never passes an unwritten page. Log page s may overwrite s − L only below
//!   the B of the newest acked master. Planted `master-before-noted` (master at once) and
//!   `master-before-commit-acks` (master without waiting for the commits in flight) are
//!   caught on afc-ex; on cfc-ex the second is equivalent (one TRUE node decides, and every
//!   commit in flight has one whose program the master waits for: `checkpoint.rs`).
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
//!   in complete versions. A commit in flight at the checkpoint's start has its COMMIT
//!   below B, so after the master only its flags decide it; a version written before its
//!   ack holds a new node whose flag is programmed at max(write, ack). The master is issued
//!   only after those acks, when every such program has been issued, and waits for them.
//! - An UPDATE dropped at eviction (lines 8–9): it is in the evicted version, complete at
//!   its ack. If its transaction needs a COMMIT, the log write holding it starts after that
//!   ack (log floor), so a durable COMMIT implies the version is complete; with a log-free
//!   commit the flags wait for every version holding a node anyway. Uncommitted: nothing
//!   changes (the record was never durable in the log). Planted `no-log-floor` is caught.
//!
//! # Run-on restart (`restart.rs`)
//! By default restart writes nothing. With `RecoverCtx::write_back` (the crash checker's
//! run-on mode, `check::check_run_on`) it leaves a medium the engine runs on and crashes
//! again. The paper's restart (Algorithm 3) says nothing about the run after it; what
//! follows is what ARIES's end of restart requires (Mohan et al. 1992, §6: close the losers,
//! make the winners' outcome independent of the log before the restart point moves), done
//! with §4's own mechanisms:
//!
//! 1. Every log page beyond the end (its sequence number above the scan's end: the crashed
//!    run wrote it after a page that did not persist) is overwritten with a void page
//!    (sequence number `u64::MAX`), and the resumed log's writes wait for those writes (the
//!    log floor). Otherwise, once the resumed run seals the end page, a scan reads on into
//!    the lost records (a COMMIT of a transaction this restart judged a loser).
//! 2. Flags: every node of a committed transaction (C, Algorithm 3) is programmed to read
//!    TRUE if it does not (a commit whose COMMIT is durable but whose flag programs the
//!    crash cut short, Algorithm 2 line 4; CFC 0x00, AFC 0xFE), and every node of a loser
//!    that reads TRUE (AFC: written TRUE, or programmed by a log-free commit the crash cut
//!    short) gets an abort mark (0xFC). Afterwards each node alone says whether its
//!    transaction committed, so reclaiming any version later (§4.3) changes no outcome.
//! 3. Nothing else is written: the master and the log from B stay in force. The strategy
//!    resumes (`FlagCommitEx::resume_from`) with the log continuing at the scan's end (inside
//!    its last page when that page is not sealed), the old master as the acked one (log page
//!    s may overwrite s − L only below its B), the usn counter above every usn on the medium,
//!    every complete version live in its slot with its flags, every record's recovered value
//!    and usn, the old transactions with live nodes committed-and-acked or aborted (so the
//!    §4.3 reclaim rules and flag moves apply to them as to the run's own), each page's next
//!    version number above any part on the medium (a torn new version's parts never pair
//!    with an old one's), and the pages whose recovered records are in the log only
//!    (`restart_dirty`). A checkpoint is due at once; it writes those pages (or notes them
//!    until a slot is free, as any dirty page) before its master (`checkpoint.rs`).
//!    Transaction ids continue above every id the medium names (`max_xid`).
//!
//! Case by case, a crash after the first: during step 1, the medium is the first crash's
//! plus void pages beyond the end, which no scan reads (a position holding a page beyond the
//! end is not one the scan from B reaches). During step 2, each program changes a node to
//! the reading recovery already gave its transaction (a winner stays in C through its
//! COMMIT or its TRUE nodes; a loser has a FALSE node and no COMMIT); a torn program reads
//! either way, both legal. In the resumed run before its first master, restart reads the old
//! master, the old log (kept: B has not moved) and the resumed run's log after it: the
//! losers have no COMMIT and new ids never take theirs, and new records have higher usns.
//! A version the resumed run writes takes a free slot (no complete version: a torn or
//! missing one, which held nothing recovery used) or one reclaimed by §4.3's rules. After
//! its first master, every winner's record is in a complete version (held before, or
//! written by that checkpoint) whose nodes read TRUE on their own. Planted
//! `restart-no-flags` and `restart-no-dirty` (`host.fault_fc`) are caught by run-on only
//! (tests/run_on.rs); `restart-no-void` is caught by no run tried (the tiny run rarely
//! leaves a log page beyond the end), so step 1 is argued here, not shown by a check.
//!
//! *Fetch* (§4.3 merge, `versions.rs::fetch_page`): a buffer miss reads the page's newest
//! version and every older version holding a committed record the newest lacks (an invalid
//! record, through Back), so the records of a page scattered over several physical pages
//! cost one read per page (§5.3.1's second reason for Fig. 15's drop beyond max_c = 3). The
//! merged records are valid again in memory; a write-back then needs no read for them. The
//! reads carry no new durability obligation: they change only what memory holds, which is
//! what `restore_invalid` wrote at the next write-back before. `host.fc_no_merge_reads` is
//! the ablation that reads slot 0 only.
//!
//! Version slots: `versions_for(max_c)` = max(3, max_c) per DB page, one per transaction
//! that may hold pending records in the page at once; more slots let more versions of a page
//! coexist (and be merged), the effect §5.3.1 attributes to a larger max_c.
//! Checkpoint write-backs do not drop log records (the paper's lines 8–9 are for eviction).

mod checkpoint;
mod gc;
mod layout;
mod log;
mod normal;
mod recovery;
mod restart;
mod tables;
mod versions;

use crate::buffer::Frame;
use crate::data::PageNo;
use crate::engine::{data_lpns, Core};
use crate::hooks::{Admit, Strategy, StrategyInfo};
use crate::{HostConfig, HostError, Result};
use sim::{SimTime, TxnId};
use std::sync::Arc;

pub use layout::{FcTag, NodeTag, RecTag, Redo, VersionTag};
pub use restart::Resume;
pub use tables::FlagCommitEx;

/// The highest transaction id a device tag of this strategy names (its log records' and
/// its version nodes'; 0: none): a run on a recovered medium numbers its transactions
/// above every one of them (`check::run_on`), so no new transaction takes a loser's id.
pub fn max_xid(t: &FcTag) -> u64 {
    match t {
        FcTag::Data { v, .. } => v.nodes.iter().map(|n| n.xid.0).max().unwrap_or(0),
        FcTag::Log { entries, .. } => entries.iter().map(|r| r.xid().0).max().unwrap_or(0),
        FcTag::Master { .. } => 0,
    }
}

impl crate::data::StrategyTag for FcTag {
    fn max_txn(&self) -> u64 {
        max_xid(self)
    }
}

/// Version slots per DB page at max_c ≤ 3 (docs/HOST.md, "CFC_ex / AFC_ex: version
/// slots follow max_c, and fetches merge").
pub const MIN_VERSIONS: u8 = 3;

/// Version slots per DB page for `max_c`: one per transaction that may hold pending records
/// in the page at once (each may leave them in a physical version of its own, §4.2, §5.3.1:
/// "with more concurrent updates, the committed records of a logical page are more likely to
/// scatter over multiple physical pages"), and at least `MIN_VERSIONS`.
pub const fn versions_for(max_c: u32) -> u8 {
    if max_c < MIN_VERSIONS as u32 {
        MIN_VERSIONS
    } else if max_c > 64 {
        64
    } else {
        max_c as u8
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Cfc,
    Afc,
}

/// Planted bugs (`HostConfig::fault_fc`), each caught by a test in tests/flagcommit_ex.rs
/// (except `NoCover`, below).
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
    /// Reclaim a version without checking that newer versions cover it. Not caught by any
    /// run tried since checkpoints wait for commits in flight (its test is ignored, with
    /// the runs tried): the version written after a reclaim carries every committed value.
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
    /// A checkpoint writes its master without waiting for the acks of the commits in
    /// flight at its start (`checkpoint.rs`).
    MasterBeforeCommitAcks,
    /// Run-on restart (`restart.rs`): log pages beyond the end are not voided.
    RestartNoVoid,
    /// Run-on restart: committed transactions' FALSE nodes and losers' TRUE nodes are left
    /// as they are.
    RestartNoFlags,
    /// Run-on restart: the resumed run's first checkpoint writes its master without writing
    /// the pages whose recovered records are in the log only.
    RestartNoDirty,
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
            "master-before-commit-acks" => Fault::MasterBeforeCommitAcks,
            "restart-no-void" => Fault::RestartNoVoid,
            "restart-no-flags" => Fault::RestartNoFlags,
            "restart-no-dirty" => Fault::RestartNoDirty,
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

fn create_cfc(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    create(cfg, core, Variant::Cfc)
}

fn create_afc(cfg: &HostConfig, core: &mut Core) -> Result<Box<dyn Strategy>> {
    create(cfg, core, Variant::Afc)
}

fn create(cfg: &HostConfig, core: &mut Core, variant: Variant) -> Result<Box<dyn Strategy>> {
    let page_bytes = u64::from(core.device.core.geo.page_bytes);
    let d = data_lpns(&core.layout);
    let versions = versions_for(cfg.max_c);
    let need = d * u64::from(versions) + 1 + u64::from(cfg.log_pages);
    if need > u64::from(core.device.logical_pages()) {
        return Err(HostError::Config {
            key: "host.log_pages".into(),
            reason: format!(
                "{versions} version slots (max_c {}) of the data ({d} device pages each), the master and {} log pages need {need} device pages; the device has {}",
                cfg.max_c,
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
    let mut fc = FlagCommitEx::new(cfg, core, variant, page_bytes, d)?;
    // An engine resumed on a medium whose run-on restart wrote back (`restart.rs`).
    if let Some(r) = crate::hooks::Resume::take_from::<Resume>(&mut core.resume) {
        fc.resume_from(r, core);
    }
    Ok(Box::new(fc))
}

impl Strategy for FlagCommitEx {
    fn name(&self) -> &'static str {
        match self.variant {
            Variant::Cfc => "cfc-ex",
            Variant::Afc => "afc-ex",
        }
    }

    fn begin(&mut self, _core: &mut Core, c: u32, txn: TxnId, now: SimTime) -> Result<()> {
        self.begin_txn(c, txn, now);
        Ok(())
    }

    fn admit(&mut self, c: u32, page: PageNo, now: SimTime) -> Admit {
        self.admit_update(c, page, now)
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
        self.record_update(core, c, frame, slot, after, now)
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

    fn read_page(&mut self, core: &mut Core, page: PageNo, now: SimTime) -> Result<SimTime> {
        self.fetch_page(core, page, now)
    }

    fn own_page(&self, _c: u32, page: PageNo) -> Option<Arc<crate::data::PageImage>> {
        self.own_image(page)
    }

    fn commit(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        self.commit_txn(core, c, now)
    }

    fn abort(&mut self, core: &mut Core, c: u32, now: SimTime) -> Result<SimTime> {
        self.abort_txn(core, c, now)
    }

    fn maintain(&mut self, core: &mut Core, now: SimTime) -> Result<()> {
        self.maintain_now(core, now)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.counter_list()
    }
}
