//! The standard sample trees of the UTS distribution (`sample_trees.sh`) with
//! the statistics published in its comments.

use crate::uts::error::UtsError;
use crate::uts::tree::{GeoShape, TreeParams, TreeType};

/// A named sample tree and its published statistics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleTree {
    /// Name as in `sample_trees.sh`, e.g. `T1L`.
    pub name: &'static str,
    /// Generation parameters.
    pub params: TreeParams,
    /// Published tree size (nodes).
    pub nodes: u64,
    /// Published number of leaves, where given.
    pub leaves: Option<u64>,
    /// Published tree depth, where given.
    pub depth: Option<u64>,
}

const fn geo(shape: GeoShape, d: i32, b: f64, r: i32) -> TreeParams {
    TreeParams {
        tree_type: TreeType::Geometric,
        shape,
        gen_mx: d,
        b0: b,
        root_seed: r,
        ..TreeParams::DEFAULT
    }
}

const fn bin(b: f64, q: f64, m: i32, r: i32) -> TreeParams {
    TreeParams {
        tree_type: TreeType::Binomial,
        b0: b,
        q,
        m,
        root_seed: r,
        ..TreeParams::DEFAULT
    }
}

const fn sample(
    name: &'static str,
    params: TreeParams,
    nodes: u64,
    leaves: Option<u64>,
    depth: Option<u64>,
) -> SampleTree {
    SampleTree {
        name,
        params,
        nodes,
        leaves,
        depth,
    }
}

/// All sample trees of `sample_trees.sh`, smallest workloads first.
pub const SAMPLE_TREES: &[SampleTree] = &[
    // Small (~4 million nodes)
    sample(
        "T1",
        geo(GeoShape::Fixed, 10, 4.0, 19),
        4_130_071,
        Some(3_305_118),
        Some(10),
    ),
    sample(
        "T5",
        geo(GeoShape::Linear, 20, 4.0, 34),
        4_147_582,
        Some(2_181_318),
        Some(20),
    ),
    sample(
        "T2",
        geo(GeoShape::Cyclic, 16, 6.0, 502),
        4_117_769,
        Some(2_342_762),
        Some(81),
    ),
    sample(
        "T3",
        bin(2000.0, 0.124875, 8, 42),
        4_112_897,
        Some(3_599_034),
        Some(1572),
    ),
    sample(
        "T4",
        TreeParams {
            tree_type: TreeType::Hybrid,
            shape: GeoShape::Linear,
            gen_mx: 16,
            b0: 6.0,
            root_seed: 1,
            q: 0.234375,
            m: 4,
            ..TreeParams::DEFAULT
        },
        4_132_453,
        Some(3_108_986),
        Some(134),
    ),
    // Large (~100 million nodes)
    sample(
        "T1L",
        geo(GeoShape::Fixed, 13, 4.0, 29),
        102_181_082,
        Some(81_746_377),
        Some(13),
    ),
    sample(
        "T2L",
        geo(GeoShape::Cyclic, 23, 7.0, 220),
        96_793_510,
        Some(53_791_152),
        Some(67),
    ),
    sample(
        "T3L",
        bin(2000.0, 0.200014, 5, 7),
        111_345_631,
        Some(89_076_904),
        Some(17844),
    ),
    // Extra large (~1.6 billion nodes)
    sample(
        "T1XL",
        geo(GeoShape::Fixed, 15, 4.0, 29),
        1_635_119_272,
        Some(1_308_100_063),
        Some(15),
    ),
    // Extra extra large (~3-10 billion nodes)
    sample(
        "T1XXL",
        geo(GeoShape::Fixed, 15, 4.0, 19),
        4_230_646_601,
        None,
        Some(15),
    ),
    sample(
        "T3XXL",
        bin(2000.0, 0.499995, 2, 316),
        2_793_220_501,
        None,
        None,
    ),
    sample(
        "T2XXL",
        bin(2000.0, 0.499999995, 2, 0),
        10_612_052_303,
        Some(5_306_027_151),
        Some(216_370),
    ),
    // Wicked large (~150-300 billion nodes)
    sample(
        "T1WL",
        geo(GeoShape::Fixed, 18, 4.0, 19),
        270_751_679_750,
        Some(216_601_257_283),
        Some(18),
    ),
    sample(
        "T2WL",
        bin(2000.0, 0.4999999995, 2, 559),
        295_393_891_003,
        Some(147_696_946_501),
        Some(1_021_239),
    ),
    sample(
        "T3WL",
        bin(2000.0, 0.4999995, 2, 559),
        157_063_495_159,
        Some(78_531_748_579),
        Some(758_577),
    ),
];

/// Names of all sample trees.
pub fn names() -> Vec<&'static str> {
    SAMPLE_TREES.iter().map(|s| s.name).collect()
}

/// Look a sample tree up by name (case-insensitive).
pub fn lookup(name: &str) -> Result<&'static SampleTree, UtsError> {
    SAMPLE_TREES
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| UtsError::UnknownSampleTree(name.to_string()))
}

/// The sample tree whose parameters equal `params`, if any.
pub fn find_by_params(params: &TreeParams) -> Option<&'static SampleTree> {
    SAMPLE_TREES.iter().find(|s| s.params == *params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_works() {
        assert_eq!(lookup("t1l").unwrap().nodes, 102_181_082);
        assert!(lookup("T9").is_err());
        for s in SAMPLE_TREES {
            s.params.validate().unwrap();
            assert_eq!(find_by_params(&s.params).unwrap().name, s.name);
        }
    }
}
