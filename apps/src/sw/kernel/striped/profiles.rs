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
//! than building the profile. What a thread keeps is bounded in count and
//! in bytes ([`KEPT`], [`KEPT_BYTES`]).

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::rc::Rc;

use super::{Lanes, Profile, Scores};

/// Profiles kept per thread: the tile columns one worker goes back and
/// forth between, at two lane widths (the sequential pass's column blocks
/// of a 60000-column row, an hcmpi worker's inner tile columns).
const KEPT: usize = 16;

/// The most bytes of profiles (and their keys) one thread keeps: sixteen
/// of the widest tiles' (4096 columns of 24 codes on 16-bit lanes, about
/// 200 KB each) fit many times over, while the strips of a traceback,
/// which may span all of B, are not kept: sixteen of them for a
/// million-column protein would hold a gigabyte per thread.
const KEPT_BYTES: usize = 16 << 20;

/// One kept profile and what it was built from.
struct Kept {
    lanes: TypeId,
    scores: Scores,
    columns: Vec<u8>,
    profile: Rc<dyn Any>,
    /// What it holds on the heap, key included.
    bytes: usize,
}

thread_local! {
    /// Most recently used first.
    static KEPT_PROFILES: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) };
}

/// The profile of columns `b` under `scores` on lanes `l`: a kept one when
/// this thread built it recently, else a new one, then kept.
///
/// The profile is built here, outside the thread-local's closure: inlined
/// into the kernel, the build is compiled for the kernel's instruction set,
/// while the closure is a function of its own at the baseline target,
/// where the intrinsics of its look-ups would not inline.
#[inline(always)]
pub(super) fn profile<L: Lanes>(l: L, scores: &Scores, b: &[u8]) -> Rc<Profile<L::V>> {
    if let Some(kept) = kept_profile::<L>(scores, b) {
        return kept;
    }
    let profile = Rc::new(Profile::build(l, scores, b));
    keep::<L>(scores, b, &profile);
    profile
}

/// The kept profile of columns `b` under `scores` on lanes `L`, now the
/// most recently used, if any.
fn kept_profile<L: Lanes>(scores: &Scores, b: &[u8]) -> Option<Rc<Profile<L::V>>> {
    let lanes = TypeId::of::<L>();
    KEPT_PROFILES.with_borrow_mut(|kept| {
        let at = kept
            .iter()
            .position(|k| k.lanes == lanes && k.columns == b && k.scores == *scores)?;
        let found = kept.remove(at);
        let profile = Rc::clone(&found.profile)
            .downcast::<Profile<L::V>>()
            .expect("kept profiles are keyed by their lane type");
        kept.insert(0, found);
        Some(profile)
    })
}

/// Keeps `profile`, just built from `b` and `scores`, unless it is larger
/// than [`KEPT_BYTES`]; drops the least recently used ones beyond
/// [`KEPT`] profiles or [`KEPT_BYTES`].
fn keep<L: Lanes>(scores: &Scores, b: &[u8], profile: &Rc<Profile<L::V>>) {
    let bytes = std::mem::size_of_val(profile.vectors.as_slice())
        + b.len()
        + std::mem::size_of_val(scores.rows.as_slice());
    if bytes > KEPT_BYTES {
        return;
    }
    KEPT_PROFILES.with_borrow_mut(|kept| {
        kept.truncate(KEPT - 1);
        let mut total = bytes;
        let fit = kept
            .iter()
            .take_while(|k| {
                total += k.bytes;
                total <= KEPT_BYTES
            })
            .count();
        kept.truncate(fit);
        kept.insert(
            0,
            Kept {
                lanes: TypeId::of::<L>(),
                scores: scores.clone(),
                columns: b.to_vec(),
                profile: Rc::clone(profile) as Rc<dyn Any>,
                bytes,
            },
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sw::kernel::{run_tile, Kernel, TileIo};
    use crate::sw::random::{random_codes, random_protein};
    use crate::sw::Scoring;

    /// How many profiles this thread keeps, and their bytes.
    fn kept() -> (usize, usize) {
        KEPT_PROFILES.with_borrow(|kept| (kept.len(), kept.iter().map(|k| k.bytes).sum()))
    }

    /// Aligns 24 rows holding every code against `b` in one tile.
    fn tile_over(b: &[u8], scoring: &Scoring) {
        let a: Vec<u8> = (0..24).collect();
        let (mut top_h, mut top_f) = (vec![0; b.len()], vec![0; b.len()]);
        let (mut left_h, mut left_e) = (vec![0; a.len()], vec![0; a.len()]);
        let io = TileIo {
            a: &a,
            b,
            top_h: &mut top_h,
            top_f: &mut top_f,
            left_h: &mut left_h,
            left_e: &mut left_e,
            corner: 0,
            row0: 0,
            col0: 0,
        };
        run_tile(Kernel::Auto, scoring, io);
    }

    /// Wide tiles (a traceback's strips span all of B) fill the kept
    /// profiles up to `KEPT_BYTES` at most, and one wider than that is not
    /// kept at all.
    #[test]
    fn kept_profiles_stay_within_their_bytes() {
        if !matches!(Kernel::Auto.resolve(), Kernel::Striped(..)) {
            eprintln!("no striped kernel on this machine: no profiles to keep");
            return;
        }
        let scoring = Scoring::blosum62(11, 1).unwrap();
        // 24 codes x 100 000 columns: 2.4 MB a profile on 8-bit lanes.
        for seed in 0..12 {
            tile_over(&random_protein(100_000, seed), &scoring);
            let (count, bytes) = kept();
            assert!(
                bytes <= KEPT_BYTES,
                "{count} profiles of {bytes} bytes kept"
            );
        }
        let (count, _) = kept();
        assert!((2..=7).contains(&count), "{count} profiles kept");
        let before = kept();
        tile_over(&random_codes(800_000, 20, 99), &scoring);
        assert_eq!(kept(), before, "a profile wider than KEPT_BYTES was kept");
    }
}
