//! The host's transaction sources: `host.workload` picks one of the schema-aware
//! generators of the `workload` crate (TPC-C, TPC-B, TATP, synthetic records) or the
//! built-in `bank` test source, configured by its `[host.<name>]` section, or a page-access
//! trace recorded from a real DBMS (`trace`, `workload::pagetrace`).
//!
//! The engine treats every source alike (`workload::db::TxnSource`): an insert into an
//! occupied slot overwrites it, a delete of a free slot is a no-op (`data::Effect`), and a
//! transaction with `rollback` rolls back after its operations. The loaded database is what
//! the source's `loaded` says (`data::Layout::from_source`).

use crate::{HostConfig, HostError, Result};
use sim::Rng;
use std::sync::{Arc, Mutex};
use workload::db::{Rid, RowContent, Schema, TableId, TxnSource, TxnSpec};

/// The workloads `host.workload` accepts.
pub const WORKLOADS: &[&str] = &["bank", "tpcc", "tpcb", "tatp", "records", "trace"];

/// A generator's validation message names `workload.<name>.<key>`; in the host the key is
/// `host.<name>.<key>`.
fn gen_err(name: &str, what: String) -> HostError {
    let what = what.replace(&format!("workload.{name}"), &format!("host.{name}"));
    let key = what
        .split_whitespace()
        .next()
        .filter(|k| k.starts_with("host."))
        .map(|k| k.trim_end_matches(':').to_string())
        .unwrap_or_else(|| format!("host.{name}"));
    HostError::Config { key, reason: what }
}

/// Checks the selected workload's section (only that one: the others keep their defaults).
pub fn validate(cfg: &HostConfig) -> Result<()> {
    match cfg.workload.as_str() {
        "bank" => cfg.bank.validate(),
        "tpcc" => cfg.tpcc.validate().map_err(|e| gen_err("tpcc", e.what)),
        "tpcb" => cfg.tpcb.validate().map_err(|e| gen_err("tpcb", e.what)),
        "tatp" => cfg.tatp.validate().map_err(|e| gen_err("tatp", e.what)),
        "records" => cfg
            .records
            .validate()
            .map_err(|e| gen_err("records", e.what)),
        "trace" => trace_check(cfg),
        other => Err(HostError::Config {
            key: "host.workload".into(),
            reason: format!(
                "unknown host workload '{other}' (known: {})",
                WORKLOADS.join(", ")
            ),
        }),
    }
}

/// Builds the configured source. `seed` feeds generators that draw run constants (TPC-C's
/// NURand C values, TATP's).
pub fn build(cfg: &HostConfig, seed: u64) -> Result<Box<dyn TxnSource>> {
    validate(cfg)?;
    Ok(match cfg.workload.as_str() {
        "bank" => Box::new(crate::bank::Bank::new(cfg.bank.clone())?),
        "tpcc" => Box::new(
            workload::tpcc::Tpcc::new(&cfg.tpcc, seed).map_err(|e| gen_err("tpcc", e.what))?,
        ),
        "tpcb" => {
            Box::new(workload::tpcb::Tpcb::new(&cfg.tpcb).map_err(|e| gen_err("tpcb", e.what))?)
        }
        "tatp" => Box::new(
            workload::tatp::Tatp::new(&cfg.tatp, seed).map_err(|e| gen_err("tatp", e.what))?,
        ),
        "records" => Box::new(
            workload::records::Records::new(&cfg.records)
                .map_err(|e| gen_err("records", e.what))?,
        ),
        "trace" => Box::new(trace_source(cfg)?),
        _ => unreachable!("validated above"),
    })
}

/// The schema of the configured source: what `build(cfg, seed)?.schema()` is, without
/// reading a whole trace for it. A trace's relations come before its first transaction, so
/// only the trace's head is read (`pagetrace::read_relations`); its transactions, and
/// `host.transactions` against their number, are checked when the run builds the source.
/// Sizing a device for a trace replay (`engine::device_pages_needed`) thus reads the trace
/// once in all, not twice.
pub fn schema(cfg: &HostConfig, seed: u64) -> Result<workload::db::Schema> {
    validate(cfg)?;
    if cfg.workload == "trace" {
        let relations = workload::pagetrace::read_relations(&cfg.trace.path).map_err(|e| {
            HostError::Config {
                key: "host.trace.path".into(),
                reason: e.what,
            }
        })?;
        return Ok(workload::pagetrace::PageTrace::schema_of(&relations));
    }
    Ok(build(cfg, seed)?.schema().clone())
}

/// `host.workload = "trace"`: a trace file is named, and `host.transactions` does not ask
/// for more transactions than it holds (the file is read when the source is built).
fn trace_check(cfg: &HostConfig) -> Result<()> {
    if cfg.trace.path.is_empty() {
        return Err(HostError::Config {
            key: "host.trace.path".into(),
            reason: "host.workload = \"trace\" needs a trace file (run --host S --trace FILE)"
                .into(),
        });
    }
    Ok(())
}

fn trace_source(cfg: &HostConfig) -> Result<workload::pagetrace::TraceSource> {
    let src = workload::pagetrace::TraceSource::new(&cfg.trace).map_err(|e| HostError::Config {
        key: "host.trace.path".into(),
        reason: e.what,
    })?;
    let n = src.trace().txns.len() as u64;
    if cfg.transactions > n {
        return Err(HostError::Config {
            key: "host.transactions".into(),
            reason: format!(
                "{} transactions asked for, but the trace {} holds {n}; set host.transactions to at most {n}",
                cfg.transactions, cfg.trace.path
            ),
        });
    }
    Ok(src)
}

/// One call an engine made on its source (`Journaled`), in call order: the generator's
/// stream of transactions and its committed view are functions of these calls.
#[derive(Clone, Debug)]
pub enum GenEvent {
    /// `next_txn(client, rng)`, with the stream as it was before the call; the spec's token.
    Next { client: u32, rng: Rng, token: u64 },
    /// `bind(spec, i)` on the transaction with this token.
    Bind { token: u64, i: usize },
    /// `committed` of the transaction with this token.
    Committed { token: u64 },
    /// `ended` of the transaction with this token.
    Ended { token: u64 },
}

/// A source that keeps a journal of the calls made on it (`GenEvent`), for taking up its
/// committed view on a recovered database (`take_up`). Everything else is the wrapped
/// source's.
pub struct Journaled {
    inner: Box<dyn TxnSource>,
    log: Arc<Mutex<Vec<GenEvent>>>,
}

impl Journaled {
    /// `inner`, journaled into the returned log.
    pub fn new(inner: Box<dyn TxnSource>) -> (Journaled, Arc<Mutex<Vec<GenEvent>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        (
            Journaled {
                inner,
                log: log.clone(),
            },
            log,
        )
    }

    fn note(&self, e: GenEvent) {
        if let Ok(mut l) = self.log.lock() {
            l.push(e);
        }
    }
}

impl TxnSource for Journaled {
    fn schema(&self) -> &Schema {
        self.inner.schema()
    }
    fn next_txn(&mut self, client: u32, rng: &mut Rng) -> TxnSpec {
        let before = rng.clone();
        let spec = self.inner.next_txn(client, rng);
        self.note(GenEvent::Next {
            client,
            rng: before,
            token: spec.token,
        });
        spec
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn loaded(&self, rid: Rid) -> bool {
        self.inner.loaded(rid)
    }
    fn loaded_prefix(&self, table: TableId, page: u32) -> Option<u16> {
        self.inner.loaded_prefix(table, page)
    }
    fn remaining_txns(&self) -> Option<u64> {
        self.inner.remaining_txns()
    }
    fn consistency(&self, rows: &dyn Fn(TableId) -> Vec<(Rid, RowContent)>) -> Vec<String> {
        self.inner.consistency(rows)
    }
    fn has_consistency(&self) -> bool {
        self.inner.has_consistency()
    }
    fn bind(&mut self, spec: &mut TxnSpec, i: usize) {
        self.note(GenEvent::Bind {
            token: spec.token,
            i,
        });
        self.inner.bind(spec, i)
    }
    fn committed(&mut self, spec: &TxnSpec) {
        self.note(GenEvent::Committed { token: spec.token });
        self.inner.committed(spec)
    }
    fn ended(&mut self, spec: &TxnSpec) {
        self.note(GenEvent::Ended { token: spec.token });
        self.inner.ended(spec)
    }
}

/// The source a run on a recovered database continues with: `build(cfg, seed)` with the
/// crashed run's calls (`journal`, all of them, in order) replayed on it, where each commit
/// the recovered database holds (`durable`, their bound specs in commit order) is
/// committed and every other one ended, and every transaction still running at the end is
/// ended. Its committed view is then exactly the recovered database's — TPC-C's next order
/// ids, oldest undelivered orders, last orders, stock quantities and insert runs, the
/// values §2.4–§2.8 read at execution — and its insert runs keep every page and slot the
/// crashed run handed out (generations after the crash included: they only leave gaps). A transaction with token 0 keeps no state in its
/// source (`TxnSpec::token`), so only its generation is replayed. A replayed commit whose
/// operations differ from the recorded one (the view it was bound in is not the recovered
/// one) is an error, as is a commit of `durable` the journal never reaches.
pub fn take_up(
    cfg: &HostConfig,
    seed: u64,
    journal: &[GenEvent],
    durable: &[TxnSpec],
) -> std::result::Result<Box<dyn TxnSource>, String> {
    let mut src = build(cfg, seed).map_err(|e| e.to_string())?;
    let keep: std::collections::BTreeMap<u64, &TxnSpec> = durable
        .iter()
        .filter(|s| s.token != 0)
        .map(|s| (s.token, s))
        .collect();
    let mut running: std::collections::BTreeMap<u64, TxnSpec> = Default::default();
    let mut taken = 0usize;
    for e in journal {
        match e {
            GenEvent::Next { client, rng, token } => {
                let spec = src.next_txn(*client, &mut rng.clone());
                if spec.token != *token {
                    return Err(format!(
                        "taking up the source: the replayed generation gave token {}, the run {token}",
                        spec.token
                    ));
                }
                if spec.token != 0 {
                    running.insert(spec.token, spec);
                }
            }
            GenEvent::Bind { token, i } => {
                if let Some(spec) = running.get_mut(token) {
                    src.bind(spec, *i);
                }
            }
            GenEvent::Committed { token } | GenEvent::Ended { token } => {
                let Some(spec) = running.remove(token) else {
                    continue;
                };
                match keep.get(token) {
                    Some(want) if matches!(e, GenEvent::Committed { .. }) => {
                        if spec.ops != want.ops {
                            return Err(format!(
                                "taking up the source: replayed transaction {token} binds other operations than the run's (a commit before it is not in the recovered database)"
                            ));
                        }
                        src.committed(&spec);
                        taken += 1;
                    }
                    _ => src.ended(&spec),
                }
            }
        }
    }
    for spec in running.values() {
        src.ended(spec);
    }
    if taken != keep.len() {
        return Err(format!(
            "taking up the source: {taken} of the {} recovered commits are in the journal",
            keep.len()
        ));
    }
    Ok(src)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizing a device for a trace replay reads the trace's head only (its relations), so
    /// the whole trace is parsed once per run, by the run: a trace whose transactions are
    /// malformed still gives the database's size (the run refuses it, naming the line).
    #[test]
    fn the_schema_of_a_trace_reads_its_head_only() {
        let dir = std::env::temp_dir().join(format!("commitlab-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let head = "commitlab-pagetrace 1\nrel 0 t heap 10\nrel 1 t_pkey index 3\n";
        let body = "txn 1 new-order\nr 1 0 2\nw 1 1 0 40\ncommit 1\n";
        let good = dir.join("good.trace");
        let bad = dir.join("bad.trace");
        std::fs::write(&good, format!("{head}{body}")).unwrap();
        std::fs::write(&bad, format!("{head}{body}r 9 0 0\n")).unwrap();
        let cfg = |p: &std::path::Path| HostConfig {
            workload: "trace".into(),
            trace: workload::pagetrace::PageTraceConfig {
                path: p.to_str().unwrap().into(),
            },
            transactions: 1,
            ..HostConfig::default()
        };
        let built = build(&cfg(&good), 1).unwrap();
        assert_eq!(schema(&cfg(&good), 1).unwrap(), *built.schema());
        assert_eq!(schema(&cfg(&bad), 1).unwrap(), *built.schema());
        assert_eq!(schema(&cfg(&good), 1).unwrap().pages_max(), 13);
        let need = crate::engine::device_pages_needed(&cfg(&bad), 2048, 1).unwrap();
        assert_eq!(
            need,
            crate::engine::device_pages_needed(&cfg(&good), 2048, 1).unwrap()
        );
        let e = build(&cfg(&bad), 1)
            .err()
            .expect("a malformed body is refused");
        assert!(
            e.to_string()
                .contains("bad.trace:8: transaction 9 has not begun"),
            "{e}"
        );
        // Generators: the schema is the built source's.
        let t = HostConfig {
            workload: "tpcb".into(),
            ..HostConfig::default()
        };
        assert_eq!(schema(&t, 3).unwrap(), *build(&t, 3).unwrap().schema());
        std::fs::remove_dir_all(&dir).ok();
    }
}
