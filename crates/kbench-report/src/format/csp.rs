//! Content-Security-Policies for kbench's pages and pictures: nothing is
//! loaded from anywhere, and the only inline CSS and script allowed are the
//! page's own, named by their SHA-256 hashes (no `'unsafe-inline'`, so
//! markup that slipped into a page could not run a script of its own).

use sha2::{Digest, Sha256};

/// `'sha256-…'`: the policy source that allows exactly the inline
/// `<style>` or `<script>` element whose content is `text`.
pub fn hash_source(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// A policy allowing the inline `<style>` elements `styles` and `<script>`
/// elements `scripts` (their exact contents) and `data:` images, nothing
/// else: no `<base>`, and forms sent only to `form_action` (`'none'`,
/// `'self'`).
pub fn policy(styles: &[&str], scripts: &[&str], form_action: &str) -> String {
    let sources = |texts: &[&str]| {
        if texts.is_empty() {
            "'none'".to_string()
        } else {
            let hashes: Vec<String> = texts.iter().map(|t| hash_source(t)).collect();
            hashes.join(" ")
        }
    };
    format!(
        "default-src 'none'; style-src {}; script-src {}; img-src data:; base-uri 'none'; \
         form-action {form_action}",
        sources(styles),
        sources(scripts)
    )
}

/// Standard base64 with padding (RFC 4648), as CSP hashes are written.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let word = chunk
            .iter()
            .enumerate()
            .fold(0u32, |word, (i, b)| word | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                char::from(ALPHABET[(word >> (18 - 6 * i) & 63) as usize])
            } else {
                '='
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_base64_sha256() {
        // `printf '' | openssl dgst -sha256 -binary | base64` and the same
        // of "abc": the standard test vectors.
        assert_eq!(
            hash_source(""),
            "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
        );
        assert_eq!(
            hash_source("abc"),
            "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='"
        );
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
    }

    #[test]
    fn policies_name_only_the_given_inline_elements() {
        let policy = policy(&["a", "b"], &[], "'self'");
        assert!(!policy.contains("unsafe"), "{policy}");
        assert!(policy.contains(&format!(
            "style-src {} {};",
            hash_source("a"),
            hash_source("b")
        )));
        assert!(policy.contains("script-src 'none';"), "{policy}");
        assert!(policy.ends_with("form-action 'self'"), "{policy}");
    }
}
