//! The UTS splittable random number generator, built on SHA-1.
//!
//! A node's state is a 20-byte SHA-1 digest:
//! * `init(seed)` = SHA1(16 zero bytes ‖ seed as 4-byte big-endian),
//! * `spawn(parent, i)` = SHA1(parent state ‖ i as 4-byte big-endian),
//! * `rand(state)` = last 4 bytes of the state, big-endian, `& 0x7fff_ffff`.
//!
//! Both messages fit in a single padded 64-byte block, so instead of going
//! through a streaming hasher we run the SHA-1 compression function once on a
//! prepared block ([`Spawner`]). `sha1::block_api::compress` picks the SHA-NI
//! backend at run time when the CPU has it.

use sha1::block_api::compress;

/// The RNG state of one tree node: a SHA-1 digest.
pub type RngState = [u8; 20];

/// Mask that keeps the random value non-negative as a 32-bit signed int.
pub const POS_MASK: u32 = 0x7fff_ffff;

/// SHA-1 initial hash value (FIPS 180-4, 5.3.1).
const H0: [u32; 5] = [
    0x6745_2301,
    0xEFCD_AB89,
    0x98BA_DCFE,
    0x1032_5476,
    0xC3D2_E1F0,
];

/// Offset of the big-endian spawn index in a spawn block.
const INDEX_AT: usize = 20;

#[inline(always)]
fn words_to_state(h: &[u32; 5]) -> RngState {
    let mut out = [0u8; 20];
    for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// A single-block SHA-1 message: `len` bytes of payload already in
/// `block[..len]`; writes the padding and the bit length.
#[inline(always)]
fn pad_block(block: &mut [u8; 64], len: usize) {
    block[len] = 0x80;
    block[56..64].copy_from_slice(&((len as u64) * 8).to_be_bytes());
}

/// Hash one prepared (already padded) block from the initial hash value.
#[inline(always)]
fn hash_block(block: &[u8; 64]) -> RngState {
    let mut h = H0;
    compress(&mut h, core::slice::from_ref(block));
    words_to_state(&h)
}

/// Root state for `seed` (the reference's `rng_init`).
pub fn init(seed: i32) -> RngState {
    let mut block = [0u8; 64];
    block[16..20].copy_from_slice(&seed.to_be_bytes());
    pad_block(&mut block, 20);
    hash_block(&block)
}

/// State of child number `index` of `parent` (the reference's `rng_spawn`).
pub fn spawn(parent: &RngState, index: u32) -> RngState {
    Spawner::new(parent).spawn(index)
}

/// The reference's `rng_rand`: last four bytes, big-endian, made non-negative.
#[inline(always)]
pub fn rand(state: &RngState) -> u32 {
    u32::from_be_bytes([state[16], state[17], state[18], state[19]]) & POS_MASK
}

/// The reference's `rng_toProb`: a 31-bit value mapped onto `[0, 1)`.
#[inline(always)]
pub fn to_prob(r: u32) -> f64 {
    f64::from(r) / 2_147_483_648.0
}

/// Spawns the children of one parent: the padded message block
/// (parent state ‖ index ‖ padding ‖ bit length 192) is prepared once and
/// only the four index bytes change from child to child.
#[derive(Debug, Clone)]
pub struct Spawner {
    block: [u8; 64],
}

impl Spawner {
    /// Prepare the block for children of `parent`.
    #[inline(always)]
    pub fn new(parent: &RngState) -> Self {
        let mut block = [0u8; 64];
        block[..20].copy_from_slice(parent);
        pad_block(&mut block, 24);
        Spawner { block }
    }

    /// The parent state this spawner was built from.
    pub fn parent(&self) -> RngState {
        let mut s = [0u8; 20];
        s.copy_from_slice(&self.block[..20]);
        s
    }

    /// State of child `index`.
    #[inline(always)]
    pub fn spawn(&mut self, index: u32) -> RngState {
        self.block[INDEX_AT..INDEX_AT + 4].copy_from_slice(&index.to_be_bytes());
        hash_block(&self.block)
    }

    /// State of child `index`, computed `granularity` times (at least once),
    /// as the reference's compute-granularity option `-g` does.
    #[inline]
    pub fn spawn_with_granularity(&mut self, index: u32, granularity: u32) -> RngState {
        for _ in 1..granularity {
            // The extra evaluations are pure busy work: keep the optimizer from
            // dropping them.
            std::hint::black_box(self.spawn(std::hint::black_box(index)));
        }
        self.spawn(index)
    }
}

/// Lower-case hex rendering of a state (for debugging and tests).
pub fn to_hex(state: &RngState) -> String {
    state.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_19_vector() {
        let s = init(19);
        assert_eq!(to_hex(&s), "c6988ab70cc9559ae4d6cba254e29a845a85f86b");
        assert_eq!(rand(&s), 1_518_729_323);
    }

    #[test]
    fn spawner_matches_one_shot() {
        let p = init(42);
        let mut sp = Spawner::new(&p);
        for i in [0u32, 1, 7, 99, 1999] {
            assert_eq!(sp.spawn(i), spawn(&p, i));
            assert_eq!(sp.spawn_with_granularity(i, 3), spawn(&p, i));
        }
        assert_eq!(sp.parent(), p);
    }
}
