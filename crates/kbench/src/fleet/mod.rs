//! The client side of the shared lab (`kbench serve`, docs/api.md): the
//! API client with its retries ([`api`]), the live upload of a run as it
//! goes on ([`mirror`], batched by [`batch`]), and the worker that runs
//! the lab's jobs ([`worker`]).

pub mod api;
pub mod batch;
pub mod mirror;
pub mod worker;

use crate::cli::UploadArgs;
use api::Api;

/// The server `--upload` names, its token checked (`GET /api/v1/token`)
/// before anything is measured; `None` without `--upload`.
pub fn upload_target(args: &UploadArgs) -> anyhow::Result<Option<Api>> {
    let Some(url) = &args.upload else {
        return Ok(None);
    };
    let api = Api::new(url, args.token.as_deref())?.with_short_timeouts();
    let name = api.check_token()?;
    eprintln!(
        "Uploading to {} as token '{name}'; the local database keeps every sample too.",
        api.url
    );
    Ok(Some(api))
}
