//! `commitlab trace-stats --trace F`: what a recorded page-access trace looks like next to
//! the generator's TPC-C (`host.tpcc`, the same number of transactions): transactions by
//! type, pages per transaction, reads against writes, and how concentrated the accesses
//! are on hot pages (`workload::pagetrace::TraceStats`). The generator's transactions are
//! drawn serially (`workload::db::next_serial`), client by client as the host's clients
//! would start them.

use crate::{bad, load, ConfigArgs, Fail};
use std::path::PathBuf;
use workload::db::TxnSource;
use workload::pagetrace::{PageTrace, TraceStats};

pub(crate) fn cmd_trace_stats(
    a: &ConfigArgs,
    trace: &PathBuf,
    json: &Option<PathBuf>,
) -> Result<(), Fail> {
    let cfg = load(a, None, &[])?;
    let path = trace.display().to_string();
    let t: PageTrace = workload::pagetrace::read(&path).map_err(bad)?;
    let specs: Vec<_> = (0..t.txns.len()).map(|k| t.spec(k)).collect();
    let recorded = TraceStats::of(&t.schema(), &specs);
    let mut gen = workload::tpcc::Tpcc::new(&cfg.host.tpcc, cfg.seed)
        .map_err(|e| bad(format!("host.tpcc: {}", e.what)))?;
    let mut rng = sim::Rng::new(cfg.seed).fork("trace-stats");
    let clients = cfg.host.clients.max(1);
    let gen_specs: Vec<_> = (0..t.txns.len() as u64)
        .map(|k| workload::db::next_serial(&mut gen, (k % clients as u64) as u32, &mut rng))
        .collect();
    let generated = TraceStats::of(gen.schema(), &gen_specs);
    let heads = [
        format!("trace {path}"),
        format!("generator TPC-C, {} warehouse(s)", cfg.host.tpcc.warehouses),
    ];
    print_side_by_side(&heads, &[&recorded, &generated]);
    crate::write_json(
        json,
        &serde_json::json!({ "trace": recorded, "generator_tpcc": generated }),
    )
}

fn print_side_by_side(heads: &[String; 2], s: &[&TraceStats; 2]) {
    let row = |name: &str, f: &dyn Fn(&TraceStats) -> String| {
        println!("{name:<38} {:>16} {:>16}", f(s[0]), f(s[1]));
    };
    println!("{:<38} {:>16} {:>16}", "", "trace", "generator");
    println!("# trace: {}", heads[0]);
    println!("# generator: {}", heads[1]);
    row("transactions", &|x| x.transactions.to_string());
    row("rolled back / aborted", &|x| x.aborted.to_string());
    row("database pages (8 KiB)", &|x| x.pages_database.to_string());
    row("pages touched", &|x| x.pages_touched.to_string());
    row("page accesses", &|x| x.page_accesses.to_string());
    row("reads : writes", &|x| {
        format!("{:.2}", x.reads as f64 / x.writes.max(1) as f64)
    });
    row("distinct pages per txn, mean", &|x| {
        format!("{:.1}", x.pages_per_txn_mean)
    });
    row("distinct pages per txn, p50", &|x| {
        x.pages_per_txn_p50.to_string()
    });
    row("distinct pages per txn, p99", &|x| {
        x.pages_per_txn_p99.to_string()
    });
    row("pages written per txn, mean", &|x| {
        format!("{:.1}", x.pages_written_per_txn_mean)
    });
    row("pages written per txn, max", &|x| {
        x.pages_written_per_txn_max.to_string()
    });
    row("accesses to hottest 1 % of pages", &|x| {
        format!("{:.1} %", 100.0 * x.hot_1pct_share)
    });
    row("accesses to hottest 10 % of pages", &|x| {
        format!("{:.1} %", 100.0 * x.hot_10pct_share)
    });
    row("writes to hottest 1 % written pages", &|x| {
        format!("{:.1} %", 100.0 * x.hot_write_1pct_share)
    });
    let mut kinds: Vec<String> = Vec::new();
    for x in s {
        for k in &x.by_kind {
            if !kinds.contains(&k.0) {
                kinds.push(k.0.clone());
            }
        }
    }
    for k in &kinds {
        let find = |x: &TraceStats| x.by_kind.iter().find(|b| &b.0 == k).cloned();
        row(&format!("{k}: share of txns"), &|x| match find(x) {
            Some(b) => format!("{:.1} %", 100.0 * b.1 as f64 / x.transactions.max(1) as f64),
            None => "-".into(),
        });
        row(
            &format!("{k}: pages / written per txn"),
            &|x| match find(x) {
                Some(b) => format!("{:.1} / {:.1}", b.2, b.3),
                None => "-".into(),
            },
        );
    }
}
