//! Joining segments traced from guessed crossings: a segment whose guess
//! missed, the last one (up to the start) included, is traced again from
//! where the segment below left its kept row.

use super::{join, Cell, Exit, Segment, State, Traced};
use crate::sw::alignment::Op;

fn cell(row: usize, col: usize, value: i32) -> Cell {
    Cell {
        row,
        col,
        state: State::H,
        value,
    }
}

/// Two segments: the one ending at `end` crosses the kept row 10 at
/// `(10, 6)`, but the backward pass guessed `(10, 5)` for the last one,
/// which goes up to the start. `join` must trace that one again from
/// `(10, 6)` and take what the retrace gives, not the speculated trace.
#[test]
fn the_last_segment_is_traced_again_when_its_guess_missed() {
    let end = cell(12, 8, 9);
    let exit = cell(10, 6, 5);
    let guess = cell(10, 5, 5);
    let below = Segment {
        bottom: end,
        above: 1,
        crosses: true,
    };
    let last = Segment {
        bottom: guess,
        above: 1,
        crosses: false,
    };
    let traced = [
        (
            below,
            Traced {
                ops: vec![Op::Match, Op::Match],
                exit: Exit::Cross(exit),
            },
        ),
        (
            last,
            Traced {
                ops: vec![Op::Mismatch],
                exit: Exit::Start { row: 10, col: 5 },
            },
        ),
    ];
    let mut retraced = Vec::new();
    let alignment = join(&traced, end, |segment, from| {
        retraced.push((segment.crosses, from));
        Traced {
            ops: vec![Op::Match; 3],
            exit: Exit::Start { row: 8, col: 4 },
        }
    });
    assert_eq!(retraced, [(false, exit)]);
    assert_eq!((alignment.a.clone(), alignment.b.clone()), (7..12, 3..8));
    assert_eq!(alignment.to_string(), "5=");
}

/// Where every guess was right, nothing is traced again.
#[test]
fn right_guesses_are_joined_as_they_were_traced() {
    let end = cell(12, 8, 9);
    let exit = cell(10, 7, 5);
    let traced = [
        (
            Segment {
                bottom: end,
                above: 1,
                crosses: true,
            },
            Traced {
                ops: vec![Op::Match, Op::Deletion],
                exit: Exit::Cross(exit),
            },
        ),
        (
            Segment {
                bottom: exit,
                above: 1,
                crosses: false,
            },
            Traced {
                ops: vec![Op::Match],
                exit: Exit::Start { row: 10, col: 7 },
            },
        ),
    ];
    let alignment = join(&traced, end, |segment, from| {
        panic!("{segment:?} traced again from {from:?}")
    });
    assert_eq!((alignment.a.clone(), alignment.b.clone()), (9..12, 6..8));
    assert_eq!(alignment.to_string(), "1=1D1=");
}
