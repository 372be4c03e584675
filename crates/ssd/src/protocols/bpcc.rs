//! `bpcc`: back-pointer cyclic commit (TxFlash §3.3, dynamic transactions per §3.4).
//!
//! Like SCC, each intention record carries a next-link and a transaction is committed once
//! its cycle of next-links is on flash. Unlike SCC, uncommitted intentions are never erased on
//! purpose: each intention also carries a *back pointer*, the version of its page that was
//! last committed when it was written. An intention P_k with back pointer P_i *straddles*
//! every P_j with i < j < k: those are provably uncommitted, and so is any intention whose
//! next-link names one of them. The price is paid by GC: an intention that is the only proof
//! that some uncommitted intention is uncommitted must stay on flash (its *straddle
//! responsibility set*, SRS, is non-empty), so BPCC's GC copies such pages, more of them the
//! more transactions abort.
//!
//! Shared machinery (OOB codec, held writes, page ownership, the uncommitted set, the
//! recovery classification loop) is in `cyclic.rs`, shared with `scc`.
//!
//! OOB layout (29 bytes: the kind byte and the 28 bytes of Table 1):
//!
//! ```text
//! [0]       page kind: 0x01 DATA
//! [1..9]    lpn, u64 LE
//! [9..13]   version, u32 LE
//! [13..21]  next-link lpn, u64 LE
//! [21..25]  next-link version, u32 LE
//! [25..29]  back pointer: the page's last committed version when written, u32 LE
//! ```
//!
//! Commit path: as SCC (held writes, COMMIT programs the held page linking to the first and
//! acks when all intentions are durable, mapping them at the ack; ABORT drops the held page;
//! a plain write is a one-page transaction linking to itself). A new version of a page waits
//! for the ack of the page's previous commit (`Floors`), so its back pointer always names a
//! durably committed version. No forced erases. Isolation: strict and no-page-conflict
//! (a write to a page another active transaction wrote is `Unsupported`, LightTx §4.2).
//!
//! Straddle responsibility sets ("BPCC Garbage Collection"). For an intention P_k with back
//! pointer P_i, SRS(P_k) = {Q_l on flash | Q_l.next = P_j, i < j < k}. An intention may be
//! garbage collected only if its SRS is empty and a higher version of its page is committed.
//! We keep SRS only where the pruning rules leave it non-empty:
//! - Rule 1: Q_l leaves every SRS once a higher version of Q is committed (durably: the
//!   straddler is unpinned with `durable_at` = that commit's ack). The uncommitted set holds
//!   exactly the uncommitted intentions above their page's last committed version.
//! - Rule 2: Q_l needs only the highest straddler of its next-link. The straddlers of one
//!   P_j are a run of aborted intentions possibly followed by one committed one (once a
//!   straddler commits, later versions point back at or above it); so Q_l is held by at most
//!   one straddler, the committed one.
//! - Rule 3: an aborted intention with no committed higher version of its page keeps an
//!   empty SRS: while no version above P_j is committed, every version above P_j on flash
//!   straddles it, so whichever remain are proof enough (and if none remain, case II or III
//!   decides).
//! - Q_l also leaves the SRS when every copy of it is erased (GC erases uncommitted pages
//!   freely; we notice it lazily, see `cyclic.rs`); the straddler is unpinned with
//!   `durable_at` no earlier than the instant that erase completes.
//!
//! So: SRS are computed when a straddler commits (from the uncommitted set, by next-link),
//! a committed straddler with a non-empty SRS stays pinned (GC copies it; `on_moved` follows),
//! and it is released (`durable_at` = the latest instant any member left) when the SRS empties.
//!
//! **`protocol.bpcc_srs = "until-erased"`: the BPCC of LightTx §4.3.** LightTx compares
//! against a BPCC in which "a page whose SRS is not null, even if it is invalid, cannot be
//! erased and has to be moved to the same new location as the valid pages" (Figs. 11, 16).
//! That is §3.3's definition of the SRS without the first two pruning rules: every committed
//! straddler of Q_l's next-link holds Q_l (no rule 2), and Q_l leaves those SRS only when its
//! every copy is erased, not when a higher version of Q commits (no rule 1). Such a Q_l is
//! kept, after the commit that supersedes it, in a second set (`superseded`) that is swept
//! for erased copies like the uncommitted set; a straddler committed later finds it there
//! too (it is still "on flash", §3.3). Rule 3 is kept: LightTx describes uncommitted pages
//! "attached to some committed page". Holding more pages longer only delays GC: every state
//! it reaches is one the pruned form reaches with GC choosing other victims, so the crash
//! argument below is unchanged. After a crash the SRS are rebuilt in the pruned form (below):
//! recovery cannot tell which versions under a page's last committed one were committed once
//! their straddlers may be gone, and the pruned form is all recovery needs.
//!
//! Recovery ("BPCC Recovery"): scan every block, collect every version of every page, and
//! classify each page's newest version P_h by its next-link Q_l against Q's newest h_Q:
//! I. h_Q > l → uncommitted iff some Q_i with i > l and Q_i.back < l is on flash (a
//! straddler); II. h_Q < l → uncommitted; III. h_Q = l → as Q_h, recursively, a cycle being
//! committed. The page's last committed version is P_h if committed, else P_h.back (which is
//! on flash: it is mapped until a newer committed version is durable). Recovery then rebuilds
//! the state needed to keep running: the uncommitted set (every version above its page's last
//! committed one, with all its copies) and, for each of its members Q_l with Q_l.next = P_j,
//! the highest committed straddler of P_j (highest P_k ≤ P's last committed, k > j, back < j),
//! which gets Q_l in its SRS and is pinned. Version counters resume above every version found
//! or named.
//!
//! Why it is atomic and durable, case by case:
//! - Crash before COMMIT: the held last page never reached flash, so the transaction's chain
//!   ends at a missing version (case II) or at a version below a newer one of that page; the
//!   newer one was written after this transaction ended, while the page's last committed
//!   version was below the link, so it straddles the link (case I finds it), and it stays on
//!   flash while needed (SRS, rules above).
//! - Crash with a COMMIT in flight: all intentions durable → a cycle; otherwise a broken chain
//!   as above. A committed Q_l is never straddled (later versions point back at ≥ l), and a
//!   newer version of a page is programmed only after its previous commit is acked, so a
//!   straddler can never appear for an in-flight commit's link.
//! - Acked commit: its cycle is intact until newer committed versions exist; then case I
//!   applies and finds no straddler (committed versions are never straddled).
//! - Uncommitted newest version: falls back to its back pointer, durably committed (floors)
//!   and still mapped.
//! - GC in flight: copies are identical; originals are erased only after copies are durable.
//! - Torn pages read uncorrectable and are ignored (a torn intention's transaction was not
//!   acked; a torn GC copy still has its original).
//!
//! Decisions where the paper is silent or assumes more than the device interface gives:
//! - As in SCC, a new version waits for the ack of its page's previous commit (`Floors`):
//!   otherwise its back pointer could name a version whose transaction is not yet durable,
//!   and recovery would fall back to half of an incomplete transaction (scripted crash test in
//!   `crates/check/tests/bpcc.rs`).
//! - SRS are kept in the pruned form above (at most one holder per uncommitted intention, only
//!   committed straddlers), which the three pruning rules of §3.3 allow; GC's precedence order
//!   is enforced by pinning, not by ordering victims.
//! - Recovery rebuilds the uncommitted set from every version above the last committed one of
//!   each page (not only the newest), since an erased newest version may expose a lower one.
//! - TRIM is refused, like every atomic protocol here.
//!
//! Assumptions: commands arrive in time order; versions are u32 per page.

use crate::commit::{BpccSrs, CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo, TxRef};
use crate::core::{FtlCore, ReadOutcome, PIN_PROTO};
use crate::error::{Result, SsdError};
use crate::gc::FtlHooks;
use crate::protocols::cyclic::{
    self, Floors, Found, Held, Link, Meta, Place, Status, Txs, Uncommitted,
};
use crate::recovery::RecoveryCtx;
use media::Ppa;
use sim::{Lpn, SimTime};
use std::collections::{BTreeMap, BTreeSet};

const NAME: &str = "bpcc";

pub static INFO: ProtocolInfo = ProtocolInfo {
    name: NAME,
    summary: "back-pointer cyclic commit (TxFlash 3.3): next-links plus back pointers; straddlers kept by GC instead of erasing aborted intentions",
    oob_bytes: 29,
    atomic: true,
    needs_checkpoints: false,
    supports_checkpoints: false,
    isolation: &[Isolation::Strict, Isolation::NoPageConflict],
    supports_trim: false,
    create,
    recover,
};

/// A committed intention whose SRS is not empty: pinned.
#[derive(Clone, Debug)]
struct Straddler {
    ppa: Ppa,
    srs: BTreeSet<Link>,
    /// Latest instant at which a member's departure becomes durable.
    release_at: SimTime,
}

#[derive(Clone)]
pub struct BpccFtl {
    /// Per logical page, the highest version used or named so far.
    ver_max: Vec<u32>,
    /// Per logical page, the last committed version (0: the initial one).
    committed: Vec<u32>,
    txs: Txs,
    floors: Floors,
    uncommitted: Uncommitted,
    straddlers: BTreeMap<Link, Straddler>,
    /// Uncommitted intention → the straddlers whose SRS hold it (at most one when pruned).
    holders: BTreeMap<Link, BTreeSet<Link>>,
    straddler_at: BTreeMap<Ppa, Link>,
    /// `until-erased`: uncommitted intentions below their page's last committed version,
    /// kept until every copy is erased (empty when pruned).
    superseded: Uncommitted,
    srs_mode: BpccSrs,
    /// Straddlers ever pinned for a non-empty SRS.
    straddlers_pinned: u64,
    /// The SRS entries of every straddler, summed (kept as they change: `dram_bytes`,
    /// sampled every 256 requests, summed over every straddler — a fifth of a full-scale
    /// Fig. 8 point at 50 % aborts); `check_invariants` checks it against the sum.
    srs_entries: usize,
}

fn create(p: &ProtocolConfig, core: &mut FtlCore) -> Result<Box<dyn CommitProtocol>> {
    let lp = core.logical_pages() as usize;
    Ok(Box::new(BpccFtl {
        ver_max: vec![0; lp],
        committed: vec![0; lp],
        txs: Txs::default(),
        floors: Floors::default(),
        uncommitted: Uncommitted::default(),
        straddlers: BTreeMap::new(),
        holders: BTreeMap::new(),
        straddler_at: BTreeMap::new(),
        superseded: Uncommitted::default(),
        srs_mode: p.bpcc_srs,
        straddlers_pinned: 0,
        srs_entries: 0,
    }))
}

impl BpccFtl {
    /// `member` leaves every SRS that holds it, durably at `t`; a straddler whose SRS
    /// empties is released.
    fn release_member(&mut self, core: &mut FtlCore, member: &Link, t: SimTime) {
        let Some(hs) = self.holders.remove(member) else {
            return;
        };
        for h in hs {
            let Some(s) = self.straddlers.get_mut(&h) else {
                continue;
            };
            if s.srs.remove(member) {
                self.srs_entries -= 1;
            }
            s.release_at = s.release_at.max(t);
            if s.srs.is_empty() {
                if let Some(s) = self.straddlers.remove(&h) {
                    self.straddler_at.remove(&s.ppa);
                    core.unpin(s.ppa, s.release_at);
                }
            }
        }
    }

    /// Uncommitted intentions whose every copy is now erased leave their SRS.
    fn sweep(&mut self, core: &mut FtlCore) {
        for (at, e) in self.uncommitted.sweep(core, false) {
            self.release_member(core, &at, e.gone_at);
        }
        for (at, e) in self.superseded.sweep(core, false) {
            self.release_member(core, &at, e.gone_at);
        }
    }

    /// Makes `intents` (pinned, durable at `ack`) the committed versions of their pages:
    /// maps them, applies rule 1 to the uncommitted versions they supersede, and gives each
    /// its SRS; those with an empty SRS are unpinned.
    fn install(&mut self, core: &mut FtlCore, intents: &[(Meta, Ppa)], ack: SimTime) {
        for (m, ppa) in intents {
            core.map(Lpn(m.at.lpn), *ppa, ack);
            self.committed[m.at.lpn as usize] = m.at.ver;
            self.floors.raise(m.at.lpn, ack);
            // Rule 1: uncommitted lower versions of this page can never be the newest again.
            // Until erased (LightTx §4.3), they stay in their SRS while on flash.
            for x in self.uncommitted.of_page(m.at.lpn) {
                if x.ver < m.at.ver {
                    let e = self.uncommitted.remove(core, &x);
                    match (self.srs_mode, e) {
                        (BpccSrs::UntilErased, Some(e)) => {
                            // Its straddlers are released no earlier than the erases
                            // already noticed and this commit's ack (when rule 1 would
                            // have released them).
                            let gone_at = e.gone_at.max(ack);
                            self.superseded.insert(core, x, e.next, e.places);
                            self.superseded.raise_gone_at(&x, gone_at);
                        }
                        _ => self.release_member(core, &x, ack),
                    }
                }
            }
        }
        for (m, ppa) in intents {
            let (lo, hi) = (m.back.saturating_add(1), m.at.ver);
            let mut members = self.uncommitted.naming(m.at.lpn, lo, hi);
            if self.srs_mode == BpccSrs::UntilErased {
                members.extend(self.superseded.naming(m.at.lpn, lo, hi));
            }
            if members.is_empty() {
                core.unpin(*ppa, ack);
                continue;
            }
            for x in &members {
                // Rule 2: the higher straddler takes over (pruned); every straddler holds
                // the intention (until erased).
                if self.srs_mode == BpccSrs::Pruned {
                    self.release_member(core, x, ack);
                }
                self.holders.entry(*x).or_default().insert(m.at);
            }
            let srs: BTreeSet<Link> = members.into_iter().collect();
            self.srs_entries += srs.len();
            if let Some(old) = self.straddlers.insert(
                m.at,
                Straddler {
                    ppa: *ppa,
                    srs,
                    release_at: ack,
                },
            ) {
                self.srs_entries -= old.srs.len();
            }
            self.straddler_at.insert(*ppa, m.at);
            self.straddlers_pinned += 1;
            #[cfg(feature = "mutants")]
            if crate::mutant::on("bpcc-straddler-unpinned") {
                core.unpin(*ppa, ack);
            }
        }
    }
}

impl FtlHooks for BpccFtl {
    fn on_moved(&mut self, core: &mut FtlCore, from: Ppa, to: Ppa) {
        if self.txs.moved(core, from, to) {
            return;
        }
        if let Some(at) = self.straddler_at.remove(&from) {
            if let Some(s) = self.straddlers.get_mut(&at) {
                s.ppa = to;
            }
            self.straddler_at.insert(to, at);
        }
    }
}

impl CommitProtocol for BpccFtl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn write(
        &mut self,
        core: &mut FtlCore,
        tx: TxRef,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<SimTime> {
        let (accepted, done) = self.txs.accept(core, NAME, tx.seq, lpn, tag, now)?;
        if done {
            return Ok(accepted);
        }
        self.floors.prune(now);
        self.sweep(core);
        let ready = accepted.max(self.floors.get(lpn.0));
        let back = self.committed[lpn.0 as usize];
        let at = cyclic::bump(&mut self.ver_max, lpn.0);
        let held = Held {
            at,
            back,
            tag,
            ready,
        };
        self.txs.push(core, tx.seq, held, true)?;
        Ok(accepted)
    }

    fn commit(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        self.sweep(core);
        let Some(t) = self.txs.finish(core, tx.seq, true)? else {
            return Ok(now);
        };
        let ack = t.durable_at(now);
        let intents: Vec<(Meta, Ppa)> = t.written.iter().map(|i| (i.meta, i.place.ppa)).collect();
        self.install(core, &intents, ack);
        Ok(ack)
    }

    fn abort(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        let Some(t) = self.txs.remove(tx.seq) else {
            return Ok(now);
        };
        // Rule 3: an aborted intention's SRS is empty; it is simply left for GC.
        self.uncommitted.abort(core, t, now);
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
        self.txs.accept_plain(core, NAME, lpn)?;
        self.floors.prune(now);
        self.sweep(core);
        let ready = core.host_transfer_done(now).max(self.floors.get(lpn.0));
        let back = self.committed[lpn.0 as usize];
        let at = cyclic::bump(&mut self.ver_max, lpn.0);
        let meta = Meta { at, next: at, back };
        let (ppa, end) = cyclic::program_intention(core, &meta, tag, ready, true)?;
        core.pin(ppa);
        self.install(core, &[(meta, ppa)], end);
        Ok(end)
    }

    fn read(
        &mut self,
        core: &mut FtlCore,
        lpn: Lpn,
        now: SimTime,
    ) -> Result<(ReadOutcome, SimTime)> {
        core.read_lpn(lpn, now)
    }

    fn dram_bytes(&self) -> Vec<(&'static str, u64)> {
        let srs = self.srs_entries;
        vec![
            ("page versions", self.ver_max.len() as u64 * 8),
            ("active transactions", self.txs.dram_bytes()),
            (
                "uncommitted intentions",
                self.uncommitted.dram_bytes() + self.superseded.dram_bytes(),
            ),
            (
                "straddle responsibility sets",
                (self.straddlers.len() * 40 + srs * 16 + self.holders.len() * 16
                    // A second or later holder of one intention (until erased only).
                    + (srs - self.holders.len().min(srs)) * 8) as u64,
            ),
            ("pending commit acks", self.floors.dram_bytes()),
        ]
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let srs = self.srs_entries;
        vec![
            ("uncommitted_intentions", self.uncommitted.len() as u64),
            ("superseded_intentions", self.superseded.len() as u64),
            ("live_straddlers", self.straddlers.len() as u64),
            ("srs_entries", srs as u64),
            ("straddlers_pinned", self.straddlers_pinned),
        ]
    }

    fn check_invariants(&self, core: &FtlCore) -> std::result::Result<(), String> {
        self.txs.check_invariants(core)?;
        self.uncommitted.check_invariants(core)?;
        for (at, _) in self.uncommitted.iter() {
            if at.ver <= self.committed[at.lpn as usize] {
                return Err(format!(
                    "uncommitted {at} at or below its page's committed version {}",
                    self.committed[at.lpn as usize]
                ));
            }
        }
        self.superseded.check_invariants(core)?;
        if self.srs_mode == BpccSrs::Pruned && self.superseded.len() > 0 {
            return Err("pruned SRS keep no superseded intentions".into());
        }
        for (at, _) in self.superseded.iter() {
            if at.ver >= self.committed[at.lpn as usize] || self.uncommitted.get(at).is_some() {
                return Err(format!(
                    "superseded {at} not below its page's committed version {}",
                    self.committed[at.lpn as usize]
                ));
            }
        }
        for (x, hs) in &self.holders {
            if hs.is_empty() || (self.srs_mode == BpccSrs::Pruned && hs.len() > 1) {
                return Err(format!("{x} held by {hs:?}"));
            }
        }
        for (at, s) in &self.straddlers {
            if s.srs.is_empty() {
                return Err(format!("straddler {at} kept with an empty SRS"));
            }
            if core.page_flags(s.ppa) & PIN_PROTO == 0 {
                return Err(format!("straddler {at} at {} is not pinned", s.ppa));
            }
            if self.straddler_at.get(&s.ppa) != Some(at) {
                return Err(format!("straddler {at} missing from the location index"));
            }
            for x in &s.srs {
                if !self.holders.get(x).is_some_and(|hs| hs.contains(at)) {
                    return Err(format!(
                        "{x} in SRS({at}) but held by {:?}",
                        self.holders.get(x)
                    ));
                }
                if self.uncommitted.get(x).is_none() && self.superseded.get(x).is_none() {
                    return Err(format!("{x} in SRS({at}) is not an uncommitted intention"));
                }
            }
        }
        let held: usize = self.holders.values().map(|hs| hs.len()).sum();
        let srs: usize = self.straddlers.values().map(|s| s.srs.len()).sum();
        if held != srs {
            return Err("SRS holder index out of step".into());
        }
        if self.srs_entries != srs {
            return Err(format!(
                "SRS entry count {} but the straddlers hold {srs}",
                self.srs_entries
            ));
        }
        Ok(())
    }
}

/// Case I of BPCC Recovery: is Q_l (below Q's newest version) committed, i.e. does no
/// straddler of it (Q_i, i > l, back < l) exist on flash?
fn no_straddler(found: &Found, q: u32, l: u32) -> bool {
    !found.above(q, l).iter().any(|(m, _)| m.back < l)
}

fn recover(ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    let found = cyclic::collect(ctx, true)?;
    let status = cyclic::classify(&found, no_straddler);
    let lp = found.pages();
    let ver_max = cyclic::versions_named(&found);
    let mut committed = vec![0u32; lp as usize];
    for lpn in 0..lp {
        let Some((top, _)) = found.top(lpn) else {
            continue;
        };
        let c = if status[lpn as usize] == Status::Committed {
            top.at.ver
        } else {
            top.back
        };
        committed[lpn as usize] = c;
        if c > 0 {
            let Some(ppa) = found.copies(lpn, c).next() else {
                return Err(SsdError::CorruptImage {
                    detail: format!(
                        "lpn {lpn}: newest version {} is uncommitted and its back pointer names version {c}, which is not on flash",
                        top.at.ver
                    ),
                });
            };
            ctx.map(Lpn(lpn), ppa)?;
        }
    }
    // The uncommitted set: every version above its page's last committed one, all copies.
    let mut u = Uncommitted::default();
    for lpn in 0..lp {
        let above = found.above(lpn, committed[lpn as usize]);
        let mut i = 0;
        while i < above.len() {
            let m = above[i].0;
            let mut places = Vec::new();
            while i < above.len() && above[i].0.at == m.at {
                places.push(Place::at(ctx.core, above[i].1));
                i += 1;
            }
            u.insert(ctx.core, m.at, m.next, places);
        }
    }
    // SRS: each uncommitted intention is held by the committed straddler of its next-link:
    // the highest version k of that page with next.ver < k <= last committed, back < next.ver.
    let mut straddlers: BTreeMap<Link, Straddler> = BTreeMap::new();
    let mut holders: BTreeMap<Link, BTreeSet<Link>> = BTreeMap::new();
    let members: Vec<(Link, Link)> = u.iter().map(|(at, e)| (*at, e.next)).collect();
    for (x, next) in members {
        let c = committed[next.lpn as usize];
        if c <= next.ver {
            continue;
        }
        let strad = found
            .above(next.lpn, next.ver)
            .iter()
            .filter(|(m, _)| m.at.ver <= c)
            .rev()
            .find(|(m, _)| m.back < next.ver);
        if let Some((m, ppa)) = strad {
            let s = straddlers.entry(m.at).or_insert_with(|| Straddler {
                ppa: *ppa,
                srs: BTreeSet::new(),
                release_at: SimTime::ZERO,
            });
            s.srs.insert(x);
            holders.entry(x).or_default().insert(m.at);
        }
    }
    let mut straddler_at = BTreeMap::new();
    for (at, s) in &straddlers {
        ctx.pin(s.ppa);
        straddler_at.insert(s.ppa, *at);
    }
    let straddlers_pinned = straddlers.len() as u64;
    let srs_entries = straddlers.values().map(|s| s.srs.len()).sum();
    Ok(Box::new(BpccFtl {
        ver_max,
        committed,
        txs: Txs::default(),
        floors: Floors::default(),
        uncommitted: u,
        straddlers,
        holders,
        straddler_at,
        superseded: Uncommitted::default(),
        srs_mode: ctx.params.bpcc_srs,
        straddlers_pinned,
        srs_entries,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::protocols::cyclic::tests::found;

    #[test]
    fn figure_5_cases_as_the_text_describes_them() {
        // Pages A=0 B=1 C=2 D=3 E=4 (TxFlash Figure 5, as far as §3.3 describes it).
        // A1<->B1 committed; A2,B2 aborted (A2.next=B2, B2 missing); A3<->B3 committed with
        // back pointers to A1 and B1 (straddling A2, B2). C2.next = D2; D4 straddles D2
        // (back 1) -> case I finds a straddler: C2 uncommitted. E4.next = C4 above C's
        // newest C2: case II, uncommitted. D4.next = E4, h_E = 4: case III -> uncommitted.
        let f = found(
            &[
                (0, 1, 1, 1, 0),
                (1, 1, 0, 1, 0),
                (0, 2, 1, 2, 1),
                (0, 3, 1, 3, 1),
                (1, 3, 0, 3, 1),
                (2, 1, 2, 1, 0),
                (2, 2, 3, 2, 1),
                (3, 1, 3, 1, 0),
                (3, 4, 4, 4, 1),
                (4, 4, 2, 4, 3),
                (4, 3, 4, 3, 0),
            ],
            5,
        );
        let s = cyclic::classify(&f, no_straddler);
        assert_eq!(s[0], Status::Committed, "A3 <-> B3 cycle");
        assert_eq!(s[1], Status::Committed);
        assert_eq!(s[2], Status::Uncommitted, "C2 -> D2, straddled by D4");
        assert_eq!(
            s[3],
            Status::Uncommitted,
            "D4 -> E4 -> C4: case III then II"
        );
        assert_eq!(s[4], Status::Uncommitted, "E4 -> C4 above C2: case II");
    }

    #[test]
    fn a_link_below_the_newest_version_without_straddler_is_committed() {
        // P1 -> Q1, Q1 -> P1 committed; Q2 (back 1) committed later, Q3 top (back 2).
        let f = found(
            &[
                (0, 1, 1, 1, 0),
                (1, 1, 0, 1, 0),
                (1, 2, 1, 2, 1),
                (1, 3, 1, 3, 2),
            ],
            2,
        );
        let s = cyclic::classify(&f, no_straddler);
        assert_eq!(s, vec![Status::Committed, Status::Committed]);
        // Same, but Q2 has back pointer 0: it straddles Q1, so P1 is uncommitted.
        let f = found(&[(0, 1, 1, 1, 0), (1, 2, 1, 2, 0)], 2);
        assert_eq!(cyclic::classify(&f, no_straddler)[0], Status::Uncommitted);
    }
}
