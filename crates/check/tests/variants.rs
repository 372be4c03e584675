//! The safety variants of `check::variants` (what `commitlab crash --variants` checks): the
//! non-default position of every option that switches a protocol's crash-safety mechanism.
//!
//! Table-driven over `VARIANTS`: each variant is a valid change of its protocol's small
//! configuration, every option of `SAFETY_OPTIONS` has its variant on every protocol it
//! concerns, and every variant passes random crash schedules under several seeds. The CI
//! step (`crash --variants --schedules N`) runs them exhaustively and at scale.

mod common;

use commitlab_check::variants::{SAFETY_OPTIONS, VARIANTS};
use commitlab_check::{small_config, Mode};
use world::{Config, ConfigSource};

fn config_of(v: &commitlab_check::variants::Variant, seed: u64) -> Config {
    let base = small_config(v.protocol);
    let src = ConfigSource {
        preset: None,
        file: None,
        sets: v.sets.iter().map(|s| s.to_string()).collect(),
    };
    let mut cfg = Config::load_over(Some(&base), &src)
        .unwrap_or_else(|e| panic!("{} ({}): {e}", v.protocol, v.name));
    cfg.seed = seed;
    cfg
}

#[test]
fn every_variant_is_a_valid_change_of_its_protocol() {
    for v in VARIANTS {
        let cfg = config_of(v, 1);
        cfg.validate()
            .unwrap_or_else(|e| panic!("{} ({}): {e}", v.protocol, v.name));
        let base = small_config(v.protocol);
        assert_ne!(
            format!("{:?}", cfg),
            format!("{:?}", base),
            "{} ({}) changes nothing",
            v.protocol,
            v.name
        );
    }
}

#[test]
fn every_safety_option_has_its_non_default_position_checked() {
    for (key, protocols) in SAFETY_OPTIONS {
        for p in *protocols {
            let found = VARIANTS.iter().any(|v| {
                v.protocol == *p
                    && v.sets.iter().any(|s| {
                        s.split_once('=').is_some_and(|(k, _)| k == *key) && {
                            // The override is a non-default position of the option.
                            let base = small_config(p);
                            let src = ConfigSource {
                                preset: None,
                                file: None,
                                sets: vec![s.to_string()],
                            };
                            let one = Config::load_over(Some(&base), &src).unwrap();
                            format!("{one:?}") != format!("{base:?}")
                        }
                    })
            });
            assert!(
                found,
                "{key} on {p}: no variant checks its non-default position"
            );
        }
    }
}

#[test]
fn every_variant_passes_random_crash_schedules_on_several_seeds() {
    for v in VARIANTS {
        for seed in [1, 7, 1003] {
            let cfg = config_of(v, seed);
            let rec = commitlab_check::record(&cfg)
                .unwrap_or_else(|e| panic!("{} ({}) seed {seed}: {e}", v.protocol, v.name));
            let rep = commitlab_check::check(&rec, Mode::Random { schedules: 24 }, seed, None)
                .unwrap_or_else(|e| panic!("{} ({}) seed {seed}: {e}", v.protocol, v.name));
            if rep.violations > 0 {
                eprintln!(
                    "{} ({}) seed {seed}: replay with commitlab crash --protocol {} --seed {seed} --schedules 24 {}",
                    v.protocol,
                    v.name,
                    v.protocol,
                    v.sets
                        .iter()
                        .map(|s| format!("--set '{s}'"))
                        .collect::<Vec<_>>()
                        .join(" ")
                );
            }
            common::assert_clean(&rep, &rec);
        }
    }
}
