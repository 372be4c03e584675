//! The synthetic page-level generator: addresses from a distribution, request sizes from a
//! range, a read ratio, and either a closed loop (`queue_depth` clients, each waiting for its
//! request and then `think_ns`) or an open loop (arrivals every `interarrival_ns`, fixed or
//! exponentially distributed).

use crate::address::{AddressKind, Addresses};
use crate::{werr, Driver, Op, Step, WorkloadError};
use serde::{Deserialize, Serialize};
use sim::{Lpn, Rng, SimTime};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrival {
    Exponential,
    Fixed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SyntheticConfig {
    /// Requests to issue.
    pub requests: u64,
    /// Fraction of requests that are reads.
    pub read_ratio: f64,
    /// Fraction of requests that are trims.
    pub trim_ratio: f64,
    pub address: AddressKind,
    /// Fraction of the logical space addressed (from page 0).
    pub span: f64,
    /// Hot/cold: fraction of pages that are hot, and fraction of accesses that go to them.
    pub hot_fraction: f64,
    pub hot_access: f64,
    pub zipf_theta: f64,
    /// Request size in pages, uniform in `[request_pages_min, request_pages_max]`.
    pub request_pages_min: u32,
    pub request_pages_max: u32,
    /// Closed loop: number of clients (outstanding requests).
    pub queue_depth: u32,
    /// Open loop when > 0: mean time between arrivals.
    pub interarrival_ns: u64,
    pub arrival: Arrival,
    /// Closed loop: pause between a completion and the client's next request.
    pub think_ns: u64,
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        SyntheticConfig {
            requests: 20_000,
            read_ratio: 0.0,
            trim_ratio: 0.0,
            address: AddressKind::Uniform,
            span: 1.0,
            hot_fraction: 0.2,
            hot_access: 0.8,
            zipf_theta: 0.99,
            request_pages_min: 1,
            request_pages_max: 1,
            queue_depth: 16,
            interarrival_ns: 0,
            arrival: Arrival::Exponential,
            think_ns: 0,
        }
    }
}

impl SyntheticConfig {
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if !(0.0..=1.0).contains(&self.read_ratio) {
            return Err(werr(format!(
                "workload.synthetic.read_ratio must be in [0, 1], got {}",
                self.read_ratio
            )));
        }
        if !(0.0..=1.0).contains(&self.trim_ratio) || self.read_ratio + self.trim_ratio > 1.0 {
            return Err(werr(format!(
                "workload.synthetic.trim_ratio must be in [0, 1 - read_ratio], got {}",
                self.trim_ratio
            )));
        }
        if !(self.span > 0.0 && self.span <= 1.0) {
            return Err(werr(format!(
                "workload.synthetic.span must be in (0, 1], got {}",
                self.span
            )));
        }
        if self.request_pages_min == 0 || self.request_pages_max < self.request_pages_min {
            return Err(werr(
                "workload.synthetic.request_pages_min must be >= 1 and <= request_pages_max",
            ));
        }
        if self.queue_depth == 0 {
            return Err(werr("workload.synthetic.queue_depth must be at least 1"));
        }
        Ok(())
    }
}

pub struct Synthetic {
    cfg: SyntheticConfig,
    addr: Addresses,
    rng: Rng,
    issued: u64,
    thinking: Vec<bool>,
    /// Open loop: the next request's arrival (the first is the start of measurement).
    next_arrival: SimTime,
    last_arrival: Option<SimTime>,
    /// The next request, generated one step ahead so its page can be prefetched.
    ahead: Option<Op>,
}

impl Synthetic {
    pub fn new(
        cfg: SyntheticConfig,
        logical_pages: u32,
        rng: Rng,
    ) -> Result<Synthetic, WorkloadError> {
        cfg.validate()?;
        let span = ((f64::from(logical_pages) * cfg.span) as u64).max(1);
        if u64::from(cfg.request_pages_max) > span {
            return Err(werr(format!(
                "workload.synthetic.request_pages_max ({}) exceeds the {span} pages addressed",
                cfg.request_pages_max
            )));
        }
        let addr = Addresses::new(
            cfg.address,
            span,
            cfg.hot_fraction,
            cfg.hot_access,
            cfg.zipf_theta,
        )?;
        let clients = if cfg.interarrival_ns > 0 {
            1
        } else {
            cfg.queue_depth
        };
        let mut s = Synthetic {
            thinking: vec![false; clients as usize],
            cfg,
            addr,
            rng,
            issued: 0,
            next_arrival: SimTime::ZERO,
            last_arrival: None,
            ahead: None,
        };
        s.ahead = Some(s.generate());
        Ok(s)
    }

    /// The next request in sequence; the one after it is generated now (lookahead of one,
    /// which shifts nothing: the stream of requests is the same).
    fn make_op(&mut self) -> Op {
        let next = self.generate();
        self.issued += 1;
        self.ahead.replace(next).unwrap_or_else(|| self.generate())
    }

    fn generate(&mut self) -> Op {
        let pages = self.rng.range_inclusive(
            u64::from(self.cfg.request_pages_min),
            u64::from(self.cfg.request_pages_max),
        );
        let r = self.rng.unit_f64();
        let lpn = Lpn(self.addr.next(&mut self.rng, pages) as u32);
        let pages = pages as u32;
        if r < self.cfg.read_ratio {
            Op::Read { lpn, pages }
        } else if r < self.cfg.read_ratio + self.cfg.trim_ratio {
            Op::Trim { lpn, pages }
        } else {
            Op::Write { lpn, pages }
        }
    }
}

impl Driver for Synthetic {
    fn clients(&self) -> u32 {
        self.thinking.len() as u32
    }

    fn step(&mut self, client: u32, now: SimTime) -> Step {
        if self.issued >= self.cfg.requests {
            return Step::Done;
        }
        self.last_arrival = None;
        if self.cfg.interarrival_ns > 0 {
            if now < self.next_arrival {
                return Step::Sleep(self.next_arrival);
            }
            let gap = match self.cfg.arrival {
                Arrival::Fixed => self.cfg.interarrival_ns,
                Arrival::Exponential => self.rng.exp_u64(self.cfg.interarrival_ns as f64).max(1),
            };
            // The schedule advances from the arrival, not from `now`, so arrivals keep their
            // rate exactly (the world wakes this client at `next`, never later).
            self.last_arrival = Some(self.next_arrival);
            self.next_arrival += gap;
            let op = self.make_op();
            return Step::IssueThen(op, self.next_arrival.max(now));
        }
        let c = client as usize;
        if self.cfg.think_ns > 0 && !self.thinking[c] && self.issued > 0 {
            self.thinking[c] = true;
            return Step::Sleep(now + self.cfg.think_ns);
        }
        self.thinking[c] = false;
        Step::Issue(self.make_op())
    }

    fn set_origin(&mut self, origin: SimTime) {
        self.next_arrival = origin;
    }

    fn arrival(&self, _client: u32) -> Option<SimTime> {
        self.last_arrival
    }

    fn hint_next(&self) -> Option<Lpn> {
        match self.ahead {
            Some(Op::Write { lpn, .. } | Op::Read { lpn, .. } | Op::Trim { lpn, .. }) => Some(lpn),
            _ => None,
        }
    }

    fn total_requests(&self) -> Option<u64> {
        Some(self.cfg.requests)
    }

    fn describe(&self) -> String {
        let c = &self.cfg;
        let lp = if c.interarrival_ns > 0 {
            format!("open loop, {} ns between arrivals", c.interarrival_ns)
        } else {
            format!("closed loop, queue depth {}", c.queue_depth)
        };
        format!(
            "synthetic: {} requests of {}-{} pages, {} addresses, {:.0}% reads, {lp}",
            c.requests,
            c.request_pages_min,
            c.request_pages_max,
            c.address.name(),
            c.read_ratio * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_loop_issues_exactly_the_requested_count() {
        let cfg = SyntheticConfig {
            requests: 10,
            queue_depth: 3,
            ..Default::default()
        };
        let mut s = Synthetic::new(cfg, 100, Rng::new(1)).unwrap();
        assert_eq!(s.clients(), 3);
        let mut n = 0;
        loop {
            match s.step(n % 3, SimTime::ZERO) {
                Step::Issue(_) => n += 1,
                Step::Done => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(n, 10);
    }

    #[test]
    fn open_loop_sleeps_until_the_next_arrival() {
        let cfg = SyntheticConfig {
            requests: 3,
            interarrival_ns: 100,
            arrival: Arrival::Fixed,
            ..Default::default()
        };
        let mut s = Synthetic::new(cfg, 100, Rng::new(1)).unwrap();
        assert!(matches!(
            s.step(0, SimTime(0)),
            Step::IssueThen(_, SimTime(100))
        ));
        assert_eq!(s.step(0, SimTime(50)), Step::Sleep(SimTime(100)));
        assert!(matches!(
            s.step(0, SimTime(100)),
            Step::IssueThen(_, SimTime(200))
        ));
    }

    #[test]
    fn invalid_parameters_name_their_key() {
        let cfg = SyntheticConfig {
            read_ratio: 1.5,
            ..Default::default()
        };
        let e = Synthetic::new(cfg, 100, Rng::new(1)).err().unwrap();
        assert!(e.what.contains("read_ratio"));
        let cfg = SyntheticConfig {
            request_pages_max: 500,
            ..Default::default()
        };
        assert!(Synthetic::new(cfg, 100, Rng::new(1))
            .err()
            .unwrap()
            .what
            .contains("request_pages_max"));
    }
}
