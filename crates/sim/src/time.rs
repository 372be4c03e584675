//! `SimTime`: simulated time as an integer count of nanoseconds since the start of a run.
//!
//! Integer time keeps runs bit-for-bit reproducible; there is no floating point anywhere in
//! the ordering of events.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, in nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_ns(ns: u64) -> SimTime {
        SimTime(ns)
    }
    pub const fn from_us(us: u64) -> SimTime {
        SimTime(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// `self + ns`, saturating at `SimTime::MAX` rather than wrapping.
    pub const fn plus_ns(self, ns: u64) -> SimTime {
        SimTime(self.0.saturating_add(ns))
    }
    /// Nanoseconds from `earlier` to `self`, zero if `earlier` is later.
    pub const fn since(self, earlier: SimTime) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl Add<u64> for SimTime {
    type Output = SimTime;
    fn add(self, ns: u64) -> SimTime {
        self.plus_ns(ns)
    }
}

impl AddAssign<u64> for SimTime {
    fn add_assign(&mut self, ns: u64) {
        *self = self.plus_ns(ns);
    }
}

impl Sub for SimTime {
    type Output = u64;
    fn sub(self, rhs: SimTime) -> u64 {
        self.since(rhs)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns >= 1_000_000_000 {
            write!(f, "{:.3}s", ns as f64 / 1e9)
        } else if ns >= 1_000_000 {
            write!(f, "{:.3}ms", ns as f64 / 1e6)
        } else if ns >= 1_000 {
            write!(f, "{:.3}us", ns as f64 / 1e3)
        } else {
            write!(f, "{ns}ns")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        assert_eq!(SimTime::MAX + 5, SimTime::MAX);
        assert_eq!(SimTime::from_ns(3) - SimTime::from_ns(10), 0);
        assert_eq!(SimTime::from_us(2).as_ns(), 2_000);
        assert_eq!(SimTime::from_ms(1).since(SimTime::from_us(1)), 999_000);
    }

    #[test]
    fn display_picks_a_readable_unit() {
        assert_eq!(SimTime(12).to_string(), "12ns");
        assert_eq!(SimTime(1_500).to_string(), "1.500us");
        assert_eq!(SimTime(2_500_000).to_string(), "2.500ms");
        assert_eq!(SimTime(3_000_000_000).to_string(), "3.000s");
    }
}
