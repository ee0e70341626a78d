//! kbench-stats
