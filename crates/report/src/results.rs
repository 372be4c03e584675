//! One output schema for every experiment point (`compare`, `sweep`, the Python bindings):
//! a [`Record`] per point. JSON, CSV and the text table are all rendered from it, so a column
//! means the same thing everywhere ("one output schema").
//!
//! Invariants:
//! - units are the ones the column names say: `_ns` columns hold nanoseconds, `_bytes`
//!   columns bytes, `_per_s` rates per simulated second; only the text table converts to
//!   milliseconds and KiB for people, and its headers say so;
//! - every record carries its full effective configuration and seed, and a `status` with a
//!   `reason` when the point did not run as configured (`adapted`) or not at all
//!   (`unsupported`, `error`); metric fields of a point that did not run are empty (CSV) or
//!   `null` (JSON), never zero;
//! - swept keys become leading columns, in the order they were given.
//!
//! What it does not do: decide what to run (see `commitlab-study`), or plot.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use world::{Config, RunMetrics};

/// How a point ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ran exactly as configured.
    Ok,
    /// Ran with a change the protocol needed (an isolation level it supports, no aborts for
    /// a protocol without atomicity); `reason` says what changed, `config` is what ran.
    Adapted,
    /// The protocol cannot run this configuration; `reason` says why.
    Unsupported,
    /// The run failed (bad input found only while running, out of space, ...).
    Error,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Adapted => "adapted",
            Status::Unsupported => "unsupported",
            Status::Error => "error",
        }
    }
    /// Whether the point produced metrics.
    pub fn ran(self) -> bool {
        matches!(self, Status::Ok | Status::Adapted)
    }
}

/// The flat part of a record: one CSV row, one table row, and the top-level JSON fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Row {
    pub protocol: String,
    pub status: String,
    pub reason: String,
    pub seed: u64,
    pub workload: String,
    /// The isolation level of a transactional workload ("" otherwise).
    pub isolation: String,
    pub committed: Option<u64>,
    pub aborted: Option<u64>,
    pub throughput_per_s: Option<f64>,
    pub commit_latency_ns_mean: Option<f64>,
    pub commit_latency_ns_p99: Option<u64>,
    pub write_amplification: Option<f64>,
    pub host_page_writes: Option<u64>,
    pub host_requests: Option<u64>,
    pub requests_per_s: Option<f64>,
    pub latency_ns_p99: Option<u64>,
    pub nand_programs: Option<u64>,
    pub nand_partial_programs: Option<u64>,
    pub nand_erases: Option<u64>,
    pub gc_page_migrations: Option<u64>,
    pub gc_time_ns: Option<u64>,
    pub commit_record_writes: Option<u64>,
    pub map_persist_writes: Option<u64>,
    pub recovery_time_ns: Option<u64>,
    pub dram_bytes_total: Option<u64>,
    pub sim_time_ns: Option<u64>,
    /// Wall-clock seconds the point took (the only non-deterministic column).
    pub wall_time_s: Option<f64>,
}

/// One experiment point: what was swept, the flat row, the configuration that ran and, if it
/// ran, every metric.
#[derive(Clone, Debug)]
pub struct Record {
    /// Swept keys and the values this point has, in the order the sweep named them.
    pub swept: Vec<(String, toml::Value)>,
    pub row: Row,
    pub config: Config,
    pub metrics: Option<RunMetrics>,
}

fn isolation_of(cfg: &Config) -> String {
    match cfg.workload.kind {
        world::WorkloadKind::Txn => {
            let v = toml::Value::try_from(cfg.workload.txn.isolation).ok();
            v.and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// Whether the workload issues transactions (BEGIN/COMMIT/ABORT). Page-level synthetic
/// requests and block traces do not: their transaction columns are "n/a", not 0 (`tx/s 0.0`
/// for every protocol would read as a result).
fn transactional(cfg: &Config) -> bool {
    match cfg.workload.kind {
        world::WorkloadKind::Txn | world::WorkloadKind::Seqwriter | world::WorkloadKind::Host => {
            true
        }
        world::WorkloadKind::Synthetic => false,
        world::WorkloadKind::Trace => cfg.workload.trace.format == world::config::TraceFormat::Txn,
    }
}

impl Record {
    /// A point that ran.
    pub fn ran(config: Config, status: Status, reason: String, m: RunMetrics) -> Record {
        let tx = transactional(&config);
        let t = |v| if tx { Some(v) } else { None };
        let row = Row {
            protocol: m.protocol.clone(),
            status: status.name().into(),
            reason,
            seed: m.seed,
            workload: m.workload.clone(),
            isolation: isolation_of(&config),
            committed: t(m.txs_committed),
            aborted: t(m.txs_aborted),
            throughput_per_s: tx.then_some(m.tx_throughput_per_s),
            commit_latency_ns_mean: tx.then_some(m.commit_latency_ns.mean),
            commit_latency_ns_p99: t(m.commit_latency_ns.p99),
            write_amplification: Some(m.write_amplification),
            host_page_writes: Some(m.host_writes),
            host_requests: Some(m.host_requests),
            requests_per_s: Some(m.requests_per_s),
            latency_ns_p99: Some(m.latency_ns.p99),
            nand_programs: Some(m.nand_programs),
            nand_partial_programs: Some(m.nand_partial_programs),
            nand_erases: Some(m.nand_erases),
            gc_page_migrations: Some(m.gc_page_migrations),
            gc_time_ns: Some(m.gc_time_ns),
            commit_record_writes: Some(m.commit_record_writes),
            map_persist_writes: Some(m.map_persist_writes),
            recovery_time_ns: m.recovery.as_ref().map(|r| r.time_ns),
            dram_bytes_total: Some(m.dram_bytes_total),
            sim_time_ns: Some(m.sim_time_ns),
            wall_time_s: Some(m.wall_time_s),
        };
        Record {
            swept: Vec::new(),
            row,
            config,
            metrics: Some(m),
        }
    }

    /// A DBMS host point that ran (`workload.kind = "host"`: compare and sweep across
    /// host strategies and protocols). The row holds what the host measures in the
    /// shared columns (transactions, throughput, commit latency, NAND work, GC time,
    /// recovery); device-level columns the host run does not report (write amplification,
    /// host requests, DRAM) stay empty rather than 0. `metrics` is `None`: the host's own
    /// metrics are in `commitlab run --host … --json`.
    pub fn ran_host(
        config: Config,
        status: Status,
        reason: String,
        m: &world::host_run::HostMetrics,
    ) -> Record {
        let row = Row {
            protocol: m.protocol.clone(),
            status: status.name().into(),
            reason,
            seed: config.seed,
            workload: format!("{} ({})", m.workload, m.strategy),
            isolation: m.lock_level.clone(),
            committed: Some(m.txns_committed),
            aborted: Some(m.txns_aborted),
            throughput_per_s: Some(m.throughput_per_s),
            commit_latency_ns_mean: Some(m.commit_latency_ns.mean),
            commit_latency_ns_p99: Some(m.commit_latency_ns.p99),
            nand_programs: Some(m.nand_programs),
            nand_partial_programs: Some(m.nand_partial_programs),
            nand_erases: Some(m.nand_erases),
            gc_time_ns: Some(m.gc_time_ns),
            recovery_time_ns: m.recovery.as_ref().map(|r| r.time_ns),
            sim_time_ns: Some(m.sim_time_ns),
            wall_time_s: Some(m.wall_time_s),
            ..Row::default()
        };
        Record {
            swept: Vec::new(),
            row,
            config,
            metrics: None,
        }
    }

    /// A point that did not run.
    pub fn failed(config: Config, status: Status, reason: String) -> Record {
        let row = Row {
            protocol: config.protocol.name.clone(),
            status: status.name().into(),
            reason,
            seed: config.seed,
            workload: config.workload.kind_name(),
            isolation: isolation_of(&config),
            ..Row::default()
        };
        Record {
            swept: Vec::new(),
            row,
            config,
            metrics: None,
        }
    }

    pub fn status(&self) -> &str {
        &self.row.status
    }
}

/// A swept value as a cell: strings without TOML quotes, everything else as TOML.
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

struct Swept<'a>(&'a [(String, toml::Value)]);

impl Serialize for Swept<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for Record {
    /// JSON: the swept values under `swept` (typed, in sweep order), the row's fields at the
    /// top level, then `config` and `metrics` (null for a point that did not run).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let row = serde_json::to_value(&self.row).map_err(serde::ser::Error::custom)?;
        let serde_json::Value::Object(fields) = row else {
            return Err(serde::ser::Error::custom("row is not an object"));
        };
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("swept", &Swept(&self.swept))?;
        // The row's fields in declaration order (serde_json's map is sorted; take the order
        // from the CSV header, which serde gives in declaration order).
        for name in row_columns() {
            if let Some(v) = fields.get(&name) {
                m.serialize_entry(&name, v)?;
            }
        }
        m.serialize_entry("config", &self.config)?;
        m.serialize_entry("metrics", &self.metrics)?;
        m.end()
    }
}

/// The row's column names in declaration order, as serde (and therefore CSV) names them.
pub fn row_columns() -> Vec<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if w.serialize(Row::default()).is_err() {
        return Vec::new();
    }
    let bytes = w.into_inner().unwrap_or_default();
    let mut r = csv::Reader::from_reader(bytes.as_slice());
    r.headers()
        .map(|h| h.iter().map(String::from).collect())
        .unwrap_or_default()
}

/// The records as CSV: swept keys first (one column each, named by the key), then the row's
/// columns, then `config_json` (the full effective configuration, as compact JSON).
pub fn to_csv(records: &[Record]) -> Result<String, String> {
    let swept_keys: Vec<String> = records
        .first()
        .map(|r| r.swept.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    // serde names and formats the row's cells; this only prepends and appends columns.
    let mut inner = csv::Writer::from_writer(Vec::new());
    for r in records {
        inner.serialize(&r.row).map_err(|e| e.to_string())?;
    }
    let bytes = inner.into_inner().map_err(|e| e.to_string())?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes.as_slice());
    let mut out = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = swept_keys.clone();
    header.extend(row_columns());
    header.push("config_json".into());
    out.write_record(&header).map_err(|e| e.to_string())?;
    let mut rows = reader.records();
    if !records.is_empty() {
        rows.next(); // the inner header
    }
    for (r, cells) in records.iter().zip(rows) {
        let cells = cells.map_err(|e| e.to_string())?;
        let mut rec: Vec<String> = swept_keys
            .iter()
            .map(|k| {
                r.swept
                    .iter()
                    .find(|(kk, _)| kk == k)
                    .map_or(String::new(), |(_, v)| value_text(v))
            })
            .collect();
        rec.extend(cells.iter().map(String::from));
        rec.push(serde_json::to_string(&r.config).map_err(|e| e.to_string())?);
        out.write_record(&rec).map_err(|e| e.to_string())?;
    }
    String::from_utf8(out.into_inner().map_err(|e| e.to_string())?).map_err(|e| e.to_string())
}

/// The records as pretty JSON (an array).
pub fn to_json(records: &[Record]) -> Result<String, String> {
    serde_json::to_string_pretty(records)
        .map(|s| s + "\n")
        .map_err(|e| e.to_string())
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "n/a".to_string(), f)
}

/// What the table's units mean, printed under it.
pub const TABLE_LEGEND: &str = "sim: on the simulated clock (the device's time, not wall time). GC %: GC's busy time as a\nshare of all planes' time (gc_time_ns / (sim_time_ns x planes)). Adapted rows ran a changed\nconfiguration (reason above) and follow the rows that ran as configured. Which protocol for\nwhat: docs/PROTOCOLS.md\n";

/// The order of a status in the table: as configured, adapted, then points that did not run.
fn status_rank(status: &str) -> u8 {
    match status {
        "ok" => 0,
        "adapted" => 1,
        "unsupported" => 2,
        _ => 3,
    }
}

/// GC's busy time as a share of the planes' time: GC time is summed over planes (two
/// planes collecting at once count twice), so against the run's simulated time alone it can
/// exceed 100 %.
fn gc_share_of_plane_time(w: &Row, cfg: &Config) -> Option<f64> {
    let planes = u64::from(cfg.nand.geometry().pus());
    match (w.gc_time_ns, w.sim_time_ns) {
        (Some(gc), Some(t)) if t > 0 && planes > 0 => Some(gc as f64 / (t as f64 * planes as f64)),
        _ => None,
    }
}

/// The records as a text table for people: swept keys, protocol and status first, then
/// committed/aborted transactions, tx/s, commit latency and write amplification; times in
/// ms and memory in KiB, simulated quantities marked "sim" (the headers say so), GC as a
/// share of plane time. Rows that ran as configured come first, then adapted rows, then
/// points that did not run, each group in run order. Reasons and the legend follow.
pub fn table(records: &[Record]) -> String {
    let swept_keys: Vec<String> = records
        .first()
        .map(|r| r.swept.iter().map(|(k, _)| k.clone()).collect())
        .unwrap_or_default();
    let mut head: Vec<String> = swept_keys.clone();
    head.extend(
        [
            "protocol",
            "status",
            "committed",
            "aborted",
            "tx/s sim",
            "commit ms sim",
            "commit p99 ms sim",
            "WA",
            "host writes",
            "programs",
            "erases",
            "gc migr",
            "GC %",
            "recovery ms sim",
            "DRAM KiB",
        ]
        .map(String::from),
    );
    let ms = |ns: f64| format!("{:.3}", ns / 1e6);
    let mut t = crate::Table::new(head.iter().map(String::as_str).collect());
    let mut ordered: Vec<&Record> = records.iter().collect();
    ordered.sort_by_key(|r| status_rank(&r.row.status));
    for r in ordered {
        let w = &r.row;
        let mut cells: Vec<String> = r.swept.iter().map(|(_, v)| value_text(v)).collect();
        cells.extend([
            w.protocol.clone(),
            w.status.clone(),
            opt(w.committed, |v| v.to_string()),
            opt(w.aborted, |v| v.to_string()),
            opt(w.throughput_per_s, |v| format!("{v:.1}")),
            opt(w.commit_latency_ns_mean, ms),
            opt(w.commit_latency_ns_p99, |v| ms(v as f64)),
            opt(w.write_amplification, |v| format!("{v:.3}")),
            opt(w.host_page_writes, |v| v.to_string()),
            opt(w.nand_programs, |v| v.to_string()),
            opt(w.nand_erases, |v| v.to_string()),
            opt(w.gc_page_migrations, |v| v.to_string()),
            opt(gc_share_of_plane_time(w, &r.config), |v| {
                format!("{:.1}", v * 100.0)
            }),
            opt(w.recovery_time_ns, |v| ms(v as f64)),
            opt(w.dram_bytes_total, |v| format!("{:.0}", v as f64 / 1024.0)),
        ]);
        t.row(cells);
    }
    let mut s = t.render();
    for r in records.iter().filter(|r| !r.row.reason.is_empty()) {
        let point: Vec<String> = r
            .swept
            .iter()
            .map(|(k, v)| format!("{k}={}", value_text(v)))
            .collect();
        let at = if point.is_empty() {
            String::new()
        } else {
            format!(" [{}]", point.join(" "))
        };
        s.push_str(&format!(
            "{}{at} {}: {}\n",
            r.row.protocol, r.row.status, r.row.reason
        ));
    }
    if !records.is_empty() {
        s.push_str(TABLE_LEGEND);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics(protocol: &str) -> RunMetrics {
        let mut m = RunMetrics {
            protocol: protocol.into(),
            seed: 7,
            workload: "txn".into(),
            txs_committed: 950,
            txs_aborted: 50,
            gc_time_ns: 2_500_000,
            dram_bytes_total: 4096,
            write_amplification: 1.5,
            host_writes: 1234,
            ..RunMetrics::default()
        };
        m.commit_latency_ns.mean = 1_500_000.0;
        m.latency_ns.p99 = 3_000_000;
        m.recovery = Some(world::metrics::RecoveryMetrics {
            time_ns: 9_000_000,
            ..Default::default()
        });
        m
    }

    /// A page-level workload showed `tx/s 0.0` for every protocol.
    #[test]
    fn transaction_columns_are_na_for_page_level_workloads() {
        let cfg = Config::default(); // synthetic page requests
        let r = Record::ran(cfg, Status::Ok, String::new(), metrics("tc"));
        assert_eq!(r.row.committed, None);
        assert_eq!(r.row.throughput_per_s, None);
        assert_eq!(r.row.write_amplification, Some(1.5));
        let t = table(&[r]);
        assert!(t.lines().nth(2).unwrap().contains("n/a"), "{t}");
    }

    fn sample() -> Vec<Record> {
        let mut cfg = Config::default();
        cfg.workload.kind = world::WorkloadKind::Txn;
        cfg.protocol.name = "tc".into();
        let ok = Record::ran(cfg.clone(), Status::Ok, String::new(), metrics("tc"));
        cfg.protocol.name = "aw".into();
        let no = Record::failed(cfg, Status::Unsupported, "no, because".into());
        vec![ok, no]
    }

    /// The CSV's `_ns` columns held milliseconds and
    /// `dram_bytes_total` KiB. Each column must hold the unit its name says.
    #[test]
    fn csv_units_match_column_names() {
        let text = to_csv(&sample()).unwrap();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let h = r.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        let col = |name: &str| h.iter().position(|c| c == name).unwrap();
        assert_eq!(&rows[0][col("gc_time_ns")], "2500000");
        assert_eq!(&rows[0][col("commit_latency_ns_mean")], "1500000.0");
        assert_eq!(&rows[0][col("latency_ns_p99")], "3000000");
        assert_eq!(&rows[0][col("recovery_time_ns")], "9000000");
        assert_eq!(&rows[0][col("dram_bytes_total")], "4096");
        assert_eq!(&rows[0][col("committed")], "950");
        assert_eq!(&rows[0][col("aborted")], "50");
        assert_eq!(&rows[0][col("host_page_writes")], "1234");
        // A point that did not run has empty metrics, a status and a reason.
        assert_eq!(&rows[1][col("status")], "unsupported");
        assert_eq!(&rows[1][col("reason")], "no, because");
        assert_eq!(&rows[1][col("committed")], "");
        // The full configuration rides along.
        let cfg: serde_json::Value = serde_json::from_str(&rows[1][col("config_json")]).unwrap();
        assert_eq!(cfg["protocol"]["name"], "aw");
        assert_eq!(&rows[1][col("seed")], "1");
    }

    /// The JSON dropped protocols that could not run and did not record
    /// the configuration.
    #[test]
    fn json_keeps_failed_points_and_the_configuration() {
        let v: serde_json::Value = serde_json::from_str(&to_json(&sample()).unwrap()).unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[0]["status"], "ok");
        assert_eq!(a[0]["metrics"]["gc_time_ns"], 2_500_000);
        assert_eq!(a[0]["gc_time_ns"], 2_500_000);
        assert_eq!(a[1]["status"], "unsupported");
        assert_eq!(a[1]["reason"], "no, because");
        assert!(a[1]["metrics"].is_null());
        assert!(a[1]["committed"].is_null());
        assert_eq!(a[1]["config"]["protocol"]["name"], "aw");
        assert_eq!(a[1]["config"]["nand"]["page_bytes"], 4096);
    }

    /// One vocabulary for device and host records: a device run's metrics JSON names its
    /// transaction counts and rate as a host run's and as the record's columns do
    /// (`committed`, `aborted`, `throughput_per_s`), never `txs_*` / `tx_throughput_per_s`.
    #[test]
    fn device_metrics_use_the_record_vocabulary() {
        let v = serde_json::to_value(metrics("tc")).unwrap();
        let o = v.as_object().unwrap();
        for k in [
            "committed",
            "aborted",
            "throughput_per_s",
            "completed_per_s",
        ] {
            assert!(o.contains_key(k), "{k} missing from {:?}", o.keys());
        }
        for k in o.keys() {
            assert!(!k.starts_with("txs_") && !k.starts_with("tx_"), "{k}");
        }
        let row = serde_json::to_value(&sample()[0].row).unwrap();
        assert_eq!(row["committed"], v["committed"]);
        assert_eq!(row["aborted"], v["aborted"]);
    }

    #[test]
    fn swept_keys_are_leading_columns_in_order() {
        let mut recs = sample();
        for (i, r) in recs.iter_mut().enumerate() {
            r.swept = vec![
                ("ftl.gc_policy".into(), toml::Value::String("greedy".into())),
                ("nand.channels".into(), toml::Value::Integer(i as i64 + 2)),
            ];
        }
        let text = to_csv(&recs).unwrap();
        let first = text.lines().next().unwrap();
        assert!(
            first.starts_with("ftl.gc_policy,nand.channels,protocol,status"),
            "{first}"
        );
        assert!(text.lines().nth(2).unwrap().starts_with("greedy,3,aw"));
        let v: serde_json::Value = serde_json::from_str(&to_json(&recs).unwrap()).unwrap();
        assert_eq!(v[1]["swept"]["nand.channels"], 3);
        let t = table(&recs);
        assert!(t.contains("nand.channels"), "{t}");
        assert!(t.contains("aw [ftl.gc_policy=greedy nand.channels=3] unsupported: no, because"));
    }

    #[test]
    fn table_marks_simulated_units_gc_per_plane_and_puts_adapted_rows_after() {
        let mut recs = sample();
        let mut m = metrics("none");
        m.sim_time_ns = 1_000_000_000;
        m.gc_time_ns = 3_000_000_000; // three planes' seconds: more than the run's time
        let cfg = Config::default();
        let planes = f64::from(cfg.nand.geometry().pus());
        recs.insert(0, Record::ran(cfg, Status::Adapted, "no aborts".into(), m));
        let t = table(&recs);
        let head = t.lines().next().unwrap();
        assert!(
            head.contains("tx/s sim") && head.contains("commit ms sim"),
            "{head}"
        );
        assert!(head.contains("GC %") && !head.contains("gc ms"), "{head}");
        let lines: Vec<&str> = t.lines().collect();
        let none = lines.iter().position(|l| l.starts_with("none")).unwrap();
        let first_ok = lines.iter().position(|l| l.contains(" ok ")).unwrap();
        assert!(first_ok < none, "adapted row first:\n{t}");
        let share = format!("{:.1}", 300.0 / planes);
        assert!(lines[none].contains(&share), "{share} in {}", lines[none]);
        assert!(t.contains("docs/PROTOCOLS.md"), "{t}");
    }

    #[test]
    fn table_leads_with_transactions_and_shows_na_for_missing() {
        let t = table(&sample());
        let head = t.lines().next().unwrap();
        let order = ["committed", "aborted", "tx/s", "commit ms", "WA"];
        let pos: Vec<usize> = order.iter().map(|c| head.find(c).unwrap()).collect();
        assert!(pos.windows(2).all(|w| w[0] < w[1]), "{head}");
        let aw = t.lines().find(|l| l.starts_with("aw")).unwrap();
        assert!(aw.contains("n/a"), "{aw}");
        assert!(!aw.contains(" 0 "), "{aw}");
    }
}
