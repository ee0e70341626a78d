//! The `mode` option's words, of the families whose tasks are forked
//! processes or threads of one process (scale, and stress's hackbench);
//! each family says in its help what a task is in either mode.

use crate::OptionKind;

/// `process` or `thread`.
pub(crate) const MODES: OptionKind = OptionKind::Choice(&["process", "thread"]);
