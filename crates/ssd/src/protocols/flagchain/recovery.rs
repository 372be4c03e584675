//! Recovery of CFC and AFC from a raw image (Flag Commit §3.1.3, §3.2): read every data
//! page's OOB, classify (`classify.rs`), map the newest committed version of each logical
//! page, and rebuild the tables the protocol needs to go on. Argument: `cfc.rs`, `afc.rs`.

use super::classify::{by_xid, decide, Graph};
use super::meta::{PageMeta, Variant, OFF_FLAG};
use super::{check_medium, internal, Aborted, FlagCommit, Owner, TxEntry};
use crate::commit::CommitProtocol;
use crate::error::{Result, SsdError};
use crate::oob::kind;
use crate::recovery::RecoveryCtx;
use media::{BlockId, PageView, Ppa};
use sim::{Lpn, SimTime};
use std::collections::{BTreeMap, BTreeSet};

/// Recovery (§3.1.3, §3.2): classify every data page, map the newest committed version of
/// each logical page, and rebuild the tables the protocol needs to go on.
pub fn recover(v: Variant, ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    check_medium(v, ctx.core)?;
    let geo = ctx.core.geo.clone();
    if ctx.root.is_some() {
        // Mapping checkpoints add nothing here (the chains decide, not the mapping), and the
        // chains of a transaction may reach below a checkpoint's scan set: scan everything.
        let meta: Vec<BlockId> = ctx.core.ckpt.meta_blocks().to_vec();
        let all: Vec<(BlockId, u32)> = (0..geo.blocks())
            .map(BlockId)
            .filter(|b| !meta.contains(b))
            .map(|b| (b, 0))
            .collect();
        let (scan, t) = crate::recovery::scan_blocks(ctx.core, &all, ctx.ready)?;
        ctx.scan = scan;
        ctx.scanned_blocks = all;
        ctx.ready = ctx.ready.max(t);
    }
    let lp = ctx.core.logical_pages();
    let mut pages: Vec<PageMeta> = Vec::new();
    for (ppa, oob) in ctx.scan.of_kind(kind::DATA) {
        let Some(m) = PageMeta::parse(ppa, oob) else {
            continue;
        };
        if m.lba >= lp {
            return Err(SsdError::CorruptImage {
                detail: format!("{ppa} claims lpn {}, beyond {lp} logical pages", m.lba),
            });
        }
        pages.push(m);
    }
    let block_flags = ctx.params.block_flags;
    let g = Graph::build(&pages, &|p| geo.block_of(p).0, block_flags);
    // Which blocks the scan took from a summary page: a full block with a summary yields its
    // data pages and no entry for the summary slot. (A full block whose summary was lost in
    // the crash looks the same; its flags are read again, which is merely redundant.)
    let current: Vec<bool> = {
        let nb = geo.blocks() as usize;
        let mut count = vec![0u32; nb];
        let mut has_last = vec![false; nb];
        for ppa in &ctx.scan.ppas {
            let b = geo.block_of(*ppa).0 as usize;
            count[b] += 1;
            if geo.page_in_block(*ppa) + 1 == geo.pages_per_block {
                has_last[b] = true;
            }
        }
        let dpb = ctx.core.data_pages_per_block();
        let summaries = ctx.core.cfg.summary_pages;
        pages
            .iter()
            .map(|p| {
                let b = geo.block_of(p.ppa).0 as usize;
                !(summaries && !has_last[b] && count[b] == dpb)
            })
            .collect()
    };
    let dec = {
        // The flag reads are issued together once the scan is done (their addresses come
        // from it) and queue per plane.
        let t0 = ctx.ready;
        let mut t_end = t0;
        let pages_ref = &pages;
        let core = &mut *ctx.core;
        let mut read = |i: usize| -> Result<u8> {
            let (t, view) = core.read_oob(pages_ref[i].ppa, t0)?;
            t_end = t_end.max(t.end);
            Ok(match view {
                PageView::Programmed { oob, .. }
                    if oob.len() > OFF_FLAG && oob[0] == kind::DATA =>
                {
                    oob[OFF_FLAG]
                }
                // Unreadable now: it holds no flag we can use.
                _ => v.initial_flag(0),
            })
        };
        let dec = decide(v, &pages, &g, &current, &mut read)?;
        ctx.ready = ctx.ready.max(t_end);
        dec
    };
    // The largest committed version of each logical page.
    let mut best: Vec<Option<usize>> = vec![None; lp as usize];
    for (i, p) in pages.iter().enumerate() {
        if !dec.in_s_plus[i] {
            continue;
        }
        let b = &mut best[p.lba as usize];
        if b.is_none_or(|j| pages[j].ver < p.ver) {
            *b = Some(i);
        }
    }
    let mut fc = FlagCommit::empty(v, ctx.params, ctx.core);
    fc.next_xid = pages
        .iter()
        .map(|p| p.xid)
        .max()
        .unwrap_or(0)
        .wrapping_add(1)
        .max(1);
    fc.next_ver = pages.iter().map(|p| p.ver).max().unwrap_or(0) + 1;
    let mut mapped = vec![false; pages.len()];
    for (lpn, b) in best.iter().enumerate() {
        if let Some(i) = b {
            ctx.map(Lpn(lpn as u32), pages[*i].ppa)?;
            mapped[*i] = true;
        }
    }
    // Relevance: a committed transaction matters while a page of it is current; an
    // uncommitted one while a page of it is newer than its logical page's current version
    // (were it ever taken as committed, that page would win). The others can lose their
    // flags without changing anything recovery maps: they are neither tracked nor pinned.
    let page_relevant: Vec<bool> = pages
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if dec.in_s_plus[i] {
                mapped[i]
            } else {
                best[p.lba as usize].is_none_or(|j| pages[j].ver < p.ver)
            }
        })
        .collect();
    fc.recovered_below = fc.next_xid;
    fc.relevant = vec![0u64; (fc.next_xid as usize).div_ceil(64)];
    for (i, p) in pages.iter().enumerate() {
        if page_relevant[i] {
            fc.relevant[(p.xid / 64) as usize] |= 1 << (p.xid % 64);
        }
    }
    // Uncommitted transactions that matter stay in the table as aborted until their pages
    // are gone. An inconsistent one keeps a pinned page of a FALSE head (case 6 in `cfc.rs`).
    let mut false_head_page: BTreeMap<u32, usize> = BTreeMap::new();
    for (k, &c) in g.sources.iter().enumerate() {
        let m = g.members_of(c);
        let xid = pages[m[0] as usize].xid;
        if !dec.head_true[k] && dec.is_inconsistent(xid) {
            false_head_page.entry(xid).or_insert(m[0] as usize);
        }
    }
    let (order, starts) = by_xid(&pages);
    let mut perma: BTreeSet<Ppa> = BTreeSet::new();
    for w in starts.windows(2) {
        let grp = &order[w[0]..w[1]];
        let xid = pages[grp[0] as usize].xid;
        if dec.is_committed(xid) || !fc.is_relevant(xid) {
            continue;
        }
        let mut x = Aborted::default();
        for &i in grp {
            let i = i as usize;
            let p = pages[i].ppa;
            x.pages.insert(p);
            fc.owner.insert(p, Owner::Tx(xid));
            if let Some(f) = dec.flags[i] {
                if v == Variant::Afc && !v.is_true(f) {
                    x.holders.push((p, SimTime::ZERO));
                }
                if v == Variant::Cfc && v.is_true(f) {
                    x.true_pages.insert(p);
                }
            }
        }
        if dec.is_inconsistent(xid) {
            fc.c.recovered_inconsistent += 1;
            let Some(&i) = false_head_page.get(&xid) else {
                return Err(internal(format!(
                    "inconsistent XID {xid} without a FALSE head"
                )));
            };
            let p = pages[i].ppa;
            x.pages.remove(&p);
            x.pin = Some(p);
            perma.insert(p);
        } else {
            x.true_pages.clear();
        }
        fc.c.recovered_aborted += 1;
        fc.txs.insert(xid, TxEntry::Aborted(x));
    }
    // Keep every block holding a page of a transaction that matters out of the free pools
    // until `after_recovery`: a free block is erased without `before_erase`, which would skip
    // the flag maintenance.
    let mut live_block = vec![false; geo.blocks() as usize];
    for (i, p) in pages.iter().enumerate() {
        let keep = mapped[i] || perma.contains(&p.ppa) || fc.is_relevant(p.xid);
        if !keep {
            continue;
        }
        live_block[geo.block_of(p.ppa).0 as usize] = true;
        if perma.contains(&p.ppa) {
            ctx.pin(p.ppa);
        } else if !mapped[i] {
            ctx.pin(p.ppa);
            fc.recovered_pins.push(p.ppa);
        }
    }
    // Reprogram watermarks: pages programmed before this recovery may carry a torn partial
    // program that changed no visible bit, so their NOP budget is unknown: never reprogram
    // them. Blocks left without live pages are erased before reuse; partly written ones go
    // on from their first erased page.
    let ppb = geo.pages_per_block as u16;
    for (b, live) in live_block.iter().enumerate() {
        fc.fresh_from[b] = if *live { ppb } else { 0 };
    }
    for (b, next) in &ctx.scan.tails {
        if live_block[b.0 as usize] {
            fc.fresh_from[b.0 as usize] = (*next as u16).min(ppb);
        }
    }
    Ok(Box::new(fc))
}
