//! Machinery shared by the two cyclic-commit protocols of TxFlash, `scc` (§3.2) and `bpcc`
//! (§3.3). Each protocol's own rules (SCC's forced erases, BPCC's back pointers and straddle
//! responsibility sets) and its recovery live in its file; this module holds what they have
//! in common:
//!
//! - the OOB codec of an intention record (layouts documented in `scc.rs` and `bpcc.rs`);
//! - dynamic transactions (§3.4): a transaction's current write is *held* in a buffer until
//!   its next write (or its commit) arrives, so the held page's next-link can name the next
//!   page; the last page links back to the first. An aborted transaction's held page is never
//!   programmed, so an aborted transaction never leaves a complete cycle on flash;
//! - page ownership: under the isolation levels cyclic commit supports (strict and
//!   no-page-conflict, LightTx §4.2) a page written by an active transaction may not be
//!   written by anyone else until that transaction ends;
//! - `Floors`: per logical page, the instant before which a newer version may not start
//!   programming. Both protocols' recovery assume that every version below the newest one of
//!   a page was *durably* committed (or is recognisably uncommitted) when the newer one was
//!   written (§3.2 "SCC Recovery": "the application must have completed their transactions
//!   before going on to start a subsequent transaction on the same page"). With commits acked
//!   asynchronously that is not automatic: a later transaction's page could reach flash before
//!   an earlier commit's last page. So a new version waits for the previous commit's ack (and,
//!   in SCC, for the erases of uncommitted intentions that concern the page);
//! - `Uncommitted`: the set of uncommitted intention records that may still be on flash
//!   (aborted, or found uncommitted by recovery), each with every physical copy it may have
//!   (GC may have copied it while its transaction was active, and the old copy lingers until
//!   its block's erase completes), indexed by page, by next-link and by block. A copy is gone
//!   once its block's erase count changed (every erase goes through the NAND, whoever issued
//!   it: GC, a forced relocation, or the lazy erase of a block found dirty after recovery);
//!   the erase is then durable by the instant its plane's array is free again (no FTL hook
//!   reports erase completions, and lazy erases call no hook at all, so we read the erase
//!   counts instead). Erased intentions are noticed exactly where it matters (SCC settles the
//!   ones concerning a page before writing it) and otherwise by an amortized sweep, which only
//!   frees memory and releases BPCC straddlers a little later than strictly possible;
//! - the recovery scan (`Found`: every intention, sorted by page and version) and the case
//!   I/II/III classification loop both recoveries share (`classify`).
//!
//! Commands are assumed to arrive in non-decreasing time order (the world and the crash
//! checker issue them so); `Floors` forgets instants that have passed.

use crate::core::{blank_oob, FtlCore, OobBuf, Stream, PIN_PROTO};
use crate::error::{Result, SsdError};
use crate::oob::{get_u32, get_u64, put_u32, put_u64};
use media::{Content, Ppa};
use rustc_hash::FxHashMap;
use sim::{Lpn, SimTime};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

pub(crate) const OFF_LPN: usize = 1;
pub(crate) const OFF_VER: usize = 9;
pub(crate) const OFF_NEXT_LPN: usize = 13;
pub(crate) const OFF_NEXT_VER: usize = 21;
pub(crate) const OFF_BACK: usize = 25;

/// A version of a logical page: what next-links and back pointers name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Link {
    pub lpn: u32,
    pub ver: u32,
}

impl Link {
    pub fn new(lpn: u32, ver: u32) -> Link {
        Link { lpn, ver }
    }
}

impl std::fmt::Display for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}_{}", self.lpn, self.ver)
    }
}

/// The metadata of an intention record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    pub at: Link,
    pub next: Link,
    /// BPCC's back pointer (the version of the page last committed when this one was
    /// written); SCC does not store it.
    pub back: u32,
}

pub(crate) fn encode(core: &FtlCore, m: &Meta, with_back: bool) -> OobBuf {
    let mut oob = blank_oob(core, crate::oob::kind::DATA);
    put_u64(&mut oob, OFF_LPN, u64::from(m.at.lpn));
    put_u32(&mut oob, OFF_VER, m.at.ver);
    put_u64(&mut oob, OFF_NEXT_LPN, u64::from(m.next.lpn));
    put_u32(&mut oob, OFF_NEXT_VER, m.next.ver);
    if with_back {
        put_u32(&mut oob, OFF_BACK, m.back);
    }
    oob
}

/// Decodes an intention's OOB; a page number beyond the device is a corrupt image.
pub(crate) fn decode(ppa: Ppa, oob: &[u8], with_back: bool, logical_pages: u32) -> Result<Meta> {
    let lpn = get_u64(oob, OFF_LPN);
    let next_lpn = get_u64(oob, OFF_NEXT_LPN);
    for l in [lpn, next_lpn] {
        if l >= u64::from(logical_pages) {
            return Err(SsdError::CorruptImage {
                detail: format!(
                    "{ppa}: intention names lpn {l}, beyond {logical_pages} logical pages"
                ),
            });
        }
    }
    Ok(Meta {
        at: Link::new(lpn as u32, get_u32(oob, OFF_VER)),
        next: Link::new(next_lpn as u32, get_u32(oob, OFF_NEXT_VER)),
        back: if with_back { get_u32(oob, OFF_BACK) } else { 0 },
    })
}

/// One physical copy of an intention, with its block's erase count when it was recorded: the
/// copy is gone once that count changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub ppa: Ppa,
    pub erases: u32,
}

impl Place {
    pub fn at(core: &FtlCore, ppa: Ppa) -> Place {
        Place {
            ppa,
            erases: core.nand.image().erase_count(core.geo.block_of(ppa)),
        }
    }
    pub fn gone(&self, core: &FtlCore) -> bool {
        core.nand.image().erase_count(core.geo.block_of(self.ppa)) != self.erases
    }
    /// An instant by which the erase that removed this copy is complete (its plane's array
    /// is free of everything issued so far, the erase included).
    pub fn gone_by(&self, core: &FtlCore) -> SimTime {
        core.nand.array_free_at(core.geo.pu_of(self.ppa))
    }
}

/// Per logical page: no newer version may start programming before this instant.
///
/// Only instants still in the future matter (commands arrive in time order), so every
/// command first forgets the ones that have passed: a min-heap by instant makes that cost
/// O(log n) per forgotten entry, and the table holds exactly the pages with a commit ack (or
/// an erase) still pending, not every page ever written (16,384 stale entries were
/// 1.26 MB of SCC's reported DRAM). The table is a hash map and the heap keeps the entries a
/// later `raise` replaced until they pass (`prune` skips them): every write and commit
/// consults the table and nothing iterates it, so no result depends on either order
/// (a `BTreeMap` with a `BTreeSet` index took 5 % of a full-scale Flag Commit BPCC point's CPU, docs/PERFORMANCE.md).
#[derive(Clone, Debug, Default)]
pub(crate) struct Floors {
    at: FxHashMap<u32, SimTime>,
    /// Every instant `raise` set, earliest first; an entry whose page's instant is no
    /// longer this one was replaced by a later `raise` and is dropped when it passes.
    by_time: BinaryHeap<Reverse<(SimTime, u32)>>,
}

impl Floors {
    pub fn get(&self, lpn: u32) -> SimTime {
        self.at.get(&lpn).copied().unwrap_or(SimTime::ZERO)
    }
    pub fn raise(&mut self, lpn: u32, t: SimTime) {
        // A page's instant only rises while it is in the table, so an entry `raise` leaves
        // behind in the heap is earlier than its page's current instant and passes first.
        match self.at.get_mut(&lpn) {
            Some(old) if *old >= t => return,
            Some(old) => *old = t,
            None => {
                self.at.insert(lpn, t);
            }
        }
        self.by_time.push(Reverse((t, lpn)));
    }
    /// Forgets every instant at or before `now`: it can no longer delay anything.
    pub fn prune(&mut self, now: SimTime) {
        while let Some(&Reverse((t, lpn))) = self.by_time.peek() {
            if t > now {
                break;
            }
            self.by_time.pop();
            if self.at.get(&lpn) == Some(&t) {
                self.at.remove(&lpn);
            }
        }
    }
    /// Bytes of controller DRAM: per pending page, its number and instant in the table and
    /// in the index by instant.
    pub fn dram_bytes(&self) -> u64 {
        self.at.len() as u64 * 24
    }
}

/// The write a transaction holds back until its next write or its commit (§3.4).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held {
    pub at: Link,
    pub back: u32,
    pub tag: u64,
    /// Earliest instant its program may start.
    pub ready: SimTime,
}

/// A programmed intention of an active transaction (pinned while the transaction is active).
#[derive(Clone, Debug)]
pub(crate) struct Intent {
    pub meta: Meta,
    pub place: Place,
    /// Older copies GC left behind while the transaction was active (their erases may not be
    /// complete yet).
    pub stale: Vec<Place>,
    pub end: SimTime,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Tx {
    pub first: Option<Link>,
    pub held: Option<Held>,
    pub written: Vec<Intent>,
}

impl Tx {
    /// The instant every programmed intention is durable (at least `now`).
    pub fn durable_at(&self, now: SimTime) -> SimTime {
        #[cfg(feature = "mutants")]
        if crate::mutant::on("cyclic-commit-early") {
            return now;
        }
        self.written.iter().map(|i| i.end).fold(now, SimTime::max)
    }
}

/// What a write to a page means for its transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteCase {
    /// A page the transaction has not written: a new version.
    New,
    /// The page the transaction holds: replace the held data (same version).
    ReplaceHeld,
}

/// The next version of `lpn`: one above the highest used or named so far (`ver_max`, per
/// logical page).
pub(crate) fn bump(ver_max: &mut [u32], lpn: u32) -> Link {
    let v = &mut ver_max[lpn as usize];
    *v += 1;
    Link::new(lpn, *v)
}

/// Per logical page, the highest version recovery found used or named (by an intention or
/// a next-link): the version counters a recovered protocol continues from.
pub(crate) fn versions_named(found: &Found) -> Vec<u32> {
    let mut ver_max = vec![0u32; found.pages() as usize];
    for (m, _) in found.all() {
        for l in [m.at, m.next] {
            let v = &mut ver_max[l.lpn as usize];
            *v = (*v).max(l.ver);
        }
    }
    ver_max
}

/// Active transactions, who owns which page, and which pinned page is whose intention.
#[derive(Clone, Debug, Default)]
pub(crate) struct Txs {
    pub active: BTreeMap<u32, Tx>,
    /// Logical page → the active transaction (device sequence) that wrote it.
    pub owner: BTreeMap<u32, u32>,
    /// Pinned intention → (transaction, index in `written`).
    pub pinned: BTreeMap<Ppa, (u32, usize)>,
}

impl Txs {
    /// The start of a transactional write both protocols share: the page is in range and
    /// free for transaction `seq` (`check`), and the host's transfer is done at the returned
    /// instant. A second write of the page the transaction holds replaces the held data;
    /// then the write is complete (`true`).
    pub fn accept(
        &mut self,
        core: &FtlCore,
        protocol: &'static str,
        seq: u32,
        lpn: Lpn,
        tag: u64,
        now: SimTime,
    ) -> Result<(SimTime, bool)> {
        core.check_lpn(lpn)?;
        let accepted = core.host_transfer_done(now);
        if self.check(protocol, Some(seq), lpn.0)? == WriteCase::ReplaceHeld {
            self.replace_held(seq, tag, accepted);
            return Ok((accepted, true));
        }
        Ok((accepted, false))
    }

    /// The start of a write outside a transaction: the page is in range and no active
    /// transaction owns it.
    pub fn accept_plain(&self, core: &FtlCore, protocol: &'static str, lpn: Lpn) -> Result<()> {
        core.check_lpn(lpn)?;
        self.check(protocol, None, lpn.0)?;
        Ok(())
    }

    /// Checks a write of `lpn` by transaction `seq` (None: a plain write) against the
    /// isolation cyclic commit needs: no page written by two active transactions at once
    /// (LightTx §4.2: SCC and BPCC do not support serializable isolation), and no page
    /// rewritten inside a transaction once its intention is on flash (its next-link is
    /// already fixed, so a second version would break the cycle).
    pub fn check(&self, protocol: &'static str, seq: Option<u32>, lpn: u32) -> Result<WriteCase> {
        let Some(&o) = self.owner.get(&lpn) else {
            return Ok(WriteCase::New);
        };
        if Some(o) != seq {
            return Err(SsdError::Unsupported {
                protocol,
                what: format!(
                    "write lpn {lpn}, which another active transaction wrote (concurrent writes to one page need serializable isolation)"
                ),
            });
        }
        let held = self
            .active
            .get(&o)
            .and_then(|t| t.held)
            .is_some_and(|h| h.at.lpn == lpn);
        if held {
            Ok(WriteCase::ReplaceHeld)
        } else {
            Err(SsdError::Unsupported {
                protocol,
                what: format!(
                    "write lpn {lpn} twice in one transaction after its intention was programmed"
                ),
            })
        }
    }

    /// Replaces the data of the held page (the transaction wrote it again before writing
    /// anything else).
    pub fn replace_held(&mut self, seq: u32, tag: u64, ready: SimTime) {
        if let Some(h) = self.active.get_mut(&seq).and_then(|t| t.held.as_mut()) {
            h.tag = tag;
            h.ready = h.ready.max(ready);
        }
    }

    /// A new write of transaction `seq`: the held page (if any) is programmed with its
    /// next-link naming this one, which becomes the held page.
    pub fn push(
        &mut self,
        core: &mut FtlCore,
        seq: u32,
        held: Held,
        with_back: bool,
    ) -> Result<()> {
        let tx = self.active.entry(seq).or_default();
        if tx.first.is_none() {
            tx.first = Some(held.at);
        }
        let prev = tx.held.replace(held);
        self.owner.insert(held.at.lpn, seq);
        if let Some(p) = prev {
            self.program(core, seq, p, held.at, with_back)?;
        }
        Ok(())
    }

    /// Programs a held page as an intention of `seq` with next-link `next`, and pins it.
    fn program(
        &mut self,
        core: &mut FtlCore,
        seq: u32,
        h: Held,
        next: Link,
        with_back: bool,
    ) -> Result<()> {
        let meta = Meta {
            at: h.at,
            next,
            back: h.back,
        };
        let (ppa, end) = program_intention(core, &meta, h.tag, h.ready, with_back)?;
        core.pin(ppa);
        let tx = self.active.entry(seq).or_default();
        self.pinned.insert(ppa, (seq, tx.written.len()));
        tx.written.push(Intent {
            meta,
            place: Place::at(core, ppa),
            stale: Vec::new(),
            end,
        });
        Ok(())
    }

    /// COMMIT: programs the held page linking back to the first (closing the cycle) and
    /// removes the transaction. Its intentions stay pinned; the caller maps or keeps them.
    pub fn finish(&mut self, core: &mut FtlCore, seq: u32, with_back: bool) -> Result<Option<Tx>> {
        let Some(tx) = self.active.get_mut(&seq) else {
            return Ok(None);
        };
        if let (Some(h), Some(first)) = (tx.held.take(), tx.first) {
            self.program(core, seq, h, first, with_back)?;
        }
        Ok(self.remove(seq))
    }

    /// ABORT: removes the transaction; the held page is dropped unprogrammed.
    pub fn remove(&mut self, seq: u32) -> Option<Tx> {
        let tx = self.active.remove(&seq)?;
        for i in &tx.written {
            self.pinned.remove(&i.place.ppa);
            if self.owner.get(&i.meta.at.lpn) == Some(&seq) {
                self.owner.remove(&i.meta.at.lpn);
            }
        }
        if let Some(h) = tx.held {
            if self.owner.get(&h.at.lpn) == Some(&seq) {
                self.owner.remove(&h.at.lpn);
            }
        }
        Some(tx)
    }

    /// GC moved a pinned page; returns whether it was an active intention.
    pub fn moved(&mut self, core: &FtlCore, from: Ppa, to: Ppa) -> bool {
        let Some((seq, idx)) = self.pinned.remove(&from) else {
            return false;
        };
        if let Some(i) = self
            .active
            .get_mut(&seq)
            .and_then(|t| t.written.get_mut(idx))
        {
            let old = i.place;
            i.stale.push(old);
            i.place = Place::at(core, to);
        }
        self.pinned.insert(to, (seq, idx));
        true
    }

    pub fn check_invariants(&self, core: &FtlCore) -> std::result::Result<(), String> {
        for (ppa, (seq, idx)) in &self.pinned {
            if core.page_flags(*ppa) & PIN_PROTO == 0 {
                return Err(format!("intention at {ppa} of tx seq {seq} is not pinned"));
            }
            let at = self
                .active
                .get(seq)
                .and_then(|t| t.written.get(*idx))
                .map(|i| i.place.ppa);
            if at != Some(*ppa) {
                return Err(format!(
                    "pinned intention {ppa} of seq {seq} is recorded at {at:?}"
                ));
            }
        }
        for (seq, t) in &self.active {
            for i in &t.written {
                if self.owner.get(&i.meta.at.lpn) != Some(seq) {
                    return Err(format!("{} of seq {seq} not owned by it", i.meta.at));
                }
            }
        }
        Ok(())
    }

    pub fn dram_bytes(&self) -> u64 {
        let intents: usize = self.active.values().map(|t| t.written.len()).sum();
        (self.active.len() * 64 + intents * 48 + self.owner.len() * 16 + self.pinned.len() * 16)
            as u64
    }
}

/// Programs one intention record in the host stream; returns where and when it is durable.
pub(crate) fn program_intention(
    core: &mut FtlCore,
    meta: &Meta,
    tag: u64,
    ready: SimTime,
    with_back: bool,
) -> Result<(Ppa, SimTime)> {
    let oob = encode(core, meta, with_back);
    let (ppa, t) = core.program(Stream::HOST, None, Content::Tag(tag), &oob, ready)?;
    Ok((ppa, t.end))
}

/// An uncommitted intention that may still be on flash.
#[derive(Clone, Debug)]
pub(crate) struct UEntry {
    pub next: Link,
    /// Copies not yet known to be erased.
    pub places: Vec<Place>,
    /// Latest instant by which the erases of copies found gone so far are complete.
    pub gone_at: SimTime,
}

/// The uncommitted intentions still (possibly) on flash. See the module docs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Uncommitted {
    entries: BTreeMap<Link, UEntry>,
    /// (next-link, intention): which uncommitted intentions name a version of a page.
    by_next: BTreeSet<(Link, Link)>,
    /// Block → (lowest erase count recorded for a copy in it, intentions with a copy in it).
    /// A block whose erase count still equals that number lost no copy.
    by_block: BTreeMap<u32, (u32, BTreeSet<Link>)>,
    erases_seen: u64,
    /// Copies over all entries, kept so that `dram_bytes` is O(1) (runs sample it often).
    places_total: usize,
}

impl Uncommitted {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn get(&self, at: &Link) -> Option<&UEntry> {
        self.entries.get(at)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Link, &UEntry)> {
        self.entries.iter()
    }

    pub fn insert(&mut self, core: &FtlCore, at: Link, next: Link, places: Vec<Place>) {
        for p in &places {
            let e = self
                .by_block
                .entry(core.geo.block_of(p.ppa).0)
                .or_insert((p.erases, BTreeSet::new()));
            e.0 = e.0.min(p.erases);
            e.1.insert(at);
        }
        self.by_next.insert((next, at));
        self.places_total += places.len();
        if let Some(old) = self.entries.insert(
            at,
            UEntry {
                next,
                places,
                gone_at: SimTime::ZERO,
            },
        ) {
            self.places_total -= old.places.len();
        }
    }

    /// An aborted transaction: unpins its intentions and records every copy of each (the
    /// intention and any stale copies GC left) as uncommitted.
    pub fn abort(&mut self, core: &mut FtlCore, t: Tx, now: SimTime) {
        for i in t.written {
            core.unpin(i.place.ppa, now);
            let mut places = i.stale;
            places.push(i.place);
            self.insert(core, i.meta.at, i.meta.next, places);
        }
    }

    fn unindex_block(&mut self, b: u32, at: &Link) {
        if let Some((_, s)) = self.by_block.get_mut(&b) {
            s.remove(at);
            if s.is_empty() {
                self.by_block.remove(&b);
            }
        }
    }

    pub fn remove(&mut self, core: &FtlCore, at: &Link) -> Option<UEntry> {
        let e = self.entries.remove(at)?;
        self.places_total -= e.places.len();
        self.by_next.remove(&(e.next, *at));
        for p in &e.places {
            self.unindex_block(core.geo.block_of(p.ppa).0, at);
        }
        Some(e)
    }

    /// Raises the instant by which `at` is known to have left (`UEntry::gone_at`).
    pub fn raise_gone_at(&mut self, at: &Link, t: SimTime) {
        if let Some(e) = self.entries.get_mut(at) {
            e.gone_at = e.gone_at.max(t);
        }
    }

    /// Uncommitted intentions of page `lpn`, in version order.
    pub fn of_page(&self, lpn: u32) -> Vec<Link> {
        self.entries
            .range(Link::new(lpn, 0)..=Link::new(lpn, u32::MAX))
            .map(|(k, _)| *k)
            .collect()
    }

    /// Uncommitted intentions whose next-link names page `lpn` at a version in `lo..hi`.
    pub fn naming(&self, lpn: u32, lo: u32, hi: u32) -> Vec<Link> {
        if lo >= hi {
            return Vec::new();
        }
        let from = (Link::new(lpn, lo), Link::new(0, 0));
        let to = (Link::new(lpn, hi), Link::new(0, 0));
        self.by_next.range(from..to).map(|(_, at)| *at).collect()
    }

    /// Drops the copies of `at` whose blocks were erased; if none is left, removes it and
    /// returns it (its `gone_at` is the instant by which those erases are complete).
    pub fn settle(&mut self, core: &FtlCore, at: &Link) -> Option<UEntry> {
        let e = self.entries.get_mut(at)?;
        let mut gone = Vec::new();
        e.places.retain(|p| {
            if p.gone(core) {
                e.gone_at = e.gone_at.max(p.gone_by(core));
                gone.push(core.geo.block_of(p.ppa).0);
                false
            } else {
                true
            }
        });
        let empty = e.places.is_empty();
        self.places_total -= gone.len();
        for b in gone {
            if !self.entries[at]
                .places
                .iter()
                .any(|p| core.geo.block_of(p.ppa).0 == b)
            {
                self.unindex_block(b, at);
            }
        }
        if empty {
            self.remove(core, at)
        } else {
            None
        }
    }

    /// Settles every intention with a copy in an erased block; returns those with no copy
    /// left (removed). Amortized: it runs once the device erased a number of blocks
    /// proportional to the blocks it would look at (or always, with `force`), so that it
    /// costs O(1) per erase. Callers that must know now settle the entries they need.
    pub fn sweep(&mut self, core: &FtlCore, force: bool) -> Vec<(Link, UEntry)> {
        let erases = core.nand.counters().erases;
        let due = (self.by_block.len() as u64 / 8).max(1);
        if erases == self.erases_seen || (!force && erases - self.erases_seen < due) {
            return Vec::new();
        }
        self.erases_seen = erases;
        let mut touched: Vec<Link> = Vec::new();
        for (b, (recorded, links)) in &self.by_block {
            if core.nand.image().erase_count(media::BlockId(*b)) != *recorded {
                touched.extend(links.iter().copied());
            }
        }
        touched.sort_unstable();
        touched.dedup();
        let mut out = Vec::new();
        for at in touched {
            if let Some(e) = self.settle(core, &at) {
                out.push((at, e));
            }
        }
        // Blocks whose old copies are all gone now only hold copies recorded later.
        for (b, (recorded, links)) in self.by_block.iter_mut() {
            let now = core.nand.image().erase_count(media::BlockId(*b));
            if *recorded != now {
                let min = links
                    .iter()
                    .filter_map(|l| self.entries.get(l))
                    .flat_map(|e| e.places.iter())
                    .filter(|p| core.geo.block_of(p.ppa).0 == *b)
                    .map(|p| p.erases)
                    .min();
                *recorded = min.unwrap_or(now);
            }
        }
        out
    }

    /// A block that still holds a copy of `at` (not yet erased).
    pub fn live_block_of(&self, core: &FtlCore, at: &Link) -> Option<media::BlockId> {
        self.entries
            .get(at)?
            .places
            .iter()
            .find(|p| !p.gone(core))
            .map(|p| core.geo.block_of(p.ppa))
    }

    pub fn check_invariants(&self, core: &FtlCore) -> std::result::Result<(), String> {
        for (at, e) in &self.entries {
            if !self.by_next.contains(&(e.next, *at)) {
                return Err(format!("uncommitted {at} missing from the next-link index"));
            }
            for p in &e.places {
                let b = core.geo.block_of(p.ppa).0;
                if !self.by_block.get(&b).is_some_and(|(_, s)| s.contains(at)) {
                    return Err(format!("uncommitted {at} missing from block index {b}"));
                }
                if !p.gone(core) && core.page_flags(p.ppa) & (crate::core::VALID | PIN_PROTO) != 0 {
                    return Err(format!("uncommitted {at} at {} is live", p.ppa));
                }
            }
        }
        if self.by_next.len() != self.entries.len() {
            return Err("next-link index out of step".into());
        }
        let places: usize = self.entries.values().map(|e| e.places.len()).sum();
        if places != self.places_total {
            return Err(format!(
                "{places} uncommitted copies, counted {}",
                self.places_total
            ));
        }
        Ok(())
    }

    pub fn dram_bytes(&self) -> u64 {
        (self.entries.len() * 48
            + self.places_total * 8
            + self.by_next.len() * 16
            + self.by_block.len() * 32) as u64
    }
}

/// Every readable intention a recovery scan found, sorted by (page, version), with per-page
/// offsets: one flat vector (24 bytes an intention) rather than a map per page, so recovery of
/// a device with millions of pages stays cheap. GC duplicates sit next to each other.
#[derive(Clone, Debug, Default)]
pub(crate) struct Found {
    entries: Vec<(Meta, Ppa)>,
    /// `entries[start[lpn]..start[lpn + 1]]` are page `lpn`'s intentions.
    start: Vec<u32>,
}

impl Found {
    /// Builds the index; duplicate copies of one version must carry identical metadata.
    pub fn new(mut entries: Vec<(Meta, Ppa)>, logical_pages: u32) -> Result<Found> {
        entries.sort_unstable_by_key(|(m, p)| (m.at, *p));
        for w in entries.windows(2) {
            if w[0].0.at == w[1].0.at && w[0].0 != w[1].0 {
                return Err(SsdError::CorruptImage {
                    detail: format!(
                        "{} and {}: two different intentions claim version {}",
                        w[0].1, w[1].1, w[1].0.at
                    ),
                });
            }
        }
        let mut start = Vec::with_capacity(logical_pages as usize + 1);
        let mut i = 0usize;
        for lpn in 0..=logical_pages {
            while i < entries.len() && entries[i].0.at.lpn < lpn {
                i += 1;
            }
            start.push(i as u32);
        }
        Ok(Found { entries, start })
    }

    pub fn pages(&self) -> u32 {
        (self.start.len() - 1) as u32
    }

    /// Page `lpn`'s intentions in version order (duplicates adjacent).
    pub fn page(&self, lpn: u32) -> &[(Meta, Ppa)] {
        let l = lpn as usize;
        match (self.start.get(l), self.start.get(l + 1)) {
            (Some(a), Some(b)) => &self.entries[*a as usize..*b as usize],
            _ => &[],
        }
    }

    /// The newest version of a page and one copy of it.
    pub fn top(&self, lpn: u32) -> Option<&(Meta, Ppa)> {
        self.page(lpn).last()
    }

    pub fn top_ver(&self, lpn: u32) -> u32 {
        self.top(lpn).map_or(0, |(m, _)| m.at.ver)
    }

    /// Every copy of version `ver` of page `lpn`.
    pub fn copies(&self, lpn: u32, ver: u32) -> impl Iterator<Item = Ppa> + '_ {
        let page = self.page(lpn);
        let from = page.partition_point(|(m, _)| m.at.ver < ver);
        page[from..]
            .iter()
            .take_while(move |(m, _)| m.at.ver == ver)
            .map(|(_, p)| *p)
    }

    /// Page `lpn`'s intentions with a version above `ver`.
    pub fn above(&self, lpn: u32, ver: u32) -> &[(Meta, Ppa)] {
        let page = self.page(lpn);
        &page[page.partition_point(|(m, _)| m.at.ver <= ver)..]
    }

    pub fn all(&self) -> &[(Meta, Ppa)] {
        &self.entries
    }
}

/// Collects every readable intention record of a scan.
pub(crate) fn collect(ctx: &crate::recovery::RecoveryCtx<'_>, with_back: bool) -> Result<Found> {
    let lp = ctx.core.logical_pages();
    let mut entries = Vec::new();
    for (ppa, oob) in ctx.scan.of_kind(crate::oob::kind::DATA) {
        entries.push((decode(ppa, oob, with_back, lp)?, ppa));
    }
    Found::new(entries, lp)
}

/// How recovery classified the newest version of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Unknown,
    Visiting,
    Committed,
    Uncommitted,
}

/// Classifies the newest version of every page (SCC and BPCC Recovery, cases I/II/III):
/// `case_i(found, q, l)` decides a next-link to `q_l` below `q`'s newest version (SCC:
/// committed by the SCC Invariant; BPCC: uncommitted iff a straddler of `q_l` exists). Case
/// II (the link names a version above the newest) is uncommitted; case III (it names the
/// newest) follows the link, and a cycle means committed (Cycle Property). A link to version 0
/// of a page with no version on flash names the initial version, committed by initialization.
pub(crate) fn classify(found: &Found, case_i: impl Fn(&Found, u32, u32) -> bool) -> Vec<Status> {
    let n = found.pages() as usize;
    let mut status = vec![Status::Unknown; n];
    let mut path: Vec<usize> = Vec::new();
    for start in 0..n {
        if found.page(start as u32).is_empty() || status[start] != Status::Unknown {
            continue;
        }
        path.clear();
        let mut cur = start;
        let result = loop {
            match status[cur] {
                Status::Committed => break Status::Committed,
                Status::Uncommitted => break Status::Uncommitted,
                Status::Visiting => break Status::Committed, // a cycle (Cycle Property)
                Status::Unknown => {}
            }
            let Some((m, _)) = found.top(cur as u32) else {
                // Reached a page with nothing on flash through a link to its version 0.
                break Status::Committed;
            };
            status[cur] = Status::Visiting;
            path.push(cur);
            let (q, l) = (m.next.lpn, m.next.ver);
            let h_q = found.top_ver(q);
            if l < h_q {
                break if case_i(found, q, l) {
                    Status::Committed
                } else {
                    Status::Uncommitted
                };
            }
            if l > h_q {
                break Status::Uncommitted;
            }
            if h_q == 0 {
                break Status::Committed;
            }
            cur = q as usize;
        };
        for &p in &path {
            status[p] = result;
        }
    }
    status
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `Floors` against the ordered table it replaces (every entry removed when its instant
    /// passes, a raise replacing a lower instant): the same instant for every page and the
    /// same number of entries (reported as DRAM) after every operation, on random sequences
    /// with instants that repeat, rise and fall.
    #[test]
    fn floors_match_an_ordered_table() {
        let mut rng = sim::Rng::new(11).fork("floors");
        for round in 0..200u64 {
            let mut f = Floors::default();
            let mut model: BTreeMap<u32, SimTime> = BTreeMap::new();
            let mut now = 0u64;
            for _ in 0..500 {
                let lpn = rng.below(8) as u32;
                if rng.below(3) == 0 {
                    now += rng.below(4);
                    f.prune(SimTime(now));
                    model.retain(|_, t| t.0 > now);
                } else {
                    let t = SimTime(now + rng.below(6) - u64::from(rng.below(4) == 0).min(now));
                    f.raise(lpn, t);
                    let e = model.entry(lpn).or_insert(t);
                    *e = (*e).max(t);
                }
                for l in 0..8 {
                    assert_eq!(
                        f.get(l),
                        model.get(&l).copied().unwrap_or(SimTime::ZERO),
                        "round {round}"
                    );
                }
                assert_eq!(f.dram_bytes(), model.len() as u64 * 24, "round {round}");
            }
        }
    }

    /// (lpn, version, next lpn, next version, back) per intention.
    pub(crate) fn found(entries: &[(u32, u32, u32, u32, u32)], pages: u32) -> Found {
        let v = entries
            .iter()
            .enumerate()
            .map(|(k, &(lpn, ver, nl, nv, back))| {
                (
                    Meta {
                        at: Link::new(lpn, ver),
                        next: Link::new(nl, nv),
                        back,
                    },
                    Ppa(k as u32),
                )
            })
            .collect();
        Found::new(v, pages).unwrap()
    }

    #[test]
    fn figure_4_scc_cases() {
        // TxFlash Figure 4 (A=0, B=1, C=2, D=3): A1->B1, B1->A1 committed; B2->C1?
        // We model the three cases the text walks through:
        // case I: A1.next = B1 while B's newest is B2 -> committed;
        // case II: D1.next = C2 while C's newest is C1 -> uncommitted;
        // case III: B2.next = C1 and C1.next = B2 form a cycle -> committed.
        let f = found(
            &[
                (0, 1, 1, 1, 0),
                (1, 1, 0, 1, 0),
                (1, 2, 2, 1, 0),
                (2, 1, 1, 2, 0),
                (3, 1, 2, 2, 0),
            ],
            4,
        );
        let s = classify(&f, |_, _, _| true);
        assert_eq!(
            s,
            vec![
                Status::Committed,
                Status::Committed,
                Status::Committed,
                Status::Uncommitted
            ]
        );
    }

    #[test]
    fn a_broken_chain_is_uncommitted_all_along() {
        // 0_1 -> 1_1 -> 2_1 (missing): case III twice, then case II.
        let f = found(&[(0, 1, 1, 1, 0), (1, 1, 2, 1, 0)], 3);
        let s = classify(&f, |_, _, _| true);
        assert_eq!(s[0], Status::Uncommitted);
        assert_eq!(s[1], Status::Uncommitted);
        // A single-page transaction links to itself: a cycle of one.
        let f = found(&[(0, 3, 0, 3, 2)], 1);
        assert_eq!(classify(&f, |_, _, _| true)[0], Status::Committed);
    }

    #[test]
    fn found_indexes_versions_per_page_with_duplicates_adjacent() {
        // Page 1: versions 1, 3 (two GC copies), 4; page 0 and 2 empty.
        let f = found(
            &[
                (1, 3, 1, 3, 1),
                (1, 1, 1, 1, 0),
                (1, 4, 1, 4, 3),
                (1, 3, 1, 3, 1),
            ],
            3,
        );
        assert!(f.page(0).is_empty() && f.page(2).is_empty());
        assert_eq!(f.page(1).len(), 4);
        assert_eq!(f.top_ver(1), 4);
        assert_eq!(f.top_ver(2), 0);
        assert_eq!(f.copies(1, 3).count(), 2);
        assert_eq!(f.copies(1, 2).count(), 0);
        assert_eq!(f.above(1, 1).len(), 3);
        assert_eq!(f.above(1, 4).len(), 0);
        assert!(f.page(7).is_empty(), "out of range reads as empty");
        // Two copies of one version that disagree: a corrupt image, not a panic.
        let m = |back| Meta {
            at: Link::new(0, 1),
            next: Link::new(0, 1),
            back,
        };
        let e = Found::new(vec![(m(0), Ppa(1)), (m(5), Ppa(2))], 1).unwrap_err();
        assert!(matches!(e, SsdError::CorruptImage { .. }), "{e:?}");
    }

    #[test]
    fn uncommitted_set_indexes_and_naming_ranges() {
        let mut u = Uncommitted::default();
        u.by_next.insert((Link::new(5, 3), Link::new(1, 2)));
        u.by_next.insert((Link::new(5, 7), Link::new(2, 2)));
        u.by_next.insert((Link::new(6, 1), Link::new(3, 2)));
        assert_eq!(u.naming(5, 0, u32::MAX).len(), 2);
        assert_eq!(u.naming(5, 4, 7), vec![]);
        assert_eq!(u.naming(5, 4, 8), vec![Link::new(2, 2)]);
        assert_eq!(u.naming(5, 3, 3), vec![]);
    }
}
