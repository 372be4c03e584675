//! `full` data mode for the crash checker: record contents and the workloads' consistency
//! conditions (TPC-C §3.3.2.1–§3.3.2.4, TPC-B's balance sums) on a recovered database.
//!
//! A record's value in the host is a 64-bit digest of its history (`data.rs`), not bytes.
//! Its *contents* — whether it is there, an inserted row's fill seed (where TPC-C keeps
//! the key fields conditions 2–4 read, `workload::tpcc::row_fill`) and the summed `AddI64`
//! deltas of its arithmetic fields — are recovered here from the digest: every value a
//! slot takes along the serial replay of the recorded commits (in commit-issue order, the
//! order the oracle replays; record locks make each slot's writes follow it) is decoded as
//! it is produced, so a recovered value is looked up in its slot's chain. A value no
//! committed history produces is `Unknown` (the oracle reports it as a wrong record too).
//! The conditions are then evaluated on the recovered contents, independently of the
//! oracle: a workload that skips a field update, or a recovery that loses a page of a
//! committed transaction, breaks a sum even where each record taken alone is a legal
//! state.
//!
//! What the modelled workloads keep and do not keep is in the generators' `consistency`
//! docs (TPC-C: arithmetic fields by deltas from the loaded values; loaded rows' keys from
//! their slots; TPC-B: balances). Workloads without conditions (bank, TATP, records) check
//! nothing here.

use crate::data::CommitRec;
use crate::data::{Effect, Layout, PageNo};
use std::collections::BTreeMap;
use workload::db::{FieldOp, RecOp, Rid, RowContent, TableId, TxnSource};

/// Per changed slot: every (value, contents) it takes along the replay of the commits.
pub struct Contents {
    chains: BTreeMap<(PageNo, u16), Vec<(u64, RowContent)>>,
    source: Box<dyn TxnSource>,
}

fn loaded_content(layout: &Layout, p: PageNo, s: u16) -> RowContent {
    if layout.is_loaded(p, s) {
        RowContent::Present {
            fill: None,
            adds: BTreeMap::new(),
        }
    } else {
        RowContent::Absent
    }
}

impl Contents {
    /// Builds the chains of a run's commits (`commits`, of the run of `cfg` and `seed` on
    /// `layout`) after `before` and the workload's generator as loaded. `None` when the
    /// workload defines no consistency conditions. `before`: for a run that started from a
    /// recovered database (run-on, `check::check_run_on`), the commits of the crashed run
    /// that database holds, in commit order, so the chains run from the loaded state
    /// through them and then through the run's own commits. The checker's entry points
    /// (`Contents::new`, `Contents::after`) take a recording (`check::HostRecording`).
    pub fn of_commits(
        cfg: &crate::HostConfig,
        seed: u64,
        layout: &Layout,
        before: &[CommitRec],
        commits: &[CommitRec],
    ) -> Result<Option<Contents>, String> {
        let source = crate::source::build(cfg, seed).map_err(|e| e.to_string())?;
        if !source.has_consistency() {
            return Ok(None);
        }
        let mut chains: BTreeMap<(PageNo, u16), Vec<(u64, RowContent)>> = BTreeMap::new();
        for c in before.iter().chain(commits) {
            for op in &c.spec.ops {
                let Some(eff) = Effect::of(op) else { continue };
                let rid = op.rid();
                let key = (layout.page_of(rid), rid.slot);
                let chain = chains.entry(key).or_insert_with(|| {
                    vec![(
                        layout.initial_slot(key.0, key.1),
                        loaded_content(layout, key.0, key.1),
                    )]
                });
                let (v, cur) = chain.last().cloned().unwrap_or((0, RowContent::Absent));
                let next = match op {
                    RecOp::Update { changes, .. } => match cur {
                        RowContent::Present { fill, mut adds } => {
                            for ch in changes {
                                if let FieldOp::AddI64(d) = ch.op {
                                    *adds.entry(ch.offset).or_insert(0) += d;
                                }
                            }
                            RowContent::Present { fill, adds }
                        }
                        // An update of a missing row: nothing a condition can read.
                        other => other,
                    },
                    RecOp::Insert { fill, .. } => RowContent::Present {
                        fill: Some(*fill),
                        adds: BTreeMap::new(),
                    },
                    RecOp::Delete(_) => RowContent::Absent,
                    RecOp::Read(_) => unreachable!("reads have no effect"),
                };
                chain.push((eff.apply(v), next));
            }
        }
        Ok(Some(Contents { chains, source }))
    }

    /// The contents of slot `s` of page `p` holding value `v`.
    fn decode(&self, layout: &Layout, p: PageNo, s: u16, v: u64) -> RowContent {
        if let Some(chain) = self.chains.get(&(p, s)) {
            // The newest state with this value (a slot may come back to a value only by a
            // digest collision, which the 64-bit mix makes negligible).
            if let Some((_, c)) = chain.iter().rev().find(|(x, _)| *x == v) {
                return c.clone();
            }
        } else if v == layout.initial_slot(p, s) {
            return loaded_content(layout, p, s);
        }
        if v == 0 {
            RowContent::Absent
        } else {
            RowContent::Unknown
        }
    }

    /// The workload's consistency findings on database `db` (changed pages; others as
    /// loaded), each prefixed so a report says where it comes from.
    pub fn findings(&self, layout: &Layout, db: &BTreeMap<PageNo, Vec<u64>>) -> Vec<String> {
        let schema = &layout.schema;
        let rows = |t: TableId| -> Vec<(Rid, RowContent)> {
            let def = schema.table(t);
            let mut out = Vec::new();
            for page in 0..def.pages_max {
                let p = layout.page_of(Rid {
                    table: t,
                    page,
                    slot: 0,
                });
                let stored = db.get(&p);
                if stored.is_none() && page >= def.pages_initial && !layout.is_loaded(p, 0) {
                    // Never written and nothing loaded beyond the initial pages.
                    continue;
                }
                for s in 0..def.records_per_page {
                    let v = match stored {
                        Some(vals) => vals.get(s as usize).copied().unwrap_or(0),
                        None => layout.initial_slot(p, s),
                    };
                    let c = self.decode(layout, p, s, v);
                    if c != RowContent::Absent {
                        out.push((
                            Rid {
                                table: t,
                                page,
                                slot: s,
                            },
                            c,
                        ));
                    }
                }
            }
            out
        };
        self.source
            .consistency(&rows)
            .into_iter()
            .map(|f| format!("consistency: {f}"))
            .collect()
    }
}

/// The planted bug `HostConfig::fault_drop_page`: forget the changes to the first changed
/// page of table 1 (TPC-C district, TPC-B teller).
pub fn plant_drop_page(layout: &Layout, db: &mut BTreeMap<PageNo, Vec<u64>>) {
    let t = TableId(1);
    if layout.schema.tables.len() < 2 {
        return;
    }
    let first = layout.page_of(Rid {
        table: t,
        page: 0,
        slot: 0,
    });
    let end = PageNo(first.0 + u64::from(layout.schema.table(t).pages_max));
    if let Some(p) = db.range(first..end).map(|(p, _)| *p).next() {
        db.remove(&p);
    }
}
