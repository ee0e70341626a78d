//! API tokens: a random 32-byte secret shown once, stored as its SHA-256.

use sha2::{Digest, Sha256};
use std::io::Read;

/// Prefix of every secret, so a leaked one is recognisable.
pub const PREFIX: &str = "kbt_";

/// A new secret: `kbt_` and 32 bytes from /dev/urandom in hex.
pub fn new_secret() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(format!("{PREFIX}{}", hex(&bytes)))
}

pub use kbench_model::random_id;

/// SHA-256 of `data`, in hex.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The token of an `Authorization: Bearer TOKEN` header value.
pub fn bearer(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_random_and_hashed() {
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), PREFIX.len() + 64);
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(bearer("Bearer  x "), Some("x"));
        assert_eq!(bearer("Basic x"), None);
        assert_eq!(bearer("Bearer"), None);
    }
}
