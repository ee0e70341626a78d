//! Work shared across the machine's cores: reports whose items (metrics)
//! are independent build them on every core, and get them back in order,
//! so the result is the same as built one by one.

use std::num::NonZeroUsize;
use std::thread;

/// `f` of every item, in order, computed on up to as many threads as the
/// machine has cores, each taking one contiguous share of the items.
pub(crate) fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let share = items.len().div_ceil(threads).max(1);
    if threads == 1 || items.len() <= share {
        return items.iter().map(f).collect();
    }
    let f = &f;
    thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(share)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("a report worker panicked"))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_back_in_order() {
        let items: Vec<u64> = (0..1001).collect();
        assert_eq!(
            super::map(&items, |x| x * x),
            items.iter().map(|x| x * x).collect::<Vec<_>>()
        );
        assert_eq!(super::map(&[] as &[u64], |x| *x), Vec::<u64>::new());
    }
}
