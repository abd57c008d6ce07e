//! Tuned sequential depth-first search.
//!
//! The search keeps an explicit stack with one frame per tree level on the
//! current path. A frame owns the prepared SHA-1 block of its node
//! ([`Spawner`]) and the index of the next child to generate, so children are
//! generated lazily, one compression each, and nothing is allocated per node
//! (the stack grows only with the depth of the tree).

use crate::uts::progress;
use crate::uts::rng::Spawner;
use crate::uts::tree::{Node, Tree};

/// Counts gathered by a search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Nodes visited, the root included.
    pub nodes: u64,
    /// Nodes without children.
    pub leaves: u64,
    /// Greatest node height seen (the root has height 0).
    pub max_depth: u64,
}

impl SearchStats {
    /// Combine the counts of two disjoint parts of a tree.
    pub fn merge(&mut self, other: &SearchStats) {
        self.nodes += other.nodes;
        self.leaves += other.leaves;
        self.max_depth = self.max_depth.max(other.max_depth);
    }
}

/// One level of the current path: a node whose children are being generated.
struct Frame {
    spawner: Spawner,
    next: u32,
    count: u32,
    height: u32,
}

/// Search the whole tree.
pub fn search(tree: &Tree) -> SearchStats {
    search_from(tree, &tree.root())
}

/// Search the subtree rooted at `start` (the start node is counted).
pub fn search_from(tree: &Tree, start: &Node) -> SearchStats {
    let granularity = tree.params().granularity;
    let mut nodes: u64 = 1;
    let mut leaves: u64 = 0;
    let mut max_height: u32 = start.height;

    let n = tree.num_children(start);
    if n == 0 {
        return SearchStats {
            nodes,
            leaves: 1,
            max_depth: u64::from(start.height),
        };
    }

    let mut stack: Vec<Frame> = Vec::with_capacity(256);
    stack.push(Frame {
        spawner: Spawner::new(&start.state),
        next: 0,
        count: n,
        height: start.height,
    });

    while let Some(top) = stack.last_mut() {
        let index = top.next;
        let height = top.height + 1;
        let state = if granularity == 1 {
            top.spawner.spawn(index)
        } else {
            top.spawner.spawn_with_granularity(index, granularity)
        };
        top.next += 1;
        let parent_done = top.next == top.count;

        let child = Node { state, height };
        nodes += 1;
        if nodes.is_multiple_of(progress::BATCH) {
            progress::add(progress::BATCH);
        }
        max_height = max_height.max(height);
        let n = tree.num_children(&child);

        if n == 0 {
            leaves += 1;
            if parent_done {
                stack.pop();
            }
        } else {
            let frame = Frame {
                spawner: Spawner::new(&state),
                next: 0,
                count: n,
                height,
            };
            if parent_done {
                // reuse the finished parent's slot
                *top = frame;
            } else {
                stack.push(frame);
            }
        }
    }

    SearchStats {
        nodes,
        leaves,
        max_depth: u64::from(max_height),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uts::tree::TreeParams;

    #[test]
    fn default_tree() {
        let t = Tree::new(TreeParams::DEFAULT).unwrap();
        let s = search(&t);
        assert_eq!((s.nodes, s.leaves), (1732, 1050));
    }

    #[test]
    fn leaf_start() {
        let t = Tree::new(TreeParams {
            b0: 0.0,
            ..TreeParams::DEFAULT
        })
        .unwrap();
        let s = search(&t);
        assert_eq!(
            s,
            SearchStats {
                nodes: 1,
                leaves: 1,
                max_depth: 0
            }
        );
    }
}
