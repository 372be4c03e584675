//! The host log: every command a run issued that changes what the device must remember,
//! with when it was issued and acked. The crash checker's oracle reads it.
//!
//! Transactions are identified by an *instance* number the world assigns at BEGIN, because
//! a host may reuse a `TxId` once its transaction finished.

use sim::{Lpn, SimTime};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// A plain write: a one-page transaction, durable once acked.
    Plain {
        lpn: Lpn,
        tag: u64,
        issue: SimTime,
        ack: SimTime,
    },
    /// A trim: durable once acked.
    Trim {
        lpn: Lpn,
        issue: SimTime,
        ack: SimTime,
    },
    /// A write inside transaction instance `inst`.
    TxWrite {
        inst: u64,
        lpn: Lpn,
        tag: u64,
        issue: SimTime,
    },
    Commit {
        inst: u64,
        issue: SimTime,
        ack: SimTime,
    },
    Abort {
        inst: u64,
        issue: SimTime,
        ack: SimTime,
    },
}

impl HostEvent {
    pub fn issue(&self) -> SimTime {
        match self {
            HostEvent::Plain { issue, .. }
            | HostEvent::Trim { issue, .. }
            | HostEvent::TxWrite { issue, .. }
            | HostEvent::Commit { issue, .. }
            | HostEvent::Abort { issue, .. } => *issue,
        }
    }
}
