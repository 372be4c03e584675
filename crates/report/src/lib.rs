//! Output: aligned text tables for people, JSON and CSV for programs.

pub mod table;

use serde::Serialize;
use std::path::Path;
pub use table::Table;
use world::RunMetrics;

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
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
    let e = &m.erase_count;
    row(
        "erase count min / mean / max",
        format!("{} / {:.2} / {}", e.min, e.mean, e.max),
    );
    row("protocol DRAM (bytes)", m.dram_bytes_total.to_string());
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

/// One row per run, side by side.
pub fn compare_table(runs: &[RunMetrics]) -> String {
    let mut t = Table::new(vec![
        "protocol",
        "req/s",
        "lat p50 ms",
        "lat p99 ms",
        "WA",
        "programs",
        "partial",
        "erases",
        "gc migr",
        "recovery ms",
    ]);
    for m in runs {
        t.row(vec![
            m.protocol.clone(),
            format!("{:.1}", m.requests_per_s),
            ms(m.latency_ns.p50),
            ms(m.latency_ns.p99),
            format!("{:.3}", m.write_amplification),
            m.nand_programs.to_string(),
            m.nand_partial_programs.to_string(),
            m.nand_erases.to_string(),
            m.gc_page_migrations.to_string(),
            m.recovery.as_ref().map_or("-".into(), |r| ms(r.time_ns)),
        ]);
    }
    t.render()
}

/// CSV of the same columns as `compare_table`, machine-readable.
pub fn compare_csv(runs: &[RunMetrics]) -> String {
    let mut s = String::from(
        "protocol,requests_per_s,latency_ns_p50,latency_ns_p99,write_amplification,nand_programs,nand_partial_programs,nand_erases,gc_page_migrations,recovery_time_ns\n",
    );
    for m in runs {
        s.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{}\n",
            m.protocol,
            m.requests_per_s,
            m.latency_ns.p50,
            m.latency_ns.p99,
            m.write_amplification,
            m.nand_programs,
            m.nand_partial_programs,
            m.nand_erases,
            m.gc_page_migrations,
            m.recovery
                .as_ref()
                .map_or(String::new(), |r| r.time_ns.to_string()),
        ));
    }
    s
}

/// Writes `value` as pretty JSON to `path`.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}
