//! A timing resource: something that can do one thing at a time (a plane's cell array, a
//! channel's bus). An operation occupies it from `max(ready, busy_until)` for its duration.
//!
//! This is the whole of the timing model's queueing: operations on one resource serialize in
//! the order they are issued; operations on different resources overlap. There is no
//! back-filling of idle gaps, so an operation that must wait for an input keeps later
//! operations on the same resource waiting too, as a real command queue would.

use crate::SimTime;

#[derive(Clone, Copy, Debug, Default)]
pub struct Resource {
    pub busy_until: SimTime,
    /// Total nanoseconds this resource has been occupied (for utilisation figures).
    pub busy_ns: u64,
}

impl Resource {
    /// Occupy the resource for `duration_ns` starting no earlier than `ready`;
    /// returns `(start, end)`.
    pub fn occupy(&mut self, ready: SimTime, duration_ns: u64) -> (SimTime, SimTime) {
        let start = ready.max(self.busy_until);
        let end = start + duration_ns;
        self.busy_until = end;
        self.busy_ns += duration_ns;
        (start, end)
    }

    /// The earliest time an operation ready at `ready` could start here.
    pub fn earliest(&self, ready: SimTime) -> SimTime {
        ready.max(self.busy_until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_on_one_resource() {
        let mut r = Resource::default();
        assert_eq!(r.occupy(SimTime(0), 10), (SimTime(0), SimTime(10)));
        assert_eq!(r.occupy(SimTime(0), 10), (SimTime(10), SimTime(20)));
        assert_eq!(r.occupy(SimTime(50), 5), (SimTime(50), SimTime(55)));
        assert_eq!(r.busy_ns, 25);
    }
}
