//! A campaign for the tests: kernels A (6.1) and B (6.12), boots in
//! `order`, switched by kexec.

use kbench_model::campaign::{
    Boot, CAMPAIGN_SCHEMA, Campaign, CampaignKernel, CampaignState, Hook, OriginKernel, Settle,
    Switch,
};

/// The default settling of `kbench campaign start`.
pub const SETTLE: Settle = Settle {
    max_load: 0.5,
    min_uptime_s: 60.0,
    timeout_s: 600.0,
};

pub fn campaign(order: &[usize]) -> Campaign {
    let kernel = |name: &str, release: &str| CampaignKernel {
        name: name.into(),
        image: format!("/boot/vmlinuz-{release}"),
        initrd: Some(format!("/boot/initrd.img-{release}")),
        release: release.into(),
    };
    Campaign {
        schema: CAMPAIGN_SCHEMA.into(),
        name: "c".into(),
        created_at_ms: 0,
        kernels: vec![kernel("A", "6.1"), kernel("B", "6.12")],
        origin: OriginKernel {
            release: "6.1".into(),
            image: Some("/boot/vmlinuz-6.1".into()),
            initrd: None,
            cmdline: "root=/dev/vda".into(),
        },
        switch: Switch::Kexec {
            append: String::new(),
        },
        run_args: vec!["syscall-null".into()],
        settle: SETTLE,
        panic_s: 10,
        hook_timeout_s: 600,
        hook: Hook::RcLocal {
            path: "/etc/rc.local".into(),
        },
        kbench: "/usr/bin/kbench".into(),
        db: "/var/lib/kbench/results.db".into(),
        seed: 1,
        boots_per_kernel: (order.len() / 2) as u32,
        until_decided: None,
        boots: order.iter().map(|&k| Boot::planned(k)).collect(),
        state: CampaignState::Running,
        log: vec![],
    }
}
