//! The machinery CFC and AFC share (Flag Commit, On et al., §3): the on-flash page format,
//! chains of shadow pages linked by *physical* address, the in-memory transaction and dirty
//! page tables, normal processing at the device interface, garbage collection that keeps the
//! commit flags right, and recovery from a raw image. `cfc.rs` and `afc.rs` hold each
//! protocol's registry entry and its correctness argument; everything that differs between
//! them is a `match` on [`Variant`] here. Both headers name this module.
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

use crate::core::{blank_oob, outcome_of, FtlCore, ReadOutcome, Stream, PIN_PROTO, WRITTEN};
use crate::error::{Result, SsdError};
use crate::gc::FtlHooks;
use crate::oob::{get_u32, get_u64, kind, put_u32, put_u64};
use crate::protocol::{CommitProtocol, ProtocolConfig, TxRef};
use crate::recovery::RecoveryCtx;
use media::{BlockId, Content, PageView, Ppa, PuId};
use sim::{Lpn, SimTime};
use std::collections::{BTreeMap, BTreeSet};

// ------------------------------------------------------------------ page format

/// Width of the OOB layout (see `cfc.rs` for the byte map).
pub const OOB_BYTES: u32 = 26;
const OFF_LBA: usize = 1;
const OFF_VER: usize = 5;
const OFF_XID: usize = 13;
const OFF_LINK: usize = 17;
const OFF_ORD: usize = 21;
const OFF_FLAG: usize = 25;
/// The NULL link (first page of a transaction).
const NULL_LINK: u32 = u32::MAX;

/// Flag byte values. Bits other than the protocol's stay 1 (erased).
/// CFC uses bit 0: 1 = FALSE, 0 = TRUE (§3.1 "we use bit 0 to represent TRUE").
/// AFC uses bits 1..0 (§3.2): "11" initial FALSE, "10" TRUE (initial or set), "00" FALSE.
pub const FLAG_CFC_FALSE: u8 = 0xFF;
pub const FLAG_TRUE: u8 = 0xFE;
pub const FLAG_AFC_INITIAL_FALSE: u8 = 0xFF;
pub const FLAG_AFC_FALSE: u8 = 0xFC;
/// Clearing this bit commits: CFC FALSE→TRUE, AFC "11"→"10".
const BIT_COMMIT: u8 = 0x01;
/// Clearing this bit marks an AFC page FALSE: "10"→"00".
const BIT_AFC_ABORT: u8 = 0x02;

/// Which of the two protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Commit-based flag commit (§3.1): a transaction is committed iff it holds a TRUE flag
    /// (here: every source group of its chains holds one).
    Cfc,
    /// Abort-based flag commit (§3.2): a transaction is committed iff none of its pages holds
    /// a FALSE flag (Definition 3.3).
    Afc,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Cfc => "cfc",
            Variant::Afc => "afc",
        }
    }

    /// The flag a shadow page of a multi-page transaction is programmed with. AFC's first page
    /// starts FALSE so that a crash right after it cannot look committed (§3.2).
    pub fn initial_flag(self, ord: u32) -> u8 {
        match self {
            Variant::Cfc => FLAG_CFC_FALSE,
            Variant::Afc if ord == 0 => FLAG_AFC_INITIAL_FALSE,
            Variant::Afc => FLAG_TRUE,
        }
    }

    pub fn is_true(self, flag: u8) -> bool {
        match self {
            Variant::Cfc => flag & 1 == 0,
            Variant::Afc => flag & 3 == 2,
        }
    }

    /// Whether a flag read from a (possibly stale) summary can no longer change: recovery
    /// must read the page itself otherwise (footnote 7: flags change after the summary).
    /// CFC: TRUE is final. AFC: "00" is final; "10" on a first page is final (it is a
    /// committed first page or a plain write, neither of which is ever marked FALSE).
    pub fn is_final(self, flag: u8, ord: u32) -> bool {
        match self {
            Variant::Cfc => self.is_true(flag),
            Variant::Afc => flag & 2 == 0 || (ord == 0 && self.is_true(flag)),
        }
    }
}

/// The metadata of one data page (its OOB area).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageMeta {
    pub ppa: Ppa,
    /// Logical page (the paper's LBA).
    pub lba: u32,
    /// Version: a device-wide write sequence (see `cfc.rs`, "Version #").
    pub ver: u64,
    pub xid: u32,
    /// Position of the page among its transaction's writes (0 for the first).
    pub ord: u32,
    /// Physical address of the preceding page in the chain, `Ppa::NONE` for NULL.
    pub link: Ppa,
    pub flag: u8,
}

impl PageMeta {
    /// Parses a data page's OOB; `None` for other kinds.
    pub fn parse(ppa: Ppa, oob: &[u8]) -> Option<PageMeta> {
        if oob.len() < OOB_BYTES as usize || oob[0] != kind::DATA {
            return None;
        }
        let link = get_u32(oob, OFF_LINK);
        Some(PageMeta {
            ppa,
            lba: get_u32(oob, OFF_LBA),
            ver: get_u64(oob, OFF_VER),
            xid: get_u32(oob, OFF_XID),
            ord: get_u32(oob, OFF_ORD),
            link: if link == NULL_LINK {
                Ppa::NONE
            } else {
                Ppa(link)
            },
            flag: oob[OFF_FLAG],
        })
    }

    /// Writes the fields into an OOB buffer whose kind byte is set.
    pub fn write(&self, oob: &mut [u8]) {
        oob[0] = kind::DATA;
        put_u32(oob, OFF_LBA, self.lba);
        put_u64(oob, OFF_VER, self.ver);
        put_u32(oob, OFF_XID, self.xid);
        put_u32(
            oob,
            OFF_LINK,
            if self.link == Ppa::NONE {
                NULL_LINK
            } else {
                self.link.0
            },
        );
        put_u32(oob, OFF_ORD, self.ord);
        oob[OFF_FLAG] = self.flag;
    }
}

// ------------------------------------------------------------------ chains and clusters

const NO: u32 = u32::MAX;

/// The chain structure of a set of data pages.
///
/// A link from page `p` to page `q` is *valid* only if `q` is in the set, belongs to the same
/// transaction and was written before it (`q.ord < p.ord`). Physical links can dangle once
/// their target is erased, and the address may be reused; the XID and order check make a
/// reused address harmless (XIDs are unique for the device's lifetime, and a page of the same
/// transaction that happens to land there only merges two pieces of one chain).
///
/// Pages are grouped into *clusters*: with the block-based flag technique (§3.4), pages of one
/// transaction in one block joined by valid links; without it, every page is its own cluster.
/// A *source group* (a head) is a cluster no page of another cluster links into. With
/// single-page clusters the heads are exactly the head pages `U = S − R` of §3.1.3; with
/// clusters they are the paper's head clusters.
///
/// The cluster graph has no cycles: a cluster is a tree of intra-block links (each page has
/// one link, to an older page), so only its oldest page links out of it, and only to a page
/// older still; along any path of clusters the oldest page's order strictly decreases.
#[derive(Clone, Debug)]
pub struct Graph {
    /// Valid predecessor of each page (index into the page slice), or `u32::MAX`.
    pub pred: Vec<u32>,
    /// Cluster of each page.
    pub cluster: Vec<u32>,
    /// The head clusters (source groups); their pages are `members_of(c)`.
    pub sources: Vec<u32>,
    /// Members of each cluster (CSR: `members[start[c]..start[c+1]]`).
    member_start: Vec<u32>,
    members: Vec<u32>,
}

impl Graph {
    /// Builds the structure. `block_of` maps a page to its erase block.
    pub fn build(pages: &[PageMeta], block_of: &dyn Fn(Ppa) -> u32, block_flags: bool) -> Graph {
        let n = pages.len();
        let mut by_ppa: Vec<(u32, u32)> = pages
            .iter()
            .enumerate()
            .map(|(i, p)| (p.ppa.0, i as u32))
            .collect();
        by_ppa.sort_unstable();
        let find = |ppa: Ppa| -> Option<u32> {
            by_ppa
                .binary_search_by_key(&ppa.0, |e| e.0)
                .ok()
                .map(|k| by_ppa[k].1)
        };
        let mut pred = vec![NO; n];
        for (i, p) in pages.iter().enumerate() {
            if p.link == Ppa::NONE {
                continue;
            }
            if let Some(j) = find(p.link) {
                let q = &pages[j as usize];
                if q.xid == p.xid && q.ord < p.ord {
                    pred[i] = j;
                }
            }
        }
        // Clusters: union-find over valid links that stay inside one block.
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn root(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let g = parent[parent[x as usize] as usize];
                parent[x as usize] = g;
                x = g;
            }
            x
        }
        if block_flags {
            for i in 0..n {
                let j = pred[i];
                if j != NO && block_of(pages[i].ppa) == block_of(pages[j as usize].ppa) {
                    let (a, b) = (root(&mut parent, i as u32), root(&mut parent, j));
                    if a != b {
                        parent[a.max(b) as usize] = a.min(b);
                    }
                }
            }
        }
        let mut cid = vec![NO; n];
        let mut cluster = vec![0u32; n];
        let mut nc = 0u32;
        for (i, c) in cluster.iter_mut().enumerate() {
            let r = root(&mut parent, i as u32) as usize;
            if cid[r] == NO {
                cid[r] = nc;
                nc += 1;
            }
            *c = cid[r];
        }
        let ncl = nc as usize;
        // Members of each cluster (CSR).
        let mut member_start = vec![0u32; ncl + 1];
        for &c in &cluster {
            member_start[c as usize + 1] += 1;
        }
        for c in 0..ncl {
            member_start[c + 1] += member_start[c];
        }
        let mut fill = member_start.clone();
        let mut members = vec![0u32; n];
        for (i, &c) in cluster.iter().enumerate() {
            members[fill[c as usize] as usize] = i as u32;
            fill[c as usize] += 1;
        }
        // A cluster is a head unless a page of another cluster links into it.
        let mut linked = vec![false; ncl];
        for i in 0..n {
            let j = pred[i];
            if j != NO && cluster[i] != cluster[j as usize] {
                linked[cluster[j as usize] as usize] = true;
            }
        }
        let sources = (0..ncl as u32).filter(|c| !linked[*c as usize]).collect();
        Graph {
            pred,
            cluster,
            sources,
            member_start,
            members,
        }
    }

    /// The pages of cluster `c`.
    pub fn members_of(&self, c: u32) -> &[u32] {
        &self.members
            [self.member_start[c as usize] as usize..self.member_start[c as usize + 1] as usize]
    }

    /// Every page reachable from the given head clusters by following links, a reached
    /// cluster counting as a whole (§3.1.3's S⁺, at cluster granularity with §3.4).
    pub fn reach(&self, from: impl Iterator<Item = u32>) -> Vec<bool> {
        let n = self.pred.len();
        let mut seen_cluster = vec![false; self.member_start.len().saturating_sub(1)];
        let mut out = vec![false; n];
        let mut stack: Vec<u32> = from.collect();
        while let Some(c) = stack.pop() {
            if seen_cluster[c as usize] {
                continue;
            }
            seen_cluster[c as usize] = true;
            for &m in self.members_of(c) {
                out[m as usize] = true;
                let p = self.pred[m as usize];
                if p != NO {
                    stack.push(self.cluster[p as usize]);
                }
            }
        }
        out
    }
}

/// What recovery concluded about the transactions on a device.
#[derive(Clone, Debug, Default)]
pub struct Decision {
    /// Committed transactions (sorted).
    pub committed: Vec<u32>,
    /// CFC: transactions with both a TRUE and a FALSE head (§3.1.3: "inconsistent", treated
    /// as aborted), sorted. Never set for AFC.
    pub inconsistent: Vec<u32>,
    /// S⁺: whether each page is a committed page.
    pub in_s_plus: Vec<bool>,
    /// Current flag of each page where known (read from the page or final in the scan).
    pub flags: Vec<Option<u8>>,
    /// Per head cluster (in `Graph::sources` order): whether it holds a TRUE page (CFC).
    pub head_true: Vec<bool>,
}

impl Decision {
    pub fn is_committed(&self, xid: u32) -> bool {
        self.committed.binary_search(&xid).is_ok()
    }
    pub fn is_inconsistent(&self, xid: u32) -> bool {
        self.inconsistent.binary_search(&xid).is_ok()
    }
}

/// Page indices grouped by transaction: sorted by (XID, Ord); returns the order and the
/// start of each group.
fn by_xid(pages: &[PageMeta]) -> (Vec<u32>, Vec<usize>) {
    let mut order: Vec<u32> = (0..pages.len() as u32).collect();
    order.sort_unstable_by_key(|&i| (pages[i as usize].xid, pages[i as usize].ord, i));
    let mut starts = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || pages[order[k - 1] as usize].xid != pages[i as usize].xid {
            starts.push(k);
        }
    }
    starts.push(order.len());
    (order, starts)
}

/// Decides which transactions are committed. `current[i]` says whether page `i`'s scanned flag
/// was read from the page itself; otherwise it came from a summary page written before later
/// flag changes (footnote 7), and `read_flag(i)` reads the page, but only where the flag could
/// still have changed ([`Variant::is_final`]).
///
/// CFC (§3.1.3): U⁺ / U⁻ are the head clusters with / without a TRUE flag; a transaction with
/// heads in both is inconsistent and treated as aborted; S⁺ is everything reachable from the
/// remaining U⁺. AFC (§3.2): following every chain from its head, a transaction is committed
/// iff no page of it holds FALSE (Definition 3.3); S⁺ is everything reachable from its heads.
pub fn decide(
    v: Variant,
    pages: &[PageMeta],
    g: &Graph,
    current: &[bool],
    read_flag: &mut dyn FnMut(usize) -> Result<u8>,
) -> Result<Decision> {
    let n = pages.len();
    let mut flags: Vec<Option<u8>> = pages
        .iter()
        .zip(current)
        .map(|(p, cur)| (*cur || v.is_final(p.flag, p.ord)).then_some(p.flag))
        .collect();
    let mut committed = Vec::new();
    let mut inconsistent = Vec::new();
    let mut head_true = vec![false; g.sources.len()];
    let mut flag_of = |i: usize, flags: &mut Vec<Option<u8>>| -> Result<u8> {
        if let Some(f) = flags[i] {
            return Ok(f);
        }
        let f = read_flag(i)?;
        flags[i] = Some(f);
        Ok(f)
    };
    match v {
        Variant::Cfc => {
            // (xid, TRUE head?) per head cluster.
            let mut heads: Vec<(u32, bool)> = Vec::with_capacity(g.sources.len());
            let mut order: Vec<u32> = Vec::new();
            for (k, &c) in g.sources.iter().enumerate() {
                let m = g.members_of(c);
                let xid = pages[m[0] as usize].xid;
                let mut has_true = m
                    .iter()
                    .any(|&i| flags[i as usize].is_some_and(|f| v.is_true(f)));
                if !has_true {
                    // The commit flag sits on a cluster's newest page; look there first.
                    order.clear();
                    order.extend_from_slice(m);
                    order.sort_by_key(|&i| std::cmp::Reverse(pages[i as usize].ord));
                    for &i in &order {
                        if v.is_true(flag_of(i as usize, &mut flags)?) {
                            has_true = true;
                            break;
                        }
                    }
                }
                head_true[k] = has_true;
                heads.push((xid, has_true));
            }
            heads.sort_unstable();
            let mut k = 0;
            while k < heads.len() {
                let xid = heads[k].0;
                let (mut t, mut f) = (false, false);
                while k < heads.len() && heads[k].0 == xid {
                    t |= heads[k].1;
                    f |= !heads[k].1;
                    k += 1;
                }
                if t && !f {
                    committed.push(xid);
                } else if t && f {
                    inconsistent.push(xid);
                }
            }
            // An inconsistent transaction stays aborted only while one of its FALSE heads
            // survives every TRUE page of it; recovery needs to know every TRUE page.
            if !inconsistent.is_empty() {
                for (i, p) in pages.iter().enumerate() {
                    if inconsistent.binary_search(&p.xid).is_ok() {
                        flag_of(i, &mut flags)?;
                    }
                }
            }
        }
        Variant::Afc => {
            let (order, starts) = by_xid(pages);
            for w in starts.windows(2) {
                let grp = &order[w[0]..w[1]];
                let mut aborted = grp
                    .iter()
                    .any(|&i| flags[i as usize].is_some_and(|f| !v.is_true(f)));
                if !aborted {
                    for &i in grp {
                        if !v.is_true(flag_of(i as usize, &mut flags)?) {
                            aborted = true;
                            break;
                        }
                    }
                }
                if !aborted {
                    committed.push(pages[grp[0] as usize].xid);
                }
            }
        }
    }
    let is_committed = |x: u32| committed.binary_search(&x).is_ok();
    let in_s_plus = g.reach(
        g.sources
            .iter()
            .copied()
            .filter(|&c| is_committed(pages[g.members_of(c)[0] as usize].xid)),
    );
    debug_assert!((0..n).all(|i| in_s_plus[i] == is_committed(pages[i].xid)));
    Ok(Decision {
        committed,
        inconsistent,
        in_s_plus,
        flags,
        head_true,
    })
}

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
    commit_flag_writes: u64,
    gc_flag_writes: u64,
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
    next_xid: u32,
    next_ver: u64,
    /// Device transaction sequence → XID (XIDs survive crashes, device sequences do not).
    host: BTreeMap<u32, u32>,
    /// The transaction table: active and aborted transactions.
    txs: BTreeMap<u32, TxEntry>,
    dirty: BTreeMap<Lpn, Dirty>,
    owner: BTreeMap<Ppa, Owner>,
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
            next_xid: 1,
            next_ver: 1,
            host: BTreeMap::new(),
            txs: BTreeMap::new(),
            dirty: BTreeMap::new(),
            owner: BTreeMap::new(),
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
    /// (no read is implied). Returns when durable.
    fn clear_flag_bits(
        &mut self,
        core: &mut FtlCore,
        ppa: Ppa,
        bits: u8,
        ready: SimTime,
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
        Ok(t.end)
    }

    /// The parallel unit the next host page goes to, chosen as `FtlCore::program` would (the
    /// block-based technique must know the block before it writes the Link).
    fn pick_pu(&self, core: &mut FtlCore) -> PuId {
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
    fn program_shadow(
        &mut self,
        core: &mut FtlCore,
        xid: u32,
        lpn: Lpn,
        content: Content,
        ready: SimTime,
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
                // DECISIONS.md "AFC's first-page hold").
                ready.max(a.first_end)
            } else {
                ready
            };
            let mut link = a.last;
            if let Some(pu) = pu {
                // §3.4: join this transaction's cluster in the block the page lands in.
                let head = core.pus[pu.0 as usize].heads[Stream::HOST.0 as usize];
                if head != u32::MAX {
                    let b = BlockId(head);
                    if let Some(p) = a
                        .pages
                        .iter()
                        .filter(|p| core.geo.block_of(p.ppa) == b)
                        .max_by_key(|p| p.ord)
                    {
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
            flag: v.initial_flag(ord),
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
    fn commit_targets(&self, core: &FtlCore, a: &Active) -> Vec<Ppa> {
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

    fn prune_pending(&mut self, now: SimTime) {
        self.pending.retain(|_, ack| *ack > now);
    }

    /// A bound on the instant the erase `relocate` issues after `before_erase` returns `ready`
    /// ends: it starts at the latest of `ready`, the block's erase hold and the array becoming
    /// free, and lasts `erase_ns` plus at most `jitter_ns` (the NAND model draws the extra
    /// array time only when the erase is issued). Without the jitter term the bound was the
    /// shortest erase, so a second erase ordered after this one could start while it was still
    /// in flight (found by the crash checker, seed=1, timing profile
    /// channel=553,erase=3573190,jitter=178567,think=1666).
    fn erase_end(core: &FtlCore, block: BlockId, ready: SimTime) -> SimTime {
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
    fn program_carrier(
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
    fn before_erase_cfc(
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
                let e = self.clear_flag_bits(core, target, BIT_COMMIT, r)?;
                self.c.gc_flag_writes += 1;
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
    fn release_after_erase_cfc(&mut self, core: &mut FtlCore, victim: BlockId, erase_end: SimTime) {
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
    fn before_erase_afc(
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
                        let e = self.clear_flag_bits(core, p, BIT_AFC_ABORT, rt.end)?;
                        self.c.gc_flag_writes += 1;
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
        let ready = core.host_transfer_done(now);
        self.program_shadow(core, xid, lpn, Content::Tag(tag), ready)?;
        if let Some(d) = self.dirty.get_mut(&lpn) {
            // Written again after a plain write: this version is newer than it already.
            d.restamp = false;
        }
        Ok(ready)
    }

    fn commit(&mut self, core: &mut FtlCore, tx: TxRef, now: SimTime) -> Result<SimTime> {
        self.prune_pending(now);
        let xid = self.xid_of(tx)?;
        // A plain write committed one of its pages meanwhile: rewrite our version so that it
        // carries a later version number (commit order is the order of COMMITs).
        let lpns = self.active_mut(xid)?.lpns.clone();
        for lpn in lpns {
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
            self.program_shadow(core, xid, lpn, content, rt.end)?;
            self.c.restamp_writes += 1;
        }
        let a = match self.txs.remove(&xid) {
            Some(TxEntry::Active(a)) => a,
            other => {
                if let Some(o) = other {
                    self.txs.insert(xid, o);
                }
                return Err(internal(format!("commit of inactive XID {xid}")));
            }
        };
        // Every shadow page (and every GC copy of one) is durable before a flag changes.
        let ready = now.max(a.durable_at);
        #[cfg(feature = "mutants")]
        let ready = if crate::mutant::on("flag-commit-early") {
            now
        } else {
            ready
        };
        let mut ack = ready;
        for p in self.commit_targets(core, &a) {
            let e = self.clear_flag_bits(core, p, BIT_COMMIT, ready)?;
            self.c.commit_flag_writes += 1;
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
        for (ppa, o) in &self.owner {
            if core.page_flags(*ppa) & WRITTEN == 0 {
                return Err(format!("{ppa} ({o:?}) is tracked but not written"));
            }
            let pinned = core.page_flags(*ppa) & PIN_PROTO != 0;
            match o {
                Owner::Tx(xid) => match self.txs.get(xid) {
                    Some(TxEntry::Active(a)) => {
                        if !a.pages.iter().any(|p| p.ppa == *ppa) || !pinned {
                            return Err(format!(
                                "{ppa} of active XID {xid} not listed or not pinned"
                            ));
                        }
                    }
                    Some(TxEntry::Aborted(x)) => {
                        let listed = x.pages.contains(ppa)
                            || x.carriers.contains(ppa)
                            || x.pin == Some(*ppa);
                        if !listed {
                            return Err(format!("{ppa} of aborted XID {xid} not listed"));
                        }
                        if (x.carriers.contains(ppa) || x.pin == Some(*ppa)) != pinned {
                            return Err(format!("{ppa} of aborted XID {xid}: pin state wrong"));
                        }
                    }
                    None => return Err(format!("{ppa} owned by unknown XID {xid}")),
                },
                Owner::LastPba(lpn) => {
                    if self.dirty.get(lpn).map(|d| d.last_pba) != Some(*ppa) || !pinned {
                        return Err(format!(
                            "{ppa} is LastPBA of {lpn:?} but the table disagrees"
                        ));
                    }
                }
                Owner::Carrier { target, .. } => {
                    if !pinned || !self.carriers.get(target).is_some_and(|v| v.contains(ppa)) {
                        return Err(format!("carrier {ppa} not pinned or not listed"));
                    }
                }
            }
        }
        for (lpn, d) in &self.dirty {
            match self.txs.get(&d.xid) {
                Some(TxEntry::Active(a)) => {
                    let m = core.lookup(*lpn);
                    if !m.is_some_and(|m| a.pages.iter().any(|p| p.ppa == m)) {
                        return Err(format!(
                            "dirty {lpn:?} maps to {m:?}, not a page of XID {}",
                            d.xid
                        ));
                    }
                }
                _ => return Err(format!("dirty {lpn:?} of inactive XID {}", d.xid)),
            }
        }
        for (xid, e) in &self.txs {
            if let TxEntry::Active(a) = e {
                for p in &a.pages {
                    if self.owner.get(&p.ppa) != Some(&Owner::Tx(*xid)) {
                        return Err(format!(
                            "page {} of XID {xid} not in the owner index",
                            p.ppa
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

// ------------------------------------------------------------------ recovery

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A page for the figure shapes: `ppa` = block * 8 + page.
    fn pg(ppa: u32, xid: u32, ord: u32, link: Option<u32>, flag: u8) -> PageMeta {
        PageMeta {
            ppa: Ppa(ppa),
            lba: ppa,
            ver: u64::from(ord) + 1,
            xid,
            ord,
            link: link.map_or(Ppa::NONE, Ppa),
            flag,
        }
    }

    fn classify(v: Variant, pages: &[PageMeta], block_flags: bool) -> Decision {
        let g = Graph::build(pages, &|p| p.0 / 8, block_flags);
        let cur = vec![true; pages.len()];
        decide(v, pages, &g, &cur, &mut |i| Ok(pages[i].flag)).unwrap()
    }

    const F: u8 = FLAG_CFC_FALSE;
    const T: u8 = FLAG_TRUE;

    #[test]
    fn fig3_cfc_commit_flag_on_the_last_page_commits() {
        // P2 (0,1) ← P3 (0,2) ← P6 (1,1): links point to the preceding page.
        let before = [
            pg(1, 7, 0, None, F),
            pg(2, 7, 1, Some(1), F),
            pg(9, 7, 2, Some(2), F),
        ];
        assert!(classify(Variant::Cfc, &before, false).committed.is_empty());
        let mut after = before;
        after[2].flag = T;
        let d = classify(Variant::Cfc, &after, false);
        assert!(d.committed.contains(&7));
        assert!(d.in_s_plus.iter().all(|x| *x));
    }

    #[test]
    fn fig5_cfc_gc_shapes() {
        // Fig. 5a: chain P4 ← P7 ← P1 (head P1 TRUE). P1 reclaimed, its flag moved to P7.
        let a = [pg(4, 3, 0, None, F), pg(7, 3, 1, Some(4), T)];
        assert!(classify(Variant::Cfc, &a, false).committed.contains(&3));
        // Without the move, the new head P7 is FALSE: the transaction would look uncommitted.
        let a_bad = [pg(4, 3, 0, None, F), pg(7, 3, 1, Some(4), F)];
        assert!(classify(Variant::Cfc, &a_bad, false).committed.is_empty());
        // Fig. 5b: P7 in the middle reclaimed: two subchains, P1 (TRUE, dangling link) and
        // P4, which gets a TRUE flag (footnote 6).
        let b = [pg(4, 3, 0, None, T), pg(1, 3, 2, Some(7), T)];
        let d = classify(Variant::Cfc, &b, false);
        assert!(d.committed.contains(&3) && d.in_s_plus.iter().all(|x| *x));
        // Had P4 not been flagged, the subchains would disagree: inconsistent, aborted.
        let b_bad = [pg(4, 3, 0, None, F), pg(1, 3, 2, Some(7), T)];
        let d = classify(Variant::Cfc, &b_bad, false);
        assert!(d.committed.is_empty() && d.inconsistent.contains(&3));
        assert!(d.in_s_plus.iter().all(|x| !*x));
    }

    #[test]
    fn inconsistent_subchains_after_a_crash_in_commit_are_aborted() {
        // A chain split by relocation before commit: two heads; a crash set only one TRUE.
        let pages = [
            pg(0, 5, 0, None, F),
            pg(1, 5, 1, Some(0), T),   // head of subchain 1, flag set
            pg(17, 5, 2, Some(40), F), // head of subchain 2 (its link dangles), flag not set
            pg(20, 9, 0, None, T),     // an unrelated committed plain write
        ];
        let d = classify(Variant::Cfc, &pages, false);
        assert!(d.inconsistent.contains(&5));
        assert!(!d.committed.contains(&5) && d.committed.contains(&9));
        assert_eq!(d.in_s_plus, vec![false, false, false, true]);
    }

    #[test]
    fn links_into_reused_addresses_do_not_join_chains() {
        // Page 3 of XID 2 links to address 1, since reused by XID 4 (another transaction) and
        // address 2 reused by a later page of XID 2 itself (higher order): both are dangling.
        let pages = [
            pg(1, 4, 0, None, T),
            pg(2, 2, 5, None, F),
            pg(3, 2, 3, Some(1), T),
            pg(5, 2, 4, Some(2), F),
        ];
        let g = Graph::build(&pages, &|p| p.0 / 8, false);
        assert_eq!(g.pred, vec![NO, NO, NO, NO]);
        let d = classify(Variant::Cfc, &pages, false);
        assert!(d.committed.contains(&4) && d.inconsistent.contains(&2));
    }

    const AT: u8 = FLAG_TRUE; // "10"
    const AI: u8 = FLAG_AFC_INITIAL_FALSE; // "11"
    const AF: u8 = FLAG_AFC_FALSE; // "00"

    #[test]
    fn fig6_afc_first_page_decides_until_it_is_reclaimed() {
        let running = [
            pg(1, 2, 0, None, AI),
            pg(2, 2, 1, Some(1), AT),
            pg(9, 2, 2, Some(2), AT),
        ];
        assert!(classify(Variant::Afc, &running, false).committed.is_empty());
        let mut committed = running;
        committed[0].flag = AT;
        assert!(classify(Variant::Afc, &committed, false)
            .committed
            .contains(&2));
    }

    #[test]
    fn fig7_afc_gc_shapes() {
        // Fig. 7a: the FALSE first page P5 reclaimed, FALSE moved to P1 (the last page).
        let a = [pg(3, 6, 1, None, AT), pg(1, 6, 2, Some(3), AF)];
        assert!(classify(Variant::Afc, &a, false).committed.is_empty());
        // Without it, the rest looks committed: the reason AFC keeps FALSE flags in GC.
        let a_bad = [pg(3, 6, 1, None, AT), pg(1, 6, 2, Some(3), AT)];
        assert!(classify(Variant::Afc, &a_bad, false).committed.contains(&6));
        // Fig. 7b: P4 in the middle reclaimed, a FALSE added to P1: both pieces aborted.
        let b = [pg(5, 6, 0, None, AI), pg(1, 6, 3, Some(4), AF)];
        let d = classify(Variant::Afc, &b, false);
        assert!(d.committed.is_empty() && d.in_s_plus.iter().all(|x| !*x));
    }

    #[test]
    fn fig8_fig9_block_based_clusters() {
        // Fig. 8b: Block A (0..8) holds P2,P3,P5,P7 chained inside the block; Block B (8..16)
        // holds P1,P4,P6; the clusters are linked via P2.Link. Order of writes: P1 P2 P3 P4 P5
        // P6 P7 (ord 0..6).
        let pages = [
            pg(8, 1, 0, None, F),     // P1 in B
            pg(0, 1, 1, Some(8), F),  // P2 in A → cluster B
            pg(1, 1, 2, Some(0), F),  // P3 → P2
            pg(9, 1, 3, Some(8), F),  // P4 → P1 (cluster B)
            pg(2, 1, 4, Some(1), F),  // P5 → P3
            pg(10, 1, 5, Some(9), F), // P6 → P4
            pg(3, 1, 6, Some(2), T),  // P7 → P5, commit flag
        ];
        let g = Graph::build(&pages, &|p| p.0 / 8, true);
        assert_eq!(g.sources.len(), 1, "one head cluster (A)");
        let d = classify(Variant::Cfc, &pages, true);
        assert!(d.committed.contains(&1) && d.in_s_plus.iter().all(|x| *x));
        // Page-granular recovery of the same pages sees two heads (P7 and P6): inconsistent.
        let d = classify(Variant::Cfc, &pages, false);
        assert!(d.inconsistent.contains(&1));
        // Fig. 9b: Block A reclaimed, the valid P5 moved with TRUE and its Link set to the
        // cluster in B; P1, P4, P6 need no reprogramming.
        let after = [
            pg(8, 1, 0, None, F),
            pg(9, 1, 3, Some(8), F),
            pg(10, 1, 5, Some(9), F),
            pg(16, 1, 4, Some(8), T), // P5' in a new block, linked to cluster B
        ];
        let d = classify(Variant::Cfc, &after, true);
        assert!(d.committed.contains(&1) && d.in_s_plus.iter().all(|x| *x));
        // Fig. 9a (no block technique): P1 and P6 must both be flagged.
        let after_a = [
            pg(8, 1, 0, None, T),
            pg(9, 1, 3, Some(8), F),
            pg(10, 1, 5, Some(9), T),
            pg(16, 1, 4, Some(2), T),
        ];
        assert!(classify(Variant::Cfc, &after_a, false)
            .committed
            .contains(&1));
    }

    #[test]
    fn clusters_in_one_block_are_separate_unless_linked() {
        // Two relocations left two copies of one transaction in the same GC block 2 (16..24),
        // each linking out to a page in block 0: two clusters, two heads, each needs a TRUE.
        let pages = [
            pg(0, 1, 0, None, F),
            pg(1, 1, 1, Some(0), F),
            pg(16, 1, 2, Some(1), T),
            pg(17, 1, 3, Some(0), F),
        ];
        let g = Graph::build(&pages, &|p| p.0 / 8, true);
        assert_eq!(g.sources.len(), 2);
        assert!(classify(Variant::Cfc, &pages, true)
            .inconsistent
            .contains(&1));
        let mut ok = pages;
        ok[3].flag = T;
        assert!(classify(Variant::Cfc, &ok, true).committed.contains(&1));
        // A later copy linking to the earlier one inside the block joins its cluster.
        let joined = [
            pg(0, 1, 0, None, F),
            pg(16, 1, 2, Some(0), F),
            pg(17, 1, 3, Some(16), T),
        ];
        let g = Graph::build(&joined, &|p| p.0 / 8, true);
        assert_eq!(g.sources.len(), 1);
        assert_eq!(g.cluster[1], g.cluster[2]);
    }

    #[test]
    fn stale_summary_flags_are_read_from_the_page_when_they_can_still_change() {
        // The scan says FALSE (a summary written before the commit); the page says TRUE.
        let pages = [pg(1, 2, 0, None, F), pg(2, 2, 1, Some(1), F)];
        let g = Graph::build(&pages, &|p| p.0 / 8, false);
        let mut reads = Vec::new();
        let stale = vec![false; pages.len()];
        let d = decide(Variant::Cfc, &pages, &g, &stale, &mut |i| {
            reads.push(i);
            Ok(if i == 1 { T } else { F })
        })
        .unwrap();
        assert!(d.committed.contains(&2));
        assert_eq!(reads, vec![1], "only the head is read");
        // AFC must look at every page whose flag can still change.
        let pages = [
            pg(1, 2, 0, None, AI),
            pg(2, 2, 1, Some(1), AT),
            pg(3, 2, 2, Some(2), AT),
        ];
        let g = Graph::build(&pages, &|p| p.0 / 8, false);
        let mut n = 0;
        let stale = vec![false; pages.len()];
        let d = decide(Variant::Afc, &pages, &g, &stale, &mut |i| {
            n += 1;
            let _ = i;
            Ok(AT)
        })
        .unwrap();
        assert!(d.committed.contains(&2));
        assert_eq!(n, 3);
    }

    #[test]
    fn flag_encodings() {
        assert!(!Variant::Cfc.is_true(FLAG_CFC_FALSE) && Variant::Cfc.is_true(FLAG_TRUE));
        assert!(!Variant::Afc.is_true(FLAG_AFC_INITIAL_FALSE));
        assert!(Variant::Afc.is_true(FLAG_TRUE) && !Variant::Afc.is_true(FLAG_AFC_FALSE));
        // Every transition only clears bits.
        assert_eq!(FLAG_CFC_FALSE & !BIT_COMMIT, FLAG_TRUE);
        assert_eq!(FLAG_AFC_INITIAL_FALSE & !BIT_COMMIT, FLAG_TRUE);
        assert_eq!(FLAG_TRUE & !BIT_AFC_ABORT, FLAG_AFC_FALSE);
        let m = pg(77, 3, 2, Some(5), FLAG_TRUE);
        let mut oob = [0xFFu8; 32];
        m.write(&mut oob);
        assert_eq!(PageMeta::parse(Ppa(77), &oob), Some(m));
    }
}
