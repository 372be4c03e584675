//! Normal processing of CFC and AFC at the device interface (Flag Commit §3.1.1, §3.2):
//! BEGIN, WRITE (shadow pages linked by physical address, the dirty page table), COMMIT (the
//! flag on each source group's last page, after every page is durable), ABORT, plain writes,
//! reads through the dirty page table, and the DRAM the tables use. Rules and the crash
//! argument: `cfc.rs`, `afc.rs`.

use super::classify::Graph;
use super::meta::{PageMeta, Variant, BIT_COMMIT, FLAG_CFC_FALSE, FLAG_TRUE};
use super::{internal, unsupported, Aborted, Active, Dirty, FlagCommit, Owner, TxEntry, TxPage};
use crate::commit::{CommitProtocol, TxRef};
use crate::core::{blank_oob, outcome_of, FtlCore, ReadOutcome, Stream};
use crate::error::Result;
use crate::oob::kind;
use media::{BlockId, Content, PageView, Ppa, PuId};
use sim::{Lpn, SimTime};

impl FlagCommit {
    /// The parallel unit the next host page goes to, chosen as `FtlCore::program` would (the
    /// block-based technique must know the block before it writes the Link).
    pub(super) fn pick_pu(&self, core: &mut FtlCore) -> PuId {
        let n = core.geo.pus();
        let mut pu = core.next_pu();
        for _ in 0..n {
            let has_head = core.pus[pu.0 as usize].heads[Stream::HOST.0 as usize] != u32::MAX;
            if has_head || core.free_blocks(pu) > 1 {
                return pu;
            }
            pu = core.next_pu();
        }
        pu
    }

    /// Programs one shadow page of an active transaction (§3.1.1 Update steps 1-4).
    pub(super) fn program_shadow(
        &mut self,
        core: &mut FtlCore,
        xid: u32,
        lpn: Lpn,
        content: Content,
        ready: SimTime,
        committed: bool,
    ) -> Result<SimTime> {
        let v = self.v;
        let block_flags = self.block_flags;
        let ver = self.next_ver;
        let (pu, link, ord, ready) = {
            let pu = if block_flags {
                Some(self.pick_pu(core))
            } else {
                None
            };
            let a = self.active_mut(xid)?;
            let ord = a.next_ord;
            #[cfg(feature = "mutants")]
            let hold = !crate::mutant::on("afc-no-first-hold");
            #[cfg(not(feature = "mutants"))]
            let hold = true;
            let ready = if v == Variant::Afc && ord > 0 && hold {
                // No later page may become durable before the FALSE first page (§3.2: a crash
                // must never leave only TRUE pages of an uncommitted transaction). Needed:
                // without it the crash checker finds such states (mutant `afc-no-first-hold`,
                // docs/PROTOCOLS.md, "Flag Commit: cfc, afc").
                ready.max(a.first_end)
            } else {
                ready
            };
            let mut link = a.last;
            if let Some(pu) = pu {
                // §3.4: join this transaction's cluster in the block the page lands in.
                let head = core.pus[pu.0 as usize].heads[Stream::HOST.0 as usize];
                if head != u32::MAX {
                    // The transaction's newest page in that block. `pages` is in `ord`
                    // order (each write appends the next `ord`; GC moves a page in place),
                    // so the newest one is the first found from the end; the block is a
                    // range of physical pages, tested without a division per page.
                    let lo = core.geo.first_page(BlockId(head)).0;
                    let hi = lo + core.geo.pages_per_block;
                    if let Some(p) = a.pages.iter().rev().find(|p| (lo..hi).contains(&p.ppa.0)) {
                        link = p.ppa;
                    }
                }
            }
            (pu, link, ord, ready)
        };
        let meta = PageMeta {
            ppa: Ppa::NONE,
            lba: lpn.0,
            ver,
            xid,
            ord,
            link,
            // CFC's last page written with COMMIT carries its TRUE flag (§3.3).
            flag: if committed {
                FLAG_TRUE
            } else {
                v.initial_flag(ord)
            },
        };
        let mut oob = blank_oob(core, kind::DATA);
        meta.write(&mut oob);
        let (ppa, t) = core.program(Stream::HOST, pu, content, &oob, ready)?;
        self.next_ver += 1;
        // Dirty page table: remember the last committed version the first time.
        if !self.dirty.contains_key(&lpn) {
            let last = core.lookup(lpn);
            if let Some(l) = last {
                core.pin(l);
                self.owner.insert(l, Owner::LastPba(lpn));
            }
            self.dirty.insert(
                lpn,
                Dirty {
                    xid,
                    last_pba: last.unwrap_or(Ppa::NONE),
                    restamp: false,
                },
            );
            self.active_mut(xid)?.lpns.push(lpn);
        }
        core.pin(ppa);
        // The direct mapping points at the shadow page (§3.1.1 step 4); reads of a dirty page
        // go to its LastPBA instead (see `read`).
        core.map(lpn, ppa, t.end);
        self.owner.insert(ppa, Owner::Tx(xid));
        let a = self.active_mut(xid)?;
        a.pages.push(TxPage { ppa, link, ord });
        a.last = ppa;
        a.next_ord += 1;
        a.durable_at = a.durable_at.max(t.end);
        if ord == 0 {
            a.first_end = t.end;
        }
        Ok(t.end)
    }

    /// The pages COMMIT must flag: CFC one per source group (the group's newest page), AFC the
    /// first page.
    pub(super) fn commit_targets(&self, core: &FtlCore, a: &Active) -> Vec<Ppa> {
        match self.v {
            Variant::Afc => a
                .pages
                .iter()
                .filter(|p| p.ord == 0)
                .map(|p| p.ppa)
                .collect(),
            Variant::Cfc => {
                let metas: Vec<PageMeta> = a
                    .pages
                    .iter()
                    .map(|p| PageMeta {
                        ppa: p.ppa,
                        lba: 0,
                        ver: 0,
                        xid: 0,
                        ord: p.ord,
                        link: p.link,
                        flag: FLAG_CFC_FALSE,
                    })
                    .collect();
                let geo = &core.geo;
                let g = Graph::build(&metas, &|p| geo.block_of(p).0, self.block_flags);
                g.sources
                    .iter()
                    .filter_map(|&c| {
                        g.members_of(c)
                            .iter()
                            .max_by_key(|&&i| metas[i as usize].ord)
                            .map(|&i| metas[i as usize].ppa)
                    })
                    .collect()
            }
        }
    }

    /// A write to `lpn` by `xid` is refused when another active transaction wrote it
    /// (page-level concurrency control is assumed, §3).
    pub(super) fn check_conflict(&self, xid: u32, lpn: Lpn) -> Result<()> {
        if let Some(d) = self.dirty.get(&lpn) {
            if d.xid != xid {
                return Err(unsupported(
                    self.v,
                    format!(
                        "a write to lpn {} that another active transaction wrote (page-level concurrency control is assumed, §3)",
                        lpn.0
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A plain write committed one of the transaction's pages meanwhile: its version is
    /// rewritten so that it carries a later version number (commit order is the order of
    /// COMMITs). `skip`: a page the commit writes anyway.
    pub(super) fn restamp(
        &mut self,
        core: &mut FtlCore,
        xid: u32,
        skip: Option<Lpn>,
        now: SimTime,
    ) -> Result<()> {
        // Only pages a plain write marked need a rewrite (rare): gather those instead of a
        // copy of every page the transaction wrote. Rewriting one page sets no mark.
        let dirty = &self.dirty;
        let lpns: Vec<Lpn> = match self.txs.get(&xid) {
            Some(TxEntry::Active(a)) => a
                .lpns
                .iter()
                .copied()
                .filter(|l| dirty.get(l).is_some_and(|d| d.restamp))
                .collect(),
            _ => return Err(internal(format!("XID {xid} is not active"))),
        };
        for lpn in lpns {
            if Some(lpn) == skip {
                continue;
            }
            let Some(d) = self.dirty.get(&lpn).copied() else {
                continue;
            };
            if !d.restamp {
                continue;
            }
            let Some(cur) = core.lookup(lpn) else {
                continue;
            };
            let (rt, view) = core.read_page(cur, now)?;
            let content = match view {
                PageView::Programmed { data, .. } => match data {
                    media::image::DataRef::Tag { tag, .. } => Content::Tag(tag),
                    media::image::DataRef::Bytes(b) => Content::Bytes(b.into()),
                },
                other => return Err(internal(format!("shadow {cur} reads {other:?}"))),
            };
            self.program_shadow(core, xid, lpn, content, rt.end, false)?;
            self.c.restamp_writes += 1;
        }
        Ok(())
    }

    /// COMMIT after every page is written: a partial program per source group that needs
    /// TRUE (§3.1.1), issued once every shadow page (and every GC copy of one) is durable;
    /// `in_page`: a page programmed TRUE already (`commit_write`), which needs none. The
    /// transaction leaves the table. Returns the ack.
    pub(super) fn finish_commit(
        &mut self,
        core: &mut FtlCore,
        xid: u32,
        now: SimTime,
        in_page: Option<Ppa>,
    ) -> Result<SimTime> {
        let a = match self.txs.remove(&xid) {
            Some(TxEntry::Active(a)) => a,
            other => {
                if let Some(o) = other {
                    self.txs.insert(xid, o);
                }
                return Err(internal(format!("commit of inactive XID {xid}")));
            }
        };
        // Every shadow page (and every GC copy of one) is durable before a flag changes;
        // with `in_page`, that page too (its own TRUE is in its program).
        let ready = now.max(a.durable_at);
        #[cfg(feature = "mutants")]
        let ready = if crate::mutant::on("flag-commit-early") {
            now
        } else {
            ready
        };
        let mut ack = ready;
        for p in self.commit_targets(core, &a) {
            if Some(p) == in_page {
                continue;
            }
            let e = self.clear_flag_bits(core, p, BIT_COMMIT, ready, true)?;
            ack = ack.max(e);
        }
        if a.pages.is_empty() {
            ack = now;
        }
        // T leaves the transaction table (committed, §3.1.1); its pages and the LastPBAs it
        // replaced stay physically needed until the commit is durable.
        for p in &a.pages {
            core.unpin(p.ppa, ack);
            self.owner.remove(&p.ppa);
        }
        for lpn in &a.lpns {
            if let Some(d) = self.dirty.remove(lpn) {
                if d.last_pba != Ppa::NONE {
                    core.unpin(d.last_pba, ack);
                    self.owner.remove(&d.last_pba);
                }
            }
        }
        self.host.remove(&a.host_seq);
        self.pending.insert(xid, ack);
        Ok(ack)
    }

    pub(super) fn prune_pending(&mut self, now: SimTime) {
        self.pending.retain(|_, ack| *ack > now);
    }
}

// ------------------------------------------------------------------ the protocol

impl CommitProtocol for FlagCommit {
    fn name(&self) -> &'static str {
        self.v.name()
    }

    fn begin(&mut self, _core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        let xid = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1).max(1);
        self.host.insert(tx.seq, xid);
        self.txs.insert(
            xid,
            TxEntry::Active(Active {
                host_seq: tx.seq,
                pages: Vec::new(),
                last: Ppa::NONE,
                next_ord: 0,
                durable_at: now,
                first_end: now,
                lpns: Vec::new(),
            }),
        );
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
        core.check_lpn(lpn)?;
        self.prune_pending(now);
        let xid = self.xid_of(tx)?;
        self.check_conflict(xid, lpn)?;
        let ready = core.host_transfer_done(now);
        self.program_shadow(core, xid, lpn, Content::Tag(tag), ready, false)?;
        if let Some(d) = self.dirty.get_mut(&lpn) {
            // Written again after a plain write: this version is newer than it already.
            d.restamp = false;
        }
        Ok(ready)
    }

    fn commit(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        self.prune_pending(now);
        let xid = self.xid_of(tx)?;
        self.restamp(core, xid, None, now)?;
        self.finish_commit(core, xid, now, None)
    }

    fn fuses_commit_write(&self) -> bool {
        self.v == Variant::Cfc && !self.flag_reprogram
    }

    /// CFC, §3.3: the last shadow page was buffered at commit, so it is programmed with its
    /// flag TRUE and no partial program is needed for it. Its program starts only when every
    /// earlier page of the transaction (every GC copy of one, every erase of a stale copy,
    /// every restamp) is durable: a TRUE page durable before an earlier page would commit a
    /// transaction with that page missing. Other source groups (a chain GC split, or §3.4's
    /// case of a last page outside a head cluster) still get a partial program each.
    fn commit_write(
        &mut self,
        core: &mut FtlCore,
        tx: TxRef,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        core.check_lpn(lpn)?;
        self.prune_pending(now);
        let xid = self.xid_of(tx)?;
        self.check_conflict(xid, lpn)?;
        self.restamp(core, xid, Some(lpn), now)?;
        let transfer = core.host_transfer_done(now);
        let durable = match self.txs.get(&xid) {
            Some(TxEntry::Active(a)) => a.durable_at,
            _ => return Err(internal(format!("commit of inactive XID {xid}"))),
        };
        let ready = transfer.max(durable);
        #[cfg(feature = "mutants")]
        let ready = if crate::mutant::on("flag-commit-early") {
            transfer
        } else {
            ready
        };
        let end = self.program_shadow(core, xid, lpn, Content::Tag(tag), ready, true)?;
        if let Some(d) = self.dirty.get_mut(&lpn) {
            d.restamp = false;
        }
        let last = self.active_mut(xid)?.last;
        self.c.commit_flags_in_page += 1;
        core.stats.commit_flags_in_page += 1;
        self.finish_commit(core, xid, end, Some(last))
    }

    fn abort(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        let xid = self.xid_of(tx)?;
        let a = match self.txs.remove(&xid) {
            Some(TxEntry::Active(a)) => a,
            other => {
                if let Some(o) = other {
                    self.txs.insert(xid, o);
                }
                return Err(internal(format!("abort of inactive XID {xid}")));
            }
        };
        self.host.remove(&a.host_seq);
        // Undo in the direct mapping table from LastPBA (§3.1.1 Abort). Nothing is written:
        // CFC pages stay FALSE, AFC's first page is FALSE already.
        for lpn in &a.lpns {
            if let Some(d) = self.dirty.remove(lpn) {
                if d.last_pba != Ppa::NONE {
                    core.map(*lpn, d.last_pba, now);
                    core.unpin(d.last_pba, now);
                    self.owner.remove(&d.last_pba);
                } else {
                    core.unmap(*lpn, now);
                }
            }
        }
        let mut x = Aborted::default();
        for p in &a.pages {
            core.unpin(p.ppa, now);
            x.pages.insert(p.ppa);
            if p.ord == 0 && self.v == Variant::Afc {
                // AFC: the first page's FALSE, durable once it (or its copy) is.
                x.holders.push((p.ppa, a.durable_at));
            }
        }
        if !x.is_empty() {
            self.txs.insert(xid, TxEntry::Aborted(x));
        } else {
            for p in &a.pages {
                self.owner.remove(&p.ppa);
            }
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
        core.check_lpn(lpn)?;
        self.prune_pending(now);
        // A one-page transaction: the device holds all of it, so its page is programmed with
        // the flag already TRUE (the buffered-last-page case of §3.3) and the program is the
        // commit.
        let xid = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1).max(1);
        let meta = PageMeta {
            ppa: Ppa::NONE,
            lba: lpn.0,
            ver: self.next_ver,
            xid,
            ord: 0,
            link: Ppa::NONE,
            flag: FLAG_TRUE,
        };
        self.next_ver += 1;
        let mut oob = blank_oob(core, kind::DATA);
        meta.write(&mut oob);
        let ready = core.host_transfer_done(now);
        let (ppa, t) = core.program(Stream::HOST, None, Content::Tag(tag), &oob, ready)?;
        match self.dirty.get_mut(&lpn) {
            Some(d) => {
                // An active transaction wrote this page: the plain write is committed before
                // that transaction, so it becomes the page's LastPBA.
                core.pin(ppa);
                self.owner.insert(ppa, Owner::LastPba(lpn));
                let old = d.last_pba;
                d.last_pba = ppa;
                d.restamp = true;
                if old != Ppa::NONE {
                    self.owner.remove(&old);
                    core.unpin(old, t.end);
                }
            }
            None => core.map(lpn, ppa, t.end),
        }
        Ok(t.end)
    }

    fn read(
        &mut self,
        core: &mut FtlCore,
        lpn: Lpn,
        now: SimTime,
    ) -> Result<(ReadOutcome, SimTime)> {
        core.check_lpn(lpn)?;
        // The newest committed version: a dirty page's LastPBA, otherwise the mapping.
        let ppa = match self.dirty.get(&lpn) {
            Some(d) => (d.last_pba != Ppa::NONE).then_some(d.last_pba),
            None => core.lookup(lpn),
        };
        let Some(ppa) = ppa else {
            return Ok((ReadOutcome::Unmapped, now));
        };
        let (t, view) = core.read_page(ppa, now)?;
        Ok((outcome_of(view), t.end))
    }

    fn after_recovery(&mut self, core: &mut FtlCore, now: SimTime) -> Result<SimTime> {
        // The blocks of every page recovery pinned are full now, so they are erased only by
        // GC (through `before_erase`), never lazily like free blocks.
        for p in std::mem::take(&mut self.recovered_pins) {
            core.unpin(p, SimTime::ZERO);
        }
        // Those blocks held back the free pools; reclaim them now, as `maintain` would before
        // the first command (the FTL writes a mapping checkpoint before any command).
        let mut end = now;
        for pu in 0..core.geo.pus() {
            let pu = PuId(pu);
            if core.needs_gc(pu) {
                end = end.max(crate::gc::collect(core, self, pu, now)?);
            }
        }
        Ok(end)
    }

    fn dram_bytes(&self) -> Vec<(&'static str, u64)> {
        let mut tx_bytes = 0u64;
        for e in self.txs.values() {
            tx_bytes += 24; // XID, status, NPage, LastPage, next order, durable instant
            tx_bytes += match e {
                TxEntry::Active(a) => a.pages.len() as u64 * 12 + a.lpns.len() as u64 * 4,
                TxEntry::Aborted(x) => {
                    (x.pages.len() + x.carriers.len() + x.true_pages.len()) as u64 * 4
                        + x.holders.len() as u64 * 12
                }
            };
        }
        vec![
            ("transaction table", tx_bytes + self.host.len() as u64 * 8),
            ("dirty page table", self.dirty.len() as u64 * 12),
            ("tracked page index", self.owner.len() as u64 * 12),
            (
                "flag carriers",
                self.carriers.values().map(|v| 4 + 4 * v.len() as u64).sum(),
            ),
            ("commits in flight", self.pending.len() as u64 * 12),
            ("reprogram watermarks", self.fresh_from.len() as u64 * 2),
            ("recovered relevance bits", self.relevant.len() as u64 * 8),
        ]
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.c;
        vec![
            ("commit_flag_writes", c.commit_flag_writes),
            ("gc_flag_writes", c.gc_flag_writes),
            ("commit_flags_in_page", c.commit_flags_in_page),
            ("carrier_copies", c.carrier_copies),
            ("carrier_releases", c.carrier_releases),
            ("links_rewritten", c.links_rewritten),
            ("gc_oob_reads", c.gc_oob_reads),
            ("restamp_writes", c.restamp_writes),
            ("recovered_aborted", c.recovered_aborted),
            ("recovered_inconsistent", c.recovered_inconsistent),
            ("irrelevant_skips", c.irrelevant_skips),
            // Pages kept live only to keep commits decidable: CFC carriers, AFC carriers and
            // the pinned FALSE pages of inconsistent transactions.
            ("live_record_pages", self.live_record_pages()),
            (
                "active_txs",
                self.txs
                    .values()
                    .filter(|e| matches!(e, TxEntry::Active(_)))
                    .count() as u64,
            ),
            (
                "aborted_txs_tracked",
                self.txs
                    .values()
                    .filter(|e| matches!(e, TxEntry::Aborted(_)))
                    .count() as u64,
            ),
        ]
    }

    fn check_invariants(&self, core: &FtlCore) -> std::result::Result<(), String> {
        self.check_tables(core)
    }
}
