//! TPC-B (TPC Benchmark B, Standard Specification 2.0) as a record-level generator.
//!
//! Tables (§3): branch (1 per scale unit), teller (10 per branch), account (100,000 per
//! branch, or fewer with `accounts_per_branch` for tiny crash-check databases), all 100-byte
//! records, and history (50-byte records, appended). One transaction type (§1.2): account
//! balance += delta, a history row, teller balance += delta, branch balance += delta, in
//! that order; delta uniform in [−999,999, +999,999]. The teller is chosen uniformly among
//! the home branch's ten (client `c`'s home branch is `c % branches`), and the account
//! comes from the home branch 85 % of the time and from a uniformly chosen other branch
//! otherwise (§5.3.5; always home with one branch).
//!
//! Records are addressed directly by id (the spec allows any access method); history rows
//! are appended per home branch to runs of pages from the end of the table, sized for
//! `max_txns` transactions. Balances change by `FieldOp::AddI64`, so Σ account = Σ teller =
//! Σ branch balances holds on a `full`-mode database of committed transactions. δ
//! (`delta_abort`) makes a fraction of transactions roll back after their updates; a
//! rolled-back transaction names the history slot the next committing one of its branch
//! will use (they are serialized on the branch row).

use crate::btree::{fields, Heap};
use crate::db::{
    Change, FieldOp, RecOp, Rid, RowContent, Schema, TableId, TxnSource, TxnSpec, DB_PAGE_BYTES,
};
use crate::{werr, WorkloadError};
use serde::{Deserialize, Serialize};
use sim::Rng;

pub const TELLERS_PER_BRANCH: u32 = 10;
pub const ACCOUNTS_PER_BRANCH: u32 = 100_000;
/// The largest `branches` accepted.
pub const BRANCHES_MAX: u32 = 100_000;

pub mod table {
    use crate::db::TableId;
    pub const BRANCH: TableId = TableId(0);
    pub const TELLER: TableId = TableId(1);
    pub const ACCOUNT: TableId = TableId(2);
    pub const HISTORY: TableId = TableId(3);
}

/// Balance offset in branch, teller and account records.
pub const BALANCE: u16 = 8;
const RECORD_BYTES: u16 = 100;
const HISTORY_BYTES: u16 = 50;
const BRANCH: &[(&str, u16, u16)] = &[
    ("B_ID", 0, 4),
    ("B_PAD", 4, 4),
    ("B_BALANCE", BALANCE, 8),
    ("B_FILLER", 16, 84),
];
const TELLER: &[(&str, u16, u16)] = &[
    ("T_ID", 0, 4),
    ("T_BID", 4, 4),
    ("T_BALANCE", BALANCE, 8),
    ("T_FILLER", 16, 84),
];
const ACCOUNT: &[(&str, u16, u16)] = &[
    ("A_ID", 0, 4),
    ("A_BID", 4, 4),
    ("A_BALANCE", BALANCE, 8),
    ("A_FILLER", 16, 84),
];
const HISTORY: &[(&str, u16, u16)] = &[
    ("H_TID", 0, 4),
    ("H_BID", 4, 4),
    ("H_AID", 8, 4),
    ("H_DELTA", 12, 8),
    ("H_TIME", 20, 8),
    ("H_FILLER", 28, 22),
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TpcbConfig {
    /// Scale: branches (each with 10 tellers and `accounts_per_branch` accounts).
    pub branches: u32,
    /// 100,000 in the spec; smaller for tiny crash-check databases.
    pub accounts_per_branch: u32,
    /// δ: fraction of transactions that roll back after their updates, in [0, 0.5].
    pub delta_abort: f64,
    /// Transactions the history table is sized for. Past it appends wrap.
    pub max_txns: u64,
}

impl Default for TpcbConfig {
    fn default() -> Self {
        TpcbConfig {
            branches: 1,
            accounts_per_branch: ACCOUNTS_PER_BRANCH,
            delta_abort: 0.0,
            max_txns: 1_000_000,
        }
    }
}

impl TpcbConfig {
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.branches == 0 || self.branches > BRANCHES_MAX {
            return Err(werr(format!(
                "workload.tpcb.branches must be in [1, {BRANCHES_MAX}], got {}",
                self.branches
            )));
        }
        if self.accounts_per_branch == 0
            || u64::from(self.accounts_per_branch) * u64::from(self.branches) > u64::from(u32::MAX)
        {
            return Err(werr(format!(
                "workload.tpcb.accounts_per_branch must be ≥ 1 with branches × accounts_per_branch < 2^32, got {}",
                self.accounts_per_branch
            )));
        }
        if !(0.0..=0.5).contains(&self.delta_abort) {
            return Err(werr(format!(
                "workload.tpcb.delta_abort must be in [0, 0.5], got {}",
                self.delta_abort
            )));
        }
        if self.max_txns == 0 || self.max_txns > 1 << 36 {
            return Err(werr(format!(
                "workload.tpcb.max_txns must be in [1, 2^36], got {}",
                self.max_txns
            )));
        }
        Ok(())
    }
}

pub struct Tpcb {
    cfg: TpcbConfig,
    schema: Schema,
    branch: Heap,
    teller: Heap,
    account: Heap,
    history: Heap,
    generated: u64,
    /// Transactions whose account came from the home branch (tests).
    pub home_accounts: u64,
}

impl Tpcb {
    pub fn new(cfg: &TpcbConfig) -> Result<Tpcb, WorkloadError> {
        cfg.validate()?;
        let b = u64::from(cfg.branches);
        let e = |s: String| werr(format!("workload.tpcb: {s}"));
        let mut tables = Vec::with_capacity(4);
        let mut heap = |id: TableId,
                        name: &'static str,
                        bytes: u16,
                        layout: &[(&'static str, u16, u16)],
                        loaded: u64,
                        parts: usize,
                        growth: u64|
         -> Result<Heap, WorkloadError> {
            let (h, mut def) = Heap::build(id, name, bytes, loaded, parts, growth).map_err(e)?;
            def.fields = fields(layout);
            tables.push(def);
            Ok(h)
        };
        let branch = heap(table::BRANCH, "branch", RECORD_BYTES, BRANCH, b, 1, 0)?;
        let teller = heap(
            table::TELLER,
            "teller",
            RECORD_BYTES,
            TELLER,
            b * u64::from(TELLERS_PER_BRANCH),
            1,
            0,
        )?;
        let account = heap(
            table::ACCOUNT,
            "account",
            RECORD_BYTES,
            ACCOUNT,
            b * u64::from(cfg.accounts_per_branch),
            1,
            0,
        )?;
        // History starts empty: its first page is allocated at load and never inserted
        // into, so appends never hit a slot the host considers loaded.
        let history = heap(
            table::HISTORY,
            "history",
            HISTORY_BYTES,
            HISTORY,
            0,
            cfg.branches as usize,
            cfg.max_txns,
        )?;
        let schema = Schema {
            name: "tpcb",
            page_bytes: DB_PAGE_BYTES,
            tables,
        };
        schema.validate()?;
        Ok(Tpcb {
            cfg: cfg.clone(),
            schema,
            branch,
            teller,
            account,
            history,
            generated: 0,
            home_accounts: 0,
        })
    }

    fn add(rid: Rid, delta: i64) -> RecOp {
        RecOp::Update {
            rid,
            changes: [Change {
                offset: BALANCE,
                len: 8,
                op: FieldOp::AddI64(delta),
            }]
            .into(),
        }
    }
}

impl TxnSource for Tpcb {
    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn next_txn(&mut self, client: u32, rng: &mut Rng) -> TxnSpec {
        let nb = self.cfg.branches;
        let home = client % nb;
        let tid = u64::from(home) * u64::from(TELLERS_PER_BRANCH)
            + rng.below(u64::from(TELLERS_PER_BRANCH));
        let abr = if nb > 1 && rng.below(100) >= 85 {
            let r = rng.below(u64::from(nb - 1)) as u32;
            if r >= home {
                r + 1
            } else {
                r
            }
        } else {
            self.home_accounts += 1;
            home
        };
        let aid = u64::from(abr) * u64::from(self.cfg.accounts_per_branch)
            + rng.below(u64::from(self.cfg.accounts_per_branch));
        let delta = rng.range_inclusive(0, 1_999_998) as i64 - 999_999;
        let rollback = rng.chance(self.cfg.delta_abort);
        let mut ops = Vec::with_capacity(4);
        ops.push(Self::add(self.account.loaded_rid(aid), delta));
        let rid = self.history.append_rid(home as usize, !rollback, 0);
        ops.push(RecOp::Insert {
            rid,
            fill: rng.next_u64(),
        });
        ops.push(Self::add(self.teller.loaded_rid(tid), delta));
        ops.push(Self::add(self.branch.loaded_rid(u64::from(home)), delta));
        self.generated += 1;
        TxnSpec::fixed("tpcb", ops, rollback)
    }

    fn describe(&self) -> String {
        format!(
            "tpcb: {} branches × {} accounts, delta_abort {}, sized for {} txns",
            self.cfg.branches,
            self.cfg.accounts_per_branch,
            self.cfg.delta_abort,
            self.cfg.max_txns
        )
    }

    fn loaded(&self, rid: Rid) -> bool {
        match rid.table {
            table::BRANCH => self.branch.loaded(rid),
            table::TELLER => self.teller.loaded(rid),
            table::ACCOUNT => self.account.loaded(rid),
            table::HISTORY => self.history.loaded(rid),
            _ => false,
        }
    }

    fn loaded_prefix(&self, table: TableId, page: u32) -> Option<u16> {
        Some(match table {
            table::BRANCH => self.branch.loaded_prefix(page),
            table::TELLER => self.teller.loaded_prefix(page),
            table::ACCOUNT => self.account.loaded_prefix(page),
            table::HISTORY => self.history.loaded_prefix(page),
            _ => 0,
        })
    }

    fn remaining_txns(&self) -> Option<u64> {
        Some(self.cfg.max_txns.saturating_sub(self.generated))
    }

    fn has_consistency(&self) -> bool {
        true
    }

    /// TPC-B's balance sums (§1.2 consistency; balances load at 0, so the deltas are the
    /// balances): each branch's balance = Σ of its ten tellers' balances (a transaction's
    /// teller is always of its branch), and Σ account balances = Σ branch balances. Per
    /// branch, Σ of its accounts equals its balance only without remote accounts (15 % of
    /// transactions move a remote branch's account), so that one is checked in total.
    fn consistency(&self, rows: &dyn Fn(TableId) -> Vec<(Rid, RowContent)>) -> Vec<String> {
        let nb = self.cfg.branches as usize;
        let mut out = Vec::new();
        let mut unknown = 0usize;
        let ord = |rid: Rid| -> u64 {
            u64::from(rid.page) * u64::from(self.schema.table(rid.table).records_per_page)
                + u64::from(rid.slot)
        };
        let mut branch = vec![None; nb];
        let mut tellers = vec![0i64; nb];
        let mut accounts = 0i64;
        for (rid, r) in rows(table::BRANCH) {
            match r {
                RowContent::Present { .. } => {
                    if let Some(b) = branch.get_mut(ord(rid) as usize) {
                        *b = Some(r.add(BALANCE));
                    }
                }
                _ => unknown += 1,
            }
        }
        for (rid, r) in rows(table::TELLER) {
            match r {
                RowContent::Present { .. } => {
                    let b = (ord(rid) / u64::from(TELLERS_PER_BRANCH)) as usize;
                    if let Some(t) = tellers.get_mut(b) {
                        *t += r.add(BALANCE);
                    }
                }
                _ => unknown += 1,
            }
        }
        for (_, r) in rows(table::ACCOUNT) {
            match r {
                RowContent::Present { .. } => accounts += r.add(BALANCE),
                _ => unknown += 1,
            }
        }
        let mut total = 0i64;
        for (b, bal) in branch.iter().enumerate() {
            let Some(bal) = *bal else {
                out.push(format!("branch {b} is missing"));
                continue;
            };
            total += bal;
            if bal != tellers[b] {
                out.push(format!(
                    "TPC-B balances: branch {b} holds {bal} but its tellers sum to {}",
                    tellers[b]
                ));
            }
        }
        if accounts != total {
            out.push(format!(
                "TPC-B balances: the accounts sum to {accounts} but the branches to {total}"
            ));
        }
        if unknown > 0 {
            out.push(format!(
                "{unknown} rows of the checked tables have unknown contents"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    #[test]
    fn schema_validates_and_records_pack_78_a_page() {
        let t = Tpcb::new(&TpcbConfig::default()).unwrap();
        t.schema().validate().unwrap();
        assert_eq!(t.schema().table(table::ACCOUNT).records_per_page, 78);
        assert_eq!(t.schema().table(table::ACCOUNT).pages_initial, 1283);
        assert_eq!(t.schema().table(table::HISTORY).record_bytes, 50);
        for def in &t.schema().tables {
            let end: u16 = def.fields.iter().map(|f| f.len).sum();
            assert_eq!(end, def.record_bytes, "{}", def.name);
        }
    }

    #[test]
    fn loaded_prefix_agrees_with_loaded() {
        let cfg = TpcbConfig {
            branches: 3,
            accounts_per_branch: 1000,
            delta_abort: 0.0,
            max_txns: 500,
        };
        crate::db::check_loaded_prefix(&Tpcb::new(&cfg).unwrap()).unwrap();
    }

    #[test]
    fn balances_sum_alike_and_85_percent_are_home_accounts() {
        let cfg = TpcbConfig {
            branches: 8,
            accounts_per_branch: 1000,
            delta_abort: 0.1,
            max_txns: 60_000,
        };
        let mut t = Tpcb::new(&cfg).unwrap();
        let mut rng = Rng::new(4);
        let mut sums: BTreeMap<TableId, i64> = BTreeMap::new();
        let mut inserted = BTreeSet::new();
        let n = 50_000;
        let mut rolled = 0;
        for i in 0..n {
            let s = t.next_txn(i % 40, &mut rng);
            s.validate(t.schema()).unwrap();
            if s.rollback {
                rolled += 1;
                continue;
            }
            for op in &s.ops {
                match op {
                    RecOp::Update { rid, changes } => {
                        assert!(t.loaded(*rid));
                        let FieldOp::AddI64(v) = changes[0].op else {
                            panic!()
                        };
                        *sums.entry(rid.table).or_default() += v;
                    }
                    RecOp::Insert { rid, .. } => {
                        assert!(!t.loaded(*rid));
                        assert!(inserted.insert(*rid), "history slot {rid:?} reused");
                    }
                    _ => panic!("unexpected {op:?}"),
                }
            }
        }
        assert_eq!(sums[&table::ACCOUNT], sums[&table::TELLER]);
        assert_eq!(sums[&table::TELLER], sums[&table::BRANCH]);
        let home = t.home_accounts as f64 / f64::from(n);
        assert!(
            (0.845..0.855).contains(&home),
            "home-branch accounts {home}"
        );
        let rb = f64::from(rolled) / f64::from(n);
        assert!((0.095..0.105).contains(&rb), "rollbacks {rb}");
        assert_eq!(t.remaining_txns(), Some(10_000));
    }

    #[test]
    fn one_branch_is_always_home_and_same_seed_same_stream() {
        let cfg = TpcbConfig {
            accounts_per_branch: 10,
            max_txns: 100,
            ..TpcbConfig::default()
        };
        let mut a = Tpcb::new(&cfg).unwrap();
        let mut b = Tpcb::new(&cfg).unwrap();
        let (mut ra, mut rb) = (Rng::new(1), Rng::new(1));
        for i in 0..100 {
            let x = a.next_txn(i, &mut ra);
            assert_eq!(x, b.next_txn(i, &mut rb));
            x.validate(a.schema()).unwrap();
        }
        assert_eq!(a.home_accounts, 100);
    }

    #[test]
    fn bad_configs_name_the_key() {
        for (cfg, key) in [
            (
                TpcbConfig {
                    branches: 0,
                    ..TpcbConfig::default()
                },
                "workload.tpcb.branches",
            ),
            (
                TpcbConfig {
                    accounts_per_branch: 0,
                    ..TpcbConfig::default()
                },
                "workload.tpcb.accounts_per_branch",
            ),
            (
                TpcbConfig {
                    delta_abort: -0.1,
                    ..TpcbConfig::default()
                },
                "workload.tpcb.delta_abort",
            ),
            (
                TpcbConfig {
                    max_txns: 0,
                    ..TpcbConfig::default()
                },
                "workload.tpcb.max_txns",
            ),
        ] {
            let e = Tpcb::new(&cfg).err().unwrap();
            assert!(e.what.contains(key), "{e}");
        }
    }
}
