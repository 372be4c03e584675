//! A log-linear latency histogram with bounded memory and deterministic percentiles.
//!
//! Values are bucketed by their power of two and, within it, by the next `SUB_BITS` bits,
//! so every recorded value is represented within 1/2^SUB_BITS (0.8 %) of itself. A
//! percentile reports the upper bound of the bucket that holds it, clamped to the exact
//! observed maximum. Memory is fixed (64 × 128 counters) however many values are recorded.
//!
//! Serialized (for carrying a run's metrics to another process) as its non-empty buckets,
//! `{"buckets": [[index, count], ...], "total", "sum", "min", "max"}`; reading one back
//! checks that the buckets are in range, ascending and sum to `total`, so a damaged record
//! is an error, never a histogram that disagrees with itself.

use serde::{Deserialize, Serialize};

const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(into = "Sparse", try_from = "Sparse")]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    sum: u128,
    min: u64,
    max: u64,
}

/// Summary statistics in nanoseconds (or whatever unit was recorded).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean: f64,
    pub min: u64,
    pub p50: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

/// A histogram's serialized form (module docs): only the buckets that hold values.
#[derive(Serialize, Deserialize)]
struct Sparse {
    buckets: Vec<(u32, u64)>,
    total: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl From<Histogram> for Sparse {
    fn from(h: Histogram) -> Sparse {
        Sparse {
            buckets: h
                .counts
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(b, &c)| (b as u32, c))
                .collect(),
            total: h.total,
            sum: h.sum,
            min: h.min,
            max: h.max,
        }
    }
}

impl TryFrom<Sparse> for Histogram {
    type Error = String;
    fn try_from(s: Sparse) -> Result<Histogram, String> {
        let mut h = Histogram::new();
        let mut last = None;
        let mut total: u64 = 0;
        for (b, c) in s.buckets {
            let i = b as usize;
            if i >= h.counts.len() || last.is_some_and(|l| l >= i) {
                return Err(format!(
                    "histogram bucket {b}: out of range or out of order"
                ));
            }
            last = Some(i);
            h.counts[i] = c;
            total = total.checked_add(c).ok_or("histogram counts overflow")?;
        }
        if total != s.total {
            return Err(format!(
                "histogram buckets hold {total} values, its total says {}",
                s.total
            ));
        }
        h.total = s.total;
        h.sum = s.sum;
        h.min = s.min;
        h.max = s.max;
        Ok(h)
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

fn bucket_of(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = msb - SUB_BITS;
    let sub = ((v >> shift) as usize) & (SUB - 1);
    ((shift as usize + 1) << SUB_BITS) + sub
}

fn bucket_upper(b: usize) -> u64 {
    if b < SUB {
        return b as u64;
    }
    let shift = (b >> SUB_BITS) as u32 - 1;
    let sub = (b & (SUB - 1)) as u64;
    let base = (SUB as u64 + sub) << shift;
    base + ((1u64 << shift) - 1)
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram {
            counts: vec![0; 64 * SUB],
            total: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    pub fn record(&mut self, v: u64) {
        self.counts[bucket_of(v)] += 1;
        self.total += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += *b;
        }
        self.total += other.total;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The values recorded after `earlier`, a histogram of a prefix of the same stream of
    /// values (a shorter run of the same simulation): counts subtract bucket by bucket (a
    /// bucket `earlier` holds more of is empty). Min and max of the difference are its
    /// outermost buckets' bounds, clamped to this histogram's exact extremes.
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        let counts: Vec<u64> = self
            .counts
            .iter()
            .zip(&earlier.counts)
            .map(|(a, b)| a.saturating_sub(*b))
            .collect();
        let total = counts.iter().sum();
        let first = counts.iter().position(|&c| c > 0);
        let last = counts.iter().rposition(|&c| c > 0);
        let (min, max) = match (first, last) {
            (Some(f), Some(l)) => {
                let lower = if f == 0 { 0 } else { bucket_upper(f - 1) + 1 };
                (lower.max(self.min), bucket_upper(l).min(self.max))
            }
            _ => (u64::MAX, 0),
        };
        Histogram {
            counts,
            total,
            sum: self.sum.saturating_sub(earlier.sum),
            min,
            max,
        }
    }

    /// The value at quantile `q` in `[0, 1]`: the upper bound of its bucket, at most `max`.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return bucket_upper(b).min(self.max).max(self.min);
            }
        }
        self.max
    }

    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    pub fn percentiles(&self) -> Percentiles {
        Percentiles {
            count: self.total,
            mean: self.mean(),
            min: if self.total == 0 { 0 } else { self.min },
            p50: self.quantile(0.50),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
            max: self.max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window's histogram is the full run's less its prefix: the window's own values
    /// decide its percentiles (the prefix's slow values do not).
    #[test]
    fn since_keeps_only_the_later_values() {
        let mut early = Histogram::new();
        for v in [5_000_000u64; 50] {
            early.record(v);
        }
        let mut full = early.clone();
        for v in 1..=100u64 {
            full.record(v * 1000);
        }
        let w = full.since(&early);
        assert_eq!(w.count(), 100);
        assert!(w.quantile(0.99) <= 100_800 && w.quantile(0.99) >= 98_000);
        assert!(full.quantile(0.99) >= 5_000_000);
        assert!((w.mean() - 50_500.0).abs() < 1.0);
        let p = w.percentiles();
        // The extremes are bucket bounds (within 1/128 of the values), not the prefix's.
        assert!(p.min >= 990 && p.min <= 1000, "{p:?}");
        assert!(
            p.max >= 100_000 && p.max <= 100_000 + 100_000 / 128,
            "{p:?}"
        );
        assert_eq!(full.since(&full).percentiles().p99, 0);
    }

    /// Through JSON and back: every bucket, the sum and the extremes (an empty histogram's
    /// `min` sentinel too); a record whose buckets disagree with its total is refused.
    #[test]
    fn a_histogram_reads_back_from_json_exactly() {
        let mut h = Histogram::new();
        for v in [0u64, 3, 127, 128, 5_000, 123_456_789, u64::MAX] {
            h.record(v);
            h.record(v / 2);
        }
        for k in [Histogram::new(), h] {
            let text = serde_json::to_string(&k).unwrap();
            let back: Histogram = serde_json::from_str(&text).unwrap();
            assert_eq!(format!("{back:?}"), format!("{k:?}"));
        }
        let bad = r#"{"buckets":[[3,2]],"total":1,"sum":6,"min":3,"max":3}"#;
        assert!(serde_json::from_str::<Histogram>(bad).is_err());
        let out_of_range = r#"{"buckets":[[999999,1]],"total":1,"sum":6,"min":3,"max":3}"#;
        assert!(serde_json::from_str::<Histogram>(out_of_range).is_err());
    }

    #[test]
    fn buckets_bound_every_value_tightly() {
        for v in [
            0u64,
            1,
            127,
            128,
            129,
            1000,
            123_456,
            10_000_000_007,
            u64::MAX / 3,
        ] {
            let b = bucket_of(v);
            let up = bucket_upper(b);
            assert!(up >= v, "v={v} upper={up}");
            assert!(
                (up - v) as f64 <= v as f64 / 100.0 + 1.0,
                "v={v} upper={up}"
            );
        }
    }

    #[test]
    fn percentiles_of_a_uniform_run() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let p = h.percentiles();
        assert_eq!(p.count, 10_000);
        assert!((p.p50 as f64 - 5_000_000.0).abs() / 5e6 < 0.01, "{p:?}");
        assert!((p.p99 as f64 - 9_900_000.0).abs() / 9.9e6 < 0.01, "{p:?}");
        assert_eq!(p.max, 10_000_000);
        assert_eq!(p.min, 1000);
    }

    #[test]
    fn empty_histogram_reports_zeros() {
        let p = Histogram::new().percentiles();
        assert_eq!(p, Percentiles::default());
    }
}
