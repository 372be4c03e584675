//! Host-run metrics (docs/METRICS.md, "Host runs"): transactions, throughput, latencies,
//! locking, buffering, logging and what the device spent on GC.

use serde::{Deserialize, Serialize};
use sim::histogram::Percentiles;
use sim::Histogram;
use std::collections::BTreeMap;

/// Counters the engine and the strategies keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostStats {
    pub committed: u64,
    /// Rolled back because the workload asked (TPC-C's 1 %, δ).
    pub aborted: u64,
    /// Rolled back by the engine and run again (deadlock victims, wait-die, no frame).
    pub restarted: u64,
    pub lock_waits: u64,
    pub deadlocks: u64,
    pub wait_die_deaths: u64,
    pub buffer_full_restarts: u64,
    /// The oldest active transaction found no frame and waited (for a younger holder's
    /// rollback or a read in flight) instead of restarting (`engine::Engine::no_room`).
    pub buffer_full_waits: u64,
    pub buffer_hits: u64,
    pub buffer_misses: u64,
    /// DB pages read from / written to the device (each spans `parts` device pages).
    pub page_reads: u64,
    pub page_writes: u64,
    /// WAL: log bytes appended (records × their size) and log page writes issued.
    pub log_bytes: u64,
    pub log_records: u64,
    pub log_page_writes: u64,
    pub log_page_reads: u64,
    pub log_forces: u64,
    pub checkpoints: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HostMetrics {
    pub strategy: String,
    pub protocol: String,
    pub workload: String,
    pub clients: u32,
    pub buffer_frames: u32,
    pub lock_level: String,
    /// JSON keys `committed`, `aborted`, `restarted`: the vocabulary a device run's
    /// metrics share (docs/METRICS.md).
    #[serde(rename = "committed")]
    pub txns_committed: u64,
    #[serde(rename = "aborted")]
    pub txns_aborted: u64,
    #[serde(rename = "restarted")]
    pub txns_restarted: u64,
    pub sim_time_ns: u64,
    /// Committed transactions per simulated second.
    pub throughput_per_s: f64,
    /// From a transaction's first start (restarts included) to its commit ack.
    pub txn_time_ns: Percentiles,
    /// From commit issue to commit ack.
    pub commit_latency_ns: Percentiles,
    /// `txn_time_ns`'s histogram, for windows of a run (`Histogram::since`); not reported
    /// (a record read back has an empty one), but carried by `with_histogram`.
    #[serde(skip)]
    pub txn_time_hist: Histogram,
    pub lock_waits: u64,
    pub deadlocks: u64,
    pub buffer_hit_ratio: f64,
    pub stats: HostStats,
    /// Log bytes and device pages written for the log (WAL).
    pub log_bytes: u64,
    pub log_pages: u64,
    /// The data device's NAND work (with `host.log_device = "separate"`, the log's is in
    /// `log_device`, not here).
    pub nand_reads: u64,
    pub nand_programs: u64,
    pub nand_partial_programs: u64,
    pub nand_erases: u64,
    pub gc_time_ns: u64,
    /// GC's share of the flash array's busy time.
    pub gc_share: f64,
    /// The flash array's busy time over the run (`gc_share`'s denominator), so a window of
    /// a run (a snapshot's difference) has a GC share too.
    pub array_busy_ns: u64,
    pub strategy_counters: BTreeMap<String, u64>,
    /// Net bytes modified per written DB page and the DBMS write amplification
    /// (`update::net`, in-place-appends.md §1).
    pub net_bytes: crate::update::net::NetBytesMetrics,
    /// With `host.measure_recovery`: the cost of restarting after the run.
    pub recovery: Option<HostRecoveryMetrics>,
    /// With `host.log_device = "separate"`: the log device's NAND and GC work (absent
    /// otherwise, when the log's work is in the fields above).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_device: Option<LogDeviceMetrics>,
    pub wall_time_s: f64,
}

/// The log device's work during the run (`host.log_device = "separate"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogDeviceMetrics {
    pub nand_reads: u64,
    pub nand_programs: u64,
    pub nand_partial_programs: u64,
    pub nand_erases: u64,
    pub gc_page_migrations: u64,
    pub gc_erases: u64,
    pub gc_time_ns: u64,
}

impl LogDeviceMetrics {
    /// The work of `dev` since `base` (its counters and FTL statistics when the run
    /// started).
    pub fn collect(
        dev: &ssd::Device,
        base: &(media::NandCounters, ssd::FtlStats),
    ) -> LogDeviceMetrics {
        let (bn, bf) = base;
        let n = dev.core.nand.counters();
        let f = dev.core.stats;
        LogDeviceMetrics {
            nand_reads: (n.reads + n.oob_reads) - (bn.reads + bn.oob_reads),
            nand_programs: n.programs - bn.programs,
            nand_partial_programs: n.partial_programs - bn.partial_programs,
            nand_erases: n.erases - bn.erases,
            gc_page_migrations: f.gc_page_migrations - bf.gc_page_migrations,
            gc_erases: f.gc_erases - bf.gc_erases,
            gc_time_ns: f.gc_busy_ns - bf.gc_busy_ns,
        }
    }

    /// The work between `earlier` (a snapshot of the same run) and `self`.
    pub fn since(&self, earlier: &LogDeviceMetrics) -> LogDeviceMetrics {
        LogDeviceMetrics {
            nand_reads: self.nand_reads - earlier.nand_reads,
            nand_programs: self.nand_programs - earlier.nand_programs,
            nand_partial_programs: self.nand_partial_programs - earlier.nand_partial_programs,
            nand_erases: self.nand_erases - earlier.nand_erases,
            gc_page_migrations: self.gc_page_migrations - earlier.gc_page_migrations,
            gc_erases: self.gc_erases - earlier.gc_erases,
            gc_time_ns: self.gc_time_ns - earlier.gc_time_ns,
        }
    }
}

/// What a restart after the run cost (simulated, except `wall_time_s`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct HostRecoveryMetrics {
    /// The device's own recovery (scan, mapping rebuild).
    pub device_time_ns: u64,
    pub device_pages_read: u64,
    /// Device and strategy restart together (analysis, redo, undo; reading the database).
    pub time_ns: u64,
    pub pages_read: u64,
    pub wall_time_s: f64,
}

/// `HostMetrics` with its histogram, for carrying a run's metrics to another process
/// exactly (`#[serde(with = "host::metrics::with_histogram")]`; the reproduction's remote
/// engine): `{"metrics": the report's record, "txn_time_hist": the histogram}`. The
/// report's own JSON (`HostMetrics`' `Serialize`) leaves the histogram out.
pub mod with_histogram {
    use super::HostMetrics;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use sim::Histogram;

    #[derive(Serialize)]
    struct Out<'a> {
        metrics: &'a HostMetrics,
        txn_time_hist: &'a Histogram,
    }

    #[derive(Deserialize)]
    struct In {
        metrics: HostMetrics,
        txn_time_hist: Histogram,
    }

    pub fn serialize<S: Serializer>(m: &HostMetrics, s: S) -> Result<S::Ok, S::Error> {
        Out {
            metrics: m,
            txn_time_hist: &m.txn_time_hist,
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<HostMetrics, D::Error> {
        let In {
            mut metrics,
            txn_time_hist,
        } = In::deserialize(d)?;
        metrics.txn_time_hist = txn_time_hist;
        Ok(metrics)
    }

    /// The same for an optional record.
    pub mod option {
        use super::{HostMetrics, In, Out};
        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        pub fn serialize<S: Serializer>(m: &Option<HostMetrics>, s: S) -> Result<S::Ok, S::Error> {
            m.as_ref()
                .map(|m| Out {
                    metrics: m,
                    txn_time_hist: &m.txn_time_hist,
                })
                .serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<HostMetrics>, D::Error> {
            Ok(Option::<In>::deserialize(d)?.map(|i| {
                let mut m = i.metrics;
                m.txn_time_hist = i.txn_time_hist;
                m
            }))
        }
    }
}
