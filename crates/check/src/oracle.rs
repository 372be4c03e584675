//! The oracle: given the host log and a crash instant `T`, is a recovered device's content
//! one that the durability contract allows?
//!
//! Every change the host asked for is a *unit*: a committed transaction (all its writes; for a
//! non-atomic protocol, each write on its own), a plain write, or a trim. At `T` a unit is
//! - **acked** if its ack (the commit's, for a transaction) came at or before `T`: it must be
//!   visible, unless a later unit overwrote it;
//! - **in flight** if it was issued (its commit, for a transaction) at or before `T` but not
//!   acked: it may or may not be visible, but all or nothing;
//! - **never** otherwise (aborted, not yet committed, not yet issued): it must not be visible.
//!
//! Units are ordered by the issue of their commit (plain writes and trims by their issue).
//! Per logical page the value read must come from the newest acked unit that wrote it, or
//! from an in-flight unit after that one; choosing it makes that unit *in* and every in-flight
//! unit after it on that page *out*. A unit both in and out is partly visible: an atomicity
//! violation.
//!
//! What it does not check: read isolation (reads are not transactional), and the timing of
//! acks (only their order relative to the crash).

use sim::{Lpn, SimTime};
use ssd::ReadOutcome;
use std::collections::BTreeMap;
use world::HostEvent;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Acked,
    InFlight,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    Tag(u64),
    Unmapped,
}

struct Unit {
    status: Status,
    what: String,
}

/// Per logical page: the units that wrote it, in unit order, with the value they left.
struct History {
    units: Vec<Unit>,
    per_lpn: BTreeMap<u32, Vec<(usize, Value)>>,
    /// Tag → (unit, lpn, final-in-unit?).
    tags: BTreeMap<u64, (usize, u32, bool)>,
}

/// A problem the oracle found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub lpn: Option<Lpn>,
    pub what: String,
}

fn build(log: &[HostEvent], t: SimTime, atomic: bool) -> History {
    let mut units: Vec<Unit> = Vec::new();
    let mut order: Vec<(usize, usize)> = Vec::new(); // (order key, unit)
    let mut per_unit_writes: Vec<Vec<(u32, Value, u64)>> = Vec::new();
    // Transaction instances: their writes, then their fate.
    let mut tx_writes: BTreeMap<u64, Vec<(u32, u64, SimTime, usize)>> = BTreeMap::new();
    let mut tx_fate: BTreeMap<u64, (usize, Status)> = BTreeMap::new();
    let status = |issue: SimTime, ack: SimTime| {
        if ack <= t {
            Status::Acked
        } else if issue <= t {
            Status::InFlight
        } else {
            Status::Never
        }
    };
    for (i, ev) in log.iter().enumerate() {
        match *ev {
            HostEvent::Plain {
                lpn,
                tag,
                issue,
                ack,
            } => {
                order.push((i, units.len()));
                units.push(Unit {
                    status: status(issue, ack),
                    what: format!("plain write of lpn {} (tag {tag})", lpn.0),
                });
                per_unit_writes.push(vec![(lpn.0, Value::Tag(tag), tag)]);
            }
            HostEvent::Trim { lpn, issue, ack } => {
                order.push((i, units.len()));
                units.push(Unit {
                    status: status(issue, ack),
                    what: format!("trim of lpn {}", lpn.0),
                });
                per_unit_writes.push(vec![(lpn.0, Value::Unmapped, 0)]);
            }
            HostEvent::TxWrite {
                inst,
                lpn,
                tag,
                issue,
            } => {
                tx_writes
                    .entry(inst)
                    .or_default()
                    .push((lpn.0, tag, issue, i));
            }
            HostEvent::Commit { inst, issue, ack } => {
                tx_fate.insert(inst, (i, status(issue, ack)));
            }
            HostEvent::Abort { inst, .. } => {
                tx_fate.insert(inst, (i, Status::Never));
            }
        }
    }
    for (inst, writes) in tx_writes {
        let (key, st) = tx_fate
            .get(&inst)
            .copied()
            .unwrap_or((usize::MAX, Status::Never));
        if atomic {
            order.push((key, units.len()));
            units.push(Unit {
                status: st,
                what: format!("transaction #{inst} ({} writes)", writes.len()),
            });
            per_unit_writes.push(
                writes
                    .iter()
                    .map(|(l, tg, _, _)| (*l, Value::Tag(*tg), *tg))
                    .collect(),
            );
        } else {
            // Without atomicity each write is its own unit, ordered by its own issue: durable
            // once the commit is acked, possibly durable from its issue on.
            for (l, tg, issue, idx) in writes {
                let st = if st == Status::Acked {
                    Status::Acked
                } else if issue <= t {
                    Status::InFlight
                } else {
                    Status::Never
                };
                order.push((idx, units.len()));
                units.push(Unit {
                    status: st,
                    what: format!("write of lpn {l} in transaction #{inst} (tag {tg})"),
                });
                per_unit_writes.push(vec![(l, Value::Tag(tg), tg)]);
            }
        }
    }
    order.sort();
    let mut per_lpn: BTreeMap<u32, Vec<(usize, Value)>> = BTreeMap::new();
    let mut tags = BTreeMap::new();
    for (_, u) in order {
        let writes = &per_unit_writes[u];
        for (k, (l, v, tag)) in writes.iter().enumerate() {
            let last_in_unit = !writes[k + 1..].iter().any(|(l2, _, _)| l2 == l);
            if let Value::Tag(_) = v {
                tags.insert(*tag, (u, *l, last_in_unit));
            }
            if last_in_unit {
                per_lpn.entry(*l).or_default().push((u, *v));
            }
        }
    }
    History {
        units,
        per_lpn,
        tags,
    }
}

/// Checks a recovered device's contents (`observed[lpn]`) against the host log at crash
/// instant `t`. `atomic` says whether the protocol promises transaction atomicity.
pub fn judge(
    log: &[HostEvent],
    t: SimTime,
    atomic: bool,
    observed: &[ReadOutcome],
) -> Vec<Finding> {
    let h = build(log, t, atomic);
    let mut findings = Vec::new();
    let mut inn = vec![false; h.units.len()];
    let mut out = vec![false; h.units.len()];
    for (lpn, obs) in observed.iter().enumerate() {
        let l = lpn as u32;
        let empty = Vec::new();
        let writers: Vec<&(usize, Value)> = h
            .per_lpn
            .get(&l)
            .unwrap_or(&empty)
            .iter()
            .filter(|(u, _)| h.units[*u].status != Status::Never)
            .collect();
        // Position of the newest acked writer (None: the initial, unmapped state).
        let last_acked = writers
            .iter()
            .rposition(|(u, _)| h.units[*u].status == Status::Acked);
        let from = last_acked.unwrap_or(0);
        let mut bad = |what: String| {
            findings.push(Finding {
                lpn: Some(Lpn(l)),
                what,
            })
        };
        match obs {
            ReadOutcome::Uncorrectable => bad("reads garbage (uncorrectable page)".into()),
            ReadOutcome::Bytes(_) => bad("reads raw bytes that no host write put there".into()),
            ReadOutcome::Tag(tag) => {
                let Some(&(u, wl, last)) = h.tags.get(tag) else {
                    bad(format!("reads tag {tag}, which no host write ever wrote"));
                    continue;
                };
                if wl != l {
                    bad(format!("reads tag {tag}, which was written to lpn {wl}"));
                    continue;
                }
                if h.units[u].status == Status::Never {
                    bad(format!(
                        "reads tag {tag} of {}, which never committed by the crash",
                        h.units[u].what
                    ));
                    continue;
                }
                if !last {
                    bad(format!(
                        "reads tag {tag}, an intermediate version inside {}",
                        h.units[u].what
                    ));
                    continue;
                }
                let Some(pos) = writers.iter().position(|(x, _)| *x == u) else {
                    bad(format!(
                        "reads tag {tag} of {}, which did not write this page",
                        h.units[u].what
                    ));
                    continue;
                };
                if let Some(a) = last_acked {
                    if pos < a {
                        let (au, _) = writers[a];
                        bad(format!(
                            "reads tag {tag} of {}, older than the acked {}",
                            h.units[u].what, h.units[*au].what
                        ));
                        continue;
                    }
                }
                inn[u] = true;
                for (x, _) in &writers[pos + 1..] {
                    out[*x] = true;
                }
            }
            ReadOutcome::Unmapped => {
                // The unmapped value comes from the initial state or a trim at/after `from`.
                let cand = writers[from.min(writers.len())..]
                    .iter()
                    .rposition(|(_, v)| *v == Value::Unmapped)
                    .map(|p| p + from);
                let initial_ok = last_acked.is_none();
                match cand {
                    Some(p) => {
                        for (x, _) in &writers[p + 1..] {
                            out[*x] = true;
                        }
                    }
                    None if initial_ok => {
                        for (x, _) in &writers {
                            out[*x] = true;
                        }
                    }
                    None => {
                        let (au, _) = writers[from];
                        bad(format!(
                            "reads unmapped, but {} was acked",
                            h.units[*au].what
                        ));
                    }
                }
            }
        }
    }
    for u in 0..h.units.len() {
        if inn[u] && out[u] {
            findings.push(Finding {
                lpn: None,
                what: format!("{} is partly visible", h.units[u].what),
            });
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(x: u64) -> SimTime {
        SimTime(x)
    }

    fn plain(lpn: u32, tag: u64, issue: u64, ack: u64) -> HostEvent {
        HostEvent::Plain {
            lpn: Lpn(lpn),
            tag,
            issue: t(issue),
            ack: t(ack),
        }
    }

    #[test]
    fn acked_writes_must_be_visible_in_flight_ones_may_be() {
        let log = [plain(0, 1, 0, 10), plain(0, 2, 20, 30)];
        let ok = |obs: u64, at: u64| judge(&log, t(at), true, &[ReadOutcome::Tag(obs)]).is_empty();
        assert!(ok(1, 15));
        assert!(ok(1, 25) && ok(2, 25), "second write in flight at 25");
        assert!(!ok(1, 30), "second write acked at 30");
        assert!(judge(&log, t(15), true, &[ReadOutcome::Unmapped]).len() == 1);
        assert!(judge(&log, t(5), true, &[ReadOutcome::Unmapped]).is_empty());
    }

    #[test]
    fn garbage_and_foreign_tags_are_violations() {
        let log = [plain(0, 1, 0, 10)];
        assert_eq!(
            judge(&log, t(20), true, &[ReadOutcome::Uncorrectable]).len(),
            1
        );
        assert_eq!(judge(&log, t(20), true, &[ReadOutcome::Tag(99)]).len(), 1);
        let log2 = [plain(1, 5, 0, 10), plain(0, 1, 0, 10)];
        assert_eq!(
            judge(
                &log2,
                t(20),
                true,
                &[ReadOutcome::Tag(5), ReadOutcome::Tag(5)]
            )
            .len(),
            1
        );
    }

    fn tx(inst: u64, writes: &[(u32, u64)], commit_issue: u64, ack: u64) -> Vec<HostEvent> {
        let mut v: Vec<HostEvent> = writes
            .iter()
            .map(|(l, tg)| HostEvent::TxWrite {
                inst,
                lpn: Lpn(*l),
                tag: *tg,
                issue: t(0),
            })
            .collect();
        v.push(HostEvent::Commit {
            inst,
            issue: t(commit_issue),
            ack: t(ack),
        });
        v
    }

    #[test]
    fn in_flight_transactions_are_all_or_nothing() {
        let log = tx(1, &[(0, 10), (1, 11)], 5, 50);
        let j = |a: ReadOutcome, b: ReadOutcome, at: u64| judge(&log, t(at), true, &[a, b]);
        assert!(j(ReadOutcome::Tag(10), ReadOutcome::Tag(11), 20).is_empty());
        assert!(j(ReadOutcome::Unmapped, ReadOutcome::Unmapped, 20).is_empty());
        let partial = j(ReadOutcome::Tag(10), ReadOutcome::Unmapped, 20);
        assert!(
            partial.iter().any(|f| f.what.contains("partly visible")),
            "{partial:?}"
        );
        assert!(
            !j(ReadOutcome::Unmapped, ReadOutcome::Unmapped, 60).is_empty(),
            "acked must be visible"
        );
        assert!(
            !j(ReadOutcome::Tag(10), ReadOutcome::Tag(11), 2).is_empty(),
            "commit not issued at 2"
        );
        // Non-atomic protocols may show half a transaction.
        assert!(judge(
            &log,
            t(20),
            false,
            &[ReadOutcome::Tag(10), ReadOutcome::Unmapped]
        )
        .is_empty());
    }

    #[test]
    fn aborted_transactions_never_show() {
        let mut log = vec![HostEvent::TxWrite {
            inst: 1,
            lpn: Lpn(0),
            tag: 7,
            issue: t(0),
        }];
        log.push(HostEvent::Abort {
            inst: 1,
            issue: t(5),
            ack: t(6),
        });
        assert_eq!(judge(&log, t(20), true, &[ReadOutcome::Tag(7)]).len(), 1);
        assert!(judge(&log, t(20), true, &[ReadOutcome::Unmapped]).is_empty());
    }

    #[test]
    fn a_later_in_flight_transaction_may_supersede_part_of_an_earlier_one() {
        let mut log = tx(1, &[(0, 10), (1, 11)], 5, 50);
        log.extend(tx(2, &[(1, 21)], 6, 60));
        let f = judge(
            &log,
            t(20),
            true,
            &[ReadOutcome::Tag(10), ReadOutcome::Tag(21)],
        );
        assert!(f.is_empty(), "{f:?}");
        let f = judge(
            &log,
            t(20),
            true,
            &[ReadOutcome::Tag(10), ReadOutcome::Tag(11)],
        );
        assert!(f.is_empty(), "{f:?}");
        let f = judge(
            &log,
            t(20),
            true,
            &[ReadOutcome::Unmapped, ReadOutcome::Tag(21)],
        );
        assert!(f.is_empty(), "tx 2 alone: {f:?}");
    }

    #[test]
    fn intermediate_versions_inside_a_transaction_are_violations() {
        let log = tx(1, &[(0, 10), (0, 12)], 5, 50);
        assert!(judge(&log, t(60), true, &[ReadOutcome::Tag(12)]).is_empty());
        assert_eq!(judge(&log, t(60), true, &[ReadOutcome::Tag(10)]).len(), 1);
    }

    #[test]
    fn trims_are_writes_of_unmapped() {
        let log = [
            plain(0, 1, 0, 10),
            HostEvent::Trim {
                lpn: Lpn(0),
                issue: t(20),
                ack: t(30),
            },
        ];
        assert!(judge(&log, t(40), true, &[ReadOutcome::Unmapped]).is_empty());
        assert_eq!(judge(&log, t(40), true, &[ReadOutcome::Tag(1)]).len(), 1);
        assert!(judge(&log, t(25), true, &[ReadOutcome::Tag(1)]).is_empty());
        assert!(judge(&log, t(25), true, &[ReadOutcome::Unmapped]).is_empty());
    }
}
