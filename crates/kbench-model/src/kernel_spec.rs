//! `debian:VERSION`: how a user, a lab job or a bisection names one of
//! Debian's cloud kernels (fetched and cached by kbench-vm).

/// A `debian:VERSION` request: `debian:6.1` means the newest
/// `linux-image-6.1.*-cloud-amd64` apt knows; `debian:6.1.0-57` or
/// `debian:6.12.117+deb12` pick one build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSpec {
    pub version: String,
}

impl KernelSpec {
    /// Reads every one of `texts`, so that a typo in the second fails
    /// before anything is done with the first.
    pub fn parse_all(texts: &[String]) -> Result<Vec<KernelSpec>, String> {
        texts.iter().map(|text| KernelSpec::parse(text)).collect()
    }

    /// Reads `debian:VERSION`; the error says how to write it.
    pub fn parse(text: &str) -> Result<KernelSpec, String> {
        let Some(version) = text.strip_prefix("debian:") else {
            return Err(format!(
                "cannot read the kernel '{text}': write debian:VERSION, e.g. debian:6.1 \
                 (the newest 6.1 cloud kernel apt knows) or debian:6.1.0-57"
            ));
        };
        if version.is_empty() || !version.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "cannot read the kernel '{text}': the version must start with a digit, e.g. debian:6.1"
            ));
        }
        Ok(KernelSpec {
            version: version.to_string(),
        })
    }

    /// Whether the ABI part of a package name ("6.1.0-57", "6.12.117+deb12")
    /// is this version: equal, or it continues after a separator.
    pub fn matches(&self, abi: &str) -> bool {
        abi == self.version
            || abi
                .strip_prefix(&self.version)
                .is_some_and(|rest| rest.starts_with(['.', '-', '+']))
    }
}
