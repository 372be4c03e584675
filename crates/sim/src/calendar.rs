//! A timing resource that back-fills idle gaps: a channel's bus.
//!
//! `Resource` books an operation at `max(ready, busy_until)`, so a booking far in the future
//! holds back every later request, even one ready now. That is right for a plane's cell array
//! (commands to one plane execute in the order they were issued: NAND physics, e.g. pages of a
//! block programmed in order, depends on it), but wrong for a channel shared by several chips.
//! When GC empties a victim on one plane it issues the whole job at once: 64 reads and 64
//! programs whose transfers fall over the next ~15 ms as the plane works through them. With a
//! scalar `busy_until` the channel would then refuse every other plane on it until the job's
//! last transfer, serialising GC (and host writes) across the planes of a channel; a real
//! controller arbitrates the bus among its chips when each transfer is due, as MQSim's channel
//! scheduler does.
//!
//! A `Calendar` keeps the booked intervals (disjoint, sorted, adjacent ones merged) and places
//! a transfer in the first gap at or after its ready time that is long enough.
//!
//! Invariants: intervals are disjoint, sorted by start, non-empty, and no two touch; there are
//! at most `MAX_INTERVALS`. When a booking would exceed that bound, the two earliest intervals
//! are merged (their gap counts as busy): conservative — an operation may start later than it
//! could, never earlier or overlapping — and in practice those intervals lie in the past.
//!
//! What it does not do: priorities or preemption; an operation once booked stays put.

use crate::SimTime;
use std::collections::VecDeque;

/// Booked intervals kept before the earliest are merged.
const MAX_INTERVALS: usize = 128;

#[derive(Clone, Debug, Default)]
pub struct Calendar {
    /// Booked `[start, end)` intervals, sorted, disjoint, not touching.
    booked: VecDeque<(SimTime, SimTime)>,
    /// Total nanoseconds booked (for utilisation figures).
    pub busy_ns: u64,
}

impl Calendar {
    /// The end of the latest booking.
    pub fn busy_until(&self) -> SimTime {
        self.booked.back().map_or(SimTime::ZERO, |b| b.1)
    }

    /// Books `duration_ns` in the first gap at or after `ready`; returns `(start, end)`.
    pub fn occupy(&mut self, ready: SimTime, duration_ns: u64) -> (SimTime, SimTime) {
        self.busy_ns += duration_ns;
        if duration_ns == 0 {
            return (ready, ready);
        }
        // Fast path: after everything booked (operations issued in time order).
        let last_end = self.busy_until();
        if ready >= last_end {
            let end = ready + duration_ns;
            match self.booked.back_mut() {
                Some(b) if b.1 == ready => b.1 = end,
                _ => self.push_back(ready, end),
            }
            return (ready, end);
        }
        // First interval that ends after `ready`.
        let mut i = self.first_ending_after(ready);
        let mut start = ready;
        loop {
            match self.booked.get(i) {
                None => break,
                Some(&(s, e)) => {
                    if start + duration_ns <= s {
                        break;
                    }
                    start = start.max(e);
                    i += 1;
                }
            }
        }
        let end = start + duration_ns;
        // Insert `[start, end)` before index `i`, merging with touching neighbours.
        let touches_prev = i > 0 && self.booked[i - 1].1 == start;
        let touches_next = i < self.booked.len() && self.booked[i].0 == end;
        match (touches_prev, touches_next) {
            (true, true) => {
                self.booked[i - 1].1 = self.booked[i].1;
                self.booked.remove(i);
            }
            (true, false) => self.booked[i - 1].1 = end,
            (false, true) => self.booked[i].0 = start,
            (false, false) => {
                self.booked.insert(i, (start, end));
                self.bound();
            }
        }
        (start, end)
    }

    /// Index of the first booked interval that ends after `ready` (`booked.len()` if none).
    ///
    /// Requests arrive nearly in time order, so the intervals ending after `ready` are
    /// usually the last few bookings (transfers queued behind busy planes): walking back from
    /// the end finds the index in a step or two, on cache lines the previous call touched,
    /// where a binary search over the whole deque (up to `MAX_INTERVALS`, mostly bookings
    /// long past) took seven dependent loads (~2 % of a host TPC-C run). Past `BACK_STEPS`
    /// steps it falls back to the binary search. Same index either way:
    /// the intervals are sorted by end as well as by start, being disjoint.
    #[inline]
    fn first_ending_after(&self, ready: SimTime) -> usize {
        const BACK_STEPS: usize = 8;
        let mut i = self.booked.len();
        for _ in 0..BACK_STEPS {
            match i.checked_sub(1).map(|j| self.booked[j].1) {
                Some(end) if end > ready => i -= 1,
                _ => return i,
            }
        }
        // Every interval from `i` on ends after `ready`, so the search over the whole deque
        // lands in [0, i].
        self.booked.partition_point(|x| x.1 <= ready)
    }

    fn push_back(&mut self, start: SimTime, end: SimTime) {
        self.booked.push_back((start, end));
        self.bound();
    }

    fn bound(&mut self) {
        if self.booked.len() > MAX_INTERVALS {
            if let Some((s, _)) = self.booked.pop_front() {
                if let Some(first) = self.booked.front_mut() {
                    first.0 = s;
                }
            }
        }
    }

    /// Checks the invariants (tests, debug builds).
    pub fn check_invariants(&self) -> Result<(), String> {
        for w in self.booked.iter().collect::<Vec<_>>().windows(2) {
            if w[0].1 >= w[1].0 {
                return Err(format!(
                    "intervals {:?} and {:?} overlap or touch",
                    w[0], w[1]
                ));
            }
        }
        if self.booked.iter().any(|b| b.0 >= b.1) {
            return Err("empty interval".into());
        }
        if self.booked.len() > MAX_INTERVALS {
            return Err(format!("{} intervals", self.booked.len()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_bookings_match_a_plain_resource() {
        let mut c = Calendar::default();
        let mut r = crate::Resource::default();
        for (ready, d) in [(0, 10), (0, 10), (50, 5), (52, 3), (100, 0), (101, 7)] {
            assert_eq!(c.occupy(SimTime(ready), d), r.occupy(SimTime(ready), d));
        }
        assert_eq!(c.busy_ns, r.busy_ns);
        c.check_invariants().unwrap();
    }

    // A booking far ahead (a GC job's last transfer) must not hold back a transfer ready now:
    // with `Resource` the second occupy would start at 1000 (the serialisation
    // a FIFO channel imposed).
    #[test]
    fn backfills_a_gap_before_a_future_booking() {
        let mut c = Calendar::default();
        assert_eq!(c.occupy(SimTime(1000), 10), (SimTime(1000), SimTime(1010)));
        assert_eq!(c.occupy(SimTime(0), 10), (SimTime(0), SimTime(10)));
        // Too long for the gap [10, 1000): goes after the future booking.
        assert_eq!(c.occupy(SimTime(5), 995), (SimTime(1010), SimTime(2005)));
        // Exactly fits [10, 1000).
        assert_eq!(c.occupy(SimTime(10), 990), (SimTime(10), SimTime(1000)));
        c.check_invariants().unwrap();
        assert_eq!(
            c.booked.len(),
            1,
            "touching intervals merge: {:?}",
            c.booked
        );
        assert_eq!(c.busy_until(), SimTime(2005));
    }

    // The backward walk must find exactly the index a binary search over the whole deque
    // finds, wherever the deque's ring buffer wraps and however far back the answer lies.
    #[test]
    fn first_ending_after_matches_a_binary_search() {
        let mut c = Calendar::default();
        let mut rng = crate::Rng::new(11);
        let mut t = 0u64;
        let mut full_rounds = 0;
        for round in 0..20_000 {
            // Mostly increasing ready times with occasional long jumps back, as GC jobs
            // and host requests interleave.
            t += rng.below(200);
            let ready = if rng.below(10) == 0 {
                t.saturating_sub(rng.below(20_000))
            } else {
                t
            };
            for probe in [
                ready,
                ready + rng.below(500),
                ready.saturating_sub(rng.below(5_000)),
            ] {
                let want = c.booked.partition_point(|b| b.1 <= SimTime(probe));
                assert_eq!(c.first_ending_after(SimTime(probe)), want, "round {round}");
            }
            c.occupy(SimTime(ready + rng.below(300)), 1 + rng.below(30));
            full_rounds += usize::from(c.booked.len() == MAX_INTERVALS);
        }
        // The deque was full (so its ring buffer wrapped) for most of the run.
        assert!(full_rounds > 10_000, "{full_rounds}");
        c.check_invariants().unwrap();
    }

    #[test]
    fn never_overlaps_and_stays_bounded() {
        let mut c = Calendar::default();
        let mut rng = crate::Rng::new(7);
        let mut spans = Vec::new();
        for _ in 0..5000 {
            let ready = SimTime(rng.below(1_000_000));
            let d = 1 + rng.below(100);
            let (s, e) = c.occupy(ready, d);
            assert!(s >= ready && e == s + d);
            spans.push((s, e));
            c.check_invariants().unwrap();
        }
        spans.sort();
        for w in spans.windows(2) {
            assert!(w[0].1 <= w[1].0, "{:?} overlaps {:?}", w[0], w[1]);
        }
    }
}
