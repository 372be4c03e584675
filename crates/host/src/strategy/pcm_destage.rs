//! PCMLogging's destaging: the cost-based adaptive policy (PCMLogging §5.2) as pure
//! functions, the high-low watermark (§5.1), and the one destage engine record- and
//! page-level PCMLogging share (`Destages`, driven through `DestageCore` by `until_free` and
//! `start_destages`).
//!
//! The PCM is split into segments; state k ≤ M means k segments of the M free ones at the
//! start of destaging are used, state M+i means pending writes exceed PCM by i segments.
//! Birth rates λ_k = f(k)·λ0 (k < M), f(M)·λ0 beyond; death rates μ_k = g(k)·μ0 (k < M),
//! μ_max beyond. With ρ = λ0/μ0 and a = λ_M/μ_max (< 1), Eq. (4)–(6) give the stationary
//! distribution and Eq. (1) the destaging cost; μ0 = λ0/ρ for the ρ of a grid over (0, 1)
//! that minimises the cost (the paper's "interval of 0.001").
//!
//! Worth knowing when reading results: by the birth-death balance μ_{k-1}P_k = λ_{k-1}P_{k-1},
//! Eq. (1) equals Σ_k λ_k P_k, the mean arrival rate; with f ≡ 1 it is λ0 for every ρ and
//! the optimum is a tie (the grid's first point, the most aggressive destaging, wins). Only
//! a measured f(k) that varies with occupancy makes the choice non-trivial.
//!
//! `Adaptive` applies the model in a running PCM strategy (`pcmlogging`, `pcmlogging-page`
//! with `host.pcm.destage = "adaptive"`): it measures λ_k at run time as the net growth of
//! PCM occupancy per second while in state k (units allocated less units freed by anything
//! but destaging: a write that replaces a cached version is a hit and costs no space), takes
//! f(k) = λ_k/λ0 (1 for a state not yet visited), g(k) = 1 (§6.1), μ_max = the disk's random
//! destage rate (one destage per read + write time for records, per write time for pages,
//! times the space a destage frees on average), and destages at μ0 = min(λ0/ρ*, μ_max)
//! while in states 1…M: after a destage that frees `u` units, the next may start
//! `u / μ0` later. M is the number of segments in 2.5 % of the PCM (§6.4: "starts the
//! destaging process when there is about 2.5 percent of free PCM space left"). In the
//! overflow states (PCM full) a flush waits for destages at full rate (the cores'
//! `destage_until_free`), which is μ_max.

use sim::SimTime;

/// §6.4: destaging starts when about this fraction of the PCM is free.
pub const START_FREE: f64 = 0.025;
/// How often μ0 is recomputed from the measurements (simulated time).
const RECOMPUTE_NS: u64 = 10_000_000;

/// The runtime side of the adaptive policy: measurements and the rate in force.
#[derive(Clone, Debug)]
pub struct Adaptive {
    /// Space units of the PCM the strategy allocates from.
    pub total_units: u64,
    /// Units per segment (640 KiB by default, fewer on a PCM smaller than 40 segments).
    pub seg_units: u64,
    /// M: segments of free space at which destaging starts.
    pub m: usize,
    /// Disk service time of one destage, ns.
    destage_ns: u64,
    /// Time spent and net units born per state 0..=M.
    time_ns: Vec<u64>,
    births: Vec<i64>,
    last_t: SimTime,
    last_state: usize,
    last_used: u64,
    last_freed: u64,
    destages: u64,
    destaged_units: u64,
    next_at: SimTime,
    recomputed_at: Option<SimTime>,
    /// The rate in force, units per second (None: not computed yet, full rate).
    pub mu0_units_per_s: Option<f64>,
    /// ρ of the last optimisation (0 when it fell back to μ_max).
    pub rho: f64,
    pub recomputations: u64,
    pub fallbacks: u64,
}

impl Adaptive {
    /// `segment_bytes`: the model's segment; on a PCM with fewer than 40 segments it is
    /// shrunk to 1/40 of the PCM (at least one unit), so M ≥ 1 keeps its 2.5 % meaning.
    pub fn new(total_units: u64, unit_bytes: u64, segment_bytes: u64, destage_ns: u64) -> Adaptive {
        let seg_bytes = segment_bytes.min(total_units * unit_bytes / 40);
        let seg_units = (seg_bytes / unit_bytes.max(1)).max(1);
        let segs = total_units / seg_units;
        let m = ((segs as f64 * START_FREE).round() as usize).max(1);
        Adaptive {
            total_units,
            seg_units,
            m,
            destage_ns: destage_ns.max(1),
            time_ns: vec![0; m + 1],
            births: vec![0; m + 1],
            last_t: SimTime::ZERO,
            last_state: 0,
            last_used: 0,
            last_freed: 0,
            destages: 0,
            destaged_units: 0,
            next_at: SimTime::ZERO,
            recomputed_at: None,
            mu0_units_per_s: None,
            rho: 0.0,
            recomputations: 0,
            fallbacks: 0,
        }
    }

    /// State k of §5.2 for `free` units: 0 with at least M free segments, M with less than
    /// one.
    pub fn state(&self, free: u64) -> usize {
        let free_segs = (free / self.seg_units) as usize;
        self.m - free_segs.min(self.m)
    }

    /// Accounts the time since the last call to the state then, and the net units born:
    /// `used` units occupied now, `destage_freed` units freed by destaging so far.
    pub fn observe(&mut self, now: SimTime, used: u64, destage_freed: u64) {
        let dt = now.as_ns().saturating_sub(self.last_t.as_ns());
        self.time_ns[self.last_state] += dt;
        let born = used as i64 - self.last_used as i64 + (destage_freed - self.last_freed) as i64;
        self.births[self.last_state] += born;
        self.last_t = self.last_t.max(now);
        self.last_used = used;
        self.last_freed = destage_freed;
        self.last_state = self.state(self.total_units.saturating_sub(used));
    }

    /// λ_k in units per second (None: state not visited or no net arrivals measured).
    fn lambda(&self, k: usize) -> Option<f64> {
        (self.time_ns[k] > 0 && self.births[k] > 0)
            .then(|| self.births[k] as f64 / (self.time_ns[k] as f64 / 1e9))
    }

    /// μ_max in units per second: one destage per service time, freeing the mean space a
    /// destage has freed so far (one unit before the first).
    fn mu_max(&self) -> f64 {
        let per = if self.destages == 0 {
            1.0
        } else {
            self.destaged_units as f64 / self.destages as f64
        };
        1e9 / self.destage_ns as f64 * per.max(1.0)
    }

    /// Re-derives μ0 = λ0/ρ* from the measurements (Eq. 1–6), capped at μ_max.
    pub fn recompute(&mut self) {
        self.recomputations += 1;
        let mu_max = self.mu_max();
        let Some(l0) = self.lambda(0) else {
            self.fallbacks += 1;
            self.mu0_units_per_s = Some(mu_max);
            self.rho = 0.0;
            return;
        };
        let f: Vec<f64> = (0..=self.m)
            .map(|k| self.lambda(k).map_or(1.0, |l| l / l0))
            .collect();
        let g = vec![1.0; self.m];
        // In segments per second, as the model states them.
        let seg = self.seg_units as f64;
        match optimal_mu0(l0 / seg, &f, &g, mu_max / seg, 0.001) {
            Some((rho, mu0, _)) => {
                self.rho = rho;
                self.mu0_units_per_s = Some((mu0 * seg).min(mu_max));
            }
            None => {
                // a = f(M)·λ0/μ_max ≥ 1: the overflow states never drain; destage flat out.
                self.fallbacks += 1;
                self.rho = 0.0;
                self.mu0_units_per_s = Some(mu_max);
            }
        }
    }

    /// The decision at `now` with `free` units free (pending destages' units counted free).
    pub fn decide(&mut self, now: SimTime, free: u64) -> Decision {
        if self.state(free) == 0 {
            return Decision::Idle;
        }
        if self
            .recomputed_at
            .is_none_or(|t| now.as_ns() >= t.as_ns() + RECOMPUTE_NS)
        {
            self.recompute();
            self.recomputed_at = Some(now);
        }
        if now >= self.next_at {
            Decision::Destage
        } else {
            Decision::Wait(self.next_at)
        }
    }

    /// A destage issued at `now` will free `units`: the next may start `units / μ0` later.
    pub fn issued(&mut self, now: SimTime, units: u64) {
        self.destages += 1;
        self.destaged_units += units;
        let mu0 = self.mu0_units_per_s.unwrap_or_else(|| self.mu_max());
        let gap = (units.max(1) as f64 / mu0 * 1e9).ceil() as u64;
        self.next_at = now + gap;
    }
}

/// What the adaptive destager does now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// State 0: at least M segments free.
    Idle,
    Destage,
    /// Destaging, but the rate μ0 allows the next one only then.
    Wait(SimTime),
}

/// Destage I/Os (disk reads and writes a destage issues) per interval of simulated time,
/// for Fig. 12b.
#[derive(Clone, Debug, Default)]
pub struct DestageSeries {
    pub interval_ns: u64,
    pub ios: Vec<u64>,
}

impl DestageSeries {
    pub fn new(interval_ns: u64) -> DestageSeries {
        DestageSeries {
            interval_ns: interval_ns.max(1),
            ios: Vec::new(),
        }
    }

    pub fn add(&mut self, at: SimTime, ios: u64) {
        let i = (at.as_ns() / self.interval_ns) as usize;
        if self.ios.len() <= i {
            self.ios.resize(i + 1, 0);
        }
        self.ios[i] += ios;
    }

    /// (intervals, max, mean×100, standard deviation×100) over the intervals from the first
    /// destage to the last.
    pub fn summary(&self) -> (u64, u64, u64, u64) {
        let first = self
            .ios
            .iter()
            .position(|&x| x > 0)
            .unwrap_or(self.ios.len());
        let v = &self.ios[first..];
        if v.is_empty() {
            return (0, 0, 0, 0);
        }
        let n = v.len() as f64;
        let mean = v.iter().sum::<u64>() as f64 / n;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
        (
            v.len() as u64,
            *v.iter().max().unwrap_or(&0),
            (mean * 100.0).round() as u64,
            (var.sqrt() * 100.0).round() as u64,
        )
    }
}

/// The destaging counters of a PCM strategy: the Fig. 12b series' summary and, when
/// adaptive, the rate in force.
pub fn counters(series: &DestageSeries, a: Option<&Adaptive>) -> Vec<(&'static str, u64)> {
    let (n, max, mean, sd) = series.summary();
    let mut v = vec![
        ("destage_io_intervals", n),
        ("destage_io_per_interval_max", max),
        ("destage_io_per_interval_mean_x100", mean),
        ("destage_io_per_interval_sd_x100", sd),
    ];
    if let Some(a) = a {
        v.extend([
            ("destage_adaptive_m", a.m as u64),
            ("destage_adaptive_seg_units", a.seg_units),
            (
                "destage_adaptive_rho_x1000",
                (a.rho * 1000.0).round() as u64,
            ),
            (
                "destage_adaptive_mu0_units_per_s",
                a.mu0_units_per_s.unwrap_or(0.0).round() as u64,
            ),
            ("destage_adaptive_recomputations", a.recomputations),
            ("destage_adaptive_fallbacks", a.fallbacks),
        ]);
    }
    v
}

/// The high-low watermark policy (§5.1, [25]): start destaging when occupancy reaches
/// `high`, keep going until it is below `low`. Returns whether to destage now.
pub fn watermark(used: u64, total: u64, destaging: bool, high: f64, low: f64) -> bool {
    let occ = used as f64 / total.max(1) as f64;
    if destaging {
        occ >= low
    } else {
        occ >= high
    }
}

/// The destage engine of the PCM tier, one for record-level (`pcmlogging`) and page-level
/// (`pcmlogging-page`) PCMLogging: the destages in flight and the PCM units they carry, the
/// policy state (high-low watermark §5.1 or `Adaptive` §5.2) and the Fig. 12b series. A
/// destage writes one page to the external disk; the units it carries stay valid until
/// that write completed (§6.1 "asynchronously flushed out"), then are freed by the core
/// (`DestageCore::complete_destages`, from `Destages::complete`). Keys are what a unit
/// holds: a record (`Rid`) or a page.
pub struct Destages<K> {
    /// Destages whose disk write is in flight: (write end, destage id, keys it frees), in
    /// issue order (the disk is FIFO).
    pending: std::collections::VecDeque<(SimTime, u64, Vec<K>)>,
    /// Per key in a pending destage: the committed unit it destaged and the destage's id.
    /// A commit that frees that unit first removes the entry (`forget`), so a completion
    /// never frees a unit that was reused, nor one a later destage of the same key carries
    /// (found by the pcm_check crash checker, tiny seed 2: destage 1 of page 2 freed the
    /// unit destage 2 had merged, before destage 2's write completed). Looked up by key
    /// only, never iterated.
    carried: hashbrown::HashMap<K, (u64, u64), crate::lock::FixedHash>,
    ids: u64,
    /// Units carried by pending destages (the policies count them as free).
    pending_units: u64,
    /// Units freed by completed destages so far (the adaptive policy's birth measurement).
    freed: u64,
    /// Watermark: between crossing the high mark and falling below the low one.
    destaging: bool,
    /// The adaptive destager (§5.2), when configured.
    pub adaptive: Option<Adaptive>,
    /// Destage disk I/Os per interval (Fig. 12b).
    pub series: DestageSeries,
}

impl<K: std::hash::Hash + Eq + Copy> Destages<K> {
    pub fn new(adaptive: Option<Adaptive>, interval_ns: u64) -> Destages<K> {
        Destages {
            pending: Default::default(),
            carried: Default::default(),
            ids: 0,
            pending_units: 0,
            freed: 0,
            destaging: false,
            adaptive,
            series: DestageSeries::new(interval_ns),
        }
    }

    /// The id of the destage about to be issued.
    pub fn next_id(&mut self) -> u64 {
        self.ids += 1;
        self.ids
    }

    /// Whether a pending destage carries `key` already.
    pub fn carries(&self, key: &K) -> bool {
        self.carried.contains_key(key)
    }

    /// Destage `id` carries `key`'s committed `unit`.
    pub fn carry(&mut self, key: K, unit: u64, id: u64) {
        self.carried.insert(key, (unit, id));
    }

    /// Destage `id`, issued at `now` with `ios` disk I/Os, ends at `end` and frees `keys`.
    pub fn issue(&mut self, now: SimTime, end: SimTime, id: u64, keys: Vec<K>, ios: u64) {
        self.series.add(now, ios);
        self.pending_units += keys.len() as u64;
        self.pending.push_back((end, id, keys));
    }

    /// `unit` of `key` is freed by someone else (a commit replaced it): a pending destage
    /// carrying it no longer frees it.
    pub fn forget(&mut self, key: &K, unit: u64) {
        if self.carried.get(key).map(|x| x.0) == Some(unit) {
            self.carried.remove(key);
            self.pending_units -= 1;
        }
    }

    /// `key`'s committed version moved from unit `from` to `to` (wear leveling, §4.2): a
    /// pending destage carrying it frees the new unit.
    pub fn moved(&mut self, key: &K, from: u64, to: u64) {
        if let Some(x) = self.carried.get_mut(key) {
            if x.0 == from {
                x.0 = to;
            }
        }
    }

    /// When the oldest pending destage's write ends.
    pub fn next_end(&self) -> Option<SimTime> {
        self.pending.front().map(|p| p.0)
    }

    /// Takes the destages whose write completed by `now` (all of them when `early`, a
    /// planted bug): the (key, unit) pairs they free, in issue order.
    pub fn complete(&mut self, now: SimTime, early: bool) -> Vec<(K, u64)> {
        let mut out = Vec::new();
        while self
            .pending
            .front()
            .is_some_and(|(end, _, _)| *end <= now || early)
        {
            let (_, id, keys) = self.pending.pop_front().expect("front");
            for k in keys {
                let Some(&(u, kid)) = self.carried.get(&k) else {
                    continue;
                };
                if kid != id {
                    continue;
                }
                self.carried.remove(&k);
                self.pending_units -= 1;
                self.freed += 1;
                out.push((k, u));
            }
        }
        out
    }

    /// The destaging counters: the Fig. 12b series' summary and the adaptive rate.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        counters(&self.series, self.adaptive.as_ref())
    }
}

/// What the destage engine drives in a PCM core: its occupancy, and the start and
/// completion of one destage.
pub trait DestageCore {
    type Key: std::hash::Hash + Eq + Copy;
    fn destages(&mut self) -> &mut Destages<Self::Key>;
    /// (units used, units in all, high watermark, low watermark).
    fn occupancy(&self) -> (u64, u64, f64, f64);
    /// `now`, or later if the core's clock is past it.
    fn at(&self, now: SimTime) -> SimTime;
    /// Starts the destage of the oldest committed key not already being destaged; returns
    /// its write's end, or None when nothing is committed.
    fn destage_one(&mut self, now: SimTime) -> Result<Option<SimTime>, String>;
    /// Frees the units of destages whose disk write completed by `now`; returns when the
    /// frees are issued.
    fn complete_destages(&mut self, now: SimTime) -> Result<SimTime, String>;
}

/// PCM is full: wait for (or start) destages until a unit is free. `what` names the
/// units for the error when nothing can be destaged.
pub fn until_free<C: DestageCore>(c: &mut C, now: SimTime, what: &str) -> Result<SimTime, String> {
    let mut t = now;
    loop {
        let (used, total, _, _) = c.occupancy();
        if used < total {
            return Ok(t);
        }
        if let Some(end) = c.destages().next_end() {
            t = t.max(end);
            t = c.complete_destages(t)?;
            continue;
        }
        if c.destage_one(t)?.is_none() {
            return Err(format!(
                "pcm full of uncommitted {what} (nothing to destage)"
            ));
        }
    }
}

/// Between events, after the completed destages were freed (at `t`): start new ones under
/// the adaptive policy (§5.2: at the rate μ0 while fewer than M segments are free) or the
/// high-low watermark (§5.1); units of pending destages count as free. Returns `t`, or
/// when the last watermark destage was issued.
pub fn start_destages<C: DestageCore>(
    c: &mut C,
    now: SimTime,
    mut t: SimTime,
) -> Result<SimTime, String> {
    if let Some(mut a) = c.destages().adaptive.take() {
        let r = adaptive_destages(c, &mut a, now);
        c.destages().adaptive = Some(a);
        return r.map(|()| t);
    }
    loop {
        let (used, total, high, low) = c.occupancy();
        let d = c.destages();
        d.destaging = watermark(used - d.pending_units, total, d.destaging, high, low);
        if !d.destaging {
            return Ok(t);
        }
        match c.destage_one(t)? {
            Some(_) => t = c.at(now),
            None => {
                c.destages().destaging = false;
                return Ok(t);
            }
        }
    }
}

fn adaptive_destages<C: DestageCore>(
    c: &mut C,
    a: &mut Adaptive,
    now: SimTime,
) -> Result<(), String> {
    let (used, _, _, _) = c.occupancy();
    a.observe(now, used, c.destages().freed);
    loop {
        let (used, total, _, _) = c.occupancy();
        let before = c.destages().pending_units;
        let free = total - (used - before);
        if a.decide(now, free) != Decision::Destage {
            return Ok(());
        }
        let at = c.at(now);
        if c.destage_one(at)?.is_none() {
            return Ok(());
        }
        a.issued(now, c.destages().pending_units - before);
    }
}

/// The product Π_{i<k} f(i)/g(i) · ρ^k for k = 0..=M.
fn weights(rho: f64, f: &[f64], g: &[f64]) -> Vec<f64> {
    let m = g.len();
    let mut w = Vec::with_capacity(m + 1);
    let mut acc = 1.0;
    w.push(acc);
    for i in 0..m {
        acc *= f[i] / g[i] * rho;
        w.push(acc);
    }
    w
}

/// P0 and the cost of Eq. (1) at `rho`, for `f` of length M+1 and `g` of length M ≥ 1.
/// None when the overflow states do not drain (a = f(M)·λ0/μ_max ≥ 1) or inputs are bad.
pub fn cost_at(rho: f64, lambda0: f64, f: &[f64], g: &[f64], mu_max: f64) -> Option<(f64, f64)> {
    let m = g.len();
    if m == 0 || f.len() != m + 1 || !(rho > 0.0 && rho < 1.0) || lambda0 <= 0.0 || mu_max <= 0.0 {
        return None;
    }
    if g.iter().any(|&x| x <= 0.0) || f.iter().any(|&x| x < 0.0) {
        return None;
    }
    let a = f[m] * lambda0 / mu_max;
    if a >= 1.0 {
        return None;
    }
    let w = weights(rho, f, g);
    let p0 = 1.0 / (w.iter().sum::<f64>() + w[m] * a / (1.0 - a));
    let mu0 = lambda0 / rho;
    let mut cost = 0.0;
    for k in 1..=m {
        cost += g[k - 1] * mu0 * p0 * w[k];
    }
    cost += mu_max * p0 * w[m] * a / (1.0 - a);
    Some((p0, cost))
}

/// The grid point ρ = step, 2·step, … < 1 of least cost, with μ0 = λ0/ρ and the cost.
pub fn optimal_mu0(
    lambda0: f64,
    f: &[f64],
    g: &[f64],
    mu_max: f64,
    step: f64,
) -> Option<(f64, f64, f64)> {
    if !(step > 0.0 && step < 1.0) {
        return None;
    }
    let mut best: Option<(f64, f64, f64)> = None;
    let n = (1.0 / step).ceil() as u64;
    for i in 1..n {
        let rho = i as f64 * step;
        if rho >= 1.0 {
            break;
        }
        let (_, c) = cost_at(rho, lambda0, f, g, mu_max)?;
        if best.is_none_or(|b| c < b.2 - 1e-12) {
            best = Some((rho, lambda0 / rho, c));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hand computations, M = 1, λ0 = 1, μ_max = 4, g = [1].
    // f = [1, 2]: a = 1/2, P0 = 1/(1 + ρ + ρ) = 1/(1+2ρ), cost = μ0·P1 + μmax·P1·a/(1-a)
    //   = (1/ρ)(ρ P0) + 4 ρ P0 = (1 + 4ρ)/(1 + 2ρ); at ρ = 0.5: 3/2.
    #[test]
    fn cost_by_hand_rising_f() {
        let (p0, c) = cost_at(0.5, 1.0, &[1.0, 2.0], &[1.0], 4.0).unwrap();
        assert!((p0 - 0.5).abs() < 1e-12);
        assert!((c - 1.5).abs() < 1e-12);
        // Cost rises with ρ: the most aggressive grid point wins.
        let (rho, mu0, c) = optimal_mu0(1.0, &[1.0, 2.0], &[1.0], 4.0, 0.001).unwrap();
        assert!((rho - 0.001).abs() < 1e-12);
        assert!((mu0 - 1000.0).abs() < 1e-6);
        assert!((c - 1.004 / 1.002).abs() < 1e-9);
    }

    // f = [1, 0.5]: a = 1/8, P0 = 1/(1 + ρ + ρ/7) = 7/(7 + 8ρ), cost = P0 (1 + 4ρ/7)
    //   = (7 + 4ρ)/(7 + 8ρ): falls with ρ, so the laziest grid point wins; at ρ = 0.5: 9/11.
    #[test]
    fn cost_by_hand_falling_f() {
        let (p0, c) = cost_at(0.5, 1.0, &[1.0, 0.5], &[1.0], 4.0).unwrap();
        assert!((p0 - 7.0 / 11.0).abs() < 1e-12);
        assert!((c - 9.0 / 11.0).abs() < 1e-12);
        let (rho, _, _) = optimal_mu0(1.0, &[1.0, 0.5], &[1.0], 4.0, 0.001).unwrap();
        assert!((rho - 0.999).abs() < 1e-9);
    }

    #[test]
    fn adaptive_states_by_hand() {
        // 128 MiB of 128 B units, 640 KiB segments: 204 segments, M = round(5.1) = 5.
        let a = Adaptive::new(1 << 20, 128, 640 << 10, 16_250_000);
        assert_eq!((a.seg_units, a.m), (5120, 5));
        assert_eq!(a.state(5 * 5120), 0);
        assert_eq!(a.state(5 * 5120 - 1), 1);
        assert_eq!(a.state(5119), 5);
        // A tiny PCM: segments shrink to 1/40 of it.
        let t = Adaptive::new(400, 128, 640 << 10, 1);
        assert_eq!((t.seg_units, t.m), (10, 1));
    }

    #[test]
    fn adaptive_rate_from_measurements_by_hand() {
        // 400 units, segments of 10, M = 1. 1 s in state 0 with 100 units born: λ0 = 100/s
        // = 10 segments/s; state 1 unvisited: f = [1, 1], a tie, ρ = 0.001 → μ0 = 1000 λ0,
        // capped at μ_max = 1 destage per 10 ms × 1 unit = 100 units/s.
        let mut a = Adaptive::new(400, 128, 640 << 10, 10_000_000);
        a.observe(SimTime::ZERO, 0, 0);
        a.observe(SimTime(1_000_000_000), 100, 0);
        assert_eq!(a.decide(SimTime(1_000_000_000), 500), Decision::Idle);
        assert_eq!(a.decide(SimTime(1_000_000_000), 5), Decision::Destage);
        assert!((a.mu0_units_per_s.unwrap() - 100.0).abs() < 1e-9);
        a.issued(SimTime(1_000_000_000), 2);
        // 2 units at 100 units/s: the next destage 20 ms later.
        assert_eq!(
            a.decide(SimTime(1_000_000_001), 5),
            Decision::Wait(SimTime(1_020_000_000))
        );
        // State 0: 395 units born in 1 s (λ0 = 395/s); state 1: 200 units/s (destages
        // freed 200 while occupancy stayed): f = [1, 200/395], falling, so the cost falls
        // with ρ (M = 1: cost = P0 (λ0 + μmax ρ a/(1-a)), P0 = 1/(1 + ρ/(1-a)), a = 0.2,
        // λ0 = 39.5 and μmax = 100 segments/s) and the laziest ρ = 0.999 wins: μ0 = λ0/0.999.
        let mut b = Adaptive::new(400, 128, 640 << 10, 1_000_000);
        b.observe(SimTime::ZERO, 0, 0);
        b.observe(SimTime(1_000_000_000), 395, 0);
        b.observe(SimTime(2_000_000_000), 395, 200);
        b.recompute();
        assert!((b.rho - 0.999).abs() < 1e-9, "{}", b.rho);
        assert!((b.mu0_units_per_s.unwrap() - 395.0 / 0.999).abs() < 1e-6);
    }

    #[test]
    fn destage_series_summary() {
        let mut s = DestageSeries::new(10);
        s.add(SimTime(25), 2);
        s.add(SimTime(31), 4);
        s.add(SimTime(55), 2);
        assert_eq!(s.ios, vec![0, 0, 2, 4, 0, 2]);
        // From interval 2: [2, 4, 0, 2], mean 2, variance 2.
        assert_eq!(s.summary(), (4, 4, 200, 141));
    }

    #[test]
    fn constant_f_costs_lambda0_everywhere_and_bad_inputs_are_refused() {
        for rho in [0.1, 0.5, 0.9] {
            let (_, c) = cost_at(rho, 3.0, &[1.0, 1.0, 1.0], &[1.0, 1.0], 10.0).unwrap();
            assert!((c - 3.0).abs() < 1e-9, "{c}");
        }
        assert!(cost_at(0.5, 1.0, &[1.0, 5.0], &[1.0], 4.0).is_none()); // a >= 1
        assert!(cost_at(0.5, 1.0, &[1.0], &[1.0], 4.0).is_none());
        assert!(cost_at(1.0, 1.0, &[1.0, 1.0], &[1.0], 4.0).is_none());
        assert!(optimal_mu0(1.0, &[1.0, 1.0], &[1.0], 4.0, 0.0).is_none());
    }
}
