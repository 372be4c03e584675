//! The state of `cfc-ex` / `afc-ex` and its invariants: per DB page the slots as the host
//! knows them (committed value, pending record ⟨XID, value, usn⟩, Fig. 10) and the live
//! physical versions with their nodes' flag programs; per transaction its status, its live
//! nodes (Link order, the last is the CFC *LastPage*) and its pages; the log buffer
//! position, the max_c admission table (Algorithm 1) and the counters. Also the table upkeep
//! every role relies on: folding acked commits' pending records into committed values
//! (§4.3) and dropping finished transactions (`forget`).
//!
//! Invariants: `PageMeta::pending_at` lists exactly the slots with a pending record,
//! ascending (a debug assertion before each version write, `versions.rs`). Held by
//! construction, not checked: a page's `versions` are in ascending version number and use
//! distinct slots < `versions` (`versions.rs` appends with `next_vno`, `gc.rs` removes); a
//! live node of a transaction is in its `Txn::nodes` and names a live version (a reclaim
//! removes both); `tail[..forced]` is in the log (`log.rs`). The rules that use these and
//! the crash argument: `mod.rs`.

use super::layout::{slots_base, Redo, VersionTag};
use super::{checkpoint, Fault, Variant};
use crate::data::PageNo;
use crate::engine::Core;
use crate::{HostConfig, HostError, Result};
use sim::{Lpn, SimTime, TxnId};
use std::collections::BTreeSet;
use std::sync::Arc;

/// One DB slot of a page as the host knows it.
#[derive(Clone, Debug)]
pub(super) struct SlotState {
    /// The committed value and its usn (0: as loaded).
    pub(super) committed: (u64, u64),
    /// The committed value is in a written version (so an abort may mark the slot invalid).
    pub(super) on_disk: bool,
    /// Invalid in the buffered copy: the next version omits the committed value (Back).
    pub(super) absent: bool,
    /// A pending record: XID, value, usn, and whether that value is in a written version.
    pub(super) pending: Option<(TxnId, u64, u64, bool)>,
    /// Changed since the last version write.
    pub(super) dirty: bool,
}

/// A live physical version of a page.
#[derive(Clone, Debug)]
pub(super) struct Version {
    pub(super) slot: u8,
    pub(super) vno: u64,
    /// Completion of its write.
    pub(super) ack: SimTime,
    pub(super) tag: Arc<VersionTag>,
    /// Per node: completion of its flag program (None: never programmed).
    pub(super) flags: Vec<Option<SimTime>>,
    /// AFC: which node programs were abort marks (0xFC) rather than commits.
    pub(super) marks: Vec<bool>,
}

impl Version {
    /// Its write and every flag program are complete.
    pub(super) fn settled(&self, now: SimTime) -> bool {
        self.ack <= now && self.flags.iter().all(|f| f.is_none_or(|t| t <= now))
    }
}

pub(super) struct PageMeta {
    pub(super) slots: Vec<SlotState>,
    /// Live versions, ascending version number.
    pub(super) versions: Vec<Version>,
    pub(super) next_vno: u64,
    /// The slots with a pending record, ascending: `fold`, admission and commit look at
    /// these only (a TPC-C page has up to hundreds of slots and `maintain` folds every
    /// page with an admitted updater at each event).
    pub(super) pending_at: Vec<u16>,
    /// Some slot may be invalid (`SlotState::absent`): set by every abort that marks one,
    /// cleared by `restore_invalid`, which makes every slot valid. A fetch and a version
    /// write skip the search for invalid slots of a page without one.
    pub(super) any_absent: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    Active,
    /// Commit issued; durable at `ack`.
    Committed(SimTime),
    Aborted,
}

/// A node: (page, version slot, version number, node index).
pub(super) type NodeRef = (PageNo, u8, u64, usize);

pub(super) struct Txn {
    pub(super) status: Status,
    /// The client running it (a blocked updater waits for the clients of the page's
    /// occupants).
    pub(super) client: u32,
    /// Live nodes, in write order (the last is the CFC LastPage).
    pub(super) nodes: Vec<NodeRef>,
    pub(super) pages: BTreeSet<PageNo>,
    /// Completion of the latest overwrite of a reclaimed node of this transaction.
    pub(super) gone_ack: SimTime,
    /// Completion of the latest version write whose log records of this transaction were
    /// dropped from the log buffer (Algorithm 1 lines 8–9).
    pub(super) dropped_ack: SimTime,
    /// Committed, acked and its pages folded once by `forget` (folding them again changes
    /// nothing: no pending record of it is left). Keeps `forget` from refolding every old
    /// transaction that still has live nodes on each call (that was quadratic in the run).
    pub(super) folded: bool,
}

/// The per-page table (`FlagCommitEx::meta`).
pub(super) type PageMetas = hashbrown::HashMap<PageNo, PageMeta, crate::lock::FixedHash>;

pub struct FlagCommitEx {
    pub(super) variant: Variant,
    pub(super) fault: Fault,
    pub(super) page_bytes: u64,
    pub(super) rec_bytes: u64,
    pub(super) master: Lpn,
    pub(super) log_base: u32,
    pub(super) log_pages: u64,
    pub(super) slots_base: u32,
    /// Version slots per DB page (`versions_for(max_c)`).
    pub(super) versions: u8,
    /// A fetch reads every version holding live committed records of the page (§4.3);
    /// off only as the ablation `host.fc_no_merge_reads`.
    pub(super) merge_reads: bool,
    /// A new version takes the oldest reclaimable slot before a free one; on only as the
    /// ablation `host.fc_reuse_slots_first` (`gc.rs::pick_slot`).
    pub(super) reuse_first: bool,
    pub(super) seq: u64,
    pub(super) tail: Vec<Redo>,
    /// `tail[..forced]` has been written to the log (the tail page is rewritten in place);
    /// the rest is only in the log buffer ("still cached", Algorithm 1 line 8).
    pub(super) forced: usize,
    /// No log page write starts before this: the completion of every version write that
    /// replaced dropped log records of a transaction whose COMMIT is in the log buffer.
    pub(super) log_floor: SimTime,
    pub(super) issued_ack: SimTime,
    pub(super) data_ack: SimTime,
    pub(super) flag_ack: SimTime,
    pub(super) usn: u64,
    /// Per DB page: looked up by every read, write, commit and reclaim, never iterated
    /// (a hash map: no result depends on its order).
    pub(super) meta: PageMetas,
    /// Per transaction: looked up by XID, never iterated (a hash map: no result depends on
    /// its order).
    pub(super) txns: hashbrown::HashMap<TxnId, Txn, crate::lock::FixedHash>,
    /// Issued commits not yet folded, by (ack, XID) (`forget`).
    pub(super) unfolded: BTreeSet<(SimTime, TxnId)>,
    /// Transactions that may satisfy `forget`'s drop rule.
    pub(super) gone_candidates: BTreeSet<TxnId>,
    pub(super) clients: Vec<Option<TxnId>>,
    /// Admitted updaters per page (max_c), by client; looked up by page, never iterated.
    pub(super) updaters: hashbrown::HashMap<PageNo, Vec<u32>, crate::lock::FixedHash>,
    /// Per client: the pages whose `updaters` name it (`release` visits only these).
    pub(super) admitted: Vec<Vec<PageNo>>,
    /// Per client: since when its update is blocked.
    pub(super) blocked_since: Vec<Option<SimTime>>,
    pub(super) max_c: usize,
    pub(super) masters: Vec<(SimTime, u64)>,
    /// A fuzzy checkpoint whose master waits for noted dirty pages (§4.3).
    pub(super) ckpt: Option<checkpoint::PendingCkpt>,
    pub(super) bytes_since_ckpt: u64,
    pub(super) ckpt_every: u64,
    pub(super) fault_early_ack: bool,
    pub(super) fault_master_early: bool,
    pub(super) now_hint: SimTime,
    /// Pages whose recovered records a run-on restart found in the log only
    /// (`restart.rs`): the next checkpoint writes them before its master.
    pub(super) restart_dirty: BTreeSet<PageNo>,
    /// Pages whose slot 0 a run-on restart found holding parts of no complete version: a
    /// fetch of one with no live version reads slot 0 as a version slot, not as the engine's
    /// data page (`versions.rs::fetch_page`).
    pub(super) slot0_raw: BTreeSet<PageNo>,
    pub(super) n: Counters,
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) max_c_blocks: u64,
    pub(super) max_c_block_ns: u64,
    pub(super) max_c_restarts: u64,
    pub(super) checkpoints: u64,
    pub(super) flag_programs: u64,
    pub(super) flag_moves: u64,
    pub(super) reclaims: u64,
    pub(super) versions_written: u64,
    pub(super) invalidated: u64,
    /// Invalid records read back from an older version into a new one (`versions.rs`).
    pub(super) restored: u64,
    pub(super) discards: u64,
    /// Checkpoints that found a dirty page without a free version slot, noted it, and wrote
    /// their master only once every noted page was written (§4.3).
    pub(super) checkpoints_deferred: u64,
    /// Noted pages written after their checkpoint began (by the checkpoint or by eviction).
    pub(super) checkpoint_late_writes: u64,
    /// Deferred checkpoints whose master was written (after their noted pages).
    pub(super) checkpoints_deferred_done: u64,
    /// Checkpoints with no noted page whose master waited for the acks of the commits in
    /// flight at their start (`checkpoint.rs`).
    pub(super) checkpoint_commit_waits: u64,
    /// UPDATE records removed from the log buffer at eviction (Algorithm 1 lines 8–9).
    pub(super) log_records_dropped: u64,
    pub(super) log_free_commits: u64,
    /// Buffer misses' version reads (the newest version and merged older ones), and of
    /// them the older versions read for records the newest lacks (§4.3's merge; at
    /// write-back too with the `fc_no_merge_reads` ablation).
    pub(super) fetch_versions_read: u64,
    pub(super) merge_reads: u64,
    /// The most versions one DB page had on flash at once.
    pub(super) versions_live_max: u64,
}

impl FlagCommitEx {
    /// The strategy's empty state on a device whose layout `create` (`mod.rs`) has checked:
    /// `d` device pages of version slot 0, then the master, the log and slots 1.. .
    pub(super) fn new(
        cfg: &HostConfig,
        core: &Core,
        variant: Variant,
        page_bytes: u64,
        d: u64,
    ) -> Result<FlagCommitEx> {
        Ok(FlagCommitEx {
            variant,
            fault: Fault::parse(&cfg.fault_fc)?,
            page_bytes,
            rec_bytes: u64::from(cfg.log_record_bytes),
            master: Lpn(d as u32),
            log_base: d as u32 + 1,
            log_pages: u64::from(cfg.log_pages),
            slots_base: slots_base(&core.layout, cfg.log_pages),
            versions: super::versions_for(cfg.max_c),
            merge_reads: !cfg.fc_no_merge_reads,
            reuse_first: cfg.fc_reuse_slots_first,
            seq: 0,
            tail: Vec::new(),
            forced: 0,
            log_floor: SimTime::ZERO,
            issued_ack: SimTime::ZERO,
            data_ack: SimTime::ZERO,
            flag_ack: SimTime::ZERO,
            usn: 0,
            meta: PageMetas::default(),
            txns: Default::default(),
            unfolded: BTreeSet::new(),
            gone_candidates: BTreeSet::new(),
            clients: vec![None; cfg.clients as usize],
            updaters: Default::default(),
            admitted: vec![Vec::new(); cfg.clients as usize],
            blocked_since: vec![None; cfg.clients as usize],
            max_c: cfg.max_c as usize,
            masters: Vec::new(),
            ckpt: None,
            bytes_since_ckpt: 0,
            ckpt_every: cfg.checkpoint_log_bytes,
            fault_early_ack: cfg.fault_early_commit_ack,
            fault_master_early: cfg.fault_fc_empty_commit_list,
            now_hint: SimTime::ZERO,
            restart_dirty: BTreeSet::new(),
            slot0_raw: BTreeSet::new(),
            n: Counters::default(),
        })
    }

    pub(super) fn xid_of(&self, c: u32) -> Result<TxnId> {
        self.clients[c as usize]
            .ok_or_else(|| HostError::Stuck(format!("internal: client {c} has no transaction")))
    }

    pub(super) fn committed_by(&self, xid: TxnId, now: SimTime) -> bool {
        matches!(self.txns.get(&xid), Some(Txn { status: Status::Committed(a), .. }) if *a <= now)
    }

    pub(super) fn meta_of<'a>(
        meta: &'a mut PageMetas,
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
            any_absent: false,
        })
    }

    /// Folds pending records of commits acked by `now` into committed values (§4.3).
    pub(super) fn fold(&mut self, page: PageNo, now: SimTime) {
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

    /// XIDs that occupy one of the page's max_c places, ascending and distinct.
    pub(super) fn occupants(&self, page: PageNo) -> Vec<TxnId> {
        let mut set = Vec::new();
        if let Some(m) = self.meta.get(&page) {
            for &i in &m.pending_at {
                if let Some((x, ..)) = m.slots[i as usize].pending {
                    set.push(x);
                }
            }
        }
        if let Some(cs) = self.updaters.get(&page) {
            for c in cs {
                if let Some(x) = self.clients[*c as usize] {
                    set.push(x);
                }
            }
        }
        set.sort_unstable();
        set.dedup();
        set
    }

    /// Drops finished transactions with no live node and no pending record left (a
    /// committed one's pending records are folded first, once its commit is acked).
    ///
    /// Works from two small sets instead of scanning `txns`: `unfolded` (commits not yet
    /// folded, by ack) and `gone_candidates` (transactions that may have become droppable:
    /// just finished, commit still in flight, or their last node just reclaimed). A scan of
    /// `txns` on every call was linear in the transactions that still have live nodes —
    /// which grows with the run on a large database, where a version is reclaimed only when
    /// its page is written again — and made a long run quadratic (docs/PERFORMANCE.md, "What makes it fast").
    /// Drops happen at the same calls as with the scan: every transaction that satisfies
    /// the drop rule is in `gone_candidates` (see `mark_maybe_gone`).
    pub(super) fn forget(&mut self) {
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
    pub(super) fn mark_committed(&mut self, xid: TxnId, ack: SimTime) {
        if let Some(t) = self.txns.get_mut(&xid) {
            t.status = Status::Committed(ack);
            self.unfolded.insert((ack, xid));
            self.gone_candidates.insert(xid);
        }
    }

    pub(super) fn version(&self, n: &NodeRef) -> Option<&Version> {
        self.meta
            .get(&n.0)?
            .versions
            .iter()
            .find(|v| v.slot == n.1 && v.vno == n.2)
    }

    /// `page` as its updaters see it: each slot's pending value, else its committed value
    /// (`Strategy::own_page`).
    pub(super) fn own_image(&self, page: PageNo) -> Option<Arc<crate::data::PageImage>> {
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

    pub(super) fn counter_list(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("log_pages_used", self.seq + 1),
            ("max_c_blocks", self.n.max_c_blocks),
            ("max_c_block_ns", self.n.max_c_block_ns),
            ("max_c_restarts", self.n.max_c_restarts),
            ("fc_checkpoints", self.n.checkpoints),
            ("fc_checkpoints_deferred", self.n.checkpoints_deferred),
            ("fc_checkpoint_late_writes", self.n.checkpoint_late_writes),
            ("fc_checkpoint_commit_waits", self.n.checkpoint_commit_waits),
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
            ("fc_version_slots", u64::from(self.versions)),
            ("fc_versions_live_max", self.n.versions_live_max),
            ("fc_fetch_versions_read", self.n.fetch_versions_read),
            ("fc_merge_reads", self.n.merge_reads),
        ]
    }
}
