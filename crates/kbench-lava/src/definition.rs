//! The LAVA job definition of a comparison, as LAVA's schema
//! (`lava_common.schemas`) wants it: for each boot, in its own namespace,
//! a `deploy`, a `boot` and a `test` of two monitors that turn the guest's
//! summary lines into test cases: the measured ones with their median and
//! unit, then the failed and skipped ones. On LAVA's qemu device the
//! deploy puts the kernel, the boot's initramfs and the rootfs profile
//! tests run in (a fresh copy per boot) `to: tmpfs` and qemu boots them;
//! on a board the deploy puts the kernel, initramfs and device tree
//! `to: tftp` and the board's U-Boot loads and boots them, every boot on
//! the first boot's serial connection.

use crate::yaml::{Entries, Node, entries, map, text};
use kbench_measure::plan::SamplingPlan;
use kbench_model::TestKey;
use kbench_vm::console_frames::{BEGIN, CASE, END, FAILURES_BEGIN, FAILURES_END};
use kbench_vm::kernel_image::ImageArch;
use serde::Serialize;

/// How the device boots each kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BootMethod {
    /// LAVA's `qemu` device type: qemu boots the files deployed to tmpfs.
    Qemu,
    /// A board whose U-Boot loads the kernel (an arm64 Image, `booti`),
    /// the initramfs (with U-Boot's legacy header) and the device tree
    /// from the worker's TFTP server: LAVA's `commands: ramdisk`.
    UBoot,
}

/// The job's settings besides its boots.
#[derive(Debug, Clone)]
pub struct Settings {
    /// LAVA's device type (`qemu` on a lab's qemu workers).
    pub device_type: String,
    pub method: BootMethod,
    pub job_name: Option<String>,
    /// Minutes a boot may take to reach kbench (deploy included).
    pub boot_minutes: u32,
    /// Minutes one boot's tests may take; default: from the sampling plan.
    pub test_minutes: Option<u32>,
    /// Whether the guests push their boots to a kbench server after their
    /// tests (in the test's time).
    pub pushes: bool,
    /// More of the job's `context` (`KEY=VALUE`), as the device's
    /// template reads it.
    pub context: Vec<(String, String)>,
}

/// The machine each boot asks for: the kernels' architecture, and the
/// guest's CPUs and memory (`-smp`, the context's `memory`).
#[derive(Debug, Clone, Copy)]
pub struct Machine {
    pub arch: ImageArch,
    pub cpus: u32,
    pub memory_mib: u32,
}

/// One boot as planned: its identifier and the URLs of its kernel and
/// initramfs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedBoot {
    pub boot: u32,
    pub identifier: String,
    /// The release its kernel reports, when the image says.
    pub release: Option<String>,
    pub kernel_url: String,
    pub initrd_url: String,
    /// The rootfs (qcow2) its profile tests run in, if they need one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rootfs_url: Option<String>,
    /// The device tree a board's U-Boot gives the kernel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtb_url: Option<String>,
}

/// The namespace of boot `boot` (from 1): its actions, and its results in
/// LAVA's logs.
pub fn namespace(boot: u32) -> String {
    format!("boot{boot}")
}

/// The whole job definition.
pub fn job(
    machine: &Machine,
    settings: &Settings,
    boots: &[PlannedBoot],
    tests: &[TestKey],
    plan: &SamplingPlan,
) -> Node {
    let test_minutes = settings.test_minutes.unwrap_or_else(|| {
        let push = if settings.pushes { PUSH_MINUTES } else { 0 };
        estimated_test_minutes(tests.len(), plan) + push
    });
    // Each boot: deploy and boot within `boot_minutes`, then its tests.
    let job_minutes = boots.len() as u32 * (settings.boot_minutes + test_minutes) + 5;
    let mut distinct: Vec<&str> = Vec::new();
    for boot in boots {
        if !distinct.contains(&boot.identifier.as_str()) {
            distinct.push(&boot.identifier);
        }
    }
    let name = settings.job_name.clone().unwrap_or_else(|| {
        format!(
            "kbench: {} ({} boots, alternating)",
            distinct.join(" vs "),
            boots.len()
        )
    });
    let metadata = boots
        .iter()
        .map(|b| (format!("kbench.{}", namespace(b.boot)), text(&b.identifier)))
        .collect();
    let actions = boots
        .iter()
        .flat_map(|b| boot_actions(b, settings, test_minutes))
        .collect();
    map([
        ("device_type", text(&settings.device_type)),
        ("job_name", text(name)),
        (
            "timeouts",
            map([
                ("job", minutes(job_minutes)),
                ("action", minutes(settings.boot_minutes.max(test_minutes))),
                ("connection", minutes(2)),
            ]),
        ),
        ("priority", text("medium")),
        ("visibility", text("public")),
        ("context", context(machine, settings)),
        ("metadata", Node::Map(metadata)),
        ("actions", Node::List(actions)),
    ])
}

/// Minutes a guest's push may add to its tests: its card, the server's
/// token check and the upload's drain (at most a minute).
const PUSH_MINUTES: u32 = 2;

/// Minutes for one boot's tests: each may sample for the plan's time
/// budget (its calibration included), plus the snapshot and a margin.
fn estimated_test_minutes(tests: usize, plan: &SamplingPlan) -> u32 {
    let seconds = tests as f64 * (plan.max_time.as_secs_f64() + 15.0) + 60.0;
    (seconds / 60.0).ceil() as u32
}

/// The context the device's template is rendered with: the qemu
/// device's ([`qemu_context`]; a board's dictionary has its own console
/// and command line), then the user's.
fn context(machine: &Machine, settings: &Settings) -> Node {
    let mut pairs = match settings.method {
        BootMethod::Qemu => qemu_context(machine),
        BootMethod::UBoot => Entries::new(),
    };
    for (key, value) in &settings.context {
        pairs.retain(|(k, _)| k != key);
        pairs.push((key.clone(), text(value)));
    }
    Node::Map(pairs)
}

/// What LAVA's qemu device type reads from the context: the
/// architecture, a user-mode network, the memory, and the CPUs and
/// kernel command line as extra options.
fn qemu_context(machine: &Machine) -> Entries {
    let console = kbench_vm::qemu::console(machine.arch);
    entries([
        ("arch", text(machine.arch.debian())),
        ("netdevice", text("user")),
        ("memory", Node::Number(machine.memory_mib.into())),
        (
            "extra_options",
            Node::List(vec![
                text(format!("-smp {}", machine.cpus)),
                text(format!("-append \"console={console} rdinit=/init\"")),
            ]),
        ),
    ])
}

fn minutes(count: u32) -> Node {
    map([("minutes", Node::Number(count.into()))])
}

/// A boot's deploy, boot and test actions.
fn boot_actions(boot: &PlannedBoot, settings: &Settings, test_minutes: u32) -> [Node; 3] {
    let namespace = || ("namespace", text(namespace(boot.boot)));
    let (deploy, start) = match settings.method {
        BootMethod::Qemu => qemu_boot(boot),
        BootMethod::UBoot => uboot_boot(boot),
    };
    // Each led by its namespace and timeout.
    let timed = |node: Entries| {
        let mut head = entries([namespace(), ("timeout", minutes(settings.boot_minutes))]);
        head.extend(node);
        Node::Map(head)
    };
    let (deploy, start) = (timed(deploy), timed(start));
    let case = |results: &str, measured: bool| {
        let number = match measured {
            true => r" (?P<measurement>[-+0-9.eE]+) (?P<units>\S+)",
            false => "",
        };
        format!(r"{CASE} (?P<test_case_id>\S+) (?P<result>{results}){number}")
    };
    let monitor = |name: &str, start: &str, end: &str, pattern: String| {
        map([
            ("name", text(name)),
            ("start", text(start)),
            ("end", text(end)),
            ("pattern", text(pattern)),
        ])
    };
    let test = map([
        namespace(),
        ("timeout", minutes(test_minutes)),
        (
            "monitors",
            Node::List(vec![
                monitor("kbench", BEGIN, END, case("pass", true)),
                monitor(
                    "kbench-failures",
                    FAILURES_BEGIN,
                    FAILURES_END,
                    case("fail|skip", false),
                ),
            ]),
        ),
    ]);
    [
        map([("deploy", deploy)]),
        map([("boot", start)]),
        map([("test", test)]),
    ]
}

/// The deploy and boot of `boot` on LAVA's qemu device: its files to
/// tmpfs, then qemu with them.
fn qemu_boot(boot: &PlannedBoot) -> (Entries, Entries) {
    let image = |name: &str, arg: &str, url: &str| {
        let node = map([("image_arg", text(arg)), ("url", text(url))]);
        (name.to_string(), node)
    };
    let mut images = vec![
        image("kernel", "-kernel {kernel}", &boot.kernel_url),
        image("initrd", "-initrd {initrd}", &boot.initrd_url),
    ];
    if let Some(url) = &boot.rootfs_url {
        // The guest mounts the first virtio disk, /dev/vda.
        images.push(image(
            "rootfs",
            "-drive format=qcow2,if=virtio,file={rootfs}",
            url,
        ));
    }
    let deploy = entries([("to", text("tmpfs")), ("images", Node::Map(images))]);
    let start = entries([("method", text("qemu")), ("media", text("tmpfs"))]);
    (deploy, start)
}

/// The deploy and boot of `boot` on a U-Boot board: its kernel (an
/// Image, which `booti` boots), initramfs and device tree to the worker's
/// TFTP directory, then U-Boot's ramdisk commands. The initramfs carries
/// its U-Boot header already, and LAVA leaves it as it is (no overlay,
/// no modules: the guest needs neither). Every boot after the first
/// keeps the first one's serial connection, as one board has one
/// console.
fn uboot_boot(boot: &PlannedBoot) -> (Entries, Entries) {
    let url = |url: &str| ("url", text(url));
    let mut deploy = entries([
        ("to", text("tftp")),
        (
            "kernel",
            map([url(&boot.kernel_url), ("type", text("image"))]),
        ),
        (
            "ramdisk",
            map([
                url(&boot.initrd_url),
                ("header", text("u-boot")),
                ("install_modules", Node::Bool(false)),
                ("install_overlay", Node::Bool(false)),
            ]),
        ),
    ]);
    if let Some(dtb) = &boot.dtb_url {
        deploy.push(("dtb".to_string(), map([url(dtb)])));
    }
    let mut start = entries([("method", text("u-boot")), ("commands", text("ramdisk"))]);
    if boot.boot > 1 {
        start.push(("connection-namespace".to_string(), text(namespace(1))));
    }
    (deploy, start)
}
