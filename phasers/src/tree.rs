//! The tree of sub-phasers (Fig. 13 of the HCMPI paper, after Shirako &
//! Sarkar's hierarchical phasers) and the protocol that carries signals,
//! values and membership changes up it.
//!
//! Registrations with a signal capability are members of a leaf; an active
//! sub-phaser is a member of its parent. Each node counts its members in one
//! state word (see `word`). A flat phaser is the one-node tree: a single
//! counter.
//!
//! # Sub-masters
//!
//! There is no separate master thread and no lock on the signal path. The
//! member whose signal (or drop) completes a phase at a node — the last
//! arriver there, decided by the compare-and-swap on the node's word — is
//! that node's sub-master for the phase: it takes the node's accumulated
//! value and signals the parent, where it competes again. The one that
//! completes the phase at the root is the phaser master (`core` takes it
//! from there). Everyone else leaves as soon as its own compare-and-swap
//! succeeded, and goes on to wait.
//!
//! # Activation and vacancy
//!
//! Nodes join and leave their parent as their first member arrives and
//! their last one leaves:
//!
//! * **activate**: a vacant node is set (one CAS) to `BUSY` with the
//!   joining registration as its only member, at the registration's cursor;
//!   then it joins its parent (activating it in turn if need be). If the
//!   parent refuses (it is at a phase the cursor cannot join), the node is
//!   set vacant again and the registration goes to another leaf. While
//!   `BUSY` nobody else may join, and its only member has not returned yet,
//!   so nobody signals there either.
//! * **vacate**: the drop that takes the last member away leaves the node
//!   vacant and `BUSY`. The dropping thread moves the node's accumulated
//!   values (of its phase `P` and early ones of `P + 1`) into the parent's
//!   cells for the same phases, drops the node from the parent at cursor
//!   `P`, and only then clears `BUSY`.
//!
//! Moving the values is correct because the parent cannot complete `P`
//! before the drop (the node is one of its members and has not signaled
//! `P`), and early values of `P + 1` exist only once phase `P - 1` is
//! globally complete, so the parent is at `P` and collects them with `P + 1`.
//!
//! # Memory ordering
//!
//! A member combines its value into the node's cell for the phase's parity
//! (`AcqRel` read-modify-write) *before* its compare-and-swap on the word
//! (`AcqRel`). All CASes on one word form a release sequence, so the
//! sub-master, whose successful CAS completed the phase, has acquired every
//! member's value and takes the cell with a swap. The cell of parity `P` is
//! not written again for phase `P + 2` before phase `P` is globally
//! complete, which happens after the take (bounded run-ahead, see `core`).

use crate::sync::{AtomicU64, AtomicUsize, Ordering};
use crate::word::{apply, Op, Outcome, Refusal, Word};

/// How values of an accumulating phaser combine: an associative,
/// commutative operation on the bit patterns of the value type.
#[derive(Clone, Copy)]
pub(crate) struct Combiner {
    pub(crate) identity: u64,
    pub(crate) combine: fn(u64, u64) -> u64,
}

impl std::fmt::Debug for Combiner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Combiner")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl Combiner {
    /// Combines `value` into `cell` (`AcqRel`).
    fn combine_into(&self, cell: &AtomicU64, value: u64) {
        let mut current = cell.load(Ordering::Acquire);
        loop {
            let next = (self.combine)(current, value);
            match cell.compare_exchange_weak(current, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }
}

/// One sub-phaser.
#[derive(Debug)]
struct Node {
    word: AtomicU64,
    /// Accumulated values by phase parity (unused without a combiner).
    acc: [AtomicU64; 2],
    /// Index of the parent node; `None` at the root.
    parent: Option<usize>,
}

/// What an operation did at the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct RootEvent {
    /// Phases below this number are now locally complete.
    pub(crate) completed_up_to: Option<u64>,
    /// The root died (its last member left) while collecting this phase.
    pub(crate) died_at: Option<u64>,
}

/// The sub-phaser tree of one phaser.
#[derive(Debug)]
pub(crate) struct Tree {
    nodes: Box<[Node]>,
    leaves: usize,
    next_leaf: AtomicUsize,
    combiner: Option<Combiner>,
}

/// Why a registration could not join the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JoinError {
    /// No leaf could take it (every candidate full, or the root is dead).
    NoRoom,
}

impl Tree {
    /// A tree with `leaves` leaves and inner nodes of at most `degree`
    /// children. `leaves == 1` is the flat phaser: one node, one counter.
    pub(crate) fn new(leaves: usize, degree: usize, combiner: Option<Combiner>) -> Tree {
        assert!(
            leaves >= 1 && degree >= 2,
            "phasers: a tree needs a leaf and degree >= 2"
        );
        let identity = combiner.map_or(0, |c| c.identity);
        // Levels bottom-up: indices of each level's nodes are contiguous.
        let mut parents: Vec<Option<usize>> = vec![None; leaves];
        let mut level_start = 0;
        let mut level_len = leaves;
        while level_len > 1 {
            let next_start = parents.len();
            let next_len = level_len.div_ceil(degree);
            for i in 0..level_len {
                parents[level_start + i] = Some(next_start + i / degree);
            }
            parents.extend(std::iter::repeat_n(None, next_len));
            level_start = next_start;
            level_len = next_len;
        }
        let nodes = parents
            .into_iter()
            .map(|parent| Node {
                word: AtomicU64::new(Word::VACANT.pack()),
                acc: [AtomicU64::new(identity), AtomicU64::new(identity)],
                parent,
            })
            .collect();
        Tree {
            nodes,
            leaves,
            next_leaf: AtomicUsize::new(0),
            combiner,
        }
    }

    /// Number of nodes (sub-phasers).
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    fn root(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Adds a member with cursor `c`: at the next leaf in round-robin order
    /// if it can take it, else at `fallback` (the parent registration's
    /// leaf, which always can, see `registration`). Returns the leaf.
    pub(crate) fn join(&self, c: u64, fallback: Option<usize>) -> Result<usize, JoinError> {
        let preferred = self.next_leaf.fetch_add(1, Ordering::Relaxed) % self.leaves;
        if self.join_node(preferred, c) {
            return Ok(preferred);
        }
        match fallback {
            Some(leaf) if leaf != preferred && self.join_node(leaf, c) => Ok(leaf),
            _ => Err(JoinError::NoRoom),
        }
    }

    /// Joins node `index` at cursor `c`, activating it if vacant.
    fn join_node(&self, index: usize, c: u64) -> bool {
        let node = &self.nodes[index];
        let mut current = node.word.load(Ordering::Acquire);
        loop {
            let word = Word::unpack(current);
            let next = match apply(word, Op::Join(c), node.parent.is_none()) {
                Ok((next, _)) => next,
                Err(Refusal::Unsuitable) => return false,
                Err(Refusal::Vacant) if word.busy || word.dead => return false,
                Err(Refusal::Vacant) => Word {
                    phase: c,
                    members: 1,
                    pending: 1,
                    early: 0,
                    busy: true,
                    dead: false,
                },
            };
            match node.word.compare_exchange_weak(
                current,
                next.pack(),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) if !next.busy => return true,
                Ok(_) => return self.finish_activation(index, c, next),
                Err(actual) => current = actual,
            }
        }
    }

    /// Second half of an activation: join the parent, then clear `BUSY` (or
    /// give the node back if the parent refused).
    fn finish_activation(&self, index: usize, c: u64, word: Word) -> bool {
        let node = &self.nodes[index];
        let joined = match node.parent {
            Some(parent) => self.join_node(parent, c),
            None => true,
        };
        let settled = if joined {
            Word {
                busy: false,
                ..word
            }
        } else {
            Word {
                members: 0,
                pending: 0,
                busy: false,
                ..word
            }
        };
        // Nobody else changes a busy node: no one can join it, and its only
        // member is the registration being created.
        node.word.store(settled.pack(), Ordering::Release);
        joined
    }

    /// Applies a member's `op` at node `index` (combining `value` first for
    /// a signal) and carries its consequences up the tree.
    pub(crate) fn report(&self, index: usize, op: Op, value: u64) -> RootEvent {
        let node = &self.nodes[index];
        if let (Op::Signal(c), Some(combiner)) = (op, self.combiner) {
            if value != combiner.identity {
                combiner.combine_into(&node.acc[(c % 2) as usize], value);
            }
        }
        let is_root = node.parent.is_none();
        let mut current = node.word.load(Ordering::Acquire);
        let outcome = loop {
            let (next, outcome) = apply(Word::unpack(current), op, is_root)
                .unwrap_or_else(|r| panic!("phasers: internal error: {op:?} refused ({r:?})"));
            match node.word.compare_exchange_weak(
                current,
                next.pack(),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break outcome,
                Err(actual) => current = actual,
            }
        };
        match (outcome, node.parent) {
            (Outcome::Counted, _) => RootEvent::default(),
            (Outcome::Completed { first, count }, None) => RootEvent {
                completed_up_to: Some(first + count),
                died_at: None,
            },
            (Outcome::Completed { first, count }, Some(parent)) => {
                let mut event = RootEvent::default();
                for phase in first..first + count {
                    let value = self.take(index, phase);
                    event = merge(event, self.report(parent, Op::Signal(phase), value));
                }
                event
            }
            (Outcome::Vacated { phase }, None) => RootEvent {
                completed_up_to: None,
                died_at: Some(phase),
            },
            (Outcome::Vacated { phase }, Some(parent)) => {
                if let Some(combiner) = self.combiner {
                    for p in [phase, phase + 1] {
                        let value = self.take(index, p);
                        if value != combiner.identity {
                            combiner.combine_into(&self.nodes[parent].acc[(p % 2) as usize], value);
                        }
                    }
                }
                let event = self.report(parent, Op::Drop(phase), 0);
                let word = Word::unpack(node.word.load(Ordering::Acquire));
                node.word.store(
                    Word {
                        busy: false,
                        ..word
                    }
                    .pack(),
                    Ordering::Release,
                );
                event
            }
        }
    }

    /// Takes node `index`'s accumulated value of `phase`, resetting the cell.
    fn take(&self, index: usize, phase: u64) -> u64 {
        match self.combiner {
            Some(combiner) => self.nodes[index].acc[(phase % 2) as usize]
                .swap(combiner.identity, Ordering::AcqRel),
            None => 0,
        }
    }

    /// Takes the root's accumulated value of a locally complete `phase`.
    pub(crate) fn take_root(&self, phase: u64) -> u64 {
        self.take(self.root(), phase)
    }

    /// The number of members of node `index` (diagnostics and tests).
    #[cfg(test)]
    pub(crate) fn members(&self, index: usize) -> u64 {
        Word::unpack(self.nodes[index].word.load(Ordering::Acquire)).members
    }

    /// Whether the root is dead.
    #[cfg(test)]
    pub(crate) fn root_dead(&self) -> bool {
        Word::unpack(self.nodes[self.root()].word.load(Ordering::Acquire)).dead
    }
}

fn merge(a: RootEvent, b: RootEvent) -> RootEvent {
    RootEvent {
        completed_up_to: a.completed_up_to.max(b.completed_up_to),
        died_at: a.died_at.or(b.died_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum() -> Option<Combiner> {
        Some(Combiner {
            identity: 0,
            combine: |a, b| a + b,
        })
    }

    #[test]
    fn shape() {
        assert_eq!(Tree::new(1, 2, None).len(), 1);
        assert_eq!(Tree::new(4, 2, None).len(), 4 + 2 + 1);
        assert_eq!(Tree::new(5, 4, None).len(), 5 + 2 + 1);
    }

    #[test]
    fn sequential_phases_through_a_tree() {
        let tree = Tree::new(4, 2, sum());
        let leaves: Vec<usize> = (0..6).map(|_| tree.join(0, Some(0)).unwrap()).collect();
        assert_eq!(leaves, [0, 1, 2, 3, 0, 1]);
        for phase in 0..5 {
            for (i, &leaf) in leaves.iter().enumerate() {
                let event = tree.report(leaf, Op::Signal(phase), i as u64 + 1);
                let last = i == leaves.len() - 1;
                assert_eq!(
                    event.completed_up_to.is_some(),
                    last,
                    "phase {phase} member {i}"
                );
            }
            assert_eq!(tree.take_root(phase), 21);
        }
        // Everyone leaves at cursor 5; the root dies at phase 5.
        let mut died = None;
        for &leaf in &leaves {
            died = died.or(tree.report(leaf, Op::Drop(5), 0).died_at);
        }
        assert_eq!(died, Some(5));
        assert!(tree.root_dead());
        assert_eq!(tree.join(5, Some(0)), Err(JoinError::NoRoom));
    }

    #[test]
    fn vacated_leaf_hands_its_values_up() {
        let tree = Tree::new(2, 2, sum());
        let a = tree.join(0, None).unwrap();
        let b = tree.join(0, Some(a)).unwrap();
        assert_ne!(a, b);
        // b signals 0 with 7, a with 1: phase 0 is complete.
        assert_eq!(tree.report(b, Op::Signal(0), 7).completed_up_to, None);
        assert_eq!(tree.report(a, Op::Signal(0), 1).completed_up_to, Some(1));
        assert_eq!(tree.take_root(0), 8);
        // In phase 1, b signals with 5 and then leaves.
        assert_eq!(tree.report(b, Op::Signal(1), 5).completed_up_to, None);
        assert_eq!(tree.report(b, Op::Drop(2), 0), RootEvent::default());
        assert_eq!(tree.members(b), 0, "b's leaf is vacant");
        assert_eq!(tree.report(a, Op::Signal(1), 1).completed_up_to, Some(2));
        assert_eq!(tree.take_root(1), 6);
        // The vacant leaf is activated again by the second of two joins.
        let c = tree.join(2, Some(a)).unwrap();
        let d = tree.join(2, Some(a)).unwrap();
        assert_eq!((c, d), (a, b));
        assert_eq!(tree.members(b), 1);
        assert_eq!(tree.report(a, Op::Signal(2), 1).completed_up_to, None);
        assert_eq!(tree.report(c, Op::Signal(2), 1).completed_up_to, None);
        assert_eq!(tree.report(d, Op::Signal(2), 1).completed_up_to, Some(3));
        assert_eq!(tree.take_root(2), 3);
    }

    #[test]
    fn drop_of_a_pending_leaf_moves_values_and_completes() {
        let tree = Tree::new(2, 2, sum());
        let a = tree.join(0, None).unwrap();
        let b = tree.join(0, Some(a)).unwrap();
        assert_eq!(tree.report(a, Op::Signal(0), 3).completed_up_to, None);
        // b leaves without signaling: its leaf vacates and phase 0 completes.
        assert_eq!(tree.report(b, Op::Drop(0), 0).completed_up_to, Some(1));
        assert_eq!(tree.take_root(0), 3);
    }

    #[test]
    fn joining_a_later_phase_is_counted_from_the_next_transition() {
        let tree = Tree::new(1, 2, None);
        let a = tree.join(0, None).unwrap();
        // a has signaled 0 (cursor 1) and creates a child at cursor 1.
        assert_eq!(tree.report(a, Op::Signal(0), 0).completed_up_to, Some(1));
        let b = tree.join(1, Some(a)).unwrap();
        assert_eq!(tree.report(a, Op::Signal(1), 0).completed_up_to, None);
        assert_eq!(tree.report(b, Op::Signal(1), 0).completed_up_to, Some(2));
    }
}
