//! Page versions of `cfc-ex` / `afc-ex`: writing one (pending records, nodes with Link, Back;
//! Algorithm 1 line 7), restoring invalid records into it first (Algorithm 2 line 4), and
//! programming commit flags into the record area. The reclaim rules that free a slot for it
//! are in `gc.rs`; layout and correctness argument: `mod.rs`.

use super::layout::{flag_place, version_lpn, FcTag, NodeTag, RecTag, VersionTag};
use super::tables::{NodeRef, Status, Version};
use super::{FlagCommitEx, Variant};
use crate::data::{PageImage, PageNo, TagContent};
use crate::engine::Core;
use crate::{HostError, Result};
use sim::{SimTime, TxnId};
use std::sync::Arc;

impl FlagCommitEx {
    /// Programs node `n`'s flag with `byte` at `start` or later (its version's write
    /// complete). Returns the program's completion, or None when the node is gone or already
    /// programmed.
    pub(super) fn program_flag(
        &mut self,
        core: &mut Core,
        n: NodeRef,
        byte: u8,
        mark: bool,
        start: SimTime,
    ) -> Result<Option<SimTime>> {
        let (page, vslot, vno, i) = n;
        let parts = core.layout.parts;
        let base = self.slots_base;
        let Some(v) = self.meta.get_mut(&page).and_then(|m| {
            m.versions
                .iter_mut()
                .find(|v| v.slot == vslot && v.vno == vno)
        }) else {
            return Ok(None);
        };
        if v.flags[i].is_some() {
            return Ok(None);
        }
        let (k, off) = flag_place(parts, i);
        let lpn = version_lpn(&core.layout, base, self.versions, page, vslot, k);
        let at = start.max(v.ack);
        let t = core
            .device
            .write_delta(lpn, off, &[byte], at)
            .map_err(Core::dev_err(
                at,
                format!("programming a commit flag in {lpn}"),
            ))?;
        v.flags[i] = Some(t);
        v.marks[i] = mark;
        self.flag_ack = self.flag_ack.max(t);
        self.n.flag_programs += 1;
        Ok(Some(t))
    }

    /// Algorithm 2 line 4's invalid records, "restored later by reading from disk": before a
    /// new version of `page` is written, each invalid slot's committed value is read back from
    /// the newest version that holds it and the slot is valid again, so the new version
    /// carries it. Returns when those reads are complete.
    ///
    /// Without this an invalid slot stayed invalid until a later commit overwrote it, and the
    /// version holding its committed value could never be reclaimed (§4.3: no newer version
    /// covers it). With `VERSIONS` slots per page, a page whose every version was pinned that
    /// way (or was the newest) could never be written again: its frame unevictable, and once
    /// every frame was, the engine restarted transactions for room forever. Found as the
    /// never-ending seed-9 run of `tests/flagcommit_ex.rs`'s afc-ex planted-reclaim test
    /// (tiny config, log_pages = 8; it hangs without the plant too).
    pub(super) fn restore_invalid(
        &mut self,
        core: &mut Core,
        page: PageNo,
        now: SimTime,
    ) -> Result<SimTime> {
        self.restore_invalid_except(core, page, None, now)
    }

    /// `restore_invalid`, where version slot `read` is being read anyway (a fetch's newest
    /// version): no second read of it.
    fn restore_invalid_except(
        &mut self,
        core: &mut Core,
        page: PageNo,
        read: Option<u8>,
        now: SimTime,
    ) -> Result<SimTime> {
        let m = &self.meta[&page];
        if !m.any_absent {
            debug_assert!(
                m.slots.iter().all(|s| !s.absent),
                "page {}: an invalid slot without any_absent",
                page.0
            );
            return Ok(now); // no invalid slot: nothing to read or restore
        }
        let mut reads: Vec<u8> = Vec::new();
        let mut fixed = Vec::new();
        for (i, s) in m.slots.iter().enumerate() {
            if !s.absent {
                continue;
            }
            fixed.push(i);
            let (_, u) = s.committed;
            if u == 0 {
                continue; // the loaded value: nothing to read
            }
            let holder = m.versions.iter().rev().find(|v| {
                let r = v.tag.records[i];
                r.committed.is_some_and(|c| c.1 == u)
                    || r.pending.is_some_and(|(ni, _, pu)| {
                        pu == u && self.committed_by(v.tag.nodes[ni as usize].xid, now)
                    })
            });
            if let Some(v) = holder {
                if !reads.contains(&v.slot) && Some(v.slot) != read {
                    reads.push(v.slot);
                }
            }
        }
        let mut done = now;
        for vslot in reads {
            let first = version_lpn(&core.layout, self.slots_base, self.versions, page, vslot, 0);
            core.trace(
                now,
                workload::txn::TxCmd::Read {
                    lpn: first,
                    pages: core.layout.parts,
                },
            );
            for k in 0..core.layout.parts {
                let lpn = version_lpn(&core.layout, self.slots_base, self.versions, page, vslot, k);
                let (_, t) = core.device.read(lpn, now).map_err(Core::dev_err(
                    now,
                    format!("reading {lpn} (restoring a record)"),
                ))?;
                done = done.max(t);
            }
            core.stats.page_reads += 1;
            self.n.merge_reads += 1;
        }
        let m = self.meta.get_mut(&page).expect("meta exists");
        m.any_absent = false;
        for i in fixed {
            m.slots[i].absent = false;
            self.n.restored += 1;
        }
        Ok(done)
    }

    /// A buffer miss on `page` (§4.3: "the latest page content can be obtained by merging
    /// those versions"): reads the newest version, and every older version holding a live
    /// committed record the newest one lacks (a record invalid since an abort, reached by
    /// Back), which makes those records valid again in memory (so the next write-back needs
    /// no read for them). A page never written by the strategy is read at version slot 0.
    /// With the ablation `host.fc_no_merge_reads` only the page's slot 0 is read, as if its
    /// content were in one physical page, and invalid records are read back only at the
    /// next write-back. Returns when the reads are complete.
    pub(super) fn fetch_page(
        &mut self,
        core: &mut Core,
        page: PageNo,
        now: SimTime,
    ) -> Result<SimTime> {
        let newest = self
            .meta
            .get(&page)
            .and_then(|m| m.versions.last())
            .map(|v| v.slot);
        let vslot = match (self.merge_reads, newest) {
            (true, Some(vslot)) => vslot,
            (_, None) if self.slot0_raw.contains(&page) => 0,
            _ => {
                self.n.fetch_versions_read += 1;
                return core.read_page(page, now);
            }
        };
        let parts = core.layout.parts;
        let first = version_lpn(&core.layout, self.slots_base, self.versions, page, vslot, 0);
        core.trace(
            now,
            workload::txn::TxCmd::Read {
                lpn: first,
                pages: parts,
            },
        );
        let mut done = now;
        for k in 0..parts {
            let lpn = version_lpn(&core.layout, self.slots_base, self.versions, page, vslot, k);
            let (_, t) = core
                .device
                .read(lpn, now)
                .map_err(Core::dev_err(now, format!("reading {lpn}")))?;
            done = done.max(t);
        }
        core.stats.page_reads += 1;
        let before = self.n.merge_reads;
        let merged = self.restore_invalid_except(core, page, Some(vslot), now)?;
        self.n.fetch_versions_read += 1 + (self.n.merge_reads - before);
        Ok(done.max(merged))
    }

    /// Writes a new version of `page` from the buffered state (Algorithm 1 line 7).
    pub(super) fn write_version(
        &mut self,
        core: &mut Core,
        page: PageNo,
        now: SimTime,
    ) -> Result<SimTime> {
        self.fold(page, now);
        Self::meta_of(&mut self.meta, core, page);
        let restored = self.restore_invalid(core, page, now)?;
        let Some((vslot, reclaim)) = self.pick_slot(page, now) else {
            return Err(HostError::Stuck(format!(
                "internal: page {} has no version slot to write to",
                page.0
            )));
        };
        let mut start = restored;
        let mut reclaimed_xids: Vec<TxnId> = Vec::new();
        if let Some(idx) = reclaim {
            reclaimed_xids = self.meta[&page].versions[idx]
                .tag
                .nodes
                .iter()
                .map(|n| n.xid)
                .collect();
            start = start.max(self.reclaim(core, page, idx, now)?);
        }
        // Build the version.
        let m = &self.meta[&page];
        // `pending_at` lists exactly the slots with a pending record (a write already visits
        // every slot, so checking here costs no more than the write).
        debug_assert!(
            m.pending_at.iter().copied().eq(m
                .slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.pending.is_some())
                .map(|(i, _)| i as u16)),
            "page {}: pending_at {:?} out of step with the slots",
            page.0,
            m.pending_at
        );
        let back = m.versions.last().map(|v| (v.slot, v.vno));
        let vno = m.next_vno;
        let mut nodes: Vec<NodeTag> = Vec::new();
        let mut records = Vec::with_capacity(m.slots.len());
        for s in &m.slots {
            let pending = match s.pending {
                Some((x, val, u, _)) => {
                    let ni = match nodes.iter().position(|n| n.xid == x) {
                        Some(i) => i,
                        None => {
                            let t = self.txns.get(&x);
                            let link = t.and_then(|t| t.nodes.last()).map(|n| (n.0, n.1, n.2));
                            let init_true = self.variant == Variant::Afc
                                && t.is_some_and(|t| {
                                    t.nodes
                                        .iter()
                                        .any(|n| self.version(n).is_some_and(|v| v.ack <= now))
                                });
                            nodes.push(NodeTag {
                                xid: x,
                                link,
                                init_true,
                            });
                            nodes.len() - 1
                        }
                    };
                    Some((ni as u8, val, u))
                }
                None => None,
            };
            records.push(RecTag {
                committed: if s.absent { None } else { Some(s.committed) },
                pending,
            });
        }
        let tag = Arc::new(VersionTag {
            page,
            slot: vslot,
            vno,
            back,
            nodes: nodes.clone(),
            records,
        });
        let parts = core.layout.parts;
        let mut t0 = 0;
        for k in 0..parts {
            let tv = tag.clone();
            let t = core
                .tags
                .add(|| TagContent::Strategy(Arc::new(FcTag::Data { part: k, v: tv })));
            if k == 0 {
                t0 = t;
            }
        }
        let first = version_lpn(&core.layout, self.slots_base, self.versions, page, vslot, 0);
        core.trace(
            start,
            workload::txn::TxCmd::Write {
                tx: None,
                lpn: first,
                pages: parts,
            },
        );
        let mut end = start;
        for k in 0..parts {
            let lpn = version_lpn(&core.layout, self.slots_base, self.versions, page, vslot, k);
            let t = core
                .device
                .write_plain(lpn, t0 + u64::from(k), start)
                .map_err(Core::dev_err(start, format!("writing {lpn}")))?;
            end = end.max(t);
        }
        core.stats.page_writes += 1;
        self.n.versions_written += 1;
        self.data_ack = self.data_ack.max(end);
        for x in reclaimed_xids {
            if let Some(t) = self.txns.get_mut(&x) {
                t.gone_ack = t.gone_ack.max(end);
            }
        }
        self.restart_dirty.remove(&page);
        let m = self.meta.get_mut(&page).expect("meta exists");
        m.next_vno += 1;
        for s in &mut m.slots {
            if !s.absent {
                s.on_disk = true;
            }
            if let Some(p) = s.pending.as_mut() {
                p.3 = true;
            }
            s.dirty = false;
        }
        let nn = nodes.len();
        self.n.versions_live_max = self.n.versions_live_max.max(m.versions.len() as u64 + 1);
        m.versions.push(Version {
            slot: vslot,
            vno,
            ack: end,
            tag,
            flags: vec![None; nn],
            marks: vec![false; nn],
        });
        if vslot == 0 {
            let values: Vec<u64> = m
                .slots
                .iter()
                .map(|s| s.pending.map_or(s.committed.0, |p| p.1))
                .collect();
            core.disk[page.0 as usize] = Some((
                t0,
                Arc::new(PageImage {
                    page,
                    lsn: 0,
                    values,
                }),
            ));
        }
        // Nodes, and flags of transactions whose commit is in flight (`mod.rs`).
        for (i, n) in nodes.iter().enumerate() {
            let me: NodeRef = (page, vslot, vno, i);
            let status = match self.txns.get_mut(&n.xid) {
                Some(t) => {
                    t.nodes.push(me);
                    t.status
                }
                None => continue,
            };
            if let Status::Committed(a) = status {
                let needed = match self.variant {
                    Variant::Cfc => true,
                    Variant::Afc => !n.init_true,
                };
                if needed {
                    self.program_flag(
                        core,
                        me,
                        if self.variant == Variant::Cfc {
                            0x00
                        } else {
                            0xFE
                        },
                        false,
                        a.max(end),
                    )?;
                }
            }
        }
        self.forget();
        Ok(end)
    }
}
