//! Measurement: the baselines the measured part starts from, DRAM sampling, and the
//! metrics of the measured part (counters as differences from the baselines).

use super::*;

impl World {
    /// Resets the baselines: metrics cover what happens from `now` on.
    pub(super) fn start_measuring(&mut self, now: SimTime) {
        self.start = now;
        self.base_nand = self.device.core.nand.counters();
        self.base_ftl = self.device.core.stats;
        self.measured_from_request = self.requests;
        self.lat_all = Histogram::new();
        self.lat_read = Histogram::new();
        self.lat_write = Histogram::new();
        self.lat_tx = Histogram::new();
        self.lat_commit = Histogram::new();
        self.lat_queue = Histogram::new();
        self.lat_response = Histogram::new();
        self.dram_peak.clear();
        self.protocol_dram_peak = 0;
        self.measuring = true;
        self.sample_dram();
        self.committed = 0;
        self.aborted = 0;
        self.wall_start = std::time::Instant::now();
        self.cpu_start_ns = crate::bench::cpu_time_ns();
    }

    /// Folds the device's current DRAM use into the peaks.
    pub(super) fn sample_dram(&mut self) {
        for (k, v) in self.device.dram_bytes() {
            let e = self.dram_peak.entry(k).or_insert(0);
            *e = (*e).max(v);
        }
        self.protocol_dram_peak = self
            .protocol_dram_peak
            .max(self.device.protocol_dram_bytes());
    }

    /// The metrics of the measured part of the run (after the prefill).
    pub fn metrics(&mut self, wall_s: f64) -> RunMetrics {
        self.sample_dram();
        let d = &self.device;
        let n = d.core.nand.counters();
        let b = self.base_nand;
        let s = d.core.stats;
        let f = &self.base_ftl;
        let host_writes = s.host_writes - f.host_writes;
        let programs = n.programs - b.programs;
        let sim_ns = self.now.since(self.start);
        let ops = (n.reads + n.oob_reads + n.programs + n.partial_programs + n.erases)
            - (b.reads + b.oob_reads + b.programs + b.partial_programs + b.erases);
        let meta: Vec<u32> = d
            .core
            .nand
            .image()
            .erase_counts()
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                !matches!(
                    d.core.block(media::BlockId(*i as u32)).state,
                    ssd::core::BlockState::Meta
                )
            })
            .map(|(_, e)| *e)
            .collect();
        let dram: BTreeMap<String, u64> = d
            .dram_bytes()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        RunMetrics {
            protocol: self.cfg.protocol.name.clone(),
            seed: self.cfg.seed,
            workload: self.driver.describe(),
            logical_pages: d.logical_pages(),
            host_requests: self.requests - self.measured_from_request,
            host_reads: s.host_reads - f.host_reads,
            host_writes,
            host_trims: s.host_trims - f.host_trims,
            nand_reads: (n.reads + n.oob_reads) - (b.reads + b.oob_reads),
            nand_oob_reads: n.oob_reads - b.oob_reads,
            nand_programs: programs,
            nand_partial_programs: n.partial_programs - b.partial_programs,
            nand_erases: n.erases - b.erases,
            gc_page_migrations: s.gc_page_migrations - f.gc_page_migrations,
            gc_erases: s.gc_erases - f.gc_erases,
            gc_time_ns: s.gc_busy_ns - f.gc_busy_ns,
            write_amplification: if host_writes == 0 {
                0.0
            } else {
                programs as f64 / host_writes as f64
            },
            sim_time_ns: sim_ns,
            requests_per_s: if sim_ns == 0 {
                0.0
            } else {
                self.lat_all.count() as f64 / (sim_ns as f64 / 1e9)
            },
            latency_ns: self.lat_all.percentiles(),
            read_latency_ns: self.lat_read.percentiles(),
            write_latency_ns: self.lat_write.percentiles(),
            queue_delay_ns: self.lat_queue.percentiles(),
            response_time_ns: self.lat_response.percentiles(),
            txs_committed: self.committed,
            txs_aborted: self.aborted,
            tx_throughput_per_s: if sim_ns == 0 {
                0.0
            } else {
                self.committed as f64 / (sim_ns as f64 / 1e9)
            },
            tx_completed_per_s: if sim_ns == 0 {
                0.0
            } else {
                (self.committed + self.aborted) as f64 / (sim_ns as f64 / 1e9)
            },
            tx_time_ns: self.lat_tx.percentiles(),
            commit_latency_ns: self.lat_commit.percentiles(),
            commit_record_writes: s.commit_record_writes - f.commit_record_writes,
            commit_record_share: share(s.commit_record_writes - f.commit_record_writes, programs),
            map_persist_writes: s.map_persist_writes - f.map_persist_writes,
            map_persist_share: share(s.map_persist_writes - f.map_persist_writes, programs),
            map_persist_per_host_write: share(
                s.map_persist_writes - f.map_persist_writes,
                host_writes,
            ),
            space_overhead: {
                let counters = d.protocol_counters();
                let live = counters
                    .iter()
                    .find(|(k, _)| *k == "live_record_pages")
                    .map_or(0, |x| x.1);
                share(live, d.core.mapped_pages())
            },
            erase_count: EraseStats::of(&meta),
            ftl: diff_stats(&s, f),
            protocol_counters: d
                .protocol_counters()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            dram_bytes_total: dram.values().sum(),
            dram_bytes: dram,
            dram_bytes_peak: self
                .dram_peak
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            protocol_dram_bytes: d.protocol_dram_bytes(),
            protocol_dram_bytes_peak: self.protocol_dram_peak,
            recovery: None,
            recovery_wall_time_s: 0.0,
            wall_time_s: wall_s,
            sim_ops_per_wall_s: if wall_s > 0.0 {
                ops as f64 / wall_s
            } else {
                0.0
            },
        }
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

fn diff_stats(a: &FtlStats, b: &FtlStats) -> FtlStats {
    // Every field is a counter; subtract field by field through the serialized form so a new
    // counter can never be forgotten here.
    let av = serde_json::to_value(a).unwrap_or_default();
    let bv = serde_json::to_value(b).unwrap_or_default();
    let mut out = serde_json::Map::new();
    if let (Some(am), Some(bm)) = (av.as_object(), bv.as_object()) {
        for (k, v) in am {
            let x = v
                .as_u64()
                .unwrap_or(0)
                .saturating_sub(bm.get(k).and_then(|y| y.as_u64()).unwrap_or(0));
            out.insert(k.clone(), x.into());
        }
    }
    serde_json::from_value(serde_json::Value::Object(out)).unwrap_or(*a)
}
