//! Deterministic pseudo-random numbers (SplitMix64) and random sequences.
//!
//! The same seed always gives the same sequence on every platform.

/// SplitMix64 generator (Steele, Lea, Flood 2014).
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// New generator from a seed (any value, including 0).
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform-ish integer in `0..bound` (multiply-shift; bias < 2^-32 for
    /// small bounds). Panics if `bound == 0`.
    pub fn below(&mut self, bound: u32) -> u32 {
        assert!(bound > 0, "bound must be positive");
        (((self.next_u64() >> 32) * u64::from(bound)) >> 32) as u32
    }
}

/// `len` codes drawn uniformly from `0..alphabet_size`.
pub fn random_codes(len: usize, alphabet_size: u8, seed: u64) -> Vec<u8> {
    let mut rng = SplitMix64::new(seed);
    (0..len)
        .map(|_| rng.below(u32::from(alphabet_size)) as u8)
        .collect()
}

/// Random DNA codes (`0..4`, i.e. `ACGT`).
pub fn random_dna(len: usize, seed: u64) -> Vec<u8> {
    random_codes(len, 4, seed)
}

/// Random protein codes over the 20 standard amino acids (`0..20`).
pub fn random_protein(len: usize, seed: u64) -> Vec<u8> {
    random_codes(len, crate::sw::alphabet::STANDARD_AMINO_ACIDS as u8, seed)
}

/// A mutated copy of `seq` (codes `0..alphabet_size`): at each position,
/// with probability `rate` each, a substitution, a deletion, or an
/// insertion of one random code before it. Related sequences for tests and
/// benchmarks: their best alignment runs along the whole diagonal.
pub fn mutated(seq: &[u8], alphabet_size: u8, rate: f64, seed: u64) -> Vec<u8> {
    let mut rng = SplitMix64::new(seed);
    let threshold = (rate.clamp(0.0, 1.0) * f64::from(u32::MAX)) as u64;
    let draw = |rng: &mut SplitMix64| (rng.next_u64() >> 32) < threshold;
    let mut out = Vec::with_capacity(seq.len() + seq.len() / 8);
    for &code in seq {
        if draw(&mut rng) {
            out.push(rng.below(u32::from(alphabet_size)) as u8);
        }
        if draw(&mut rng) {
            continue;
        }
        if draw(&mut rng) {
            out.push(rng.below(u32::from(alphabet_size)) as u8);
        } else {
            out.push(code);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        assert_eq!(random_dna(100, 7), random_dna(100, 7));
        assert_ne!(random_dna(100, 7), random_dna(100, 8));
        assert!(random_dna(1000, 1).iter().all(|&c| c < 4));
        assert!(random_protein(1000, 1).iter().all(|&c| c < 20));
        // All four bases occur.
        let d = random_dna(1000, 3);
        for c in 0..4 {
            assert!(d.contains(&c));
        }
        // Known first value of SplitMix64 with seed 0.
        assert_eq!(SplitMix64::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn mutated_copies_differ_by_about_the_rate() {
        let seq = random_dna(10_000, 5);
        assert_eq!(mutated(&seq, 4, 0.0, 1), seq);
        let copy = mutated(&seq, 4, 0.05, 1);
        assert_eq!(copy, mutated(&seq, 4, 0.05, 1));
        assert!(copy.iter().all(|&c| c < 4));
        // About 5% insertions and 5% deletions: the length barely moves,
        // and about 15% of positions change (a quarter of the substitutions
        // and insertions draw the same code).
        assert!(copy.len().abs_diff(seq.len()) < 300, "{}", copy.len());
        assert_ne!(copy, seq);
    }
}
