//! The worker-local stack of the parallel searches.
//!
//! [`LocalStack`] is the tuned depth-first search of [`seq`](crate::uts::seq)
//! made interruptible and splittable:
//!
//! * it keeps one frame per level of the current path — the prepared SHA-1
//!   block of a node ([`Spawner`]) and the index of its next child — so
//!   children are generated lazily, one compression each, exactly as in the
//!   sequential search;
//! * [`explore`](LocalStack::explore) visits at most a given number of nodes
//!   and returns, which gives the callers their polling interval (`-i`);
//! * its *local work* — the reference's `localWork`, the number of
//!   generated-but-unexplored nodes on a stack of nodes — is the number of
//!   children not yet generated on the live frames, kept up to date in O(1);
//! * [`release`](LocalStack::release) hands out a chunk of that work from
//!   the bottom of the stack (the shallowest levels, whose subtrees are the
//!   largest — the end the reference's `release` takes from): it generates
//!   those children's states and advances the frames past them.
//!
//! Frames emptied by a release sit below `base` until the depth-first
//! search pops back down to them, so a release costs O(chunk) amortized.
//!
//! Counting follows the reference: a node is counted when it is visited
//! (generated here, or [`push`](LocalStack::push)ed after a steal), so a
//! released node is counted by whoever explores it.

use crate::uts::progress;
use crate::uts::rng::Spawner;
use crate::uts::seq::SearchStats;
use crate::uts::tree::{Node, Tree};

/// One level of the current path: a node whose children are being generated.
#[derive(Debug, Clone)]
struct Frame {
    spawner: Spawner,
    next: u32,
    count: u32,
    height: u32,
}

impl Frame {
    #[inline(always)]
    fn remaining(&self) -> u32 {
        self.count - self.next
    }
}

/// An interruptible, splittable depth-first search (see the module docs).
#[derive(Debug)]
pub struct LocalStack<'t> {
    tree: &'t Tree,
    granularity: u32,
    /// `frames[..base]` are exhausted (fully released) and wait to be popped.
    frames: Vec<Frame>,
    base: usize,
    /// Children not yet generated on `frames[base..]`.
    work: u64,
    nodes: u64,
    leaves: u64,
    max_height: u32,
}

impl<'t> LocalStack<'t> {
    /// An empty stack for `tree`.
    pub fn new(tree: &'t Tree) -> Self {
        LocalStack {
            tree,
            granularity: tree.params().granularity,
            frames: Vec::with_capacity(64),
            base: 0,
            work: 0,
            nodes: 0,
            leaves: 0,
            max_height: 0,
        }
    }

    /// Whether no unexplored node is left.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.work == 0
    }

    /// Unexplored nodes on the stack (the reference's `localWork`).
    #[inline(always)]
    pub fn local_work(&self) -> u64 {
        self.work
    }

    /// Counts of everything visited so far.
    pub fn stats(&self) -> SearchStats {
        SearchStats {
            nodes: self.nodes,
            leaves: self.leaves,
            max_depth: u64::from(self.max_height),
        }
    }

    /// Visit `node` (count it) and put its children, if any, on the stack.
    #[inline]
    pub fn push(&mut self, node: &Node) {
        self.nodes += 1;
        self.max_height = self.max_height.max(node.height);
        let n = self.tree.num_children(node);
        if n == 0 {
            self.leaves += 1;
        } else {
            self.frames.push(Frame {
                spawner: Spawner::new(&node.state),
                next: 0,
                count: n,
                height: node.height,
            });
            self.work += u64::from(n);
        }
    }

    /// [`push`](Self::push) every node of `chunk`.
    pub fn push_all(&mut self, chunk: &[Node]) {
        for node in chunk {
            self.push(node);
        }
    }

    /// Visit up to `budget` nodes depth-first; returns how many were visited
    /// (fewer than `budget` only if the stack ran empty).
    #[inline(never)]
    pub fn explore(&mut self, budget: u32) -> u32 {
        let tree = self.tree;
        let granularity = self.granularity;
        let base = self.base;
        // Work on locals so that the loop keeps everything in registers.
        let mut frames = std::mem::take(&mut self.frames);
        let mut left = budget;
        let mut pushed: u64 = 0;
        let mut leaves: u64 = 0;
        let mut max_height = self.max_height;

        if frames.len() == base {
            frames.clear();
            self.base = 0;
        }
        while left > 0 {
            let Some(top) = frames.last_mut() else {
                break;
            };
            left -= 1;
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
            max_height = max_height.max(height);
            let n = tree.num_children(&child);

            if n == 0 {
                leaves += 1;
                if parent_done {
                    frames.pop();
                    if frames.len() == base {
                        // only exhausted frames are left below the path
                        frames.clear();
                        break;
                    }
                }
            } else {
                pushed += u64::from(n);
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
                    frames.push(frame);
                }
            }
        }

        let visited = budget - left;
        self.work = self.work + pushed - u64::from(visited);
        let before = self.nodes;
        self.nodes += u64::from(visited);
        // Whole batches only: a threaded search explores a few dozen nodes
        // per call.
        let batches = self.nodes / progress::BATCH - before / progress::BATCH;
        if batches > 0 {
            progress::add(batches * progress::BATCH);
        }
        self.leaves += leaves;
        self.max_height = max_height;
        if frames.is_empty() {
            self.base = 0;
        }
        self.frames = frames;
        visited
    }

    /// Move up to `n` unexplored nodes from the bottom of the stack into
    /// `out`; returns how many were moved.
    pub fn release(&mut self, n: usize, out: &mut Vec<Node>) -> usize {
        let granularity = self.granularity;
        let mut taken = 0usize;
        let mut i = self.base;
        while taken < n && i < self.frames.len() {
            let frame = &mut self.frames[i];
            let take = (frame.remaining() as usize).min(n - taken) as u32;
            let height = frame.height + 1;
            for index in frame.next..frame.next + take {
                out.push(Node {
                    state: frame.spawner.spawn_with_granularity(index, granularity),
                    height,
                });
            }
            frame.next += take;
            taken += take as usize;
            if frame.remaining() == 0 {
                // frames are consumed bottom-up, so exhausted ones form a prefix
                i += 1;
                self.base = i;
            }
        }
        self.work -= taken as u64;
        if self.base == self.frames.len() {
            self.frames.clear();
            self.base = 0;
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uts::seq;
    use crate::uts::tree::{GeoShape, TreeParams, TreeType};

    fn trees() -> Vec<Tree> {
        vec![
            Tree::new(TreeParams::DEFAULT).unwrap(),
            Tree::new(TreeParams {
                shape: GeoShape::Fixed,
                gen_mx: 5,
                b0: 4.0,
                root_seed: 3,
                granularity: 2,
                ..TreeParams::DEFAULT
            })
            .unwrap(),
            Tree::new(TreeParams {
                tree_type: TreeType::Binomial,
                b0: 50.0,
                q: 0.2,
                m: 4,
                root_seed: 7,
                ..TreeParams::DEFAULT
            })
            .unwrap(),
        ]
    }

    #[test]
    fn explore_matches_seq() {
        for tree in trees() {
            let want = seq::search(&tree);
            for budget in [1, 3, 1000] {
                let mut s = LocalStack::new(&tree);
                s.push(&tree.root());
                while !s.is_empty() {
                    s.explore(budget);
                }
                assert_eq!(s.stats(), want);
            }
        }
    }

    /// Releasing chunks at every step and exploring them separately visits
    /// every node exactly once.
    #[test]
    fn release_partitions_the_tree() {
        for tree in trees() {
            let want = seq::search(&tree);
            for chunk in [1usize, 2, 5, 20] {
                let mut total = SearchStats::default();
                let mut pending: Vec<Vec<Node>> = vec![vec![tree.root()]];
                let mut steps = 0u64;
                while let Some(c) = pending.pop() {
                    let mut s = LocalStack::new(&tree);
                    s.push_all(&c);
                    while !s.is_empty() {
                        s.explore(3);
                        steps += 1;
                        if steps.is_multiple_of(2) && s.local_work() > 2 * chunk as u64 {
                            let before = s.local_work();
                            let mut out = Vec::new();
                            assert_eq!(s.release(chunk, &mut out), chunk);
                            assert_eq!(out.len(), chunk);
                            assert_eq!(s.local_work(), before - chunk as u64);
                            pending.push(out);
                        }
                    }
                    total.merge(&s.stats());
                }
                assert_eq!(total, want, "chunk {chunk}");
            }
        }
    }

    #[test]
    fn release_everything() {
        let tree = trees().remove(0);
        let mut s = LocalStack::new(&tree);
        s.push(&tree.root());
        s.explore(10);
        let work = s.local_work() as usize;
        let mut out = Vec::new();
        assert_eq!(s.release(work + 5, &mut out), work);
        assert!(s.is_empty());
        assert_eq!(s.explore(10), 0);
    }
}
