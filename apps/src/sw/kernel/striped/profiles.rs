//! Query profiles kept by each thread from one tile to the next.
//!
//! A profile depends on the tile's columns (sequence B), the scores and the
//! lanes, not on its rows, and building one costs as much as computing
//! dozens of rows of the tile: the tiles of one tile column would each pay
//! it again. So every thread keeps the few profiles it built last and
//! reuses one when a tile asks for the same columns, scores and lanes. The
//! key is the content itself (a copy of the columns, the score table), not
//! an address: a buffer reused for other columns can never pick up a stale
//! profile. Comparing the key reads the columns once, which costs far less
//! than building the profile.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::rc::Rc;

use super::{Lanes, Profile, Scores};

/// Profiles kept per thread: the tile columns one worker goes back and
/// forth between, at two lane widths (the sequential pass's column blocks
/// of a 60000-column row, an hcmpi worker's inner tile columns).
const KEPT: usize = 16;

/// One kept profile and what it was built from.
struct Kept {
    lanes: TypeId,
    scores: Scores,
    columns: Vec<u8>,
    profile: Rc<dyn Any>,
}

thread_local! {
    /// Most recently used first.
    static KEPT_PROFILES: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) };
}

/// The profile of columns `b` under `scores` on lanes `l`: a kept one when
/// this thread built it recently, else a new one, then kept.
#[inline(always)]
pub(super) fn profile<L: Lanes>(l: L, scores: &Scores, b: &[u8]) -> Rc<Profile<L::V>> {
    let lanes = TypeId::of::<L>();
    KEPT_PROFILES.with_borrow_mut(|kept| {
        let hit = kept
            .iter()
            .position(|k| k.lanes == lanes && k.columns == b && k.scores == *scores);
        if let Some(at) = hit {
            let found = kept.remove(at);
            let profile = Rc::clone(&found.profile)
                .downcast::<Profile<L::V>>()
                .expect("kept profiles are keyed by their lane type");
            kept.insert(0, found);
            return profile;
        }
        let profile = Rc::new(Profile::build(l, scores, b));
        kept.truncate(KEPT - 1);
        kept.insert(
            0,
            Kept {
                lanes,
                scores: scores.clone(),
                columns: b.to_vec(),
                profile: Rc::clone(&profile) as Rc<dyn Any>,
            },
        );
        profile
    })
}
