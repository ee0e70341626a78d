//! The commits of a range as a graph, so that the search descends into
//! merges as `git bisect` does. A range like v6.9..v6.10 is mostly merges:
//! along the first-parent chain alone the culprit would be "the merge of
//! the mm tree", thousands of commits at once.
//!
//! The candidates for the first bad commit are the ancestors of the
//! current bad commit that no good commit contains; the next commit tested
//! is the one whose own ancestors among the candidates come closest to
//! half of them. On a linear history this is the plain binary search.

use super::git::Commit;
use kbench_stats::bisection::State;
use std::collections::{BTreeMap, HashMap};

/// A set of commit indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn empty(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(64)])
    }

    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    fn union_with(&mut self, other: &Bits) {
        self.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a |= b);
    }

    fn remove_all(&mut self, other: &Bits) {
        self.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a &= !b);
    }

    fn count_common(&self, other: &Bits) -> usize {
        self.0
            .iter()
            .zip(&other.0)
            .map(|(a, b)| (a & b).count_ones() as usize)
            .sum()
    }

    fn indexes(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(word, bits)| {
            (0..64)
                .filter(move |bit| bits & (1 << bit) != 0)
                .map(move |bit| word * 64 + bit)
        })
    }
}

/// Ancestry among the plan's commits (index 0 good, oldest first in
/// topological order, the last one bad).
#[derive(Debug, Clone)]
pub struct Graph {
    /// Each commit's ancestors in the plan, itself included.
    ancestors: Vec<Bits>,
    /// Each commit's first parent, when it is in the plan.
    first_parent: Vec<Option<usize>>,
}

impl Graph {
    /// The graph of `commits`, which must list every parent before its
    /// children (`git rev-list --topo-order --reverse`); parents outside
    /// the plan are ancestors of good, so good already contains them.
    pub fn new(commits: &[Commit]) -> Graph {
        let index: HashMap<&str, usize> = commits
            .iter()
            .enumerate()
            .map(|(i, c)| (c.hash.as_str(), i))
            .collect();
        let mut ancestors: Vec<Bits> = Vec::with_capacity(commits.len());
        let mut first_parent = Vec::with_capacity(commits.len());
        for (i, commit) in commits.iter().enumerate() {
            let mut own = Bits::empty(commits.len());
            own.insert(i);
            let parents: Vec<usize> = commit
                .parents
                .iter()
                .filter_map(|p| index.get(p.as_str()).copied())
                .filter(|&p| p < i)
                .collect();
            for &p in &parents {
                own.union_with(&ancestors[p]);
            }
            let first = commit.parents.first().and_then(|p| index.get(p.as_str()));
            first_parent.push(first.copied().filter(|&p| p < i));
            ancestors.push(own);
        }
        Graph {
            ancestors,
            first_parent,
        }
    }

    /// Whether `ancestor` is `of` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: usize, of: usize) -> bool {
        self.ancestors[of].contains(ancestor)
    }

    /// The commits that may be the first bad one, given the bad commit
    /// `hi` and the decisions so far: `hi`'s ancestors that no commit
    /// called like-good (or unknown) contains. A like-good commit that
    /// descends from `hi` contradicts it and is left out (noise; the
    /// rechecks deal with it).
    pub fn candidates(&self, hi: usize, decided: &BTreeMap<usize, State>) -> Vec<usize> {
        let mut left = self.ancestors[hi].clone();
        for (&commit, &state) in decided {
            if state != State::LikeBad && !self.is_ancestor(hi, commit) {
                left.remove_all(&self.ancestors[commit]);
            }
        }
        left.indexes().collect()
    }

    /// The next commit to test among `candidates` (those of
    /// [`Graph::candidates`] for `hi`): one `open` for testing whose
    /// ancestors among the candidates come closest to half of them.
    pub fn midpoint(
        &self,
        candidates: &[usize],
        hi: usize,
        open: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let mut set = Bits::empty(self.ancestors.len());
        candidates.iter().for_each(|&c| set.insert(c));
        candidates
            .iter()
            .copied()
            .filter(|&c| c != hi && open(c))
            .min_by_key(|&c| (2 * self.ancestors[c].count_common(&set)).abs_diff(candidates.len()))
    }

    /// The good commit to confirm a culprit `hi` against: along its first
    /// parents, the first one a like-good commit contains (itself
    /// included), past those skipped or never tested; good when the chain
    /// leaves the plan (the culprit forked before good).
    pub fn parent(
        &self,
        hi: usize,
        decided: &BTreeMap<usize, State>,
        skipped: impl Fn(usize) -> bool,
    ) -> usize {
        let contained_by_good = |commit: usize| {
            commit == 0
                || decided.iter().any(|(&g, &s)| {
                    s != State::LikeBad && !self.is_ancestor(hi, g) && self.is_ancestor(commit, g)
                })
        };
        let mut at = self.first_parent[hi];
        while let Some(commit) = at {
            if contained_by_good(commit) {
                return commit;
            }
            if !skipped(commit) && decided.contains_key(&commit) {
                break;
            }
            at = self.first_parent[commit];
        }
        0
    }

    /// The bad commit to search below after a recheck called `end` again:
    /// `end` if it is like-bad now, else the like-bad commit nearest above
    /// it (the one containing it with the fewest ancestors).
    pub fn bad_after_recheck(&self, decided: &BTreeMap<usize, State>, end: usize) -> usize {
        if decided.get(&end) == Some(&State::LikeBad) {
            return end;
        }
        decided
            .iter()
            .filter(|&(&b, &s)| s == State::LikeBad && self.is_ancestor(end, b))
            .min_by_key(|&(&b, _)| {
                self.ancestors[b]
                    .0
                    .iter()
                    .map(|w| w.count_ones())
                    .sum::<u32>()
            })
            .map_or(self.ancestors.len() - 1, |(&b, _)| b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commits named by their index; `parents[i]` lists commit i's.
    fn graph(parents: &[&[usize]]) -> Graph {
        let commits: Vec<Commit> = parents
            .iter()
            .enumerate()
            .map(|(i, ps)| Commit {
                hash: format!("{i}"),
                subject: String::new(),
                parents: ps.iter().map(|p| format!("{p}")).collect(),
            })
            .collect();
        Graph::new(&commits)
    }

    fn linear(n: usize) -> Graph {
        let parents: Vec<Vec<usize>> = (0..n)
            .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
            .collect();
        graph(&parents.iter().map(Vec::as_slice).collect::<Vec<_>>())
    }

    #[test]
    fn on_a_line_it_is_the_binary_search() {
        let g = linear(17);
        let mut decided = BTreeMap::from([(0, State::LikeGood), (16, State::LikeBad)]);
        let candidates = g.candidates(16, &decided);
        assert_eq!(candidates, (1..=16).collect::<Vec<_>>());
        assert_eq!(g.midpoint(&candidates, 16, |_| true), Some(8));
        decided.insert(8, State::LikeGood);
        let candidates = g.candidates(16, &decided);
        assert_eq!(candidates, (9..=16).collect::<Vec<_>>());
        assert_eq!(g.midpoint(&candidates, 16, |_| true), Some(12));
        // A skipped commit is not tested; its neighbour is.
        assert_eq!(g.midpoint(&candidates, 16, |c| c != 12), Some(11));
        assert_eq!(g.parent(9, &decided, |_| false), 8);
        assert_eq!(g.parent(10, &decided, |c| c == 9), 8);
    }

    /// 0 good; 1, 2 on the main line; a branch 3, 4, 5 forked from 1;
    /// 6 merges it (first parent 2); 7 bad.
    fn merged() -> Graph {
        graph(&[&[], &[0], &[1], &[1], &[3], &[4], &[2, 5], &[6]])
    }

    #[test]
    fn the_search_descends_into_a_merged_branch() {
        let g = merged();
        let mut decided = BTreeMap::from([(0, State::LikeGood), (7, State::LikeBad)]);
        let candidates = g.candidates(7, &decided);
        assert_eq!(candidates.len(), 7);
        // 4's ancestors among them are 1, 3, 4: 3 of 7, the closest to half.
        let mid = g.midpoint(&candidates, 7, |_| true).unwrap();
        assert_eq!(mid, 4);
        // 4 is bad: the culprit is 1, 3 or 4, on the branch's line.
        decided.insert(4, State::LikeBad);
        assert_eq!(g.candidates(4, &decided), [1, 3, 4]);
        // The main line's 2 is good: it removes 1, not the branch.
        decided.insert(1, State::LikeGood);
        assert_eq!(g.candidates(4, &decided), [3, 4]);
        decided.insert(3, State::LikeGood);
        assert_eq!(g.candidates(4, &decided), [4]);
        assert_eq!(g.parent(4, &decided, |_| false), 3);
    }

    #[test]
    fn a_good_side_branch_leaves_the_main_line() {
        let g = merged();
        let decided = BTreeMap::from([
            (0, State::LikeGood),
            (5, State::LikeGood),
            (7, State::LikeBad),
        ]);
        // The branch 1, 3, 4, 5 is good: 2, 6 and 7 are left.
        assert_eq!(g.candidates(7, &decided), [2, 6, 7]);
    }

    #[test]
    fn a_culprit_turned_good_moves_up_to_the_bad_commit_above_it() {
        let g = linear(9);
        let mut decided = BTreeMap::from([
            (0, State::LikeGood),
            (4, State::LikeGood),
            (5, State::LikeBad),
            (6, State::LikeBad),
            (8, State::LikeBad),
        ]);
        assert_eq!(g.bad_after_recheck(&decided, 5), 5);
        decided.insert(5, State::LikeGood);
        assert_eq!(g.bad_after_recheck(&decided, 5), 6);
        // A parent turned bad becomes the bad commit; the good below it
        // is the one to confirm against.
        decided.insert(4, State::LikeBad);
        assert_eq!(g.bad_after_recheck(&decided, 4), 4);
        assert_eq!(g.candidates(4, &decided), [1, 2, 3, 4]);
        assert_eq!(g.parent(4, &decided, |_| false), 0);
    }
}
