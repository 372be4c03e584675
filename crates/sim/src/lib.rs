//! The bottom layer of commitlab: simulated time, the event queue, the seeded RNG tree,
//! timing resources, latency histograms and the identifier newtypes every layer shares.
//!
//! Determinism is the invariant this crate exists to protect: time is an integer number of
//! nanoseconds, events are ordered by `(time, seq)`, and every random stream is forked from
//! one seed by name. Nothing here reads the wall clock or any global state.

pub mod calendar;
pub mod crc;
pub mod histogram;
pub mod ids;
pub mod mem;
pub mod queue;
pub mod resource;
pub mod rng;
pub mod time;

pub use calendar::Calendar;
pub use histogram::Histogram;
pub use ids::{Lpn, TxId, TxnId};
pub use queue::EventQueue;
pub use resource::Resource;
pub use rng::Rng;
pub use time::SimTime;
