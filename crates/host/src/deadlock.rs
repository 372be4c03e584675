//! Deadlock victim policy, a pure decision: the youngest transaction in the cycle (Flag
//! Commit §5.1: "the youngest transaction in the deadlock is chosen as the victim and
//! restarted after a random backoff time").
//!
//! Age is the instant a transaction attempt started, with its id breaking ties (ids grow
//! with start order), so the decision is deterministic.

use sim::{SimTime, TxnId};

/// A transaction in a wait-for cycle, as the policy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub client: u32,
    pub txn: TxnId,
    pub started: SimTime,
}

/// The client whose transaction is the victim (None for an empty cycle).
pub fn youngest(cycle: &[Member]) -> Option<u32> {
    cycle
        .iter()
        .max_by_key(|m| (m.started, m.txn))
        .map(|m| m.client)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_started_is_the_victim() {
        let m = |client, txn, t| Member {
            client,
            txn: TxnId(txn),
            started: SimTime(t),
        };
        assert_eq!(youngest(&[m(0, 5, 10), m(1, 3, 20), m(2, 9, 20)]), Some(2));
        assert_eq!(youngest(&[]), None);
    }
}
