//! The certificate authorities an `https://` lab server's certificate must
//! be signed by: `KBENCH_CA_CERT`, else the system's bundle. TLS 1.3 only,
//! ring's cryptography, as the server (kbench-server's `tls`).

use crate::FleetError;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::{self, PemObject};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Names the PEM file of the CAs a client trusts.
pub const CA_ENV: &str = "KBENCH_CA_CERT";

/// The system's CA bundle (Debian's `ca-certificates`), trusted when
/// [`CA_ENV`] is unset.
pub const SYSTEM_CAS: &str = "/etc/ssl/certs/ca-certificates.crt";

/// The certificate authorities a client trusts for `https://` servers.
#[derive(Clone)]
pub struct Trust {
    pub(crate) config: Arc<rustls::ClientConfig>,
    /// The PEM file they came from, for messages.
    pub(crate) source: PathBuf,
}

impl Trust {
    /// The CAs of the PEM file `path`.
    pub fn from_file(path: &Path) -> Result<Trust, FleetError> {
        let unusable =
            |why: String| FleetError::Setup(format!("{CA_ENV} {}: {why}", path.display()));
        let unreadable = |e: pem::Error| {
            unusable(format!(
                "cannot read certificates from it ({e}); give a PEM file"
            ))
        };
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(unreadable)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(unreadable)?;
        if certs.is_empty() {
            return Err(unusable(
                "no certificate in it (a PEM file has -----BEGIN CERTIFICATE----- blocks)".into(),
            ));
        }
        let mut roots = rustls::RootCertStore::empty();
        if roots.add_parsable_certificates(certs).0 == 0 {
            return Err(unusable(
                "none of its certificates is a usable CA certificate".into(),
            ));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| FleetError::Setup(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Trust {
            config: Arc::new(config),
            source: path.to_path_buf(),
        })
    }

    /// The CAs of `$KBENCH_CA_CERT`, else of the system's bundle.
    pub fn from_env() -> Result<Trust, FleetError> {
        match std::env::var_os(CA_ENV).filter(|path| !path.is_empty()) {
            Some(path) => Trust::from_file(Path::new(&path)),
            None => Trust::from_file(Path::new(SYSTEM_CAS)).map_err(|e| {
                FleetError::Setup(format!(
                    "{e}; set {CA_ENV} to the PEM file of the CA that signed the lab server's \
                     certificate"
                ))
            }),
        }
    }
}

impl fmt::Debug for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Trust").field(&self.source).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_ca_certificates_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "not a certificate\n").unwrap();
        let error = Trust::from_file(&junk).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("{CA_ENV} {}: no certificate", junk.display())),
            "{error}"
        );
        let missing = dir.path().join("missing.pem");
        let error = Trust::from_file(&missing).unwrap_err().to_string();
        assert!(error.contains("cannot read certificates"), "{error}");
    }
}
