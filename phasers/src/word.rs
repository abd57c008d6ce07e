//! The state word of one sub-phaser, and the pure transition function every
//! operation on it goes through.
//!
//! A sub-phaser (a node of the phaser tree, or the single node of a flat
//! phaser) counts its *members*: registrations with a signal capability at a
//! leaf, active child sub-phasers at an inner node. All of its state lives in
//! one 64-bit word, changed only by compare-and-swap, so that a signal, a
//! registration, a drop and the phase transition they may cause are one
//! atomic step:
//!
//! | bits   | field     | meaning                                                  |
//! |--------|-----------|----------------------------------------------------------|
//! | 0–11   | `early`   | members that already signaled phase `phase + 1`          |
//! | 12–23  | `pending` | members that have not yet signaled phase `phase`         |
//! | 24–35  | `members` | current members                                          |
//! | 36–59  | `phase`   | the phase this node is collecting, modulo 2^24           |
//! | 60     | `BUSY`    | being activated or vacated: no one may join              |
//! | 61     | `DEAD`    | (root only) the phaser lost its last signaler for good   |
//!
//! # Cursors
//!
//! Every member has a *cursor* `c`: the next phase it will signal. Against
//! the node's phase `P` it is always `P`, `P + 1` or `P + 2` (phases are
//! compared modulo 2^24; the distance is what matters):
//!
//! | `c - P` | the member has…                    | counted in |
//! |---------|------------------------------------|------------|
//! | 0       | not signaled `P`                   | `pending`  |
//! | 1       | signaled `P`, not `P + 1`          | —          |
//! | 2       | signaled `P + 1` early             | `early`    |
//!
//! A member never gets further ahead: signaling phase `k` first waits until
//! phase `k - 2` is globally complete (the phaser's bounded run-ahead, see
//! `core`), and every node is at or past the global phase. A member also
//! *joins* within that window: a child registration starts at its parent's
//! cursor, which is at most two phases ahead of any node (the parent's
//! own signals waited for the bound), so a join at distance 2 counts the
//! newcomer as having signaled `P + 1` early — it takes part from `P + 2`
//! on, exactly like a member that signaled `P` and `P + 1`. Nobody ever
//! waits to join.
//!
//! # Transitions
//!
//! When `pending` reaches zero with members left, phase `P` is complete at
//! this node: the word moves to `P + 1` with `pending = members - early`,
//! `early = 0` (if that is zero too, `P + 1` completes in the same step).
//! When `pending` reaches zero because the last member left, the node
//! becomes *vacant* (members 0) and `BUSY` until its former parent has been
//! told; at the root, vacancy sets `DEAD` instead (no registration with a
//! signal capability can ever be created again, see `registration`).

/// Phases are stored modulo 2^24.
pub(crate) const PHASE_BITS: u32 = 24;
const PHASE_MASK: u64 = (1 << PHASE_BITS) - 1;
const COUNT_BITS: u32 = 12;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
/// The most members one node can count.
pub(crate) const MAX_MEMBERS: u64 = COUNT_MASK;

const EARLY_SHIFT: u32 = 0;
const PENDING_SHIFT: u32 = COUNT_BITS;
const MEMBERS_SHIFT: u32 = 2 * COUNT_BITS;
const PHASE_SHIFT: u32 = 3 * COUNT_BITS;
const BUSY: u64 = 1 << 60;
const DEAD: u64 = 1 << 61;

/// A decoded node word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Word {
    pub(crate) phase: u64,
    pub(crate) members: u64,
    pub(crate) pending: u64,
    pub(crate) early: u64,
    pub(crate) busy: bool,
    pub(crate) dead: bool,
}

impl Word {
    /// A vacant node (the initial state of every node).
    pub(crate) const VACANT: Word = Word {
        phase: 0,
        members: 0,
        pending: 0,
        early: 0,
        busy: false,
        dead: false,
    };

    pub(crate) fn pack(self) -> u64 {
        debug_assert!(self.members <= COUNT_MASK && self.pending <= self.members);
        debug_assert!(self.early <= self.members);
        ((self.phase & PHASE_MASK) << PHASE_SHIFT)
            | (self.members << MEMBERS_SHIFT)
            | (self.pending << PENDING_SHIFT)
            | (self.early << EARLY_SHIFT)
            | if self.busy { BUSY } else { 0 }
            | if self.dead { DEAD } else { 0 }
    }

    pub(crate) fn unpack(bits: u64) -> Word {
        Word {
            phase: (bits >> PHASE_SHIFT) & PHASE_MASK,
            members: (bits >> MEMBERS_SHIFT) & COUNT_MASK,
            pending: (bits >> PENDING_SHIFT) & COUNT_MASK,
            early: (bits >> EARLY_SHIFT) & COUNT_MASK,
            busy: bits & BUSY != 0,
            dead: bits & DEAD != 0,
        }
    }

    /// How far cursor `c` (a full phase number) is ahead of this node's phase.
    pub(crate) fn distance(self, c: u64) -> u64 {
        c.wrapping_sub(self.phase) & PHASE_MASK
    }
}

/// An operation of a member (at cursor `c`) on a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// Signal phase `c`.
    Signal(u64),
    /// Leave, not signaling `c`.
    Drop(u64),
    /// Join with cursor `c` (only when the node is active and not busy).
    Join(u64),
}

/// What an operation did besides updating the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Nothing else.
    Counted,
    /// Phases `first .. first + count` (full numbers) completed at this node.
    Completed { first: u64, count: u64 },
    /// The last member left during phase `phase`: the node is now vacant
    /// (and busy, or dead at the root) and phase `phase` is vacuously
    /// complete in it.
    Vacated { phase: u64 },
}

/// Why an operation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Joining a vacant node: it must be activated instead.
    Vacant,
    /// The node is busy, dead, full, or at a phase the cursor cannot join.
    Unsuitable,
}

/// Applies `op` to `word`; `root` says whether vacancy kills the node.
///
/// # Panics
/// On an operation that the protocol rules out (a cursor too far from the
/// node's phase for a signal or a drop): that is a bug in this crate, not a
/// user error, and continuing would corrupt the counts.
pub(crate) fn apply(word: Word, op: Op, root: bool) -> Result<(Word, Outcome), Refusal> {
    let mut w = word;
    match op {
        Op::Join(c) => {
            if w.dead || w.busy {
                return Err(Refusal::Unsuitable);
            }
            if w.members == 0 {
                return Err(Refusal::Vacant);
            }
            if w.members == MAX_MEMBERS {
                return Err(Refusal::Unsuitable);
            }
            match w.distance(c) {
                0 => {
                    w.members += 1;
                    w.pending += 1;
                }
                1 => w.members += 1,
                2 => {
                    w.members += 1;
                    w.early += 1;
                }
                _ => return Err(Refusal::Unsuitable),
            }
            return Ok((w, Outcome::Counted));
        }
        Op::Signal(c) => match w.distance(c) {
            0 => w.pending -= 1,
            1 => w.early += 1,
            d => panic!(
                "phasers: internal error: signal of phase {c} at distance {d} from node phase {}",
                w.phase
            ),
        },
        Op::Drop(c) => match w.distance(c) {
            0 => {
                w.members -= 1;
                w.pending -= 1;
            }
            1 => w.members -= 1,
            2 => {
                w.members -= 1;
                w.early -= 1;
            }
            d => panic!(
                "phasers: internal error: drop at cursor {c}, distance {d} from node phase {}",
                w.phase
            ),
        },
    }
    if w.pending > 0 {
        // An active word always has a member pending (see the transition
        // below), so this operation completed nothing.
        return Ok((w, Outcome::Counted));
    }
    let first = full_phase(op, w);
    if w.members == 0 {
        debug_assert_eq!(w.early, 0);
        if root {
            w.dead = true;
        } else {
            w.busy = true;
        }
        return Ok((w, Outcome::Vacated { phase: first }));
    }
    let mut count = 0;
    while w.pending == 0 {
        w.phase = (w.phase + 1) & PHASE_MASK;
        w.pending = w.members - w.early;
        w.early = 0;
        count += 1;
    }
    Ok((w, Outcome::Completed { first, count }))
}

/// The full number of the phase `w` was collecting, from the operation's
/// full cursor (the cursor is within 2 of the node's phase).
fn full_phase(op: Op, w: Word) -> u64 {
    let c = match op {
        Op::Signal(c) | Op::Drop(c) | Op::Join(c) => c,
    };
    c - w.distance(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn active(phase: u64, members: u64, pending: u64, early: u64) -> Word {
        Word {
            phase,
            members,
            pending,
            early,
            busy: false,
            dead: false,
        }
    }

    #[test]
    fn pack_round_trips() {
        let w = Word {
            phase: 123_456,
            members: 4095,
            pending: 17,
            early: 3,
            busy: true,
            dead: false,
        };
        assert_eq!(Word::unpack(w.pack()), w);
        assert_eq!(Word::unpack(Word::VACANT.pack()), Word::VACANT);
    }

    #[test]
    fn last_signal_completes_and_counts_early_signals() {
        let w = active(5, 3, 1, 1);
        let (w, out) = apply(w, Op::Signal(5), false).unwrap();
        assert_eq!(out, Outcome::Completed { first: 5, count: 1 });
        assert_eq!(w, active(6, 3, 2, 0));
    }

    #[test]
    fn drop_can_complete_two_phases() {
        // A signaled 5 and 6 (early); B leaves without signaling 5.
        let w = active(5, 2, 2, 0);
        let (w, _) = apply(w, Op::Signal(5), false).unwrap();
        let (w, _) = apply(w, Op::Signal(6), false).unwrap();
        assert_eq!(w, active(5, 2, 1, 1));
        let (w, out) = apply(w, Op::Drop(5), false).unwrap();
        assert_eq!(out, Outcome::Completed { first: 5, count: 2 });
        assert_eq!(w, active(7, 1, 1, 0));
    }

    #[test]
    fn early_signals_carry_over() {
        // Two members; one signals 9 early, then the other signals 8.
        let w = active(8, 2, 2, 0);
        let (w, _) = apply(w, Op::Signal(8), false).unwrap();
        let (w, _) = apply(w, Op::Signal(9), false).unwrap();
        assert_eq!(w, active(8, 2, 1, 1));
        let (w, out) = apply(w, Op::Signal(8), false).unwrap();
        assert_eq!(out, Outcome::Completed { first: 8, count: 1 });
        assert_eq!(w, active(9, 2, 1, 0));
    }

    #[test]
    fn drops_at_each_distance() {
        let w = active(3, 3, 2, 1);
        assert_eq!(apply(w, Op::Drop(3), false).unwrap().0, active(3, 2, 1, 1));
        assert_eq!(apply(w, Op::Drop(4), false).unwrap().0, active(3, 2, 2, 1));
        assert_eq!(apply(w, Op::Drop(5), false).unwrap().0, active(3, 2, 2, 0));
    }

    #[test]
    fn drop_of_last_pending_member_completes() {
        let w = active(3, 2, 1, 0);
        let (w, out) = apply(w, Op::Drop(3), false).unwrap();
        assert_eq!(out, Outcome::Completed { first: 3, count: 1 });
        assert_eq!(w, active(4, 1, 1, 0));
    }

    #[test]
    fn last_member_leaving_vacates_or_kills() {
        let w = active(7, 1, 1, 0);
        let (inner, out) = apply(w, Op::Drop(7), false).unwrap();
        assert_eq!(out, Outcome::Vacated { phase: 7 });
        assert!(inner.busy && !inner.dead && inner.members == 0);
        let (root, _) = apply(w, Op::Drop(7), true).unwrap();
        assert!(root.dead && !root.busy);
        assert_eq!(apply(root, Op::Join(7), true), Err(Refusal::Unsuitable));
    }

    #[test]
    fn joins() {
        let w = active(10, 1, 1, 0);
        assert_eq!(
            apply(w, Op::Join(10), false).unwrap().0,
            active(10, 2, 2, 0)
        );
        assert_eq!(
            apply(w, Op::Join(11), false).unwrap().0,
            active(10, 2, 1, 0)
        );
        assert_eq!(
            apply(w, Op::Join(12), false).unwrap().0,
            active(10, 2, 1, 1)
        );
        assert_eq!(apply(w, Op::Join(13), false), Err(Refusal::Unsuitable));
        assert_eq!(apply(w, Op::Join(9), false), Err(Refusal::Unsuitable));
        assert_eq!(
            apply(Word::VACANT, Op::Join(0), false),
            Err(Refusal::Vacant)
        );
    }

    #[test]
    fn a_member_joined_two_phases_ahead_waits_out_the_next_phase() {
        // A and B at phase 4; a child joins at cursor 6 (its parent, a
        // SIGNAL_ONLY member, signaled 4 and 5 already).
        let w = active(4, 2, 2, 0);
        let (w, _) = apply(w, Op::Join(6), false).unwrap();
        assert_eq!(w, active(4, 3, 2, 1));
        let (w, _) = apply(w, Op::Signal(4), false).unwrap();
        let (w, out) = apply(w, Op::Signal(4), false).unwrap();
        assert_eq!(out, Outcome::Completed { first: 4, count: 1 });
        // Phase 5 does not wait for the child, phase 6 does.
        assert_eq!(w, active(5, 3, 2, 0));
        let (w, _) = apply(w, Op::Signal(5), false).unwrap();
        let (w, out) = apply(w, Op::Signal(5), false).unwrap();
        assert_eq!(out, Outcome::Completed { first: 5, count: 1 });
        assert_eq!(w, active(6, 3, 3, 0));
    }

    #[test]
    fn phases_wrap() {
        let top = (1 << PHASE_BITS) - 1;
        let w = active(top, 1, 1, 0);
        let c = (1 << PHASE_BITS) * 3 + top;
        let (w, out) = apply(w, Op::Signal(c), false).unwrap();
        assert_eq!(out, Outcome::Completed { first: c, count: 1 });
        assert_eq!(w.phase, 0);
        assert_eq!(w.distance(c + 1), 0);
    }
}
