//! Crash checking SQLite on the device: every journal mode over every protocol, batch
//! mode over every atomic one, and the planted bugs the checker must catch.

use check::Mode as CheckMode;
use commitlab_sqlite::crash::{check, record, small_config, small_options};
use commitlab_sqlite::run::Mode;
use commitlab_sqlite::Plant;

fn clean(protocol: &str, mode: Mode, transfers: u64, cm: CheckMode, seed: u64) -> u64 {
    let mut c = small_config(protocol);
    c.seed = seed;
    let rec = record(&c, &small_options(mode, transfers))
        .unwrap_or_else(|e| panic!("{protocol} {mode:?}: {e}"));
    let rep = check(&rec, cm, seed, 1).unwrap_or_else(|e| panic!("{protocol} {mode:?}: {e}"));
    assert_eq!(
        rep.violations,
        0,
        "{protocol} {mode:?}: {:?}\nreplay: commitlab sqlite crash --protocol {protocol} --mode {} --transfers {transfers} --seed {seed}",
        rep.first,
        mode.name()
    );
    assert!(rep.states > 0);
    rep.states
}

#[test]
fn every_mode_over_every_protocol_survives_random_crashes() {
    for p in ssd::protocol::names() {
        for mode in [Mode::Delete, Mode::Truncate, Mode::Persist, Mode::Wal] {
            clean(p, mode, 4, CheckMode::Random { schedules: 12 }, 3);
        }
        if ssd::protocol::lookup(p).map(|i| i.atomic).unwrap_or(false) {
            clean(p, Mode::Batch, 4, CheckMode::Random { schedules: 12 }, 3);
        }
    }
}

#[test]
fn batch_over_lighttx_and_delete_over_none_survive_every_crash_state() {
    let a = clean(
        "lighttx",
        Mode::Batch,
        3,
        CheckMode::Exhaustive { max_in_flight: 10 },
        1,
    );
    let b = clean(
        "none",
        Mode::Delete,
        2,
        CheckMode::Exhaustive { max_in_flight: 10 },
        1,
    );
    assert!(a > 50 && b > 50, "{a} {b}");
}

fn violations(
    protocol: &str,
    mode: Mode,
    transfers: u64,
    plant: Option<Plant>,
    max_tx: Option<u32>,
    fallback_sync: bool,
) -> u64 {
    let mut c = small_config(protocol);
    if let Some(m) = max_tx {
        c.ftl.max_tx_pages = m;
    }
    let mut o = small_options(mode, transfers);
    o.plant = plant;
    o.fallback_journal_sync = fallback_sync;
    let rec = record(&c, &o).expect("record");
    check(&rec, CheckMode::Exhaustive { max_in_flight: 10 }, 1, 1)
        .expect("check")
        .violations
}

#[test]
fn a_commit_acked_before_the_device_commit_is_caught() {
    assert!(
        violations(
            "lighttx",
            Mode::Batch,
            4,
            Some(Plant::AckCommitEarly),
            None,
            true
        ) > 0
    );
}

#[test]
fn a_skipped_journal_sync_is_caught() {
    assert!(
        violations(
            "none",
            Mode::Delete,
            4,
            Some(Plant::SkipJournalSync),
            None,
            true
        ) > 0
    );
}

#[test]
fn batch_fallbacks_are_crash_safe_with_the_journal_synced_first() {
    // ftl.max_tx_pages = 2: no transfer's batch fits, every commit falls back.
    assert_eq!(violations("bpcc", Mode::Batch, 4, None, Some(2), true), 0);
}

#[test]
fn batch_fallbacks_without_the_journal_sync_are_caught() {
    // SQLite writes the database right after creating the journal, without syncing it
    // (pager.c, sqlite3PagerCommitPhaseOne); found by `commitlab sqlite crash --protocol
    // bpcc --mode batch --transfers 6 --set ftl.max_tx_pages=2 --no-fallback-journal-sync`
    // (seed=1): 66 of 465 states lost a transfer's atomicity.
    assert!(violations("bpcc", Mode::Batch, 4, None, Some(2), false) > 0);
}
