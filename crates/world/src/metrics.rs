//! The metrics of a run, as one serializable record. The schema is documented field by
//! field in `docs/METRICS.md`; the JSON keys are these field names.

use serde::{Deserialize, Serialize};
use sim::histogram::Percentiles;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EraseStats {
    pub min: u32,
    pub mean: f64,
    pub max: u32,
    pub variance: f64,
    /// The erase count that only 1 % (5 %) of blocks exceed.
    pub worst_1pct: u32,
    pub worst_5pct: u32,
}

impl EraseStats {
    pub fn of(counts: &[u32]) -> EraseStats {
        if counts.is_empty() {
            return EraseStats::default();
        }
        let mut v = counts.to_vec();
        v.sort_unstable();
        let n = v.len() as f64;
        let mean = v.iter().map(|x| f64::from(*x)).sum::<f64>() / n;
        let variance = v
            .iter()
            .map(|x| (f64::from(*x) - mean).powi(2))
            .sum::<f64>()
            / n;
        let at = |q: f64| v[((q * n).ceil() as usize).clamp(1, v.len()) - 1];
        EraseStats {
            min: v[0],
            mean,
            max: v[v.len() - 1],
            variance,
            worst_1pct: at(0.99),
            worst_5pct: at(0.95),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecoveryMetrics {
    pub pages_read: u64,
    pub scanned_pages: u64,
    pub time_ns: u64,
    pub had_checkpoint: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    pub protocol: String,
    pub seed: u64,
    pub workload: String,
    pub logical_pages: u32,
    pub host_requests: u64,
    pub host_reads: u64,
    pub host_writes: u64,
    pub host_trims: u64,
    pub nand_reads: u64,
    pub nand_oob_reads: u64,
    pub nand_programs: u64,
    pub nand_partial_programs: u64,
    pub nand_erases: u64,
    pub gc_page_migrations: u64,
    pub gc_erases: u64,
    pub gc_time_ns: u64,
    pub write_amplification: f64,
    pub sim_time_ns: u64,
    pub requests_per_s: f64,
    pub latency_ns: Percentiles,
    pub read_latency_ns: Percentiles,
    pub write_latency_ns: Percentiles,
    /// Open-loop workloads (timed traces, generated arrivals): from a request's or a
    /// transaction's arrival to issuing its first command (waiting for a client, a barrier
    /// or the previous transaction). Empty for closed loops.
    pub queue_delay_ns: Percentiles,
    /// Open-loop workloads: from arrival to the ack of the request, or of the transaction's
    /// COMMIT/ABORT (queueing delay plus service time). Empty for closed loops.
    pub response_time_ns: Percentiles,
    /// The JSON and CSV keys of the transaction counts and rates are those of a host run's
    /// (`committed`, `aborted`, `throughput_per_s`): one vocabulary for device and host
    /// records (docs/METRICS.md).
    #[serde(rename = "committed")]
    pub txs_committed: u64,
    #[serde(rename = "aborted")]
    pub txs_aborted: u64,
    /// Committed transactions per simulated second.
    #[serde(rename = "throughput_per_s")]
    pub tx_throughput_per_s: f64,
    /// Completed (committed or aborted) transactions per simulated second.
    #[serde(rename = "completed_per_s")]
    pub tx_completed_per_s: f64,
    /// Transaction execution time: BEGIN issued to COMMIT acked.
    #[serde(rename = "txn_time_ns")]
    pub tx_time_ns: Percentiles,
    /// Commit response time: COMMIT issued to acked.
    pub commit_latency_ns: Percentiles,
    /// Pages written only to make commits decidable, and their share of all programs.
    pub commit_record_writes: u64,
    pub commit_record_share: f64,
    /// Pages written to persist the mapping; their share of all programs, and per host page
    /// written (LightTx §4.5's "mapping persistence write ratio").
    pub map_persist_writes: u64,
    pub map_persist_share: f64,
    pub map_persist_per_host_write: f64,
    /// Live protocol record pages (TC commit records) per mapped page at the end (TxFlash
    /// Table 2's space overhead).
    pub space_overhead: f64,
    pub erase_count: EraseStats,
    pub ftl: ssd::FtlStats,
    pub protocol_counters: BTreeMap<String, u64>,
    /// Controller DRAM by structure at the end of the run, and their sum.
    pub dram_bytes: BTreeMap<String, u64>,
    pub dram_bytes_total: u64,
    /// Each structure's largest size seen during the measured part (sampled every
    /// `DRAM_SAMPLE_EVERY` requests and at the end; the peaks need not coincide).
    pub dram_bytes_peak: BTreeMap<String, u64>,
    /// The commit protocol's own tables (FTL tables excluded): at the end, and the largest
    /// sampled total.
    pub protocol_dram_bytes: u64,
    pub protocol_dram_bytes_peak: u64,
    pub recovery: Option<RecoveryMetrics>,
    /// Wall-clock fields: the only ones that differ between runs of one config and seed.
    pub recovery_wall_time_s: f64,
    pub wall_time_s: f64,
    pub sim_ops_per_wall_s: f64,
}

/// How often (in requests) a run samples DRAM for its peaks.
pub const DRAM_SAMPLE_EVERY: u64 = 256;

/// Keys whose values depend on the wall clock (everything else is deterministic).
pub const WALL_CLOCK_KEYS: [&str; 3] =
    ["recovery_wall_time_s", "wall_time_s", "sim_ops_per_wall_s"];
