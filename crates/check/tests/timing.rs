//! Timing exploration: a bug that the configured timing never exposes is found
//! once the run is recorded under a perturbed timing profile, and the profile in a replay
//! command reproduces it alone.

mod common;

use commitlab_check::timing::Timing;
use commitlab_check::*;
use common::*;

/// Found by `crash --all --double --schedules 40000` (random timing, batch 3 of seed 1):
/// `crash --protocol cfc --seed 1 --schedules 40000 --timing
/// channel=553,erase=3573190,jitter=178567,think=1666 --state 1783`. With long, jittery
/// erases GC's erase of block 15 starts while the erase of block 3 is still in flight; a
/// crash that keeps the second and loses the first reads lpn 51 unmapped although
/// transaction #14, which wrote it, was acked. Cause: `flagchain/` ordered the second erase
/// after the first by a bound on its end that left out the NAND jitter (`erase_end`), so the
/// first could still be in flight; fixed there (the bound adds `jitter_ns`).
const CFC_ERASE_OVERLAP: &str = "channel=553,erase=3573190,jitter=178567,think=1666";

fn cfc_under(spec: &str) -> Recording {
    let mut cfg = small_config("cfc");
    Timing::parse(spec).unwrap().apply(&mut cfg);
    record(&cfg).unwrap()
}

#[test]
fn a_timing_profile_exposes_what_the_configured_timing_hides() {
    // The configured timing: every crash state is fine.
    let rec = cfc_under("configured");
    let rep = check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    assert_eq!(rep.violations, 0);
    // The random schedule the replay command named evaluates that one state on its own (it
    // violated the contract before the fix, see CFC_ERASE_OVERLAP).
    let rec = cfc_under(CFC_ERASE_OVERLAP);
    let one = check(&rec, Mode::Random { schedules: 40_000 }, 1, Some(1783)).unwrap();
    assert_eq!((one.states, one.violations), (1, 0));
}

#[test]
fn cfc_survives_overlapping_erases() {
    // Failed with 3 violating states before the fix (CFC_ERASE_OVERLAP).
    let rec = cfc_under(CFC_ERASE_OVERLAP);
    let rep = check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    assert_clean(&rep, &rec);
}

#[test]
fn random_profiles_differ_from_the_configured_timing() {
    // A drawn profile is a real perturbation: the recorded operations' timing differs.
    let base = cfc_under("configured");
    let mut changed = 0;
    for b in 0..8 {
        let t = Timing::draw(1, b);
        let mut cfg = small_config("cfc");
        t.apply(&mut cfg);
        let rec = record(&cfg).unwrap();
        let ends = |r: &Recording| r.ops.iter().map(|o| o.end).collect::<Vec<_>>();
        if ends(&rec) != ends(&base) {
            changed += 1;
        }
    }
    assert!(changed >= 6, "{changed}");
}
