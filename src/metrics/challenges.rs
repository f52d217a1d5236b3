//! Bot challenges met when fetching robots.txt, by vendor: a site whose firewall challenges the
//! fleet is not saying anything of its robots.txt, and an operator wants to know how often.
//! The vendors are robotsd's own closed list (`fetch::challenge::KNOWN`).

use prometheus::{IntCounterVec, Opts};

pub(super) struct ChallengeMetrics {
    pub(super) family: IntCounterVec,
}

impl ChallengeMetrics {
    pub(super) fn new() -> ChallengeMetrics {
        ChallengeMetrics {
            family: IntCounterVec::new(
                Opts::new(
                    "robotsd_robots_challenges_total",
                    "robots.txt fetches answered by a bot challenge (a firewall asking for a \
                     browser) rather than by the site, by vendor: cloudflare, aws-waf, \
                     datadome, human, imperva. Their status is read as ever; answers say \
                     robots.challenged.",
                ),
                &["vendor"],
            )
            .expect("valid metric"),
        }
    }

    pub(super) fn observe(&self, vendor: &'static str) {
        self.family.with_label_values(&[vendor]).inc();
    }
}
