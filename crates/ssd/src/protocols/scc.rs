//! `scc`: simple cyclic commit (TxFlash §3.2, with dynamic transactions per §3.4).
//!
//! Every page a transaction writes is an *intention record* carrying, besides its logical page
//! and version, a *next-link*: the (page, version) of the next intention of the same
//! transaction; the last links back to the first, so a committed transaction is a cycle of
//! next-links and needs no commit record. A transaction is committed once all its intentions
//! are durable. Versions count per logical page from 1; a page never written is at version 0
//! with a next-link to itself ("SCC Initialization"), which needs no flash.
//!
//! Shared machinery (OOB codec, held writes, page ownership, the uncommitted set, the
//! recovery classification loop) is in `cyclic.rs`, shared with `bpcc`.
//!
//! OOB layout (25 bytes: the kind byte and the 24 bytes of Table 1):
//!
//! ```text
//! [0]       page kind: 0x01 DATA
//! [1..9]    lpn, u64 LE
//! [9..13]   version, u32 LE
//! [13..21]  next-link lpn, u64 LE
//! [21..25]  next-link version, u32 LE
//! ```
//!
//! Commit path:
//! - WRITE holds the page in a buffer until the transaction's next WRITE (or its COMMIT)
//!   tells what its next-link is (§3.4); then it is programmed and pinned. Writes return when
//!   the data is accepted.
//! - COMMIT programs the held page with a next-link to the first page, then acks when every
//!   intention is durable; the pages are mapped at that ack (`durable_at`), which holds the
//!   erase of the versions they replace until then. A plain write is a one-page transaction
//!   linking to itself, acked when durable.
//! - ABORT drops the held page (never programmed) and unpins the programmed ones; they become
//!   *uncommitted intentions* (`Uncommitted`), with every physical copy GC may have left.
//! - SCC Invariant ("If P_j ∈ S, any intention P_i ∈ S ∪ R with i < j is committed"): before
//!   a newer version of P is programmed, every uncommitted intention of P and every uncommitted
//!   intention whose next-link names a version of P is erased ("Handling Uncommitted Intention
//!   Records"). We empty and erase the blocks holding them (`gc::relocate`, `Reason::Forced`;
//!   counted in `forced_erases`), and the new version waits for those erases to complete
//!   (issued at ABORT in the background by default, see below).
//!   An intention GC already erased is simply dropped from the set (see `cyclic.rs` on how
//!   erases are noticed).
//! - A new version also waits for the ack of the previous commit of its page (`Floors`), so
//!   the version below the newest is always durably committed when the newest reaches flash.
//! - Isolation: strict and no-page-conflict. A write to a page another active transaction
//!   wrote is `Unsupported` (LightTx §4.2), as is rewriting a page the same transaction has
//!   already programmed; rewriting the held page replaces its data.
//! - GC: committed intentions are mapped until a newer committed version is durable; active
//!   intentions are pinned; uncommitted ones are neither, so GC may erase them at any time
//!   ("SCC Garbage Collection"). GC copies keep the OOB, so duplicates carry identical
//!   metadata; `on_moved` follows pinned intentions.
//!
//! Recovery ("SCC Recovery"): scan every block (summary pages where present), collect the
//! intentions per page, and classify each page's newest version P_h by its next-link Q_l
//! against Q's newest version h_Q: I. h_Q > l → committed (SCC Invariant: Q_l is committed);
//! II. h_Q < l → uncommitted (Q_l never reached flash, and a committed Q_l is never erased
//! before a newer committed Q exists); III. h_Q = l → as Q_h, recursively; a cycle → committed.
//! A committed P_h is mapped; otherwise the second-newest version (committed: it was durably
//! committed before P_h was programmed, and it is never erased while it is the newest
//! committed one) or nothing. Every copy of an uncommitted P_h goes back into the uncommitted
//! set with its next-link, so it is erased before P or the page it links to gets a newer
//! version; version counters resume above every version found or named by a next-link.
//!
//! Why it is atomic and durable, case by case:
//! - Crash before a COMMIT is issued: the held last page was never programmed, so the
//!   transaction's written intentions form a chain ending at a missing version: case II at its
//!   end, case III along it — all uncommitted. (Case I cannot fire on it: no other transaction
//!   may write its pages while it is active, and afterwards a newer version of a page it links
//!   to is programmed only after this intention is erased.)
//! - Crash while a COMMIT is in flight: all intentions durable → a full cycle (committed);
//!   any missing or torn (uncorrectable pages are ignored) → a broken chain (uncommitted).
//!   All or nothing, and P falls back to its second-newest version, which is durably
//!   committed (floors).
//! - Acked commit: every intention is durable and its predecessor versions' erases are held
//!   until the ack; the cycle is intact until a newer committed version of a page exists, and
//!   then case I classifies the remaining links (Figure 3(b)).
//! - Aborted transaction: never a complete cycle (held page dropped); its intentions are
//!   erased before any page they concern moves on, so case I never misreads them.
//! - GC in flight: copies carry identical metadata; the original is erased only after the copy
//!   is durable.
//! - Torn forced erase: the new version has not started (it waits for the erase), and a torn
//!   block reads erased or uncorrectable — either way the uncommitted intention is invisible.
//!
//! Decisions where the paper is silent or assumes more than the device interface gives:
//! - The waits on the previous commit's ack (`Floors`) are ours: the paper's recovery assumes
//!   a page's earlier transaction has completed before a later one writes it, but COMMIT
//!   returns only at the ack while the host may issue the next write to that page as soon as
//!   the COMMIT is issued. (The generated workloads never do this; a scripted crash test in
//!   `crates/check/tests/scc.rs` does, and fails without the wait.)
//! - When the erase is issued: "Handling Uncommitted Intention Records" requires it only
//!   before a newer version of a page it concerns is written. By default
//!   (`protocol.scc_erase_at_abort = true`) it is issued at ABORT as background work: the
//!   ABORT ack does not wait for it, and the next writer of the page usually finds it done.
//!   With `false` it is issued lazily by that next writer, on its path (GC may have erased
//!   the intention for free by then). Either way erasing one means relocating its whole
//!   block (copying the block's live pages), the GC overhead LightTx §4.3 attributes to
//!   SCC, and intentions recovery classifies as uncommitted are always erased lazily.
//! - TRIM is refused, like every atomic protocol here.
//!
//! Assumptions: commands arrive in time order; versions are u32 per page (4 billion rewrites).

use crate::commit::{CommitProtocol, Isolation, ProtocolConfig, ProtocolInfo, TxRef};
use crate::core::{FtlCore, ReadOutcome};
use crate::error::{Result, SsdError};
use crate::gc::{self, FtlHooks};
use crate::protocols::cyclic::{
    self, Floors, Held, Link, Meta, Place, Status, Txs, UEntry, Uncommitted,
};
use crate::recovery::RecoveryCtx;
use media::Ppa;
use sim::{Lpn, SimTime};

const NAME: &str = "scc";

pub static INFO: ProtocolInfo = ProtocolInfo {
    name: NAME,
    summary: "simple cyclic commit (TxFlash 3.2): next-links close a cycle per transaction; uncommitted intentions are erased before their pages are rewritten",
    oob_bytes: 25,
    atomic: true,
    needs_checkpoints: false,
    supports_checkpoints: false,
    isolation: &[Isolation::Strict, Isolation::NoPageConflict],
    supports_trim: false,
    create,
    recover,
};

#[derive(Clone)]
pub struct SccFtl {
    /// Per logical page, the highest version used or named so far.
    ver_max: Vec<u32>,
    txs: Txs,
    floors: Floors,
    uncommitted: Uncommitted,
    /// Uncommitted intentions this protocol had to erase itself (each cost one forced
    /// relocation of a block).
    forced_relocations: u64,
    /// `protocol.scc_erase_at_abort`.
    erase_at_abort: bool,
}

fn create(p: &ProtocolConfig, core: &mut FtlCore) -> Result<Box<dyn CommitProtocol>> {
    Ok(Box::new(SccFtl {
        ver_max: vec![0; core.logical_pages() as usize],
        txs: Txs::default(),
        floors: Floors::default(),
        uncommitted: Uncommitted::default(),
        forced_relocations: 0,
        erase_at_abort: p.scc_erase_at_abort,
    }))
}

impl SccFtl {
    /// An intention whose copies are all erased is forgotten; a page it concerns may get a
    /// new version only once those erases are complete.
    fn forget(&mut self, at: Link, e: &UEntry) {
        self.floors.raise(at.lpn, e.gone_at);
        self.floors.raise(e.next.lpn, e.gone_at);
    }

    /// Enforces the SCC Invariant for a new version of `lpn` (§3.2 "Handling Uncommitted
    /// Intention Records"): erases every uncommitted intention of `lpn` and every one whose
    /// next-link names `lpn`. Returns the instant the new version may start programming.
    fn clear_for(&mut self, core: &mut FtlCore, lpn: u32, now: SimTime) -> Result<SimTime> {
        for (at, e) in self.uncommitted.sweep(core, false) {
            self.forget(at, &e);
        }
        while self.uncommitted.len() > 0 {
            let mut targets = self.uncommitted.of_page(lpn);
            targets.extend(self.uncommitted.naming(lpn, 0, u32::MAX));
            let Some(at) = targets.first().copied() else {
                break;
            };
            // GC (or a lazy erase after recovery) may have erased it already.
            if let Some(e) = self.uncommitted.settle(core, &at) {
                #[cfg(feature = "mutants")]
                if crate::mutant::on("scc-write-erase-unawaited") {
                    continue;
                }
                self.forget(at, &e);
                continue;
            }
            match self.uncommitted.live_block_of(core, &at) {
                Some(block) => {
                    gc::relocate(core, self, block, now, gc::Reason::Forced)?;
                    self.forced_relocations += 1;
                }
                None => {
                    return Err(SsdError::CorruptImage {
                        detail: format!("internal: uncommitted {at} has no copy left"),
                    })
                }
            }
        }
        Ok(self.floors.get(lpn))
    }
}

impl SccFtl {
    /// Starts erasing the blocks holding `aborted` intentions now (`protocol.
    /// scc_erase_at_abort`), so that the next writer of their pages usually finds them gone
    /// instead of relocating on its own path. The SCC Invariant is kept exactly as before:
    /// `clear_for` still runs before every new version, notices the erases (`settle`/`sweep`)
    /// and makes the new version wait for their completion (`forget` raises the floors);
    /// only the instant the erase is issued moves earlier. Nothing the ABORT acks depends on
    /// waits for this work (the device's abort ack counts the protocol's own programs, so
    /// the copies' program ends are taken back out of it).
    fn erase_in_background(
        &mut self,
        core: &mut FtlCore,
        aborted: &[Link],
        now: SimTime,
    ) -> Result<()> {
        let saved = core.program_end_since;
        for at in aborted {
            loop {
                if let Some(e) = self.uncommitted.settle(core, at) {
                    #[cfg(feature = "mutants")]
                    if crate::mutant::on("scc-abort-erase-unawaited") {
                        break;
                    }
                    self.forget(*at, &e);
                    break;
                }
                if self.uncommitted.get(at).is_none() {
                    break;
                }
                match self.uncommitted.live_block_of(core, at) {
                    Some(block) => {
                        gc::relocate(core, self, block, now, gc::Reason::Forced)?;
                        self.forced_relocations += 1;
                    }
                    None => break,
                }
            }
        }
        core.program_end_since = saved;
        Ok(())
    }
}

impl FtlHooks for SccFtl {
    fn on_moved(&mut self, core: &mut FtlCore, from: Ppa, to: Ppa) {
        self.txs.moved(core, from, to);
    }
}

impl CommitProtocol for SccFtl {
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
        let ready = self.clear_for(core, lpn.0, now)?.max(accepted);
        let at = cyclic::bump(&mut self.ver_max, lpn.0);
        let held = Held {
            at,
            back: 0,
            tag,
            ready,
        };
        self.txs.push(core, tx.seq, held, false)?;
        Ok(accepted)
    }

    fn commit(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        let Some(t) = self.txs.finish(core, tx.seq, false)? else {
            return Ok(now);
        };
        let ack = t.durable_at(now);
        for i in &t.written {
            let lpn = i.meta.at.lpn;
            core.map(Lpn(lpn), i.place.ppa, ack);
            core.unpin(i.place.ppa, ack);
            self.floors.raise(lpn, ack);
        }
        Ok(ack)
    }

    fn abort(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        let Some(t) = self.txs.remove(tx.seq) else {
            return Ok(now);
        };
        let aborted: Vec<Link> = t.written.iter().map(|i| i.meta.at).collect();
        self.uncommitted.abort(core, t, now);
        if self.erase_at_abort {
            self.erase_in_background(core, &aborted, now)?;
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
        self.txs.accept_plain(core, NAME, lpn)?;
        self.floors.prune(now);
        let ready = self
            .clear_for(core, lpn.0, now)?
            .max(core.host_transfer_done(now));
        let at = cyclic::bump(&mut self.ver_max, lpn.0);
        let meta = Meta {
            at,
            next: at,
            back: 0,
        };
        let (ppa, end) = cyclic::program_intention(core, &meta, tag, ready, false)?;
        core.map(lpn, ppa, end);
        self.floors.raise(lpn.0, end);
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
        vec![
            ("page versions", self.ver_max.len() as u64 * 4),
            ("active transactions", self.txs.dram_bytes()),
            ("uncommitted intentions", self.uncommitted.dram_bytes()),
            ("pending commit acks", self.floors.dram_bytes()),
        ]
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("uncommitted_intentions", self.uncommitted.len() as u64),
            ("forced_relocations", self.forced_relocations),
        ]
    }

    fn check_invariants(&self, core: &FtlCore) -> std::result::Result<(), String> {
        self.txs.check_invariants(core)?;
        self.uncommitted.check_invariants(core)?;
        for (at, _) in self.uncommitted.iter() {
            if at.ver > self.ver_max[at.lpn as usize] {
                return Err(format!("uncommitted {at} above the page's version counter"));
            }
        }
        Ok(())
    }
}

fn recover(ctx: &mut RecoveryCtx<'_>) -> Result<Box<dyn CommitProtocol>> {
    let found = cyclic::collect(ctx, false)?;
    // Case I: under the SCC Invariant a link below the newest version names a committed one.
    let status = cyclic::classify(&found, |_, _, _| true);
    let lp = found.pages();
    let ver_max = cyclic::versions_named(&found);
    let mut u = Uncommitted::default();
    for lpn in 0..lp {
        let Some((top, ppa)) = found.top(lpn).copied() else {
            continue;
        };
        if status[lpn as usize] == Status::Committed {
            ctx.map(Lpn(lpn), ppa)?;
            continue;
        }
        // The newest version is uncommitted: the one below it is the last committed.
        let below = found
            .page(lpn)
            .iter()
            .rev()
            .find(|(m, _)| m.at.ver < top.at.ver);
        if let Some((_, p)) = below {
            ctx.map(Lpn(lpn), *p)?;
        }
        let places = found
            .copies(lpn, top.at.ver)
            .map(|p| Place::at(ctx.core, p))
            .collect();
        u.insert(ctx.core, top.at, top.next, places);
    }
    Ok(Box::new(SccFtl {
        ver_max,
        txs: Txs::default(),
        floors: Floors::default(),
        uncommitted: u,
        forced_relocations: 0,
        erase_at_abort: ctx.params.scc_erase_at_abort,
    }))
}
