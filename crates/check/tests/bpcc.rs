//! Back-pointer cyclic commit (TxFlash §3.3) beyond protocols.rs's table (exhaustive,
//! random and double-crash runs): scripted interleavings the generators cannot produce.

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
    let cfg = small_config("bpcc");
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

/// An aborted transaction leaves an intention whose next-link names its never-programmed
/// held page; the next version of that page straddles it (back pointer below the link) and
/// must stay on flash, pinned through GC, while the aborted intention may still be read as
/// its page's newest version.
#[test]
fn straddlers_of_aborted_links_survive_rewrites_and_gc() {
    let mut cfg = small_config("bpcc");
    cfg.ftl.summary_pages = false;
    let mut s = Script::new(&cfg);
    let mut t = us(0);
    s.begin(1, t);
    s.write(1, 1, t);
    s.write(1, 2, t); // page 1 programmed, linking to page 2's version; page 2 held
    t = s.abort(1, us(10));
    // Page 2 moves on twice: its first new version straddles the aborted link.
    s.begin(2, t);
    s.write(2, 2, t);
    t = s.commit(2, t);
    t = s.plain(2, t);
    let straddlers = counter(&s, "live_straddlers");
    // Rewrite other pages until GC has run many times.
    let gc_before = s.dev.core.stats.gc_erases;
    let mut k = 0;
    while s.dev.core.stats.gc_erases < gc_before + 12 {
        t = s.plain(3 + (k % 40), t);
        k += 1;
    }
    let rec = s.recording();
    let rep = check(&rec, Mode::Random { schedules: 400 }, 2, None).unwrap();
    assert_clean(&rep, &rec);
    assert_eq!(
        straddlers, 1,
        "the first rewrite of page 2 straddles the aborted link"
    );
}

fn counter(s: &Script, name: &str) -> u64 {
    s.dev
        .protocol_counters()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .unwrap_or(0)
}
