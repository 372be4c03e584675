//! Crashes inside host recovery (`check::check_with`, double mode): the restart's own media
//! operations are a second tape of crash points, and a restart that is not idempotent is
//! caught there while every single crash passes.

use commitlab_host as host;
use host::check::{self, Mode};

fn rec(fault: bool, protocol: &str, strategy: &str) -> check::HostRecording {
    let (mut h, d) = check::tiny_config(strategy, protocol);
    h.fault_recovery_reuses_log = fault;
    check::record(&h, &d, 1).unwrap()
}

/// Planted bug: wal's restart overwrites the first log page it scanned before any redone
/// page is durable (`fault_recovery_reuses_log`). Every single crash state passes (the
/// restart computed its database before the write); crashes inside that restart lose the
/// log and are caught, exhaustively and by random double schedules. Found by planting it
/// and running `commitlab crash --host wal --protocol none --double` (exhaustive: 7,996 of
/// 46,390 states; `--schedules 1000 --double`: 332 of 2,007).
#[test]
fn a_restart_that_is_not_idempotent_is_caught_only_inside_recovery() {
    let r = rec(true, "none", "wal");
    let ex = Mode::Exhaustive { max_in_flight: 10 };
    let single = check::check_with(&r, ex, 1, None, false).unwrap();
    assert_eq!(single.violations, 0, "{:?}", single.first.first());
    assert_eq!(single.states_in_recovery, 0);
    // Exhaustive double on state 118 alone (the whole run has 46,390 states with them).
    let double = check::check_with(&r, ex, 1, Some(118), true).unwrap();
    assert!(
        double.violations > 0,
        "exhaustive double: {} states",
        double.states
    );
    assert!(
        double
            .first
            .iter()
            .any(|v| v.inside.len() == 1 && !v.findings.is_empty()),
        "{:?}",
        double.first
    );
    let random = check::check_with(&r, Mode::Random { schedules: 300 }, 1, None, true).unwrap();
    assert!(random.violations > 0 && random.states_in_recovery > 0);
}

/// Without the planted bug the same checks pass, and a recovery that writes (lighttx's
/// device recovery over device-tx) has states inside it that are checked; one that writes
/// nothing (wal over none) has none.
#[test]
fn correct_restarts_pass_every_crash_inside_recovery() {
    let r = rec(false, "none", "wal");
    let double = check::check_with(&r, Mode::Random { schedules: 200 }, 3, None, true).unwrap();
    assert_eq!(double.violations, 0, "{:?}", double.first.first());
    assert_eq!(double.states_in_recovery, 0);
    // Exhaustively too: no state inside a restart that wrote nothing (one such state per
    // crash state, a copy of it, was counted before).
    let ex = Mode::Exhaustive { max_in_flight: 10 };
    let single = check::check_with(&r, ex, 3, None, false).unwrap();
    let double = check::check_with(&r, ex, 3, None, true).unwrap();
    assert_eq!(double.states, single.states);
    assert_eq!(double.states_in_recovery, 0);
    let r = rec(false, "lighttx", "device-tx");
    let double = check::check_with(&r, Mode::Random { schedules: 300 }, 1, None, true).unwrap();
    assert_eq!(double.violations, 0, "{:?}", double.first.first());
    assert!(double.states_in_recovery > 0, "{}", double.states);
    assert!(double.recovery_ops_max > 0);
}
