//! The host's planted bugs by name, for the mutation campaign (`scripts/host-mutants.sh`,
//! docs/MUTATION.md). Compiled in only with the `mutants` feature.
//!
//! Two kinds of planted bug exist in this crate. The ones guarded by `ssd::mutant::on`
//! (`wal-wrap-over-active`, `aries-abort-closes`, `ipa-appends-unordered`,
//! `ipl-sector-before-merge`) read `COMMITLAB_MUTANT` where they act. The others are the
//! configuration's `fault_*` fields (`HostConfig`, `pcm_tier::PcmSettings`), which the tests
//! set directly and which no configuration file can reach (`#[serde(skip)]`). [`apply`]
//! gives each of those a mutant name, so that a mutants build of the command line can
//! switch it on from the environment as it switches on the device's mutants: a host run
//! whose `COMMITLAB_MUTANT` names one of [`FAULTS`] gets that field set before it starts.

use crate::HostConfig;

/// The configuration faults by mutant name, with the field each sets.
pub const FAULTS: &[(&str, &str)] = &[
    ("host-early-commit-ack", "fault_early_commit_ack"),
    ("host-ipa-skip-crc", "fault_ipa_skip_crc"),
    ("host-log-acked-at-issue", "fault_log_acked_at_issue"),
    ("host-recovery-reuses-log", "fault_recovery_reuses_log"),
    ("host-fc-empty-commit-list", "fault_fc_empty_commit_list"),
    ("fc-skip-flag-move", "fault_fc = skip-flag-move"),
    ("fc-flag-before-log", "fault_fc = flag-before-log"),
    ("fc-afc-no-false-move", "fault_fc = afc-no-false-move"),
    ("fc-no-cover", "fault_fc = no-cover"),
    ("fc-no-log-floor", "fault_fc = no-log-floor"),
    ("fc-master-before-noted", "fault_fc = master-before-noted"),
    (
        "fc-master-before-commit-acks",
        "fault_fc = master-before-commit-acks",
    ),
    ("fc-restart-no-flags", "fault_fc = restart-no-flags"),
    ("fc-restart-no-dirty", "fault_fc = restart-no-dirty"),
    ("device-tx-skip-rewrite", "fault_device_tx = skip-rewrite"),
    (
        "device-tx-reopen-forgets",
        "fault_device_tx = reopen-forgets",
    ),
    ("host-drop-page", "fault_drop_page"),
    ("restart-no-master", "fault_restart = no-master"),
    ("restart-no-void", "fault_restart = no-void"),
    ("restart-no-tail", "fault_restart = no-tail"),
    ("restart-ipa-stale-area", "fault_restart = ipa-stale-area"),
    ("restart-uncommitted", "fault_restart = uncommitted"),
    ("restart-ipl-erase-early", "fault_restart = ipl-erase-early"),
    (
        "restart-pcm-keep-replaced",
        "fault_restart = pcm-keep-replaced",
    ),
    ("restart-pcm-atl-first", "fault_restart = pcm-atl-first"),
    (
        "restart-pcm-xid-from-one",
        "fault_restart = pcm-xid-from-one",
    ),
    (
        "restart-pcm-page-forget-bitmap",
        "fault_restart = pcm-page-forget-bitmap",
    ),
    ("pcm-early-atl-removal", "pcm.fault_early_atl_removal"),
    ("pcm-paper-pseudo-xid", "pcm.fault_paper_pseudo_xid"),
    ("pcm-pseudo-xid-of-aborts", "pcm.fault_pseudo_xid_of_aborts"),
    ("pcm-early-destage-free", "pcm.fault_early_destage_free"),
    ("pcm-skip-wal-rule", "pcm.fault_skip_wal_rule"),
    (
        "pcm-page-free-before-commit-point",
        "pcm.fault_page_free_before_commit_point",
    ),
    (
        "pcm-early-relocation-switch",
        "pcm.fault_early_relocation_switch",
    ),
    ("pcm-flash-ack-at-issue", "pcm.fault_flash_ack_at_issue"),
];

/// Sets the fault that `mutant` names; `false` if it names none of [`FAULTS`] (a device
/// mutant, a host mutant guarded where it acts, or nothing).
pub fn plant(cfg: &mut HostConfig, mutant: &str) -> bool {
    let p = &mut cfg.pcm;
    match mutant {
        "host-early-commit-ack" => cfg.fault_early_commit_ack = true,
        "host-ipa-skip-crc" => cfg.fault_ipa_skip_crc = true,
        "host-log-acked-at-issue" => cfg.fault_log_acked_at_issue = true,
        "host-recovery-reuses-log" => cfg.fault_recovery_reuses_log = true,
        "host-fc-empty-commit-list" => cfg.fault_fc_empty_commit_list = true,
        "host-drop-page" => cfg.fault_drop_page = true,
        "pcm-early-atl-removal" => p.fault_early_atl_removal = true,
        "pcm-paper-pseudo-xid" => p.fault_paper_pseudo_xid = true,
        "pcm-pseudo-xid-of-aborts" => p.fault_pseudo_xid_of_aborts = true,
        "pcm-early-destage-free" => p.fault_early_destage_free = true,
        "pcm-skip-wal-rule" => p.fault_skip_wal_rule = true,
        "pcm-page-free-before-commit-point" => p.fault_page_free_before_commit_point = true,
        "pcm-early-relocation-switch" => p.fault_early_relocation_switch = true,
        "pcm-flash-ack-at-issue" => p.fault_flash_ack_at_issue = true,
        m => {
            if let Some(f) = m.strip_prefix("fc-") {
                cfg.fault_fc = f.to_string();
            } else if let Some(f) = m.strip_prefix("device-tx-") {
                cfg.fault_device_tx = f.to_string();
            } else if let Some(f) = m.strip_prefix("restart-") {
                cfg.fault_restart = f.to_string();
            } else {
                return false;
            }
        }
    }
    true
}

/// Plants the fault `COMMITLAB_MUTANT` names, if it names one of [`FAULTS`].
pub fn apply(cfg: &mut HostConfig) {
    if let Ok(m) = std::env::var("COMMITLAB_MUTANT") {
        plant(cfg, &m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_fault_sets_something_and_others_set_nothing() {
        for (name, _) in FAULTS {
            let mut c = HostConfig::default();
            assert!(plant(&mut c, name), "{name}");
            let d = HostConfig::default();
            let changed = c.fault_early_commit_ack != d.fault_early_commit_ack
                || c.fault_ipa_skip_crc != d.fault_ipa_skip_crc
                || c.fault_log_acked_at_issue != d.fault_log_acked_at_issue
                || c.fault_recovery_reuses_log != d.fault_recovery_reuses_log
                || c.fault_fc_empty_commit_list != d.fault_fc_empty_commit_list
                || c.fault_fc != d.fault_fc
                || c.fault_device_tx != d.fault_device_tx
                || c.fault_drop_page != d.fault_drop_page
                || c.fault_restart != d.fault_restart
                || c.pcm.fault_early_atl_removal
                || c.pcm.fault_paper_pseudo_xid
                || c.pcm.fault_pseudo_xid_of_aborts
                || c.pcm.fault_early_destage_free
                || c.pcm.fault_skip_wal_rule
                || c.pcm.fault_page_free_before_commit_point
                || c.pcm.fault_early_relocation_switch
                || c.pcm.fault_flash_ack_at_issue;
            assert!(changed, "{name} changed no field");
        }
        let mut c = HostConfig::default();
        assert!(plant(&mut c, "host-log-acked-at-issue"));
        assert!(
            c.fault_log_acked_at_issue,
            "the WAL log device's early ack has a name"
        );
        let mut c = HostConfig::default();
        assert!(!plant(&mut c, "core-erase-early"));
        assert!(!plant(&mut c, "wal-wrap-over-active"));
        assert_eq!(c.fault_fc, "");
    }
}
