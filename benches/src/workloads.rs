//! The measured kernels, in an `hc` (hc-runtime) and a `rayon` version each.
//!
//! Every kernel is entered from a thread that is not a worker (the `hc`
//! versions through [`Runtime::finish`], the `rayon` ones through
//! [`ThreadPool::install`]), so both pay the same one-off hand-over to the
//! pool. Tasks are empty or nearly so: what is measured is the scheduler.

use std::hint::black_box;

use hc_runtime::{Ddf, Runtime, Scope};
use rayon::ThreadPool;

/// Spawns `n` empty tasks from the body of one finish scope on `rt`.
pub fn hc_spawn_flat(rt: &Runtime, n: usize) {
    rt.finish(|s| {
        for _ in 0..n {
            s.spawn(|_| {});
        }
    });
}

/// Spawns `n` empty tasks from the body of one `rayon::scope` on `pool`.
pub fn rayon_spawn_flat(pool: &ThreadPool, n: usize) {
    pool.install(|| {
        rayon::scope(|s| {
            for _ in 0..n {
                s.spawn(|_| {});
            }
        });
    });
}

/// Tasks spawned by the tree kernels for `depth`: every task above the
/// leaves spawns two children, `2 + 4 + … + 2^depth = 2^(depth+1) - 2`.
pub fn tree_tasks(depth: u32) -> usize {
    (1usize << (depth + 1)) - 2
}

fn hc_tree<'scope>(s: &'scope Scope<'scope, '_>, depth: u32) {
    if depth > 0 {
        s.spawn(move |s| hc_tree(s, depth - 1));
        s.spawn(move |s| hc_tree(s, depth - 1));
    }
}

/// Spawns [`tree_tasks`]`(depth)` tasks as a binary tree in one finish
/// scope: each task spawns its two children into the same scope and returns.
pub fn hc_spawn_tree(rt: &Runtime, depth: u32) {
    rt.finish(|s| hc_tree(s, depth));
}

fn rayon_tree<'scope>(s: &rayon::Scope<'scope>, depth: u32) {
    if depth > 0 {
        s.spawn(move |s| rayon_tree(s, depth - 1));
        s.spawn(move |s| rayon_tree(s, depth - 1));
    }
}

/// The rayon counterpart of [`hc_spawn_tree`], in one `rayon::scope`.
pub fn rayon_spawn_tree(pool: &ThreadPool, depth: u32) {
    pool.install(|| rayon::scope(|s| rayon_tree(s, depth)));
}

/// Plain recursive Fibonacci.
pub fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib_seq(n - 1) + fib_seq(n - 2)
    }
}

/// Fibonacci with one finish per level: `fib(n-2)` is spawned, `fib(n-1)`
/// runs in the finish body (the same split as `rayon::join`, which runs its
/// first closure in place and offers the second to thieves). Below `cutoff`
/// it calls [`fib_seq`]; a cutoff of 0 or 1 means no cutoff.
///
/// Must run on a worker of a runtime (inside [`Runtime::finish`]), or it uses
/// the process-wide default runtime.
pub fn fib_hc(n: u64, cutoff: u64) -> u64 {
    if n < 2 {
        return n;
    }
    if n < cutoff {
        return fib_seq(n);
    }
    let mut b = 0;
    let b_slot = &mut b;
    let a = hc_runtime::finish(|s| {
        s.spawn(move |_| *b_slot = fib_hc(n - 2, cutoff));
        fib_hc(n - 1, cutoff)
    });
    a + b
}

/// Fibonacci with `rayon::join` at every level; `cutoff` as for [`fib_hc`].
pub fn fib_rayon(n: u64, cutoff: u64) -> u64 {
    if n < 2 {
        return n;
    }
    if n < cutoff {
        return fib_seq(n);
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1, cutoff), || fib_rayon(n - 2, cutoff));
    a + b
}

/// Fibonacci with [`hc_runtime::join`] at every level; `cutoff` as for
/// [`fib_hc`].
pub fn fib_hc_join(n: u64, cutoff: u64) -> u64 {
    if n < 2 {
        return n;
    }
    if n < cutoff {
        return fib_seq(n);
    }
    let (a, b) = hc_runtime::join(|| fib_hc_join(n - 1, cutoff), || fib_hc_join(n - 2, cutoff));
    a + b
}

/// [`fib_hc_join`] entered on `rt`.
pub fn hc_fib_join(rt: &Runtime, n: u64, cutoff: u64) -> u64 {
    rt.join(|| fib_hc_join(black_box(n), cutoff), || ()).0
}

/// [`fib_hc`] entered on `rt`.
pub fn hc_fib(rt: &Runtime, n: u64, cutoff: u64) -> u64 {
    rt.finish(|_| fib_hc(black_box(n), cutoff))
}

/// [`fib_rayon`] entered on `pool`.
pub fn rayon_fib(pool: &ThreadPool, n: u64, cutoff: u64) -> u64 {
    pool.install(|| fib_rayon(black_box(n), cutoff))
}

/// `links + 1` empty DDFs for [`hc_ddf_chain`].
pub fn ddf_chain_ddfs(links: usize) -> Vec<Ddf<u64>> {
    (0..=links).map(|_| Ddf::new()).collect()
}

/// A chain of data-driven tasks in one finish scope: task `k` awaits
/// `ddfs[k]` and puts `ddfs[k] + 1` into `ddfs[k + 1]`. All tasks are created
/// first (each registers on its still-empty DDF), then the body puts
/// `ddfs[0]`, which releases the chain one link at a time. Returns the value
/// that reached the last DDF (`ddfs.len() - 1` when the chain ran whole).
///
/// # Panics
/// If `ddfs` is empty or any of them was put before.
pub fn hc_ddf_chain(rt: &Runtime, ddfs: &[Ddf<u64>]) -> u64 {
    let links = ddfs.len() - 1;
    rt.finish(|s| {
        for k in 0..links {
            let (this, next) = (&ddfs[k], &ddfs[k + 1]);
            s.spawn_await(&[this], move |_| {
                let value = *this.get().expect("released before its put");
                next.put(value + 1).expect("each link is put once");
            });
        }
        ddfs[0].put(0).expect("a fresh chain");
    });
    *ddfs[links].get().expect("the chain ran to its end")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pools() -> (Runtime, ThreadPool) {
        let rt = Runtime::builder().num_workers(2).build().unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        (rt, pool)
    }

    #[test]
    fn fib_versions_agree() {
        let (rt, pool) = pools();
        let expected = fib_seq(18);
        assert_eq!(expected, 2584);
        for cutoff in [0, 10] {
            assert_eq!(hc_fib(&rt, 18, cutoff), expected);
            assert_eq!(hc_fib_join(&rt, 18, cutoff), expected);
            assert_eq!(rayon_fib(&pool, 18, cutoff), expected);
        }
    }

    #[test]
    fn spawn_kernels_complete() {
        let (rt, pool) = pools();
        hc_spawn_flat(&rt, 1000);
        rayon_spawn_flat(&pool, 1000);
        hc_spawn_tree(&rt, 8);
        rayon_spawn_tree(&pool, 8);
        assert_eq!(tree_tasks(1), 2);
        assert_eq!(tree_tasks(19), 1_048_574);
    }

    #[test]
    fn ddf_chain_runs_whole() {
        let (rt, _) = pools();
        let ddfs = ddf_chain_ddfs(500);
        assert_eq!(hc_ddf_chain(&rt, &ddfs), 500);
    }
}
