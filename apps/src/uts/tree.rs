//! Tree parameters and the rules that give each node its number of children.
//!
//! The arithmetic follows the public UTS reference (`uts.c`) operation by
//! operation in `f64` (the reference uses `double`), calling the same libm
//! functions (`log`, `pow`, `sin`), so that trees match node for node.

use std::f64::consts::PI;
use std::fmt;

use crate::uts::error::UtsError;
use crate::uts::rng::{self, RngState, Spawner};

/// The reference's `MAXNUMCHILDREN`: cap on the children of any node other
/// than a binomial root (and balanced-tree nodes).
pub const MAX_NUM_CHILDREN: i32 = 100;

/// Tree type (`-t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeType {
    /// 0: root has `floor(b0)` children; every other node has `m` children
    /// with probability `q`, else none.
    Binomial = 0,
    /// 1: geometric number of children with expected value given by the shape.
    Geometric = 1,
    /// 2: geometric while `depth < f * gen_mx`, binomial below.
    Hybrid = 2,
    /// 3: every node above depth `gen_mx` has `(int) b0` children.
    Balanced = 3,
}

impl TreeType {
    /// From the reference's numeric code.
    pub fn from_code(code: i64) -> Result<Self, UtsError> {
        match code {
            0 => Ok(TreeType::Binomial),
            1 => Ok(TreeType::Geometric),
            2 => Ok(TreeType::Hybrid),
            3 => Ok(TreeType::Balanced),
            _ => Err(UtsError::UnknownTreeType(code)),
        }
    }

    /// The reference's numeric code.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The reference's display name.
    pub fn name(self) -> &'static str {
        match self {
            TreeType::Binomial => "Binomial",
            TreeType::Geometric => "Geometric",
            TreeType::Hybrid => "Hybrid",
            TreeType::Balanced => "Balanced",
        }
    }
}

/// Shape function of geometric trees (`-a`): target branching factor by depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeoShape {
    /// 0: `b = b0 * (1 - d / gen_mx)`.
    Linear = 0,
    /// 1: `b = b0 * d^(-ln b0 / ln gen_mx)`.
    ExpDec = 1,
    /// 2: `b = b0^sin(2 pi d / gen_mx)`, 0 beyond depth `5 * gen_mx`.
    Cyclic = 2,
    /// 3: `b = b0` while `d < gen_mx`, else 0.
    Fixed = 3,
}

impl GeoShape {
    /// From the reference's numeric code.
    pub fn from_code(code: i64) -> Result<Self, UtsError> {
        match code {
            0 => Ok(GeoShape::Linear),
            1 => Ok(GeoShape::ExpDec),
            2 => Ok(GeoShape::Cyclic),
            3 => Ok(GeoShape::Fixed),
            _ => Err(UtsError::UnknownShape(code)),
        }
    }

    /// The reference's numeric code.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The reference's display name.
    pub fn name(self) -> &'static str {
        match self {
            GeoShape::Linear => "Linear decrease",
            GeoShape::ExpDec => "Exponential decrease",
            GeoShape::Cyclic => "Cyclic",
            GeoShape::Fixed => "Fixed branching factor",
        }
    }
}

/// All tree-generation parameters, named after the reference's flags.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeParams {
    /// `-t` tree type.
    pub tree_type: TreeType,
    /// `-a` geometric shape function.
    pub shape: GeoShape,
    /// `-d` depth parameter `gen_mx` (geometric and balanced trees).
    pub gen_mx: i32,
    /// `-b` root branching factor `b_0`.
    pub b0: f64,
    /// `-r` root seed.
    pub root_seed: i32,
    /// `-m` children of a binomial non-leaf node.
    pub m: i32,
    /// `-q` probability that a binomial node is a non-leaf.
    pub q: f64,
    /// `-f` hybrid trees: fraction of `gen_mx` where GEO turns into BIN.
    pub shift_depth: f64,
    /// `-g` compute granularity: SHA-1 evaluations per child.
    pub granularity: u32,
}

impl TreeParams {
    /// The reference's defaults (`uts` with no flags: 1732 nodes, 1050 leaves).
    pub const DEFAULT: TreeParams = TreeParams {
        tree_type: TreeType::Geometric,
        shape: GeoShape::Linear,
        gen_mx: 6,
        b0: 4.0,
        root_seed: 0,
        m: 4,
        q: 15.0 / 64.0,
        shift_depth: 0.5,
        granularity: 1,
    };

    /// Check every parameter; the error names the offending flag.
    pub fn validate(&self) -> Result<(), UtsError> {
        fn bad(
            flag: &'static str,
            what: &'static str,
            value: impl fmt::Display,
            expected: &'static str,
        ) -> Result<(), UtsError> {
            Err(UtsError::InvalidParam {
                flag,
                what,
                value: value.to_string(),
                expected,
            })
        }
        if !self.b0.is_finite() || self.b0 < 0.0 {
            return bad(
                "-b",
                "root branching factor",
                self.b0,
                "a finite number >= 0",
            );
        }
        if !(0.0..=1.0).contains(&self.q) {
            return bad(
                "-q",
                "probability of a non-leaf node",
                self.q,
                "a number in [0, 1]",
            );
        }
        if self.m < 0 {
            return bad(
                "-m",
                "children of a non-leaf node",
                self.m,
                "an integer >= 0",
            );
        }
        if !self.shift_depth.is_finite() || self.shift_depth < 0.0 {
            return bad(
                "-f",
                "hybrid shift depth fraction",
                self.shift_depth,
                "a finite number >= 0",
            );
        }
        if self.granularity < 1 {
            return bad(
                "-g",
                "compute granularity",
                self.granularity,
                "an integer >= 1",
            );
        }
        if self.gen_mx < 0 {
            return bad("-d", "tree depth gen_mx", self.gen_mx, "an integer >= 0");
        }
        let geometric = matches!(self.tree_type, TreeType::Geometric | TreeType::Hybrid);
        if geometric && self.shape != GeoShape::Fixed && self.gen_mx == 0 {
            // linear and cyclic divide by gen_mx, expdec takes its logarithm
            return bad(
                "-d",
                "tree depth gen_mx",
                self.gen_mx,
                "an integer >= 1 for the linear, expdec and cyclic shapes",
            );
        }
        Ok(())
    }

    /// The parameters as reference flags, e.g. `-t 1 -a 3 -d 10 -b 4 -r 19`
    /// (only the flags that matter for the tree type, plus non-default `-g`).
    pub fn to_args(&self) -> String {
        let mut s = format!("-t {}", self.tree_type.code());
        if matches!(self.tree_type, TreeType::Geometric | TreeType::Hybrid) {
            s += &format!(" -a {}", self.shape.code());
        }
        if self.tree_type != TreeType::Binomial {
            s += &format!(" -d {}", self.gen_mx);
        }
        s += &format!(" -b {} -r {}", self.b0, self.root_seed);
        if matches!(self.tree_type, TreeType::Binomial | TreeType::Hybrid) {
            s += &format!(" -q {} -m {}", self.q, self.m);
        }
        if self.tree_type == TreeType::Hybrid {
            s += &format!(" -f {}", self.shift_depth);
        }
        if self.granularity != 1 {
            s += &format!(" -g {}", self.granularity);
        }
        s
    }
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams::DEFAULT
    }
}

/// One tree node: its RNG state and its height (depth; the root is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// SHA-1 RNG state.
    pub state: RngState,
    /// Depth below the root.
    pub height: u32,
}

/// C's `(int) x` as x86-64 computes it (`cvttsd2si`): truncation toward zero,
/// and `INT_MIN` for NaN and for values outside the `int` range (undefined
/// behaviour in C, but this is what the reference binary does).
#[inline(always)]
pub fn c_int(x: f64) -> i32 {
    if x > -2_147_483_649.0 && x < 2_147_483_648.0 {
        x as i32
    } else {
        i32::MIN
    }
}

/// Depth-table size cap: deeper geometric levels are computed on the fly.
const GEO_TABLE_MAX: usize = 1 << 16;

/// Depths that get a threshold table (see [`Tree::new`]).
const GEO_THRESH_DEPTHS: usize = 1 << 10;

/// Entries of one threshold table: [`MAX_NUM_CHILDREN`] rounded up to a
/// multiple of 8 so that counting vectorizes; the padding never counts.
const THRESH_LEN: usize = 104;

/// Threshold-table entry that no random value passes.
const NEVER: i32 = i32::MAX;

/// The reference's geometric child count for random value `r` at a level
/// whose `ln(1 - p)` is `ln_1mp`: `(int) floor(log(1 - u) / log(1 - p))`.
#[inline(always)]
fn geo_count(r: u32, ln_1mp: f64) -> i32 {
    let u = rng::to_prob(r);
    c_int(((1.0 - u).ln() / ln_1mp).floor())
}

/// Exact threshold table of one geometric level, if the level allows one.
///
/// `geo_count(r)` is non-decreasing in `r`: `1 - u` is exact and decreases
/// by at least 2^-31 per step, far more than the error of `log` (< 1 ulp),
/// and dividing by the negative constant `ln(1 - p)` and flooring keep the
/// order. So `min(geo_count(r), 100)` equals the number of `k` in 1..=100 with
/// `t_k <= r`, `t_k` being the least `r` with `geo_count(r) >= k`; the table
/// stores `t_k - 1` (so the count is `#{ s < r }`), found by binary search
/// over the very same `geo_count`. Levels where the C cast could leave the
/// `int` range (huge branching factors) or `ln(1 - p)` is 0 or NaN get no
/// table and use `geo_count` directly.
fn threshold_table(ln_1mp: f64) -> Option<[i32; THRESH_LEN]> {
    const R_MAX: u32 = rng::POS_MASK;
    if ln_1mp.is_nan() || ln_1mp >= 0.0 {
        return None;
    }
    let top = geo_count(R_MAX, ln_1mp);
    if top < 0 || geo_count(0, ln_1mp) != 0 {
        return None;
    }
    let mut table = [NEVER; THRESH_LEN];
    let mut lo = 1u32; // geo_count(0) == 0, so every t_k >= 1
    for (slot, k) in table.iter_mut().zip(1..=MAX_NUM_CHILDREN.min(top)) {
        // least r in [lo, R_MAX] with geo_count(r) >= k (exists: k <= top)
        let mut hi = R_MAX;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if geo_count(mid, ln_1mp) >= k {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        *slot = (lo - 1) as i32;
    }
    Some(table)
}

/// A validated tree description, with per-depth constants precomputed.
#[derive(Debug, Clone)]
pub struct Tree {
    params: TreeParams,
    /// `ln(1 - p)` with `p = 1 / (1 + b(depth))`, for small depths.
    geo_ln_1mp: Vec<f64>,
    /// Threshold tables of depths `0..geo_thresh.len()` (see
    /// [`threshold_table`]): the child count without `log` and `floor`.
    geo_thresh: Vec<[i32; THRESH_LEN]>,
    /// `f * gen_mx` (hybrid trees).
    shift_limit: f64,
    /// `(int) ceil(b0)` (binomial root cap).
    root_bf_cap: i32,
}

impl Tree {
    /// Validate `params` and precompute what the generator needs.
    pub fn new(params: TreeParams) -> Result<Self, UtsError> {
        params.validate()?;
        let mut tree = Tree {
            params,
            geo_ln_1mp: Vec::new(),
            geo_thresh: Vec::new(),
            shift_limit: params.shift_depth * f64::from(params.gen_mx),
            root_bf_cap: c_int(params.b0.ceil()),
        };
        if matches!(params.tree_type, TreeType::Geometric | TreeType::Hybrid) {
            let g = params.gen_mx.max(0) as usize;
            let needed = match params.shape {
                // beyond these depths the target branching factor is 0
                GeoShape::Linear | GeoShape::Fixed => g + 2,
                GeoShape::Cyclic => 5 * g + 2,
                GeoShape::ExpDec => GEO_TABLE_MAX,
            };
            let len = needed.min(GEO_TABLE_MAX);
            tree.geo_ln_1mp = (0..len as u32).map(|d| tree.compute_ln_1mp(d)).collect();
            // hybrid trees use geometric levels only above f * gen_mx
            let geo_levels = if params.tree_type == TreeType::Hybrid {
                tree.shift_limit.ceil().clamp(0.0, len as f64) as usize
            } else {
                len
            };
            tree.geo_thresh = tree.geo_ln_1mp[..geo_levels.min(GEO_THRESH_DEPTHS)]
                .iter()
                .map_while(|&l| threshold_table(l))
                .collect();
        }
        Ok(tree)
    }

    /// The parameters this tree was built from.
    pub fn params(&self) -> &TreeParams {
        &self.params
    }

    /// The root node.
    pub fn root(&self) -> Node {
        Node {
            state: rng::init(self.params.root_seed),
            height: 0,
        }
    }

    /// Target branching factor `b_i` of a geometric node at `depth`
    /// (the root, depth 0, always uses `b0`).
    pub fn geo_branching(&self, depth: u32) -> f64 {
        let p = &self.params;
        let b0 = p.b0;
        if depth == 0 {
            return b0;
        }
        let d = f64::from(depth);
        let g = f64::from(p.gen_mx);
        match p.shape {
            GeoShape::ExpDec => b0 * d.powf(-b0.ln() / g.ln()),
            GeoShape::Cyclic => {
                if i64::from(depth) > 5 * i64::from(p.gen_mx) {
                    0.0
                } else {
                    b0.powf((2.0 * PI * d / g).sin())
                }
            }
            GeoShape::Fixed => {
                if i64::from(depth) < i64::from(p.gen_mx) {
                    b0
                } else {
                    0.0
                }
            }
            GeoShape::Linear => b0 * (1.0 - d / g),
        }
    }

    fn compute_ln_1mp(&self, depth: u32) -> f64 {
        let p = 1.0 / (1.0 + self.geo_branching(depth));
        (1.0 - p).ln()
    }

    #[inline(always)]
    fn ln_1mp(&self, depth: u32) -> f64 {
        match self.geo_ln_1mp.get(depth as usize) {
            Some(&v) => v,
            None => self.compute_ln_1mp(depth),
        }
    }

    /// The reference's `uts_numChildren_geo` (before capping).
    #[inline(always)]
    fn geo_children(&self, node: &Node) -> i32 {
        let r = rng::rand(&node.state);
        match self.geo_thresh.get(node.height as usize) {
            Some(table) => {
                // r < 2^31, so it fits an i32; the count is already <= 100
                let r = r as i32;
                if table[0] >= r {
                    // the common leaf case: below the first threshold
                    return 0;
                }
                table.iter().map(|&s| i32::from(s < r)).sum()
            }
            None => geo_count(r, self.ln_1mp(node.height)),
        }
    }

    /// The reference's `uts_numChildren_bin`.
    #[inline(always)]
    fn bin_children(&self, node: &Node) -> i32 {
        if rng::to_prob(rng::rand(&node.state)) < self.params.q {
            self.params.m
        } else {
            0
        }
    }

    /// Number of children of `node` (the reference's `uts_numChildren`,
    /// with its caps; 0 for a leaf).
    #[inline]
    pub fn num_children(&self, node: &Node) -> u32 {
        let p = &self.params;
        let h = node.height;
        let n = match p.tree_type {
            TreeType::Binomial => {
                if h == 0 {
                    c_int(p.b0.floor()).min(self.root_bf_cap)
                } else {
                    self.bin_children(node).min(MAX_NUM_CHILDREN)
                }
            }
            TreeType::Geometric => self.geo_children(node).min(MAX_NUM_CHILDREN),
            TreeType::Hybrid => {
                if f64::from(h) < self.shift_limit {
                    self.geo_children(node).min(MAX_NUM_CHILDREN)
                } else {
                    self.bin_children(node).min(MAX_NUM_CHILDREN)
                }
            }
            TreeType::Balanced => {
                if i64::from(h) < i64::from(p.gen_mx) {
                    c_int(p.b0)
                } else {
                    0
                }
            }
        };
        n.max(0) as u32
    }

    /// Child number `index` of `parent`.
    pub fn child(&self, parent: &Node, index: u32) -> Node {
        Node {
            state: Spawner::new(&parent.state)
                .spawn_with_granularity(index, self.params.granularity),
            height: parent.height + 1,
        }
    }

    /// Append all children of `parent` to `out`; returns how many.
    pub fn children_into(&self, parent: &Node, out: &mut Vec<Node>) -> u32 {
        let n = self.num_children(parent);
        if n > 0 {
            out.reserve(n as usize);
            let mut sp = Spawner::new(&parent.state);
            let g = self.params.granularity;
            out.extend((0..n).map(|i| Node {
                state: sp.spawn_with_granularity(i, g),
                height: parent.height + 1,
            }));
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_int_emulates_cvttsd2si() {
        assert_eq!(c_int(3.9), 3);
        assert_eq!(c_int(-0.0), 0);
        assert_eq!(c_int(-3.9), -3);
        assert_eq!(c_int(f64::NAN), i32::MIN);
        assert_eq!(c_int(f64::INFINITY), i32::MIN);
        assert_eq!(c_int(f64::NEG_INFINITY), i32::MIN);
        assert_eq!(c_int(3e9), i32::MIN);
        assert_eq!(c_int(2_147_483_647.5), i32::MAX);
    }

    #[test]
    fn default_root_has_geometric_children() {
        let t = Tree::new(TreeParams::DEFAULT).unwrap();
        let root = t.root();
        let mut kids = Vec::new();
        let n = t.children_into(&root, &mut kids);
        assert_eq!(n as usize, kids.len());
        for (i, k) in kids.iter().enumerate() {
            assert_eq!(*k, t.child(&root, i as u32));
            assert_eq!(k.height, 1);
        }
    }

    /// The threshold tables agree with the direct formula around every
    /// threshold and on a spread of other random values.
    #[test]
    fn threshold_tables_match_formula() {
        let shapes = [
            GeoShape::Linear,
            GeoShape::ExpDec,
            GeoShape::Cyclic,
            GeoShape::Fixed,
        ];
        for (shape, d, b0) in [
            (shapes[0], 20, 4.0),
            (shapes[1], 8, 3.0),
            (shapes[1], 5, 0.7),
            (shapes[2], 16, 6.0),
            (shapes[3], 10, 4.0),
            (shapes[3], 4, 150.0),
            (shapes[3], 4, 0.01),
        ] {
            let t = Tree::new(TreeParams {
                shape,
                gen_mx: d,
                b0,
                ..TreeParams::DEFAULT
            })
            .unwrap();
            assert!(!t.geo_thresh.is_empty());
            for (h, table) in t.geo_thresh.iter().enumerate() {
                let l = t.ln_1mp(h as u32);
                let mut probes: Vec<u32> = vec![0, 1, 2, rng::POS_MASK - 1, rng::POS_MASK];
                for &s in table.iter().filter(|&&s| s != NEVER) {
                    let s = s as i64;
                    for r in s - 2..=s + 3 {
                        if (0..=rng::POS_MASK as i64).contains(&r) {
                            probes.push(r as u32);
                        }
                    }
                }
                probes.extend((0..2000u32).map(|i| i.wrapping_mul(1_073_741_789) & rng::POS_MASK));
                for r in probes {
                    let mut state = [0u8; 20];
                    state[16..20].copy_from_slice(&r.to_be_bytes());
                    let node = Node {
                        state,
                        height: h as u32,
                    };
                    let want = geo_count(r, l).min(MAX_NUM_CHILDREN);
                    assert_eq!(
                        t.geo_children(&node),
                        want,
                        "{shape:?} d={d} b0={b0} h={h} r={r}"
                    );
                }
            }
        }
    }

    #[test]
    fn validation() {
        let ok = TreeParams::DEFAULT;
        assert!(ok.validate().is_ok());
        assert!(TreeParams { b0: -1.0, ..ok }.validate().is_err());
        assert!(TreeParams { q: 1.5, ..ok }.validate().is_err());
        assert!(TreeParams { q: f64::NAN, ..ok }.validate().is_err());
        assert!(TreeParams { m: -2, ..ok }.validate().is_err());
        assert!(TreeParams { gen_mx: 0, ..ok }.validate().is_err());
        assert!(TreeParams {
            gen_mx: 0,
            shape: GeoShape::Fixed,
            ..ok
        }
        .validate()
        .is_ok());
        assert!(TreeParams {
            granularity: 0,
            ..ok
        }
        .validate()
        .is_err());
        assert!(TreeType::from_code(4).is_err());
        assert!(GeoShape::from_code(-1).is_err());
    }
}
