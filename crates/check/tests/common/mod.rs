//! What every protocol's crash-check tests share: run the checker exhaustively or on random
//! schedules and insist on zero violations (printing the first ones when there are any), and
//! the larger device of the random runs.

#![allow(dead_code)]

use commitlab_check::{check, describe, record, small_config, CheckReport, Mode, Recording};

/// Asserts that no checked state violates, describing the first violations if any do.
pub fn assert_clean(rep: &CheckReport, rec: &Recording) {
    for v in &rep.first {
        eprintln!(
            "{}{}{:#?}",
            describe(rec, &v.state),
            v.nested_text,
            v.findings
        );
    }
    assert_eq!(
        rep.violations, 0,
        "{} of {} states violate",
        rep.violations, rep.states
    );
}

/// Records `cfg`'s run and checks every crash state; asserts zero violations.
pub fn exhaustive(cfg: &world::Config) -> CheckReport {
    let rec = record(cfg).unwrap();
    let rep = check(&rec, Mode::Exhaustive { max_in_flight: 8 }, cfg.seed, None).unwrap();
    assert_clean(&rep, &rec);
    rep
}

/// Records `cfg`'s run and checks `schedules` random crash states; asserts zero violations.
pub fn random(cfg: &world::Config, schedules: u64) -> CheckReport {
    let rec = record(cfg).unwrap();
    let rep = check(&rec, Mode::Random { schedules }, cfg.seed, None).unwrap();
    assert_eq!(rep.states, schedules);
    assert_clean(&rep, &rec);
    rep
}

/// The larger configuration of the random runs: 4 planes of 24 blocks, 400 transactions,
/// half of them aborted; `f` adjusts it further.
pub fn larger(protocol: &str, seed: u64, f: impl FnOnce(&mut world::Config)) -> world::Config {
    let mut c = small_config(protocol);
    c.seed = seed;
    c.nand.planes_per_die = 4;
    c.nand.blocks_per_plane = 24;
    c.workload.txn.transactions = 400;
    c.workload.txn.abort_ratio = 0.5;
    f(&mut c);
    c
}
