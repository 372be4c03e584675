//! `bank`: a small TPC-B-like transaction source for the host engine's own tests, the
//! crash checker and the host bench, until the TPC-C/TPC-B/TATP generators of `workload`
//! are wired in.
//!
//! Tables: `account` (`accounts` records of 100 B, `records_per_page` per 8 KiB page, a
//! balance field at offset 8) and `history` (50 B records appended round-robin over
//! `history_pages` pages). A transaction reads `reads` random accounts, then moves money
//! between `updates` random accounts (AddI64 on the balance: the deltas sum to zero, so the
//! balance total is invariant), in random order (so transactions deadlock), and appends one
//! history record. With probability `rollback_ratio` it rolls back after its operations
//! (Flag Commit §5's abort ratio δ).
//!
//! History inserts wrap around when the table is full (an insert then overwrites a slot);
//! the data model does not care.

use crate::HostError;
use serde::{Deserialize, Serialize};
use sim::Rng;
use workload::db::{
    Change, Field, FieldOp, RecOp, Rid, Schema, TableDef, TableId, TableKind, TxnSource, TxnSpec,
    DB_PAGE_BYTES,
};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BankConfig {
    pub accounts: u32,
    pub records_per_page: u16,
    pub history_pages: u32,
    /// Accounts read per transaction.
    pub reads: u32,
    /// Accounts updated per transaction (at least 2: money moves between them).
    pub updates: u32,
    pub rollback_ratio: f64,
}

impl Default for BankConfig {
    fn default() -> Self {
        BankConfig {
            accounts: 100_000,
            records_per_page: 80,
            history_pages: 64,
            reads: 4,
            updates: 4,
            rollback_ratio: 0.05,
        }
    }
}

impl BankConfig {
    pub fn validate(&self) -> Result<(), HostError> {
        let bad = |key: &str, reason: String| {
            Err(HostError::Config {
                key: format!("host.bank.{key}"),
                reason,
            })
        };
        if self.accounts < 2 {
            return bad("accounts", "must be at least 2".into());
        }
        if self.records_per_page == 0 || u32::from(self.records_per_page) * 100 > DB_PAGE_BYTES {
            return bad(
                "records_per_page",
                format!(
                    "{} records of 100 B do not fit a {DB_PAGE_BYTES} B page (1..={})",
                    self.records_per_page,
                    DB_PAGE_BYTES / 100
                ),
            );
        }
        if self.history_pages == 0 {
            return bad("history_pages", "must be at least 1".into());
        }
        if self.updates < 2 || self.updates > self.accounts {
            return bad(
                "updates",
                format!("must be in 2..={} (accounts)", self.accounts),
            );
        }
        if !(0.0..=1.0).contains(&self.rollback_ratio) {
            return bad("rollback_ratio", "must be in [0, 1]".into());
        }
        Ok(())
    }
}

pub struct Bank {
    cfg: BankConfig,
    schema: Schema,
    next_history: u64,
}

const BALANCE: u16 = 8;

impl Bank {
    pub fn new(cfg: BankConfig) -> Result<Bank, HostError> {
        cfg.validate()?;
        let pages = cfg.accounts.div_ceil(u32::from(cfg.records_per_page));
        let schema = Schema {
            name: "bank",
            page_bytes: DB_PAGE_BYTES,
            tables: vec![
                TableDef {
                    name: "account",
                    kind: TableKind::Heap,
                    record_bytes: 100,
                    records_per_page: cfg.records_per_page,
                    pages_initial: pages,
                    pages_max: pages,
                    fields: vec![Field {
                        name: "balance",
                        offset: BALANCE,
                        len: 8,
                    }],
                },
                TableDef {
                    name: "history",
                    kind: TableKind::Heap,
                    record_bytes: 50,
                    records_per_page: 160,
                    pages_initial: 1,
                    pages_max: cfg.history_pages,
                    fields: vec![],
                },
            ],
        };
        schema.validate().map_err(|e| HostError::Workload(e.what))?;
        Ok(Bank {
            cfg,
            schema,
            next_history: 160, // page 0 is loaded full
        })
    }

    fn account(&self, a: u32) -> Rid {
        let rpp = u32::from(self.cfg.records_per_page);
        Rid {
            table: TableId(0),
            page: a / rpp,
            slot: (a % rpp) as u16,
        }
    }
}

impl TxnSource for Bank {
    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn next_txn(&mut self, _client: u32, rng: &mut Rng) -> TxnSpec {
        let n = u64::from(self.cfg.accounts);
        let mut ops = Vec::new();
        for _ in 0..self.cfg.reads {
            ops.push(RecOp::Read(self.account(rng.below(n) as u32)));
        }
        let mut chosen: Vec<u32> = Vec::new();
        while chosen.len() < self.cfg.updates as usize {
            let a = rng.below(n) as u32;
            if !chosen.contains(&a) {
                chosen.push(a);
            }
        }
        let mut total = 0i64;
        for (i, a) in chosen.iter().enumerate() {
            let d = if i + 1 == chosen.len() {
                -total
            } else {
                rng.below(2000) as i64 - 1000
            };
            total += d;
            ops.push(RecOp::Update {
                rid: self.account(*a),
                changes: [Change {
                    offset: BALANCE,
                    len: 8,
                    op: FieldOp::AddI64(d),
                }]
                .into(),
            });
        }
        let cap = u64::from(self.cfg.history_pages) * 160;
        let h = self.next_history % cap;
        self.next_history += 1;
        ops.push(RecOp::Insert {
            rid: Rid {
                table: TableId(1),
                page: (h / 160) as u32,
                slot: (h % 160) as u16,
            },
            fill: rng.next_u64(),
        });
        let rollback = rng.chance(self.cfg.rollback_ratio);
        TxnSpec::fixed("transfer", ops, rollback)
    }

    fn describe(&self) -> String {
        format!(
            "bank: {} accounts ({} per page), {} reads + {} transfers + 1 history insert per txn, {:.0}% rollbacks",
            self.cfg.accounts,
            self.cfg.records_per_page,
            self.cfg.reads,
            self.cfg.updates,
            self.cfg.rollback_ratio * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_balance_and_validate() {
        let mut b = Bank::new(BankConfig {
            accounts: 50,
            records_per_page: 10,
            ..Default::default()
        })
        .unwrap();
        let mut rng = Rng::new(3);
        for _ in 0..100 {
            let t = b.next_txn(0, &mut rng);
            t.validate(b.schema()).unwrap();
            let sum: i64 = t
                .ops
                .iter()
                .filter_map(|o| match o {
                    RecOp::Update { changes, .. } => match changes[0].op {
                        FieldOp::AddI64(d) => Some(d),
                        _ => None,
                    },
                    _ => None,
                })
                .sum();
            assert_eq!(sum, 0);
        }
        let e = BankConfig {
            updates: 1,
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(e.contains("host.bank.updates"), "{e}");
    }
}
