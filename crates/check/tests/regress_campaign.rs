//! Regression tests for the bugs an adversarial test campaign found (held-out
//! seeds and geometries, real kills of `run` and `recover`), and the enumeration of every
//! protocol × FTL option combination: each one is either refused at validation with a
//! configuration error naming the key, or passes a small crash check with zero violations.

mod common;

use commitlab_check::*;
use common::*;

/// Replays one state of a random-schedule run of `cfg`.
fn random_state(cfg: &world::Config, schedules: u64, state: u64) -> CheckReport {
    let rec = record(cfg).unwrap();
    let rep = check(&rec, Mode::Random { schedules }, cfg.seed, Some(state)).unwrap();
    assert_eq!(rep.states, 1);
    assert_clean(&rep, &rec);
    rep
}

/// Replays one state of an exhaustive run of `cfg`.
fn exhaustive_state(cfg: &world::Config, state: u64) -> CheckReport {
    let rec = record(cfg).unwrap();
    let rep = check(
        &rec,
        Mode::Exhaustive { max_in_flight: 8 },
        cfg.seed,
        Some(state),
    )
    .unwrap();
    assert_clean(&rep, &rec);
    rep
}

// ------------------------------------------------------------------ bug 1

#[test]
fn bug1_tc_scc_bpcc_refuse_checkpoints() {
    // found by an adversarial test campaign: `crash --protocol tc --seed 1 --exhaustive --set
    // ftl.checkpoint_interval=40` had 3,125 of 3,482 states violate; these protocols
    // recover by a whole-device scan and never read the checkpoint's mapping.
    for p in ["tc", "scc", "bpcc"] {
        let mut cfg = small_config(p);
        cfg.ftl.checkpoint_interval = 40;
        let e = cfg.validate().expect_err(p).to_string();
        assert!(e.contains("ftl.checkpoint_interval"), "{p}: {e}");
        let e = record(&cfg).err().expect(p);
        assert!(
            matches!(&e, RecordError::Input(s) if s.contains("ftl.checkpoint_interval")),
            "{p}: {e}"
        );
        // Without checkpoints they still pass.
        cfg.ftl.checkpoint_interval = 0;
        cfg.validate().unwrap();
    }
}

// ------------------------------------------------------------------ bug 2

#[test]
fn bug2_none_trim_of_a_trimmed_page_waits_for_its_tombstone() {
    // found by an adversarial test campaign: `crash --protocol none --seed 1000 --schedules 2000
    // --set workload.synthetic.trim_ratio=0.3 --state 115`: lpn 7 read the plain write the
    // acked trim had superseded, because the second trim was acked while the first trim's
    // tombstone was still being programmed.
    let mut cfg = small_config("none");
    cfg.seed = 1000;
    cfg.workload.synthetic.trim_ratio = 0.3;
    random_state(&cfg, 2000, 115);
    random(&cfg, 300);
}
// ------------------------------------------------------------------ bug 3

#[test]
fn bug3_mhl_m_recovers_on_small_blocks() {
    // found by an adversarial test campaign: `crash --protocol mhl-m --seed 1000 --exhaustive --set
    // nand.pages_per_block=4 --set nand.blocks_per_plane=24 --state 2698`: "recovery failed
    // on a legitimate crash image: out of space".
    let mut cfg = small_config("mhl-m");
    cfg.seed = 1000;
    cfg.nand.pages_per_block = 4;
    cfg.nand.blocks_per_plane = 24;
    exhaustive_state(&cfg, 2698);
}

#[test]
fn bug3_mhl_m_and_aw_pass_small_geometries() {
    // Random schedules on the geometries of the campaign (4- and 6-page blocks).
    for p in ["mhl-m", "aw"] {
        for (ppb, bpp, seed) in [(4, 24, 1000), (4, 16, 7), (6, 12, 1000)] {
            let mut cfg = small_config(p);
            cfg.seed = seed;
            cfg.nand.pages_per_block = ppb;
            cfg.nand.blocks_per_plane = bpp;
            random(&cfg, 150);
        }
    }
}

#[test]
fn bug3_mapping_log_reserve_is_validated() {
    // Long chains (256 blocks per plane) and no over-provisioning leave too few spare
    // blocks for the mapping log plus what recovery needs: refused, naming the key.
    for p in ["mhl-m", "aw"] {
        let mut cfg = small_config(p);
        cfg.nand.blocks_per_plane = 256;
        cfg.ftl.over_provisioning = 0.0;
        let e = ssd::Device::in_memory(&cfg.device())
            .err()
            .unwrap_or_else(|| panic!("{p}: accepted"))
            .to_string();
        assert!(
            e.contains("ftl.over_provisioning") && e.contains("spare blocks"),
            "{e}"
        );
        cfg.ftl.over_provisioning = 0.2;
        ssd::Device::in_memory(&cfg.device()).unwrap();
    }
}
