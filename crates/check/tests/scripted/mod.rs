//! Scripted recordings: drive a device command by command at chosen instants, record what a
//! `world` run would (the NAND op log and the host log), and hand it to the crash checker.
//! For interleavings the workload generators cannot produce (e.g. a transaction writing a
//! page whose previous commit is not acked yet), and for crashes after a recovery
//! (`double_crash`: crash a recorded run, recover, run random traffic, crash-check again),
//! which the checker itself does not do (it crashes once).

#![allow(dead_code)]

use commitlab_check::Recording;
use sim::{Lpn, SimTime, TxId};
use ssd::Device;
use std::collections::BTreeMap;
use world::HostEvent;

pub struct Script {
    pub dev: Device,
    cfg: world::Config,
    base: media::NandImage,
    host: Vec<HostEvent>,
    inst: BTreeMap<u64, u64>,
    next_inst: u64,
    next_tag: u64,
}

pub fn us(x: u64) -> SimTime {
    SimTime(x * 1_000)
}

impl Script {
    pub fn new(cfg: &world::Config) -> Script {
        let mut dev = Device::in_memory(&cfg.device()).unwrap();
        let base = dev.core.nand.image().clone();
        dev.core.nand.enable_log();
        Script {
            dev,
            cfg: cfg.clone(),
            base,
            host: Vec::new(),
            inst: BTreeMap::new(),
            next_inst: 1,
            next_tag: 1,
        }
    }

    fn tag(&mut self) -> u64 {
        self.next_tag += 1;
        self.next_tag
    }

    /// A plain write; returns its ack.
    pub fn plain(&mut self, lpn: u32, at: SimTime) -> SimTime {
        let tag = self.tag();
        let ack = self.dev.write_plain(Lpn(lpn), tag, at).unwrap();
        self.host.push(HostEvent::Plain {
            lpn: Lpn(lpn),
            tag,
            issue: at,
            ack,
        });
        ack
    }

    pub fn begin(&mut self, tx: u64, at: SimTime) {
        self.dev.begin(TxId(tx), at).unwrap();
        self.inst.insert(tx, self.next_inst);
        self.next_inst += 1;
    }

    pub fn write(&mut self, tx: u64, lpn: u32, at: SimTime) -> SimTime {
        let tag = self.tag();
        let t = match self.dev.write(TxId(tx), Lpn(lpn), tag, at) {
            Ok(t) => t,
            Err(e) => {
                let live: u64 = (0..self.dev.core.geo.blocks())
                    .map(|b| u64::from(self.dev.core.live(media::BlockId(b))))
                    .sum();
                panic!(
                    "{e}: counters {:?}, live pages {live}, mapped {}, active {}",
                    self.dev.protocol_counters(),
                    self.dev.core.mapped_pages(),
                    self.dev.active_txs()
                )
            }
        };
        self.host.push(HostEvent::TxWrite {
            inst: self.inst[&tx],
            lpn: Lpn(lpn),
            tag,
            issue: at,
        });
        t
    }

    pub fn commit(&mut self, tx: u64, at: SimTime) -> SimTime {
        let ack = self.dev.commit(TxId(tx), at).unwrap();
        self.host.push(HostEvent::Commit {
            inst: self.inst[&tx],
            issue: at,
            ack,
        });
        ack
    }

    pub fn abort(&mut self, tx: u64, at: SimTime) -> SimTime {
        let ack = self.dev.abort(TxId(tx), at).unwrap();
        self.host.push(HostEvent::Abort {
            inst: self.inst[&tx],
            issue: at,
            ack,
        });
        ack
    }

    /// Keeps the array of the unit holding `lpn`'s mapped page busy (timed reads).
    pub fn busy_reads(&mut self, lpn: u32, n: u32, at: SimTime) {
        for _ in 0..n {
            self.dev.read(Lpn(lpn), at).unwrap();
        }
    }

    pub fn recording(mut self) -> Recording {
        let ops = self.dev.core.nand.take_log();
        let atomic = self.dev.info().atomic;
        Recording {
            cfg: self.cfg,
            base: self.base,
            ops,
            host: self.host,
            atomic,
        }
    }
}

/// A crash image of a recorded run: a random instant, every operation completed by then, a
/// random subset of those in flight, maybe one torn (as the checker's random mode draws).
pub fn random_crash_image(rec: &Recording, rng: &mut sim::Rng) -> (media::NandImage, SimTime) {
    use media::{OpKind, TornKind};
    let ops = &rec.ops;
    let o = &ops[rng.below(ops.len() as u64) as usize];
    let t = if rng.chance(0.5) { o.start } else { o.end };
    let mut done: Vec<usize> = (0..ops.len()).filter(|i| ops[*i].end <= t).collect();
    done.sort_by_key(|i| (ops[*i].end, *i));
    let mut img = rec.base.clone();
    for i in done {
        img.apply(&ops[i].kind).unwrap();
    }
    let flying: Vec<usize> = (0..ops.len())
        .filter(|i| ops[*i].start <= t && ops[*i].end > t)
        .collect();
    let mut torn_done = false;
    for i in flying {
        if rng.chance(0.5) {
            img.apply(&ops[i].kind).unwrap();
        } else if !torn_done && rng.chance(0.3) {
            let k = match ops[i].kind {
                OpKind::Program { .. } => Some(TornKind::Program),
                OpKind::PartialProgram { .. } => Some(TornKind::Partial { seed: i as u64 }),
                OpKind::Erase { .. } => Some(if rng.chance(0.5) {
                    TornKind::EraseUnstable
                } else {
                    TornKind::EraseGarbled
                }),
                OpKind::SetMode { .. } => None,
            };
            if let Some(k) = k {
                img.apply_torn(&ops[i].kind, k).unwrap();
                torn_done = true;
            }
        }
    }
    (img, t)
}

impl Script {
    /// Continues on a recovered device: its current contents become acked plain writes at
    /// instant 0 (so the oracle knows the starting state), and its image the base.
    pub fn resume(cfg: &world::Config, mut dev: Device) -> Script {
        let base = dev.core.nand.image().clone();
        let mut host = Vec::new();
        let far = SimTime::from_ms(1 << 30);
        for l in 0..dev.logical_pages() {
            if let ssd::ReadOutcome::Tag(tag) = dev.read(Lpn(l), far).unwrap().0 {
                host.push(HostEvent::Plain {
                    lpn: Lpn(l),
                    tag,
                    issue: SimTime::ZERO,
                    ack: SimTime::ZERO,
                });
            }
        }
        dev.core.nand.enable_log();
        Script {
            dev,
            cfg: cfg.clone(),
            base,
            host,
            inst: BTreeMap::new(),
            next_inst: 1,
            next_tag: 1 << 50,
        }
    }

    /// Random transactions, up to `concurrency` at once on disjoint pages (unless
    /// `shared_pages`), some aborted, with plain writes between; every command is issued a
    /// few microseconds after the previous one, without waiting for acks, so commits overlap
    /// later writes of the same pages.
    pub fn random_traffic(
        &mut self,
        rng: &mut sim::Rng,
        txs: u64,
        concurrency: usize,
        shared_pages: bool,
        from: SimTime,
    ) {
        let lp = self.dev.logical_pages();
        let span = (lp / 2).max(8);
        let mut t = from;
        let mut active: Vec<(u64, Vec<u32>, u32)> = Vec::new(); // (tx, pages, writes left)
        let mut next_tx = 1_000u64;
        let mut started = 0u64;
        let owned = |active: &Vec<(u64, Vec<u32>, u32)>, l: u32| {
            active.iter().any(|(_, p, _)| p.contains(&l))
        };
        while started < txs || !active.is_empty() {
            t += 1_000 + rng.below(20_000);
            if rng.chance(0.1) {
                let l = rng.below(u64::from(span)) as u32;
                if shared_pages || !owned(&active, l) {
                    self.plain(l, t);
                }
                continue;
            }
            if active.len() < concurrency && started < txs && rng.chance(0.5) {
                let tx = next_tx;
                next_tx += 1;
                started += 1;
                self.begin(tx, t);
                active.push((tx, Vec::new(), 1 + rng.below(4) as u32));
                continue;
            }
            if active.is_empty() {
                continue;
            }
            let k = rng.below(active.len() as u64) as usize;
            if active[k].2 > 0 {
                let mut l = rng.below(u64::from(span)) as u32;
                let mut tries = 0;
                while !shared_pages && (owned(&active, l)) && tries < 50 {
                    l = rng.below(u64::from(span)) as u32;
                    tries += 1;
                }
                if shared_pages || !owned(&active, l) {
                    let tx = active[k].0;
                    self.write(tx, l, t);
                    active[k].1.push(l);
                }
                active[k].2 -= 1;
            } else {
                let (tx, _, _) = active.remove(k);
                if rng.chance(0.35) {
                    self.abort(tx, t);
                } else {
                    self.commit(tx, t);
                }
            }
        }
    }
}

/// Crash a recorded run at random states; from each, recover, run random traffic on the
/// recovered device, and crash-check that second segment. Returns (states checked, violations)
/// and prints the first violations.
pub fn double_crash(
    cfg: &world::Config,
    seed: u64,
    first: u64,
    schedules: u64,
    shared_pages: bool,
) -> (u64, u64) {
    use commitlab_check::{check, describe, evaluate, record, Mode};
    let rec = record(cfg).unwrap();
    let mut rng = sim::Rng::new(seed);
    let (mut states, mut bad) = (0, 0);
    for k in 0..first {
        let (img, t) = random_crash_image(&rec, &mut rng);
        let f = evaluate(&rec, img.clone(), t);
        assert!(f.is_empty(), "first crash (seed {seed}, round {k}): {f:?}");
        let nand = media::Nand::from_image(img, cfg.nand.timing.clone());
        let (dev, _) = Device::recover(&cfg.device(), nand).unwrap();
        let mut s = Script::resume(cfg, dev);
        s.random_traffic(&mut rng, 25, 3, shared_pages, SimTime::from_ms(1));
        let rec2 = s.recording();
        let rep = check(&rec2, Mode::Random { schedules }, seed + k, None).unwrap();
        states += rep.states;
        bad += rep.violations;
        for v in rep.first.iter().take(2) {
            eprintln!(
                "double crash seed {seed} round {k}: {}{:#?}",
                describe(&rec2, &v.state),
                v.findings
            );
        }
    }
    (states, bad)
}
