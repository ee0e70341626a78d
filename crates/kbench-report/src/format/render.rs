//! What every renderer implements: [`Render`], which lays out one report
//! model, and the [`Style`] it may dress its output in.

/// How a format may dress its output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// ANSI colours (only when writing to a terminal).
    pub color: bool,
    /// List every metric, NO CHANGE included, rather than only count those
    /// (`kbench compare --all-rows`; the regressions format).
    pub all_rows: bool,
}

/// Lays out one report model `R` as text (a document, a page, a picture).
pub trait Render<R>: Sync {
    fn render(&self, report: &R, style: Style) -> String;
}
