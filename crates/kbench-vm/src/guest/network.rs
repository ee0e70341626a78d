//! The guest's network: the loopback interface (the TCP/UDP benchmarks use
//! 127.0.0.1), and, for a console guest that pushes its results, its
//! card (virtio-net) with a static address and a default route, set with
//! the kernel's own ioctls: the initramfs has no `ip` and no DHCP client.

use std::io::{Error, Result};
use std::net::Ipv4Addr;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long the card may take to appear once its driver is loaded.
const CARD_WAIT: Duration = Duration::from_secs(10);

/// `ip link set lo up`.
pub(super) fn loopback_up() -> Result<()> {
    with_interface("lo", set_up)
}

/// Gives the first card `address`/`prefix` and, with a `gateway`, the
/// default route through it; the card's name.
pub(super) fn card_up(address: Ipv4Addr, prefix: u8, gateway: Option<Ipv4Addr>) -> Result<String> {
    let card = wait_for_card()?;
    let mask = Ipv4Addr::from(u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0));
    with_interface(&card, |fd, request| {
        for (call, value) in [(libc::SIOCSIFADDR, address), (libc::SIOCSIFNETMASK, mask)] {
            // SAFETY: `ifru_addr` is a sockaddr, as large as a sockaddr_in.
            unsafe { write_sockaddr(&mut request.ifr_ifru.ifru_addr, value) };
            // SAFETY: `request` names the card and holds the address.
            if unsafe { libc::ioctl(fd, call, &*request) } < 0 {
                return Err(Error::last_os_error());
            }
        }
        set_up(fd, request)?;
        let Some(gateway) = gateway else {
            return Ok(());
        };
        // SAFETY: `rtentry` is plain C data, valid when zeroed (the
        // default destination and mask, 0.0.0.0/0).
        let mut route: libc::rtentry = unsafe { std::mem::zeroed() };
        // SAFETY: each field is a sockaddr.
        unsafe {
            write_sockaddr(&mut route.rt_dst, Ipv4Addr::UNSPECIFIED);
            write_sockaddr(&mut route.rt_genmask, Ipv4Addr::UNSPECIFIED);
            write_sockaddr(&mut route.rt_gateway, gateway);
        }
        route.rt_flags = libc::RTF_UP | libc::RTF_GATEWAY;
        // SAFETY: `route` is a complete rtentry.
        match unsafe { libc::ioctl(fd, libc::SIOCADDRT, &route) } {
            0 => Ok(()),
            _ => Err(Error::last_os_error()),
        }
    })?;
    Ok(card)
}

/// The first network card (an interface with a device: not the loopback,
/// nor a virtual one the kernel makes, such as sit0), once it is there.
fn wait_for_card() -> Result<String> {
    let started = Instant::now();
    loop {
        let mut cards: Vec<String> = std::fs::read_dir("/sys/class/net")?
            .flatten()
            .filter(|entry| entry.path().join("device").exists())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        cards.sort();
        if let Some(card) = cards.into_iter().next() {
            return Ok(card);
        }
        if started.elapsed() > CARD_WAIT {
            return Err(Error::other(format!(
                "no network card appeared within {} s (the driver of qemu's card, virtio_net, is \
                 {}; a board's card needs its driver built into the kernel)",
                CARD_WAIT.as_secs(),
                match Path::new("/sys/module/virtio_net").exists() {
                    true => "loaded",
                    false => "not loaded",
                }
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `body` with a socket and an `ifreq` naming `name`.
fn with_interface(
    name: &str,
    body: impl FnOnce(i32, &mut libc::ifreq) -> Result<()>,
) -> Result<()> {
    // SAFETY: plain socket call; the descriptor is closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(Error::last_os_error());
    }
    // SAFETY: `ifreq` is plain C data, valid when zeroed.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    let bytes = name.as_bytes();
    for (slot, byte) in request.ifr_name.iter_mut().zip(bytes.iter().take(15)) {
        *slot = *byte as libc::c_char;
    }
    let result = body(fd, &mut request);
    // SAFETY: `fd` is ours and open.
    unsafe { libc::close(fd) };
    result
}

/// Sets the interface `request` names up.
fn set_up(fd: i32, request: &mut libc::ifreq) -> Result<()> {
    // SAFETY: `request` names the interface; the ioctls read and write
    // its flags.
    unsafe {
        if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut *request) < 0 {
            return Err(Error::last_os_error());
        }
        request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(fd, libc::SIOCSIFFLAGS, &*request) < 0 {
            return Err(Error::last_os_error());
        }
    }
    Ok(())
}

/// Writes `address` into `slot` as an AF_INET sockaddr_in.
///
/// # Safety
/// `slot` must be a `sockaddr` (16 bytes, as a `sockaddr_in`).
unsafe fn write_sockaddr(slot: &mut libc::sockaddr, address: Ipv4Addr) {
    let inet = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(address).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: both are 16 bytes; the caller vouches for `slot`.
    unsafe {
        std::ptr::write(
            (slot as *mut libc::sockaddr).cast::<libc::sockaddr_in>(),
            inet,
        )
    };
}
