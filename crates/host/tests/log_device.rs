//! The WAL log on its own device (`host.log_device = "separate"`): what goes where, the
//! metrics of both devices, refusals, and the crash checker over two devices in one power
//! domain (a crash cuts both at the same instant; a state is the product of each device's
//! fate of its operations in flight).

use commitlab_host as host;
use host::check::{self, Mode};
use host::{HostConfig, HostError};
use ssd::DeviceConfig;

fn tiny(separate: bool, update: &str) -> (HostConfig, DeviceConfig) {
    let (mut h, mut d) = check::tiny_config("wal", "none");
    if separate {
        h.log_device = "separate".into();
    }
    h.update = update.into();
    match update {
        "ipa" | "ipa-block" => {
            h.page_bytes = d.nand.page_bytes;
            d.nand.append_bytes = 64;
        }
        "ipl" => {
            // One erase unit of 3 DB pages (4 flash pages each) and 2 log pages per block
            // of 16; 512 B sectors (4 per 2 KiB flash page, the default NOP 4).
            d.nand.pages_per_block = 16;
            h.ipl.unit_pages = 3;
            h.ipl.log_sectors = 8;
            h.ipl.sector_bytes = 512;
        }
        _ => {}
    }
    (h, d)
}

fn run(h: &HostConfig, d: &DeviceConfig, seed: u64) -> host::HostRun {
    let dev = ssd::Device::in_memory(d).unwrap();
    host::engine::run(h, d, dev, seed, false).unwrap()
}

/// The log and its master record leave the data device: it maps no lpn past the database,
/// its programs are the shared run's less about the log's, and the log device's programs
/// are reported apart (`HostMetrics::log_device`). Shared runs report no log device.
#[test]
fn the_log_and_master_go_to_the_log_device() {
    let (hs, d) = tiny(false, "out-of-place");
    let (hx, _) = tiny(true, "out-of-place");
    let shared = run(&hs, &d, 2);
    let sep = run(&hx, &d, 2);
    assert!(shared.metrics.log_device.is_none());
    let l = sep.metrics.log_device.expect("log device metrics");
    let data = host::engine::data_lpns(&sep.core.layout);
    let dev = &sep.core.device.core;
    assert!(
        (data..u64::from(dev.logical_pages()))
            .all(|lpn| dev.lookup(sim::Lpn(lpn as u32)).is_none()),
        "the data device holds pages past the database"
    );
    let ldev = &sep.core.log_device.as_ref().unwrap().core;
    assert!(
        ldev.lookup(sim::Lpn(0)).is_some(),
        "no master record on the log device"
    );
    assert!(
        ldev.lookup(sim::Lpn(1)).is_some(),
        "no log page on the log device"
    );
    // Every log page write and master write programs the log device (GC there included).
    let m = &sep.metrics;
    assert!(m.stats.log_page_writes > 0 && m.stats.checkpoints > 0);
    assert!(l.nand_programs >= m.stats.log_page_writes + m.stats.checkpoints);
    // The data device's programs exclude the log: fewer than the shared run's.
    assert!(
        m.nand_programs + m.stats.log_page_writes
            <= shared.metrics.nand_programs + l.gc_page_migrations + 64,
        "data device {} + log pages {} against shared {}",
        m.nand_programs,
        m.stats.log_page_writes,
        shared.metrics.nand_programs
    );
    assert!(m.nand_programs < shared.metrics.nand_programs);
}

/// Same configuration and seed, same result, byte for byte (the JSON of the metrics less
/// the wall time).
#[test]
fn separate_runs_are_deterministic() {
    let (h, d) = tiny(true, "ipa");
    let j = |r: host::HostRun| {
        let mut m = r.metrics;
        m.wall_time_s = 0.0;
        serde_json::to_string(&m).unwrap()
    };
    assert_eq!(j(run(&h, &d, 5)), j(run(&h, &d, 5)));
}

/// A restart measured after the run recovers both devices (the tag table's pruning over both
/// media is tested in `engine::tests::pruning_the_tag_table_recovers_the_same`).
#[test]
fn recovery_after_the_run_reads_both_devices() {
    let (mut h, d) = tiny(true, "out-of-place");
    h.measure_recovery = true;
    h.transactions = 400;
    let r = run(&h, &d, 3);
    let rec = r.metrics.recovery.expect("recovery measured");
    assert!(rec.pages_read > 0);
}

fn config_error(h: &HostConfig, d: &DeviceConfig) -> String {
    let dev = ssd::Device::in_memory(d).unwrap();
    match host::engine::run(h, d, dev, 1, false) {
        Err(HostError::Config { key, reason }) => format!("{key}: {reason}"),
        Err(e) => panic!("not a configuration error: {e}"),
        Ok(_) => panic!("accepted"),
    }
}

/// What cannot be honoured is refused naming the key: strategies with no WAL log on the
/// device, an unknown value, a txn trace capture (one device's commands).
#[test]
fn what_cannot_be_honoured_is_refused() {
    for s in ["device-tx", "cfc-ex", "pcmlogging", "wal-pcm"] {
        let (mut h, mut d) = check::tiny_config(s, if s == "device-tx" { "cfc" } else { "none" });
        if s == "device-tx" {
            d.protocol.name = "cfc".into();
        }
        h.log_device = "separate".into();
        let e = config_error(&h, &d);
        assert!(e.starts_with("host.log_device:"), "{s}: {e}");
    }
    let (mut h, d) = tiny(false, "out-of-place");
    h.log_device = "both".into();
    assert!(config_error(&h, &d).starts_with("host.log_device: unknown"));
    let (h, d) = tiny(true, "out-of-place");
    let dev = ssd::Device::in_memory(&d).unwrap();
    match host::engine::run_traced(&h, &d, dev, 1, false, true) {
        Err(HostError::Config { key, .. }) => assert_eq!(key, "host.log_device"),
        other => panic!("{:?}", other.err()),
    }
}

/// Every crash state of both devices passes, exhaustively and on random schedules, for
/// every update strategy; the two-device product has more states than the data device's
/// fates alone would give (the log device's in-flight writes have fates of their own).
#[test]
fn the_checker_over_two_devices_passes_correct_runs() {
    let ex = Mode::Exhaustive { max_in_flight: 12 };
    for u in ["out-of-place", "ipa", "ipa-block", "ipl"] {
        let (h, d) = tiny(true, u);
        let r = check::record(&h, &d, 1).unwrap();
        let log = r.log.as_ref().expect("a log device tape");
        assert!(!log.ops.is_empty());
        let rep = check::check(&r, ex, 1, None).unwrap();
        assert_eq!(rep.violations, 0, "{u}: {:?}", rep.first.first());
        assert_eq!(rep.ops, r.ops.len() + log.ops.len());
        let rep = check::check(&r, Mode::Random { schedules: 300 }, 7, None).unwrap();
        assert_eq!(rep.violations, 0, "{u}: {:?}", rep.first.first());
    }
}

/// Planted bug: the log's device acks a log page write at issue, before it is durable
/// (`fault_log_acked_at_issue`), so a commit is acked while its COMMIT record is in flight
/// on the log device. The checker's fates of the log device's operations catch it,
/// exhaustively and on random schedules; without the bug the same run passes (above).
/// Planted first with `commitlab crash --host wal --protocol none --set
/// host.log_device='"separate"'` and this field set (see docs/HOST.md, "The WAL log on its own
/// device").
#[test]
fn a_log_write_acked_before_it_is_durable_is_caught() {
    for u in ["out-of-place", "ipl"] {
        let (mut h, d) = tiny(true, u);
        h.fault_log_acked_at_issue = true;
        let r = check::record(&h, &d, 1).unwrap();
        let rep = check::check(&r, Mode::Exhaustive { max_in_flight: 12 }, 1, None).unwrap();
        assert!(rep.violations > 0, "{u}: exhaustive, {} states", rep.states);
        // An acked commit is missing (its COMMIT record's page write had not persisted).
        assert!(
            rep.first
                .iter()
                .any(|v| v.findings.iter().any(|f| f.contains("acked"))),
            "{:?}",
            rep.first
        );
        let rep = check::check(&r, Mode::Random { schedules: 500 }, 1, None).unwrap();
        assert!(rep.violations > 0, "{u}: random");
    }
}

/// A restart that overwrites a log page it scanned before anything it redid is durable
/// (`fault_recovery_reuses_log`) writes on the log device: the restart's tape includes the
/// log device's operations, and crashes inside it are caught there.
#[test]
fn crashes_inside_recovery_cover_the_log_device() {
    let (mut h, d) = tiny(true, "out-of-place");
    h.fault_recovery_reuses_log = true;
    let r = check::record(&h, &d, 1).unwrap();
    let random = check::check_with(&r, Mode::Random { schedules: 300 }, 1, None, true).unwrap();
    assert!(random.states_in_recovery > 0);
    assert!(random.violations > 0);
    let (h, d) = tiny(true, "out-of-place");
    let r = check::record(&h, &d, 1).unwrap();
    let random = check::check_with(&r, Mode::Random { schedules: 300 }, 1, None, true).unwrap();
    assert_eq!(random.violations, 0, "{:?}", random.first.first());
}
