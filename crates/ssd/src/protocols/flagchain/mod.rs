//! The machinery CFC and AFC share (Flag Commit, On et al., §3): the on-flash page format,
//! chains of shadow pages linked by *physical* address, the in-memory transaction and dirty
//! page tables, normal processing at the device interface, garbage collection that keeps the
//! commit flags right, and recovery from a raw image. `cfc.rs` and `afc.rs` hold each
//! protocol's registry entry and its correctness argument; everything that differs between
//! them is a `match` on [`Variant`] in this module. Both headers name this module.
//!
//! What is in here, and the paper sections it follows:
//! - [`PageMeta`]: the OOB layout (byte by byte in `cfc.rs`), shared by both protocols;
//! - [`Graph`]: chains, clusters (§3.4) and their *source groups* (the generalisation of
//!   `U = S − R`, §3.1.3) built from a set of pages — used by recovery and by COMMIT;
//! - [`decide`]: U⁺ / U⁻, inconsistent transactions, S⁺ (§3.1.3) and the AFC rule (§3.2);
//! - [`FlagCommit`]: the tables (§3.1 "In-memory tables"), normal processing (§3.1.1, §3.2),
//!   GC hooks (§3.1.2, §3.2, §3.4) and recovery (§3.1.3, §3.2).
//!
//! Invariants (`check_invariants`): every page of an active transaction is pinned and owned
//! by it; every dirty page's LastPBA is pinned and owned by its entry; every page the owner
//! index names is written; the mapping of a dirty logical page is a page of its transaction.
//!
//! Files, by role: this one (the header, the tables of §3.1 "In-memory tables" and the
//! `FlagCommit` struct, its constructor and the functions the roles share: flag reprogramming);
//! `meta.rs` (OOB layout, flag bytes, [`Variant`]); `classify.rs` ([`Graph`], [`decide`] and
//! the figure tests); `normal.rs` (the `CommitProtocol` impl: BEGIN, WRITE, COMMIT, ABORT,
//! plain writes, reads, tables' DRAM; §3.1.1, §3.2); `gc.rs` (the `FtlHooks` impl and the
//! flag moves before an erase: §3.1.2 with footnote 6, §3.2, §3.4); `invariants.rs`
//! (`check_invariants`); `recovery.rs` (§3.1.3, §3.2).

mod classify;
mod gc;
mod invariants;
mod meta;
mod normal;
mod recovery;

pub use classify::{decide, Decision, Graph};
use meta::OFF_FLAG;
pub use meta::{
    PageMeta, Variant, FLAG_AFC_FALSE, FLAG_AFC_INITIAL_FALSE, FLAG_CFC_FALSE, FLAG_TRUE, OOB_BYTES,
};
pub use recovery::recover;

use crate::commit::{CommitProtocol, ProtocolConfig, TxRef};
use crate::core::FtlCore;
use crate::error::{Result, SsdError};
use media::{BlockId, Ppa};
use rustc_hash::FxHashMap;
use sim::{Lpn, SimTime};
use std::collections::{BTreeMap, BTreeSet};

// ------------------------------------------------------------------ tables

/// A page of an active transaction as the transaction table knows it.
#[derive(Clone, Copy, Debug)]
struct TxPage {
    ppa: Ppa,
    link: Ppa,
    ord: u32,
}

#[derive(Clone, Debug)]
struct Active {
    host_seq: u32,
    pages: Vec<TxPage>,
    /// The paper's LastPage.
    last: Ppa,
    next_ord: u32,
    /// When every page of it (and every GC copy of one) is durable.
    durable_at: SimTime,
    /// When its first page is durable (AFC programs later pages only after it).
    first_end: SimTime,
    /// Logical pages it wrote (its dirty page table entries).
    lpns: Vec<Lpn>,
}

#[derive(Clone, Debug, Default)]
struct Aborted {
    /// Its pages still on flash (NPage = `pages.len() + carriers.len()`).
    pages: BTreeSet<Ppa>,
    /// AFC: pages known to hold FALSE, with the instant that FALSE is durable.
    holders: Vec<(Ppa, SimTime)>,
    /// AFC: pinned copies made only to hold FALSE (see "NOP exhaustion" in `afc.rs`).
    carriers: BTreeSet<Ppa>,
    /// CFC, inconsistent after recovery: a pinned page of a FALSE source group, kept until
    /// every TRUE page of the transaction is gone.
    pin: Option<Ppa>,
    true_pages: BTreeSet<Ppa>,
    /// When the erases that removed its pages so far are durable: until then a crash may
    /// bring any of them back, so nothing that guards against them may go earlier.
    gone_at: SimTime,
}

impl Aborted {
    fn is_empty(&self) -> bool {
        self.pages.is_empty() && self.carriers.is_empty() && self.pin.is_none()
    }
}

#[derive(Clone, Debug)]
enum TxEntry {
    Active(Active),
    Aborted(Aborted),
}

/// The dirty page table (§3.1): for a logical page written by an active transaction, the
/// physical page of its last committed version (LastPBA), for undo and for reads.
#[derive(Clone, Copy, Debug)]
struct Dirty {
    xid: u32,
    last_pba: Ppa,
    /// A plain write committed this page while the transaction was active: the transaction
    /// rewrites its version at COMMIT so its version number orders after the plain write.
    restamp: bool,
}

/// Why the protocol tracks a physical page. Committed pages are not tracked (a transaction
/// absent from the transaction table is committed, §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// A page of an active or aborted transaction.
    Tx(u32),
    /// The LastPBA of a dirty logical page (pinned).
    LastPba(Lpn),
    /// CFC: a pinned TRUE copy keeping `target` from becoming a FALSE head.
    Carrier { xid: u32, target: Ppa },
}

/// The relocation in progress: what `migrate_oob` decided for each copied page.
#[derive(Clone, Debug)]
struct Reloc {
    block: BlockId,
    copies: BTreeMap<Ppa, Copied>,
}

#[derive(Clone, Copy, Debug)]
struct Copied {
    meta: PageMeta,
    new_link: Ppa,
    to: Option<Ppa>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    /// Partial programs that set a commit flag at COMMIT.
    commit_flag_writes: u64,
    /// Partial programs GC issued to move or add a flag before an erase.
    gc_flag_writes: u64,
    /// Commits whose TRUE flag was programmed with the last page (`commit_write`, §3.3).
    commit_flags_in_page: u64,
    carrier_copies: u64,
    carrier_releases: u64,
    links_rewritten: u64,
    gc_oob_reads: u64,
    restamp_writes: u64,
    recovered_inconsistent: u64,
    recovered_aborted: u64,
    irrelevant_skips: u64,
}

/// CFC or AFC.
#[derive(Clone)]
pub struct FlagCommit {
    v: Variant,
    block_flags: bool,
    /// CFC: `protocol.cfc_flag_reprogram` (the flag always by a partial program).
    flag_reprogram: bool,
    next_xid: u32,
    next_ver: u64,
    /// Device transaction sequence → XID (XIDs survive crashes, device sequences do not).
    host: BTreeMap<u32, u32>,
    /// The transaction table: active and aborted transactions.
    txs: BTreeMap<u32, TxEntry>,
    /// Hash maps: every transaction's write, commit and abort looks pages up in them, and
    /// they are never iterated on a simulation path (`check_tables` walks them in key
    /// order), so no result depends on their order.
    dirty: FxHashMap<Lpn, Dirty>,
    owner: FxHashMap<Ppa, Owner>,
    /// CFC carriers by target.
    carriers: BTreeMap<Ppa, Vec<Ppa>>,
    /// Commits issued whose flags are not yet durable, with their ack instant.
    pending: BTreeMap<u32, SimTime>,
    /// Per block: pages from this index on were programmed since the last recovery, so how
    /// often they were reprogrammed is known (see "NOP" in the protocol headers).
    fresh_from: Vec<u16>,
    /// Per block: when its latest erase (issued by GC) is durable. A page that reads erased
    /// is gone only from then on.
    erase_done: Vec<SimTime>,
    reloc: Option<Reloc>,
    /// Pages pinned by recovery only so that their blocks stay out of the free pools.
    recovered_pins: Vec<Ppa>,
    /// XIDs below this were found by the last recovery; `relevant` says which of those can
    /// still affect what recovery maps (see "Relevance" in `cfc.rs`). Later XIDs all can.
    recovered_below: u32,
    relevant: Vec<u64>,
    c: Counters,
}

fn unsupported(v: Variant, what: String) -> SsdError {
    SsdError::Unsupported {
        protocol: v.name(),
        what,
    }
}

fn internal(what: String) -> SsdError {
    SsdError::CorruptImage {
        detail: format!("internal: {what}"),
    }
}

/// Checks that the device can run a flag commit protocol.
fn check_medium(v: Variant, core: &FtlCore) -> Result<()> {
    let p = core.nand.image().params();
    if p.cell != media::CellType::Slc {
        return Err(SsdError::Config {
            key: "nand.cell".into(),
            reason: format!(
                "{} needs SLC pages that can be partially programmed (Flag Commit §1, footnote 2)",
                v.name()
            ),
        });
    }
    if p.nop < 2 {
        return Err(SsdError::Config {
            key: "nand.nop".into(),
            reason: format!(
                "{} reprograms commit flags in place and needs nop >= 2, got {}",
                v.name(),
                p.nop
            ),
        });
    }
    Ok(())
}

impl FlagCommit {
    fn empty(v: Variant, cfg: &ProtocolConfig, core: &FtlCore) -> FlagCommit {
        FlagCommit {
            v,
            block_flags: cfg.block_flags,
            flag_reprogram: cfg.cfc_flag_reprogram,
            next_xid: 1,
            next_ver: 1,
            host: BTreeMap::new(),
            txs: BTreeMap::new(),
            dirty: FxHashMap::default(),
            owner: FxHashMap::default(),
            carriers: BTreeMap::new(),
            pending: BTreeMap::new(),
            fresh_from: vec![0; core.geo.blocks() as usize],
            erase_done: vec![SimTime::ZERO; core.geo.blocks() as usize],
            reloc: None,
            recovered_pins: Vec::new(),
            recovered_below: 0,
            relevant: Vec::new(),
            c: Counters::default(),
        }
    }

    pub fn create(
        v: Variant,
        cfg: &ProtocolConfig,
        core: &mut FtlCore,
    ) -> Result<Box<dyn CommitProtocol>> {
        check_medium(v, core)?;
        Ok(Box::new(FlagCommit::empty(v, cfg, core)))
    }

    fn live_record_pages(&self) -> u64 {
        let cfc: usize = self.carriers.values().map(Vec::len).sum();
        let other: usize = self
            .txs
            .values()
            .map(|e| match e {
                TxEntry::Aborted(x) => x.carriers.len() + usize::from(x.pin.is_some()),
                TxEntry::Active(_) => 0,
            })
            .sum();
        (cfc + other) as u64
    }

    /// Whether a transaction's commit status can still change what recovery maps.
    fn is_relevant(&self, xid: u32) -> bool {
        xid >= self.recovered_below
            || self
                .relevant
                .get((xid / 64) as usize)
                .is_some_and(|w| w & (1 << (xid % 64)) != 0)
    }

    fn xid_of(&self, tx: TxRef) -> Result<u32> {
        self.host
            .get(&tx.seq)
            .copied()
            .ok_or_else(|| internal(format!("transaction {:?} has no XID", tx.host)))
    }

    fn active_mut(&mut self, xid: u32) -> Result<&mut Active> {
        match self.txs.get_mut(&xid) {
            Some(TxEntry::Active(a)) => Ok(a),
            _ => Err(internal(format!("XID {xid} is not active"))),
        }
    }

    /// Whether a page can take one more partial program: it was programmed since the last
    /// recovery (so its reprogram count is known; the callers only reprogram pages whose flag
    /// shows none so far) and its NOP allows two programs.
    fn reprogrammable(&self, core: &FtlCore, ppa: Ppa) -> bool {
        let b = core.geo.block_of(ppa);
        core.geo.page_in_block(ppa) >= u32::from(self.fresh_from[b.0 as usize])
            && core.nand.image().nop_of(ppa) >= 2
    }

    /// Clears `bits` of a page's flag byte by partial programming. The chip ANDs the pattern
    /// into the cells; the simulator wants the resulting OOB, which we compute from the image
    /// (no read is implied). Returns when durable. Counts the program as a commit flag or a
    /// GC flag move (`FtlStats::commit_flag_programs`, `gc_flag_programs`) by `at_commit`.
    fn clear_flag_bits(
        &mut self,
        core: &mut FtlCore,
        ppa: Ppa,
        bits: u8,
        ready: SimTime,
        at_commit: bool,
    ) -> Result<SimTime> {
        let Some(cur) = core.nand.image().oob(ppa) else {
            return Err(internal(format!("flag update on unreadable {ppa}")));
        };
        let mut new = crate::core::OobBuf::copy_of(cur);
        if new[OFF_FLAG] & bits == 0 {
            return Ok(ready);
        }
        new[OFF_FLAG] &= !bits;
        let t = core.nand.partial_program(ppa, Some(&new), None, ready)?;
        core.stats.flag_writes += 1;
        if at_commit {
            self.c.commit_flag_writes += 1;
            core.stats.commit_flag_programs += 1;
        } else {
            self.c.gc_flag_writes += 1;
            core.stats.gc_flag_programs += 1;
        }
        Ok(t.end)
    }
}
