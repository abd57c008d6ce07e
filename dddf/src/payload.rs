//! What a DDDF can carry: plain data, or a vector of plain data.
//!
//! Values travel between ranks as bytes. [`Plain`] marks the types whose
//! bytes are the whole story (no padding, no pointers, every bit pattern
//! valid); [`Payload`] turns a value into bytes and back, and is implemented
//! for every `P: Plain` and every `Vec<P>`.

use std::mem::size_of;

/// Types that can be copied byte for byte between processes.
///
/// # Safety
/// Implementors must be `Copy`, contain no padding bytes, no pointers or
/// references, and accept every bit pattern as a valid value (integers,
/// floats, arrays of those). This is what lets a value be read from a byte
/// buffer received from another rank.
pub unsafe trait Plain: Copy + Send + Sync + 'static {}

macro_rules! plain {
    ($($t:ty),*) => {$(
        // SAFETY: primitive numeric type: no padding, no pointers, every bit
        // pattern is a valid value.
        unsafe impl Plain for $t {}
    )*};
}
plain!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);

// SAFETY: an array of plain elements has no padding between elements (their
// size is a multiple of their alignment) and no other content.
unsafe impl<P: Plain, const N: usize> Plain for [P; N] {}

/// A value a DDDF can hold: it has a byte encoding whose length must equal
/// the space's `size(guid)`.
pub trait Payload: Sized + Send + Sync + 'static {
    /// Length of the encoding in bytes.
    fn byte_len(&self) -> usize;

    /// Appends the encoding to `out`.
    fn write_bytes(&self, out: &mut Vec<u8>);

    /// Decodes a value, or `None` if `bytes` cannot be the encoding of one
    /// (wrong length for the type).
    fn read_bytes(bytes: &[u8]) -> Option<Self>;
}

fn bytes_of<P: Plain>(values: &[P]) -> &[u8] {
    // SAFETY: `P: Plain` has no padding, so every byte of the slice is
    // initialized; u8 has alignment 1 and the length covers exactly the
    // slice's memory.
    unsafe {
        std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
    }
}

impl<P: Plain> Payload for P {
    fn byte_len(&self) -> usize {
        size_of::<P>()
    }

    fn write_bytes(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(bytes_of(std::slice::from_ref(self)));
    }

    fn read_bytes(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != size_of::<P>() {
            return None;
        }
        // SAFETY: the length was checked; `P: Plain` accepts any bit
        // pattern; `read_unaligned` does not require alignment.
        Some(unsafe { bytes.as_ptr().cast::<P>().read_unaligned() })
    }
}

impl<P: Plain> Payload for Vec<P> {
    fn byte_len(&self) -> usize {
        std::mem::size_of_val(self.as_slice())
    }

    fn write_bytes(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(bytes_of(self));
    }

    fn read_bytes(bytes: &[u8]) -> Option<Self> {
        let width = size_of::<P>();
        if width == 0 {
            // A vector of zero-sized values has no bytes; its length is not
            // recoverable from them.
            return bytes.is_empty().then(Vec::new);
        }
        if !bytes.len().is_multiple_of(width) {
            return None;
        }
        let len = bytes.len() / width;
        let mut values = Vec::<P>::with_capacity(len);
        // SAFETY: the destination has capacity for `len` elements, i.e.
        // `bytes.len()` bytes, and does not overlap `bytes`; after the copy
        // every element is initialized because `P: Plain` accepts any bit
        // pattern.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                values.as_mut_ptr().cast::<u8>(),
                bytes.len(),
            );
            values.set_len(len);
        }
        Some(values)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn round_trip<T: Payload + PartialEq + std::fmt::Debug>(value: T) {
        let mut bytes = Vec::new();
        value.write_bytes(&mut bytes);
        assert_eq!(bytes.len(), value.byte_len());
        assert_eq!(T::read_bytes(&bytes), Some(value));
    }

    #[test]
    fn plain_values_and_vectors_round_trip() {
        round_trip(0x0123_4567_89ab_cdefu64);
        round_trip(-7i32);
        round_trip([1.5f64, -2.25]);
        round_trip(vec![1i32, -2, 3]);
        round_trip(Vec::<u16>::new());
        round_trip(vec![[1u8, 2], [3, 4]]);
    }

    #[test]
    fn wrong_lengths_are_rejected() {
        assert_eq!(u32::read_bytes(&[1, 2, 3]), None);
        assert_eq!(<Vec<i32>>::read_bytes(&[0; 6]), None);
        assert_eq!(<Vec<i32>>::read_bytes(&[0; 8]), Some(vec![0, 0]));
    }
}
