//! One rank's part of a stale accumulator, as a state machine with no
//! synchronization and no MPI of its own: the phases this rank still
//! reduces, the results it has published, and the messages each change
//! asks its owner to send (see the protocol in `ssp`).

use std::collections::VecDeque;

use super::reduction::Reduction;
use super::SspError;
use crate::accum::AccumValue;

/// A message of the protocol, on the accumulator's own communicator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// Child → parent: the reduction of the child's subtree for `phase`.
    Partial { phase: u64, bits: u64 },
    /// Parent → child: the global result of `phase`.
    Result { phase: u64, bits: u64 },
    /// Child → parent: the child's subtree is closed; it sent a partial for
    /// every phase below `end` and sends none from `end` on.
    Retire { end: u64 },
    /// Parent → child: every rank is closed; no phase from `end` on
    /// completes. The last message on each link.
    End { end: u64 },
    /// Either way: the accumulator failed on rank `origin`, so it fails on
    /// every rank. Flooded over the tree: each rank forwards the first one
    /// it learns of to its other neighbours.
    Failed { origin: i32 },
}

// Without MPI there is no other rank to talk to (the simulated ranks of
// the tests still do).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
impl Wire {
    const PARTIAL: u64 = 0;
    const RESULT: u64 = 1;
    const RETIRE: u64 = 2;
    const END: u64 = 3;
    const FAILED: u64 = 4;

    /// The three words it travels as.
    pub(crate) fn encode(self) -> [u64; 3] {
        match self {
            Wire::Partial { phase, bits } => [Self::PARTIAL, phase, bits],
            Wire::Result { phase, bits } => [Self::RESULT, phase, bits],
            Wire::Retire { end } => [Self::RETIRE, end, 0],
            Wire::End { end } => [Self::END, end, 0],
            Wire::Failed { origin } => [Self::FAILED, u64::from(origin.unsigned_abs()), 0],
        }
    }

    /// The message `words` encode, if any.
    pub(crate) fn decode(words: &[u64]) -> Option<Wire> {
        match *words {
            [Self::PARTIAL, phase, bits] => Some(Wire::Partial { phase, bits }),
            [Self::RESULT, phase, bits] => Some(Wire::Result { phase, bits }),
            [Self::RETIRE, end, _] => Some(Wire::Retire { end }),
            [Self::END, end, _] => Some(Wire::End { end }),
            [Self::FAILED, origin, _] => i32::try_from(origin)
                .ok()
                .map(|origin| Wire::Failed { origin }),
            _ => None,
        }
    }
}

/// A rank's place in the binomial tree over the ranks (rank 0 at the
/// root; the parent of `r` is `r` without its lowest set bit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreePos {
    pub(crate) rank: i32,
    pub(crate) parent: Option<i32>,
    /// In the order their values are combined.
    pub(crate) children: Vec<i32>,
}

impl TreePos {
    pub(crate) fn binomial(rank: i32, size: i32) -> TreePos {
        let parent = (rank > 0).then(|| rank & (rank - 1));
        // The children of r are r + 2^i for every 2^i below r's lowest set
        // bit (any 2^i for the root) that stays inside the communicator.
        let limit = if rank == 0 {
            i64::MAX
        } else {
            i64::from(rank & rank.wrapping_neg())
        };
        let children = (0..31)
            .map(|i| 1i64 << i)
            .take_while(|&step| step < limit)
            .map(|step| i64::from(rank) + step)
            .take_while(|&child| child < i64::from(size))
            .map(|child| child as i32)
            .collect();
        TreePos {
            rank,
            parent,
            children,
        }
    }
}

/// What a change asks of the owner, in order.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    /// Messages to send, in this order.
    pub(crate) sends: Vec<(i32, Wire)>,
    /// A phase was published: wake the waiters.
    pub(crate) published: bool,
    /// The accumulator ended on every rank: stop serving its messages.
    pub(crate) ended: bool,
    /// This rank learned that the accumulator failed on rank `origin`.
    pub(crate) peer_failed: Option<i32>,
}

/// A phase this rank has not reduced yet.
#[derive(Debug)]
struct Open<V> {
    /// Local members that contribute to it.
    expected: usize,
    contributed: usize,
    local: V,
    /// Each child's partial, once it arrived.
    from_children: Vec<Option<V>>,
}

/// One rank's state (see the module docs).
#[derive(Debug)]
pub(crate) struct Window<V> {
    reduction: Reduction<V>,
    tree: TreePos,
    /// Results kept for [`result`](Self::result).
    keep: usize,
    /// Local members.
    live: usize,
    /// The oldest phase not yet reduced (sent up, or published at the
    /// root); `open[i]` is phase `low + i`.
    low: u64,
    open: VecDeque<Open<V>>,
    /// One past the highest phase a local member contributed to.
    high: u64,
    /// No local member joins any more (`close`).
    closed: bool,
    /// The `end` of each child's `Retire`, once it arrived.
    child_end: Vec<Option<u64>>,
    retired: bool,
    /// Phases below this are complete here.
    published: u64,
    results: VecDeque<(u64, V)>,
    ended: Option<u64>,
    /// The rank where the accumulator failed first, as far as this rank
    /// knows: the protocol has stopped here.
    failed: Option<i32>,
}

impl<V: AccumValue> Window<V> {
    pub(crate) fn new(reduction: Reduction<V>, tree: TreePos, keep: usize) -> Window<V> {
        let children = tree.children.len();
        Window {
            reduction,
            tree,
            keep: keep.max(1),
            live: 0,
            low: 0,
            open: VecDeque::new(),
            high: 0,
            closed: false,
            child_end: vec![None; children],
            retired: false,
            published: 0,
            results: VecDeque::new(),
            ended: None,
            failed: None,
        }
    }

    /// Local members.
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// The accumulator failed on this rank: the protocol stops here, and
    /// every neighbour is told, unless it failed already or ended (then
    /// nobody listens any more).
    pub(crate) fn fail(&mut self, fx: &mut Effects) {
        if self.failed.is_none() && self.ended.is_none() {
            let origin = self.tree.rank;
            self.failed = Some(origin);
            self.spread_failure(origin, None, fx);
        }
    }

    /// Tells every neighbour but `except` that the accumulator failed on
    /// `origin`.
    fn spread_failure(&self, origin: i32, except: Option<i32>, fx: &mut Effects) {
        let neighbours = self.tree.parent.iter().chain(&self.tree.children);
        for &to in neighbours.filter(|&&to| Some(to) != except) {
            fx.sends.push((to, Wire::Failed { origin }));
        }
    }

    /// Phases complete on this rank.
    pub(crate) fn published(&self) -> u64 {
        self.published
    }

    /// The first phase that never completes, once every rank closed.
    pub(crate) fn ended(&self) -> Option<u64> {
        self.ended
    }

    /// The newest complete phase and its result.
    pub(crate) fn latest(&self) -> Option<(u64, V)> {
        self.results.back().copied()
    }

    /// The result of complete phase `phase`, if still kept.
    pub(crate) fn result(&self, phase: u64) -> Result<V, SspError> {
        if phase >= self.published {
            return Err(SspError::NotComplete {
                phase,
                completed: self.published,
            });
        }
        let oldest = self.results.front().map_or(self.published, |r| r.0);
        match phase.checked_sub(oldest) {
            Some(i) => Ok(self.results[i as usize].1),
            None => Err(SspError::Evicted { phase, oldest }),
        }
    }

    /// The phase a member joining without a parent starts at: the oldest
    /// one not reduced yet.
    pub(crate) fn oldest_open(&self) -> u64 {
        self.low
    }

    /// A member joins at `clock` (at least [`oldest_open`](Self::oldest_open)).
    pub(crate) fn join(&mut self, clock: u64) {
        debug_assert!(clock >= self.low, "a member joins a phase not reduced yet");
        self.live += 1;
        self.each_open_from(clock, |open| open.expected += 1);
    }

    /// A member at `clock` (it contributed every phase below) leaves.
    pub(crate) fn leave(&mut self, clock: u64, fx: &mut Effects) {
        self.live -= 1;
        self.each_open_from(clock, |open| open.expected -= 1);
        self.reduce(fx);
    }

    /// A local member contributes `value` to `phase`.
    pub(crate) fn contribute(&mut self, phase: u64, value: V, fx: &mut Effects) {
        if self.failed.is_some() {
            return; // nothing completes any more
        }
        let reduction = &self.reduction;
        let slot = Self::slot(
            &mut self.open,
            self.low,
            self.live,
            reduction.identity(),
            self.child_end.len(),
            phase,
        )
        .expect("a member contributes to a phase not reduced yet");
        // Combined first: a panicking user reduction changes nothing.
        slot.local = reduction.combine(slot.local, value);
        slot.contributed += 1;
        self.high = self.high.max(phase + 1);
        self.reduce(fx);
    }

    /// No local member joins any more: this rank contributes the identity
    /// from now on, and retires once its subtree has. A member still live
    /// (one that was leaked) keeps its phases open: the owner fails the
    /// accumulator first.
    pub(crate) fn close(&mut self, fx: &mut Effects) {
        self.closed = true;
        self.reduce(fx);
    }

    /// Applies a message from rank `from`.
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    pub(crate) fn receive(
        &mut self,
        from: i32,
        wire: Wire,
        fx: &mut Effects,
    ) -> Result<(), SspError> {
        let bad = |what| SspError::Protocol {
            source_rank: from,
            what,
        };
        if let Wire::Failed { origin } = wire {
            if self.tree.parent != Some(from) && self.child_index(from).is_none() {
                return Err(bad("a failure notice from a non-neighbour"));
            }
            if self.failed.is_none() && self.ended.is_none() {
                self.failed = Some(origin);
                fx.peer_failed = Some(origin);
                self.spread_failure(origin, Some(from), fx);
            }
            return Ok(());
        }
        if self.failed.is_some() {
            // The protocol stopped here: what is still in flight is moot.
            return Ok(());
        }
        match wire {
            Wire::Partial { phase, bits } => {
                let child = self
                    .child_index(from)
                    .ok_or(bad("a partial from a non-child"))?;
                if self.child_end[child].is_some() {
                    return Err(bad("a partial after the child retired"));
                }
                let identity = self.reduction.identity();
                let children = self.child_end.len();
                let slot = Self::slot(
                    &mut self.open,
                    self.low,
                    self.live,
                    identity,
                    children,
                    phase,
                )
                .ok_or(bad("a partial of a phase already reduced"))?;
                if slot.from_children[child]
                    .replace(V::from_bits(bits))
                    .is_some()
                {
                    return Err(bad("a second partial of one phase"));
                }
                self.reduce(fx);
            }
            Wire::Retire { end } => {
                let child = self
                    .child_index(from)
                    .ok_or(bad("a retire from a non-child"))?;
                if self.child_end[child].replace(end).is_some() {
                    return Err(bad("a second retire"));
                }
                self.reduce(fx);
            }
            Wire::Result { phase, bits } => {
                if self.tree.parent != Some(from) {
                    return Err(bad("a result from a non-parent"));
                }
                if phase != self.published {
                    return Err(bad("a result out of phase order"));
                }
                self.publish(phase, V::from_bits(bits), fx);
            }
            Wire::End { end } => {
                if self.tree.parent != Some(from) {
                    return Err(bad("an end from a non-parent"));
                }
                self.end(end, fx);
            }
            Wire::Failed { .. } => unreachable!("handled above"),
        }
        Ok(())
    }

    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
    fn child_index(&self, rank: i32) -> Option<usize> {
        self.tree.children.iter().position(|&c| c == rank)
    }

    /// The open slot of `phase`, opening every phase up to it; `None` if it
    /// is already reduced. A new phase expects every live member: each one
    /// joined at or before it (a member joins at an open phase, or at its
    /// parent's clock, which is at most one past an opened phase).
    fn slot(
        open: &mut VecDeque<Open<V>>,
        low: u64,
        live: usize,
        identity: V,
        children: usize,
        phase: u64,
    ) -> Option<&mut Open<V>> {
        let index = usize::try_from(phase.checked_sub(low)?).ok()?;
        while open.len() <= index {
            open.push_back(Open {
                expected: live,
                contributed: 0,
                local: identity,
                from_children: vec![None; children],
            });
        }
        Some(&mut open[index])
    }

    fn each_open_from(&mut self, clock: u64, mut f: impl FnMut(&mut Open<V>)) {
        let skip = clock.saturating_sub(self.low);
        for open in self
            .open
            .iter_mut()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
        {
            f(open);
        }
    }

    /// Whether child `i` owes nothing more for `phase`.
    fn child_done(&self, open: &Open<V>, i: usize, phase: u64) -> bool {
        open.from_children[i].is_some() || self.child_end[i].is_some_and(|end| phase >= end)
    }

    /// Reduces every phase whose contributions are all in, in order, then
    /// retires (or ends, at the root) once the whole subtree is closed.
    fn reduce(&mut self, fx: &mut Effects) {
        if self.failed.is_some() {
            return; // the protocol stopped here
        }
        while let Some(front) = self.open.front() {
            let phase = self.low;
            // A rank with no member contributes nothing until one joins or
            // it closes: it is still a participant.
            let local_done =
                front.contributed == front.expected && (front.expected > 0 || self.closed);
            let ready =
                local_done && (0..self.child_end.len()).all(|i| self.child_done(front, i, phase));
            if !ready {
                break;
            }
            // Combined before the phase leaves the window: a panicking user
            // reduction changes nothing.
            let value = front
                .from_children
                .iter()
                .flatten()
                .fold(front.local, |acc, &v| self.reduction.combine(acc, v));
            self.open.pop_front();
            self.low += 1;
            match self.tree.parent {
                Some(parent) => fx.sends.push((
                    parent,
                    Wire::Partial {
                        phase,
                        bits: value.to_bits(),
                    },
                )),
                None => self.publish(phase, value, fx),
            }
        }
        self.retire_if_done(fx);
    }

    fn retire_if_done(&mut self, fx: &mut Effects) {
        if self.retired || !self.closed || self.child_end.iter().any(Option::is_none) {
            return;
        }
        let end = self
            .child_end
            .iter()
            .flatten()
            .fold(self.high, |a, &b| a.max(b));
        if self.low < end {
            return; // phases below `end` are still being reduced
        }
        self.retired = true;
        match self.tree.parent {
            Some(parent) => fx.sends.push((parent, Wire::Retire { end })),
            None => self.end(end, fx),
        }
    }

    /// Records the result of `phase` and passes it to the children that may
    /// still have members waiting for it.
    fn publish(&mut self, phase: u64, value: V, fx: &mut Effects) {
        self.results.push_back((phase, value));
        while self.results.len() > self.keep {
            self.results.pop_front();
        }
        self.published = phase + 1;
        fx.published = true;
        for (i, &child) in self.tree.children.iter().enumerate() {
            if self.child_end[i].is_none_or(|end| phase < end) {
                fx.sends.push((
                    child,
                    Wire::Result {
                        phase,
                        bits: value.to_bits(),
                    },
                ));
            }
        }
    }

    fn end(&mut self, end: u64, fx: &mut Effects) {
        self.ended = Some(end);
        fx.ended = true;
        for &child in &self.tree.children {
            fx.sends.push((child, Wire::End { end }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accum::AccumOp;

    fn sum() -> Reduction<i64> {
        Reduction::op(AccumOp::Sum).unwrap()
    }

    #[test]
    fn binomial_tree_of_eight() {
        let kids = |r| TreePos::binomial(r, 8).children;
        assert_eq!(kids(0), [1, 2, 4]);
        assert_eq!(kids(2), [3]);
        assert_eq!(kids(4), [5, 6]);
        assert!(kids(7).is_empty());
        assert_eq!(TreePos::binomial(6, 8).parent, Some(4));
        assert_eq!(TreePos::binomial(0, 8).parent, None);
        assert_eq!(TreePos::binomial(0, 3).children, [1, 2]);
        assert!(TreePos::binomial(0, 1).children.is_empty());
    }

    #[test]
    fn every_rank_but_the_root_has_one_parent_that_lists_it() {
        for size in 1..40 {
            let mut seen = vec![0; size as usize];
            for r in 0..size {
                for c in TreePos::binomial(r, size).children {
                    assert_eq!(TreePos::binomial(c, size).parent, Some(r));
                    seen[c as usize] += 1;
                }
            }
            assert_eq!(seen[0], 0);
            assert!(seen[1..].iter().all(|&n| n == 1), "size {size}: {seen:?}");
        }
    }

    #[test]
    fn wire_round_trips() {
        for wire in [
            Wire::Partial { phase: 3, bits: 9 },
            Wire::Result {
                phase: 0,
                bits: u64::MAX,
            },
            Wire::Retire { end: 7 },
            Wire::End { end: 2 },
            Wire::Failed { origin: 5 },
        ] {
            assert_eq!(Wire::decode(&wire.encode()), Some(wire));
        }
        assert_eq!(Wire::decode(&[4, u64::MAX, 0]), None, "no such rank");
        assert_eq!(Wire::decode(&[9, 0, 0]), None);
        assert_eq!(Wire::decode(&[0, 0]), None);
    }

    #[test]
    fn one_rank_publishes_when_every_member_contributed() {
        let mut w = Window::new(sum(), TreePos::binomial(0, 1), 4);
        let mut fx = Effects::default();
        w.join(0);
        w.join(0);
        w.contribute(0, 5, &mut fx);
        assert_eq!(w.published(), 0);
        w.contribute(1, 1, &mut fx); // the first member runs ahead
        w.contribute(0, 6, &mut fx);
        assert_eq!((w.published(), w.latest()), (1, Some((0, 11))));
        assert!(fx.published && fx.sends.is_empty());
        // The second member leaves before phase 1: it no longer counts.
        w.leave(1, &mut fx);
        assert_eq!(w.latest(), Some((1, 1)));
        assert_eq!(w.result(0), Ok(11));
        assert!(matches!(w.result(2), Err(SspError::NotComplete { .. })));
    }

    #[test]
    fn a_member_registered_ahead_counts_from_its_clock() {
        let mut w = Window::new(sum(), TreePos::binomial(0, 1), 8);
        let mut fx = Effects::default();
        w.join(0);
        w.join(0);
        w.contribute(0, 1, &mut fx);
        w.contribute(1, 1, &mut fx);
        w.join(2); // registered by the member at clock 2
        w.contribute(0, 1, &mut fx);
        w.contribute(1, 1, &mut fx);
        assert_eq!(w.published(), 2);
        w.contribute(2, 1, &mut fx);
        w.contribute(2, 1, &mut fx);
        assert_eq!(w.published(), 2, "phase 2 expects the new member too");
        w.contribute(2, 1, &mut fx);
        assert_eq!(w.latest(), Some((2, 3)));
    }

    #[test]
    fn old_results_are_evicted() {
        let mut w = Window::new(sum(), TreePos::binomial(0, 1), 2);
        let mut fx = Effects::default();
        w.join(0);
        for p in 0..5 {
            w.contribute(p, p as i64, &mut fx);
        }
        assert_eq!(w.result(4), Ok(4));
        assert_eq!(w.result(3), Ok(3));
        assert_eq!(
            w.result(2),
            Err(SspError::Evicted {
                phase: 2,
                oldest: 3
            })
        );
    }

    #[test]
    fn a_leaf_sends_partials_then_retires() {
        let mut w = Window::new(sum(), TreePos::binomial(1, 2), 4);
        let mut fx = Effects::default();
        w.join(0);
        w.contribute(0, 4, &mut fx);
        w.contribute(1, 5, &mut fx);
        w.leave(2, &mut fx);
        w.close(&mut fx);
        assert_eq!(
            fx.sends,
            [
                (0, Wire::Partial { phase: 0, bits: 4 }),
                (0, Wire::Partial { phase: 1, bits: 5 }),
                (0, Wire::Retire { end: 2 }),
            ]
        );
        let mut fx = Effects::default();
        w.receive(0, Wire::Result { phase: 0, bits: 9 }, &mut fx)
            .unwrap();
        assert_eq!(w.latest(), Some((0, 9)));
        assert!(w
            .receive(0, Wire::Result { phase: 5, bits: 9 }, &mut fx)
            .is_err());
        w.receive(0, Wire::End { end: 2 }, &mut fx).unwrap();
        assert!(fx.ended);
        assert_eq!(w.ended(), Some(2));
    }

    #[test]
    fn the_root_combines_its_children_in_order_and_ends_last() {
        let cat = Reduction::custom("CAT", 0u64, |a, b| a * 10 + b);
        let mut w = Window::new(cat, TreePos::binomial(0, 3), 4);
        let mut fx = Effects::default();
        w.join(0);
        w.receive(2, Wire::Partial { phase: 0, bits: 3 }, &mut fx)
            .unwrap();
        w.contribute(0, 1, &mut fx);
        assert_eq!(w.published(), 0);
        w.receive(1, Wire::Partial { phase: 0, bits: 2 }, &mut fx)
            .unwrap();
        assert_eq!(
            w.latest(),
            Some((0, 123)),
            "own value, then child 1, then child 2"
        );
        assert_eq!(
            fx.sends,
            [
                (
                    1,
                    Wire::Result {
                        phase: 0,
                        bits: 123
                    }
                ),
                (
                    2,
                    Wire::Result {
                        phase: 0,
                        bits: 123
                    }
                ),
            ]
        );
        let mut fx = Effects::default();
        w.receive(1, Wire::Retire { end: 1 }, &mut fx).unwrap();
        w.leave(1, &mut fx);
        w.close(&mut fx);
        assert!(!fx.ended, "child 2 has not retired");
        w.receive(2, Wire::Partial { phase: 1, bits: 4 }, &mut fx)
            .unwrap();
        assert_eq!(
            w.latest(),
            Some((1, 4)),
            "retired and departed parts are the identity"
        );
        assert_eq!(fx.sends, [(2, Wire::Result { phase: 1, bits: 4 })]);
        w.receive(2, Wire::Retire { end: 2 }, &mut fx).unwrap();
        assert_eq!(w.ended(), Some(2));
        assert!(w
            .receive(2, Wire::Partial { phase: 5, bits: 0 }, &mut fx)
            .is_err());
    }

    #[test]
    fn a_panicking_reduction_changes_nothing() {
        use std::panic::{catch_unwind, AssertUnwindSafe};

        let picky = Reduction::custom("PICKY", 0u64, |a, b| {
            assert!(b != 13, "unlucky");
            a + b
        });
        let mut w = Window::new(picky, TreePos::binomial(0, 2), 4);
        let mut fx = Effects::default();
        w.join(0);
        w.contribute(0, 1, &mut fx);
        let panicked = catch_unwind(AssertUnwindSafe(|| {
            w.receive(
                1,
                Wire::Partial { phase: 0, bits: 13 },
                &mut Effects::default(),
            )
        }));
        assert!(panicked.is_err());
        assert_eq!(
            (w.published(), w.oldest_open()),
            (0, 0),
            "phase 0 is still open"
        );
        let panicked = catch_unwind(AssertUnwindSafe(|| {
            w.contribute(1, 13, &mut Effects::default())
        }));
        assert!(panicked.is_err());
        assert!(fx.sends.is_empty() && !fx.published);
    }

    #[test]
    fn protocol_violations_are_named() {
        let mut w = Window::new(sum(), TreePos::binomial(0, 2), 4);
        let mut fx = Effects::default();
        assert!(matches!(
            w.receive(1, Wire::Result { phase: 0, bits: 0 }, &mut fx),
            Err(SspError::Protocol { source_rank: 1, .. })
        ));
        w.receive(1, Wire::Partial { phase: 0, bits: 0 }, &mut fx)
            .unwrap();
        assert!(w
            .receive(1, Wire::Partial { phase: 0, bits: 0 }, &mut fx)
            .is_err());
        assert!(w.receive(3, Wire::Retire { end: 0 }, &mut fx).is_err());
    }

    /// Fails `origins` (in order, the later ones after the earlier ones'
    /// first messages went out) on a job of `size` ranks and delivers every
    /// message, taking the links in a seeded order: returns the windows,
    /// the ranks told of a peer's failure and the messages sent.
    fn flood(size: i32, origins: &[i32], seed: u64) -> (Vec<Window<i64>>, Vec<i32>, usize) {
        let mut windows: Vec<_> = (0..size)
            .map(|r| Window::new(sum(), TreePos::binomial(r, size), 4))
            .collect();
        let mut queue: VecDeque<(i32, i32, Wire)> = VecDeque::new();
        let (mut told, mut sent) = (Vec::new(), 0);
        let mut rng = seed | 1;
        for &origin in origins {
            let mut fx = Effects::default();
            windows[origin as usize].fail(&mut fx);
            queue.extend(fx.sends.drain(..).map(|(to, wire)| (origin, to, wire)));
            // Let a few messages through before the next failure.
            for _ in 0..queue.len().min(2) {
                deliver(&mut windows, &mut queue, &mut told, 0);
                sent += 1;
            }
        }
        while !queue.is_empty() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Any link's oldest message: links stay FIFO.
            let pick = queue[rng as usize % queue.len()];
            let index = queue
                .iter()
                .position(|&(f, t, _)| (f, t) == (pick.0, pick.1))
                .expect("the picked link has a message");
            deliver(&mut windows, &mut queue, &mut told, index);
            sent += 1;
        }
        (windows, told, sent)
    }

    /// Delivers message `index` of `queue`, queueing what it makes its
    /// receiver send and noting the receiver in `told` if it learned of a
    /// failure.
    fn deliver(
        windows: &mut [Window<i64>],
        queue: &mut VecDeque<(i32, i32, Wire)>,
        told: &mut Vec<i32>,
        index: usize,
    ) {
        let (from, to, wire) = queue.remove(index).expect("a queued message");
        let mut fx = Effects::default();
        windows[to as usize].receive(from, wire, &mut fx).unwrap();
        told.extend(fx.peer_failed.map(|_| to));
        queue.extend(fx.sends.drain(..).map(|(next, wire)| (to, next, wire)));
    }

    #[test]
    fn a_failure_reaches_every_rank_once() {
        let sizes = if cfg!(miri) { 12 } else { 40 };
        for size in 1..=sizes {
            for origin in [0, size / 2, size - 1] {
                let (windows, mut told, sent) = flood(size, &[origin], u64::from(size as u32));
                assert_eq!(sent, size as usize - 1, "size {size}: one message per edge");
                told.sort_unstable();
                let others: Vec<i32> = (0..size).filter(|&r| r != origin).collect();
                assert_eq!(told, others, "size {size}, origin {origin}");
                assert!(windows.iter().all(|w| w.failed == Some(origin)));
            }
        }
    }

    #[test]
    fn concurrent_failures_reach_every_rank() {
        // Fewer sizes and seeds under Miri, which interprets every flood.
        let (sizes, seeds) = if cfg!(miri) { (6, 4) } else { (24, 20) };
        for size in 2..=sizes {
            for seed in 1..seeds {
                let origins = [
                    (seed % size as u64) as i32,
                    size - 1 - (seed % 3) as i32 % size,
                ];
                let (windows, told, _) = flood(size, &origins, seed);
                for (rank, w) in windows.iter().enumerate() {
                    let origin = w.failed.expect("every rank learns of a failure");
                    assert!(origins.contains(&origin), "size {size}: {origin}");
                    let was_origin = origins.contains(&(rank as i32)) && origin == rank as i32;
                    let times = told.iter().filter(|&&t| t == rank as i32).count();
                    assert_eq!(times, usize::from(!was_origin), "size {size}, rank {rank}");
                }
            }
        }
    }

    #[test]
    fn a_failed_rank_ignores_the_protocol() {
        let mut w = Window::new(sum(), TreePos::binomial(0, 2), 4);
        let mut fx = Effects::default();
        w.join(0);
        w.fail(&mut fx);
        assert_eq!(fx.sends, [(1, Wire::Failed { origin: 0 })]);
        let mut fx = Effects::default();
        w.contribute(0, 1, &mut fx);
        w.receive(1, Wire::Partial { phase: 0, bits: 2 }, &mut fx)
            .unwrap();
        w.receive(1, Wire::Failed { origin: 1 }, &mut fx).unwrap();
        assert_eq!(w.published(), 0);
        assert!(fx.sends.is_empty() && fx.peer_failed.is_none());
        // A failure notice from a stranger is itself a violation.
        let mut w = Window::<i64>::new(sum(), TreePos::binomial(0, 4), 4);
        assert!(w
            .receive(3, Wire::Failed { origin: 3 }, &mut Effects::default())
            .is_err());
    }
}
