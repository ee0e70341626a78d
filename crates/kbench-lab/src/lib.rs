//! kbench-lab
