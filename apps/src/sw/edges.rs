//! Tile edges as flat `i32` vectors, and those as the 16-bit words they
//! travel in between ranks ([`Width`]).
//!
//! A row edge of width `w` is `[h_0 .. h_w, f_0 .. f_w]`; a column edge of
//! height `h` is `[corner, h_0 .. h_h, e_0 .. e_h]`.
//!
//! An outer tile's edge is made of its inner tiles' edges, its *pieces*: a
//! row of pieces side by side, a column of pieces one under the other,
//! each column piece with the corner that the tile to its right needs
//! (see [`crate::sw::tile`]). The pieces are packed straight into the
//! joined form, in one copy, and unpacked straight into the reader's
//! pieces, which may be cut elsewhere.

use std::iter;
use std::ops::Range;

use crate::sw::tile::{EdgeCol, EdgeRow};

/// The row edges `pieces`, side by side, as one `[h.., f..]`.
///
/// ```
/// # use apps::sw::edges::pack_rows;
/// # use apps::sw::tile::EdgeRow;
/// let left = EdgeRow { h: vec![1, 2], f: vec![3, 4] };
/// let right = EdgeRow { h: vec![5], f: vec![6] };
/// assert_eq!(pack_rows(&[left, right]), [1, 2, 5, 3, 4, 6]);
/// ```
pub fn pack_rows(pieces: &[EdgeRow]) -> Vec<i32> {
    concat(row_parts(pieces))
}

/// The slices [`pack_rows`] joins, in order: for [`Width::encode_parts`],
/// which packs them into words without the `i32` copy.
///
/// ```
/// # use apps::sw::edges::{row_parts, Width};
/// # use apps::sw::tile::EdgeRow;
/// let pieces = [EdgeRow { h: vec![1, 2], f: vec![3, 4] }, EdgeRow { h: vec![5], f: vec![6] }];
/// assert_eq!(Width::Narrow.encode_parts(row_parts(&pieces)), [1, 2, 5, 3, 4, 6]);
/// ```
pub fn row_parts(pieces: &[EdgeRow]) -> impl Iterator<Item = &[i32]> + Clone {
    let h = pieces.iter().map(|p| &p.h[..]);
    let f = pieces.iter().map(|p| &p.f[..]);
    h.chain(f)
}

/// Inverse of [`pack_rows`], cut into the column ranges `cuts` (relative to
/// the edge's first column, covering it left to right), from the values
/// or from the words they travel in ([`Packed`]).
///
/// ```
/// # use apps::sw::edges::{unpack_rows, Packed, Width};
/// let pieces = unpack_rows(&[1, 2, 5, 3, 4, 6], [0..1, 1..3]);
/// assert_eq!((pieces[0].h.as_slice(), pieces[0].f.as_slice()), (&[1][..], &[3][..]));
/// assert_eq!((pieces[1].h.as_slice(), pieces[1].f.as_slice()), (&[2, 5][..], &[4, 6][..]));
/// let words = Packed::words(Width::Narrow, &[1, 2, 5, 3, 4, 6]);
/// assert_eq!(unpack_rows(words, [0..1, 1..3]), pieces);
/// ```
///
/// # Panics
/// If the edge has an odd number of values, or `cuts` do not cover it
/// exactly.
pub fn unpack_rows<'a>(
    packed: impl Into<Packed<'a>>,
    cuts: impl IntoIterator<Item = Range<usize>>,
) -> Vec<EdgeRow> {
    let packed = packed.into();
    let values = packed.count();
    assert!(
        values.is_multiple_of(2),
        "a packed row edge must have an even length"
    );
    let f = values / 2;
    cut(f, cuts, |cols| EdgeRow {
        h: packed.values(cols.clone()),
        f: packed.values(f + cols.start..f + cols.end),
    })
}

/// The column edges `pieces`, one under the other, as one `[corner, h..,
/// e..]` under the first piece's corner.
///
/// ```
/// # use apps::sw::edges::pack_cols;
/// # use apps::sw::tile::EdgeCol;
/// let upper = EdgeCol { corner: 9, h: vec![1], e: vec![2] };
/// let lower = EdgeCol { corner: 1, h: vec![3], e: vec![4] };
/// assert_eq!(pack_cols(&[upper, lower]), [9, 1, 3, 2, 4]);
/// ```
///
/// # Panics
/// If `pieces` is empty, or a piece's corner is not the last `H` of the
/// piece above it: the packed form keeps the first corner only.
pub fn pack_cols(pieces: &[EdgeCol]) -> Vec<i32> {
    concat(col_parts(pieces))
}

/// The slices [`pack_cols`] joins, in order (see [`row_parts`]).
///
/// ```
/// # use apps::sw::edges::{col_parts, Width};
/// # use apps::sw::tile::EdgeCol;
/// let upper = EdgeCol { corner: 9, h: vec![1], e: vec![2] };
/// let lower = EdgeCol { corner: 1, h: vec![3], e: vec![4] };
/// assert_eq!(Width::Wide.encode_parts(col_parts(&[upper, lower])), [9, 0, 1, 0, 3, 0, 2, 0, 4, 0]);
/// ```
///
/// # Panics
/// As [`pack_cols`].
pub fn col_parts(pieces: &[EdgeCol]) -> impl Iterator<Item = &[i32]> + Clone {
    let first = pieces.first().expect("a column edge has a piece");
    for (k, pair) in pieces.windows(2).enumerate() {
        assert_eq!(
            Some(&pair[1].corner),
            pair[0].h.last(),
            "the corner of column piece {} is not the last H above it",
            k + 1
        );
    }
    let h = pieces.iter().map(|p| &p.h[..]);
    let e = pieces.iter().map(|p| &p.e[..]);
    iter::once(std::slice::from_ref(&first.corner))
        .chain(h)
        .chain(e)
}

/// Inverse of [`pack_cols`], cut into the row ranges `cuts` (relative to
/// the edge's first row, covering it top to bottom), from the values or
/// from the words they travel in ([`Packed`]). Each piece's corner is the
/// `H` just above it: the packed corner, then the last `H` of the piece
/// above.
///
/// ```
/// # use apps::sw::edges::{unpack_cols, Packed, Width};
/// let pieces = unpack_cols(&[9, 1, 3, 2, 4], [0..1, 1..2]);
/// assert_eq!((pieces[0].corner, pieces[1].corner), (9, 1));
/// assert_eq!((pieces[1].h.as_slice(), pieces[1].e.as_slice()), (&[3][..], &[4][..]));
/// let words = Width::Wide.encode(&[9, 1, 3, 2, 4]);
/// assert_eq!(unpack_cols(Packed::words(Width::Wide, &words), [0..1, 1..2]), pieces);
/// ```
///
/// # Panics
/// If the edge has no values or an even number of them, or `cuts` do not
/// cover it exactly.
pub fn unpack_cols<'a>(
    packed: impl Into<Packed<'a>>,
    cuts: impl IntoIterator<Item = Range<usize>>,
) -> Vec<EdgeCol> {
    let packed = packed.into();
    let values = packed.count();
    assert!(values > 0, "a packed column edge must have a corner");
    assert!(
        !values.is_multiple_of(2),
        "a packed column edge must have an odd length"
    );
    // `[corner, h.., e..]`: `h` from 1, `e` from `1 + rows`.
    let rows = values / 2;
    cut(rows, cuts, |range| EdgeCol {
        corner: packed.value(range.start),
        h: packed.values(1 + range.start..1 + range.end),
        e: packed.values(1 + rows + range.start..1 + rows + range.end),
    })
}

/// One column edge as [`pack_cols`] packs it.
pub fn pack_col(col: &EdgeCol) -> Vec<i32> {
    pack_cols(std::slice::from_ref(col))
}

/// Inverse of [`pack_col`].
///
/// # Panics
/// As [`unpack_cols`].
pub fn unpack_col(flat: &[i32]) -> EdgeCol {
    let rows = flat.len().saturating_sub(1) / 2;
    let mut pieces = unpack_cols(flat, iter::once(0..rows));
    pieces.pop().expect("one piece")
}

/// How an edge's values travel between ranks: one 16-bit word each where
/// no value of the edge can exceed `u16::MAX`, else two (the low half,
/// then the high half).
///
/// Every value of an edge is an `H` or a gap state clamped at 0, so at
/// least 0, and a local alignment ending in the first `r` rows and `c`
/// columns scores at most `max_gain * min(r, c)` (a gap state is at most
/// the `H` it left). Both ranks of an edge know that bound before its
/// values exist, so the width, and with it the message's length (the
/// DDDF's size), needs no word of its own. Narrow, an edge of 1024 rows
/// travels as 4 KB instead of 8: fewer pages of the transport's buffers
/// to copy into and, on a job's first messages, to fault in.
///
/// ```
/// # use apps::sw::edges::Width;
/// let width = Width::of_edge(2, 20_000, 4_000);
/// assert_eq!(width, Width::Narrow);
/// assert_eq!(width.decode(&width.encode(&[0, 7, 8000])), [0, 7, 8000]);
/// assert_eq!(Width::of_edge(2, 40_000, 40_000), Width::Wide);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// One word a value.
    Narrow,
    /// Two words a value.
    Wide,
}

impl Width {
    /// The width of an edge whose cells lie in the first `rows` rows and
    /// the first `cols` columns of a matrix scored with
    /// [`max_gain`](crate::sw::Scoring::max_gain) `max_gain`.
    ///
    /// ```
    /// # use apps::sw::edges::Width;
    /// assert_eq!(Width::of_edge(65535, 1, 9), Width::Narrow);
    /// assert_eq!(Width::of_edge(65536, 1, 9), Width::Wide);
    /// assert_eq!(Width::of_edge(3, 21845, 21846), Width::Narrow);
    /// assert_eq!(Width::of_edge(3, 21846, 21846), Width::Wide);
    /// ```
    pub fn of_edge(max_gain: i32, rows: usize, cols: usize) -> Width {
        let gain = u128::from(max_gain.max(0).unsigned_abs());
        let steps = rows.min(cols) as u128;
        if gain * steps <= u128::from(u16::MAX) {
            Width::Narrow
        } else {
            Width::Wide
        }
    }

    /// Words of `values` values.
    ///
    /// ```
    /// # use apps::sw::edges::Width;
    /// assert_eq!((Width::Narrow.words(3), Width::Wide.words(3)), (3, 6));
    /// ```
    pub fn words(self, values: usize) -> usize {
        match self {
            Width::Narrow => values,
            Width::Wide => 2 * values,
        }
    }

    /// `values` as this width's words.
    ///
    /// ```
    /// # use apps::sw::edges::Width;
    /// assert_eq!(Width::Wide.encode(&[0x0001_0002, -1]), [2, 1, 0xffff, 0xffff]);
    /// ```
    ///
    /// # Panics
    /// Narrow, if a value is outside `0..=u16::MAX`: the bound of
    /// [`of_edge`](Self::of_edge) excludes it, so the edge was not the one
    /// the width was chosen for.
    pub fn encode(self, values: &[i32]) -> Vec<u16> {
        self.encode_parts(iter::once(values))
    }

    /// The values of `parts`, one after the other, as this width's words,
    /// in one allocation and one pass over the values.
    ///
    /// ```
    /// # use apps::sw::edges::Width;
    /// assert_eq!(Width::Narrow.encode_parts([&[1, 2][..], &[3]].into_iter()), [1, 2, 3]);
    /// ```
    ///
    /// # Panics
    /// As [`encode`](Self::encode).
    pub fn encode_parts<'a>(self, parts: impl Iterator<Item = &'a [i32]> + Clone) -> Vec<u16> {
        let values = parts.clone().map(<[i32]>::len).sum();
        let mut words = Vec::with_capacity(self.words(values));
        for part in parts {
            match self {
                Width::Narrow => {
                    // Any bit above the low 16 (a sign bit too) marks a
                    // value that does not fit; checked once per part.
                    let mut high = 0;
                    words.extend(part.iter().map(|&v| {
                        high |= v as u32 >> 16;
                        v as u16
                    }));
                    if high != 0 {
                        let v = part.iter().find(|&&v| u16::try_from(v).is_err());
                        panic!(
                            "edge value {} does not fit the 16 bits its width allows",
                            v.expect("a value has high bits")
                        );
                    }
                }
                Width::Wide => words.extend(part.iter().flat_map(|&v| {
                    let bits = v as u32;
                    [bits as u16, (bits >> 16) as u16]
                })),
            }
        }
        words
    }

    /// The values `words` encode (see [`encode`](Self::encode)).
    ///
    /// ```
    /// # use apps::sw::edges::Width;
    /// assert_eq!(Width::Wide.decode(&[2, 1, 0xffff, 0xffff]), [0x0001_0002, -1]);
    /// assert_eq!(Width::Narrow.decode(&[65535]), [65535]);
    /// ```
    ///
    /// # Panics
    /// Wide, if `words` has an odd length.
    pub fn decode(self, words: &[u16]) -> Vec<i32> {
        let packed = Packed::words(self, words);
        packed.values(0..packed.count())
    }
}

/// A packed edge ([`pack_rows`], [`pack_cols`]) as [`unpack_rows`] and
/// [`unpack_cols`] read it: its values, or the words of a [`Width`] they
/// arrived in, which those read straight into the pieces, each value
/// converted once.
///
/// ```
/// # use apps::sw::edges::{Packed, Width};
/// let words = Width::Wide.encode(&[7, 70_000, 9]);
/// let packed = Packed::words(Width::Wide, &words);
/// assert_eq!((packed.count(), packed.value(1), packed.values(1..3)), (3, 70_000, vec![70_000, 9]));
/// assert_eq!(Packed::from(&[7, 70_000, 9]).values(0..2), [7, 70_000]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Packed<'a>(Repr<'a>);

/// What a [`Packed`] reads, checked when it was made.
#[derive(Clone, Copy, Debug)]
enum Repr<'a> {
    /// The values themselves.
    Values(&'a [i32]),
    /// The values as words of a width ([`Width::encode`]).
    Words(Width, &'a [u16]),
}

impl<'a> Packed<'a> {
    /// `words` of `width`.
    ///
    /// # Panics
    /// Wide, if `words` has an odd length.
    pub fn words(width: Width, words: &'a [u16]) -> Self {
        assert!(
            width == Width::Narrow || words.len().is_multiple_of(2),
            "a wide edge has two words a value, not {} words",
            words.len()
        );
        Packed(Repr::Words(width, words))
    }

    /// Number of values.
    pub fn count(self) -> usize {
        match self.0 {
            Repr::Values(values) => values.len(),
            Repr::Words(Width::Narrow, words) => words.len(),
            Repr::Words(Width::Wide, words) => words.len() / 2,
        }
    }

    /// The value at `index`.
    ///
    /// # Panics
    /// If `index` is not below [`count`](Self::count).
    pub fn value(self, index: usize) -> i32 {
        match self.0 {
            Repr::Values(values) => values[index],
            Repr::Words(Width::Narrow, words) => i32::from(words[index]),
            Repr::Words(Width::Wide, words) => joined(words[2 * index], words[2 * index + 1]),
        }
    }

    /// The values at `range`.
    ///
    /// # Panics
    /// If `range` does not lie within [`count`](Self::count).
    pub fn values(self, range: Range<usize>) -> Vec<i32> {
        match self.0 {
            Repr::Values(values) => values[range].to_vec(),
            Repr::Words(Width::Narrow, words) => {
                words[range].iter().map(|&w| i32::from(w)).collect()
            }
            Repr::Words(Width::Wide, words) => words[2 * range.start..2 * range.end]
                .chunks_exact(2)
                .map(|pair| joined(pair[0], pair[1]))
                .collect(),
        }
    }
}

/// The value of a wide edge's two words, low half first.
fn joined(low: u16, high: u16) -> i32 {
    (u32::from(low) | (u32::from(high) << 16)) as i32
}

impl<'a> From<&'a [i32]> for Packed<'a> {
    fn from(values: &'a [i32]) -> Self {
        Packed(Repr::Values(values))
    }
}

impl<'a> From<&'a Vec<i32>> for Packed<'a> {
    fn from(values: &'a Vec<i32>) -> Self {
        Packed(Repr::Values(values))
    }
}

impl<'a, const N: usize> From<&'a [i32; N]> for Packed<'a> {
    fn from(values: &'a [i32; N]) -> Self {
        Packed(Repr::Values(values))
    }
}

/// `parts` one after the other, allocated once.
fn concat<'a>(parts: impl Iterator<Item = &'a [i32]> + Clone) -> Vec<i32> {
    let mut all = Vec::with_capacity(parts.clone().map(<[i32]>::len).sum());
    for part in parts {
        all.extend_from_slice(part);
    }
    all
}

/// `piece` of each range of `cuts`, checked to cover `0..len` in order.
fn cut<T>(
    len: usize,
    cuts: impl IntoIterator<Item = Range<usize>>,
    mut piece: impl FnMut(Range<usize>) -> T,
) -> Vec<T> {
    let mut end = 0;
    let pieces = cuts
        .into_iter()
        .map(|range| {
            assert!(
                range.start == end && range.start <= range.end && range.end <= len,
                "edge piece {range:?} must start at {end} and end by {len}"
            );
            end = range.end;
            piece(range)
        })
        .collect();
    assert_eq!(end, len, "edge pieces end at {end}, the edge at {len}");
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(h: &[i32], f: &[i32]) -> EdgeRow {
        EdgeRow {
            h: h.to_vec(),
            f: f.to_vec(),
        }
    }

    fn col(corner: i32, h: &[i32], e: &[i32]) -> EdgeCol {
        EdgeCol {
            corner,
            h: h.to_vec(),
            e: e.to_vec(),
        }
    }

    #[test]
    fn rows_cut_anywhere_unpack_as_packed() {
        let written = [row(&[1, 2], &[-1, -2]), row(&[3, 4, 5], &[-3, -4, -5])];
        let flat = pack_rows(&written);
        assert_eq!(flat, [1, 2, 3, 4, 5, -1, -2, -3, -4, -5]);
        assert_eq!(unpack_rows(&flat, [0..2, 2..5]), written);
        let read = unpack_rows(&flat, [0..1, 1..4, 4..5]);
        assert_eq!(
            read,
            [
                row(&[1], &[-1]),
                row(&[2, 3, 4], &[-2, -3, -4]),
                row(&[5], &[-5])
            ]
        );
    }

    #[test]
    fn columns_cut_anywhere_keep_their_corners() {
        // A column above rows 0..4 under corner 9, written in two pieces
        // whose corners are the H above each.
        let written = [col(9, &[1, 2], &[-1, -2]), col(2, &[3, 4], &[-3, -4])];
        let flat = pack_cols(&written);
        assert_eq!(flat, [9, 1, 2, 3, 4, -1, -2, -3, -4]);
        assert_eq!(unpack_cols(&flat, [0..2, 2..4]), written);
        let read = unpack_cols(&flat, [0..3, 3..4]);
        assert_eq!(
            read,
            [col(9, &[1, 2, 3], &[-1, -2, -3]), col(3, &[4], &[-4])]
        );
        assert_eq!(unpack_col(&pack_col(&read[0])), read[0]);
    }

    #[test]
    fn both_widths_carry_their_values_exactly() {
        let narrow = [0, 1, 255, 256, 32767, 32768, 65535];
        assert_eq!(Width::Narrow.decode(&Width::Narrow.encode(&narrow)), narrow);
        let wide = [0, 65535, 65536, 1 << 30, i32::MAX, -1, i32::MIN];
        assert_eq!(Width::Wide.decode(&Width::Wide.encode(&wide)), wide);
        let edge = pack_cols(&[col(70_000, &[65_536, 3], &[0, 99_999])]);
        let words = Width::Wide.encode(&edge);
        assert_eq!(words.len(), Width::Wide.words(edge.len()));
        assert_eq!(
            unpack_col(&Width::Wide.decode(&words)),
            col(70_000, &[65_536, 3], &[0, 99_999])
        );
    }

    #[test]
    fn pieces_encode_as_their_packed_edge() {
        let rows = [row(&[1, 65_535], &[0, 7]), row(&[9], &[65_534])];
        let cols = [col(4, &[5, 6], &[0, 1]), col(6, &[65_535], &[2])];
        for width in [Width::Narrow, Width::Wide] {
            let words = width.encode_parts(row_parts(&rows));
            assert_eq!(words, width.encode(&pack_rows(&rows)));
            assert_eq!(
                words.capacity(),
                words.len(),
                "one allocation, of the right size"
            );
            let words = width.encode_parts(col_parts(&cols));
            assert_eq!(words, width.encode(&pack_cols(&cols)));
        }
    }

    #[test]
    fn words_unpack_into_the_pieces_their_values_would() {
        const CUTS: [&[Range<usize>]; 3] = [&[0..2, 2..3], &[0..1, 1..3], &[0..3, 3..3]];
        let rows = [row(&[1, 65_535], &[0, 7]), row(&[9], &[65_534])];
        let cols = [col(4, &[5, 6], &[0, 1]), col(6, &[65_535], &[2])];
        let (flat_rows, flat_cols) = (pack_rows(&rows), pack_cols(&cols));
        for width in [Width::Narrow, Width::Wide] {
            let row_words = width.encode_parts(row_parts(&rows));
            let col_words = width.encode_parts(col_parts(&cols));
            for cuts in CUTS {
                let cuts = || cuts.iter().cloned();
                let (read_rows, read_cols) = (
                    unpack_rows(Packed::words(width, &row_words), cuts()),
                    unpack_cols(Packed::words(width, &col_words), cuts()),
                );
                assert_eq!(read_rows, unpack_rows(&flat_rows, cuts()), "{width:?}");
                assert_eq!(read_cols, unpack_cols(&flat_cols, cuts()), "{width:?}");
            }
        }
        let wide = [70_000, -1, i32::MIN, i32::MAX, 0];
        let words = Width::Wide.encode(&wide);
        let read = unpack_cols(Packed::words(Width::Wide, &words), [0..1, 1..2]);
        assert_eq!(
            read,
            [col(70_000, &[-1], &[i32::MAX]), col(-1, &[i32::MIN], &[0])]
        );
    }

    #[test]
    #[should_panic(expected = "a packed row edge must have an even length")]
    fn a_row_edge_of_odd_length_is_refused() {
        unpack_rows(Packed::words(Width::Narrow, &[1, 2, 3]), iter::once(0..1));
    }

    #[test]
    #[should_panic(expected = "a packed column edge must have a corner")]
    fn a_column_edge_without_a_corner_is_refused() {
        unpack_cols(Packed::words(Width::Wide, &[]), iter::empty());
    }

    #[test]
    #[should_panic(expected = "a packed column edge must have an odd length")]
    fn a_column_edge_of_even_length_is_refused() {
        unpack_cols(
            Packed::words(Width::Narrow, &[9, 1, 2, 3]),
            iter::once(0..1),
        );
    }

    #[test]
    #[should_panic(expected = "a wide edge has two words a value, not 3 words")]
    fn a_wide_edge_of_odd_words_is_refused() {
        Packed::words(Width::Wide, &[1, 0, 2]);
    }

    #[test]
    #[should_panic(expected = "edge value 65536 does not fit the 16 bits its width allows")]
    fn a_narrow_edge_refuses_a_wider_value_in_any_piece() {
        Width::Narrow.encode_parts(row_parts(&[row(&[1], &[2]), row(&[3], &[65_536])]));
    }

    #[test]
    #[should_panic(expected = "edge value 65536 does not fit the 16 bits its width allows")]
    fn a_narrow_edge_refuses_a_wider_value() {
        Width::Narrow.encode(&[3, 65536]);
    }

    #[test]
    #[should_panic(expected = "edge value -1 does not fit the 16 bits its width allows")]
    fn a_narrow_edge_refuses_a_negative_value() {
        Width::Narrow.encode(&[-1]);
    }

    #[test]
    fn the_width_follows_the_bound_of_the_edges_last_cell() {
        // 2 a match: past 32767 rows and columns, H may pass 65535.
        assert_eq!(Width::of_edge(2, 32767, 100_000), Width::Narrow);
        assert_eq!(Width::of_edge(2, 32768, 32768), Width::Wide);
        assert_eq!(Width::of_edge(0, usize::MAX, usize::MAX), Width::Narrow);
        assert_eq!(Width::of_edge(-4, 10, 10), Width::Narrow);
        assert_eq!(
            Width::of_edge(i32::MAX, usize::MAX, usize::MAX),
            Width::Wide
        );
    }

    #[test]
    #[should_panic(expected = "edge piece 2..1 must start at 2 and end by 3")]
    fn reversed_cuts_are_refused() {
        unpack_rows(&[1, 2, 3, 4, 5, 6], [0..2, Range { start: 2, end: 1 }]);
    }

    #[test]
    #[should_panic(expected = "edge pieces end at 2, the edge at 3")]
    fn cuts_short_of_the_edge_are_refused() {
        unpack_rows(&[1, 2, 3, 4, 5, 6], iter::once(0..2));
    }

    #[test]
    #[should_panic(expected = "edge piece 0..2 must start at 1 and end by 2")]
    fn overlapping_cuts_are_refused() {
        unpack_cols(&[0, 1, 2, 3, 4], [0..1, 0..2]);
    }

    #[test]
    #[should_panic(expected = "the corner of column piece 1 is not the last H above it")]
    fn a_later_corner_the_packing_would_lose_is_refused() {
        let upper = EdgeCol {
            corner: 9,
            h: vec![1],
            e: vec![2],
        };
        let lower = EdgeCol {
            corner: 5,
            h: vec![3],
            e: vec![4],
        };
        pack_cols(&[upper, lower]);
    }
}
