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
    /// The end of the last booked interval (`ZERO` when none), kept here so that the
    /// common case, a transfer after everything booked, decides without loading the deque:
    /// on a 32 GiB device the deque's lines are usually out of cache by the next transfer
    /// on the channel, and that load was a quarter of `occupy`'s time.
    last_end: SimTime,
    /// Where the last two back-fills landed (indices into `booked`, kept current across
    /// `bound`'s merges): where the next search starts. Only a hint: a search checks it.
    hints: [usize; 2],
}

impl Calendar {
    /// The end of the latest booking.
    pub fn busy_until(&self) -> SimTime {
        self.last_end
    }

    /// Books `duration_ns` in the first gap at or after `ready`; returns `(start, end)`.
    pub fn occupy(&mut self, ready: SimTime, duration_ns: u64) -> (SimTime, SimTime) {
        self.busy_ns += duration_ns;
        if duration_ns == 0 {
            return (ready, ready);
        }
        // Fast path: after everything booked (operations issued in time order).
        let last_end = self.last_end;
        if ready >= last_end {
            let end = ready + duration_ns;
            self.last_end = end;
            match self.booked.back_mut() {
                // Touching the last interval (`last_end` is its end): extend it.
                Some(b) if last_end == ready => b.1 = end,
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
        self.remember(i);
        let end = start + duration_ns;
        self.last_end = self.last_end.max(end);
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
    /// The search's cost does not depend on how many intervals are booked. Requests arrive
    /// nearly in time order, and the back-fills come in runs: a GC job books its transfers
    /// one after another along its plane's chain, each a little after the previous one
    /// among the other planes' bookings, and host transfers ready now land just before the
    /// future bookings, where the last of them landed. So the search walks a few steps from
    /// where the last two back-fills landed (`hints`), then back from the end (transfers
    /// queued behind busy planes); only when all three miss does it fall back to a binary
    /// search over the whole deque (up to `MAX_INTERVALS`, mostly bookings long past: seven
    /// dependent loads). Same index every way: the intervals are sorted by end as well as by
    /// start, being disjoint, so the index is the one `i` with every interval before it
    /// ending at or before `ready` and every one from it on ending after.
    #[inline]
    fn first_ending_after(&self, ready: SimTime) -> usize {
        const HINT_STEPS: usize = 4;
        const BACK_STEPS: usize = 8;
        let len = self.booked.len();
        for h in self.hints {
            if let Some(i) = self.walk_from(h.min(len), ready, HINT_STEPS) {
                return i;
            }
        }
        let mut i = len;
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

    /// The index `first_ending_after(ready)` returns, if it lies within `steps` of `i`.
    #[inline]
    fn walk_from(&self, mut i: usize, ready: SimTime, steps: usize) -> Option<usize> {
        let b = &self.booked;
        if i < b.len() && b[i].1 <= ready {
            // The answer lies after `i`.
            for _ in 0..steps {
                i += 1;
                if i == b.len() || b[i].1 > ready {
                    return Some(i);
                }
            }
            None
        } else {
            // `b[i]` (if any) ends after `ready`: the answer is `i` or before it.
            for _ in 0..steps {
                if i == 0 || b[i - 1].1 <= ready {
                    return Some(i);
                }
                i -= 1;
            }
            (i == 0 || b[i - 1].1 <= ready).then_some(i)
        }
    }

    /// Keeps `i` as the newest hint (replacing the older one only when `i` is elsewhere).
    #[inline]
    fn remember(&mut self, i: usize) {
        if self.hints[0].abs_diff(i) > 4 {
            self.hints[1] = self.hints[0];
        }
        self.hints[0] = i;
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
                for h in &mut self.hints {
                    *h = h.saturating_sub(1);
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
        let back = self.booked.back().map_or(SimTime::ZERO, |b| b.1);
        if self.last_end != back {
            return Err(format!(
                "last_end {:?}, last interval ends {back:?}",
                self.last_end
            ));
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

    /// The placement rule written plainly: a linear search of a sorted list, merging the
    /// two earliest intervals past `MAX_INTERVALS`.
    #[derive(Default)]
    struct Plain(Vec<(u64, u64)>);

    impl Plain {
        fn occupy(&mut self, ready: u64, d: u64) -> (u64, u64) {
            if d == 0 {
                return (ready, ready);
            }
            let mut start = ready;
            let mut i = 0;
            while i < self.0.len() {
                let (s, e) = self.0[i];
                if e > start && start + d > s {
                    start = start.max(e);
                } else if start + d <= s {
                    break;
                }
                i += 1;
            }
            let end = start + d;
            self.0.insert(i, (start, end));
            // Merge touching neighbours.
            let mut j = 0;
            while j + 1 < self.0.len() {
                if self.0[j].1 == self.0[j + 1].0 {
                    self.0[j].1 = self.0[j + 1].1;
                    self.0.remove(j + 1);
                } else {
                    j += 1;
                }
            }
            if self.0.len() > MAX_INTERVALS {
                let (s, _) = self.0.remove(0);
                self.0[0].0 = s;
            }
            (start, end)
        }
    }

    // The calendar places every transfer exactly where the plain rule does, on a stream
    // shaped like a device's: GC jobs booking runs of transfers along a plane's chain into
    // the future on several planes at once, host transfers ready now between them.
    #[test]
    fn places_every_transfer_where_the_plain_rule_does() {
        for seed in 1..=4 {
            let mut c = Calendar::default();
            let mut p = Plain::default();
            let mut rng = crate::Rng::new(seed);
            let mut now = 0u64;
            let mut planes = [0u64; 4];
            for round in 0..30_000 {
                now += rng.below(60);
                let plane = rng.below(4) as usize;
                planes[plane] = planes[plane].max(now);
                let (ready, d) = match rng.below(8) {
                    // A GC job's transfer: the plane's chain moves on by an array time.
                    0..=3 => {
                        planes[plane] += 25 + rng.below(200);
                        (planes[plane], 10)
                    }
                    // A host transfer ready now, or a small command.
                    4..=6 => (now, 10),
                    _ => (now + rng.below(100), 1 + rng.below(3)),
                };
                let got = c.occupy(SimTime(ready), d);
                let want = p.occupy(ready, d);
                if round % 64 == 0 {
                    c.check_invariants().unwrap();
                }
                assert_eq!((got.0 .0, got.1 .0), want, "seed {seed} round {round}");
            }
            c.check_invariants().unwrap();
            let booked: Vec<(u64, u64)> = c.booked.iter().map(|b| (b.0 .0, b.1 .0)).collect();
            assert_eq!(booked, p.0);
        }
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
