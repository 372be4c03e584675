//! The host oracle (`check::judge_commits`) against a plain restatement of its rule: the
//! serial replay of the acked commits in list order from the loaded values, each in-flight
//! commit all or nothing on top of it, every record of every page a commit writes or the
//! recovered database lists compared. The oracle keeps its replay in a dense table (it runs
//! once per crash state, the crash checker's hot path); this restatement keeps it in a
//! `BTreeMap`. Both must give the same findings, in the same order, for right and wrong
//! databases at every commit instant of recorded runs.

use commitlab_host as host;
use host::check::{self, judge_commits};
use host::data::{Effect, Layout, PageNo};
use host::engine::CommitRec;
use sim::SimTime;
use std::collections::{BTreeMap, BTreeSet};
use workload::db::RecOp;

/// The serial replay of the commits acked by `t`, in list order.
fn replay(layout: &Layout, commits: &[CommitRec], t: SimTime) -> BTreeMap<(PageNo, u16), u64> {
    let mut m = BTreeMap::new();
    for c in commits.iter().filter(|c| c.ack <= t) {
        for op in &c.spec.ops {
            if let Some(eff) = Effect::of(op) {
                let p = layout.page_of(op.rid());
                let s = op.rid().slot;
                let cur = m
                    .get(&(p, s))
                    .copied()
                    .unwrap_or_else(|| layout.initial_slot(p, s));
                m.insert((p, s), eff.apply(cur));
            }
        }
    }
    m
}

/// The oracle's rule restated over `BTreeMap`s.
fn reference(
    layout: &Layout,
    commits: &[CommitRec],
    t: SimTime,
    db: &BTreeMap<PageNo, Vec<u64>>,
) -> Vec<String> {
    let base = replay(layout, commits, t);
    let value = |p: PageNo, s: u16| {
        base.get(&(p, s))
            .copied()
            .unwrap_or_else(|| layout.initial_slot(p, s))
    };
    let mut pages: BTreeSet<PageNo> = db.keys().copied().collect();
    for c in commits {
        for op in &c.spec.ops {
            if !matches!(op, RecOp::Read(_)) {
                pages.insert(layout.page_of(op.rid()));
            }
        }
    }
    let got = |p: PageNo, s: u16| match db.get(&p) {
        Some(v) => v.get(s as usize).copied().unwrap_or(u64::MAX),
        None => layout.initial_slot(p, s),
    };
    let mut findings = Vec::new();
    let mut owned = BTreeSet::new();
    for c in commits.iter().filter(|c| c.issue <= t && t < c.ack) {
        let mut w: BTreeMap<(PageNo, u16), u64> = BTreeMap::new();
        for op in &c.spec.ops {
            if let Some(eff) = Effect::of(op) {
                let p = layout.page_of(op.rid());
                let s = op.rid().slot;
                let cur = w.get(&(p, s)).copied().unwrap_or_else(|| value(p, s));
                w.insert((p, s), eff.apply(cur));
            }
        }
        let (mut with, mut without) = (0, 0);
        for (&(p, s), &v) in &w {
            owned.insert((p, s));
            let g = got(p, s);
            if g == v {
                with += 1;
            } else if g == value(p, s) {
                without += 1;
            } else {
                findings.push(format!(
                    "page {} slot {s}: {g:#x} is neither before nor after in-flight {} ({:#x} / {v:#x})",
                    p.0,
                    c.txn,
                    value(p, s)
                ));
            }
        }
        if with > 0 && without > 0 {
            findings.push(format!(
                "in-flight {} is partly visible: {with} records with it, {without} without",
                c.txn
            ));
        }
    }
    for p in pages {
        if p.0 >= layout.pages {
            findings.push(format!("recovered page {} is beyond the database", p.0));
            continue;
        }
        if let Some(v) = db.get(&p) {
            if v.len() != layout.slots(p) as usize {
                findings.push(format!("recovered page {} has {} slots", p.0, v.len()));
                continue;
            }
        }
        for s in 0..layout.slots(p) {
            if owned.contains(&(p, s)) {
                continue;
            }
            let (g, want) = (got(p, s), value(p, s));
            if g != want {
                let who = commits
                    .iter()
                    .rev()
                    .filter(|c| c.ack <= t)
                    .find(|c| {
                        c.spec.ops.iter().any(|o| {
                            o.writes() && layout.page_of(o.rid()) == p && o.rid().slot == s
                        })
                    })
                    .map(|c| c.txn.to_string())
                    .unwrap_or_else(|| "no acked transaction (loaded value)".into());
                findings.push(format!(
                    "page {} slot {s}: recovered {g:#x}, serial replay of the acked commits gives {want:#x} (last acked writer: {who})",
                    p.0
                ));
            }
        }
        if findings.len() > 20 {
            break;
        }
    }
    findings
}

/// The database a correct recovery gives at `t`: every touched page, replayed.
fn right_db(layout: &Layout, commits: &[CommitRec], t: SimTime) -> BTreeMap<PageNo, Vec<u64>> {
    let base = replay(layout, commits, t);
    let pages: BTreeSet<PageNo> = base.keys().map(|&(p, _)| p).collect();
    pages
        .into_iter()
        .map(|p| {
            let v = (0..layout.slots(p))
                .map(|s| {
                    base.get(&(p, s))
                        .copied()
                        .unwrap_or_else(|| layout.initial_slot(p, s))
                })
                .collect();
            (p, v)
        })
        .collect()
}

fn same_findings(strategy: &str, workload: &str) -> usize {
    let (mut h, mut d) = check::tiny_config(strategy, "none");
    h.workload = workload.into();
    if workload == "tpcc" {
        // The README's small TPC-C crash run.
        h.tpcc.warehouses = 1;
        h.tpcc.customers_per_district = 20;
        h.tpcc.items = 50;
        h.tpcc.max_txns = 200;
        h.transactions = 40;
        h.buffer_frames = 8;
        h.log_pages = 32;
        d.nand.blocks_per_plane = 64;
    }
    let rec = check::record(&h, &d, 3).expect("recording");
    let (layout, commits) = (&rec.layout, &rec.commits);
    assert!(commits.len() > 10, "{workload}: {} commits", commits.len());
    let mut instants: Vec<SimTime> = vec![SimTime::ZERO];
    for c in commits {
        instants.extend([c.issue, c.ack]);
    }
    instants.sort_unstable();
    instants.dedup();
    let mut wrong = 0;
    for (k, &t) in instants.iter().enumerate() {
        let right = right_db(layout, commits, t);
        let mut dbs = vec![right.clone(), BTreeMap::new()];
        if let Some((&p, v)) = right.iter().nth(k % right.len().max(1)) {
            let mut d1 = right.clone();
            let mut v1 = v.clone();
            let s = k % v1.len();
            v1[s] ^= 0x5a5a;
            d1.insert(p, v1);
            dbs.push(d1);
            let mut d2 = right.clone();
            d2.insert(p, v[..v.len() - 1].to_vec());
            d2.insert(PageNo(layout.pages + 3), vec![1, 2, 3]);
            dbs.push(d2);
        }
        // The state a crash before any in-flight commit's pages would leave: the replay one
        // commit earlier.
        if k > 0 {
            dbs.push(right_db(layout, commits, instants[k - 1]));
        }
        for db in &dbs {
            let want = reference(layout, commits, t, db);
            let got = judge_commits(layout, commits, t, db);
            assert_eq!(got, want, "{workload} at {t}");
            wrong += usize::from(!got.is_empty());
        }
        // The right database passes.
        assert!(judge_commits(layout, commits, t, &right).is_empty());
    }
    wrong
}

#[test]
fn the_oracle_gives_the_findings_of_its_rule_on_bank_and_tpcc_runs() {
    // Each run also has wrong databases the oracle must flag, or the comparison is empty.
    assert!(same_findings("wal", "bank") > 10);
    assert!(same_findings("wal", "tpcc") > 10);
}
