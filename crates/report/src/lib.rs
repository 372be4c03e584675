//! Output: aligned text tables for people, JSON and CSV for programs (one schema for all
//! three: `results`), SVG charts.

pub mod html;
pub mod results;
pub mod svg;
pub mod table;

use serde::Serialize;
use std::path::Path;
pub use table::Table;
use world::RunMetrics;

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

fn msf(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// A human-readable summary of one run.
pub fn run_summary(m: &RunMetrics) -> String {
    let mut t = Table::new(vec!["metric", "value"]);
    let mut row = |k: &str, v: String| t.row(vec![k.to_string(), v]);
    row("protocol", m.protocol.clone());
    row("seed", m.seed.to_string());
    row("workload", m.workload.clone());
    row("logical pages", m.logical_pages.to_string());
    row("host requests", m.host_requests.to_string());
    row(
        "host page reads / writes / trims",
        format!("{} / {} / {}", m.host_reads, m.host_writes, m.host_trims),
    );
    if m.ftl.partial_writes > 0 || m.ftl.unmapped_reads > 0 {
        // Block traces: sub-page writes (read-modify-write) and reads of unwritten pages.
        row(
            "sub-page writes / rmw reads / unmapped reads",
            format!(
                "{} / {} / {}",
                m.ftl.partial_writes, m.ftl.rmw_reads, m.ftl.unmapped_reads
            ),
        );
    }
    row(
        "nand reads / programs / partial programs / erases",
        format!(
            "{} / {} / {} / {}",
            m.nand_reads, m.nand_programs, m.nand_partial_programs, m.nand_erases
        ),
    );
    row(
        "gc page migrations / erases",
        format!("{} / {}", m.gc_page_migrations, m.gc_erases),
    );
    row("gc time (ms)", ms(m.gc_time_ns));
    row(
        "write amplification",
        format!("{:.3}", m.write_amplification),
    );
    row("simulated time (ms)", ms(m.sim_time_ns));
    row("requests per second", format!("{:.1}", m.requests_per_s));
    let p = &m.latency_ns;
    row(
        "latency p50 / p99 / p99.9 (ms)",
        format!("{} / {} / {}", ms(p.p50), ms(p.p99), ms(p.p999)),
    );
    if m.txs_committed + m.txs_aborted > 0 {
        row(
            "transactions committed / aborted",
            format!("{} / {}", m.txs_committed, m.txs_aborted),
        );
        row(
            "transaction throughput (per s)",
            format!("{:.1}", m.tx_throughput_per_s),
        );
        row(
            "transaction time mean / p99 (ms)",
            format!("{} / {}", msf(m.tx_time_ns.mean), ms(m.tx_time_ns.p99)),
        );
        row(
            "commit latency mean / p99 (ms)",
            format!(
                "{} / {}",
                msf(m.commit_latency_ns.mean),
                ms(m.commit_latency_ns.p99)
            ),
        );
        row(
            "commit-record writes (share of programs)",
            format!(
                "{} ({:.2}%)",
                m.commit_record_writes,
                m.commit_record_share * 100.0
            ),
        );
        row(
            "mapping-persistence writes (share of programs)",
            format!(
                "{} ({:.2}%)",
                m.map_persist_writes,
                m.map_persist_share * 100.0
            ),
        );
        row(
            "space overhead (record pages per mapped page)",
            format!("{:.4}", m.space_overhead),
        );
    }
    let e = &m.erase_count;
    row(
        "erase count min / mean / max",
        format!("{} / {:.2} / {}", e.min, e.mean, e.max),
    );
    row("DRAM (bytes)", m.dram_bytes_total.to_string());
    if let Some(r) = &m.recovery {
        row(
            "recovery pages read / time (ms)",
            format!("{} / {}", r.pages_read, ms(r.time_ns)),
        );
    }
    row("wall time (s)", format!("{:.3}", m.wall_time_s));
    row(
        "simulated NAND ops per wall second",
        format!("{:.0}", m.sim_ops_per_wall_s),
    );
    t.render()
}

/// Writes `value` as pretty JSON to `path`.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}
