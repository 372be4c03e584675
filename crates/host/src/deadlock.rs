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

/// A cycle of the wait-for graph through `start`, if there is one: depth-first search over
/// `edges(c)` (whom client `c` waits for), neighbours taken from the back of each list, so
/// the result is deterministic. `clients` bounds the client ids.
pub fn cycle_through(
    start: u32,
    clients: usize,
    mut edges: impl FnMut(u32) -> Vec<u32>,
) -> Option<Vec<u32>> {
    let mut path = vec![start];
    let mut iters = vec![edges(start)];
    let mut seen = vec![false; clients];
    seen[start as usize] = true;
    while let Some(next) = iters.last_mut() {
        let Some(n) = next.pop() else {
            iters.pop();
            path.pop();
            continue;
        };
        if n == start {
            return Some(path);
        }
        if !seen[n as usize] {
            seen[n as usize] = true;
            path.push(n);
            iters.push(edges(n));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_found_through_the_start_only() {
        // 0 → 1 → 2 → 0, and 3 → 1 (3 is not on a cycle).
        let g = |c: u32| match c {
            0 => vec![1],
            1 => vec![2],
            2 => vec![0],
            3 => vec![1],
            _ => vec![],
        };
        assert_eq!(cycle_through(0, 4, g), Some(vec![0, 1, 2]));
        assert_eq!(cycle_through(3, 4, g), None);
        assert_eq!(
            cycle_through(1, 4, |c| if c == 1 { vec![2] } else { vec![] }),
            None
        );
    }

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
