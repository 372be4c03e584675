//! Algorithm 3 for `cfc-ex` / `afc-ex` (rules and argument in `mod.rs`): committed XIDs from
//! the redo log after the checkpoint and from the commit flags in the version slots, then per
//! record the highest-usn committed candidate over the complete versions and the redo log.

use super::layout::{
    flag_place, flag_true, log_lpn, slots_base, version_lpn, FcTag, Redo, VersionTag,
};
use super::{versions_for, Variant};
use crate::data::PageNo;
use crate::engine::data_lpns;
use crate::hooks::{RecoverCtx, RecoveredDb};
use crate::{HostError, Result};
use sim::{Lpn, TxnId};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub(super) fn recover_cfc(ctx: &mut RecoverCtx<'_>) -> Result<RecoveredDb> {
    recover(ctx, Variant::Cfc)
}

pub(super) fn recover_afc(ctx: &mut RecoverCtx<'_>) -> Result<RecoveredDb> {
    recover(ctx, Variant::Afc)
}

/// Reads `lpn`: its tag content and record area. With `loaded_ok` (version slot 0, the
/// engine's data area) the page's loaded tag with an untouched record area
/// (`external::load_data_area`) reads as no version: the page as loaded, which is what
/// recovery starts every record from (`Layout::initial_page`, usn 0), as an unmapped slot.
fn read(
    ctx: &mut RecoverCtx<'_>,
    lpn: Lpn,
    loaded_ok: bool,
) -> Result<Option<(Arc<FcTag>, Vec<u8>)>> {
    let (o, tail, t) = ctx
        .device
        .read_delta(lpn, ctx.now)
        .map_err(|e| HostError::Corrupt(format!("reading {lpn}: {e}")))?;
    ctx.now = ctx.now.max(t);
    match o {
        ssd::ReadOutcome::Unmapped => Ok(None),
        ssd::ReadOutcome::Tag(t)
            if loaded_ok
                && t == crate::data::loaded_tag(lpn)
                && tail.iter().all(|&b| b == 0xFF) =>
        {
            Ok(None)
        }
        ssd::ReadOutcome::Tag(t) => match ctx.tags.get(t) {
            Some(c) => match c.strategy_arc::<FcTag>() {
                Some(x) => Ok(Some((x, tail))),
                None => Err(HostError::Corrupt(format!("{lpn} holds {:?}", Some(c)))),
            },
            other => Err(HostError::Corrupt(format!("{lpn} holds {other:?}"))),
        },
        other => Err(HostError::Corrupt(format!("{lpn} reads {other:?}"))),
    }
}

fn recover(ctx: &mut RecoverCtx<'_>, variant: Variant) -> Result<RecoveredDb> {
    let corrupt = HostError::Corrupt;
    let start = ctx.now;
    let before = ctx.device.core.nand.counters();
    let layout = ctx.layout;
    let d = data_lpns(layout);
    let master = Lpn(d as u32);
    let log_base = d as u32 + 1;
    let pages = u64::from(ctx.cfg.log_pages);
    let base = slots_base(layout, ctx.cfg.log_pages);
    let n_slots = versions_for(ctx.cfg.max_c);
    let parts = layout.parts;
    // The master and the redo log after it.
    let (b, has_master) = match read(ctx, master, false)? {
        None => (0, false),
        Some((t, _)) => match &*t {
            FcTag::Master { ckpt_seq } => (*ckpt_seq, true),
            other => return Err(corrupt(format!("the master holds {other:?}"))),
        },
    };
    let mut redo: Vec<Redo> = Vec::new();
    let mut seq = b;
    // The entries of the log's last page when it is not sealed (a run-on restart resumes
    // the log inside it).
    let mut open_tail: Option<Vec<Redo>> = None;
    loop {
        match read(ctx, log_lpn(log_base, pages, seq), false)? {
            Some((t, _)) => match &*t {
                FcTag::Log {
                    seq: s,
                    sealed,
                    entries,
                } if *s == seq => {
                    redo.extend(entries.iter().cloned());
                    if !sealed {
                        open_tail = Some(entries.clone());
                        break;
                    }
                }
                FcTag::Log { .. } => break,
                other => return Err(corrupt(format!("log page {seq} holds {other:?}"))),
            },
            None => break,
        }
        seq += 1;
    }
    let mut committed: BTreeSet<TxnId> = BTreeSet::new();
    for r in &redo {
        if let Redo::Commit { xid } = r {
            committed.insert(*xid);
        }
    }
    // Every version slot of every page: the complete versions and their flags.
    let mut versions: Vec<(Arc<VersionTag>, Vec<bool>)> = Vec::new();
    // Per complete version (as `versions`), its nodes' flag bytes; per page the highest
    // version number any part holds (a run-on restart numbers the next version above it).
    let mut bytes: Vec<Vec<u8>> = Vec::new();
    let mut vno_max: BTreeMap<PageNo, u64> = BTreeMap::new();
    // Pages whose slot 0 holds parts of no complete version (a torn or partly missing one).
    let mut slot0_raw: BTreeSet<PageNo> = BTreeSet::new();
    for p in 0..layout.pages {
        let page = PageNo(p);
        for vs in 0..n_slots {
            let mut got: Vec<(Arc<VersionTag>, Vec<u8>)> = Vec::with_capacity(parts as usize);
            for k in 0..parts {
                let lpn = version_lpn(layout, base, n_slots, page, vs, k);
                match read(ctx, lpn, vs == 0)? {
                    // Slot 0 of a loaded database: every part is read, so each is checked to
                    // hold its own loaded tag with an untouched record area (a page loaded
                    // wrongly in a later part was taken for the loaded page when the scan
                    // stopped at part 0; found by `a_misloaded_page_is_caught_by_recovery`).
                    None if vs == 0 => continue,
                    // A run-on restart reads on past a missing part: a later one may hold
                    // a higher version number (`vno_max`).
                    None if ctx.write_back.is_some() => continue,
                    None => break,
                    Some((t, tail)) => match &*t {
                        FcTag::Data { part, v } if *part == k => {
                            if v.page != page || v.slot != vs {
                                return Err(corrupt(format!(
                                    "{lpn} holds page {} slot {} (expected page {p} slot {vs})",
                                    v.page.0, v.slot
                                )));
                            }
                            got.push((v.clone(), tail));
                        }
                        other => return Err(corrupt(format!("{lpn} holds {other:?}"))),
                    },
                }
            }
            for g in &got {
                let e = vno_max.entry(page).or_insert(0);
                *e = (*e).max(g.0.vno);
            }
            // Complete: every part present with one version number.
            if got.len() != parts as usize || got.iter().any(|g| g.0.vno != got[0].0.vno) {
                if vs == 0 && !got.is_empty() {
                    slot0_raw.insert(page);
                }
                continue;
            }
            let v = got[0].0.clone();
            if v.records.len() != layout.slots(page) as usize {
                return Err(corrupt(format!(
                    "version {} of page {p} has {} records",
                    v.vno,
                    v.records.len()
                )));
            }
            let node_bytes: Vec<u8> = (0..v.nodes.len())
                .map(|i| {
                    let (k, off) = flag_place(parts, i);
                    got[k as usize].1.get(off as usize).copied().unwrap_or(0xFF)
                })
                .collect();
            let flags: Vec<bool> = node_bytes
                .iter()
                .enumerate()
                .map(|(i, &byte)| flag_true(variant, v.nodes[i].init_true, byte))
                .collect();
            versions.push((v, flags));
            bytes.push(node_bytes);
        }
    }
    // Flag-committed XIDs: CFC Def. 3.1 (some TRUE), AFC Def. 3.3 (no FALSE).
    let mut by_xid: BTreeMap<TxnId, (bool, bool)> = BTreeMap::new();
    for (v, flags) in &versions {
        for (n, f) in v.nodes.iter().zip(flags) {
            let e = by_xid.entry(n.xid).or_insert((false, true));
            e.0 |= *f;
            e.1 &= *f;
        }
    }
    for (x, (any, all)) in by_xid {
        let yes = match variant {
            Variant::Cfc => any,
            Variant::Afc => all,
        };
        if yes {
            committed.insert(x);
        }
    }
    // Merge: per record the highest-usn committed candidate.
    let mut db: BTreeMap<PageNo, Vec<(u64, u64)>> = BTreeMap::new();
    let mut take = |p: PageNo, slot: usize, v: u64, usn: u64| -> Result<()> {
        if p.0 >= layout.pages {
            return Err(HostError::Corrupt(format!("a record names page {}", p.0)));
        }
        let e = db
            .entry(p)
            .or_insert_with(|| layout.initial_page(p).into_iter().map(|v| (v, 0)).collect());
        let Some(s) = e.get_mut(slot) else {
            return Err(HostError::Corrupt(format!(
                "slot {slot} beyond page {}",
                p.0
            )));
        };
        if usn >= s.1 {
            *s = (v, usn);
        }
        Ok(())
    };
    // §4.3 merges a page's versions by following Back from the newest one. Merging every
    // complete version by usn is a superset of that (all version slots of a page hold that
    // page's versions) and is what this recovery does; `back-chain-only` (a test hook)
    // merges only the Back chain, to compare the two under the crash checker.
    let mut on_chain = vec![true; versions.len()];
    if ctx.cfg.fault_fc == "back-chain-only" {
        on_chain = vec![false; versions.len()];
        let mut by_page: BTreeMap<PageNo, Vec<usize>> = BTreeMap::new();
        for (i, (v, _)) in versions.iter().enumerate() {
            by_page.entry(v.page).or_default().push(i);
        }
        for idx in by_page.values() {
            let Some(mut cur) = idx.iter().copied().max_by_key(|&i| versions[i].0.vno) else {
                continue;
            };
            loop {
                on_chain[cur] = true;
                let Some((slot, vno)) = versions[cur].0.back else {
                    break;
                };
                match idx
                    .iter()
                    .copied()
                    .find(|&i| versions[i].0.slot == slot && versions[i].0.vno == vno)
                {
                    Some(i) if !on_chain[i] => cur = i,
                    _ => break,
                }
            }
        }
    }
    for (v, _) in versions.iter().zip(&on_chain).filter(|x| *x.1).map(|x| x.0) {
        for (s, r) in v.records.iter().enumerate() {
            if let Some((val, u)) = r.committed {
                take(v.page, s, val, u)?;
            }
            if let Some((ni, val, u)) = r.pending {
                let Some(n) = v.nodes.get(ni as usize) else {
                    return Err(HostError::Corrupt(format!(
                        "version {} of page {} names node {ni}",
                        v.vno, v.page.0
                    )));
                };
                if committed.contains(&n.xid) {
                    take(v.page, s, val, u)?;
                }
            }
        }
    }
    for r in &redo {
        if let Redo::Update {
            xid,
            page,
            slot,
            usn,
            after,
        } = r
        {
            if committed.contains(xid) {
                take(*page, *slot as usize, *after, *usn)?;
            }
        }
    }
    if ctx.write_back.is_some() {
        super::restart::write_back(
            ctx,
            variant,
            super::restart::Found {
                master_b: has_master.then_some(b),
                end_seq: seq,
                open_tail,
                versions: &versions,
                bytes: &bytes,
                vno_max: &vno_max,
                slot0_raw: &slot0_raw,
                committed: &committed,
                redo: &redo,
                db: &db,
            },
        )?;
    }
    let after = ctx.device.core.nand.counters();
    Ok(RecoveredDb {
        pages: db
            .into_iter()
            .map(|(p, v)| (p, v.into_iter().map(|x| x.0).collect()))
            .collect(),
        pages_read: after.reads - before.reads,
        time_ns: ctx.now.since(start),
    })
}
