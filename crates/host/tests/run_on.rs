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
    let r = rec("device-tx", "cfc", 1);
    let e = check::check_run_on(&r, Mode::Random { schedules: 1 }, 1, None).unwrap_err();
    assert!(e.starts_with("host.strategy:"), "{e}");
    let (mut h, _) = check::tiny_config("wal", "none");
    h.update = "ipa".into();
    assert_eq!(check::run_on_refusal(&h).unwrap().0, "host.update");
}
