//! HTTPS, with rustls: TLS 1.3 only, ring's cryptography, certificates
//! and keys in PEM files. The server's side is [`TlsFiles`] (`kbench serve
//! --tls-cert --tls-key`); the client's is [`Trust`], the certificate
//! authorities an `https://` server's certificate must be signed by
//! (`KBENCH_CA_CERT`, else the system's bundle).

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Names the PEM file of the CAs a client trusts.
pub const CA_ENV: &str = "KBENCH_CA_CERT";

/// The system's CA bundle (Debian's `ca-certificates`), trusted when
/// [`CA_ENV`] is unset.
pub const SYSTEM_CAS: &str = "/etc/ssl/certs/ca-certificates.crt";

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

/// The certificate authorities a client trusts for `https://` servers.
#[derive(Clone)]
pub struct Trust {
    pub(crate) config: Arc<rustls::ClientConfig>,
    /// The PEM file they came from, for messages.
    pub(crate) source: PathBuf,
}

impl Trust {
    /// The CAs of the PEM file `path`.
    pub fn from_file(path: &Path) -> Result<Trust, String> {
        let mut roots = rustls::RootCertStore::empty();
        let (added, _) = roots.add_parsable_certificates(certificates(path, CA_ENV)?);
        if added == 0 {
            return Err(format!(
                "{CA_ENV} {}: none of its certificates is a usable CA certificate",
                path.display()
            ));
        }
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Trust {
            config: Arc::new(config),
            source: path.to_path_buf(),
        })
    }

    /// The CAs of `$KBENCH_CA_CERT`, else of the system's bundle.
    pub fn from_env() -> Result<Trust, String> {
        match std::env::var_os(CA_ENV).filter(|path| !path.is_empty()) {
            Some(path) => Trust::from_file(Path::new(&path)),
            None => Trust::from_file(Path::new(SYSTEM_CAS)).map_err(|e| {
                format!(
                    "{e}; set {CA_ENV} to the PEM file of the CA that signed the lab server's \
                     certificate"
                )
            }),
        }
    }
}

impl fmt::Debug for Trust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Trust").field(&self.source).finish()
    }
}
