//! Random task graphs: plain tasks, nested finishes (with tasks escaping to
//! the enclosing scope), AND and OR data-driven tasks over earlier DDFs, and
//! puts from tasks. Every task must run exactly once, and every data-driven
//! task only after the DDFs it was released by were put.
//!
//! # Why the graphs cannot deadlock
//!
//! Task ids are assigned in pre-order, and a data-driven task awaits only
//! DDFs of tasks with smaller ids. Each task puts its own DDF (or spawns a
//! plain task that puts it) first thing in its body, then spawns its
//! children, and opens its nested finish (if any) last, after every spawn.
//! So no spawn and no put ever waits for a finish, and by induction on the id
//! every task becomes runnable; waiting finish owners keep executing tasks.

use std::sync::atomic::{AtomicUsize, Ordering};

use hc_runtime::{finish, Awaitable, Ddf, Runtime, Scope};

/// xorshift64: small, deterministic, good enough to shape graphs.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }
}

enum Kind {
    Spawn,
    /// AND list of earlier task ids (may repeat, may be empty).
    All(Vec<usize>),
    /// OR list of earlier task ids (non-empty, may repeat).
    Any(Vec<usize>),
}

struct Node {
    kind: Kind,
    /// The DDF is put by a plain child task rather than by the task itself.
    put_by_child: bool,
    children: Vec<usize>,
    /// Spawned in a nested finish; `true` = escapes to the task's own scope.
    nested: Vec<(usize, bool)>,
}

struct Plan {
    nodes: Vec<Node>,
    roots: Vec<usize>,
    /// Root tasks spawned from a nested finish in the root body.
    nested_roots: Vec<usize>,
}

const MAX_DEPTH: usize = 6;

fn generate(rng: &mut Rng, max_tasks: usize) -> Plan {
    let mut nodes = Vec::new();
    let mut roots = Vec::new();
    let mut nested_roots = Vec::new();
    while nodes.len() < max_tasks {
        let id = generate_node(rng, &mut nodes, 0, max_tasks);
        if rng.percent(20) {
            nested_roots.push(id);
        } else {
            roots.push(id);
        }
    }
    Plan {
        nodes,
        roots,
        nested_roots,
    }
}

fn pick_earlier(rng: &mut Rng, id: usize, count: usize) -> Vec<usize> {
    (0..count).map(|_| rng.below(id)).collect()
}

fn generate_node(rng: &mut Rng, nodes: &mut Vec<Node>, depth: usize, max_tasks: usize) -> usize {
    let id = nodes.len();
    let kind = match rng.below(10) {
        0..=3 => Kind::Spawn,
        4..=6 => {
            let count = if id == 0 { 0 } else { rng.below(4) };
            Kind::All(pick_earlier(rng, id, count))
        }
        _ if id == 0 => Kind::All(Vec::new()),
        _ => {
            let count = 1 + rng.below(4);
            Kind::Any(pick_earlier(rng, id, count))
        }
    };
    nodes.push(Node {
        kind,
        put_by_child: rng.percent(20),
        children: Vec::new(),
        nested: Vec::new(),
    });
    if depth < MAX_DEPTH {
        for _ in 0..rng.below(4) {
            if nodes.len() >= max_tasks {
                break;
            }
            let child = generate_node(rng, nodes, depth + 1, max_tasks);
            nodes[id].children.push(child);
        }
        if rng.percent(25) {
            for _ in 0..1 + rng.below(3) {
                if nodes.len() >= max_tasks {
                    break;
                }
                let escapes = rng.percent(30);
                let child = generate_node(rng, nodes, depth + 1, max_tasks);
                nodes[id].nested.push((child, escapes));
            }
        }
    }
    id
}

struct Run<'p> {
    plan: &'p Plan,
    seed: u64,
    ddfs: Vec<Ddf<u64>>,
    runs: Vec<AtomicUsize>,
}

fn value_of(id: usize) -> u64 {
    (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5555
}

fn spawn_node<'s>(s: &'s Scope<'s, '_>, run: &'s Run<'s>, id: usize) {
    match &run.plan.nodes[id].kind {
        Kind::Spawn => s.spawn(move |s| body(s, run, id, None)),
        Kind::All(deps) => {
            let list: Vec<&dyn Awaitable> = deps
                .iter()
                .map(|&d| &run.ddfs[d] as &dyn Awaitable)
                .collect();
            s.spawn_await(&list, move |s| body(s, run, id, None));
        }
        Kind::Any(deps) => {
            let list: Vec<&dyn Awaitable> = deps
                .iter()
                .map(|&d| &run.ddfs[d] as &dyn Awaitable)
                .collect();
            s.spawn_await_any(&list, move |s, index| body(s, run, id, Some(index)));
        }
    }
}

fn check_dep(run: &Run<'_>, id: usize, dep: usize) {
    assert!(
        run.ddfs[dep].is_put(),
        "seed {:#x}: task {id} ran before its dependency {dep} was put",
        run.seed
    );
    assert_eq!(
        run.ddfs[dep].get(),
        Ok(&value_of(dep)),
        "seed {:#x}",
        run.seed
    );
}

fn body<'s>(s: &'s Scope<'s, '_>, run: &'s Run<'s>, id: usize, fired: Option<usize>) {
    let node = &run.plan.nodes[id];
    match &node.kind {
        Kind::Spawn => assert_eq!(fired, None),
        Kind::All(deps) => {
            assert_eq!(fired, None);
            for &dep in deps {
                check_dep(run, id, dep);
            }
        }
        Kind::Any(deps) => {
            let index = fired.expect("await-any task without an index");
            assert!(
                index < deps.len(),
                "seed {:#x}: index {index} out of range",
                run.seed
            );
            check_dep(run, id, deps[index]);
        }
    }
    run.runs[id].fetch_add(1, Ordering::Relaxed);
    if node.put_by_child {
        s.spawn(move |_| run.ddfs[id].put(value_of(id)).unwrap());
    } else {
        run.ddfs[id].put(value_of(id)).unwrap();
    }
    for &child in &node.children {
        spawn_node(s, run, child);
    }
    if !node.nested.is_empty() {
        finish(|inner| {
            for &(child, escapes) in &node.nested {
                if escapes {
                    spawn_node(s, run, child);
                } else {
                    spawn_node(inner, run, child);
                }
            }
        });
    }
}

fn run_graph(rt: &Runtime, seed: u64, max_tasks: usize) {
    let mut rng = Rng::new(seed);
    let plan = generate(&mut rng, max_tasks);
    let n = plan.nodes.len();
    let run = Run {
        plan: &plan,
        seed,
        ddfs: (0..n).map(|_| Ddf::new()).collect(),
        runs: (0..n).map(|_| AtomicUsize::new(0)).collect(),
    };
    let run = &run;
    rt.finish(|s| {
        for &root in &plan.roots {
            spawn_node(s, run, root);
        }
        if !plan.nested_roots.is_empty() {
            finish(|inner| {
                for &root in &plan.nested_roots {
                    spawn_node(inner, run, root);
                }
            });
        }
    });
    for (id, count) in run.runs.iter().enumerate() {
        assert_eq!(
            count.load(Ordering::Relaxed),
            1,
            "seed {seed:#x}: task {id} of {n}"
        );
    }
    for (id, ddf) in run.ddfs.iter().enumerate() {
        assert_eq!(ddf.get(), Ok(&value_of(id)), "seed {seed:#x}: ddf {id}");
    }
}

fn stress(workers: usize) {
    let iterations: u64 = if cfg!(miri) {
        3
    } else if cfg!(debug_assertions) {
        20
    } else {
        200
    };
    let rt = Runtime::builder().num_workers(workers).build().unwrap();
    for iteration in 0..iterations {
        let seed = 0x2545_F491_4F6C_DD1D ^ (workers as u64) << 32 ^ iteration;
        let max_tasks = if cfg!(miri) {
            60
        } else {
            20 + (iteration as usize * 97) % 1000
        };
        run_graph(&rt, seed, max_tasks);
    }
}

#[test]
fn random_graphs_one_worker() {
    stress(1);
}

#[test]
fn random_graphs_two_workers() {
    stress(2);
}

#[test]
fn random_graphs_four_workers() {
    stress(4);
}

#[test]
fn generated_graphs_use_every_feature() {
    // Guards the generator: a change that stopped producing some kind of task
    // would quietly weaken the tests above.
    let (mut all, mut any, mut empty_all, mut nested, mut escaping, mut by_child) =
        (0, 0, 0, 0, 0, 0);
    for iteration in 0..20 {
        let plan = generate(&mut Rng::new(0xABCD ^ iteration), 200);
        for node in &plan.nodes {
            match &node.kind {
                Kind::All(deps) if deps.is_empty() => empty_all += 1,
                Kind::All(_) => all += 1,
                Kind::Any(_) => any += 1,
                Kind::Spawn => {}
            }
            nested += node.nested.len();
            escaping += node.nested.iter().filter(|(_, e)| *e).count();
            by_child += usize::from(node.put_by_child);
        }
    }
    for (what, count) in [
        ("AND", all),
        ("empty AND", empty_all),
        ("OR", any),
        ("nested", nested),
        ("escaping", escaping),
        ("put by child", by_child),
    ] {
        assert!(count > 10, "only {count} {what} tasks generated");
    }
}
