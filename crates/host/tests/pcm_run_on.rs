//! Recover, run on, crash again for the PCM tier (`check::check_run_on` over
//! `pcm_tier::check_run_on`): record-level PCMLogging's restart writes back
//! (`strategy::pcmlogging::restart`), the engine resumes on the restarted PCM and the
//! crashed disk with a fresh batch of transactions, and a second crash is judged against an
//! oracle that starts from the recovered database.

use commitlab_host as host;
use host::check::{self, Mode};

fn rec(fault: &str, seed: u64) -> check::HostRecording {
    let (mut h, d) = check::tiny_config("pcmlogging", "none");
    h.fault_restart = fault.into();
    check::record(&h, &d, seed).unwrap()
}

/// Every random first state, and one random second state after running on from it,
/// recovers on seeds 1-3.
#[test]
fn pcmlogging_runs_on_after_every_random_crash() {
    for seed in [1, 2, 3] {
        let r = rec("", seed);
        let rep = check::check_run_on(&r, Mode::Random { schedules: 150 }, seed, None).unwrap();
        assert_eq!(rep.violations, 0, "seed {seed}: {:?}", rep.first.first());
        assert!(rep.states_after_run_on > 100, "{}", rep.states_after_run_on);
        assert!(rep.run_on_ops_max > 0);
    }
}

/// Exhaustively over a few first crash states: every state of the restart's writes and of
/// the first instants of the run after them.
#[test]
fn pcmlogging_runs_on_exhaustively_over_the_window() {
    let r = rec("", 3);
    let ex = Mode::Exhaustive { max_in_flight: 10 };
    for state in [0, 40, 200, 700] {
        let rep = check::check_run_on(&r, ex, 3, Some(state)).unwrap();
        assert_eq!(rep.violations, 0, "state {state}: {:?}", rep.first.first());
        assert!(rep.states_after_run_on > check::RUN_ON_WINDOW as u64);
    }
}

/// Over the emulated SSD the restarted PCM would need the flash recovered beneath it: refused,
/// naming the key.
#[test]
fn pcmlogging_over_the_emulated_ssd_is_refused() {
    let (mut h, _) = check::tiny_config("pcmlogging", "none");
    assert_eq!(check::run_on_refusal(&h), None);
    h.pcm.external = "emulated".into();
    assert_eq!(check::run_on_refusal(&h).unwrap().0, "host.pcm.external");
}

/// Planted restart bugs (`HostConfig::fault_restart`, mutants `restart-pcm-…`) that only
/// run-on can see: the restart that only reads (every other mode) never runs them.
/// `pcm-keep-replaced`: the committed versions a newer one replaced stay valid, unknown to the
/// resumed Mapping Table. `pcm-atl-first`: the ActiveTxList is cleared before the losers'
/// units are freed. `pcm-xid-from-one`: the resumed run's XIDs start at 1 again, so a new
/// transaction in the ActiveTxList takes committed records of the same XID down with it.
#[test]
fn pcmlogging_restart_bugs_are_caught_only_by_run_on() {
    for fault in ["pcm-keep-replaced", "pcm-atl-first", "pcm-xid-from-one"] {
        let mut caught = Vec::new();
        for seed in [1, 2, 3] {
            let r = rec(fault, seed);
            let plain = check::check(&r, Mode::Random { schedules: 500 }, seed, None).unwrap();
            assert_eq!(
                plain.violations,
                0,
                "{fault} seed {seed}: {:?}",
                plain.first.first()
            );
            let double =
                check::check_with(&r, Mode::Random { schedules: 500 }, seed, None, true).unwrap();
            assert_eq!(double.violations, 0, "{fault} seed {seed}");
            let on = check::check_run_on(&r, Mode::Random { schedules: 500 }, seed, None).unwrap();
            caught.push(on.violations);
        }
        eprintln!("{fault}: run-on violations {caught:?} (seeds 1-3, 500 schedules)");
        assert!(caught.iter().sum::<u64>() > 0, "{fault}: {caught:?}");
    }
}

/// TATP's loaded contents follow the source's seed: the run on must start from the first
/// run's database, not the loaded database of its own seed. Found by `crash --host
/// pcmlogging --protocol none --run-on --schedules 200 --seed 2 --set
/// host.workload="tatp"` (5 of 400 states: a destage in the run on wrote the second seed's
/// loaded records over a page the recovered database held as loaded).
#[test]
fn pcmlogging_runs_on_over_the_first_runs_tatp_database() {
    let (mut h, d) = check::tiny_config("pcmlogging", "none");
    h.workload = "tatp".into();
    let r = check::record(&h, &d, 2).unwrap();
    let rep = check::check_run_on(&r, Mode::Random { schedules: 200 }, 2, None).unwrap();
    assert_eq!(rep.violations, 0, "{:?}", rep.first.first());
}

fn rec_page(fault: &str, seed: u64) -> check::HostRecording {
    let (mut h, d) = check::tiny_config("pcmlogging-page", "none");
    h.fault_restart = fault.into();
    check::record(&h, &d, seed).unwrap()
}

/// Page-level PCMLogging (`strategy::pcmlogging_page::restart`, `PageLogging::open`): every
/// random first state, and one random second state after running on from it, recovers on
/// seeds 1-3 and a held-out seed.
#[test]
fn pcmlogging_page_runs_on_after_every_random_crash() {
    for seed in [1, 2, 3, 2001] {
        let r = rec_page("", seed);
        let rep = check::check_run_on(&r, Mode::Random { schedules: 150 }, seed, None).unwrap();
        assert_eq!(rep.violations, 0, "seed {seed}: {:?}", rep.first.first());
        assert!(rep.states_after_run_on > 100, "{}", rep.states_after_run_on);
        assert!(rep.run_on_ops_max > 0);
    }
}

/// Exhaustively over a few first crash states: every state of the restart's writes and of
/// the first instants of the run after them.
#[test]
fn pcmlogging_page_runs_on_exhaustively_over_the_window() {
    let r = rec_page("", 3);
    let ex = Mode::Exhaustive { max_in_flight: 10 };
    for state in [0, 40, 200, 700] {
        let rep = check::check_run_on(&r, ex, 3, Some(state)).unwrap();
        assert_eq!(rep.violations, 0, "state {state}: {:?}", rep.first.first());
        assert!(rep.states_after_run_on > check::RUN_ON_WINDOW as u64);
    }
}

/// Page-level PCMLogging over the emulated SSD is refused for run-on like the record level;
/// over a Table 2 disk it runs on.
#[test]
fn pcmlogging_page_run_on_refusals() {
    let (mut h, _) = check::tiny_config("pcmlogging-page", "none");
    assert_eq!(check::run_on_refusal(&h), None);
    h.pcm.external = "emulated".into();
    assert_eq!(check::run_on_refusal(&h).unwrap().0, "host.pcm.external");
}

/// Planted restart bugs of page-level PCMLogging that only run-on can see.
/// `pcm-keep-replaced`: the replaced committed page versions stay valid (`open` refuses the
/// PCM). `pcm-atl-first`: the ActiveTxList is cleared before the losers' slots are freed,
/// so a crash between the two shows a loser's page. `pcm-page-forget-bitmap`: the resumed
/// core's DRAM mirror of the FreeSlotBitmap starts empty, so the run on allocates slots
/// over committed pages and writes bitmap words that drop them.
#[test]
fn pcmlogging_page_restart_bugs_are_caught_only_by_run_on() {
    for fault in [
        "pcm-keep-replaced",
        "pcm-atl-first",
        "pcm-page-forget-bitmap",
    ] {
        let mut caught = Vec::new();
        for seed in [1, 2, 3] {
            let r = rec_page(fault, seed);
            let plain = check::check(&r, Mode::Random { schedules: 300 }, seed, None).unwrap();
            assert_eq!(
                plain.violations,
                0,
                "{fault} seed {seed}: {:?}",
                plain.first.first()
            );
            let double =
                check::check_with(&r, Mode::Random { schedules: 300 }, seed, None, true).unwrap();
            assert_eq!(double.violations, 0, "{fault} seed {seed}");
            let on = check::check_run_on(&r, Mode::Random { schedules: 300 }, seed, None).unwrap();
            caught.push(on.violations);
        }
        eprintln!("{fault}: run-on violations {caught:?} (seeds 1-3, 300 schedules)");
        assert!(caught.iter().sum::<u64>() > 0, "{fault}: {caught:?}");
    }
}
