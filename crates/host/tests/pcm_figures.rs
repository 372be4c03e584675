//! The counters behind PCMLogging's Figs. 8b and 11 for the WAL baselines:
//! dirty records per page written to the disk, and the PCM wear figures every strategy that
//! writes PCM exports.

use commitlab_host as host;
use host::check;

/// A small TPC-C on the HDD with a PCM small enough that pages reach the disk (the sizes of
/// tests/wal_pcm.rs).
fn hdd_tpcc(strategy: &str) -> (host::HostConfig, ssd::DeviceConfig) {
    let (mut h, mut d) = check::tiny_config(strategy, "none");
    h.workload = "tpcc".into();
    h.tpcc.warehouses = 1;
    h.tpcc.customers_per_district = 20;
    h.tpcc.items = 50;
    h.tpcc.max_txns = 200;
    h.transactions = 120;
    h.page_bytes = 8192;
    h.log_pages = 64;
    h.pcm.pcm_bytes = if strategy == "wal-pcm" {
        8 * 8192
    } else {
        16 * 8192
    };
    h.pcm.dram_bytes = 8 * 8192 + 8192;
    h.pcm.checkpoint_interval_ms = 20;
    h.pcm.external = "hdd".into();
    d.nand.blocks_per_plane = 64;
    (h, d)
}

/// Every data page written to the disk carries at least one changed record, and no more
/// changed records than the log has records (each update logs one): counting every slot of
/// a written page, or none, breaks one of the bounds.
#[test]
fn wal_baselines_count_dirty_records_per_written_page() {
    for s in ["wal-pcm", "scmlogging"] {
        let (h, d) = hdd_tpcc(s);
        let k = check::record(&h, &d, 3).unwrap().metrics.strategy_counters;
        let (pages, dirty) = (k["disk_page_writes"], k["disk_dirty_records"]);
        eprintln!(
            "{s}: {pages} page writes ({} disk writes), {dirty} dirty records, {} log records",
            k["disk_writes"], k["log_records"]
        );
        assert!(pages > 0, "{s}: no data page reached the disk");
        assert!(pages <= k["disk_writes"], "{s}");
        assert!(dirty >= pages, "{s}: a written page with no dirty record");
        assert!(
            dirty <= k["log_records"],
            "{s}: more dirty records than updates"
        );
    }
}

/// The wear figures (Fig. 11) are exported by every strategy that writes PCM, and are
/// consistent: 0 < mean ≤ worst 5 % ≤ worst 1 % ≤ max (the figures themselves are checked by
/// hand in media::pcm's tests). Each strategy's tiny configuration (`check::tiny_config`).
#[test]
fn every_pcm_strategy_exports_wear_figures() {
    for s in ["pcmlogging", "pcmlogging-page", "wal-pcm", "scmlogging"] {
        let (h, d) = check::tiny_config(s, "none");
        let k = check::record(&h, &d, 3).unwrap().metrics.strategy_counters;
        let g = |n: &str| *k.get(n).unwrap_or_else(|| panic!("{s}: no {n}"));
        let (mean, w5, w1, max) = (
            g("pcm_wear_mean_x100"),
            g("pcm_wear_worst_5pct_x100"),
            g("pcm_wear_worst_1pct_x100"),
            g("pcm_wear_max_unit_writes") * 100,
        );
        eprintln!(
            "{s}: mean {mean} w5 {w5} w1 {w1} max {max} var {}",
            g("pcm_wear_variance_x100")
        );
        assert!(mean > 0 && mean <= w5 && w5 <= w1 && w1 <= max, "{s}");
        assert!(g("pcm_wear_variance_x100") > 0, "{s}");
    }
}
