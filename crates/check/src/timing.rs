//! Timing profiles: how the crash checker perturbs a run's timing so that every reordering
//! the durability contract allows can actually happen in some recording.
//!
//! A recording is one run, and one run has one timing schedule. With the default timing a
//! transaction's writes cross the host interface in 0 ns and every program takes exactly
//! `program_ns`, so whole classes of interleavings (a block erased while a program on another
//! plane is still in flight, a page rewritten between a COMMIT and its ack, a transaction that
//! stays open across many GC rounds) never occur, and a protocol that depends on them being
//! impossible passes. A profile changes only timing parameters of the configuration:
//!
//! - `host`: the host interface in MB/s (`ftl.interface_mbps`; > 0 makes a transaction last);
//! - `channel`: the NAND channel in MB/s (`nand.timing.channel_mbps`; slow transfers delay
//!   program starts behind reads and other programs);
//! - `program`, `erase`: array times (`nand.timing.program_ns`, `erase_ns`; a long erase
//!   overlaps many programs on other planes);
//! - `jitter`: per-operation extra array time, uniform in `[0, jitter]` ns, drawn per
//!   operation from the run's seed (`nand.timing.jitter_ns`, `jitter_seed`), so operations
//!   of one run finish in orders a fixed latency never produces;
//! - `think`: host delay between requests (`workload.synthetic.think_ns`) or mean time
//!   between transaction starts (`workload.txn.interarrival_ns`): acks that reach the host
//!   late, so the next request starts later than the device could take it.
//!
//! A profile is written as a spec, `host=4,channel=2,jitter=600000`, that `--timing` accepts
//! back, so a failure's replay command pins the exact profile. Exhaustive checking runs the
//! named set [`ADVERSARIAL`] by default; random checking draws a profile per batch of
//! schedules from the seed ([`Timing::draw`]).
//!
//! What it does not do: change the geometry or the workload's content (only when things
//! happen), or model timing faults (a command that never completes).

use sim::Rng;
use world::{Config, WorkloadKind};

/// A timing profile; `None` leaves a parameter as configured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    pub host_mbps: Option<u64>,
    pub channel_mbps: Option<u64>,
    pub program_ns: Option<u64>,
    pub erase_ns: Option<u64>,
    pub jitter_ns: Option<u64>,
    pub think_ns: Option<u64>,
}

/// The named profiles exhaustive checking runs by default, as (name, spec).
pub const ADVERSARIAL: &[(&str, &str)] = &[
    ("configured", ""),
    // 512 B at 4 MB/s: 128 µs per page, so a 5-page transaction stays open for 640 µs,
    // longer than three programs, and commits overlap GC on the other plane.
    ("slow-host", "host=4"),
    // Transfers longer than programs: programs start late and out of step across planes.
    ("slow-channel", "channel=2"),
    // Erases 80 times longer than programs: GC's erase stays in flight while many programs
    // and their acks complete on the other plane.
    ("slow-erase", "program=100000,erase=8000000"),
    // Every operation's array time varies by up to three program times, plus a host that
    // takes time: completion order across planes differs from issue order.
    ("jitter", "host=16,jitter=600000"),
    // Acks that reach the host late, on a slow host: requests trickle in between GC steps.
    ("late-acks", "host=8,think=300000"),
    // Array times from 0.1 to 3.1 ms, drawn per operation: one plane's backlog runs far
    // ahead of the other's, so a transaction's last page (and a flag written on it) can be
    // durable long before an earlier page on the other plane. The mutation campaign's
    // `flag-commit-early` on cfc survived every other profile and is caught here
    // (docs/MUTATION.md).
    ("wild-jitter", "program=100000,jitter=3000000"),
];

impl Timing {
    /// Parses a spec (`host=4,jitter=600000`), a name from [`ADVERSARIAL`], or
    /// `configured`/empty (no change).
    pub fn parse(spec: &str) -> Result<Timing, String> {
        if let Some((_, s)) = ADVERSARIAL.iter().find(|(n, _)| *n == spec) {
            return Timing::parse(s);
        }
        let mut t = Timing::default();
        for part in spec.split(',').filter(|p| !p.trim().is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| {
                format!(
                    "timing profile '{spec}': '{part}' is not key=value (or a profile name: {})",
                    names()
                )
            })?;
            let v: u64 = v.trim().parse().map_err(|_| {
                format!("timing profile '{spec}': '{v}' is not a non-negative integer")
            })?;
            let slot = match k.trim() {
                "host" => &mut t.host_mbps,
                "channel" => &mut t.channel_mbps,
                "program" => &mut t.program_ns,
                "erase" => &mut t.erase_ns,
                "jitter" => &mut t.jitter_ns,
                "think" => &mut t.think_ns,
                other => {
                    return Err(format!(
                        "timing profile '{spec}': unknown key '{other}' (known: host, channel, program, erase, jitter, think)"
                    ))
                }
            };
            *slot = Some(v);
        }
        if t.program_ns == Some(0) || t.erase_ns == Some(0) {
            return Err(format!(
                "timing profile '{spec}': program and erase times must be positive"
            ));
        }
        if t.jitter_ns.is_some_and(|j| j > 1 << 40) || t.think_ns.is_some_and(|j| j > 1 << 40) {
            return Err(format!(
                "timing profile '{spec}': jitter and think must be at most 2^40 ns"
            ));
        }
        Ok(t)
    }

    /// The spec `parse` reads back.
    pub fn spec(&self) -> String {
        let mut parts = Vec::new();
        for (k, v) in [
            ("host", self.host_mbps),
            ("channel", self.channel_mbps),
            ("program", self.program_ns),
            ("erase", self.erase_ns),
            ("jitter", self.jitter_ns),
            ("think", self.think_ns),
        ] {
            if let Some(v) = v {
                parts.push(format!("{k}={v}"));
            }
        }
        if parts.is_empty() {
            "configured".into()
        } else {
            parts.join(",")
        }
    }

    /// A random profile for batch `batch` of the schedules drawn from `seed`: each parameter
    /// is perturbed with probability 1/2, over ranges from "much faster" to "much slower"
    /// than the defaults.
    pub fn draw(seed: u64, batch: u64) -> Timing {
        let mut r = Rng::new(seed).fork("crash-timing").fork(&batch.to_string());
        let mut t = Timing::default();
        // Log-uniform: powers of two times a uniform factor.
        let log_uniform = |r: &mut Rng, lo_pow: u32, hi_pow: u32| -> u64 {
            let p = r.range_inclusive(u64::from(lo_pow), u64::from(hi_pow)) as u32;
            (1u64 << p) + r.below(1u64 << p)
        };
        if r.chance(0.5) {
            t.host_mbps = Some(log_uniform(&mut r, 0, 8));
        }
        if r.chance(0.5) {
            t.channel_mbps = Some(log_uniform(&mut r, 0, 9));
        }
        if r.chance(0.5) {
            t.program_ns = Some(log_uniform(&mut r, 14, 20));
        }
        if r.chance(0.5) {
            t.erase_ns = Some(log_uniform(&mut r, 17, 23));
        }
        if r.chance(0.5) {
            t.jitter_ns = Some(log_uniform(&mut r, 12, 21));
        }
        if r.chance(0.3) {
            t.think_ns = Some(log_uniform(&mut r, 10, 19));
        }
        t
    }

    /// Applies the profile to a configuration.
    pub fn apply(&self, cfg: &mut Config) {
        if let Some(v) = self.host_mbps {
            cfg.ftl.interface_mbps = v;
        }
        if let Some(v) = self.channel_mbps {
            cfg.nand.timing.channel_mbps = v;
        }
        if let Some(v) = self.program_ns {
            cfg.nand.timing.program_ns = v;
            cfg.nand.timing.partial_program_ns = v;
        }
        if let Some(v) = self.erase_ns {
            cfg.nand.timing.erase_ns = v;
        }
        if let Some(v) = self.jitter_ns {
            cfg.nand.timing.jitter_ns = v;
            cfg.nand.timing.jitter_seed = cfg.seed ^ 0x6a69_7474_6572;
        }
        if let Some(v) = self.think_ns {
            match cfg.workload.kind {
                WorkloadKind::Synthetic => cfg.workload.synthetic.think_ns = v,
                WorkloadKind::Txn => cfg.workload.txn.interarrival_ns = v,
                WorkloadKind::Host => cfg.host.think_ns = v,
                WorkloadKind::Seqwriter | WorkloadKind::Trace => {}
            }
        }
    }
}

fn names() -> String {
    ADVERSARIAL
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_names_resolve() {
        for b in 0..50 {
            let t = Timing::draw(7, b);
            assert_eq!(Timing::parse(&t.spec()).unwrap(), t);
        }
        assert_eq!(Timing::parse("slow-host").unwrap().host_mbps, Some(4));
        assert_eq!(Timing::parse("configured").unwrap(), Timing::default());
        assert!(Timing::parse("host=x").is_err());
        assert!(Timing::parse("warp=3").is_err());
        assert!(Timing::parse("program=0").is_err());
    }

    #[test]
    fn draws_differ_between_batches_and_repeat_for_a_batch() {
        assert_eq!(Timing::draw(3, 9), Timing::draw(3, 9));
        let distinct: std::collections::BTreeSet<String> =
            (0..20).map(|b| Timing::draw(3, b).spec()).collect();
        assert!(distinct.len() > 10, "{distinct:?}");
    }
}
