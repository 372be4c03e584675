//! A synthetic record workload for tests and tiny crash checks: one table of `records`
//! fixed-size records; each transaction reads `reads_per_txn` records and updates
//! `updates_per_txn` records chosen from a uniform, hot/cold, zipfian or sequential
//! distribution (`address::Addresses`).
//!
//! Record layout: `COUNTER` (bytes 0..8, a little-endian i64) and `PAYLOAD` (the rest). An
//! update adds 1 to the counter (`FieldOp::AddI64`) and overwrites the first
//! `update_bytes` bytes of the payload with seeded bytes (`FieldOp::Fill`), so a checker
//! can verify that Σ COUNTER over the database equals the number of committed updates.
//! With `distinct` the records of one transaction are all different; with `sorted` they
//! are accessed in record order (no deadlocks between transactions that only update).
//! δ (`delta_abort`) makes a fraction of transactions roll back after their operations.
//! No inserts or deletes: every slot is loaded.

use crate::address::{AddressKind, Addresses};
use crate::btree::{fields, heap_records_per_page, Heap};
use crate::db::{
    Change, Changes, FieldOp, RecOp, Rid, Schema, TableId, TxnSource, TxnSpec, DB_PAGE_BYTES,
};
use crate::{werr, WorkloadError};
use serde::{Deserialize, Serialize};
use sim::Rng;

pub const COUNTER: u16 = 0;
pub const PAYLOAD: u16 = 8;
pub const TABLE: TableId = TableId(0);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecordsConfig {
    pub records: u64,
    pub record_bytes: u16,
    pub reads_per_txn: u32,
    pub updates_per_txn: u32,
    /// Payload bytes each update overwrites (0: only the counter changes).
    pub update_bytes: u16,
    pub address: AddressKind,
    pub zipf_theta: f64,
    pub hot_fraction: f64,
    pub hot_access: f64,
    pub distinct: bool,
    pub sorted: bool,
    pub delta_abort: f64,
}

impl Default for RecordsConfig {
    fn default() -> Self {
        RecordsConfig {
            records: 10_000,
            record_bytes: 100,
            reads_per_txn: 0,
            updates_per_txn: 4,
            update_bytes: 8,
            address: AddressKind::Uniform,
            zipf_theta: 0.99,
            hot_fraction: 0.2,
            hot_access: 0.8,
            distinct: true,
            sorted: false,
            delta_abort: 0.0,
        }
    }
}

/// Most operations one transaction may have.
pub const OPS_MAX: u32 = 10_000;

impl RecordsConfig {
    pub fn validate(&self) -> Result<(), WorkloadError> {
        let k = "workload.records";
        if self.records == 0 || self.records > 1 << 36 {
            return Err(werr(format!(
                "{k}.records must be in [1, 2^36], got {}",
                self.records
            )));
        }
        if self.record_bytes < PAYLOAD || heap_records_per_page(self.record_bytes) == 0 {
            return Err(werr(format!(
                "{k}.record_bytes must be in [{PAYLOAD}, {}], got {}",
                DB_PAGE_BYTES - 28,
                self.record_bytes
            )));
        }
        if self.update_bytes > self.record_bytes - PAYLOAD {
            return Err(werr(format!(
                "{k}.update_bytes must be at most record_bytes − {PAYLOAD} = {}, got {}",
                self.record_bytes - PAYLOAD,
                self.update_bytes
            )));
        }
        let ops = u64::from(self.reads_per_txn) + u64::from(self.updates_per_txn);
        if ops == 0 || ops > u64::from(OPS_MAX) {
            return Err(werr(format!(
                "{k}.reads_per_txn + updates_per_txn must be in [1, {OPS_MAX}], got {ops}"
            )));
        }
        if self.distinct && ops > self.records {
            return Err(werr(format!(
                "{k}.distinct needs reads_per_txn + updates_per_txn ≤ records ({ops} > {})",
                self.records
            )));
        }
        if self.address == AddressKind::Zipf && !(self.zipf_theta > 0.0 && self.zipf_theta < 1.0) {
            return Err(werr(format!(
                "{k}.zipf_theta must be in (0, 1), got {}",
                self.zipf_theta
            )));
        }
        if !(0.0..=1.0).contains(&self.hot_fraction) || !(0.0..=1.0).contains(&self.hot_access) {
            return Err(werr(format!(
                "{k}.hot_fraction and {k}.hot_access must be in [0, 1]"
            )));
        }
        if !(0.0..=0.5).contains(&self.delta_abort) {
            return Err(werr(format!(
                "{k}.delta_abort must be in [0, 0.5], got {}",
                self.delta_abort
            )));
        }
        Ok(())
    }
}

pub struct Records {
    cfg: RecordsConfig,
    schema: Schema,
    heap: Heap,
    addr: Addresses,
    picked: Vec<u64>,
}

impl Records {
    pub fn new(cfg: &RecordsConfig) -> Result<Records, WorkloadError> {
        cfg.validate()?;
        let (heap, mut def) = Heap::build(TABLE, "records", cfg.record_bytes, cfg.records, 1, 0)
            .map_err(|s| werr(format!("workload.records: {s}")))?;
        def.fields = fields(&[
            ("COUNTER", COUNTER, 8),
            ("PAYLOAD", PAYLOAD, cfg.record_bytes - PAYLOAD),
        ]);
        let schema = Schema {
            name: "records",
            page_bytes: DB_PAGE_BYTES,
            tables: vec![def],
        };
        schema.validate()?;
        let addr = Addresses::new(
            cfg.address,
            cfg.records,
            cfg.hot_fraction,
            cfg.hot_access,
            cfg.zipf_theta,
        )
        .map_err(|e| werr(format!("workload.records: {e}")))?;
        Ok(Records {
            cfg: cfg.clone(),
            schema,
            heap,
            addr,
            picked: Vec::new(),
        })
    }

    /// The record behind a rid (tests and checkers).
    pub fn record_of(&self, rid: Rid) -> u64 {
        u64::from(rid.page) * u64::from(self.schema.tables[0].records_per_page)
            + u64::from(rid.slot)
    }

    fn pick(&mut self, rng: &mut Rng) -> u64 {
        let mut r = self.addr.next(rng, 1);
        if self.cfg.distinct {
            let mut tries = 0;
            while self.picked.contains(&r) {
                tries += 1;
                r = if tries < 32 {
                    self.addr.next(rng, 1)
                } else {
                    (r + 1) % self.cfg.records // skewed and nearly exhausted: walk on
                };
            }
        }
        self.picked.push(r);
        r
    }
}

impl TxnSource for Records {
    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn next_txn(&mut self, _client: u32, rng: &mut Rng) -> TxnSpec {
        let nr = self.cfg.reads_per_txn as usize;
        let n = nr + self.cfg.updates_per_txn as usize;
        self.picked.clear();
        for _ in 0..n {
            self.pick(rng);
        }
        let mut order: Vec<(u64, bool)> = self
            .picked
            .iter()
            .enumerate()
            .map(|(i, &r)| (r, i >= nr))
            .collect();
        if self.cfg.sorted {
            order.sort_unstable();
        }
        let mut ops = Vec::with_capacity(n);
        for (r, update) in order {
            let rid = self.heap.loaded_rid(r);
            if update {
                let mut changes = Changes::new();
                changes.push(Change {
                    offset: COUNTER,
                    len: 8,
                    op: FieldOp::AddI64(1),
                });
                if self.cfg.update_bytes > 0 {
                    changes.push(Change {
                        offset: PAYLOAD,
                        len: self.cfg.update_bytes,
                        op: FieldOp::Fill(rng.next_u64()),
                    });
                }
                ops.push(RecOp::Update { rid, changes });
            } else {
                ops.push(RecOp::Read(rid));
            }
        }
        let rollback = rng.chance(self.cfg.delta_abort);
        TxnSpec::fixed("records", ops, rollback)
    }

    fn describe(&self) -> String {
        format!(
            "records: {} × {} B, {} reads + {} updates per txn, {:?}",
            self.cfg.records,
            self.cfg.record_bytes,
            self.cfg.reads_per_txn,
            self.cfg.updates_per_txn,
            self.cfg.address
        )
    }

    fn loaded(&self, rid: Rid) -> bool {
        self.heap.loaded(rid)
    }

    fn loaded_prefix(&self, table: TableId, page: u32) -> Option<u16> {
        Some(if table == TABLE {
            self.heap.loaded_prefix(page)
        } else {
            0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loaded_prefix_agrees_with_loaded() {
        // 1001 records: the last page is partly filled.
        let cfg = RecordsConfig {
            records: 1001,
            ..RecordsConfig::default()
        };
        crate::db::check_loaded_prefix(&Records::new(&cfg).unwrap()).unwrap();
    }

    #[test]
    fn distinct_sorted_updates_validate_and_count() {
        let cfg = RecordsConfig {
            records: 50,
            updates_per_txn: 5,
            reads_per_txn: 2,
            sorted: true,
            delta_abort: 0.2,
            address: AddressKind::Zipf,
            ..RecordsConfig::default()
        };
        let mut w = Records::new(&cfg).unwrap();
        let mut rng = Rng::new(1);
        let mut sum = 0i64;
        let mut committed_updates = 0i64;
        let mut rolled = 0;
        for i in 0..10_000 {
            let s = w.next_txn(i, &mut rng);
            s.validate(w.schema()).unwrap();
            let mut recs: Vec<u64> = s.ops.iter().map(|o| w.record_of(o.rid())).collect();
            assert!(recs.windows(2).all(|p| p[0] <= p[1]), "sorted");
            recs.dedup();
            assert_eq!(recs.len(), 7, "distinct");
            assert!(recs.iter().all(|&r| r < 50));
            assert_eq!(s.ops.iter().filter(|o| o.writes()).count(), 5);
            if s.rollback {
                rolled += 1;
                continue;
            }
            committed_updates += 5;
            for op in &s.ops {
                if let RecOp::Update { changes, .. } = op {
                    if let FieldOp::AddI64(v) = changes[0].op {
                        sum += v;
                    }
                }
            }
        }
        assert_eq!(sum, committed_updates);
        assert!((1800..2200).contains(&rolled), "{rolled}");
    }

    #[test]
    fn same_seed_same_stream() {
        let cfg = RecordsConfig {
            address: AddressKind::HotCold,
            reads_per_txn: 3,
            ..RecordsConfig::default()
        };
        let (mut a, mut b) = (Records::new(&cfg).unwrap(), Records::new(&cfg).unwrap());
        let (mut ra, mut rb) = (Rng::new(8), Rng::new(8));
        for i in 0..2000 {
            assert_eq!(a.next_txn(i, &mut ra), b.next_txn(i, &mut rb));
        }
    }

    #[test]
    fn one_record_database_works() {
        let cfg = RecordsConfig {
            records: 1,
            updates_per_txn: 1,
            ..RecordsConfig::default()
        };
        let mut w = Records::new(&cfg).unwrap();
        let s = w.next_txn(0, &mut Rng::new(1));
        assert_eq!(
            s.ops[0].rid(),
            Rid {
                table: TABLE,
                page: 0,
                slot: 0
            }
        );
        assert!(w.loaded(s.ops[0].rid()));
    }

    #[test]
    fn bad_configs_name_the_key() {
        let base = RecordsConfig::default();
        for (cfg, key) in [
            (
                RecordsConfig {
                    records: 0,
                    ..base.clone()
                },
                "workload.records.records",
            ),
            (
                RecordsConfig {
                    record_bytes: 4,
                    ..base.clone()
                },
                "workload.records.record_bytes",
            ),
            (
                RecordsConfig {
                    record_bytes: 9000,
                    ..base.clone()
                },
                "workload.records.record_bytes",
            ),
            (
                RecordsConfig {
                    update_bytes: 99,
                    ..base.clone()
                },
                "workload.records.update_bytes",
            ),
            (
                RecordsConfig {
                    updates_per_txn: 0,
                    ..base.clone()
                },
                "workload.records.reads_per_txn",
            ),
            (
                RecordsConfig {
                    records: 3,
                    ..base.clone()
                },
                "workload.records.distinct",
            ),
            (
                RecordsConfig {
                    address: AddressKind::Zipf,
                    zipf_theta: 1.5,
                    ..base.clone()
                },
                "workload.records.zipf_theta",
            ),
            (
                RecordsConfig {
                    delta_abort: 0.7,
                    ..base.clone()
                },
                "workload.records.delta_abort",
            ),
        ] {
            let e = Records::new(&cfg).err().unwrap();
            assert!(e.what.contains(key), "{key}: {e}");
        }
    }
}

#[cfg(test)]
mod config_tests {
    use crate::records::RecordsConfig;
    use crate::tatp::TatpConfig;
    use crate::tpcb::TpcbConfig;
    use crate::tpcc::TpccConfig;

    #[test]
    fn configs_take_partial_tables_and_reject_unknown_keys() {
        let c: TpccConfig = toml::from_str("warehouses = 5\ndelta_abort = 0.05").unwrap();
        assert_eq!(
            (c.warehouses, c.max_txns),
            (5, TpccConfig::default().max_txns)
        );
        let e = toml::from_str::<TpccConfig>("warehouse = 5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("warehouse"), "{e}");
        let c: TpcbConfig = toml::from_str("accounts_per_branch = 10").unwrap();
        assert_eq!((c.branches, c.accounts_per_branch), (1, 10));
        assert!(toml::from_str::<TpcbConfig>("tellers = 3").is_err());
        let c: TatpConfig = toml::from_str("subscribers = 1000\nnonuniform = false").unwrap();
        assert!(!c.nonuniform);
        assert!(toml::from_str::<TatpConfig>("population = 3").is_err());
        let c: RecordsConfig = toml::from_str("records = 64\naddress = \"zipf\"").unwrap();
        assert_eq!(c.records, 64);
        assert!(toml::from_str::<RecordsConfig>("rows = 3").is_err());
    }
}

#[cfg(test)]
mod rate_tests {
    use crate::db::TxnSource;
    use sim::Rng;

    /// Generation rates of TPC-B, TATP and the record workload:
    /// `cargo test -p commitlab-workload --release generation_rates -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn generation_rates() {
        let mut sources: Vec<Box<dyn TxnSource>> = vec![
            Box::new(
                crate::tpcb::Tpcb::new(&crate::tpcb::TpcbConfig {
                    branches: 20,
                    ..Default::default()
                })
                .unwrap(),
            ),
            Box::new(crate::tatp::Tatp::new(&crate::tatp::TatpConfig::default(), 1).unwrap()),
            Box::new(
                crate::records::Records::new(&crate::records::RecordsConfig::default()).unwrap(),
            ),
        ];
        for s in &mut sources {
            let mut rng = Rng::new(2);
            let n = 1_000_000u32;
            let cpu0 = crate::btree::thread_cpu_ns();
            let mut ops = 0usize;
            for i in 0..n {
                ops += s.next_txn(i % 50, &mut rng).ops.len();
            }
            let sec = (crate::btree::thread_cpu_ns() - cpu0) as f64 / 1e9;
            println!(
                "{}: {:.0} txns per CPU-second ({:.3} µs/txn, {:.1} ops/txn)",
                s.describe(),
                f64::from(n) / sec,
                sec * 1e6 / f64::from(n),
                ops as f64 / f64::from(n)
            );
        }
    }
}
