//! The four PCM strategies over commitlab's emulated SSD as their external store
//! (`host.pcm.external = "emulated"`, `host::external`): the crash checker crashes at every
//! PCM line write and every flash operation (host programs, GC migrations, erases), rebuilds
//! the FTL from the surviving flash image, and recovers the strategy from PCM and the pages
//! read back from flash. Planted bugs must be caught on this store too.

use commitlab_host as host;
use host::check::{self, Mode};

const STRATEGIES: [&str; 4] = ["pcmlogging", "pcmlogging-page", "wal-pcm", "scmlogging"];

/// The crash matrix's emulated-store cell (`world::host_run::HOST_CRASH_EMULATED`): the
/// tiny configuration with the emulated SSD as the store, 10 blocks per plane so GC runs.
fn tiny(s: &str) -> (host::HostConfig, ssd::DeviceConfig) {
    let (mut h, mut d) = check::tiny_config(s, "none");
    h.pcm.external = "emulated".into();
    d.nand.blocks_per_plane = 10;
    (h, d)
}

fn show(s: &str, rep: &check::CheckReport) {
    for v in rep.first.iter().take(2) {
        eprintln!("{s}: {:?}\n{:#?}", v.state, v.findings);
    }
    eprintln!(
        "{s}: {} ops, {} states, {} violations",
        rep.ops, rep.states, rep.violations
    );
}

fn exhaustive(s: &str) {
    let (h, d) = tiny(s);
    let rec = check::record(&h, &d, 7).unwrap();
    let k = &rec.metrics.strategy_counters;
    let tier = rec.tier.as_ref().unwrap();
    let flash = tier.disk_ops.flash.as_ref().expect("a flash log");
    assert!(
        k["disk_writes"] > 0 && k["ext_flash_programs"] > 0,
        "{s}: {k:?}"
    );
    assert!(!flash.ops.is_empty(), "{s}");
    assert_eq!(k["ext_readback_mismatches"], 0, "{s}");
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 10 }, 1, None).unwrap();
    show(s, &rep);
    assert!(rep.ops > flash.ops.len(), "{s}");
    // Distinct crash images (fates that leave the same image are one state): pcmlogging
    // 3,407 on this run, 4,000 and more when each fate counted.
    assert!(rep.states > 2000, "{s}: {} states", rep.states);
    assert_eq!(rep.violations, 0, "{s}");
}

/// Every crash instant of the tiny bank run (PCM line writes × flash operations, GC erases
/// included: the tiny device has 10 blocks per plane), record-level PCMLogging and
/// SCMLogging: the flash store is really written, and no state violates.
#[test]
fn pcmlogging_and_scmlogging_survive_every_crash_on_the_emulated_ssd() {
    for s in ["pcmlogging", "scmlogging"] {
        exhaustive(s);
    }
}

/// The same for pcmlogging-page and wal-pcm (about 0.8 M and 1 M states, 20-35 s in
/// release, when each fate of a write counted a state; fewer now that fates leaving the same
/// image are one; `commitlab crash --host all` runs them in CI).
#[test]
#[ignore]
fn page_strategies_survive_every_crash_on_the_emulated_ssd() {
    for s in ["pcmlogging-page", "wal-pcm"] {
        exhaustive(s);
    }
}

/// 1,000 random crash states of a larger run (the matrix's `HOST_CRASH_LARGER`), each
/// strategy.
#[test]
fn every_pcm_strategy_survives_random_crashes_on_the_emulated_ssd() {
    for s in STRATEGIES {
        let (mut h, mut d) = tiny(s);
        h.transactions = 300;
        h.clients = 4;
        h.bank.accounts = 120;
        d.nand.blocks_per_plane = 32;
        let rec = check::record(&h, &d, 11).unwrap();
        let rep = check::check(&rec, Mode::Random { schedules: 1000 }, 5, None).unwrap();
        show(s, &rep);
        assert_eq!(rep.states, 1000);
        assert_eq!(rep.violations, 0, "{s}");
    }
}

/// The PCM strategies' refusal of device protocols stays: the emulated store runs on `none`.
#[test]
fn the_emulated_store_needs_the_plain_ftl() {
    for s in STRATEGIES {
        let (h, mut d) = tiny(s);
        d.protocol.name = "cfc".into();
        let e = check::record(&h, &d, 7).err().expect("refused").to_string();
        assert!(e.contains("protocol"), "{s}: {e}");
    }
}

/// Planted bug in the store: flash writes acked at submission, so a destage frees its PCM
/// records (units, slots, frames) while the programs are in flight. Only the flash
/// operations as crash points can catch it: the page writes' own interval is empty.
#[test]
fn a_flash_write_acked_at_submission_is_caught() {
    for s in STRATEGIES {
        let (mut h, d) = tiny(s);
        h.pcm.fault_flash_ack_at_issue = true;
        let rec = check::record(&h, &d, 7).unwrap();
        let mode = if s == "pcmlogging" {
            Mode::Exhaustive { max_in_flight: 10 }
        } else {
            Mode::Random { schedules: 1000 }
        };
        let rep = check::check(&rec, mode, 1, None).unwrap();
        show(s, &rep);
        assert!(rep.violations > 0, "{s}: planted bug not caught");
    }
}

/// The strategy's own planted bug (destages free units before the write completed) is
/// caught on the emulated store as on the Table 2 disks.
#[test]
fn early_destage_free_is_caught_on_the_emulated_ssd() {
    let (mut h, d) = tiny("pcmlogging");
    h.pcm.fault_early_destage_free = true;
    let rec = check::record(&h, &d, 7).unwrap();
    let rep = check::check(&rec, Mode::Exhaustive { max_in_flight: 10 }, 1, None).unwrap();
    show("pcmlogging", &rep);
    assert!(rep.violations > 0);
}

/// The tiny runs exercise the flash store: pages are written several times over, and on
/// the tiny device GC migrates and erases (so crashes land inside GC too).
#[test]
fn the_tiny_runs_write_the_flash_and_run_gc() {
    let mut gc = 0;
    for s in STRATEGIES {
        let (h, d) = tiny(s);
        let rec = check::record(&h, &d, 7).unwrap();
        let k = &rec.metrics.strategy_counters;
        let ext: Vec<_> = k
            .iter()
            .filter(|(n, _)| n.starts_with("ext_") || n.starts_with("disk_"))
            .collect();
        eprintln!("{s}: {ext:?}");
        assert!(k["ext_flash_programs"] >= k["disk_writes"], "{s}");
        gc += k["ext_gc_erases"];
    }
    assert!(gc > 0, "no GC in any tiny run");
}

/// A worn-out emulated SSD refuses writes (blocks retired at `nand.endurance`): the run ends
/// with an error naming the store instead of a panic (`FlashStore::write` panicked before
/// found by reviewing the emulated store's error paths).
#[test]
fn a_worn_out_emulated_ssd_ends_the_run_with_an_error() {
    let (mut h, mut d) = tiny("scmlogging");
    d.nand.endurance = 1;
    h.transactions = 3000;
    let e = match check::record(&h, &d, 7) {
        Ok(r) => panic!(
            "the device never wore out: {:?}",
            r.metrics.strategy_counters
        ),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("emulated SSD refused"), "{e}");
}
