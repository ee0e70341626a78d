//! A tiny escaping template layer for the html and svg formats (and the
//! pages of `kbench serve`'s dashboard).
//!
//! [`Markup`] is text that may go into an HTML or SVG document as it is. It
//! is built only from `&'static str` templates (written in this crate, so
//! trusted) whose `{{name}}` placeholders are filled by [`fill`] (or the
//! [`markup!`] macro), and every filled value goes through [`Value`]: a
//! plain string is escaped, a `Markup` is kept. A user string (identifier,
//! test name, system fact) therefore can only reach a page as text. The
//! escaping is XML's (`& < > " '`), valid in HTML text, attribute values and
//! SVG alike; characters XML 1.0 forbids even as references (most control
//! characters) become U+FFFD so that a standalone SVG always parses.

use std::fmt::Write;

/// Text that is safe to put into an HTML or SVG document as is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Markup(String);

impl Markup {
    pub fn new() -> Markup {
        Markup(String::new())
    }

    /// Trusted markup written in this crate (a tag, a template).
    pub fn raw(text: &'static str) -> Markup {
        Markup(text.to_string())
    }

    /// `text` escaped.
    pub fn text(text: &str) -> Markup {
        let mut out = Markup::new();
        out.push_text(text);
        out
    }

    pub fn push(&mut self, other: &Markup) {
        self.0.push_str(&other.0);
    }

    /// Appends `text` escaped.
    pub fn push_text(&mut self, text: &str) {
        escape_into(&mut self.0, text);
    }

    /// Appends any renderable value (escaped unless it is markup).
    pub fn push_value(&mut self, value: &dyn Value) {
        value.render(&mut self.0);
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pieces one after the other.
    pub fn concat<I: IntoIterator<Item = Markup>>(pieces: I) -> Markup {
        let mut out = Markup::new();
        for piece in pieces {
            out.push(&piece);
        }
        out
    }
}

/// A value a template placeholder can take.
pub trait Value {
    fn render(&self, out: &mut String);
}

impl Value for Markup {
    fn render(&self, out: &mut String) {
        out.push_str(&self.0);
    }
}

impl Value for str {
    fn render(&self, out: &mut String) {
        escape_into(out, self);
    }
}

impl Value for String {
    fn render(&self, out: &mut String) {
        escape_into(out, self);
    }
}

impl<T: Value + ?Sized> Value for &T {
    fn render(&self, out: &mut String) {
        (**self).render(out);
    }
}

impl Value for usize {
    fn render(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

/// A coordinate or length: at most one decimal, no trailing zeros, and
/// never "NaN" or "inf" in a document (0 instead).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Px(pub f64);

impl std::fmt::Display for Px {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = if self.0.is_finite() { self.0 } else { 0.0 };
        let tenths = (v * 10.0).round() as i64;
        if tenths < 0 {
            f.write_str("-")?;
        }
        let abs = tenths.unsigned_abs();
        write!(f, "{}", abs / 10)?;
        if !abs.is_multiple_of(10) {
            write!(f, ".{}", abs % 10)?;
        }
        Ok(())
    }
}

impl Value for Px {
    fn render(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// `template` with every `{{name}}` replaced by the value given for `name`.
///
/// Panics when a placeholder has no value or a value no placeholder: both
/// are mistakes in this crate's templates, which the tests render.
pub fn fill(template: &'static str, values: &[(&str, &dyn Value)]) -> Markup {
    let mut out = String::with_capacity(template.len() + 64);
    let mut used = vec![false; values.len()];
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .unwrap_or_else(|| panic!("unclosed placeholder in template: {template}"));
        let name = &after[..end];
        let index = values
            .iter()
            .position(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no value for {{{{{name}}}}} in template: {template}"));
        used[index] = true;
        values[index].1.render(&mut out);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    if let Some(unused) = used.iter().position(|u| !u) {
        panic!(
            "value '{}' has no placeholder in template: {template}",
            values[unused].0
        );
    }
    Markup(out)
}

/// `markup!("<b>{{name}}</b>", name = value)`: [`fill`] with named values.
/// Exported for the pages of `kbench serve`'s dashboard.
#[macro_export]
macro_rules! markup {
    ($template:expr $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::markup::fill(
            $template,
            &[$((stringify!($name), &$value as &dyn $crate::markup::Value)),*],
        )
    };
}
pub use markup;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_user_text_and_keeps_markup() {
        let evil = "<script>alert('x')</script> & \"q\"";
        let m = markup!(
            "<td title=\"{{t}}\">{{t}}{{b}}</td>",
            t = evil,
            b = Markup::raw("<br>")
        );
        assert_eq!(
            m.as_str(),
            "<td title=\"&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;\">\
             &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;<br></td>"
        );
        assert!(!m.as_str().contains("<script"));
    }

    #[test]
    fn control_characters_cannot_break_xml() {
        assert_eq!(
            Markup::text("a\u{1}b\u{FFFF}\tc").as_str(),
            "a\u{FFFD}b\u{FFFD}\tc"
        );
    }

    #[test]
    fn coordinates_are_short() {
        let s = |v: f64| Px(v).to_string();
        assert_eq!(s(12.0), "12");
        assert_eq!(s(12.34), "12.3");
        assert_eq!(s(-0.04), "0");
        assert_eq!(s(-3.25), "-3.3");
        assert_eq!(s(f64::NAN), "0");
        assert_eq!(s(f64::INFINITY), "0");
    }

    #[test]
    #[should_panic(expected = "no value for {{y}}")]
    fn a_missing_value_is_a_bug() {
        let _ = markup!("{{x}}{{y}}", x = "1");
    }

    #[test]
    #[should_panic(expected = "value 'z' has no placeholder")]
    fn an_unused_value_is_a_bug() {
        let _ = markup!("{{x}}", x = "1", z = "2");
    }
}
