//! Traditional commit (TxFlash §3.1, §4.1) beyond protocols.rs's table (exhaustive,
//! random and double-crash runs): a scripted serializable schedule whose commit order
//! differs from its write order.

mod scripted;

mod common;

use commitlab_check::*;
use common::*;
use scripted::{us, Script};

/// Serializable: transaction 1 writes page 1 before transaction 2 does, but commits after
/// it, so page 1 must end up with transaction 1's data. Versions follow write order; the
/// newest version is decided by the commit sequence number (in the commit record), which
/// follows COMMIT issue order. Ordering by version instead fails here.
#[test]
fn the_last_commit_wins_not_the_last_write() {
    let cfg = small_config("tc");
    let mut s = Script::new(&cfg);
    let t = us(0);
    s.begin(1, t);
    s.begin(2, t);
    s.write(1, 1, t);
    s.write(1, 5, t); // programs tx 1's page 1
    s.write(2, 1, t);
    s.write(2, 6, t); // programs tx 2's page 1, a higher version
    let a2 = s.commit(2, t);
    let a1 = s.commit(1, t);
    // A single-page transaction and a plain write ordered the same way.
    s.begin(3, a1);
    s.write(3, 1, a1);
    s.plain(1, a1);
    s.commit(3, a1.max(a2));
    let rec = s.recording();
    let rep = check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    assert_clean(&rep, &rec);
}
