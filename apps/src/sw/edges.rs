//! Tile edges as flat `i32` vectors, the form they travel in between ranks.
//!
//! A row edge of width `w` is `[h_0 .. h_w, f_0 .. f_w]`; a column edge of
//! height `h` is `[corner, h_0 .. h_h, e_0 .. e_h]`.

use crate::sw::tile::{EdgeCol, EdgeRow};

/// `[h.., f..]`.
pub fn pack_row(row: &EdgeRow) -> Vec<i32> {
    let mut flat = Vec::with_capacity(2 * row.len());
    flat.extend_from_slice(&row.h);
    flat.extend_from_slice(&row.f);
    flat
}

/// Inverse of [`pack_row`].
///
/// # Panics
/// If `flat` has an odd length.
pub fn unpack_row(flat: &[i32]) -> EdgeRow {
    assert!(
        flat.len().is_multiple_of(2),
        "a packed row edge has an even length"
    );
    let (h, f) = flat.split_at(flat.len() / 2);
    EdgeRow {
        h: h.to_vec(),
        f: f.to_vec(),
    }
}

/// `[corner, h.., e..]`.
pub fn pack_col(col: &EdgeCol) -> Vec<i32> {
    let mut flat = Vec::with_capacity(1 + 2 * col.len());
    flat.push(col.corner);
    flat.extend_from_slice(&col.h);
    flat.extend_from_slice(&col.e);
    flat
}

/// Inverse of [`pack_col`].
///
/// # Panics
/// If `flat` is empty or its length is even.
pub fn unpack_col(flat: &[i32]) -> EdgeCol {
    let (&corner, rest) = flat
        .split_first()
        .expect("a packed column edge has a corner");
    assert!(
        rest.len().is_multiple_of(2),
        "a packed column edge has an odd length"
    );
    let (h, e) = rest.split_at(rest.len() / 2);
    EdgeCol {
        corner,
        h: h.to_vec(),
        e: e.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_round_trip() {
        let row = EdgeRow {
            h: vec![1, 2, 3],
            f: vec![-4, -5, -6],
        };
        assert_eq!(unpack_row(&pack_row(&row)), row);
        let col = EdgeCol {
            corner: 9,
            h: vec![1, 2],
            e: vec![-1, -2],
        };
        assert_eq!(pack_col(&col), [9, 1, 2, -1, -2]);
        assert_eq!(unpack_col(&pack_col(&col)), col);
    }
}
