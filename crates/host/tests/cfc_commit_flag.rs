//! Flag Commit §3.3: "in CFC, when a transaction commits, if the last shadow page of a
//! transaction is buffered, the commit flag can be updated in main memory and then flushed to
//! the disk. Hence, a page-reprogramming operation is saved." Under `device-tx` (force at
//! commit) the last page a transaction still has dirty at commit goes to the device with the
//! COMMIT (`Device::commit_write`), and CFC programs it with its flag TRUE: no partial program
//! for that commit. AFC must reprogram its first page whatever is buffered (§3.3), and with
//! `protocol.cfc_flag_reprogram` CFC keeps the earlier rule (one partial program per commit).

use commitlab_host as host;
use host::check;
use ssd::FtlStats;

/// Device commits and the FTL's counters of a device-tx run over `protocol`.
fn run(protocol: &str, frames: u32, reprogram: bool, seed: u64) -> (u64, FtlStats) {
    let (mut h, mut d) = check::tiny_config("device-tx", protocol);
    h.transactions = 200;
    h.buffer_frames = frames;
    d.protocol.cfc_flag_reprogram = reprogram;
    let dev = ssd::Device::in_memory(&d).unwrap();
    let r = host::engine::run_traced(&h, &d, dev, seed, false, false)
        .unwrap_or_else(|e| panic!("{protocol}: {e}"));
    let s = r.core.device.core.stats;
    (s.txs_committed, s)
}

#[test]
fn cfc_programs_the_last_page_written_at_commit_with_its_flag() {
    for seed in [1, 5] {
        // 256 frames: nothing is stolen, every page of a transaction is written at commit.
        let (commits, s) = run("cfc", 256, false, seed);
        assert!(commits > 50, "seed {seed}: {commits} device commits");
        assert_eq!(
            s.commit_flags_in_page, commits,
            "seed {seed}: every commit writes its last page with it"
        );
        // Partial programs at commit remain only for chains GC split before the commit
        // (one per extra head); without the paper's rule there is at least one per commit.
        assert!(
            s.commit_flag_programs * 10 < commits,
            "seed {seed}: {} commit-flag partial programs for {commits} commits",
            s.commit_flag_programs
        );
        assert!(
            s.flag_writes < commits,
            "seed {seed}: {} flag programs in all for {commits} commits",
            s.flag_writes
        );
        assert_eq!(s.flag_writes, s.commit_flag_programs + s.gc_flag_programs);

        // The earlier rule, kept as `protocol.cfc_flag_reprogram`: a partial program each.
        let (commits_old, old) = run("cfc", 256, true, seed);
        assert_eq!(old.commit_flags_in_page, 0);
        assert!(
            old.commit_flag_programs >= commits_old,
            "seed {seed}: {} partial programs for {commits_old} commits",
            old.commit_flag_programs
        );

        // AFC: the first page is reprogrammed at every commit (§3.3, "mandatory").
        let (commits_afc, afc) = run("afc", 256, false, seed);
        assert_eq!(afc.commit_flags_in_page, 0);
        assert!(afc.commit_flag_programs >= commits_afc);
    }
}
