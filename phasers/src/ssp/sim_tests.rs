//! The protocol of `ssp` on simulated ranks: the windows of 1 to 6 ranks
//! exchange their messages through FIFO links (MPI's non-overtaking rule)
//! in a random interleaving with their members' steps, their joins and
//! their departures. Every schedule must keep the staleness bound, publish
//! the exact reduction of each phase, the same on every rank, and end.

use std::collections::{BTreeMap, VecDeque};

use super::reduction::Reduction;
use super::window::{Effects, TreePos, Window, Wire};
use super::SspError;
use crate::accum::AccumOp;

/// splitmix64: a small deterministic generator for the schedules.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// What member `id` contributes to `phase`.
fn value(id: usize, phase: u64) -> u64 {
    (id as u64 + 1).wrapping_mul(1_000_003) ^ phase.wrapping_mul(0x9e37)
}

#[derive(Debug)]
struct SimMember {
    id: usize,
    rank: usize,
    clock: u64,
    /// The phase it waits for, after contributing.
    waiting_for: Option<u64>,
    /// Phases it still contributes to before leaving.
    left_to_run: u64,
}

struct Sim {
    k: Option<u64>,
    windows: Vec<Window<u64>>,
    links: BTreeMap<(usize, usize), VecDeque<Wire>>,
    members: Vec<SimMember>,
    /// Each member's contributions: (phase → value), for the oracle.
    contributed: BTreeMap<u64, u64>,
    /// The result each phase must have once every contribution is known.
    published: Vec<BTreeMap<u64, u64>>,
    next_id: usize,
    closed: Vec<bool>,
}

impl Sim {
    fn new(ranks: usize, k: Option<u64>) -> Sim {
        let keep = k.map_or(64, |k| 2 * k as usize + 2);
        Sim {
            k,
            windows: (0..ranks)
                .map(|r| {
                    Window::new(
                        Reduction::op(AccumOp::Sum).unwrap(),
                        TreePos::binomial(r as i32, ranks as i32),
                        keep,
                    )
                })
                .collect(),
            links: BTreeMap::new(),
            members: Vec::new(),
            contributed: BTreeMap::new(),
            published: vec![BTreeMap::new(); ranks],
            next_id: 0,
            closed: vec![false; ranks],
        }
    }

    fn apply(&mut self, rank: usize, fx: Effects) {
        for (dest, wire) in fx.sends {
            self.links
                .entry((rank, dest as usize))
                .or_default()
                .push_back(wire);
        }
        // Record what was published (a cascade may already have evicted
        // the oldest of several phases published at once).
        let w = &self.windows[rank];
        let from = self.published[rank].keys().next_back().map_or(0, |p| p + 1);
        for phase in from..w.published() {
            if let Ok(v) = w.result(phase) {
                self.published[rank].insert(phase, v);
            }
        }
    }

    fn join(&mut self, rank: usize, clock: Option<u64>, run: u64) {
        let w = &mut self.windows[rank];
        let clock = clock.unwrap_or_else(|| w.oldest_open());
        w.join(clock);
        self.members.push(SimMember {
            id: self.next_id,
            rank,
            clock,
            waiting_for: None,
            left_to_run: run,
        });
        self.next_id += 1;
    }

    /// A rank's first members: a rank is a participant from the start, so
    /// nothing was reduced without them.
    fn join_first(&mut self, rank: usize, members: usize, rng: &mut Rng) {
        assert_eq!(
            self.windows[rank].oldest_open(),
            0,
            "rank {rank} was skipped"
        );
        for _ in 0..members {
            let run = 4 + rng.below(12) as u64;
            self.join(rank, None, run);
        }
    }

    /// One step of member `i`: finish its wait, contribute, or leave.
    fn step_member(&mut self, i: usize, rng: &mut Rng) {
        let rank = self.members[i].rank;
        if let Some(phase) = self.members[i].waiting_for {
            if self.windows[rank].published() <= phase {
                return; // still waiting
            }
            self.members[i].waiting_for = None;
            self.check_released(i);
            return;
        }
        if self.members[i].left_to_run == 0 {
            let m = self.members.swap_remove(i);
            let mut fx = Effects::default();
            self.windows[rank].leave(m.clock, &mut fx);
            self.apply(rank, fx);
            return;
        }
        // Now and then a member registers another at its clock.
        if rng.below(40) == 0 {
            let clock = self.members[i].clock;
            let run = 1 + rng.below(6) as u64;
            self.join(rank, Some(clock), run);
        }
        let m = &mut self.members[i];
        let phase = m.clock;
        let v = value(m.id, phase);
        m.clock += 1;
        m.left_to_run -= 1;
        let sum = self.contributed.entry(phase).or_insert(0);
        *sum = sum.wrapping_add(v);
        let mut fx = Effects::default();
        self.windows[rank].contribute(phase, v, &mut fx);
        if let Some(k) = self.k {
            self.members[i].waiting_for = phase.checked_sub(k);
        }
        self.apply(rank, fx);
        if self.members[i].waiting_for.is_none() {
            self.check_released(i);
        }
    }

    /// A member going on after contributing to `clock - 1`: the bound holds
    /// and the result it reads is exact and says its phase.
    fn check_released(&self, i: usize) {
        let m = &self.members[i];
        let w = &self.windows[m.rank];
        let contributed = m.clock - 1;
        if let Some(k) = self.k {
            let slowest = self.members.iter().map(|o| o.clock).min().unwrap();
            assert!(
                m.clock <= slowest + k,
                "member {} at clock {} runs more than {k} ahead of clock {slowest}",
                m.id,
                m.clock
            );
            let oldest = contributed.saturating_sub(k);
            if contributed >= k {
                let (phase, _) = w.latest().expect("phase p - k is complete");
                assert!(phase >= oldest && phase <= contributed);
                // What `Member::result` promises at this clock.
                assert!(w.result(oldest).is_ok(), "phase {oldest} is kept");
            }
        }
        if let Some((phase, v)) = w.latest() {
            assert_eq!(
                Some(&v),
                self.contributed.get(&phase),
                "phase {phase} holds every contribution"
            );
        }
    }

    fn deliver(&mut self, link: (usize, usize)) {
        let wire = self.links.get_mut(&link).unwrap().pop_front().unwrap();
        let mut fx = Effects::default();
        self.windows[link.1]
            .receive(link.0 as i32, wire, &mut fx)
            .unwrap_or_else(|e: SspError| panic!("{e}"));
        self.apply(link.1, fx);
    }

    fn pending_links(&self) -> Vec<(usize, usize)> {
        self.links
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(&l, _)| l)
            .collect()
    }

    fn run(mut self, seed: u64) {
        let mut rng = Rng(seed);
        let ranks = self.windows.len();
        // Some ranks' members join at once, the others' at a random step,
        // while the other ranks may already run ahead.
        let mut late = vec![0; ranks];
        for (r, late) in late.iter_mut().enumerate() {
            let members = 1 + rng.below(3);
            if rng.below(2) == 0 {
                *late = members;
            } else {
                self.join_first(r, members, &mut rng);
            }
        }
        let mut steps = 0;
        loop {
            steps += 1;
            assert!(steps < 1_000_000, "the schedule does not end");
            let links = self.pending_links();
            let choice = rng.below(self.members.len() + links.len() + ranks);
            if choice < self.members.len() {
                self.step_member(choice, &mut rng);
            } else if choice < self.members.len() + links.len() {
                self.deliver(links[choice - self.members.len()]);
            } else {
                let r = choice - self.members.len() - links.len();
                let has_members = self.members.iter().any(|m| m.rank == r);
                if late[r] > 0 {
                    self.join_first(r, std::mem::take(&mut late[r]), &mut rng);
                } else if !has_members && !self.closed[r] {
                    self.closed[r] = true;
                    let mut fx = Effects::default();
                    self.windows[r].close(&mut fx);
                    self.apply(r, fx);
                }
            }
            if self.closed.iter().all(|&c| c) && self.pending_links().is_empty() {
                break;
            }
        }
        let end = self.windows[0].ended().expect("the root ended");
        for (r, w) in self.windows.iter().enumerate() {
            assert_eq!(w.ended(), Some(end), "rank {r} ended");
        }
        assert_eq!(end, self.contributed.keys().max().map_or(0, |p| p + 1));
        // Every rank that published a phase published the same value, the
        // reduction of every contribution.
        for (r, seen) in self.published.iter().enumerate() {
            for (phase, v) in seen {
                assert_eq!(
                    Some(v),
                    self.contributed.get(phase),
                    "rank {r} phase {phase}"
                );
            }
        }
        assert_eq!(
            self.windows[0].published(),
            end,
            "the root published every phase"
        );
    }
}

#[test]
fn random_schedules_keep_the_bound_and_the_results() {
    // Miri checks the same code on a few schedules (it runs each ~1000×
    // slower).
    let (max_ranks, seeds) = if cfg!(miri) { (3, 1) } else { (6, 40) };
    for ranks in 1..=max_ranks {
        for k in [Some(0), Some(1), Some(2), Some(4), None] {
            for seed in 0..seeds {
                Sim::new(ranks, k).run(seed * 7919 + ranks as u64 * 31 + k.unwrap_or(9));
            }
        }
    }
}
