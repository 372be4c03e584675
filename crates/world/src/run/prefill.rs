//! The prefill and ageing before the measured part: sequential writes of the prefilled
//! fraction, then random overwrites, as a closed loop; and `Prefilled`, the device they
//! leave, for runs that share one prefill.

use super::*;

impl World {
    /// Writes the first `prefill` fraction of the logical space sequentially, ages the
    /// device if configured, then starts measuring from the instant the device is idle
    /// again. Both phases issue their writes as a closed loop with two writes in flight per
    /// parallel unit: enough to keep every unit busy, and simulated time advances, so
    /// protocol state keyed by time (SCC's and BPCC's pending commit acks) is forgotten as
    /// it passes instead of piling up for millions of pages issued at one instant.
    pub fn prefill(&mut self) -> Result<(), WorldError> {
        let pages = (f64::from(self.device.logical_pages()) * self.cfg.workload.prefill) as u32;
        let mut loop_ = ClosedLoop::new(2 * self.device.core.geo.pus() as usize);
        self.prefill_total = u64::from(pages);
        for lpn in 0..pages {
            self.closed_loop_write(&mut loop_, lpn)?;
        }
        let writes = (f64::from(pages) * self.cfg.workload.age) as u64;
        self.prefill_total = u64::from(pages) + if pages > 0 { writes } else { 0 };
        if writes > 0 && pages > 0 {
            // Ageing (`workload.age`): random single-page overwrites of the prefilled pages.
            let mut rng = Rng::new(self.cfg.seed).fork("age");
            for _ in 0..writes {
                let lpn = rng.below(u64::from(pages)) as u32;
                self.closed_loop_write(&mut loop_, lpn)?;
            }
        }
        let now = self.device.barrier(SimTime::ZERO);
        self.begin_measuring(now);
        Ok(())
    }

    /// What follows the prefill, from the instant `now` the device is idle again.
    pub(super) fn begin_measuring(&mut self, now: SimTime) {
        self.now = now;
        self.requests = 0;
        self.start_measuring(self.now);
        // Arrival times count from here, not from t = 0: otherwise every request
        // of a timed workload is already late and an open loop degenerates into a burst.
        self.driver.set_origin(self.now);
    }

    /// A copy of the device as the prefill left it, for other runs to start from
    /// (`from_prefilled`). Call right after `prefill` (before anything is measured); `None`
    /// for a file-backed device.
    pub fn prefilled(&self) -> Option<Prefilled> {
        Some(Prefilled {
            key: prefill_key(&self.cfg),
            device: self.device.try_clone()?,
            now: self.now,
            next_tag: self.next_tag,
            writes: self.prefill_total,
        })
    }

    fn closed_loop_write(&mut self, l: &mut ClosedLoop, lpn: u32) -> Result<(), WorldError> {
        if l.in_flight.len() >= l.depth {
            if let Some(t) = l.in_flight.pop_front() {
                l.now = l.now.max(t);
            }
        }
        let op = Op::Write {
            lpn: Lpn(lpn),
            pages: 1,
        };
        let (ack, _) = self.submit(&op, l.now)?;
        l.in_flight.push_back(ack);
        Ok(())
    }
}

/// The prefill's and ageing's closed loop: at most `depth` writes in flight; the next write
/// is issued when the oldest completes.
struct ClosedLoop {
    depth: usize,
    in_flight: std::collections::VecDeque<SimTime>,
    now: SimTime,
}

impl ClosedLoop {
    fn new(depth: usize) -> ClosedLoop {
        ClosedLoop {
            depth: depth.max(1),
            in_flight: std::collections::VecDeque::new(),
            now: SimTime::ZERO,
        }
    }
}

/// A device as its prefill and ageing left it (`World::prefill`), with the little world
/// state the measured part continues from: the simulated instant the device was idle again,
/// the next write tag and the prefill's size (progress only). Cloning it copies the whole
/// device (hundreds of MiB at 32 GiB): `reproduce` prefills once per distinct
/// `prefill_key` and gives each point its own copy (`run_prefilled`).
pub struct Prefilled {
    pub(super) key: String,
    pub(super) device: Device,
    pub(super) now: SimTime,
    pub(super) next_tag: u64,
    pub(super) writes: u64,
}

impl Prefilled {
    /// An independent copy (`None` cannot happen for a device `prefill` made: it is in
    /// memory).
    pub fn try_clone(&self) -> Option<Prefilled> {
        Some(Prefilled {
            key: self.key.clone(),
            device: self.device.try_clone()?,
            now: self.now,
            next_tag: self.next_tag,
            writes: self.writes,
        })
    }

    /// The `prefill_key` of the configuration it was made from.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// Everything the state after the prefill depends on: the device (NAND, FTL, protocol
/// configuration), the seed (ageing draws its addresses from it), the prefill and ageing
/// fractions, and the invariant checking interval (a broken invariant fails the prefill).
/// Not the workload that runs afterwards, nor recovery measurement: two configurations with
/// the same key reach the same device state, so they may share one prefill. As JSON text,
/// so it is a total order for maps and equal exactly when the configurations are.
pub fn prefill_key(cfg: &Config) -> String {
    #[derive(Serialize)]
    struct Key {
        device: ssd::DeviceConfig,
        seed: u64,
        prefill: f64,
        age: f64,
        check_invariants_every: u64,
    }
    serde_json::to_string(&Key {
        device: cfg.device(),
        seed: cfg.seed,
        prefill: cfg.workload.prefill,
        age: cfg.workload.age,
        check_invariants_every: cfg.run.check_invariants_every,
    })
    .unwrap_or_default()
}

/// Builds `cfg`'s device and prefills (and ages) it as `run` would, for runs that share it
/// (`run_prefilled`). Fails as `run` would fail during its setup or prefill.
pub fn prefill(cfg: &Config) -> Result<Prefilled, WorldError> {
    let mut w = World::new(cfg, &RunOptions::default())?;
    w.prefill()?;
    // The world's own device, moved out rather than copied: nothing runs on it afterwards.
    Ok(Prefilled {
        key: prefill_key(&w.cfg),
        now: w.now,
        next_tag: w.next_tag,
        writes: w.prefill_total,
        device: w.device,
    })
}
