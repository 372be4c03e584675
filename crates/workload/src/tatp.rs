//! TATP (Telecom Application Transaction Processing benchmark, formerly Nokia's TM1,
//! specification 1.0) as a record-level generator.
//!
//! Tables: subscriber (P rows), access_info (1–4 per subscriber, ai_type ∈ 1..4),
//! special_facility (1–4 per subscriber, sf_type ∈ 1..4, 85 % active) and call_forwarding
//! (0–3 per special facility, start_time ∈ {0, 8, 16}), plus the B-tree index on
//! subscriber.sub_nbr that UPDATE_LOCATION and the call-forwarding transactions look
//! subscribers up by. Seven transactions in the spec's mix: GET_SUBSCRIBER_DATA 35 %,
//! GET_NEW_DESTINATION 10 %, GET_ACCESS_DATA 35 %, UPDATE_SUBSCRIBER_DATA 2 %,
//! UPDATE_LOCATION 14 %, INSERT_CALL_FORWARDING 2 %, DELETE_CALL_FORWARDING 2 % (80 %
//! read-only). Subscriber ids are non-uniform, NURand(A, 1, P) with A = 65,535 for
//! P ≤ 1,000,000, 1,048,575 for P ≤ 10,000,000 and 2,097,151 above (C = 0), or uniform
//! with `nonuniform = false`.
//!
//! Expected failures: the write transactions whose target row does not exist fail in
//! TATP (UPDATE_SUBSCRIBER_DATA when the special facility is absent, 37.5 %;
//! INSERT_CALL_FORWARDING when the facility is absent or the row already exists, and
//! DELETE_CALL_FORWARDING when the row is absent, 68.75 % each). They are modelled as
//! transactions that roll back after the operations they did. The failure rates are not
//! drawn: they follow from the database contents, which the generator tracks (which
//! call_forwarding rows exist now), so they equal the spec's at load and stay there
//! because inserts and deletes balance. Failing reads (GET_NEW_DESTINATION,
//! GET_ACCESS_DATA finding nothing) are ordinary read-only transactions.
//!
//! Layout: rows are addressed directly by key, each subscriber owning 4 access_info, 4
//! special_facility and 12 call_forwarding slots whether or not the row exists (a
//! clustered layout; `loaded()` says which exist at load). Looking a row up reads its
//! slot. The optional rows present at load are a function of (seed, s_id), so nothing
//! but the current call_forwarding bits is stored, as committed (`TxnSource::committed`):
//! whether INSERT/DELETE_CALL_FORWARDING finds its row is read when the transaction holds
//! the row's lock (`TxnSource::bind`), and decides its operation and its rollback. A host
//! treats an insert into an occupied slot as an overwrite and a delete of a free one as a
//! no-op.

use crate::btree::{fields, mix, nurand, Heap, Index};
use crate::db::{
    Change, FieldOp, RecOp, Rid, Schema, SetBytes, TableId, TxnSource, TxnSpec, DB_PAGE_BYTES,
};
use crate::{werr, WorkloadError};
use serde::{Deserialize, Serialize};
use sim::Rng;

pub const SUBSCRIBERS_MAX: u32 = 20_000_000;

pub mod table {
    use crate::db::TableId;
    pub const SUBSCRIBER: TableId = TableId(0);
    pub const ACCESS_INFO: TableId = TableId(1);
    pub const SPECIAL_FACILITY: TableId = TableId(2);
    pub const CALL_FORWARDING: TableId = TableId(3);
    pub const SUB_NBR_IDX: TableId = TableId(4);
}

const SUBSCRIBER_BYTES: u16 = 57;
const S_VLR_LOCATION: u16 = 8;
const S_BIT_1: u16 = 12;
const SUBSCRIBER: &[(&str, u16, u16)] = &[
    ("S_ID", 0, 4),
    ("MSC_LOCATION", 4, 4),
    ("VLR_LOCATION", S_VLR_LOCATION, 4),
    ("BIT_1", S_BIT_1, 1),
    ("BIT_2_10", 13, 9),
    ("HEX_1_10", 22, 10),
    ("BYTE2_1_10", 32, 10),
    ("SUB_NBR", 42, 15),
];
const ACCESS_INFO_BYTES: u16 = 15;
const ACCESS_INFO: &[(&str, u16, u16)] = &[
    ("S_ID", 0, 4),
    ("AI_TYPE", 4, 1),
    ("DATA1", 5, 1),
    ("DATA2", 6, 1),
    ("DATA3", 7, 3),
    ("DATA4", 10, 5),
];
const SPECIAL_FACILITY_BYTES: u16 = 13;
const SF_DATA_A: u16 = 7;
const SPECIAL_FACILITY: &[(&str, u16, u16)] = &[
    ("S_ID", 0, 4),
    ("SF_TYPE", 4, 1),
    ("IS_ACTIVE", 5, 1),
    ("ERROR_CNTRL", 6, 1),
    ("DATA_A", SF_DATA_A, 1),
    ("DATA_B", 8, 5),
];
const CALL_FORWARDING_BYTES: u16 = 22;
const CALL_FORWARDING: &[(&str, u16, u16)] = &[
    ("S_ID", 0, 4),
    ("SF_TYPE", 4, 1),
    ("START_TIME", 5, 1),
    ("END_TIME", 6, 1),
    ("NUMBERX", 7, 15),
];
/// sub_nbr is a 15-digit string.
const KEY_SUB_NBR: u16 = 15;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TatpConfig {
    /// Population P.
    pub subscribers: u32,
    /// Non-uniform subscriber ids (the spec's default); uniform when false.
    pub nonuniform: bool,
    /// δ: a further fraction of all transactions that roll back after their operations.
    pub delta_abort: f64,
}

impl Default for TatpConfig {
    fn default() -> Self {
        TatpConfig {
            subscribers: 100_000,
            nonuniform: true,
            delta_abort: 0.0,
        }
    }
}

impl TatpConfig {
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.subscribers == 0 || self.subscribers > SUBSCRIBERS_MAX {
            return Err(werr(format!(
                "workload.tatp.subscribers must be in [1, {SUBSCRIBERS_MAX}], got {}",
                self.subscribers
            )));
        }
        if !(0.0..=0.5).contains(&self.delta_abort) {
            return Err(werr(format!(
                "workload.tatp.delta_abort must be in [0, 0.5], got {}",
                self.delta_abort
            )));
        }
        Ok(())
    }
}

/// The seven transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TatpTxn {
    GetSubscriberData,
    GetNewDestination,
    GetAccessData,
    UpdateSubscriberData,
    UpdateLocation,
    InsertCallForwarding,
    DeleteCallForwarding,
}

impl TatpTxn {
    pub fn name(self) -> &'static str {
        match self {
            TatpTxn::GetSubscriberData => "get-subscriber-data",
            TatpTxn::GetNewDestination => "get-new-destination",
            TatpTxn::GetAccessData => "get-access-data",
            TatpTxn::UpdateSubscriberData => "update-subscriber-data",
            TatpTxn::UpdateLocation => "update-location",
            TatpTxn::InsertCallForwarding => "insert-call-forwarding",
            TatpTxn::DeleteCallForwarding => "delete-call-forwarding",
        }
    }
    /// The mix from a draw in 0..100: 35 / 10 / 35 / 2 / 14 / 2 / 2.
    pub fn from_draw(u: u64) -> TatpTxn {
        match u {
            0..=34 => TatpTxn::GetSubscriberData,
            35..=44 => TatpTxn::GetNewDestination,
            45..=79 => TatpTxn::GetAccessData,
            80..=81 => TatpTxn::UpdateSubscriberData,
            82..=95 => TatpTxn::UpdateLocation,
            96..=97 => TatpTxn::InsertCallForwarding,
            _ => TatpTxn::DeleteCallForwarding,
        }
    }
}

/// Which optional rows a subscriber has at load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Loaded {
    ai: u8,
    sf: u8,
    active: u8,
    cf: u16,
}

/// The 24 orders of 4 items, to pick `k` distinct types from hash bits.
fn pick(h: u64, k: u32, of: u32) -> u8 {
    let mut items = [0u8, 1, 2, 3];
    let mut h = h;
    let mut mask = 0u8;
    for i in 0..k as usize {
        let rest = of as usize - i;
        let j = i + (h % rest as u64) as usize;
        h /= rest as u64;
        items.swap(i, j);
        mask |= 1 << items[i];
    }
    mask
}

pub struct Tatp {
    cfg: TatpConfig,
    schema: Schema,
    subscriber: Heap,
    access_info: Heap,
    special_facility: Heap,
    call_forwarding: Heap,
    sub_nbr: Index,
    /// Current call_forwarding rows per subscriber: bit `(sf_type−1)·3 + start/8`.
    cf: Vec<u16>,
    a: u64,
    seed: u64,
    /// Per type: generated, rolled back by the spec's failure (tests, reports).
    pub generated: [u64; 7],
    pub failed: [u64; 7],
    /// INSERT/DELETE_CALL_FORWARDING transactions generated and not yet ended, by token.
    pending: std::collections::BTreeMap<u64, CallForwarding>,
    tokens: u64,
}

/// An INSERT/DELETE_CALL_FORWARDING between generation and end: whether its row exists
/// is read at execution, under the row's lock (`TxnSource::bind`).
#[derive(Clone, Copy, Debug)]
struct CallForwarding {
    s: u32,
    /// The row's bit in `Tatp::cf`.
    bit: u16,
    insert: bool,
    /// The subscriber has the special facility the row belongs to (loaded, never changes).
    facility: bool,
    delta: bool,
    /// The inserted row's fill.
    fill: u64,
    /// The operation on the call_forwarding row.
    at: usize,
}

impl Tatp {
    pub fn new(cfg: &TatpConfig, seed: u64) -> Result<Tatp, WorkloadError> {
        cfg.validate()?;
        let p = u64::from(cfg.subscribers);
        let e = |s: String| werr(format!("workload.tatp: {s}"));
        let mut tables = Vec::with_capacity(5);
        let mut heap = |id: TableId,
                        name: &'static str,
                        bytes: u16,
                        layout: &[(&'static str, u16, u16)],
                        slots: u64|
         -> Result<Heap, WorkloadError> {
            let (h, mut def) = Heap::build(id, name, bytes, slots, 1, 0).map_err(e)?;
            def.fields = fields(layout);
            tables.push(def);
            Ok(h)
        };
        let subscriber = heap(
            table::SUBSCRIBER,
            "subscriber",
            SUBSCRIBER_BYTES,
            SUBSCRIBER,
            p,
        )?;
        let access_info = heap(
            table::ACCESS_INFO,
            "access_info",
            ACCESS_INFO_BYTES,
            ACCESS_INFO,
            4 * p,
        )?;
        let special_facility = heap(
            table::SPECIAL_FACILITY,
            "special_facility",
            SPECIAL_FACILITY_BYTES,
            SPECIAL_FACILITY,
            4 * p,
        )?;
        let call_forwarding = heap(
            table::CALL_FORWARDING,
            "call_forwarding",
            CALL_FORWARDING_BYTES,
            CALL_FORWARDING,
            12 * p,
        )?;
        let (sub_nbr, def) = Index::build(
            table::SUB_NBR_IDX,
            "subscriber_sub_nbr",
            KEY_SUB_NBR,
            p,
            1,
            0,
        )
        .map_err(e)?;
        tables.push(def);
        let schema = Schema {
            name: "tatp",
            page_bytes: DB_PAGE_BYTES,
            tables,
        };
        schema.validate()?;
        let seed = Rng::new(seed).fork("tatp-load").next_u64();
        let mut t = Tatp {
            cfg: cfg.clone(),
            schema,
            subscriber,
            access_info,
            special_facility,
            call_forwarding,
            sub_nbr,
            cf: Vec::new(),
            a: match cfg.subscribers {
                0..=1_000_000 => 65_535,
                1_000_001..=10_000_000 => 1_048_575,
                _ => 2_097_151,
            },
            seed,
            generated: [0; 7],
            failed: [0; 7],
            pending: std::collections::BTreeMap::new(),
            tokens: 0,
        };
        t.cf = (0..cfg.subscribers).map(|s| t.loaded_rows(s).cf).collect();
        Ok(t)
    }

    /// The optional rows of subscriber index `s` (s_id − 1) at load.
    fn loaded_rows(&self, s: u32) -> Loaded {
        let h = mix(self.seed ^ u64::from(s).wrapping_mul(0xD6E8_FEB8_6659_FD93));
        let ai = pick(h >> 2, 1 + (h % 4) as u32, 4);
        let h2 = h >> 8;
        let sf = pick(h2 >> 2, 1 + (h2 % 4) as u32, 4);
        let mut h3 = mix(h);
        // 85 % of facilities are active.
        let mut active = 0u8;
        let mut cf = 0u16;
        for t in 0..4 {
            if (h3 % 100) < 85 {
                active |= 1 << t;
            }
            h3 /= 100;
        }
        let mut h4 = mix(h3 ^ h);
        for t in 0..4u16 {
            if sf & (1 << t) != 0 {
                let k = (h4 % 4) as u32; // 0..3 rows
                let starts = pick(h4 >> 2, k, 3);
                cf |= u16::from(starts) << (3 * t);
            }
            h4 >>= 8;
        }
        Loaded { ai, sf, active, cf }
    }

    fn s_index(&self, rng: &mut Rng) -> u32 {
        let p = u64::from(self.cfg.subscribers);
        let s_id = if self.cfg.nonuniform {
            nurand(rng, self.a, 1, p, 0)
        } else {
            rng.range_inclusive(1, p)
        };
        (s_id - 1) as u32
    }

    fn by_sub_nbr(&self, ops: &mut Vec<RecOp>, s: u32) {
        self.sub_nbr
            .lookup(ops, self.sub_nbr.loaded_pos(u64::from(s)));
    }

    /// Generate one transaction of a given type.
    pub fn generate(&mut self, kind: TatpTxn, rng: &mut Rng) -> TxnSpec {
        let s = self.s_index(rng);
        let sl = u64::from(s);
        let delta = rng.chance(self.cfg.delta_abort);
        let mut ops = Vec::with_capacity(8);
        let mut failed = false;
        let mut bind = Vec::new();
        let mut token = 0;
        match kind {
            TatpTxn::GetSubscriberData => ops.push(RecOp::Read(self.subscriber.loaded_rid(sl))),
            TatpTxn::GetNewDestination => {
                let sf_type = rng.below(4) as u32;
                let start = rng.below(3) as u32; // 0, 8, 16
                let _end_time = rng.range_inclusive(1, 24);
                ops.push(RecOp::Read(
                    self.special_facility
                        .loaded_rid(sl * 4 + u64::from(sf_type)),
                ));
                let l = self.loaded_rows(s);
                if l.sf & (1 << sf_type) != 0 && l.active & (1 << sf_type) != 0 {
                    for st in 0..=start {
                        let slot = sl * 12 + u64::from(sf_type * 3 + st);
                        ops.push(RecOp::Read(self.call_forwarding.loaded_rid(slot)));
                    }
                }
            }
            TatpTxn::GetAccessData => {
                let ai_type = rng.below(4);
                ops.push(RecOp::Read(self.access_info.loaded_rid(sl * 4 + ai_type)));
            }
            TatpTxn::UpdateSubscriberData => {
                let bit = rng.below(2) as u8;
                let sf_type = rng.below(4) as u32;
                let data_a = rng.below(256) as u8;
                ops.push(RecOp::Update {
                    rid: self.subscriber.loaded_rid(sl),
                    changes: [Change {
                        offset: S_BIT_1,
                        len: 1,
                        op: FieldOp::Set(SetBytes::new(&[bit])),
                    }]
                    .into(),
                });
                let rid = self
                    .special_facility
                    .loaded_rid(sl * 4 + u64::from(sf_type));
                if self.loaded_rows(s).sf & (1 << sf_type) != 0 {
                    ops.push(RecOp::Update {
                        rid,
                        changes: [Change {
                            offset: SF_DATA_A,
                            len: 1,
                            op: FieldOp::Set(SetBytes::new(&[data_a])),
                        }]
                        .into(),
                    });
                } else {
                    ops.push(RecOp::Read(rid)); // the update finds no row
                    failed = true;
                }
            }
            TatpTxn::UpdateLocation => {
                self.by_sub_nbr(&mut ops, s);
                ops.push(RecOp::Update {
                    rid: self.subscriber.loaded_rid(sl),
                    changes: [Change {
                        offset: S_VLR_LOCATION,
                        len: 4,
                        op: FieldOp::Fill(rng.next_u64()),
                    }]
                    .into(),
                });
            }
            TatpTxn::InsertCallForwarding | TatpTxn::DeleteCallForwarding => {
                let sf_type = rng.below(4) as u32;
                let start = rng.below(3) as u32;
                let insert = kind == TatpTxn::InsertCallForwarding;
                if insert {
                    let _end_time = rng.range_inclusive(1, 24);
                }
                self.by_sub_nbr(&mut ops, s);
                ops.push(RecOp::Read(self.subscriber.loaded_rid(sl)));
                let l = self.loaded_rows(s);
                if insert {
                    // SELECT sf_type FROM special_facility WHERE s_id = ?
                    for t in 0..4u64 {
                        if l.sf & (1 << t) != 0 {
                            ops.push(RecOp::Read(self.special_facility.loaded_rid(sl * 4 + t)));
                        }
                    }
                }
                let bit = 1u16 << (sf_type * 3 + start);
                // The inserted row's fill, drawn whether or not the insert finds the row
                // free: that is read at execution (`bind`), and the stream must not depend
                // on it.
                let fill = rng.next_u64();
                self.tokens += 1;
                let cf = CallForwarding {
                    s,
                    bit,
                    insert,
                    facility: l.sf & (1 << sf_type) != 0,
                    delta,
                    fill,
                    at: ops.len(),
                };
                self.pending.insert(self.tokens, cf);
                token = self.tokens;
                bind.push(ops.len() as u32);
                let (op, ok) = self.call_forwarding_op(&cf);
                ops.push(op);
                failed = !ok;
            }
        }
        self.generated[kind as usize] += 1;
        if failed && token == 0 {
            self.failed[kind as usize] += 1;
        }
        TxnSpec {
            kind: kind.name(),
            ops,
            rollback: failed || delta,
            bind,
            token,
        }
    }

    /// The call_forwarding row's operation from the committed view, and whether the
    /// transaction succeeds: an insert needs the facility and a free row, a delete an
    /// existing row. A failed one reads the row (the key lookup that finds it taken or
    /// absent) and rolls back.
    fn call_forwarding_op(&self, cf: &CallForwarding) -> (RecOp, bool) {
        let rid = self
            .call_forwarding
            .loaded_rid(u64::from(cf.s) * 12 + u64::from(cf.bit.trailing_zeros()));
        let exists = self.cf[cf.s as usize] & cf.bit != 0;
        let ok = if cf.insert {
            cf.facility && !exists
        } else {
            exists
        };
        let op = match (ok, cf.insert) {
            (false, _) => RecOp::Read(rid),
            (true, true) => RecOp::Insert { rid, fill: cf.fill },
            (true, false) => RecOp::Delete(rid),
        };
        (op, ok)
    }

    /// Counts a call-forwarding transaction's failure (as bound) and forgets it.
    fn end_call_forwarding(&mut self, spec: &TxnSpec) -> Option<CallForwarding> {
        let cf = self.pending.remove(&spec.token)?;
        if matches!(spec.ops.get(cf.at), Some(RecOp::Read(_))) {
            let kind = if cf.insert {
                TatpTxn::InsertCallForwarding
            } else {
                TatpTxn::DeleteCallForwarding
            };
            self.failed[kind as usize] += 1;
        }
        Some(cf)
    }
}

impl TxnSource for Tatp {
    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn next_txn(&mut self, _client: u32, rng: &mut Rng) -> TxnSpec {
        let kind = TatpTxn::from_draw(rng.below(100));
        self.generate(kind, rng)
    }

    fn bind(&mut self, spec: &mut TxnSpec, i: usize) {
        let Some(&cf) = self.pending.get(&spec.token) else {
            return;
        };
        if i == cf.at {
            let (op, ok) = self.call_forwarding_op(&cf);
            spec.ops[i] = op;
            spec.rollback = !ok || cf.delta;
        }
    }

    fn committed(&mut self, spec: &TxnSpec) {
        if let Some(cf) = self.end_call_forwarding(spec) {
            match spec.ops.get(cf.at) {
                Some(RecOp::Insert { .. }) => self.cf[cf.s as usize] |= cf.bit,
                Some(RecOp::Delete(_)) => self.cf[cf.s as usize] &= !cf.bit,
                _ => {}
            }
        }
    }

    fn ended(&mut self, spec: &TxnSpec) {
        self.end_call_forwarding(spec);
    }

    fn describe(&self) -> String {
        format!(
            "tatp: {} subscribers, {} ids, delta_abort {}",
            self.cfg.subscribers,
            if self.cfg.nonuniform {
                "non-uniform"
            } else {
                "uniform"
            },
            self.cfg.delta_abort
        )
    }

    fn loaded(&self, rid: Rid) -> bool {
        let t = rid.table;
        let heap = match t {
            table::SUBSCRIBER => &self.subscriber,
            table::ACCESS_INFO => &self.access_info,
            table::SPECIAL_FACILITY => &self.special_facility,
            table::CALL_FORWARDING => &self.call_forwarding,
            table::SUB_NBR_IDX => return self.sub_nbr.loaded(rid, u64::from(self.cfg.subscribers)),
            _ => return false,
        };
        if !heap.loaded(rid) {
            return false;
        }
        let rpp = u64::from(self.schema.table(t).records_per_page);
        let ord = u64::from(rid.page) * rpp + u64::from(rid.slot);
        let per = match t {
            table::SUBSCRIBER => return true,
            table::CALL_FORWARDING => 12,
            _ => 4,
        };
        let l = self.loaded_rows((ord / per) as u32);
        let k = (ord % per) as u32;
        match t {
            table::ACCESS_INFO => l.ai & (1 << k) != 0,
            table::SPECIAL_FACILITY => l.sf & (1 << k) != 0,
            _ => l.cf & (1 << k) != 0,
        }
    }

    /// Subscribers and their number index load as prefixes; the optional rows' pages have
    /// holes (asked per slot) except beyond the loaded region.
    fn loaded_prefix(&self, table: TableId, page: u32) -> Option<u16> {
        let heap = match table {
            table::SUBSCRIBER => return Some(self.subscriber.loaded_prefix(page)),
            table::SUB_NBR_IDX => {
                let rpp = self.schema.table(table).records_per_page;
                let n = self
                    .sub_nbr
                    .loaded_prefix(page, u64::from(self.cfg.subscribers));
                return Some(n.min(u32::from(rpp)) as u16);
            }
            table::ACCESS_INFO => &self.access_info,
            table::SPECIAL_FACILITY => &self.special_facility,
            table::CALL_FORWARDING => &self.call_forwarding,
            _ => return Some(0),
        };
        (heap.loaded_prefix(page) == 0).then_some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_validates_and_fields_tile_rows() {
        let t = Tatp::new(&TatpConfig::default(), 1).unwrap();
        t.schema().validate().unwrap();
        for def in &t.schema().tables {
            let mut end = 0;
            for f in &def.fields {
                assert_eq!(f.offset, end, "{}.{}", def.name, f.name);
                end += f.len;
            }
            if !def.fields.is_empty() {
                assert_eq!(end, def.record_bytes, "{}", def.name);
            }
        }
    }

    #[test]
    fn loaded_prefix_agrees_with_loaded() {
        let cfg = TatpConfig {
            subscribers: 3_000,
            ..TatpConfig::default()
        };
        crate::db::check_loaded_prefix(&Tatp::new(&cfg, 2).unwrap()).unwrap();
    }

    #[test]
    fn population_matches_the_spec_averages() {
        let t = Tatp::new(&TatpConfig::default(), 3).unwrap();
        let (mut ai, mut sf, mut active, mut cf) = (0u64, 0u64, 0u64, 0u64);
        let p = 100_000u32;
        for s in 0..p {
            let l = t.loaded_rows(s);
            assert!(l.ai != 0 && l.sf != 0 && l.ai < 16 && l.sf < 16);
            // call_forwarding rows only under existing facilities
            for ty in 0..4 {
                if l.sf & (1 << ty) == 0 {
                    assert_eq!((l.cf >> (3 * ty)) & 7, 0);
                }
            }
            ai += u64::from(l.ai.count_ones());
            sf += u64::from(l.sf.count_ones());
            active += u64::from((l.active & l.sf).count_ones());
            cf += u64::from(l.cf.count_ones());
        }
        let p = f64::from(p);
        assert!(
            (ai as f64 / p - 2.5).abs() < 0.02,
            "access_info per subscriber"
        );
        assert!(
            (sf as f64 / p - 2.5).abs() < 0.02,
            "special_facility per subscriber"
        );
        assert!(
            (active as f64 / sf as f64 - 0.85).abs() < 0.01,
            "active share"
        );
        assert!(
            (cf as f64 / sf as f64 - 1.5).abs() < 0.02,
            "call_forwarding per facility"
        );
        // Each ai_type is equally likely (62.5 % present).
        for ty in 0..4 {
            let n = (0..20_000)
                .filter(|&s| t.loaded_rows(s).ai & (1 << ty) != 0)
                .count();
            assert!(
                (n as f64 / 20_000.0 - 0.625).abs() < 0.02,
                "ai_type {ty}: {n}"
            );
        }
        // loaded() agrees with the row model
        let l = t.loaded_rows(17);
        for ty in 0..4u64 {
            let rid = t.special_facility.loaded_rid(17 * 4 + ty);
            assert_eq!(t.loaded(rid), l.sf & (1 << ty) != 0);
        }
    }

    #[test]
    fn mix_failures_and_reads_follow_the_spec() {
        let mut t = Tatp::new(&TatpConfig::default(), 5).unwrap();
        let mut rng = Rng::new(6);
        let n = 200_000u32;
        let mut reads = 0;
        for i in 0..n {
            let s = crate::db::next_serial(&mut t, i, &mut rng);
            s.validate(t.schema()).unwrap();
            if s.ops.iter().all(|o| !o.writes()) && !s.rollback {
                reads += 1;
            }
        }
        for (k, want) in [0.35, 0.10, 0.35, 0.02, 0.14, 0.02, 0.02]
            .iter()
            .enumerate()
        {
            let f = t.generated[k] as f64 / f64::from(n);
            assert!((f - want).abs() < 0.004, "type {k}: {f}");
        }
        let fail = |k: TatpTxn| t.failed[k as usize] as f64 / t.generated[k as usize] as f64;
        assert!((fail(TatpTxn::UpdateSubscriberData) - 0.375).abs() < 0.03);
        assert!((fail(TatpTxn::InsertCallForwarding) - 0.6875).abs() < 0.03);
        assert!((fail(TatpTxn::DeleteCallForwarding) - 0.6875).abs() < 0.03);
        assert_eq!(t.failed[TatpTxn::UpdateLocation as usize], 0);
        let r = f64::from(reads) / f64::from(n);
        assert!((r - 0.80).abs() < 0.005, "read-only share {r}");
    }

    #[test]
    fn subscriber_ids_are_skewed_and_in_range() {
        // Share of draws that land on the 10 % most frequent ids of an earlier, independent
        // sample (so sampling noise does not count as skew).
        fn top_share(t: &mut Tatp, rng: &mut Rng) -> f64 {
            let mut hist = vec![0u32; 100_000];
            for _ in 0..300_000 {
                hist[t.s_index(rng) as usize] += 1;
            }
            let mut ids: Vec<u32> = (0..100_000).collect();
            ids.sort_by_key(|&i| std::cmp::Reverse(hist[i as usize]));
            let mut hot = vec![false; 100_000];
            for &i in &ids[..10_000] {
                hot[i as usize] = true;
            }
            let n = 300_000;
            (0..n).filter(|_| hot[t.s_index(rng) as usize]).count() as f64 / n as f64
        }
        let mut t = Tatp::new(&TatpConfig::default(), 5).unwrap();
        let mut rng = Rng::new(2);
        let skewed = top_share(&mut t, &mut rng);
        t.cfg.nonuniform = false;
        let uniform = top_share(&mut t, &mut rng);
        println!(
            "tatp: hottest 10 % of subscribers get {:.1} % (uniform {:.1} %)",
            skewed * 100.0,
            uniform * 100.0
        );
        assert!(skewed > 0.3, "{skewed}");
        assert!((uniform - 0.1).abs() < 0.01, "{uniform}");
    }

    #[test]
    fn same_seed_same_stream_and_bad_config_names_the_key() {
        let cfg = TatpConfig {
            subscribers: 1000,
            delta_abort: 0.05,
            ..TatpConfig::default()
        };
        let mut a = Tatp::new(&cfg, 9).unwrap();
        let mut b = Tatp::new(&cfg, 9).unwrap();
        let (mut ra, mut rb) = (Rng::new(3), Rng::new(3));
        for i in 0..5000 {
            assert_eq!(
                crate::db::next_serial(&mut a, i, &mut ra),
                crate::db::next_serial(&mut b, i, &mut rb)
            );
        }
        let e = Tatp::new(
            &TatpConfig {
                subscribers: 0,
                ..cfg.clone()
            },
            1,
        )
        .err()
        .unwrap();
        assert!(e.what.contains("workload.tatp.subscribers"));
        let e = Tatp::new(
            &TatpConfig {
                delta_abort: 0.9,
                ..cfg
            },
            1,
        )
        .err()
        .unwrap();
        assert!(e.what.contains("workload.tatp.delta_abort"));
    }
}

#[cfg(test)]
mod golden_stream {
    use super::*;

    /// TATP, TPC-B and the records source generate exactly the streams they did before
    /// the speed-ups of their types (`Changes`, `SetBytes`): digests computed by this test at
    /// commit 623fa3d, then again once TATP's call-forwarding rows were read at execution
    /// (its insert's fill is now drawn unconditionally, which moves the shared stream the
    /// TPC-B and records parts draw from), run serially (`db::next_serial`).
    #[test]
    fn streams_are_unchanged() {
        let mut t = Tatp::new(
            &TatpConfig {
                subscribers: 10_000,
                delta_abort: 0.05,
                ..TatpConfig::default()
            },
            2,
        )
        .unwrap();
        let mut rng = Rng::new(9);
        let specs: Vec<TxnSpec> = (0..3000u32)
            .map(|i| crate::db::next_serial(&mut t, i % 50, &mut rng))
            .collect();
        assert!(specs.iter().any(|s| s.ops.iter().any(|o| matches!(o,
            RecOp::Update { changes, .. } if matches!(changes[0].op, FieldOp::Set(_))))));
        assert_eq!(
            crate::db::stream_digest(&specs),
            0x4fb2_5d9f_d38a_73d2,
            "tatp"
        );
        let mut t = crate::tpcb::Tpcb::new(&crate::tpcb::TpcbConfig {
            branches: 4,
            accounts_per_branch: 10_000,
            delta_abort: 0.05,
            max_txns: 5000,
        })
        .unwrap();
        let specs: Vec<TxnSpec> = (0..3000u32)
            .map(|i| crate::db::next_serial(&mut t, i % 50, &mut rng))
            .collect();
        assert_eq!(
            crate::db::stream_digest(&specs),
            0xbcf2_c4c5_356d_0d63,
            "tpcb"
        );
        let mut t = crate::records::Records::new(&crate::records::RecordsConfig {
            records: 5000,
            ..Default::default()
        })
        .unwrap();
        let specs: Vec<TxnSpec> = (0..3000u32)
            .map(|i| crate::db::next_serial(&mut t, i % 50, &mut rng))
            .collect();
        assert_eq!(
            crate::db::stream_digest(&specs),
            0x29d8_4cf2_3471_9ee4,
            "records"
        );
    }
}
