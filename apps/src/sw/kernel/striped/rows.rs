//! The rows a pass reads and writes, kept by each thread from one pass to
//! the next.
//!
//! A pass needs four rows of vectors (`H` above, `F`, the row being
//! computed, the spare). Allocated for each tile and freed after it, they
//! often came back from the allocator as fresh pages: a block freed at the
//! top of a thread's heap goes back to the system once the free space
//! there passes glibc's trim threshold, and the next tile faults its pages
//! in again. On random proteins 5000² at one rank of two workers, those
//! faults were a third of the workers' page faults. So each thread keeps
//! its last buffer: a pass takes it and gives it back when it ends (a pass
//! that found none, such as one nested in another on the same thread,
//! allocates its own).

use std::any::Any;
use std::cell::RefCell;

/// The largest buffer a thread keeps: the rows of a pass over about
/// 30000 columns of 16-bit AVX-512 lanes. Wider passes (a traceback's
/// strips may span all of B) allocate theirs.
const KEPT_BYTES: usize = 4 << 20;

thread_local! {
    static KEPT_ROWS: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// `len` vectors, each `fill`, in this thread's kept buffer when it holds
/// vectors of this type.
pub(super) fn take<V: Copy + 'static>(len: usize, fill: V) -> Vec<V> {
    let kept = KEPT_ROWS
        .with_borrow_mut(Option::take)
        .and_then(|kept| kept.downcast::<Vec<V>>().ok());
    let mut rows = kept.map(|kept| *kept).unwrap_or_default();
    rows.clear();
    rows.resize(len, fill);
    rows
}

/// Keeps `rows` for this thread's next pass, unless it is larger than
/// [`KEPT_BYTES`].
pub(super) fn give_back<V: 'static>(rows: Vec<V>) {
    if rows.capacity() * size_of::<V>() <= KEPT_BYTES {
        KEPT_ROWS.with_borrow_mut(|kept| *kept = Some(Box::new(rows)));
    }
}

#[cfg(test)]
mod tests {
    use super::{give_back, take};

    #[test]
    fn a_buffer_given_back_is_taken_again_filled_anew() {
        let mut rows = take(100, 7u64);
        assert_eq!(rows, vec![7; 100]);
        rows[3] = 1;
        let at = rows.as_ptr();
        give_back(rows);
        let again = take(50, 9u64);
        assert_eq!(again, vec![9; 50]);
        assert_eq!(again.as_ptr(), at, "the kept buffer");
        // Another vector type: a buffer of its own.
        let other = take(10, 1u8);
        assert_eq!(other, vec![1; 10]);
        give_back(other);
        assert_eq!(take(100, 0u64), vec![0; 100]);
    }
}
