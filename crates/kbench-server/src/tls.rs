//! HTTPS, with rustls: TLS 1.3 only, ring's cryptography, the certificate
//! and key in PEM files ([`TlsFiles`]: `kbench serve --tls-cert
//! --tls-key`). (The client's side, the CAs it trusts, is kbench-fleet's.)

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificates of a PEM file (at least one), or what is wrong.
fn certificates(path: &Path, flag: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let unreadable = |e: rustls::pki_types::pem::Error| {
        format!(
            "{flag} {}: cannot read certificates from it ({e}); give a PEM file",
            path.display()
        )
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(unreadable)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(unreadable)?;
    if certs.is_empty() {
        return Err(format!(
            "{flag} {}: no certificate in it (a PEM file has -----BEGIN CERTIFICATE----- blocks)",
            path.display()
        ));
    }
    Ok(certs)
}

/// The server's certificate chain and private key, PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TlsFiles {
    /// The server's TLS settings; an error names the file and what is
    /// wrong with it.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, String> {
        let certs = certificates(&self.cert, "--tls-cert")?;
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|e| {
            format!(
                "--tls-key {}: cannot read a private key from it ({e}); give the key of \
                 --tls-cert as a PEM file",
                self.key.display()
            )
        })?;
        let config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| {
                format!(
                    "--tls-cert {} and --tls-key {} do not make a certificate and its key ({e})",
                    self.cert.display(),
                    self.key.display()
                )
            })?;
        Ok(Arc::new(config))
    }
}
