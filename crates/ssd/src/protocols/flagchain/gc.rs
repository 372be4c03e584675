//! Garbage collection of CFC and AFC (Flag Commit §3.1.2 with footnote 6, §3.2, §3.4): the
//! `FtlHooks` the FTL calls while it relocates a victim block (`migrate_oob`: flag and Link of
//! each copy; `on_moved`; `before_erase`: the flag moves that must be durable before the
//! erase — CFC keeps a TRUE flag in every group of a committed transaction's chains, AFC keeps
//! a FALSE flag of an aborted transaction — with carrier copies where a flag cannot be
//! reprogrammed in place). Rules and the crash argument: `cfc.rs`, `afc.rs`.

use super::meta::{PageMeta, Variant, BIT_AFC_ABORT, BIT_COMMIT, FLAG_AFC_FALSE, FLAG_TRUE};
use super::{internal, Copied, FlagCommit, Owner, Reloc, TxEntry};
use crate::core::{blank_oob, FtlCore, Stream, WRITTEN};
use crate::error::Result;
use crate::gc::FtlHooks;
use crate::oob::kind;
use media::{BlockId, Content, PageView, Ppa, PuId};
use sim::SimTime;
use std::collections::{BTreeMap, BTreeSet};

impl FlagCommit {
    /// A bound on the instant the erase `relocate` issues after `before_erase` returns `ready`
    /// ends: it starts at the latest of `ready`, the block's erase hold and the array becoming
    /// free, and lasts `erase_ns` plus at most `jitter_ns` (the NAND model draws the extra
    /// array time only when the erase is issued). Without the jitter term the bound was the
    /// shortest erase, so a second erase ordered after this one could start while it was still
    /// in flight (found by the crash checker, seed=1, timing profile
    /// channel=553,erase=3573190,jitter=178567,think=1666).
    pub(super) fn erase_end(core: &FtlCore, block: BlockId, ready: SimTime) -> SimTime {
        let pu = core.geo.pu_of_block(block);
        let t = core.nand.timing();
        ready
            .max(core.erase_not_before(block))
            .max(core.nand.array_free_at(pu))
            + t.erase_ns
            + t.jitter_ns
    }

    /// Copies a page of `victim` (being erased) into the GC stream with a new flag and link,
    /// pinned. Used where a flag cannot be reprogrammed in place.
    pub(super) fn program_carrier(
        &mut self,
        core: &mut FtlCore,
        src: Ppa,
        mut meta: PageMeta,
        ready: SimTime,
    ) -> Result<(Ppa, SimTime)> {
        let (rt, view) = core.read_page(src, ready)?;
        let content = match view {
            PageView::Programmed { data, .. } => match data {
                media::image::DataRef::Tag { tag, .. } => Content::Tag(tag),
                media::image::DataRef::Bytes(b) => Content::Bytes(b.into()),
            },
            other => return Err(internal(format!("carrier source {src} reads {other:?}"))),
        };
        let end_read = rt.end;
        meta.ppa = Ppa::NONE;
        let mut oob = blank_oob(core, kind::DATA);
        meta.write(&mut oob);
        // In the victim's unit if GC can still write there, else wherever there is room
        // without taking another unit's last free block.
        let own = core.geo.pu_of(src);
        let has_room = |core: &FtlCore, pu: PuId, reserve: u32| {
            core.pus[pu.0 as usize].heads[Stream::GC.0 as usize] != u32::MAX
                || core.free_blocks(pu) > reserve
        };
        let pu = if has_room(core, own, 0) {
            own
        } else {
            (0..core.geo.pus())
                .map(PuId)
                .find(|pu| has_room(core, *pu, 1))
                .unwrap_or(own)
        };
        let (to, t) = core.program(Stream::GC, Some(pu), content, &oob, end_read)?;
        core.pin(to);
        self.c.carrier_copies += 1;
        Ok((to, t.end))
    }

    // ------------------------------------------------------------ GC: CFC

    /// §3.1.2 with footnote 6 and §3.4: before `victim` is erased, every committed
    /// transaction that loses pages in it keeps a TRUE flag in every group of its chains.
    pub(super) fn before_erase_cfc(
        &mut self,
        core: &mut FtlCore,
        victim: BlockId,
        copies: &BTreeMap<Ppa, Copied>,
        dropped: &[PageMeta],
        ready: SimTime,
        linked_blocks: &mut BTreeSet<BlockId>,
    ) -> Result<SimTime> {
        let geo = core.geo.clone();
        let in_v = |p: Ppa| p != Ppa::NONE && p.0 < geo.pages() && geo.block_of(p) == victim;
        let dropped_by_ppa: BTreeMap<Ppa, &PageMeta> = dropped.iter().map(|m| (m.ppa, m)).collect();
        // Links that copies carry out of the victim keep their targets linked-from, if the link
        // is valid as recovery judges it: same transaction, to an older page. (A copy may carry
        // a stale link to an address since reused by another transaction.)
        let mut covered: BTreeMap<Ppa, Vec<(u32, u32)>> = BTreeMap::new();
        for c in copies.values() {
            covered
                .entry(c.new_link)
                .or_default()
                .push((c.meta.xid, c.meta.ord));
        }
        // Targets outside the victim that become heads, per (target, XID): the order bound a
        // valid target stays below and the dropped page that links to it. Keyed by XID too: a
        // stale link of another transaction may reach the same address.
        let mut need: BTreeMap<(Ppa, u32), (u32, PageMeta)> = BTreeMap::new();
        for d in dropped {
            let mut cur = *d;
            loop {
                let t = cur.link;
                if t == Ppa::NONE || t.0 >= geo.pages() {
                    break;
                }
                if in_v(t) {
                    if copies.contains_key(&t) {
                        break; // its copy is a TRUE head covering the rest
                    }
                    match dropped_by_ppa.get(&t) {
                        Some(q) if q.xid == cur.xid && q.ord < cur.ord => {
                            cur = **q;
                            continue;
                        }
                        _ => break, // dangling
                    }
                }
                let e = need.entry((t, cur.xid)).or_insert((cur.ord, cur));
                if cur.ord > e.0 {
                    *e = (cur.ord, cur);
                }
                break;
            }
        }
        let mut t_out = ready;
        for &(target, _) in need.keys() {
            linked_blocks.insert(geo.block_of(target));
        }
        for ((target, xid), (ord_bound, via)) in need {
            // Footnote 6: the flag goes on before the erase; a commit still in flight is
            // flagged first (its own flags come before GC's).
            let mut r = ready;
            if let Some(ack) = self.pending.get(&xid) {
                r = r.max(*ack);
            }
            let (rt, view) = core.read_oob(target, r)?;
            self.c.gc_oob_reads += 1;
            let r = rt.end;
            let tm = match view {
                PageView::Programmed { oob, .. } => PageMeta::parse(target, oob),
                _ => None,
            };
            let valid = tm.filter(|m| m.xid == xid && m.ord < ord_bound);
            let Some(tm) = valid else {
                // The link dangles: the rest of the chain went with an earlier erase, which
                // must be durable before this one (until then a crash may bring it back).
                t_out = t_out.max(self.erase_done[geo.block_of(target).0 as usize]);
                continue;
            };
            if self.v.is_true(tm.flag) {
                continue;
            }
            let linked_by_copy = covered
                .get(&target)
                .is_some_and(|v| v.iter().any(|&(x, o)| x == tm.xid && tm.ord < o));
            let linked_by_carrier = self.carriers.get(&target).is_some_and(|v| {
                v.iter().any(|c| {
                    matches!(self.owner.get(c), Some(Owner::Carrier { xid, .. }) if *xid == tm.xid)
                })
            });
            if linked_by_copy || linked_by_carrier {
                continue;
            }
            if self.reprogrammable(core, target) {
                let e = self.clear_flag_bits(core, target, BIT_COMMIT, r, false)?;
                t_out = t_out.max(e);
            } else if !self.is_relevant(xid) {
                // Found by the last recovery with every page of it out of date: whether it
                // counts as committed no longer matters.
                self.c.irrelevant_skips += 1;
            } else {
                // NOP exhausted (or unknown after a crash): keep the dropped page alive as a
                // TRUE copy linking to the target instead.
                let meta = PageMeta {
                    link: target,
                    flag: FLAG_TRUE,
                    ..via
                };
                let (c, e) = self.program_carrier(core, via.ppa, meta, r)?;
                self.owner.insert(c, Owner::Carrier { xid, target });
                self.carriers.entry(target).or_default().push(c);
                t_out = t_out.max(e);
            }
        }
        Ok(t_out)
    }

    /// Releases CFC carriers whose target is erased with `victim` (their link will dangle),
    /// once that erase is durable.
    pub(super) fn release_after_erase_cfc(
        &mut self,
        core: &mut FtlCore,
        victim: BlockId,
        erase_end: SimTime,
    ) {
        let geo = core.geo.clone();
        let lo = geo.first_page(victim);
        let hi = Ppa(lo.0 + geo.pages_per_block);
        let targets: Vec<Ppa> = self.carriers.range(lo..hi).map(|(t, _)| *t).collect();
        for t in targets {
            for c in self.carriers.remove(&t).unwrap_or_default() {
                self.owner.remove(&c);
                core.unpin(c, erase_end);
                self.c.carrier_releases += 1;
            }
        }
    }

    // ------------------------------------------------------------ GC: AFC

    /// §3.2: an aborted transaction that loses pages in `victim` keeps a FALSE flag on a page
    /// outside it, durable before the erase.
    pub(super) fn before_erase_afc(
        &mut self,
        core: &mut FtlCore,
        touched: &BTreeMap<u32, Vec<(Ppa, bool)>>,
        ready: SimTime,
    ) -> Result<SimTime> {
        let mut t_out = ready;
        for (&xid, in_victim) in touched {
            let Some(TxEntry::Aborted(x)) = self.txs.get(&xid) else {
                continue;
            };
            // The victim's pages are already out of `x`; what is listed stays.
            let x = x.clone();
            if x.pages.is_empty() {
                // Nothing or only carriers left (released after this erase): the erases that
                // removed its other pages must be durable first.
                t_out = t_out.max(x.gone_at);
                continue;
            }
            if let Some(d) = x.holders.iter().map(|(_, d)| *d).min() {
                // A FALSE stays outside the victim; it must be durable before the erase.
                t_out = t_out.max(d);
                continue;
            }
            // Every FALSE of it is in the victim: put one on a page that stays.
            let mut placed = None;
            for &p in x.pages.iter() {
                if !self.reprogrammable(core, p) {
                    continue;
                }
                let (rt, view) = core.read_oob(p, ready)?;
                self.c.gc_oob_reads += 1;
                let f = match view {
                    PageView::Programmed { oob, .. } => PageMeta::parse(p, oob).map(|m| m.flag),
                    _ => None,
                };
                match f {
                    Some(f) if !self.v.is_true(f) => {
                        placed = Some((p, rt.end)); // already FALSE
                        break;
                    }
                    Some(f) if f == FLAG_TRUE => {
                        let e = self.clear_flag_bits(core, p, BIT_AFC_ABORT, rt.end, false)?;
                        placed = Some((p, e));
                        break;
                    }
                    _ => {}
                }
            }
            let (holder, durable) = match placed {
                Some(h) => h,
                None => {
                    // No page left can take a reprogram: copy a page of the victim (a FALSE
                    // one if there is one) with a FALSE flag.
                    let src = in_victim
                        .iter()
                        .find(|(_, holder)| *holder)
                        .or_else(|| in_victim.first())
                        .map(|(p, _)| *p);
                    let Some(src) = src else {
                        return Err(internal(format!(
                            "aborted XID {xid} has no FALSE page to carry"
                        )));
                    };
                    let meta = match core
                        .nand
                        .image()
                        .oob(src)
                        .and_then(|o| PageMeta::parse(src, o))
                    {
                        Some(m) => m,
                        None => return Err(internal(format!("carrier source {src} unreadable"))),
                    };
                    let meta = PageMeta {
                        flag: FLAG_AFC_FALSE,
                        ..meta
                    };
                    let (c, e) = self.program_carrier(core, src, meta, ready)?;
                    self.owner.insert(c, Owner::Tx(xid));
                    if let Some(TxEntry::Aborted(x)) = self.txs.get_mut(&xid) {
                        x.carriers.insert(c);
                    }
                    (c, e)
                }
            };
            t_out = t_out.max(durable);
            if let Some(TxEntry::Aborted(x)) = self.txs.get_mut(&xid) {
                x.holders.push((holder, durable));
            }
        }
        Ok(t_out)
    }
}

// ------------------------------------------------------------------ hooks

impl FtlHooks for FlagCommit {
    /// A live page is copied. CFC sets TRUE in the copy of a committed page (§3.1.2, the
    /// relocation rule); both keep the flag of an active transaction's page. The Link of the
    /// copy is translated to the copy of its target when that target was copied earlier in
    /// this relocation and its new address is known (a pinned page); with the block-based
    /// technique (§3.4) it otherwise follows the chain inside the victim to the first page
    /// outside it, so the copy keeps the rest of the chain linked.
    fn migrate_oob(&mut self, core: &FtlCore, from: Ppa, oob: &mut [u8]) {
        let Some(m) = PageMeta::parse(from, oob) else {
            return;
        };
        let geo = &core.geo;
        let victim = geo.block_of(from);
        if self.reloc.as_ref().is_none_or(|r| r.block != victim) {
            self.reloc = Some(Reloc {
                block: victim,
                copies: BTreeMap::new(),
            });
        }
        let committed = match self.owner.get(&from) {
            None | Some(Owner::LastPba(_)) | Some(Owner::Carrier { .. }) => true,
            Some(Owner::Tx(_)) => false,
        };
        let Some(reloc) = self.reloc.as_mut() else {
            return;
        };
        let in_v = |p: Ppa| p != Ppa::NONE && p.0 < geo.pages() && geo.block_of(p) == victim;
        let new_link;
        let mut cur = m;
        loop {
            let t = cur.link;
            if !in_v(t) {
                new_link = t;
                break;
            }
            if let Some(c) = reloc.copies.get(&t) {
                if let Some(to) = c.to {
                    new_link = to;
                    break;
                }
                if !self.block_flags {
                    new_link = t;
                    break;
                }
                cur = c.meta;
                continue;
            }
            if !self.block_flags {
                new_link = t;
                break;
            }
            // §3.4: follow the cluster inside the victim (OOB areas of this block; GC reads
            // them in `before_erase` as well).
            match core.nand.image().oob(t).and_then(|o| PageMeta::parse(t, o)) {
                Some(q) if q.xid == cur.xid && q.ord < cur.ord => cur = q,
                _ => {
                    new_link = Ppa::NONE;
                    break;
                }
            }
        }
        let mut out = m;
        out.link = new_link;
        if committed && self.v == Variant::Cfc {
            out.flag &= !BIT_COMMIT;
        }
        if out.link != m.link {
            self.c.links_rewritten += 1;
        }
        out.write(oob);
        reloc.copies.insert(
            from,
            Copied {
                meta: m,
                new_link,
                to: None,
            },
        );
    }

    fn on_moved(&mut self, core: &mut FtlCore, from: Ppa, to: Ppa) {
        let mut new_link = None;
        if let Some(r) = self.reloc.as_mut() {
            if let Some(c) = r.copies.get_mut(&from) {
                c.to = Some(to);
                new_link = Some(c.new_link);
            }
        }
        // The copy was just issued on its unit: it is durable when that array is next free.
        let end = core.nand.array_free_at(core.geo.pu_of(to));
        let Some(owner) = self.owner.remove(&from) else {
            return;
        };
        match owner {
            Owner::Tx(xid) => match self.txs.get_mut(&xid) {
                Some(TxEntry::Active(a)) => {
                    for p in a.pages.iter_mut() {
                        if p.ppa == from {
                            p.ppa = to;
                            if let Some(l) = new_link {
                                p.link = l;
                            }
                        }
                    }
                    if a.last == from {
                        a.last = to;
                    }
                    a.durable_at = a.durable_at.max(end);
                }
                Some(TxEntry::Aborted(x)) => {
                    if x.pin == Some(from) {
                        x.pin = Some(to);
                    }
                    if x.carriers.remove(&from) {
                        x.carriers.insert(to);
                    }
                    if x.pages.remove(&from) {
                        x.pages.insert(to);
                    }
                    for h in x.holders.iter_mut() {
                        if h.0 == from {
                            *h = (to, end.max(h.1));
                        }
                    }
                }
                None => {}
            },
            Owner::LastPba(lpn) => {
                if let Some(d) = self.dirty.get_mut(&lpn) {
                    d.last_pba = to;
                }
            }
            Owner::Carrier { target, .. } => {
                if let Some(v) = self.carriers.get_mut(&target) {
                    for c in v.iter_mut() {
                        if *c == from {
                            *c = to;
                        }
                    }
                }
            }
        }
        self.owner.insert(to, owner);
    }

    fn before_erase(
        &mut self,
        core: &mut FtlCore,
        block: BlockId,
        ready: SimTime,
    ) -> Result<SimTime> {
        let geo = core.geo.clone();
        let copies = match self.reloc.take() {
            Some(r) if r.block == block => r.copies,
            _ => BTreeMap::new(),
        };
        // The victim's dropped data pages: tracked ones from the owner index, untracked ones
        // (committed) by reading their OOB (CFC only: AFC does nothing for committed pages).
        let mut t = ready;
        let mut dropped: Vec<PageMeta> = Vec::new();
        let mut linked_blocks: BTreeSet<BlockId> = BTreeSet::new();
        let mut touched: BTreeMap<u32, Vec<(Ppa, bool)>> = BTreeMap::new();
        for page in 0..geo.pages_per_block {
            let ppa = geo.ppa(block, page);
            if core.page_flags(ppa) & WRITTEN == 0 || copies.contains_key(&ppa) {
                continue;
            }
            match self.owner.get(&ppa).copied() {
                Some(Owner::Tx(xid)) => {
                    let mut holder = false;
                    if let Some(TxEntry::Aborted(x)) = self.txs.get_mut(&xid) {
                        x.pages.remove(&ppa);
                        x.true_pages.remove(&ppa);
                        holder = x.holders.iter().any(|h| h.0 == ppa);
                        x.holders.retain(|h| h.0 != ppa);
                    }
                    touched.entry(xid).or_default().push((ppa, holder));
                    self.owner.remove(&ppa);
                }
                Some(other) => {
                    return Err(internal(format!(
                        "{ppa} owned as {other:?} is being erased without a copy"
                    )));
                }
                None if self.v == Variant::Cfc => {
                    let (rt, view) = core.read_oob(ppa, ready)?;
                    self.c.gc_oob_reads += 1;
                    t = t.max(rt.end);
                    if let PageView::Programmed { oob, .. } = view {
                        if let Some(m) = PageMeta::parse(ppa, oob) {
                            dropped.push(m);
                        }
                    }
                }
                None => {}
            }
        }
        // Aborted transactions' pages in the victim were dropped above; tracked pages that
        // were copied (pins, carriers) moved with `on_moved`.
        let mut t_out = match self.v {
            Variant::Cfc => {
                self.before_erase_cfc(core, block, &copies, &dropped, t, &mut linked_blocks)?
            }
            Variant::Afc => self.before_erase_afc(core, &touched, t)?,
        };
        t_out = t_out.max(t);
        let erase_end = Self::erase_end(core, block, t_out);
        if self.v == Variant::Cfc {
            self.release_after_erase_cfc(core, block, erase_end);
        }
        // Dropped pages of the victim link to pages in other blocks; until this erase is
        // durable a crash may bring them back, and if a target's block were erased first
        // (two overlapping erases) a restored page would dangle and be a FALSE head of a
        // committed transaction (found by the crash checker, timing profile
        // channel=553,erase=3573190,jitter=178567,think=1666). Those blocks wait.
        for b in linked_blocks {
            if b != block {
                core.hold_erase_until(b, erase_end);
            }
        }
        // An active transaction whose pages were copied out of the victim leaves stale copies
        // there until the erase: its commit flags wait for that (a stale copy of a head would
        // be a FALSE head of a committed transaction).
        for c in copies.values() {
            let Some(to) = c.to else { continue };
            if let Some(Owner::Tx(xid)) = self.owner.get(&to) {
                if let Some(TxEntry::Active(a)) = self.txs.get_mut(xid) {
                    a.durable_at = a.durable_at.max(erase_end);
                }
            }
        }
        self.erase_done[block.0 as usize] = erase_end;
        // Aborted transactions: drop emptied entries; release what only guarded other pages.
        for xid in touched.into_keys() {
            let Some(TxEntry::Aborted(x)) = self.txs.get_mut(&xid) else {
                continue;
            };
            x.gone_at = x.gone_at.max(erase_end);
            if x.true_pages.is_empty() {
                if let Some(p) = x.pin.take() {
                    // No TRUE page of it is left once the erases that removed them are
                    // durable: its FALSE group need not outlive them.
                    core.unpin(p, x.gone_at);
                    x.pages.insert(p);
                }
            }
            if x.pages.is_empty() && !x.carriers.is_empty() {
                // AFC: only carriers are left; nothing of it needs a FALSE any more once the
                // erases of its other pages are durable.
                for c in std::mem::take(&mut x.carriers) {
                    core.unpin(c, x.gone_at);
                    x.pages.insert(c);
                    self.c.carrier_releases += 1;
                }
            }
            if x.is_empty() {
                self.txs.remove(&xid);
            }
        }
        self.fresh_from[block.0 as usize] = 0;
        self.prune_pending(ready);
        Ok(t_out)
    }
}
