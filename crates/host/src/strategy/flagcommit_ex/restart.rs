//! The run-on restart of `cfc-ex` / `afc-ex` (`RecoverCtx::write_back`, the crash checker's
//! run-on mode): what Algorithm 3's restart writes so the engine can run on the recovered
//! device and crash again, and the state the strategy resumes with (`Resume`). Rules and
//! the case-by-case argument: `mod.rs`, "Run-on restart".

use super::layout::VersionTag;
use super::layout::{flag_place, flag_true, log_lpn, slots_base, version_lpn, FcTag, Redo};
use super::tables::{PageMeta, SlotState, Status, Txn, Version};
use super::{versions_for, FlagCommitEx, Variant};
use crate::data::{PageNo, TagContent};
use crate::engine::{data_lpns, Core};
use crate::hooks::RecoverCtx;
use crate::{HostError, Result};
use sim::{SimTime, TxnId};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The sequence number of a void log page: a run-on restart writes one over every log page
/// beyond the log's end; no scan expects it.
pub(super) const VOID_SEQ: u64 = u64::MAX;

/// What Algorithm 3 found (`recovery.rs`), for the write-back.
pub(super) struct Found<'a> {
    /// The master's B (None: no master).
    pub master_b: Option<u64>,
    /// The sequence number of the log's end: its last page when that page is not sealed
    /// (`open_tail` holds its entries), else the first page the scan did not find.
    pub end_seq: u64,
    pub open_tail: Option<Vec<Redo>>,
    /// The complete versions with their nodes' flags as read, and the flag bytes.
    pub versions: &'a [(Arc<VersionTag>, Vec<bool>)],
    pub bytes: &'a [Vec<u8>],
    /// Per page the highest version number any of its parts holds.
    pub vno_max: &'a BTreeMap<PageNo, u64>,
    /// Pages whose slot 0 holds parts of no complete version.
    pub slot0_raw: &'a BTreeSet<PageNo>,
    pub committed: &'a BTreeSet<TxnId>,
    pub redo: &'a [Redo],
    /// The recovered database: per record (value, usn).
    pub db: &'a BTreeMap<PageNo, Vec<(u64, u64)>>,
}

/// The state a run-on restart leaves for the strategy (`FlagCommitEx::resume_from`): the
/// log position (after the restart's void pages), the master still in force, the live
/// versions with their flags as the restart left them, every recovered record, the
/// finished transactions that still have nodes, and the pages whose recovered records are
/// in no complete version (written before the next master).
#[derive(Debug)]
pub struct Resume {
    seq: u64,
    tail: Vec<Redo>,
    log_floor: SimTime,
    flag_ack: SimTime,
    usn: u64,
    master_b: Option<u64>,
    pages: BTreeMap<PageNo, ResumePage>,
    committed: BTreeSet<TxnId>,
    losers: BTreeSet<TxnId>,
    restart_dirty: BTreeSet<PageNo>,
    slot0_raw: BTreeSet<PageNo>,
}

#[derive(Debug)]
struct ResumePage {
    /// Per record: (value, usn, held by a complete version).
    slots: Vec<(u64, u64, bool)>,
    versions: Vec<Version>,
    next_vno: u64,
}

/// Does version `v` (flags as they will read after the restart) offer (val, usn) for
/// record `s` as a committed candidate?
fn holds(v: &VersionTag, s: usize, committed: &BTreeSet<TxnId>, want: (u64, u64)) -> bool {
    let r = v.records[s];
    r.committed == Some(want)
        || r.pending.is_some_and(|(ni, val, u)| {
            (val, u) == want
                && v.nodes
                    .get(ni as usize)
                    .is_some_and(|n| committed.contains(&n.xid))
        })
}

/// The run-on restart's writes (`mod.rs`, "Run-on restart"): 1) every log page beyond the
/// log's end voided; 2) the commits finished and the losers closed in the flags: every node
/// of a committed transaction reads TRUE, every node of a loser FALSE; then the `Resume`
/// state in `ctx.write_back`. Nothing else is written: the master and the log from B stay
/// in force until the resumed run's first checkpoint has written every page whose recovered
/// records are in the log only (`restart_dirty`).
pub(super) fn write_back(ctx: &mut RecoverCtx<'_>, variant: Variant, f: Found<'_>) -> Result<()> {
    let Some(wb) = ctx.write_back.take() else {
        return Ok(());
    };
    let out = write_back_into(ctx, wb, variant, f);
    ctx.write_back = Some(wb);
    out
}

fn write_back_into(
    ctx: &mut RecoverCtx<'_>,
    wb: &mut crate::hooks::WriteBack,
    variant: Variant,
    f: Found<'_>,
) -> Result<()> {
    let layout = ctx.layout;
    let d = data_lpns(layout);
    let log_base = d as u32 + 1;
    let pages = u64::from(ctx.cfg.log_pages);
    let base = slots_base(layout, ctx.cfg.log_pages);
    let n_slots = versions_for(ctx.cfg.max_c);
    let parts = layout.parts;
    let dev_err = |what: String| move |e: ssd::SsdError| HostError::Corrupt(format!("{what}: {e}"));
    // 1. Void every log page beyond the end. The resumed log continues at `end_seq`; once
    //    it seals that page, a scan would read on into a page the crashed run wrote after a
    //    page that did not persist (a COMMIT of a transaction this restart judged a loser).
    let mut void_done = ctx.now;
    for k in 0..pages {
        let lpn = log_lpn(log_base, pages, k);
        let at = ctx.now;
        let (o, t) = ctx
            .device
            .read(lpn, at)
            .map_err(dev_err(format!("reading {lpn}")))?;
        ctx.now = ctx.now.max(t);
        let stale = match o {
            ssd::ReadOutcome::Tag(tag) => matches!(
                ctx.tags.get(tag),
                Some(c) if matches!(c.strategy::<FcTag>(), Some(FcTag::Log { seq, .. }) if *seq > f.end_seq && *seq != VOID_SEQ)
            ),
            _ => false,
        };
        if stale && ctx.cfg.fault_fc != "restart-no-void" {
            let void = wb.tags.add(|| {
                TagContent::Strategy(Arc::new(FcTag::Log {
                    seq: VOID_SEQ,
                    sealed: false,
                    entries: Vec::new(),
                }))
            });
            let at = ctx.now;
            let t = ctx
                .device
                .write_plain(lpn, void, at)
                .map_err(dev_err(format!("voiding {lpn}")))?;
            void_done = void_done.max(t);
            wb.voided += 1;
        }
    }
    // 2. Flags. A committed transaction whose COMMIT is in the log from B may have FALSE
    //    nodes (the crash came between the force and its flag programs, Algorithm 2 line 4):
    //    once the next master moves B past that COMMIT, only flags decide it, so every node
    //    of it is programmed TRUE now (CFC: 0x00; AFC: 0xFE). A loser may have nodes that
    //    read TRUE (AFC: written TRUE, or programmed by a commit the crash cut short): each
    //    gets an abort mark (0xFC), so reclaiming its FALSE node later cannot commit it.
    let mut flag_ack = ctx.now;
    let mut losers: BTreeSet<TxnId> = BTreeSet::new();
    let mut by_page: BTreeMap<PageNo, Vec<Version>> = BTreeMap::new();
    for ((v, flags), bytes) in f.versions.iter().zip(f.bytes) {
        let mut vflags = Vec::with_capacity(v.nodes.len());
        let mut marks = Vec::with_capacity(v.nodes.len());
        for (i, n) in v.nodes.iter().enumerate() {
            let won = f.committed.contains(&n.xid);
            if !won {
                losers.insert(n.xid);
            }
            let mut byte = bytes[i];
            if flags[i] != won && ctx.cfg.fault_fc != "restart-no-flags" {
                let target = match (variant, won) {
                    (Variant::Cfc, true) => 0x00,
                    (Variant::Afc, true) => 0xFE,
                    (_, false) => 0xFC,
                };
                if flag_true(variant, n.init_true, byte & target) != won {
                    return Err(HostError::Corrupt(format!(
                        "page {} version {}: node {i} (txn {}) has flag byte {byte:#04x}, which cannot be programmed to read {}",
                        v.page.0,
                        v.vno,
                        n.xid.0,
                        if won { "TRUE" } else { "FALSE" }
                    )));
                }
                let (k, off) = flag_place(parts, i);
                let lpn = version_lpn(layout, base, n_slots, v.page, v.slot, k);
                let at = ctx.now;
                let t = ctx
                    .device
                    .write_delta(lpn, off, &[target], at)
                    .map_err(dev_err(format!("programming a commit flag in {lpn}")))?;
                flag_ack = flag_ack.max(t);
                byte &= target;
            }
            // The node's flag as the strategy's tables represent it (`gc.rs::node_true`):
            // None reads 0xFF; Some with a mark 0xFC, without 0xFE (CFC: 0x00).
            let reads = flag_true(variant, n.init_true, byte);
            let (programmed, mark) = match variant {
                Variant::Cfc => (reads, false),
                Variant::Afc => (byte != 0xFF, byte != 0xFF && !reads),
            };
            vflags.push(programmed.then_some(SimTime::ZERO));
            marks.push(mark);
        }
        by_page.entry(v.page).or_default().push(Version {
            slot: v.slot,
            vno: v.vno,
            ack: SimTime::ZERO,
            tag: v.clone(),
            flags: vflags,
            marks,
        });
    }
    let mut usn = 0;
    for (v, _) in f.versions {
        for r in &v.records {
            usn = usn.max(r.committed.map_or(0, |c| c.1));
            usn = usn.max(r.pending.map_or(0, |p| p.2));
        }
    }
    for r in f.redo {
        if let Redo::Update { usn: u, .. } = r {
            usn = usn.max(*u);
        }
    }
    // Every page with a recovered record, a live version, or parts in slot 0.
    let mut touched: BTreeSet<PageNo> = f.db.keys().copied().collect();
    touched.extend(by_page.keys().copied());
    touched.extend(f.slot0_raw.iter().copied());
    let mut out_pages = BTreeMap::new();
    let mut restart_dirty = BTreeSet::new();
    for p in touched {
        let mut versions = by_page.remove(&p).unwrap_or_default();
        versions.sort_by_key(|v| v.vno);
        let recs: Vec<(u64, u64)> = match f.db.get(&p) {
            Some(r) => r.clone(),
            None => layout.initial_page(p).into_iter().map(|v| (v, 0)).collect(),
        };
        let mut slots = Vec::with_capacity(recs.len());
        for (s, &(val, u)) in recs.iter().enumerate() {
            let held = u == 0
                || versions
                    .iter()
                    .any(|v| holds(&v.tag, s, f.committed, (val, u)));
            if !held {
                restart_dirty.insert(p);
            }
            slots.push((val, u, held));
        }
        let next_vno = f.vno_max.get(&p).copied().unwrap_or(0) + 1;
        out_pages.insert(
            p,
            ResumePage {
                slots,
                versions,
                next_vno,
            },
        );
    }
    let committed: BTreeSet<TxnId> = f
        .versions
        .iter()
        .flat_map(|(v, _)| v.nodes.iter().map(|n| n.xid))
        .filter(|x| f.committed.contains(x))
        .collect();
    wb.resume = Some(crate::hooks::Resume::new(Resume {
        seq: f.end_seq,
        tail: f.open_tail.unwrap_or_default(),
        log_floor: void_done,
        flag_ack,
        usn,
        master_b: f.master_b,
        pages: out_pages,
        committed,
        losers,
        restart_dirty,
        slot0_raw: f.slot0_raw.clone(),
    }));
    ctx.now = ctx.now.max(flag_ack).max(void_done);
    Ok(())
}

impl FlagCommitEx {
    /// Takes up a run-on restart's state (`Resume`): the log continues at the restart's end
    /// (inside its last page when that page is not sealed, every entry of it already
    /// written), the restart's master is the acked one, the usn counter continues above
    /// every usn on the medium, every live version and recovered record is known, and the
    /// finished transactions with live nodes keep them (committed and acked, or aborted), so
    /// the §4.3 reclaim rules apply to them as to the run's own. A checkpoint is due at
    /// once: it writes `restart_dirty` before its master (`checkpoint.rs`).
    pub(super) fn resume_from(&mut self, r: Resume, core: &Core) {
        self.seq = r.seq;
        self.forced = r.tail.len();
        self.tail = r.tail;
        self.log_floor = r.log_floor;
        self.flag_ack = r.flag_ack;
        self.issued_ack = r.log_floor;
        self.usn = r.usn;
        self.masters = r.master_b.map(|b| (SimTime::ZERO, b)).into_iter().collect();
        let mut nodes: BTreeMap<TxnId, (Vec<super::tables::NodeRef>, BTreeSet<PageNo>)> =
            BTreeMap::new();
        for (p, rp) in r.pages {
            for v in &rp.versions {
                for (i, n) in v.tag.nodes.iter().enumerate() {
                    let e = nodes.entry(n.xid).or_default();
                    e.0.push((p, v.slot, v.vno, i));
                    e.1.insert(p);
                }
            }
            let m = PageMeta {
                slots: rp
                    .slots
                    .into_iter()
                    .map(|(val, u, held)| SlotState {
                        committed: (val, u),
                        on_disk: held,
                        absent: false,
                        pending: None,
                        dirty: !held,
                    })
                    .collect(),
                versions: rp.versions,
                next_vno: rp.next_vno,
                pending_at: Vec::new(),
                any_absent: false,
            };
            debug_assert_eq!(m.slots.len(), core.layout.slots(p) as usize);
            self.meta.insert(p, m);
        }
        for (x, (nodes, pages)) in nodes {
            let status = if r.committed.contains(&x) {
                Status::Committed(SimTime::ZERO)
            } else {
                debug_assert!(r.losers.contains(&x));
                Status::Aborted
            };
            self.txns.insert(
                x,
                Txn {
                    status,
                    client: 0,
                    nodes,
                    pages,
                    gone_ack: SimTime::ZERO,
                    dropped_ack: SimTime::ZERO,
                    folded: true,
                },
            );
        }
        self.restart_dirty = r.restart_dirty;
        self.slot0_raw = r.slot0_raw;
        if self.ckpt_every > 0 {
            self.bytes_since_ckpt = self.ckpt_every;
        }
    }
}
