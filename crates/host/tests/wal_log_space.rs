//! WAL's log-space rule (`strategy/wal.rs`: a log page may overwrite page s−L only if that
//! page is older than everything restart may read, *including the first record of every
//! active transaction*, ARIES §6.4's undo pass reads back to it).
//!
//! A planted bug that drops the active transactions from the rule (`wal-wrap-over-active`,
//! docs/MUTATION.md) never changes a run the engine completes: it only lets a run go on
//! that the rule refuses. So the check that catches it is that refusal. Found by planting
//! the mutant: `COMMITLAB_MUTANT=wal-wrap-over-active commitlab crash --host wal --protocol
//! none --set host.log_pages=4 --set host.checkpoint_log_bytes=512 --set
//! host.transactions=100 --set host.bank.updates=16 --set host.bank.accounts=40 --set
//! host.clients=2 --schedules 300` (mutants build) runs and violates in 13 of 300 crash
//! states (an active transaction's undo records overwritten); unmutated it is refused with
//! exit 2 naming `host.log_pages`.

use commitlab_host as host;
use host::check;

/// Long transactions (16 updates) on a four-page log with a checkpoint every 512 bytes: the
/// masters move on while a transaction's first record is still needed.
fn long_transactions_small_log(checkpoint_log_bytes: u64) -> (host::HostConfig, ssd::DeviceConfig) {
    let (mut h, d) = check::tiny_config("wal", "none");
    h.log_pages = 4;
    h.checkpoint_log_bytes = checkpoint_log_bytes;
    h.transactions = 100;
    h.bank.updates = 16;
    h.bank.accounts = 40;
    h.clients = 2;
    (h, d)
}

#[test]
fn a_log_that_would_wrap_over_an_active_transaction_is_refused() {
    for c in [512, 1024] {
        let (h, d) = long_transactions_small_log(c);
        match check::record(&h, &d, 1) {
            Err(host::HostError::Config { key, reason }) => {
                assert_eq!(key, "host.log_pages", "{reason}");
                assert!(reason.contains("oldest active transaction"), "{reason}");
            }
            Err(e) => panic!("checkpoint_log_bytes={c}: unexpected error {e}"),
            Ok(_) => panic!(
                "checkpoint_log_bytes={c}: the log wrapped over an active transaction's first record and the run went on"
            ),
        }
    }
}

/// The rollback-heavy shape of CI's host step (60 % rollbacks of 8-update transactions):
/// rollbacks cut short by the crash, whose undo must be finished at restart. ARIES
/// analysis that closes a transaction at its ABORT record instead of its END record (the
/// planted `aries-abort-closes`, docs/MUTATION.md) violates there on every seed tried
/// (`COMMITLAB_MUTANT=aries-abort-closes commitlab crash --host wal --protocol none --set
/// host.bank.rollback_ratio=0.6 --set host.bank.updates=8 --schedules 2000 --seed S`: 5, 4,
/// 9, 15 violating states for S = 1..4; exhaustive 73 of 19,991); unmutated it is clean.
#[test]
fn the_rollback_heavy_shape_is_clean_on_several_seeds() {
    for seed in [1, 2, 3] {
        let (mut h, d) = check::tiny_config("wal", "none");
        h.bank.rollback_ratio = 0.6;
        h.bank.updates = 8;
        let rec = check::record(&h, &d, seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let rep = check::check(&rec, check::Mode::Random { schedules: 200 }, seed, None)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(rep.states, 200);
        assert_eq!(
            rep.violations, 0,
            "seed {seed}: replay with commitlab crash --host wal --protocol none --seed {seed} --set host.bank.rollback_ratio=0.6 --set host.bank.updates=8 --schedules 200"
        );
    }
}
