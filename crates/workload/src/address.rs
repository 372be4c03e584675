//! Address distributions over a span of logical pages: uniform, sequential, hot/cold and
//! zipfian (Gray et al.'s constant-time sampler, as in YCSB, with ranks scattered over the
//! span by a fixed permutation so the hot pages are not all adjacent).

use crate::{werr, WorkloadError};
use serde::{Deserialize, Serialize};
use sim::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AddressKind {
    Uniform,
    Sequential,
    HotCold,
    Zipf,
}

impl AddressKind {
    /// The name the configuration uses (`address = "hot-cold"`).
    pub fn name(self) -> &'static str {
        match self {
            AddressKind::Uniform => "uniform",
            AddressKind::Sequential => "sequential",
            AddressKind::HotCold => "hot-cold",
            AddressKind::Zipf => "zipf",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Addresses {
    Uniform {
        span: u64,
    },
    Sequential {
        span: u64,
        next: u64,
    },
    /// `hot_access` of the accesses go to the first `hot_pages` pages (scattered).
    HotCold {
        span: u64,
        hot_pages: u64,
        hot_access: f64,
        perm: Perm,
    },
    Zipf {
        span: u64,
        theta: f64,
        alpha: f64,
        zetan: f64,
        eta: f64,
        perm: Perm,
    },
}

/// A permutation of `0..n`: `i ↦ (i · a + b) mod n` with `a` coprime to `n`.
#[derive(Clone, Copy, Debug)]
pub struct Perm {
    n: u64,
    a: u64,
    b: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Perm {
    pub fn new(n: u64) -> Perm {
        let mut a = 2_654_435_761 % n.max(1);
        if a == 0 {
            a = 1;
        }
        while gcd(a, n) != 1 {
            a += 1;
        }
        Perm {
            n: n.max(1),
            a,
            b: n / 3,
        }
    }
    pub fn apply(&self, i: u64) -> u64 {
        ((u128::from(i) * u128::from(self.a) + u128::from(self.b)) % u128::from(self.n)) as u64
    }
}

fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

impl Addresses {
    pub fn new(
        kind: AddressKind,
        span: u64,
        hot_fraction: f64,
        hot_access: f64,
        theta: f64,
    ) -> Result<Addresses, WorkloadError> {
        if span == 0 {
            return Err(werr("workload.span: addresses no pages"));
        }
        Ok(match kind {
            AddressKind::Uniform => Addresses::Uniform { span },
            AddressKind::Sequential => Addresses::Sequential { span, next: 0 },
            AddressKind::HotCold => {
                if !(0.0..=1.0).contains(&hot_fraction) || !(0.0..=1.0).contains(&hot_access) {
                    return Err(werr(
                        "workload.hot_fraction and workload.hot_access must be in [0, 1]",
                    ));
                }
                let hot_pages = ((span as f64 * hot_fraction).round() as u64).clamp(1, span);
                Addresses::HotCold {
                    span,
                    hot_pages,
                    hot_access,
                    perm: Perm::new(span),
                }
            }
            AddressKind::Zipf => {
                if !(theta > 0.0 && theta < 1.0) {
                    return Err(werr(format!(
                        "workload.zipf_theta must be in (0, 1), got {theta}"
                    )));
                }
                let zetan = zeta(span, theta);
                let zeta2 = zeta(2, theta);
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / span as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                Addresses::Zipf {
                    span,
                    theta,
                    alpha,
                    zetan,
                    eta,
                    perm: Perm::new(span),
                }
            }
        })
    }

    /// The next starting page for a request of `pages` pages (kept inside the span).
    pub fn next(&mut self, rng: &mut Rng, pages: u64) -> u64 {
        match self {
            Addresses::Uniform { span } => rng.below((*span).saturating_sub(pages - 1).max(1)),
            Addresses::Sequential { span, next } => {
                if *next + pages > *span {
                    *next = 0;
                }
                let a = *next;
                *next += pages;
                a
            }
            Addresses::HotCold {
                span,
                hot_pages,
                hot_access,
                perm,
            } => {
                let i = if rng.chance(*hot_access) {
                    rng.below(*hot_pages)
                } else {
                    *hot_pages + rng.below((*span - *hot_pages).max(1))
                };
                perm.apply(i.min(*span - 1)).min(span.saturating_sub(pages))
            }
            Addresses::Zipf {
                span,
                theta,
                alpha,
                zetan,
                eta,
                perm,
            } => {
                let u = rng.unit_f64();
                let uz = u * *zetan;
                let rank = if uz < 1.0 {
                    0
                } else if uz < 1.0 + 0.5f64.powf(*theta) {
                    1
                } else {
                    ((*span as f64) * (*eta * u - *eta + 1.0).powf(*alpha)) as u64
                };
                perm.apply(rank.min(*span - 1))
                    .min(span.saturating_sub(pages))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perm_is_a_permutation() {
        for n in [1u64, 2, 7, 64, 1000, 4096] {
            let p = Perm::new(n);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let j = p.apply(i) as usize;
                assert!(!seen[j]);
                seen[j] = true;
            }
        }
    }

    #[test]
    fn hot_cold_concentrates_accesses() {
        let mut a = Addresses::new(AddressKind::HotCold, 1000, 0.1, 0.9, 0.0).unwrap();
        let mut rng = Rng::new(1);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[a.next(&mut rng, 1) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top: u32 = counts[..100].iter().sum();
        assert!((88_000..92_000).contains(&top), "top 10% got {top}");
    }

    #[test]
    fn zipf_is_skewed_and_in_range() {
        let mut a = Addresses::new(AddressKind::Zipf, 10_000, 0.1, 0.9, 0.99).unwrap();
        let mut rng = Rng::new(2);
        let mut counts = vec![0u32; 10_000];
        for _ in 0..100_000 {
            let x = a.next(&mut rng, 1);
            counts[x as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top: u32 = counts[..100].iter().sum();
        assert!(top > 40_000, "top 1% of pages got {top} of 100000");
    }

    #[test]
    fn sequential_wraps_and_requests_stay_inside() {
        let mut a = Addresses::new(AddressKind::Sequential, 10, 0.0, 0.0, 0.0).unwrap();
        let mut rng = Rng::new(3);
        let v: Vec<u64> = (0..5).map(|_| a.next(&mut rng, 3)).collect();
        assert_eq!(v, vec![0, 3, 6, 0, 3]);
        let mut u = Addresses::new(AddressKind::Uniform, 10, 0.0, 0.0, 0.0).unwrap();
        for _ in 0..1000 {
            assert!(u.next(&mut rng, 4) + 4 <= 10);
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(Addresses::new(AddressKind::Zipf, 10, 0.0, 0.0, 1.5).is_err());
        assert!(Addresses::new(AddressKind::Uniform, 0, 0.0, 0.0, 0.0).is_err());
        assert!(Addresses::new(AddressKind::HotCold, 10, 2.0, 0.5, 0.0).is_err());
    }
}
