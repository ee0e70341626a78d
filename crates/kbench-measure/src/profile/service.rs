//! A profile's service (redis-server, nginx, postgres, an iperf3 server):
//! started on a free loopback port, waited for until it accepts connections
//! (or its `ready` command succeeds) within its timeout, and stopped with
//! its whole process group when dropped. A port already taken is reported
//! for a fixed port and avoided for a picked one (the service is started
//! again on another port when it says the address is in use).

use super::command::{self, Ended, Group, Shell, User};
use kbench_catalog::profile::spec::ServiceSpec;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Attempts on picked ports before giving up.
const ATTEMPTS: usize = 3;
/// How long a `ready` command may take.
const READY_COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// A running service; dropping it stops it.
#[derive(Debug)]
pub struct Service {
    group: Group,
    pub port: u16,
    stop_signal: libc::c_int,
}

impl Service {
    /// The service's exit status once it has ended.
    pub fn try_status(&mut self) -> Option<std::process::ExitStatus> {
        self.group.try_status()
    }

    /// What it wrote so far.
    pub fn output(&self) -> command::Output {
        self.group.output()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.group.stop(self.stop_signal);
    }
}

/// Why a service is not running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartError {
    Interrupted,
    Failed(String),
}

/// What starting a service needs from the test around it.
pub struct Start<'a> {
    pub spec: &'a ServiceSpec,
    pub shell: &'a Shell,
    /// The user to run as (`run_as`, when kbench runs as root).
    pub user: Option<&'a User>,
    /// Renders a shell template with `{port}` set to the given port.
    pub render: &'a dyn Fn(&str, u16) -> Result<String, String>,
    /// Writes the profile's files for the given port.
    pub write_files: &'a dyn Fn(u16) -> Result<(), String>,
    /// How long `setup` may take.
    pub setup_timeout: Duration,
    pub interrupted: &'a dyn Fn() -> bool,
}

/// A free TCP port on 127.0.0.1 (the kernel picks it).
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// Fails when something already listens on 127.0.0.1:`port`.
pub fn check_free(port: u16) -> Result<(), String> {
    match TcpListener::bind((Ipv4Addr::LOCALHOST, port)) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AddrInUse => Err(format!(
            "port {port} on 127.0.0.1 is already in use by another process; stop it, or \
             remove `port` from the profile's [service] so kbench picks a free port"
        )),
        Err(error) => Err(format!("cannot check port {port} on 127.0.0.1: {error}")),
    }
}

/// Whether a TCP connection to 127.0.0.1:`port` is accepted.
pub fn accepts(port: u16) -> bool {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok()
}

/// Starts the service: setup once, then the command on a port until it is
/// ready (another picked port when the first is taken).
pub fn start(start: &Start) -> Result<Service, StartError> {
    let failed = |message: String| StartError::Failed(message);
    let mut port = match start.spec.port {
        Some(port) => {
            check_free(port).map_err(failed)?;
            port
        }
        None => free_port().map_err(|e| failed(format!("cannot find a free port: {e}")))?,
    };
    (start.write_files)(port).map_err(failed)?;
    if let Some(setup) = &start.spec.setup {
        let script = (start.render)(setup, port).map_err(failed)?;
        run_setup(start, &script)?;
    }
    let mut attempts = 1;
    loop {
        match launch(start, port)? {
            Launch::Ready(service) => return Ok(service),
            Launch::PortTaken(message) => {
                // Taken between picking and binding: pick again.
                if start.spec.port.is_some() || attempts == ATTEMPTS {
                    return Err(failed(message));
                }
                attempts += 1;
                port = free_port().map_err(|e| failed(format!("cannot find a free port: {e}")))?;
                (start.write_files)(port).map_err(failed)?;
            }
        }
    }
}

fn run_setup(start: &Start, script: &str) -> Result<(), StartError> {
    let ran = start
        .shell
        .run(
            script,
            "service-setup",
            start.user,
            start.setup_timeout,
            start.interrupted,
        )
        .map_err(|e| StartError::Failed(format!("cannot run the service's setup: {e}")))?;
    match ran {
        (Ended::Exited { status, .. }, _) if status.success() => Ok(()),
        (Ended::Exited { status, .. }, output) => Err(StartError::Failed(format!(
            "the service's setup `{script}` {}; its last output:\n{}",
            command::describe(status),
            output.tail(10)
        ))),
        (Ended::TimedOut, output) => Err(StartError::Failed(format!(
            "the service's setup `{script}` was still running after {:?} and was killed; its last output:\n{}",
            start.setup_timeout,
            output.tail(10)
        ))),
        (Ended::Interrupted, _) => Err(StartError::Interrupted),
        (Ended::OutOfMemory, output) => Err(StartError::Failed(format!(
            "the service's setup `{script}` {}; its last output:\n{}",
            command::OUT_OF_MEMORY,
            output.tail(10)
        ))),
    }
}

enum Launch {
    Ready(Service),
    /// The service ended saying its address is in use.
    PortTaken(String),
}

fn launch(start: &Start, port: u16) -> Result<Launch, StartError> {
    let failed = |message: String| StartError::Failed(message);
    let command = (start.render)(&start.spec.command, port).map_err(failed)?;
    let ready = start
        .spec
        .ready
        .as_ref()
        .map(|r| (start.render)(r, port))
        .transpose()
        .map_err(failed)?;
    let group = start
        .shell
        .spawn(&format!("exec {command}"), "service", start.user)
        .map_err(|e| failed(format!("cannot start the service `{command}`: {e}")))?;
    let mut service = Service {
        group,
        port,
        stop_signal: start.spec.stop_signal.number(),
    };
    let deadline = Instant::now() + start.spec.ready_timeout;
    loop {
        if (start.interrupted)() {
            return Err(StartError::Interrupted);
        }
        if let Some(status) = service.group.try_status() {
            let output = service.group.output();
            let text = format!("{}\n{}", output.stdout, output.stderr).to_lowercase();
            let message = format!(
                "the service `{command}` {} before it was ready on 127.0.0.1:{port}; its last output:\n{}",
                command::describe(status),
                output.tail(10)
            );
            return if text.contains("in use") || text.contains("eaddrinuse") {
                Ok(Launch::PortTaken(message))
            } else {
                Err(failed(message))
            };
        }
        let is_ready = match &ready {
            None => accepts(port),
            Some(script) => matches!(
                start.shell.run(script, "service-ready", None, READY_COMMAND_TIMEOUT, start.interrupted),
                Ok((Ended::Exited { status, .. }, _)) if status.success()
            ),
        };
        if is_ready {
            return Ok(Launch::Ready(service));
        }
        if Instant::now() >= deadline {
            let output = service.group.output();
            let how = match &ready {
                None => format!("accept connections on 127.0.0.1:{port}"),
                Some(script) => format!("pass its readiness check `{script}`"),
            };
            return Err(failed(format!(
                "the service `{command}` did not {how} within {:?} and was stopped; its last output:\n{}",
                start.spec.ready_timeout,
                output.tail(10)
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::command::tests::shell;
    use kbench_catalog::profile::spec::StopSignal;

    fn spec(command: &str) -> ServiceSpec {
        ServiceSpec {
            command: command.into(),
            setup: None,
            ready: None,
            run_as: None,
            port: None,
            ready_timeout: Duration::from_millis(800),
            stop_signal: StopSignal::Term,
        }
    }

    fn try_start(spec: &ServiceSpec, dir: &std::path::Path) -> Result<Service, StartError> {
        let shell = shell(dir);
        start(&Start {
            spec,
            shell: &shell,
            user: None,
            render: &|text, port| Ok(text.replace("{port}", &port.to_string())),
            write_files: &|_| Ok(()),
            setup_timeout: Duration::from_secs(5),
            interrupted: &|| false,
        })
    }

    #[test]
    fn a_taken_fixed_port_is_reported() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let error = check_free(port).unwrap_err();
        assert!(
            error.contains(&format!("port {port}")) && error.contains("in use"),
            "{error}"
        );
        let dir = tempfile::tempdir().unwrap();
        let mut fixed = spec("sleep 30");
        fixed.port = Some(port);
        match try_start(&fixed, dir.path()) {
            Err(StartError::Failed(message)) => assert!(message.contains("in use"), "{message}"),
            other => panic!("{other:?}"),
        }
        assert!(free_port().unwrap() != port);
    }

    #[test]
    fn a_service_that_never_listens_is_stopped_at_its_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        match try_start(&spec("sh -c 'echo starting; sleep 30'"), dir.path()) {
            Err(StartError::Failed(message)) => {
                assert!(message.contains("did not accept connections"), "{message}");
                assert!(message.contains("starting"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(4));
    }

    #[test]
    fn a_service_that_dies_shows_its_output() {
        let dir = tempfile::tempdir().unwrap();
        match try_start(&spec("sh -c 'echo no config >&2; exit 4'"), dir.path()) {
            Err(StartError::Failed(message)) => {
                assert!(message.contains("exited with status 4"), "{message}");
                assert!(message.contains("no config"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_ready_command_decides_readiness() {
        let dir = tempfile::tempdir().unwrap();
        let mut ready = spec("sleep 30");
        ready.ready = Some("test -e flag || { touch flag; false; }".into());
        let service = try_start(&ready, dir.path()).unwrap();
        let pid = service.group.pid();
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
        drop(service);
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(state.is_empty() || state.contains(") Z"), "{state}");
    }
}
