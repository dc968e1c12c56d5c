//! Best costs over an e-graph in one pass: Knuth's generalisation of Dijkstra's algorithm.
//!
//! A node's cost is its own cost plus its children's, so a class's best cost is the least
//! fixpoint of `best(c) = min over nodes n of c: own(n) + sum of best(children of n)`.
//! Relaxing every node until nothing changes needs as many passes over the whole e-graph as
//! the longest chain of improvements (tens at a million e-nodes). Knuth's algorithm settles
//! classes cheapest first instead: a node is costed once, when the last of its children is
//! settled, so the work is one visit per e-node and per child edge, plus a heap, whatever
//! the e-graph's shape (cycles included: a class with no finite term is never settled).
//!
//! Settling by distance also gives [`shortest_from`], the fewest nodes of a context around
//! each class (the term-size filter's distances from the root), with a bucket per distance.

use egglog::Value;
use rustc_hash::FxHashMap as HashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// E-nodes as flat arrays: each node's class, children and own cost, with classes numbered
/// densely as they are pushed, so that the algorithms below index arrays instead of hashing.
#[derive(Default)]
pub struct CostedNodes {
    classes: Dense,
    class: Vec<u32>,
    /// Node `i`'s children are `kids[start[i]..start[i + 1]]`.
    start: Vec<u32>,
    kids: Vec<u32>,
    own: Vec<u64>,
}

impl CostedNodes {
    pub fn push(&mut self, class: Value, kids: &[Value], own: u64) {
        if self.start.is_empty() {
            self.start.push(0);
        }
        let class = self.classes.id(class);
        self.class.push(class);
        for k in kids {
            let k = self.classes.id(*k);
            self.kids.push(k);
        }
        self.start.push(self.kids.len() as u32);
        self.own.push(own);
    }

    pub fn len(&self) -> usize {
        self.class.len()
    }

    pub fn is_empty(&self) -> bool {
        self.class.is_empty()
    }

    /// The number of node `i`'s class.
    pub fn class(&self, i: usize) -> u32 {
        self.class[i]
    }

    /// The numbers of node `i`'s children's classes.
    pub fn kids(&self, i: usize) -> &[u32] {
        &self.kids[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// How many classes the nodes name (their own and their children's).
    pub fn classes(&self) -> usize {
        self.classes.len()
    }

    /// The class numbered `c`.
    pub fn class_value(&self, c: u32) -> Value {
        self.classes.values[c as usize]
    }

    /// The number of a class, if some node names it.
    pub fn class_id(&self, v: Value) -> Option<u32> {
        self.classes.ids.get(&v).copied()
    }

    /// The nodes that use each class as a child ([`Users`]).
    pub fn users(&self) -> Users {
        let uses: Vec<(u32, u32)> = (0..self.len())
            .flat_map(|i| self.kids(i).iter().map(move |k| (*k, i as u32)))
            .collect();
        let (start, users) = adjacency(self.classes(), &uses);
        Users { start, users }
    }
}

/// For every class of a [`CostedNodes`], by number, the nodes that have it as a child, once
/// per occurrence: what a pass from the children upwards follows. Built once, it serves
/// several such passes over the same nodes (a snapshot's representatives and free variables).
pub struct Users {
    start: Vec<u32>,
    users: Vec<u32>,
}

impl Users {
    /// The nodes that use class `c`.
    pub fn of(&self, c: u32) -> &[u32] {
        &self.users[self.start[c as usize] as usize..self.start[c as usize + 1] as usize]
    }
}

/// E-classes numbered densely (0, 1, ...), in the order they are first seen.
#[derive(Default)]
pub(crate) struct Dense {
    pub ids: HashMap<Value, u32>,
    pub values: Vec<Value>,
}

impl Dense {
    /// The number of `v`, given it now if it has none.
    pub fn id(&mut self, v: Value) -> u32 {
        let next = self.values.len() as u32;
        *self.ids.entry(v).or_insert_with(|| {
            self.values.push(v);
            next
        })
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }
}

/// `lists[k]` of a compressed adjacency list: `items[start[k]..start[k + 1]]`.
pub(crate) fn adjacency(n: usize, pairs: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 1];
    for (k, _) in pairs {
        start[*k as usize + 1] += 1;
    }
    for k in 0..n {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut items = vec![0u32; pairs.len()];
    for (k, x) in pairs {
        items[fill[*k as usize] as usize] = *x;
        fill[*k as usize] += 1;
    }
    (start, items)
}

/// The cheapest node of every class that has a finite term, by class number
/// ([`CostedNodes::class`]): (its cost, the index in `nodes` of its cheapest node). Ties go to
/// the node costed first. `users` is `nodes.users()`.
pub fn cheapest(nodes: &CostedNodes, users: &Users) -> Vec<Option<(u64, usize)>> {
    cheapest_unless(nodes, users, || false).unwrap_or_default()
}

/// [`cheapest`], or `None` as soon as `stopped` says so (asked once per class settled).
pub fn cheapest_unless(
    nodes: &CostedNodes,
    users: &Users,
    stopped: impl Fn() -> bool,
) -> Option<Vec<Option<(u64, usize)>>> {
    let classes = nodes.classes();
    // A node waits for each occurrence of a child.
    let mut waiting: Vec<u32> = (0..nodes.len())
        .map(|i| nodes.kids(i).len() as u32)
        .collect();
    let mut best: Vec<(u64, u32)> = vec![(u64::MAX, u32::MAX); classes];
    let mut settled = vec![false; classes];
    let mut heap = BinaryHeap::new();
    let offer = |i: usize, best: &mut Vec<(u64, u32)>, heap: &mut BinaryHeap<_>| {
        let cost = (nodes.kids(i).iter()).fold(nodes.own[i], |acc, k| {
            acc.saturating_add(best[*k as usize].0)
        });
        let c = nodes.class[i] as usize;
        if cost < best[c].0 {
            best[c] = (cost, i as u32);
            heap.push(Reverse((cost, c as u32)));
        }
    };
    for (i, _) in waiting.iter().enumerate().filter(|(_, w)| **w == 0) {
        offer(i, &mut best, &mut heap);
    }
    while let Some(Reverse((cost, c))) = heap.pop() {
        let c = c as usize;
        if settled[c] || cost > best[c].0 {
            continue;
        }
        if stopped() {
            return None;
        }
        settled[c] = true;
        for &user in users.of(c as u32) {
            let user = user as usize;
            waiting[user] -= 1;
            if waiting[user] == 0 {
                offer(user, &mut best, &mut heap);
            }
        }
    }
    let best = best.into_iter();
    Some(
        best.map(|(cost, i)| (cost < u64::MAX).then_some((cost, i as usize)))
            .collect(),
    )
}

/// [`cheapest`]'s costs, only up to `bound`: by class number, the cost of the class's
/// cheapest node, `None` when it has no term of cost at most `bound`. The same settling in
/// order of cost, with a bucket per cost instead of a heap (Dial's): the term-size filter's
/// costs are whole numbers under a bound of a few hundred, and nothing beyond it is queued.
pub fn cheapest_within(nodes: &CostedNodes, users: &Users, bound: u64) -> Vec<Option<u64>> {
    let mut waiting: Vec<u32> = (0..nodes.len())
        .map(|i| nodes.kids(i).len() as u32)
        .collect();
    let mut best = vec![u64::MAX; nodes.classes()];
    let mut buckets: Vec<Vec<u32>> = vec![vec![]; bound as usize + 1];
    // Offered once all its children are settled, so each child's cost is at most `bound`.
    let offer = |i: usize, best: &mut Vec<u64>, buckets: &mut Vec<Vec<u32>>| {
        let cost = (nodes.kids(i).iter()).fold(nodes.own[i], |acc, k| acc + best[*k as usize]);
        let c = nodes.class[i] as usize;
        if cost <= bound && cost < best[c] {
            best[c] = cost;
            buckets[cost as usize].push(c as u32);
        }
    };
    for (i, _) in waiting.iter().enumerate().filter(|(_, w)| **w == 0) {
        offer(i, &mut best, &mut buckets);
    }
    for cost in 0..=bound {
        // A node of own cost 0 offers its class at this cost again, into this bucket.
        while let Some(c) = buckets[cost as usize].pop() {
            // Queued again at a lower cost since, and settled then.
            if best[c as usize] != cost {
                continue;
            }
            for &user in users.of(c) {
                let user = user as usize;
                waiting[user] -= 1;
                if waiting[user] == 0 {
                    offer(user, &mut best, &mut buckets);
                }
            }
        }
    }
    best.into_iter()
        .map(|b| (b <= bound).then_some(b))
        .collect()
}

/// Shortest distances from `root`, up to `bound`, where a class reaches each child `k` of
/// each of its nodes `i` at `weight(i, k)` (`None`: no edge), by class number (`u64::MAX`:
/// not reachable within `bound`). Dijkstra's algorithm with a bucket per distance (Dial's, as
/// [`cheapest_within`]): the weights are whole numbers and the term-size filter asks for
/// distances up to its bound (a few hundred), and nothing farther than `bound` is queued. The
/// edges are not stored: a settled class's nodes are walked when it leaves the queue.
pub fn shortest_from(
    root: Value,
    nodes: &CostedNodes,
    bound: u64,
    weight: impl Fn(usize, u32) -> Option<u64>,
) -> Vec<u64> {
    let mut dist = vec![u64::MAX; nodes.classes()];
    let Some(root) = nodes.class_id(root) else {
        return dist;
    };
    let pairs: Vec<(u32, u32)> = (0..nodes.len())
        .map(|i| (nodes.class[i], i as u32))
        .collect();
    let (start, of_class) = adjacency(nodes.classes(), &pairs);
    drop(pairs);
    dist[root as usize] = 0;
    let mut buckets: Vec<Vec<u32>> = vec![vec![]; bound as usize + 1];
    buckets[0].push(root);
    for d in 0..=bound {
        // An edge of weight 0 queues its class at this distance, into this bucket.
        while let Some(c) = buckets[d as usize].pop() {
            if d > dist[c as usize] {
                continue;
            }
            for &i in &of_class[start[c as usize] as usize..start[c as usize + 1] as usize] {
                for &to in nodes.kids(i as usize) {
                    let Some(w) = weight(i as usize, to) else {
                        continue;
                    };
                    let through = d.saturating_add(w);
                    if through > bound || through >= dist[to as usize] {
                        continue;
                    }
                    dist[to as usize] = through;
                    buckets[through as usize].push(to);
                }
            }
        }
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Class `r` has a node over `a` and `b`, `a` a node over `c`; `b` and `c` are leaves.
    fn chain() -> CostedNodes {
        let v = Value::new_const;
        let mut nodes = CostedNodes::default();
        nodes.push(v(0), &[v(1), v(2)], 1);
        nodes.push(v(1), &[v(3)], 1);
        nodes.push(v(2), &[], 1);
        nodes.push(v(3), &[], 1);
        nodes
    }

    /// The bounded costs are the unbounded ones up to the bound, on random e-graphs with
    /// cycles, shared children and nodes of own cost 0.
    #[test]
    fn bounded_costs_agree_with_the_heap() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..200 {
            let classes = rng.u32(1..30);
            let mut nodes = CostedNodes::default();
            for _ in 0..rng.usize(1..60) {
                let kids: Vec<Value> = (0..rng.usize(0..3))
                    .map(|_| Value::new_const(rng.u32(0..classes)))
                    .collect();
                nodes.push(Value::new_const(rng.u32(0..classes)), &kids, rng.u64(0..3));
            }
            let users = nodes.users();
            let bound = rng.u64(0..12);
            let heap: Vec<Option<u64>> = cheapest(&nodes, &users)
                .into_iter()
                .map(|c| c.map(|(cost, _)| cost).filter(|cost| *cost <= bound))
                .collect();
            assert_eq!(cheapest_within(&nodes, &users, bound), heap);
        }
    }

    /// A stop request ends the pass at the class it comes before: one settled class, then
    /// nothing.
    #[test]
    fn cheapest_ends_at_a_stop() {
        let nodes = chain();
        let users = nodes.users();
        let asked = std::cell::Cell::new(0);
        let stop_at_second = || {
            asked.set(asked.get() + 1);
            asked.get() == 2
        };
        assert_eq!(cheapest_unless(&nodes, &users, stop_at_second), None);
        assert_eq!(asked.get(), 2);
        let all = cheapest_unless(&nodes, &users, || false).unwrap();
        assert_eq!(all, cheapest(&nodes, &users));
        assert_eq!(all.iter().flatten().count(), 4);
    }

    /// Distances follow the weights, an edge of weight 0 included, and a class farther than
    /// the bound is unreachable.
    #[test]
    fn shortest_distances_stop_at_the_bound() {
        let nodes = chain();
        let at = |d: &[u64], c: u32| d[nodes.class_id(Value::new_const(c)).unwrap() as usize];
        let unit = shortest_from(Value::new_const(0), &nodes, 10, |_, _| Some(1));
        assert_eq!([0, 1, 2, 3].map(|c| at(&unit, c)), [0, 1, 1, 2]);
        let bounded = shortest_from(Value::new_const(0), &nodes, 1, |_, _| Some(1));
        assert_eq!([0, 1, 2, 3].map(|c| at(&bounded, c)), [0, 1, 1, u64::MAX]);
        // From `a`'s node (node 1) to `c` costs nothing: `c` is as far as `a`.
        let free = shortest_from(Value::new_const(0), &nodes, 1, |i, _| Some((i == 0) as u64));
        assert_eq!([0, 1, 2, 3].map(|c| at(&free, c)), [0, 1, 1, 1]);
    }
}
