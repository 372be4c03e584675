//! Recover, run on, crash again (`check::check_run_on`): the restart writes its results
//! back, the engine starts on the recovered medium with a fresh batch of transactions, and
//! a second crash is judged against an oracle that starts from the recovered database.

use commitlab_host as host;
use host::check::{self, Mode};

fn rec(strategy: &str, protocol: &str, seed: u64) -> check::HostRecording {
    let (h, d) = check::tiny_config(strategy, protocol);
    check::record(&h, &d, seed).unwrap()
}

/// wal's restart writes CLRs, an end-of-restart checkpoint and a new master: every second
/// crash, anywhere in the run after it, recovers to the recovered database plus the second
/// run's acked commits.
#[test]
fn wal_runs_on_after_every_random_crash() {
    for seed in [1, 2] {
        let r = rec("wal", "none", seed);
        let rep = check::check_run_on(&r, Mode::Random { schedules: 150 }, seed, None).unwrap();
        assert_eq!(rep.violations, 0, "seed {seed}: {:?}", rep.first.first());
        assert!(rep.states_after_run_on > 100, "{}", rep.states_after_run_on);
        assert!(rep.run_on_ops_max > 0);
    }
}

/// Exhaustively over a few first crash states: every state of the restart's write-back and
/// of the first instants of the run after it.
#[test]
fn wal_runs_on_exhaustively_over_the_window() {
    let r = rec("wal", "none", 3);
    let ex = Mode::Exhaustive { max_in_flight: 10 };
    for state in [0, 50, 400, 2000] {
        let rep = check::check_run_on(&r, ex, 3, Some(state)).unwrap();
        assert_eq!(rep.violations, 0, "state {state}: {:?}", rep.first.first());
        assert!(rep.states_after_run_on > check::RUN_ON_WINDOW as u64);
    }
}

/// A strategy whose restart does not write back is refused, naming the key and the reason.
#[test]
fn strategies_that_cannot_run_on_are_refused() {
    let (h, _) = check::tiny_config("wal-pcm", "none");
    let (key, reason) = check::run_on_refusal(&h).unwrap();
    assert_eq!(key, "host.strategy");
    assert!(reason.contains("wal-pcm"), "{reason}");
}

/// The run-on TPC-C of `crash --host S --run-on --set host.workload="tpcc" --set
/// host.tpcc.warehouses=1 --set host.tpcc.customers_per_district=20 --set host.tpcc.items=50
/// --set host.tpcc.max_txns=200 --set host.transactions=40 --set host.log_pages=64` on the
/// device `crash` sizes for it (131 blocks a plane).
fn tpcc_rec(strategy: &str, protocol: &str, data: &str, seed: u64) -> check::HostRecording {
    let (mut h, mut d) = check::tiny_config(strategy, protocol);
    h.workload = "tpcc".into();
    h.tpcc.warehouses = 1;
    h.tpcc.customers_per_district = 20;
    h.tpcc.items = 50;
    h.tpcc.max_txns = 200;
    h.transactions = 40;
    h.log_pages = 64;
    h.data = data.into();
    d.nand.blocks_per_plane = 131;
    check::record(&h, &d, seed).unwrap()
}

/// TPC-C runs on from the recovered database's committed view (`source::take_up`). Found by
/// `crash --host wal --protocol none --run-on --schedules 300 --seed 2` on `tpcc_rec`'s
/// configuration with the run on's generator as loaded: states 13 and 143 (of 600)
/// reported "in-flight txn 88 is partly visible: 20 records with it, 117 without" — txn 88,
/// a Delivery of the run on, deleted the NEW-ORDER rows and keys the crashed run's acked
/// Delivery txn 18 had deleted (no change: the 20 "with"), and none of its real writes was
/// on the medium. Those two states, and the random ones around them, now hold.
#[test]
fn tpcc_runs_on_from_the_recovered_committed_view() {
    let r = tpcc_rec("wal", "none", "tag", 2);
    assert!(r.journal.is_some());
    for state in [13, 143] {
        let rep = check::check_run_on(&r, Mode::Random { schedules: 300 }, 2, Some(state)).unwrap();
        assert_eq!(rep.violations, 0, "state {state}: {:?}", rep.first.first());
        assert_eq!(rep.states_after_run_on, 1);
    }
    let rep = check::check_run_on(&r, Mode::Random { schedules: 20 }, 2, None).unwrap();
    assert_eq!(rep.violations, 0, "{:?}", rep.first.first());
}

/// `host.data = "full"`: TPC-C's consistency conditions hold after every second crash.
/// With the run on's generator as loaded, 231 of 600 states (`crash --host wal --protocol
/// none --run-on --schedules 300 --seed 2 --set host.data='"full"'` on `tpcc_rec`'s
/// configuration) broke condition 2: the run on re-used order ids the crashed run had
/// committed ("D_NEXT_O_ID − 1 = 21 but max(O_ID) = 20").
#[test]
fn tpcc_full_data_runs_on_with_the_consistency_conditions() {
    for (s, p) in [("wal", "none"), ("device-tx", "cfc")] {
        let r = tpcc_rec(s, p, "full", 2);
        let rep = check::check_run_on(&r, Mode::Random { schedules: 12 }, 2, None).unwrap();
        assert_eq!(rep.violations, 0, "{s}/{p}: {:?}", rep.first.first());
        assert!(rep.states_after_run_on > 6, "{}", rep.states_after_run_on);
    }
}

/// A log area that cannot carry a run on (every client in the workload's largest
/// transaction, rolled back) is refused before any crash state, naming `host.log_pages`:
/// with 16 log pages TPC-C's run on stopped with "log area full", which the checker
/// counted as a violation.
#[test]
fn a_log_area_too_small_for_the_run_on_is_refused_naming_the_key() {
    let mut r = tpcc_rec("wal", "none", "tag", 2);
    r.cfg.log_pages = 16;
    let (key, reason) = check::run_on_log_refusal(&r).unwrap();
    assert_eq!(key, "host.log_pages");
    assert!(reason.contains("at least"), "{reason}");
    let e = check::check_run_on(&r, Mode::Random { schedules: 5 }, 2, None).unwrap_err();
    assert!(e.starts_with("host.log_pages:"), "{e}");
    r.cfg.log_pages = 64;
    assert!(check::run_on_log_refusal(&r).is_none());
}

/// A run on that stops for lack of log space all the same (past the estimate) is a
/// configuration error naming `host.log_pages`, not a finding: here the recording's log
/// area is cut to 4 pages after the run, and the run on from its loaded medium fills it.
#[test]
fn a_run_on_that_fills_its_log_is_a_configuration_error() {
    let mut r = tpcc_rec("wal", "none", "tag", 2);
    r.cfg.log_pages = 4;
    let out = check::run_on(&r, &[r.base.clone()], sim::SimTime::ZERO, 7);
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    let e = out.refused.expect("refused");
    assert!(e.starts_with("host.log_pages:"), "{e}");
}

/// A write that leaves a record as it was (a delete of a free slot) witnesses neither
/// outcome of an in-flight transaction: counted as "with it", it made a transaction none of
/// whose changes were on the medium look partly visible (the TPC-C run on above).
#[test]
fn a_write_that_changes_nothing_does_not_make_a_transaction_partly_visible() {
    use host::engine::CommitRec;
    use std::sync::Arc;
    use workload::db::{Changes, RecOp, Rid, TxnSpec};
    let r = rec("wal", "none", 1);
    let layout = &r.layout;
    let a = Rid {
        table: workload::db::TableId(0),
        page: 0,
        slot: 0,
    };
    let b = Rid { slot: 1, ..a };
    let p = layout.page_of(a);
    assert_eq!(p, layout.page_of(b));
    let commit = |txn: u64, ops: Vec<RecOp>, issue: u64, ack: u64| CommitRec {
        txn: sim::TxnId(txn),
        spec: Arc::new(TxnSpec::fixed("t", ops, false)),
        issue: sim::SimTime::from_ns(issue),
        ack: sim::SimTime::from_ns(ack),
    };
    let commits = vec![
        commit(1, vec![RecOp::Delete(a)], 1, 2),
        commit(
            2,
            vec![
                RecOp::Delete(a),
                RecOp::Update {
                    rid: b,
                    changes: Changes::new(),
                },
            ],
            3,
            10,
        ),
    ];
    // Txn 1's delete on the medium, none of txn 2's change: txn 2 is not visible.
    let mut page: Vec<u64> = (0..layout.slots(p))
        .map(|s| layout.initial_slot(p, s))
        .collect();
    page[0] = 0;
    let db = std::collections::BTreeMap::from([(p, page.clone())]);
    let f = check::judge_commits(layout, &commits, sim::SimTime::from_ns(5), &db);
    assert!(f.is_empty(), "{f:?}");
    // Txn 2's update on the medium too: visible, whole.
    let upd = RecOp::Update {
        rid: b,
        changes: Changes::new(),
    };
    page[1] = host::data::Effect::of(&upd)
        .unwrap()
        .apply(layout.initial_slot(p, 1));
    let db = std::collections::BTreeMap::from([(p, page.clone())]);
    let f = check::judge_commits(layout, &commits, sim::SimTime::from_ns(5), &db);
    assert!(f.is_empty(), "{f:?}");
    // Half of a real change is still reported: a second update of b's page not applied.
    let c = Rid { slot: 2, ..a };
    let mut commits = commits;
    commits[1] = commit(
        2,
        vec![
            RecOp::Delete(a),
            upd,
            RecOp::Update {
                rid: c,
                changes: Changes::new(),
            },
        ],
        3,
        10,
    );
    let f = check::judge_commits(layout, &commits, sim::SimTime::from_ns(5), &db);
    assert!(f.iter().any(|x| x.contains("partly visible")), "{f:?}");
}

/// TATP runs on over the first run's loaded database (its contents follow the source's
/// seed): 300 random run-on schedules on seed 2, 0 violations. Before the run on built its
/// source with the first run's seed, this command made the second restart read pages of
/// another seed's database.
#[test]
fn wal_runs_on_over_the_first_runs_tatp_database() {
    let (mut h, mut d) = check::tiny_config("wal", "none");
    h.workload = "tatp".into();
    // The tiny device is grown until TATP's database fits, as `crash` sizes it.
    let r = loop {
        match check::record(&h, &d, 2) {
            Err(e)
                if e.to_string().contains("device pages") && d.nand.blocks_per_plane < 1 << 14 =>
            {
                d.nand.blocks_per_plane *= 2
            }
            r => break r.unwrap(),
        }
    };
    let rep = check::check_run_on(&r, Mode::Random { schedules: 300 }, 2, None).unwrap();
    assert_eq!(rep.violations, 0, "{:?}", rep.first.first());
}

/// wal with `ipa` or `ipa-block` (In-Place Appends §3): the tiny run with one DB page per
/// flash page, a 256 B delta area and N×M = 2×8 (`world::host_run::host_crash_config_for`).
fn ipa_rec(update: &str, fault: &str, seed: u64) -> check::HostRecording {
    let (mut h, mut d) = check::tiny_config("wal", "none");
    h.update = update.into();
    h.ipa.n = 2;
    h.ipa.m = 8;
    h.page_bytes = d.nand.page_bytes;
    d.nand.append_bytes = 256;
    h.fault_restart = fault.into();
    check::record(&h, &d, seed).unwrap()
}

/// The restart writes every recovered page back out of place (a fresh physical page, its
/// delta area empty), and the engine resumes with no delta records on any page: the run
/// after it appends in place again, and every second crash recovers.
#[test]
fn wal_with_in_place_appends_runs_on_after_random_and_exhaustive_crashes() {
    for update in ["ipa", "ipa-block"] {
        for seed in [1, 2] {
            let r = ipa_rec(update, "", seed);
            assert!(
                r.metrics
                    .strategy_counters
                    .get("ipa_in_place_appends")
                    .copied()
                    .unwrap_or(0)
                    > 0
            );
            let rep = check::check_run_on(&r, Mode::Random { schedules: 150 }, seed, None).unwrap();
            assert_eq!(
                rep.violations,
                0,
                "{update} seed {seed}: {:?}",
                rep.first.first()
            );
            assert!(rep.states_after_run_on > 100, "{}", rep.states_after_run_on);
        }
        let r = ipa_rec(update, "", 3);
        let ex = Mode::Exhaustive { max_in_flight: 10 };
        for state in [0, 400, 2000] {
            let rep = check::check_run_on(&r, ex, 3, Some(state)).unwrap();
            assert_eq!(
                rep.violations,
                0,
                "{update} state {state}: {:?}",
                rep.first.first()
            );
            assert!(rep.states_after_run_on > check::RUN_ON_WINDOW as u64);
        }
    }
}

/// Planted bug: the restart leaves pages it did not change on their physical page, delta
/// records and all, but the engine resumes with no records on them
/// (`fault_restart = "ipa-stale-area"`): the run after it appends its first record into
/// slot 0 of a full delta area. The restart's database is right, so single and double
/// crashes pass; run-on catches it (found by planting it:
/// `check_run_on(.., Mode::Random { schedules: 300 }, 1, ..)` on the tiny ipa run).
#[test]
fn an_ipa_restart_that_leaves_a_stale_delta_area_is_caught_only_by_run_on() {
    let r = ipa_rec("ipa", "ipa-stale-area", 1);
    let double = check::check_with(&r, Mode::Random { schedules: 300 }, 1, None, true).unwrap();
    assert_eq!(double.violations, 0, "{:?}", double.first.first());
    let run_on = check::check_run_on(&r, Mode::Random { schedules: 300 }, 1, None).unwrap();
    assert!(run_on.violations > 0, "{} states", run_on.states);
    eprintln!(
        "ipa-stale-area: {} of {} states; first: {:?}",
        run_on.violations,
        run_on.states,
        run_on.first.first().map(|v| &v.findings)
    );
    let clean = ipa_rec("ipa", "", 1);
    let run_on = check::check_run_on(&clean, Mode::Random { schedules: 300 }, 1, None).unwrap();
    assert_eq!(run_on.violations, 0, "{:?}", run_on.first.first());
}

fn planted(fault: &str, seed: u64, checkpoint_log_bytes: u64) -> check::HostRecording {
    let (mut h, d) = check::tiny_config("wal", "none");
    h.fault_restart = fault.into();
    h.checkpoint_log_bytes = checkpoint_log_bytes;
    check::record(&h, &d, seed).unwrap()
}

/// Planted bug: the engine resumes at the restart's tail page but not after its records
/// (`fault_restart = "no-tail"`): the run's first log write overwrites the restart's CLRs,
/// ENDs and checkpoint, and its own records get LSNs below the pages the restart wrote
/// back. The restart's database is right, so every single crash and every crash inside
/// recovery passes; run-on catches it (found by planting it:
/// `check_run_on(.., Mode::Random { schedules: 300 }, 1, ..)`, 10 of 600 states).
#[test]
fn a_restart_whose_log_tail_is_not_advanced_is_caught_only_by_run_on() {
    let r = planted("no-tail", 1, 2048);
    let ex = Mode::Exhaustive { max_in_flight: 10 };
    let double = check::check_with(&r, ex, 1, None, true).unwrap();
    assert_eq!(double.violations, 0, "{:?}", double.first.first());
    let random = check::check_with(&r, Mode::Random { schedules: 300 }, 1, None, true).unwrap();
    assert_eq!(random.violations, 0, "{:?}", random.first.first());
    let run_on = check::check_run_on(&r, Mode::Random { schedules: 300 }, 1, None).unwrap();
    assert!(run_on.violations > 0, "{} states", run_on.states);
    assert!(
        run_on
            .first
            .iter()
            .all(|v| v.run_on.is_some() && !v.findings.is_empty()),
        "{:?}",
        run_on.first
    );
}

/// Planted bug: the restart writes no new master but the engine resumes as if it had
/// (`fault_restart = "no-master"`), so the run after it counts the restart's checkpoint as
/// the oldest log restart needs and overwrites log pages the old master still names. Seen
/// when the run wraps the log before its own first checkpoint's master is durable:
/// checkpoints every 12 of 16 log pages (`host.checkpoint_log_bytes = 24576`). Single
/// and double crashes pass; run-on catches it (found by planting it: seeds 1–3, 120 to
/// 155 of 2,000 states; 0 without the bug).
#[test]
fn a_restart_that_forgets_its_master_is_caught_only_by_run_on() {
    let r = planted("no-master", 1, 24576);
    let double = check::check_with(&r, Mode::Random { schedules: 1000 }, 1, None, true).unwrap();
    assert_eq!(double.violations, 0, "{:?}", double.first.first());
    let run_on = check::check_run_on(&r, Mode::Random { schedules: 1000 }, 1, None).unwrap();
    assert!(run_on.violations > 0, "{} states", run_on.states);
    let clean = planted("", 1, 24576);
    let run_on = check::check_run_on(&clean, Mode::Random { schedules: 1000 }, 1, None).unwrap();
    assert_eq!(run_on.violations, 0, "{:?}", run_on.first.first());
}

/// wal with its log and master record on a device of its own (`host.log_device =
/// "separate"`, one power domain): the restart recovers both devices, writes its CLRs,
/// ENDs, void pages and master to the log device and its pages to the data device; the
/// engine resumes on both, and a second crash cuts both at one instant.
#[test]
fn wal_with_its_log_on_a_device_of_its_own_runs_on() {
    for (update, seed) in [("out-of-place", 1), ("out-of-place", 2), ("ipa", 3)] {
        let (mut h, mut d) = check::tiny_config("wal", "none");
        h.log_device = "separate".into();
        if update == "ipa" {
            h.update = update.into();
            h.ipa.n = 2;
            h.ipa.m = 8;
            h.page_bytes = d.nand.page_bytes;
            d.nand.append_bytes = 256;
        }
        let r = check::record(&h, &d, seed).unwrap();
        assert!(r.log.as_ref().is_some_and(|l| !l.ops.is_empty()));
        let rep = check::check_run_on(&r, Mode::Random { schedules: 150 }, seed, None).unwrap();
        assert_eq!(
            rep.violations,
            0,
            "{update} seed {seed}: {:?}",
            rep.first.first()
        );
        assert!(rep.states_after_run_on > 100, "{}", rep.states_after_run_on);
        let ex = Mode::Exhaustive { max_in_flight: 10 };
        let rep = check::check_run_on(&r, ex, seed, Some(400)).unwrap();
        assert_eq!(
            rep.violations,
            0,
            "{update} seed {seed}: {:?}",
            rep.first.first()
        );
        assert!(rep.states_after_run_on > check::RUN_ON_WINDOW as u64);
    }
}

/// device-tx (Flag Commit §5.2; TxFlash §4, Flag Commit §3–§5.1 for the protocols): the
/// device's recovery settles every device transaction, the restart hands the engine the
/// data area as the device holds it, and the run after it opens device transactions with
/// ids above every attempt of the crashed run. Every protocol device-tx runs on.
#[test]
fn device_tx_runs_on_over_every_protocol() {
    for protocol in [
        "cfc", "afc", "scc", "bpcc", "tc", "lighttx", "mhl-d", "mhl-m",
    ] {
        let r = rec("device-tx", protocol, 1);
        let rep = check::check_run_on(&r, Mode::Random { schedules: 150 }, 1, None).unwrap();
        assert_eq!(rep.violations, 0, "{protocol}: {:?}", rep.first.first());
        assert!(
            rep.states_after_run_on > 100,
            "{protocol}: {}",
            rep.states_after_run_on
        );
        let ex = Mode::Exhaustive { max_in_flight: 10 };
        let rep = check::check_run_on(&r, ex, 1, Some(400)).unwrap();
        assert_eq!(rep.violations, 0, "{protocol}: {:?}", rep.first.first());
    }
}

/// Planted bug: the restart hands the engine each page's newest write of the crashed run,
/// committed or not (`fault_restart = "uncommitted"`), instead of what the device reads
/// back after its recovery discarded the uncommitted ones. The restart's database is right,
/// so single and double crashes pass; the run after it builds on the discarded values, and
/// run-on catches it (found by planting it: `check_run_on(.., Mode::Random { schedules:
/// 300 }, 1, ..)` on the tiny device-tx runs).
#[test]
fn a_device_tx_restart_that_hands_over_uncommitted_writes_is_caught_only_by_run_on() {
    for protocol in ["cfc", "scc", "bpcc"] {
        let (mut h, d) = check::tiny_config("device-tx", protocol);
        h.fault_restart = "uncommitted".into();
        let r = check::record(&h, &d, 1).unwrap();
        let double = check::check_with(&r, Mode::Random { schedules: 300 }, 1, None, true).unwrap();
        assert_eq!(
            double.violations,
            0,
            "{protocol}: {:?}",
            double.first.first()
        );
        let run_on = check::check_run_on(&r, Mode::Random { schedules: 300 }, 1, None).unwrap();
        eprintln!(
            "uncommitted {protocol}: {} of {} states; first: {:?}",
            run_on.violations,
            run_on.states,
            run_on.first.first().map(|v| &v.findings)
        );
        assert!(
            run_on.violations > 0,
            "{protocol}: {} states",
            run_on.states
        );
    }
}

/// The shape that reaches a stale log page beyond the recovered end: four 400-byte records
/// per 2 KiB log page, two channels, four clients, six transactions (`.ci/run`'s run-on
/// step for it).
fn stale_tail(fault: &str) -> check::HostRecording {
    let (mut h, mut d) = check::tiny_config("wal", "none");
    h.fault_restart = fault.into();
    h.log_record_bytes = 400;
    h.log_pages = 128;
    h.clients = 4;
    h.transactions = 6;
    d.nand.channels = 2;
    check::record(&h, &d, 1).unwrap()
}

/// Planted bug: the restart does not void the log pages beyond the recovered end
/// (`fault_restart = "no-void"`). A first crash persisted a sealed log page past a page
/// that did not persist; the restart seals its tail page and the second crash comes before
/// the next page is written, so the second restart scans on into the first run's lost
/// records ("undo reached CkptEnd"). Found by planting it: `commitlab crash --host wal
/// --protocol none --run-on --schedules 20000 --set host.log_record_bytes=400 --set
/// host.log_pages=128 --set nand.channels=2 --set host.clients=4 --set
/// host.transactions=6` (mutants build, `COMMITLAB_MUTANT=restart-no-void`, seed 1), 2 of
/// 40,000 states, the first at state 13104; unplanted 0.
#[test]
fn a_restart_that_leaves_stale_log_pages_beyond_the_end_is_caught_by_run_on() {
    let mode = Mode::Random { schedules: 20000 };
    let bad = check::check_run_on(&stale_tail("no-void"), mode, 1, Some(13104)).unwrap();
    assert!(bad.violations > 0, "{} states", bad.states);
    let good = check::check_run_on(&stale_tail(""), mode, 1, Some(13104)).unwrap();
    assert_eq!(good.violations, 0, "{:?}", good.first.first());
    assert!(good.run_on_voided > 0, "the clean restart voided no page");
}

/// cfc-ex and afc-ex (Flag Commit §4.3, `strategy::flagcommit_ex`, "Run-on restart"): the
/// restart voids the log beyond its end and finishes the flags, the engine resumes on the
/// recovered version slots under the old master, and its first checkpoint writes the
/// pages recovered from the log only before its master.
#[test]
fn flag_commit_runs_on_after_every_random_crash() {
    for strategy in ["cfc-ex", "afc-ex"] {
        for seed in [1, 2] {
            let r = rec(strategy, "none", seed);
            let rep = check::check_run_on(&r, Mode::Random { schedules: 150 }, seed, None).unwrap();
            assert_eq!(
                rep.violations,
                0,
                "{strategy} seed {seed}: {:?}",
                rep.first.first()
            );
            assert!(rep.states_after_run_on > 100, "{}", rep.states_after_run_on);
        }
    }
}

fn planted_fc(strategy: &str, fault: &str, seed: u64) -> check::HostRecording {
    let (mut h, d) = check::tiny_config(strategy, "none");
    h.fault_fc = fault.into();
    check::record(&h, &d, seed).unwrap()
}

/// Planted bugs in the run-on restart of cfc-ex / afc-ex (`host.fault_fc`): the restart
/// leaves a committed transaction's FALSE nodes and a loser's TRUE nodes as they are
/// (`restart-no-flags`: once the resumed run's checkpoint moves B past a COMMIT whose flag
/// programs the crash cut short, its records read uncommitted), or the resumed run's first
/// checkpoint writes its master without the pages recovered from the log only
/// (`restart-no-dirty`). The restart's database is right, so single and double crashes pass;
/// run-on catches both (found by planting them: `check_run_on(.., Mode::Random { schedules:
/// 500 }, seed, ..)` with seeds 1–3: no-flags 3–4 (cfc-ex) and 1–12 (afc-ex) of 1,000
/// states, no-dirty 21–33 of 1,000; double mode 0 of 500 each). `restart-no-void` was caught
/// by no run tried (seeds 1–3, 1,000 states each): the tiny configuration's log rarely
/// leaves a page beyond its end.
#[test]
fn flag_commit_restart_bugs_are_caught_only_by_run_on() {
    for strategy in ["cfc-ex", "afc-ex"] {
        for (fault, seed) in [("restart-no-flags", 2), ("restart-no-dirty", 1)] {
            let r = planted_fc(strategy, fault, seed);
            let double =
                check::check_with(&r, Mode::Random { schedules: 500 }, seed, None, true).unwrap();
            assert_eq!(
                double.violations,
                0,
                "{strategy} {fault}: {:?}",
                double.first.first()
            );
            let run_on =
                check::check_run_on(&r, Mode::Random { schedules: 500 }, seed, None).unwrap();
            assert!(
                run_on.violations > 0,
                "{strategy} {fault}: {} states",
                run_on.states
            );
            assert!(
                run_on.first.iter().all(|v| v.run_on.is_some()),
                "{:?}",
                run_on.first
            );
        }
    }
}

/// wal with `ipl` (In-Page Logging, Lee & Moon §4.3): the tiny run with erase units of 4
/// one-flash-page DB pages and 4 log pages (`world::host_run::host_crash_config_for`), or
/// the `separate` layout (log regions as FTL logical pages).
fn ipl_rec(layout: &str, fault: &str, seed: u64) -> check::HostRecording {
    let (mut h, d) = check::tiny_config("wal", "none");
    h.update = "ipl".into();
    h.ipl.layout = layout.into();
    h.ipl.unit_pages = 4;
    if layout == "in-block" {
        h.page_bytes = d.nand.page_bytes;
    }
    h.fault_restart = fault.into();
    check::record(&h, &d, seed).unwrap()
}

/// The restart merges every erase unit into a fresh block holding the recovered pages
/// (`update::ipl::restart_merge`), erases the older blocks after it, and the engine resumes
/// with every log region empty: the run after it writes log sectors and merges again, and
/// every second crash recovers.
#[test]
fn wal_with_in_page_logging_runs_on_after_random_and_exhaustive_crashes() {
    for layout in ["in-block", "separate"] {
        for seed in [1, 2] {
            let r = ipl_rec(layout, "", seed);
            let c = &r.metrics.strategy_counters;
            assert!(c.get("ipl_sector_writes").copied().unwrap_or(0) > 0);
            assert!(c.get("ipl_merges").copied().unwrap_or(0) > 0);
            let rep = check::check_run_on(&r, Mode::Random { schedules: 150 }, seed, None).unwrap();
            assert_eq!(
                rep.violations,
                0,
                "{layout} seed {seed}: {:?}",
                rep.first.first()
            );
            assert!(rep.states_after_run_on > 100, "{}", rep.states_after_run_on);
        }
        let r = ipl_rec(layout, "", 3);
        let ex = Mode::Exhaustive { max_in_flight: 10 };
        for state in [0, 400, 2000] {
            let rep = check::check_run_on(&r, ex, 3, Some(state)).unwrap();
            assert_eq!(
                rep.violations,
                0,
                "{layout} state {state}: {:?}",
                rep.first.first()
            );
            assert!(rep.states_after_run_on > check::RUN_ON_WINDOW as u64);
        }
    }
}

/// A tiny TPC-B (one branch of 200 accounts) with `host.data = "full"`.
fn tpcb_full(strategy: &str, protocol: &str, seed: u64) -> check::HostRecording {
    let (mut h, mut d) = check::tiny_config(strategy, protocol);
    h.workload = "tpcb".into();
    h.tpcb.branches = 1;
    h.tpcb.accounts_per_branch = 200;
    h.tpcb.max_txns = 200;
    h.tpcb.delta_abort = 0.2;
    h.transactions = 60;
    h.log_pages = 32;
    h.data = "full".into();
    d.nand.blocks_per_plane = 32;
    check::record(&h, &d, seed).unwrap()
}

/// `host.data = "full"` runs on: the workload's consistency conditions (TPC-B: a branch's
/// balance is the sum of its tellers', the accounts' sum the branches') are checked on the
/// first crash and on every second one, the contents chained from the crashed run's
/// commits the restart kept through the second run's.
#[test]
fn full_data_runs_on_with_the_consistency_conditions_after_the_second_crash() {
    for (s, p) in [("wal", "none"), ("device-tx", "cfc"), ("cfc-ex", "none")] {
        let r = tpcb_full(s, p, 5);
        let rep = check::check_run_on(&r, Mode::Random { schedules: 150 }, 3, None).unwrap();
        assert_eq!(rep.violations, 0, "{s}/{p}: {:?}", rep.first.first());
        assert!(rep.states_after_run_on > 100, "{}", rep.states_after_run_on);
    }
    // Planted: recovery loses the first changed teller page; the consistency conditions
    // (not only the replay oracle) report it.
    let mut r = tpcb_full("wal", "none", 5);
    r.cfg.fault_drop_page = true;
    let rep = check::check_run_on(&r, Mode::Random { schedules: 150 }, 3, None).unwrap();
    assert!(rep
        .first
        .iter()
        .flat_map(|v| v.findings.iter())
        .any(|f| f.starts_with("consistency:")));
}

/// Planted bug: the restart erases an erase unit's older blocks with the programs of its
/// fresh block instead of after them (`fault_restart = "ipl-erase-early"`). The restart's
/// database is right, so single and double crashes pass; a second crash that cuts the
/// fresh block's programs after the erase leaves the unit with no complete block (read as
/// loaded: committed changes lost), which only run-on reaches (found by planting it:
/// `check_run_on(.., Mode::Random { schedules: 300 }, 1, ..)`, 3 of 600 states, each a
/// second crash inside the restart's write-back: the old block's erase done or torn, the
/// fresh block's programs cut).
#[test]
fn an_ipl_restart_that_erases_before_its_merge_is_durable_is_caught_only_by_run_on() {
    let r = ipl_rec("in-block", "ipl-erase-early", 1);
    let double = check::check_with(&r, Mode::Random { schedules: 300 }, 1, None, true).unwrap();
    assert_eq!(double.violations, 0, "{:?}", double.first.first());
    let run_on = check::check_run_on(&r, Mode::Random { schedules: 300 }, 1, None).unwrap();
    eprintln!(
        "ipl-erase-early random: {} of {} states; first: {:?}",
        run_on.violations,
        run_on.states,
        run_on.first.first().map(|v| (&v.state.index, &v.findings))
    );
    assert!(run_on.violations > 0, "{} states", run_on.states);
    assert!(
        run_on.first.iter().all(|v| v.run_on.is_some()),
        "{:?}",
        run_on.first
    );
}
