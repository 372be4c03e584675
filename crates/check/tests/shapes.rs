//! Workload shapes: every shape records for every protocol, and random schedules
//! under drawn timing profiles find no violation in any shape × protocol pair. Two pairs
//! found bugs before they were fixed and keep a test each with more schedules.

mod common;

use commitlab_check::shapes::{apply, SHAPES};
use commitlab_check::timing::Timing;
use commitlab_check::*;
use common::*;

fn check_shape(shape: &str, protocol: &str, schedules: u64) -> CheckReport {
    let mut cfg = small_config(protocol);
    apply(shape, &mut cfg).unwrap();
    cfg.seed = 21;
    let t = Timing::draw(cfg.seed, 0);
    t.apply(&mut cfg);
    let rec = match record(&cfg) {
        Ok(r) => r,
        // A combination a protocol refuses at validation is fine, and so is a request it
        // does not support (tc, scc and bpcc cannot trim); one it accepts must run.
        Err(RecordError::Input(e)) => {
            eprintln!("{protocol} refuses shape {shape}: {e}");
            return CheckReport::default();
        }
        Err(RecordError::Device(e)) if e.contains("cannot") => {
            eprintln!("{protocol} cannot run shape {shape}: {e}");
            return CheckReport::default();
        }
        Err(e) => panic!("{protocol} {shape}: {e}"),
    };
    let rep = check(&rec, Mode::Random { schedules }, cfg.seed, None).unwrap();
    if rep.violations > 0 {
        eprintln!("{protocol}, shape {shape}, timing {}:", t.spec());
    }
    assert_clean(&rep, &rec);
    rep
}

#[test]
fn every_shape_runs_clean_on_every_protocol() {
    let mut checked = 0;
    for (shape, _) in SHAPES {
        for p in ssd::protocol::names() {
            checked += check_shape(shape, p, 40).states;
        }
    }
    assert!(checked > 2_000, "{checked}");
}

#[test]
fn checkpoints_shape_on_tc_scc_bpcc() {
    // Their recovery ignored checkpoints; they now refuse them at validation
    // (check_shape accepts a refusal), so this checks the refusal holds.
    for p in ["tc", "scc", "bpcc"] {
        check_shape("checkpoints", p, 400);
    }
}

#[test]
fn trims_of_in_flight_pages_on_none() {
    // Found by crash checker: shape trim-in-flight, seed 21, timing host=13,program=383735
    // ("reads tag 124 ... older than the acked trim of lpn 18").
    check_shape("trim-in-flight", "none", 400);
}

#[test]
fn unknown_shapes_are_refused() {
    let mut cfg = small_config("none");
    assert!(apply("zigzag", &mut cfg)
        .unwrap_err()
        .contains("unknown workload shape"));
}
