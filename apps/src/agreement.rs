//! Whether every rank of a job was given the same problem.
//!
//! Each rank reads its own command line and input files, and under an
//! MPMD launch (`mpiexec -n 1 prog A : -n 1 prog B`) or with files that
//! differ between nodes, two ranks can be given different problems. Their
//! tiles, edges and work would not fit together: the job would hang, fail
//! with an unrelated message, or print a wrong result. So the drivers
//! compare a [`Fingerprint`] of the problem before they start:
//!
//! 1. Every rank builds the fingerprint of what it was given: for each
//!    part (a sequence, a group of options) its length and its SHA-1
//!    digest, in the same order on every rank.
//! 2. Rank 0 broadcasts its [`words`](Fingerprint::words).
//! 3. Every other rank [`compare`](Fingerprint::compare)s them with its
//!    own. One that differs ends the whole job with a message that names
//!    the first part that differs; the others are waiting in the driver's
//!    next collective, and the abort ends them too. (Rank 0 broadcasts
//!    the number of words first, since a broadcast needs as many on every
//!    rank.)
//!
//! Each mode compares on its own communicator (the hcmpi modes on
//! hc-mpi's, after it started), so ranks started in different modes are
//! not told apart: their first collectives do not match, which MPI leaves
//! undefined. Every rank of a job must be started in the same mode.
//!
//! A 160-bit digest makes a difference that goes unnoticed as unlikely as
//! a SHA-1 collision between honest inputs; what the check guards against
//! is a mistake, not an adversary.

use sha1::{Digest, Sha1};

/// Words of one part in [`Fingerprint::words`]: its length, then its
/// 20-byte digest in three words (the last one zero-padded).
const PART_WORDS: usize = 4;

/// What a rank was given, part by part.
///
/// ```
/// use apps::agreement::Fingerprint;
///
/// let root = Fingerprint::new().sequence("sequence A", b"GATTACA");
/// let here = Fingerprint::new().sequence("sequence A", b"GATTACA");
/// assert!(here.compare(1, &root.words()).is_ok());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Fingerprint {
    parts: Vec<Part>,
}

#[derive(Clone, Debug)]
struct Part {
    /// Its name in a message: "sequence B", "scoring options".
    what: &'static str,
    /// Letters of a sequence; `None` for options, whose length says
    /// nothing to the user.
    letters: Option<u64>,
    len: u64,
    digest: [u8; 20],
}

impl Part {
    fn new(what: &'static str, letters: Option<u64>, bytes: &[u8]) -> Part {
        Part {
            what,
            letters,
            len: bytes.len() as u64,
            digest: Sha1::digest(bytes).into(),
        }
    }

    fn words(&self) -> [u64; PART_WORDS] {
        let mut padded = [0u8; 24];
        padded[..20].copy_from_slice(&self.digest);
        let word =
            |k: usize| u64::from_le_bytes(padded[8 * k..8 * k + 8].try_into().expect("8 bytes"));
        [self.len, word(0), word(1), word(2)]
    }
}

/// How a rank's problem differs from rank 0's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Disagreement {
    /// A sequence of another length.
    #[error(
        "rank {rank} was given a {what} of {here} letters, rank 0 one of {root}: \
         every rank of a job must be given the same problem"
    )]
    SequenceLength {
        /// The rank that differs.
        rank: i32,
        /// Which sequence.
        what: &'static str,
        /// Its length on that rank.
        here: u64,
        /// Its length on rank 0.
        root: u64,
    },
    /// A sequence of the same length with other letters.
    #[error(
        "rank {rank} was given another {what} than rank 0 (both of {letters} letters): \
         every rank of a job must be given the same problem"
    )]
    SequenceLetters {
        /// The rank that differs.
        rank: i32,
        /// Which sequence.
        what: &'static str,
        /// Its length on both ranks.
        letters: u64,
    },
    /// Other options.
    #[error(
        "rank {rank} was given other {what} than rank 0: \
         every rank of a job must be started with the same options"
    )]
    Options {
        /// The rank that differs.
        rank: i32,
        /// Which options.
        what: &'static str,
    },
    /// Rank 0's fingerprint has another shape: another build of the
    /// program.
    #[error(
        "rank 0 described its problem in {root} words, rank {rank} in {here}: \
         every rank of a job must run the same program"
    )]
    Shape {
        /// The rank that differs.
        rank: i32,
        /// Its number of words.
        here: usize,
        /// Rank 0's.
        root: usize,
    },
}

impl Fingerprint {
    /// A fingerprint of no parts.
    ///
    /// ```
    /// use apps::agreement::Fingerprint;
    ///
    /// assert!(Fingerprint::new().words().is_empty());
    /// ```
    pub fn new() -> Fingerprint {
        Fingerprint::default()
    }

    /// Adds a sequence (`what` names it in a message: "sequence A").
    ///
    /// ```
    /// use apps::agreement::{Disagreement, Fingerprint};
    ///
    /// let root = Fingerprint::new().sequence("sequence B", b"ACGT");
    /// let here = Fingerprint::new().sequence("sequence B", b"ACG");
    /// assert_eq!(
    ///     here.compare(2, &root.words()),
    ///     Err(Disagreement::SequenceLength { rank: 2, what: "sequence B", here: 3, root: 4 })
    /// );
    /// ```
    pub fn sequence(mut self, what: &'static str, letters: &[u8]) -> Fingerprint {
        self.parts
            .push(Part::new(what, Some(letters.len() as u64), letters));
        self
    }

    /// Adds options, described by any text that differs where they do
    /// (`what` names them in a message: "scoring options").
    ///
    /// ```
    /// use apps::agreement::{Disagreement, Fingerprint};
    ///
    /// let root = Fingerprint::new().options("scoring options", "gap 3/1");
    /// let here = Fingerprint::new().options("scoring options", "gap 5/2");
    /// assert_eq!(
    ///     here.compare(1, &root.words()),
    ///     Err(Disagreement::Options { rank: 1, what: "scoring options" })
    /// );
    /// ```
    pub fn options(mut self, what: &'static str, text: &str) -> Fingerprint {
        self.parts.push(Part::new(what, None, text.as_bytes()));
        self
    }

    /// The words rank 0 broadcasts: four for each part (its length and
    /// digest), as many on every rank that runs the same program.
    ///
    /// ```
    /// use apps::agreement::Fingerprint;
    ///
    /// let fingerprint = Fingerprint::new().sequence("sequence A", b"ACGT");
    /// assert_eq!(fingerprint.words().len(), 4);
    /// assert_eq!(fingerprint.words()[0], 4); // the length comes first
    /// ```
    pub fn words(&self) -> Vec<u64> {
        self.parts.iter().flat_map(Part::words).collect()
    }

    /// Checks this fingerprint, of rank `rank`, against rank 0's `root`
    /// words.
    ///
    /// # Errors
    /// The first part that differs, with this rank's and rank 0's lengths
    /// where it is a sequence of another length.
    ///
    /// ```
    /// use apps::agreement::{Disagreement, Fingerprint};
    ///
    /// let root = Fingerprint::new().sequence("sequence A", b"ACGT");
    /// let here = Fingerprint::new().sequence("sequence A", b"ACGA");
    /// let error = here.compare(3, &root.words()).unwrap_err();
    /// assert_eq!(error, Disagreement::SequenceLetters { rank: 3, what: "sequence A", letters: 4 });
    /// assert!(error.to_string().starts_with("rank 3 was given another sequence A than rank 0"));
    /// ```
    pub fn compare(&self, rank: i32, root: &[u64]) -> Result<(), Disagreement> {
        let here = self.words();
        if here.len() != root.len() {
            return Err(Disagreement::Shape {
                rank,
                here: here.len(),
                root: root.len(),
            });
        }
        let pairs = here.chunks(PART_WORDS).zip(root.chunks(PART_WORDS));
        for (part, (mine, theirs)) in self.parts.iter().zip(pairs) {
            if mine == theirs {
                continue;
            }
            let what = part.what;
            return Err(match part.letters {
                None => Disagreement::Options { rank, what },
                Some(letters) if theirs[0] == letters => Disagreement::SequenceLetters {
                    rank,
                    what,
                    letters,
                },
                Some(letters) => Disagreement::SequenceLength {
                    rank,
                    what,
                    here: letters,
                    root: theirs[0],
                },
            });
        }
        Ok(())
    }

    /// Steps 2 and 3 on an hc-mpi communicator: returns when this rank
    /// agrees with rank 0 (at once on a job of one rank); otherwise ends
    /// the whole job (status 2) with `program`'s message naming the first
    /// difference. Collective.
    ///
    /// # Errors
    /// The broadcast's.
    pub fn agree_on(&self, program: &str, comm: &hc_mpi::Comm) -> Result<(), hc_mpi::Error> {
        if comm.size() > 1 {
            let words = self.words();
            let count = comm.bcast(vec![words.len() as u64], 0)?[0];
            check_shape(comm.rank(), count, words.len())
                .unwrap_or_else(|error| end_job(program, &error));
            let root = comm.bcast(words, 0)?;
            self.compare(comm.rank(), &root)
                .unwrap_or_else(|error| end_job(program, &error));
        }
        Ok(())
    }

    /// [`agree_on`](Self::agree_on) for a driver that runs MPI itself.
    pub fn agree_on_world(&self, program: &str, world: &impl mpi::traits::Communicator) {
        use mpi::traits::Root;
        if world.size() > 1 {
            let mut root = self.words();
            let here = root.len();
            let mut count = here as u64;
            world.process_at_rank(0).broadcast_into(&mut count);
            check_shape(world.rank(), count, here).unwrap_or_else(|error| end_job(program, &error));
            world.process_at_rank(0).broadcast_into(&mut root[..]);
            self.compare(world.rank(), &root)
                .unwrap_or_else(|error| end_job(program, &error));
        }
    }
}

/// A broadcast of rank 0's words needs as many on every rank: rank 0
/// sends their count first, and a rank with another count stops before
/// the words.
fn check_shape(rank: i32, root_count: u64, here: usize) -> Result<(), Disagreement> {
    if root_count == here as u64 {
        return Ok(());
    }
    let root = usize::try_from(root_count).unwrap_or(usize::MAX);
    Err(Disagreement::Shape { rank, here, root })
}

/// Ends the whole job with status 2 and `program`'s message.
fn end_job(program: &str, disagreement: &Disagreement) -> ! {
    hc_mpi::abort_job(2, &format!("{program}: error: {disagreement}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(a: &[u8], b: &[u8], scoring: &str) -> Fingerprint {
        Fingerprint::new()
            .sequence("sequence A", a)
            .sequence("sequence B", b)
            .options("scoring options", scoring)
    }

    #[test]
    fn the_same_problem_agrees() {
        let root = problem(b"ACGT", b"GGCA", "2/-1/3/1").words();
        assert_eq!(
            problem(b"ACGT", b"GGCA", "2/-1/3/1").compare(1, &root),
            Ok(())
        );
    }

    #[test]
    fn the_first_part_that_differs_is_named() {
        let root = problem(b"ACGT", b"GGCA", "2/-1/3/1").words();
        assert_eq!(
            problem(b"ACGT", b"GGC", "5/-1/3/1").compare(1, &root),
            Err(Disagreement::SequenceLength {
                rank: 1,
                what: "sequence B",
                here: 3,
                root: 4
            })
        );
        assert_eq!(
            problem(b"ACGT", b"GGCA", "2/-1/3/2").compare(2, &root),
            Err(Disagreement::Options {
                rank: 2,
                what: "scoring options"
            })
        );
    }

    #[test]
    fn one_letter_anywhere_differs() {
        let a: Vec<u8> = (0..10_000u32).map(|i| (i % 4) as u8).collect();
        let root = problem(&a, &a, "").words();
        for at in [0, 4999, 9999] {
            let mut other = a.clone();
            other[at] ^= 1;
            assert_eq!(
                problem(&other, &a, "").compare(1, &root),
                Err(Disagreement::SequenceLetters {
                    rank: 1,
                    what: "sequence A",
                    letters: 10_000
                }),
                "letter {at}"
            );
        }
    }

    #[test]
    fn another_shape_is_its_own_error() {
        let root = problem(b"A", b"C", "").words();
        let here = Fingerprint::new().sequence("sequence A", b"A");
        assert_eq!(
            here.compare(1, &root),
            Err(Disagreement::Shape {
                rank: 1,
                here: 4,
                root: 12
            })
        );
    }
}
