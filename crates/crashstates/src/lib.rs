//! Crash states of recorded media operations: the one enumeration the device checker
//! (`check` crate), the host checker (`host::check`) and the PCM tier's checkers
//! (`host::pcm_tier`, `host::pcm_check`) share. It sits below all of them (it needs only
//! `sim` and `media`), so the host crate uses it without depending on `check`, which
//! depends on the host through `world`.
//!
//! The model (docs/CRASH-MODEL.md): a *tape* is a list of media operations, each with the
//! instant it began changing the medium and the instant it completed, over one base image
//! per device. A crash state of a tape is
//!
//! - a crash instant `T` from a list of *instants* ([`instants`]: instant 0, every
//!   operation's start and end, and whatever the caller adds, e.g. host issues and acks);
//! - every operation that completed by `T` persisted ([`Sweep`] keeps that image as `T`
//!   grows);
//! - of the operations in progress at `T`, any subset persisted, and at most one more tore
//!   ([`fates_at`], [`torn_variants`]); with two devices in one power domain (a separate log
//!   device) one such fate per device ([`fates_of`]);
//! - nothing that had not started by `T` persisted.
//!
//! Numbering. Exhaustive mode ([`for_each_state`]) numbers the states from 0 in this order:
//! instants ascending; at each, the persisted subsets as bit masks over the in-flight
//! operations (sorted by index) ascending; for each subset first no torn operation, then
//! each not-persisted operation's torn variants in index order; with two devices the data
//! device's fate outer. Random mode ([`for_each_random`]) gives schedule `k` the instant
//! and fate drawn from `root.fork(k)` (one draw for the instant, then
//! [`draw_fates_of`]), and sweeps the schedules in time order in chunks. A state number
//! and a `--state N` replay therefore name the same state in every checker and every
//! release; the order must not change.
//!
//! Crashes inside recovery reuse the same pieces on the recovery's own tape (its base: the
//! crash image it started from; its instants [`recovery_instants`] for the device checker,
//! [`instants`] for the host checker, as each has always numbered them), and
//! [`draw_state`] draws one state of such a tape.
//!
//! PCM line writes and disk page writes tear by words, not as NAND operations do:
//! [`WordFate`], [`word_fates`], [`word_fate_product`] (over reduced lists: [`product_of`])
//! and [`draw_word_fate`] enumerate and draw them.
//!
//! What it does not do: record runs, recover, or judge; the checkers do that with the
//! images this crate hands them.

use media::{LoggedOp, NandImage, OpKind, TornKind};
use sim::{Rng, SimTime};
use std::ops::Range;

/// How to visit the crash states of a recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every state; fails if more than `max_in_flight` operations are ever in progress at once.
    Exhaustive { max_in_flight: usize },
    /// `schedules` states drawn from the seed.
    Random { schedules: u64 },
}

/// One crash state of a tape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrashState {
    pub index: u64,
    pub t: SimTime,
    /// Indices (into the tape) of in-progress operations that persisted.
    pub persisted: Vec<usize>,
    /// An in-progress operation (of the data device, or the only device) that tore, and how.
    pub torn: Option<(usize, TornKind)>,
    /// With a log device: its torn operation (the power cut may tear one on each device).
    pub torn_log: Option<(usize, TornKind)>,
    /// Operations in progress at `t`.
    pub in_flight: Vec<usize>,
}

/// The ways operation `i` (of kind `op`) can tear: a program left uncorrectable, a partial
/// program that cleared only some of its bits (two seeds derived from `i`), an erase that
/// left the block erased but unprogrammable or its pages uncorrectable.
pub fn torn_variants(i: usize, op: &OpKind) -> Vec<TornKind> {
    match op {
        OpKind::Program { .. } => vec![TornKind::Program],
        OpKind::PartialProgram { .. } => vec![
            TornKind::Partial {
                seed: i as u64 * 2 + 1,
            },
            TornKind::Partial {
                seed: i as u64 * 2 + 2,
            },
        ],
        OpKind::Erase { .. } => vec![TornKind::EraseUnstable, TornKind::EraseGarbled],
        OpKind::SetMode { .. } => vec![],
    }
}

/// Each operation's start and end.
pub fn op_times(ops: &[LoggedOp]) -> impl Iterator<Item = SimTime> + '_ {
    ops.iter().flat_map(|o| [o.start, o.end])
}

/// The crash instants: instant 0 and `times`, sorted, without repeats.
pub fn instants(times: impl IntoIterator<Item = SimTime>) -> Vec<SimTime> {
    let mut b = vec![SimTime::ZERO];
    b.extend(times);
    b.sort_unstable();
    b.dedup();
    b
}

/// The device checker's crash instants inside a recovery: its operations' starts and ends,
/// not instant 0 before its first operation (that would only repeat the state recovery
/// started from).
pub fn recovery_instants(ops: &[LoggedOp]) -> Vec<SimTime> {
    let mut b: Vec<SimTime> = op_times(ops).collect();
    b.sort_unstable();
    b.dedup();
    b
}

/// The fate of the operations in flight on one device: those that persisted, and the torn one.
pub type Fate = (Vec<usize>, Option<(usize, TornKind)>);

/// The fate of the operations in flight on a tape of up to two devices: those that
/// persisted, the data device's torn one, the log device's torn one.
pub type DevicesFate = (
    Vec<usize>,
    Option<(usize, TornKind)>,
    Option<(usize, TornKind)>,
);

/// Every fate of the operations `fl` (sorted) in flight at one instant, in numbering order
/// (module docs).
pub fn fates_at(ops: &[LoggedOp], fl: &[usize]) -> Vec<Fate> {
    let mut out = Vec::new();
    for mask in 0u64..(1u64 << fl.len()) {
        let persisted: Vec<usize> = fl
            .iter()
            .enumerate()
            .filter(|(k, _)| mask & (1 << k) != 0)
            .map(|(_, i)| *i)
            .collect();
        let mut torns = vec![None];
        for (k, &i) in fl.iter().enumerate() {
            if mask & (1 << k) == 0 {
                torns.extend(
                    torn_variants(i, &ops[i].kind)
                        .into_iter()
                        .map(|v| Some((i, v))),
                );
            }
        }
        for torn in torns {
            out.push((persisted.clone(), torn));
        }
    }
    out
}

/// Every fate of the operations `fl` in flight on a tape whose log device's operations
/// start at `split`: the product of each device's fates (`fates_at`), data outer. One
/// device (`split` = the tape's length): exactly `fates_at`.
pub fn fates_of(ops: &[LoggedOp], fl: &[usize], split: usize) -> Vec<DevicesFate> {
    let (data, log): (Vec<usize>, Vec<usize>) = fl.iter().partition(|i| **i < split);
    let fd = fates_at(ops, &data);
    if log.is_empty() {
        return fd.into_iter().map(|(p, t)| (p, t, None)).collect();
    }
    let fl_log = fates_at(ops, &log);
    let mut out = Vec::with_capacity(fd.len() * fl_log.len());
    for (pd, td) in &fd {
        for (pl, tl) in &fl_log {
            let mut p = pd.clone();
            p.extend(pl);
            out.push((p, *td, *tl));
        }
    }
    out
}

/// One random fate of the operations `fl` in flight: each persisted with probability 1/2,
/// and with probability 0.3 one of the others torn.
pub fn draw_fates(ops: &[LoggedOp], fl: &[usize], r: &mut Rng) -> Fate {
    let persisted: Vec<usize> = fl.iter().copied().filter(|_| r.chance(0.5)).collect();
    let rest: Vec<usize> = fl
        .iter()
        .copied()
        .filter(|i| !persisted.contains(i))
        .collect();
    let mut torn = None;
    if !rest.is_empty() && r.chance(0.3) {
        let i = rest[r.below(rest.len() as u64) as usize];
        let vs = torn_variants(i, &ops[i].kind);
        if !vs.is_empty() {
            torn = Some((i, vs[r.below(vs.len() as u64) as usize]));
        }
    }
    (persisted, torn)
}

/// One random fate per device (`draw_fates`, data device first; the log device draws
/// nothing when none of its operations is in flight, so one device draws exactly as
/// `draw_fates`).
pub fn draw_fates_of(ops: &[LoggedOp], fl: &[usize], split: usize, r: &mut Rng) -> DevicesFate {
    let (data, log): (Vec<usize>, Vec<usize>) = fl.iter().partition(|i| **i < split);
    let (mut p, td) = draw_fates(ops, &data, r);
    let (pl, tl) = draw_fates(ops, &log, r);
    p.extend(pl);
    (p, td, tl)
}

/// Sweeps crash instants in increasing order over a tape of up to two devices, keeping
/// what persisted for certain and the operations in flight.
pub struct Sweep<'a> {
    ops: &'a [LoggedOp],
    /// `ops[..split]` are the data device's, `ops[split..]` the log device's.
    split: usize,
    by_end: Vec<usize>,
    by_start: Vec<usize>,
    end_pos: usize,
    start_pos: usize,
    /// Per device (data, then log): what has persisted for certain.
    durable: Vec<NandImage>,
    /// The operations in progress at the last instant advanced to, sorted.
    pub in_flight: Vec<usize>,
}

impl<'a> Sweep<'a> {
    /// A sweep over any tape: a run's operations from its base images (one per device, the
    /// log device's operations from `split` on), or a recovery's from the crash images it
    /// started on.
    pub fn over(bases: Vec<NandImage>, ops: &'a [LoggedOp], split: usize) -> Sweep<'a> {
        let mut by_end: Vec<usize> = (0..ops.len()).collect();
        by_end.sort_by_key(|i| (ops[*i].end, *i));
        let mut by_start: Vec<usize> = (0..ops.len()).collect();
        by_start.sort_by_key(|i| (ops[*i].start, *i));
        Sweep {
            ops,
            split,
            by_end,
            by_start,
            end_pos: 0,
            start_pos: 0,
            durable: bases,
            in_flight: Vec::new(),
        }
    }

    /// A sweep over the tape of one device.
    pub fn one(base: &NandImage, ops: &'a [LoggedOp]) -> Sweep<'a> {
        Sweep::over(vec![base.clone()], ops, ops.len())
    }

    /// The tape.
    pub fn ops(&self) -> &'a [LoggedOp] {
        self.ops
    }

    /// Where the log device's operations begin (the tape's length with one device).
    pub fn split(&self) -> usize {
        self.split
    }

    /// The device operation `i` ran on (0: data, 1: log).
    fn dev(&self, i: usize) -> usize {
        usize::from(i >= self.split)
    }

    /// Moves to instant `t` (not before the last one).
    pub fn advance(&mut self, t: SimTime) -> Result<(), String> {
        let ops = self.ops;
        while self.start_pos < self.by_start.len() && ops[self.by_start[self.start_pos]].start <= t
        {
            self.in_flight.push(self.by_start[self.start_pos]);
            self.start_pos += 1;
        }
        while self.end_pos < self.by_end.len() && ops[self.by_end[self.end_pos]].end <= t {
            let i = self.by_end[self.end_pos];
            let d = self.dev(i);
            self.durable[d]
                .apply(&ops[i].kind)
                .map_err(|e| format!("internal: replaying op {i} ({}): {e}", ops[i].kind.name()))?;
            self.end_pos += 1;
        }
        self.in_flight.retain(|i| ops[*i].end > t);
        self.in_flight.sort_unstable();
        Ok(())
    }

    /// The crash images, one per device: what persisted for certain, then the in-flight
    /// operations `persisted`, then the torn ones.
    pub fn image(
        &self,
        persisted: &[usize],
        torn: &[(usize, TornKind)],
    ) -> Result<Vec<NandImage>, String> {
        let mut img = self.durable.clone();
        for &i in persisted {
            img[self.dev(i)]
                .apply(&self.ops[i].kind)
                .map_err(|e| format!("internal: applying in-flight op {i}: {e}"))?;
        }
        for &(i, k) in torn {
            img[self.dev(i)]
                .apply_torn(&self.ops[i].kind, k)
                .map_err(|e| format!("internal: tearing op {i}: {e}"))?;
        }
        Ok(img)
    }

    /// The crash images of state `s`.
    pub fn state_image(&self, s: &CrashState) -> Result<Vec<NandImage>, String> {
        let torn: Vec<(usize, TornKind)> = s.torn.into_iter().chain(s.torn_log).collect();
        self.image(&s.persisted, &torn)
    }

    /// The crash image of state `s` of a one-device tape.
    pub fn state_image_one(&self, s: &CrashState) -> Result<NandImage, String> {
        let mut v = self.state_image(s)?;
        v.truncate(1);
        v.pop()
            .ok_or_else(|| "internal: a sweep without a base image".to_string())
    }
}

/// Calls `f` for every crash state of `sweep`'s tape over the instants `bounds`, numbered
/// from 0 (module docs, "Numbering"). `f` returns false to stop. More than `max_in_flight`
/// operations in progress at one instant is an error, worded by `too_many(in flight, t)`.
/// Returns the most operations in flight at once.
pub fn for_each_state(
    sweep: &mut Sweep<'_>,
    bounds: &[SimTime],
    max_in_flight: usize,
    too_many: &dyn Fn(usize, SimTime) -> String,
    f: &mut dyn FnMut(&Sweep<'_>, CrashState) -> Result<bool, String>,
) -> Result<usize, String> {
    let mut index = 0u64;
    let mut seen = 0;
    let (ops, split) = (sweep.ops, sweep.split);
    for &t in bounds {
        sweep.advance(t)?;
        let fl = sweep.in_flight.clone();
        seen = seen.max(fl.len());
        if fl.len() > max_in_flight {
            return Err(too_many(fl.len(), t));
        }
        for (persisted, torn, torn_log) in fates_of(ops, &fl, split) {
            let state = CrashState {
                index,
                t,
                persisted,
                torn,
                torn_log,
                in_flight: fl.clone(),
            };
            index += 1;
            if !f(sweep, state)? {
                return Ok(seen);
            }
        }
    }
    Ok(seen)
}

/// The random schedules `range` of a tape (`bases`, `ops`, `split` as for [`Sweep::over`])
/// over the instants `bounds`: schedule `k` crashes at the instant drawn first from
/// `root.fork(k)`, with the fate [`draw_fates_of`] draws after one more draw from the same
/// stream. The schedules are swept in time order, `chunk` at a time (a fresh sweep per
/// chunk, so memory does not grow with the range). `f` gets each state and returns false
/// to stop. Returns the most operations in flight at once.
#[allow(clippy::too_many_arguments)]
pub fn for_each_random(
    bases: &[NandImage],
    ops: &[LoggedOp],
    split: usize,
    bounds: &[SimTime],
    root: &Rng,
    range: Range<u64>,
    chunk: u64,
    f: &mut dyn FnMut(&Sweep<'_>, CrashState) -> Result<bool, String>,
) -> Result<usize, String> {
    let mut seen = 0;
    let mut lo = range.start;
    while lo < range.end {
        let hi = lo.saturating_add(chunk.max(1)).min(range.end);
        // Draw this chunk's instants, then sweep them in time order.
        let plan = random_plan(root, lo..hi, bounds);
        let mut sweep = Sweep::over(bases.to_vec(), ops, split);
        for (t, k) in plan {
            sweep.advance(t)?;
            let fl = sweep.in_flight.clone();
            seen = seen.max(fl.len());
            let mut r = root.fork(&k.to_string());
            r.next_u64();
            let (persisted, torn, torn_log) = draw_fates_of(ops, &fl, split, &mut r);
            let state = CrashState {
                index: k,
                t,
                persisted,
                torn,
                torn_log,
                in_flight: fl,
            };
            if !f(&sweep, state)? {
                return Ok(seen);
            }
        }
        lo = hi;
    }
    Ok(seen)
}

/// The crash instants of random schedules `range`: schedule `k`'s is drawn first from
/// `root.fork(k)` among `bounds`. Sorted by (instant, schedule), the order they are swept in.
pub fn random_plan(root: &Rng, range: Range<u64>, bounds: &[SimTime]) -> Vec<(SimTime, u64)> {
    let mut plan: Vec<(SimTime, u64)> = range
        .map(|k| {
            let mut r = root.fork(&k.to_string());
            (bounds[r.below(bounds.len() as u64) as usize], k)
        })
        .collect();
    plan.sort_unstable();
    plan
}

/// The writes (given as their start and end) in progress at `t`, in index order.
pub fn in_flight_at(spans: impl IntoIterator<Item = (SimTime, SimTime)>, t: SimTime) -> Vec<usize> {
    spans
        .into_iter()
        .enumerate()
        .filter(|(_, (start, end))| *start <= t && t < *end)
        .map(|(i, _)| i)
        .collect()
}

/// One crash state of a tape (a recovery's, for a crash inside it) drawn from `r`: the
/// instant from `bounds`, then the fate ([`draw_fates_of`]). Returns the state, numbered
/// `index`, and its images.
pub fn draw_state(
    bases: Vec<NandImage>,
    ops: &[LoggedOp],
    split: usize,
    bounds: &[SimTime],
    r: &mut Rng,
    index: u64,
) -> Result<(CrashState, Vec<NandImage>), String> {
    let t = bounds[r.below(bounds.len() as u64) as usize];
    let mut sweep = Sweep::over(bases, ops, split);
    sweep.advance(t)?;
    let fl = sweep.in_flight.clone();
    let (persisted, torn, torn_log) = draw_fates_of(ops, &fl, split, r);
    let state = CrashState {
        index,
        t,
        persisted,
        torn,
        torn_log,
        in_flight: fl,
    };
    let img = sweep.state_image(&state)?;
    Ok((state, img))
}

/// The fate of one in-flight PCM line write or disk page write: not persisted, persisted,
/// or torn, keeping the words (slots) of the mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordFate {
    Lost,
    Done,
    Torn(u64),
}

/// The mask of a write's `words` words (all 64 bits from 64 words on).
pub fn word_mask(words: u32) -> u64 {
    if words >= 64 {
        u64::MAX
    } else {
        (1u64 << words) - 1
    }
}

/// The fates exhaustive checking tries for a write of `words` words: lost, done, and (of
/// more than one word) torn keeping its first half or every other word.
pub fn word_fates(words: u32) -> Vec<WordFate> {
    let mut v = vec![WordFate::Lost, WordFate::Done];
    if words > 1 {
        let all = word_mask(words);
        v.push(WordFate::Torn(all >> (words.min(64) / 2).max(1)));
        v.push(WordFate::Torn(0x5555_5555_5555_5555 & all));
    }
    v
}

/// Every combination of `word_fates` of writes of `words` words (the first write's fate
/// outermost), or `Err(n)` as soon as there would be `n` > `limit` of them.
pub fn word_fate_product(words: &[u32], limit: usize) -> Result<Vec<Vec<WordFate>>, usize> {
    let lists: Vec<Vec<WordFate>> = words.iter().map(|&w| word_fates(w)).collect();
    product_of(&lists, limit)
}

/// Every combination of one fate from each of `lists` (the first list's fate outermost,
/// each list in its order), or `Err(n)` as soon as there would be `n` > `limit` of them:
/// `word_fate_product` over fate lists a caller has already reduced (e.g. the PCM tier's
/// exhaustive sweep, which keeps only the fates of a write that leave distinct images).
pub fn product_of(lists: &[Vec<WordFate>], limit: usize) -> Result<Vec<Vec<WordFate>>, usize> {
    let mut all: Vec<Vec<WordFate>> = vec![vec![]];
    for fs in lists {
        let mut next = Vec::new();
        for c in &all {
            for &f in fs {
                let mut c2 = c.clone();
                c2.push(f);
                next.push(c2);
            }
        }
        all = next;
        if all.len() > limit {
            return Err(all.len());
        }
    }
    Ok(all)
}

/// A random fate of a write of `words` words: lost, done or torn with probability 1/3 each,
/// a torn write keeping a uniformly drawn subset of its words.
pub fn draw_word_fate(r: &mut Rng, words: u32) -> WordFate {
    match r.below(3) {
        0 => WordFate::Lost,
        1 => WordFate::Done,
        _ => WordFate::Torn(r.next_u64() & word_mask(words)),
    }
}

#[cfg(test)]
mod tests;
