//! Simple cyclic commit (TxFlash §3.2) beyond protocols.rs's table (exhaustive, random and
//! double-crash runs): scripted interleavings the generators cannot produce.

mod scripted;

mod common;

use commitlab_check::*;
use common::*;
use scripted::{us, Script};

/// A transaction may write a page as soon as the previous transaction that wrote it has
/// *issued* its COMMIT. If the new version reached flash before the previous commit was
/// durable, recovery would fall back from the (uncommitted) new version to the previous one
/// as if it were committed, showing half of an incomplete transaction. The new version must
/// wait for the previous commit's ack (`Floors`). Without that wait this script has
/// violating crash states (checked by removing the wait).
#[test]
fn a_new_version_waits_for_the_previous_commit_of_its_page() {
    let cfg = small_config("scc");
    let mut s = Script::new(&cfg);
    let t0 = us(0);
    s.plain(10, t0); // on plane 0
    s.plain(11, t0); // on plane 1
    s.begin(1, t0);
    s.write(1, 1, t0); // held
    s.write(1, 2, t0); // programs page 1 (plane 0); page 2 held
    s.busy_reads(11, 20, t0); // plane 1 busy for 500 us
    let ack1 = s.commit(1, t0); // page 2 on plane 1, behind the reads
    s.begin(2, t0);
    s.write(2, 1, t0); // page 1 again: its previous commit is in flight
    s.write(2, 3, t0); // programs page 1's new version
    assert!(
        ack1 > us(700),
        "the commit's last page waits behind the reads"
    );
    let rec = s.recording();
    let rep = check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    assert!(rep.states > 10);
    assert_clean(&rep, &rec);
}

/// The uncommitted intentions of an aborted transaction, including the one whose next-link
/// names its never-programmed held page, are erased before those pages get new versions.
#[test]
fn aborted_intentions_are_erased_before_their_pages_move_on() {
    let cfg = small_config("scc");
    let mut s = Script::new(&cfg);
    s.begin(1, us(0));
    s.write(1, 1, us(0));
    s.write(1, 2, us(0));
    s.write(1, 3, us(0)); // pages 1 and 2 programmed, 3 held
                          // The erase starts at ABORT (protocol.scc_erase_at_abort, the default) or, with it off,
                          // when page 3 is written next; either way before page 3's new version.
    let before = s.dev.core.stats.forced_erases;
    let t = s.abort(1, us(10));
    // Page 3 is named by page 2's next-link: page 2's intention must go first.
    let t = s.plain(3, t);
    assert!(s.dev.core.stats.forced_erases > before);
    s.begin(2, t);
    s.write(2, 1, t);
    s.write(2, 2, t);
    s.commit(2, t);
    let rec = s.recording();
    let rep = check(&rec, Mode::Exhaustive { max_in_flight: 8 }, 1, None).unwrap();
    assert_clean(&rep, &rec);
}
