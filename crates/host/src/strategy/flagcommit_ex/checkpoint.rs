//! Fuzzy checkpoints of `cfc-ex` / `afc-ex` (§4.3): list the dirty pages, write them — at
//! once, or noted and written when a version slot frees — and write the master ⟨B⟩ only
//! after. Rules and the crash argument: `mod.rs` ("Fuzzy checkpoint", "Crash in a
//! checkpoint").

use super::layout::FcTag;
use super::{Fault, FlagCommitEx};
use crate::data::{PageNo, TagContent};
use crate::engine::Core;
use crate::Result;
use sim::SimTime;
use std::sync::Arc;

/// A checkpoint between its start (log sealed at `b`, dirty pages noted) and its master.
pub(super) struct PendingCkpt {
    b: u64,
    /// Noted pages not written yet, each with the version number its next write gets at
    /// the note (a version numbered at least that is a write since the note).
    noted: Vec<(PageNo, u64)>,
    /// The latest ack of the commits in flight at the start (their COMMIT records, if
    /// any, are below `b`): the master is not issued before it (`checkpoint`).
    until: SimTime,
    /// It noted pages (`checkpoints_deferred`).
    deferred: bool,
}

impl FlagCommitEx {
    /// A fuzzy checkpoint (§4.3): 1) the dirty pages in the buffer pool, 2) written — here
    /// at once where a version slot is free, else *noted* and written as soon as one is
    /// (`advance_checkpoint`, at every event), 3) the master ⟨B⟩ once every noted page is
    /// written and every write and flag program issued by then is complete. "The next
    /// checkpoint is not taken until all dirty pages noted at the previous checkpoint have
    /// been written": `maintain` starts none while one is pending. The restart point B
    /// therefore never passes a committed update that is in neither a complete version nor
    /// the log from B on (`mod.rs`'s header, "Acked T … below B").
    pub(super) fn checkpoint(&mut self, core: &mut Core, now: SimTime) -> Result<()> {
        self.bytes_since_ckpt = 0;
        self.n.checkpoints += 1;
        core.stats.checkpoints += 1;
        if !self.tail.is_empty() {
            self.write_log_page(core, true, now)?;
            self.seq += 1;
            self.tail.clear();
            self.forced = 0;
        }
        let b = self.seq;
        let dirty: Vec<u32> = core
            .pool
            .occupied()
            .filter(|(_, f)| f.dirty)
            .map(|(i, _)| i)
            .collect();
        let mut noted = Vec::new();
        for f in dirty {
            let page = core.pool.frame(f).page;
            if !self.has_room(page, now) {
                // No free or reclaimable version slot now: noted, written later.
                let vno = self.meta.get(&page).map_or(1, |m| m.next_vno);
                noted.push((page, vno));
                continue;
            }
            self.write_version(core, page, now)?;
            core.pool.frame_mut(f).dirty = false;
        }
        // Pages a run-on restart recovered from the log only (`restart.rs`): they are in no
        // version, so B may not pass their records before they are written.
        let restart: Vec<PageNo> = if self.fault == Fault::RestartNoDirty {
            Vec::new()
        } else {
            self.restart_dirty.iter().copied().collect()
        };
        for page in restart {
            if noted.iter().any(|n: &(PageNo, u64)| n.0 == page)
                || !self.restart_dirty.contains(&page)
            {
                continue;
            }
            if !self.has_room(page, now) {
                let vno = self.meta.get(&page).map_or(1, |m| m.next_vno);
                noted.push((page, vno));
                continue;
            }
            self.write_version(core, page, now)?;
            if let Some(f) = core.pool.find(page) {
                core.pool.frame_mut(f).dirty = false;
            }
        }
        // Commits in flight now have their COMMIT below B (the tail was sealed above), so
        // after the master they are decided by their flags alone. Until its ack such a
        // commit's pending records stay in memory, and a version written meanwhile holds a
        // new node of it whose flag is programmed only then (`versions.rs`, at max(write,
        // ack)): issued after a master written now, that program would be waited for by
        // nothing, and a crash before it left a FALSE node (AFC: aborted, Def. 3.3) or no
        // TRUE one (CFC: a commit with no version at its start). So the master is issued
        // only once every such commit is acked (and folded: no further node of it), when
        // every flag program of its nodes has been issued and `write_checkpoint_master`
        // waits for them. Found by a soak of random host crash schedules (afc-ex, seed
        // 1394702057938662, state 756; `tests/flagcommit_ex.rs`).
        //
        // On cfc-ex this wait adds nothing, so planted `master-before-commit-acks` is
        // equivalent there (docs/MUTATION.md). CFC commits T once any one node of T reads
        // TRUE (Def. 3.1, `recovery.rs`), and a commit in flight at this checkpoint's start
        // has, before the master is issued, a node whose TRUE program is already issued:
        // (a) T had a node at its commit: `commit_txn` issued the program of T's last node
        // then, with its start in the future; (b) T had none (every pending record of T in
        // memory, so its COMMIT was forced): its pages are dirty now, and this checkpoint
        // writes them below (or notes them, and the master waits for the noted writes), or
        // an eviction wrote them since the commit; `write_version` issues the new node's
        // program at once, at max(write, ack). The master waits for every flag program
        // issued by its issue (`write_checkpoint_master`, `flag_ack`), so T's TRUE node is
        // durable before the master is. A node of T written after the master's issue is
        // redundant under Def. 3.1, and no reclaim removes T's TRUE node before a newer
        // version holding T's records is settled (`gc.rs`). On afc-ex every node must read
        // TRUE (Def. 3.3), so a node written after the issue is the violation the wait
        // prevents. Without `flag_ack` in the master's wait (planted
        // `fault_fc_empty_commit_list`), case (b) is open on cfc-ex too: the node's program
        // starts at T's ack, as the master may.
        let until = self
            .unfolded
            .iter()
            .next_back()
            .map_or(now, |&(a, _)| a.max(now));
        let wait_commits = until > now && self.fault != Fault::MasterBeforeCommitAcks;
        if (noted.is_empty() || self.fault == Fault::MasterBeforeNoted) && !wait_commits {
            if !noted.is_empty() {
                self.n.checkpoints_deferred += 1;
            }
            return self.write_checkpoint_master(core, b, now);
        }
        if noted.is_empty() {
            self.n.checkpoint_commit_waits += 1;
        } else {
            self.n.checkpoints_deferred += 1;
        }
        self.ckpt = Some(PendingCkpt {
            b,
            deferred: !noted.is_empty(),
            noted,
            until: if wait_commits { until } else { now },
        });
        Ok(())
    }

    /// Step 2 of a deferred checkpoint: writes each noted page that now has a version slot,
    /// drops those written meanwhile (an eviction writes a version) or discarded (an abort
    /// discards only a page whose unwritten changes were all the aborted transaction's,
    /// Algorithm 2 line 6), and writes the master when none is left and every commit in
    /// flight at the start is acked.
    pub(super) fn advance_checkpoint(&mut self, core: &mut Core, now: SimTime) -> Result<()> {
        let Some(mut ck) = self.ckpt.take() else {
            return Ok(());
        };
        let mut left = Vec::with_capacity(ck.noted.len());
        for (page, vno) in std::mem::take(&mut ck.noted) {
            let written = self.meta.get(&page).is_some_and(|m| m.next_vno > vno);
            let frame = core.pool.find(page).filter(|&f| core.pool.frame(f).dirty);
            match frame {
                _ if written => self.n.checkpoint_late_writes += 1,
                None if self.restart_dirty.contains(&page) => {
                    if self.has_room(page, now) {
                        self.write_version(core, page, now)?;
                        self.n.checkpoint_late_writes += 1;
                    } else {
                        left.push((page, vno));
                    }
                }
                None => {}
                Some(f) => {
                    if self.has_room(page, now) {
                        self.write_version(core, page, now)?;
                        core.pool.frame_mut(f).dirty = false;
                        self.n.checkpoint_late_writes += 1;
                    } else {
                        left.push((page, vno));
                    }
                }
            }
        }
        if left.is_empty() && ck.until <= now {
            if ck.deferred {
                self.n.checkpoints_deferred_done += 1;
            }
            return self.write_checkpoint_master(core, ck.b, now);
        }
        ck.noted = left;
        self.ckpt = Some(ck);
        Ok(())
    }

    /// Step 3: the master ⟨B⟩, after every version write, log write and (unless the
    /// planted `fault_fc_empty_commit_list`) flag program issued so far is complete.
    fn write_checkpoint_master(&mut self, core: &mut Core, b: u64, now: SimTime) -> Result<()> {
        let mut done = self.data_ack.max(self.issued_ack).max(now);
        if !self.fault_master_early {
            done = done.max(self.flag_ack);
        }
        let tag = core
            .tags
            .add(|| TagContent::Strategy(Arc::new(FcTag::Master { ckpt_seq: b })));
        let ack = core.write_master(self.master, tag, done)?;
        self.masters.push((ack, b));
        if self.masters.len() > 4 {
            self.masters.remove(0);
        }
        Ok(())
    }
}
