//! What two families share that is not an OS helper: workloads timed by
//! more than one family, and the `placement` and `mode` options. No `BENCHES` here;
//! it imports `sys` and the crate's root types, never a family.

pub(crate) mod mode;
pub(crate) mod pair;
pub(crate) mod placement;
pub(crate) mod spawn;
