//! The §4.3 reclaim rules of `cfc-ex` / `afc-ex` (the host's GC hooks: a version slot is
//! reused only for a new version of the same page): when a version may be reclaimed (settled,
//! every node's transaction finished, every committed record covered by a newer settled
//! version), which slot a new version takes, and the flag moves that must precede a reclaim
//! (CFC §3.1.2 cases 1 and 2: the linked-to node gets TRUE; AFC §3.2: an aborted
//! transaction keeps a FALSE node). Rules and the crash argument: `mod.rs` ("Reclaim").

use super::layout::flag_true;
use super::tables::{NodeRef, Status, Version};
use super::{Fault, FlagCommitEx, Variant};
use crate::data::PageNo;
use crate::engine::Core;
use crate::Result;
use sim::SimTime;

impl FlagCommitEx {
    /// The effective flag of a node as the device will hold it once programs complete.
    pub(super) fn node_true(&self, v: &Version, i: usize) -> bool {
        let byte = match (v.flags[i], v.marks[i], self.variant) {
            (None, ..) => 0xFF,
            (Some(_), _, Variant::Cfc) => 0x00,
            (Some(_), true, Variant::Afc) => 0xFC,
            (Some(_), false, Variant::Afc) => 0xFE,
        };
        flag_true(self.variant, v.tag.nodes[i].init_true, byte)
    }

    /// §4.3: may version `idx` of `page` be reclaimed at `now`? (Rules in `mod.rs`.)
    pub(super) fn reclaimable(&self, page: PageNo, idx: usize, now: SimTime) -> bool {
        let Some(m) = self.meta.get(&page) else {
            return false;
        };
        let v = &m.versions[idx];
        if !v.settled(now) {
            return false;
        }
        for (i, n) in v.tag.nodes.iter().enumerate() {
            match self.txns.get(&n.xid).map(|t| t.status) {
                Some(Status::Committed(a)) if a <= now => {}
                Some(Status::Aborted) => {
                    if self.variant == Variant::Afc
                        && self.fault != Fault::AfcNoFalseMove
                        && !self.node_true(v, i)
                    {
                        // The last node of an aborted transaction: only once every earlier
                        // overwrite of its nodes is complete.
                        let t = &self.txns[&n.xid];
                        if t.nodes.len() == 1 && t.gone_ack > now {
                            return false;
                        }
                    }
                }
                // Active, commit in flight, or unknown (cannot happen for a live node).
                _ => return false,
            }
        }
        if self.fault == Fault::NoCover {
            return true;
        }
        // Which nodes count as committed, per version, found once per call rather than per
        // record (a map look-up of each node's transaction); the newer versions that are
        // settled, likewise. `evictable` asks this for every dirty frame it passes.
        let mine = self.committed_nodes(v, now);
        let newer: Vec<(&Version, Vec<bool>)> = m.versions[idx + 1..]
            .iter()
            .filter(|w| w.settled(now))
            .map(|w| (w, self.committed_nodes(w, now)))
            .collect();
        for s in 0..v.tag.records.len() {
            let Some(u) = offers_with(v, &mine, s) else {
                continue;
            };
            if u == 0 {
                continue; // the loaded value, which recovery assumes by default
            }
            let covered = newer
                .iter()
                .any(|(w, c)| offers_with(w, c, s).is_some_and(|x| x >= u));
            if !covered {
                return false;
            }
        }
        true
    }

    /// Per node of `v`: is its transaction committed and acked by `now` (`committed_by`)?
    fn committed_nodes(&self, v: &Version, now: SimTime) -> Vec<bool> {
        v.tag
            .nodes
            .iter()
            .map(|n| self.committed_by(n.xid, now))
            .collect()
    }

    /// A version slot for a new version of `page` at `now`: a free one, else the oldest
    /// reclaimable one (with the ablation `host.fc_reuse_slots_first`, the oldest
    /// reclaimable one first: the reclaim is the one the default takes when no slot is
    /// free, so the crash argument is unchanged; only fewer slots of a page stay mapped).
    pub(super) fn pick_slot(&self, page: PageNo, now: SimTime) -> Option<(u8, Option<usize>)> {
        let Some(m) = self.meta.get(&page) else {
            return Some((0, None));
        };
        if self.reuse_first {
            if let Some(i) = (0..m.versions.len()).find(|i| self.reclaimable(page, *i, now)) {
                return Some((m.versions[i].slot, Some(i)));
            }
        }
        if let Some(s) = (0..self.versions).find(|s| m.versions.iter().all(|v| v.slot != *s)) {
            return Some((s, None));
        }
        (0..m.versions.len())
            .find(|i| self.reclaimable(page, *i, now))
            .map(|i| (m.versions[i].slot, Some(i)))
    }

    /// The page can take a new version now (a free or reclaimable slot).
    pub(super) fn has_room(&self, page: PageNo, now: SimTime) -> bool {
        self.pick_slot(page, now).is_some()
    }

    /// Reclaims version `idx` of `page` (flag moves first); returns when the slot may be
    /// overwritten.
    pub(super) fn reclaim(
        &mut self,
        core: &mut Core,
        page: PageNo,
        idx: usize,
        now: SimTime,
    ) -> Result<SimTime> {
        let v = self.meta[&page].versions[idx].clone();
        let mut ready = now;
        for (i, n) in v.tag.nodes.iter().enumerate() {
            let me: NodeRef = (page, v.slot, v.vno, i);
            let status = self.txns.get(&n.xid).map(|t| t.status);
            match (self.variant, status) {
                // §3.1.2 cases 1 and 2: the node this one links to gets a TRUE flag.
                (Variant::Cfc, Some(Status::Committed(_))) if self.fault != Fault::SkipFlagMove => {
                    if let Some((p, s, vn)) = n.link {
                        let target = self.meta.get(&p).and_then(|m| {
                            m.versions
                                .iter()
                                .find(|w| w.slot == s && w.vno == vn)
                                .and_then(|w| w.tag.nodes.iter().position(|x| x.xid == n.xid))
                        });
                        if let Some(ti) = target {
                            if let Some(t) =
                                self.program_flag(core, (p, s, vn, ti), 0x00, false, now)?
                            {
                                self.n.flag_moves += 1;
                                ready = ready.max(t);
                            }
                        }
                    }
                }
                // §3.2: an aborted transaction keeps a FALSE flag on a surviving node.
                (Variant::Afc, Some(Status::Aborted))
                    if self.fault != Fault::AfcNoFalseMove && !self.node_true(&v, i) =>
                {
                    let others: Vec<NodeRef> = self.txns[&n.xid]
                        .nodes
                        .iter()
                        .copied()
                        .filter(|o| *o != me)
                        .collect();
                    let has_false = others
                        .iter()
                        .any(|o| self.version(o).is_some_and(|w| !self.node_true(w, o.3)));
                    if !has_false {
                        if let Some(o) = others.last().copied() {
                            if let Some(t) = self.program_flag(core, o, 0xFC, true, now)? {
                                self.n.flag_moves += 1;
                                ready = ready.max(t);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        // Remove the version and its nodes.
        if let Some(m) = self.meta.get_mut(&page) {
            m.versions.remove(idx);
        }
        for (i, n) in v.tag.nodes.iter().enumerate() {
            let me: NodeRef = (page, v.slot, v.vno, i);
            if let Some(t) = self.txns.get_mut(&n.xid) {
                t.nodes.retain(|o| *o != me);
                if t.nodes.is_empty() {
                    self.gone_candidates.insert(n.xid);
                }
            }
        }
        self.n.reclaims += 1;
        Ok(ready)
    }
}

/// The best committed candidate usn version `v` offers for DB slot `s` (None: nothing),
/// given which of its nodes are committed (`FlagCommitEx::committed_nodes`).
fn offers_with(v: &Version, committed: &[bool], s: usize) -> Option<u64> {
    let r = v.tag.records[s];
    let mut best = r.committed.map(|c| c.1);
    if let Some((ni, _, u)) = r.pending {
        if committed[ni as usize] {
            best = Some(best.map_or(u, |b| b.max(u)));
        }
    }
    best
}
