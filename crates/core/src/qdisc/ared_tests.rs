//! Adaptive RED: the adaptation rule step by step at explicit times, its bounds, the automatic
//! settings against the formulas, and ARED-that-never-adapts against plain RED.

use super::*;
use crate::engine::{stream, StreamId};
use crate::packet::{Ecn, Packet, PacketKind};
use crate::qdisc::red::{Red, RedParams, RedVariant};
use crate::qdisc::{DropBuf, Qdisc, Verdict};

fn ms(v: u64) -> Time {
    Time(v * 1_000_000)
}

/// RED settings with thresholds 20 and 60 (band [36, 44]), weight 1, max_p 0.1.
fn red_cfg() -> RedConfig {
    RedConfig {
        variant: RedVariant::Ns2,
        min_th: 20.0,
        max_th: 60.0,
        max_p: 0.1,
        weight: 1.0,
        wait: true,
        gentle: true,
        byte_mode: false,
        mean_packet_size: 1000.0,
        drain_rate: 1000.0,
        protected_pkts: 1,
        nonlinear: false,
    }
}

fn adaptive(variant: AdaptiveVariant, red: &mut RedConfig) -> Adaptive {
    let (target_low, target_high) = AdaptiveConfig::band(variant, red.min_th, red.max_th);
    let cfg = AdaptiveConfig {
        variant,
        interval: Dur::from_millis(500),
        alpha: 0.01,
        beta: 0.9,
        top: 0.5,
        bottom: 0.01,
        target_low,
        target_high,
        initial_max_p: red.max_p,
        feng_alpha: 3.0,
        feng_beta: 2.0,
    };
    Adaptive::new(cfg, red)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn band_is_forty_to_sixty_percent_between_the_thresholds() {
    // Floyd 2001 Fig. 3: [min_th + 0.4·Δ, min_th + 0.6·Δ]; 20..60 → [36, 44].
    let (lo, hi) = AdaptiveConfig::band(AdaptiveVariant::Ns3, 20.0, 60.0);
    assert!(close(lo, 36.0) && close(hi, 44.0), "{lo} {hi}");
    let (lo, hi) = AdaptiveConfig::band(AdaptiveVariant::Linux, 20.0, 60.0);
    assert!(close(lo, 36.0) && close(hi, 44.0), "{lo} {hi}");
}

#[test]
fn ns3_avg_above_band_raises_max_p_by_alpha_once_per_interval() {
    let mut red = red_cfg();
    let mut a = adaptive(AdaptiveVariant::Ns3, &mut red);
    a.after_sample(&mut red, 50.0, ms(400)); // not yet: now > 0 + 500 ms is false
    assert_eq!(red.max_p, 0.1);
    a.after_sample(&mut red, 50.0, ms(501)); // α = min(0.01, 0.1/4) = 0.01
    assert!(close(red.max_p, 0.11), "{}", red.max_p);
    a.after_sample(&mut red, 50.0, ms(1000)); // 499 ms after the change: too early
    assert!(close(red.max_p, 0.11));
    a.after_sample(&mut red, 50.0, ms(1002));
    assert!(close(red.max_p, 0.12));
    assert_eq!((a.state.increases, a.state.decreases), (2, 0));
}

#[test]
fn ns3_small_max_p_rises_by_a_quarter_of_itself() {
    // α = min(0.01, max_p/4): at 0.02 the step is 0.005.
    let mut red = RedConfig { max_p: 0.02, ..red_cfg() };
    let mut a = adaptive(AdaptiveVariant::Ns3, &mut red);
    a.after_sample(&mut red, 50.0, ms(600));
    assert!(close(red.max_p, 0.025), "{}", red.max_p);
}

#[test]
fn ns3_avg_below_band_decays_max_p_by_beta() {
    let mut red = red_cfg();
    let mut a = adaptive(AdaptiveVariant::Ns3, &mut red);
    a.after_sample(&mut red, 30.0, ms(600));
    assert!(close(red.max_p, 0.09));
    a.after_sample(&mut red, 30.0, ms(1200));
    assert!(close(red.max_p, 0.081));
    assert_eq!((a.state.increases, a.state.decreases), (0, 2));
}

#[test]
fn ns3_in_band_changes_nothing_and_keeps_checking_every_arrival() {
    // ns-3 moves m_lastSet only on a change: after an in-band check at 600 ms, an arrival 10 ms
    // later that finds the average above the band adapts at once.
    let mut red = red_cfg();
    let mut a = adaptive(AdaptiveVariant::Ns3, &mut red);
    a.after_sample(&mut red, 40.0, ms(600));
    assert_eq!(red.max_p, 0.1);
    a.after_sample(&mut red, 45.0, ms(610));
    assert!(close(red.max_p, 0.11));
}

#[test]
fn ns3_max_p_stays_within_bottom_and_top() {
    let mut red = red_cfg();
    let mut a = adaptive(AdaptiveVariant::Ns3, &mut red);
    let mut t = 0;
    for _ in 0..500 {
        t += 501;
        a.after_sample(&mut red, 59.0, ms(t));
        assert!(red.max_p <= 0.5 + 0.01);
    }
    // Raised only while below top = 0.5: it ends in (0.5, 0.51].
    assert!(red.max_p > 0.5 && red.max_p <= 0.51, "{}", red.max_p);
    for _ in 0..500 {
        t += 501;
        a.after_sample(&mut red, 1.0, ms(t));
        assert!(red.max_p >= 0.01 * 0.9);
    }
    // Lowered only while above bottom = 0.01: it ends in [0.009, 0.01].
    assert!(red.max_p >= 0.009 && red.max_p <= 0.01, "{}", red.max_p);
}

#[test]
fn linux_timer_ticks_at_zero_and_every_500ms_in_q32() {
    // tc: max_P = trunc(0.1·2³²) = 429496729. The timer runs at configuration (t = 0, avg 0 below
    // the band): (429496729/10)·9 = 386547048. The average is then 50 (above 44): the ticks at
    // 500 ms and 1000 ms add min(1 %, max_P/4) = 42949673 each.
    let mut red = red_cfg();
    let mut a = adaptive(AdaptiveVariant::Linux, &mut red);
    assert_eq!(a.state.max_p_q32, 429_496_729);
    let mut s = RedState::default();
    a.before_arrival(&mut red, &s, ms(300));
    assert_eq!(a.state.max_p_q32, 386_547_048);
    s.update_average(&red, 50.0, ms(300)); // weight 1: avg = 50
    a.before_arrival(&mut red, &s, ms(1200));
    assert_eq!(a.state.max_p_q32, 386_547_048 + 2 * 42_949_673);
    assert!(close(red.max_p, a.state.max_p_q32 as f64 / 4_294_967_296.0));
    assert_eq!((a.state.increases, a.state.decreases), (2, 1));
}

#[test]
fn linux_tick_reads_the_average_decayed_for_idle_time() {
    // Weight 0.01, C = 1000/s: the queue idles from 600 ms, so the tick at 1000 ms sees
    // 50·0.99^400 ≈ 0.9 (below the band) and lowers max_P; the tick at 500 ms saw 50 and raised it.
    let mut red = RedConfig { weight: 1.0, ..red_cfg() };
    let mut a = adaptive(AdaptiveVariant::Linux, &mut red);
    let mut s = RedState::default();
    a.before_arrival(&mut red, &s, ms(100)); // the t = 0 tick
    s.update_average(&red, 50.0, ms(100));
    red.weight = 0.01;
    s.on_empty_dequeue(&red, ms(600)); // ns2 RED: idle from the empty dequeue
    let before = a.state.max_p_q32;
    a.before_arrival(&mut red, &s, ms(1100));
    let raised = before + 42_949_673.min(before / 4);
    assert_eq!(a.state.max_p_q32, (raised / 10) * 9);
    assert_eq!((a.state.increases, a.state.decreases), (1, 2));
}

#[test]
fn linux_max_p_stays_within_one_and_fifty_one_percent() {
    let mut red = red_cfg();
    let mut a = adaptive(AdaptiveVariant::Linux, &mut red);
    let mut s = RedState::default();
    a.before_arrival(&mut red, &s, ms(0));
    s.update_average(&red, 59.0, ms(0));
    a.before_arrival(&mut red, &s, ms(300_000));
    // Raised while max_P ≤ 50 % (Q0.32): at most 50 % + 1 %.
    assert!(red.max_p > 0.5 && red.max_p <= 0.51 + 1e-9, "{}", red.max_p);
    s.update_average(&red, 1.0, ms(300_000));
    a.before_arrival(&mut red, &s, ms(600_000));
    // Lowered while max_P ≥ 1 %: it ends in [0.9 %, 1 %).
    assert!(red.max_p >= 0.009 - 1e-9 && red.max_p < 0.01, "{}", red.max_p);
}

#[test]
fn feng_divides_below_min_th_and_multiplies_above_max_th_once_per_excursion() {
    let mut red = red_cfg();
    let mut a = adaptive(AdaptiveVariant::Feng, &mut red);
    a.after_sample(&mut red, 70.0, ms(1)); // starts "above": no change
    assert_eq!(red.max_p, 0.1);
    a.after_sample(&mut red, 10.0, ms(2));
    a.after_sample(&mut red, 10.0, ms(3));
    assert!(close(red.max_p, 0.1 / 3.0));
    a.after_sample(&mut red, 30.0, ms(4)); // between
    a.after_sample(&mut red, 70.0, ms(5));
    assert!(close(red.max_p, 0.2 / 3.0));
    assert_eq!((a.state.increases, a.state.decreases), (1, 1));
}

#[test]
fn ns3_gentle_ramp_starts_from_the_initial_max_p() {
    // ns-3 computes m_vC, m_vD once: above max_th the probability ramps from the initial max_p.
    let mut red = red_cfg();
    let mut a = adaptive(AdaptiveVariant::Ns3, &mut red);
    a.after_sample(&mut red, 50.0, ms(600));
    assert!(close(red.max_p, 0.11));
    assert!(close(a.decision_config(&red, 70.0).max_p, 0.1));
    assert!(close(a.decision_config(&red, 50.0).max_p, 0.11));
    let linux = adaptive(AdaptiveVariant::Linux, &mut RedConfig { max_p: 0.11, ..red_cfg() });
    assert_eq!(linux.decision_config(&red, 70.0).max_p, red.max_p);
}

// ---------------------------------------------------------------- automatic settings

fn params(text: &str) -> RedParams {
    toml::from_str(text).unwrap()
}

#[test]
fn automatic_weight_and_thresholds_follow_floyd_from_the_link_rate() {
    // 10 Mb/s, 1500 B: C = 833.33 packets/s; w = 1 − exp(−1/C) = 0.00119929;
    // min_th = max(5, 0.005·C/2 = 2.08) = 5; max_th = 15.
    let red = params("adaptive = true\nmean_packet_size = \"1500B\"").validate("queue", 10e6).unwrap();
    let c: f64 = 10e6 / (8.0 * 1500.0);
    let cfg = red.config();
    assert!(close(cfg.weight, 1.0 - (-1.0 / c).exp()));
    assert!((cfg.weight - 0.00119929).abs() < 1e-8);
    assert_eq!((cfg.min_th, cfg.max_th, cfg.gentle), (5.0, 15.0, true));
    // 100 Mb/s: C = 8333.3; min_th = 0.005·C/2 = 20.83, max_th = 62.5; band [37.5, 45.83].
    let red = params("adaptive = true\nmean_packet_size = \"1500B\"").validate("queue", 100e6).unwrap();
    let c: f64 = 100e6 / (8.0 * 1500.0);
    assert!(close(red.config().min_th, 0.005 * c / 2.0));
    assert!(close(red.config().max_th, 3.0 * 0.005 * c / 2.0));
    let view = red.adaptive_red().unwrap();
    assert!(close(view.target_low, 20.833333333333336 + 0.4 * 41.66666666666667));
    // A longer target delay moves min_th: 20 ms at 10 Mb/s → 0.02·833.3/2 = 8.33.
    let red = params("adaptive = true\nmean_packet_size = \"1500B\"\ntarget_delay = \"20ms\"").validate("queue", 10e6).unwrap();
    assert!(close(red.config().min_th, 0.02 * (10e6 / 12000.0) / 2.0), "{}", red.config().min_th);
}

#[test]
fn stated_thresholds_and_weight_win_over_the_automatic_ones() {
    let red = params("adaptive = true\nmin_th = 20\nweight = 0.002\ngentle = false").validate("queue", 10e6).unwrap();
    let cfg = red.config();
    assert_eq!((cfg.min_th, cfg.max_th, cfg.weight, cfg.gentle), (20.0, 60.0, 0.002, false));
}

#[test]
fn ns3_bottom_defaults_to_ns3s_expression() {
    // ns-3 Bottom = 0: min(0.01, 8·mean·Rtt/rate), which its comment calls 1/W but is Rtt/C
    // (docs/ared.md): 10 Mb/s, 1500 B, 100 ms → 1.2e-4 (1/W would be 0.012 → 0.01).
    let p = params("adaptive = true\nmean_packet_size = \"1500B\"");
    let cfg = p.validate("queue", 10e6).unwrap().adaptive().unwrap().cfg;
    assert!(close(cfg.bottom, 8.0 * 1500.0 * 0.1 / 10e6), "{}", cfg.bottom);
    assert!((cfg.bottom - 1.2e-4).abs() < 1e-15);
    let cfg = p.validate("queue", 10e3).unwrap().adaptive().unwrap().cfg;
    assert_eq!(cfg.bottom, 0.01);
    let linux = params("adaptive = true\nadaptive_variant = \"linux\"").validate("queue", 10e6).unwrap();
    assert_eq!(linux.adaptive().unwrap().cfg.bottom, 0.01);
}

#[test]
fn without_adaptive_nothing_changes() {
    let red = params("").validate("queue", 10e6).unwrap();
    assert!(red.adaptive_red().is_none() && red.detail_counters().is_empty());
    assert_eq!((red.config().min_th, red.config().max_th, red.config().weight, red.config().gentle), (5.0, 15.0, 0.002, false));
}

fn error(text: &str) -> String {
    params(text).validate("queue", 10e6).err().expect("an error").to_string()
}

#[test]
fn bad_adaptive_settings_are_refused_naming_key_and_allowed_values() {
    let e = error("adaptive = true\ninterval = \"0s\"");
    assert!(e.contains("queue.interval") && e.contains("positive"), "{e}");
    let e = error("adaptive = true\nalpha = 0");
    assert!(e.contains("queue.alpha") && e.contains("(0, 1]") && e.contains("got 0"), "{e}");
    let e = error("adaptive = true\nalpha = -0.01");
    assert!(e.contains("queue.alpha") && e.contains("(0, 1]"), "{e}");
    let e = error("adaptive = true\nbeta = 1.0");
    assert!(e.contains("queue.beta") && e.contains("(0, 1)") && e.contains("got 1"), "{e}");
    let e = error("adaptive = true\nbeta = 0");
    assert!(e.contains("queue.beta") && e.contains("(0, 1)"), "{e}");
    let e = error("adaptive = true\nbottom = 0.6");
    assert!(e.contains("queue.bottom") && e.contains("(0, top)"), "{e}");
    let e = error("alpha = 0.02");
    assert!(e.contains("queue.alpha") && e.contains("needs adaptive = true"), "{e}");
    // The echo's defaults are accepted without adaptive (they have no effect).
    assert!(params("alpha = 0.01\nbottom = \"auto\"\ninterval = \"500ms\"").validate("queue", 10e6).is_ok());
    let e = toml::from_str::<RedParams>("adaptive = true\nbottom = \"low\"").err().unwrap().to_string();
    assert!(e.contains("\"auto\"") && e.contains("(0, top)"), "{e}");
    let e = error("adaptive = true\nadaptive_variant = \"linux\"\ninterval = \"1s\"");
    assert!(e.contains("queue.interval") && e.contains("\"linux\"") && e.contains("allowed with \"ns3\""), "{e}");
    let e = error("adaptive = true\nfeng_alpha = 3");
    assert!(e.contains("queue.feng_alpha") && e.contains("allowed with \"feng\""), "{e}");
    let e = error("adaptive = true\nadaptive_variant = \"feng\"\nfeng_beta = 1");
    assert!(e.contains("queue.feng_beta") && e.contains("greater than 1"), "{e}");
    assert!(toml::from_str::<RedParams>("adaptive_variant = \"ns2\"").is_err());
}

#[test]
fn filled_echo_shows_the_ns3_defaults_and_leaves_automatic_values_unset() {
    let p = params("adaptive = true").filled();
    assert_eq!((p.min_th, p.max_th, p.weight, p.gentle), (None, None, None, Some(true)));
    assert_eq!((p.adaptive_variant, p.alpha, p.beta, p.top), (Some(AdaptiveVariant::Ns3), Some(0.01), Some(0.9), Some(0.5)));
    // Plain RED's echo lists every key with its default (`validate --show` promises that); the
    // adaptive ones have no effect there. Filled parameters validate to the same queue.
    let plain = serde_json::to_value(params("").filled()).unwrap();
    assert_eq!((plain["adaptive"].clone(), plain["bottom"].clone(), plain["interval"].clone()), (false.into(), "auto".into(), "500ms".into()), "{plain}");
    assert!(params("").filled().validate("queue", 10e6).unwrap().adaptive().is_none());
    let linux = params("adaptive = true\nadaptive_variant = \"linux\"").filled();
    assert_eq!((linux.interval, linux.alpha, linux.bottom), (None, None, None));
    assert!(linux.validate("queue", 10e6).is_ok());
    let feng = params("adaptive = true\nadaptive_variant = \"feng\"").filled();
    assert!(feng.validate("queue", 10e6).is_ok() && feng.alpha.is_none() && feng.feng_alpha == Some(3.0));
}

// ---------------------------------------------------------------- ARED that never adapts is RED

fn pkt() -> Packet {
    Packet { size: 1000, ecn: Ecn::NotEct, ..Packet::new(PacketKind::TcpData, 0) }
}

/// Verdicts of 20,000 arrivals with a dequeue after every second one, plus extra dequeues and
/// idle gaps chosen by a second stream, so the queue wanders through all RED regions.
fn verdicts(mut q: Red, seed: u64) -> (Vec<Verdict>, crate::qdisc::QdiscStats) {
    let mut rng = stream(seed, StreamId::Queue(0));
    let mut script = stream(seed ^ 0xabc, StreamId::Queue(1));
    let mut drops = DropBuf::new();
    let mut out = Vec::with_capacity(20_000);
    let mut t = 0u64;
    for i in 0..20_000u32 {
        use rand::Rng as _;
        t += 100_000 + script.gen_range(0..2_000_000u64);
        out.push(q.enqueue(pkt(), Time(t), &mut rng, &mut drops));
        let deqs = if i % 2 == 0 { 1 } else { script.gen_range(0..3u32) };
        for _ in 0..deqs {
            q.dequeue(Time(t), &mut drops);
        }
    }
    (out, *q.stats())
}

#[test]
fn ared_with_adaptation_disabled_makes_reds_decisions_from_the_same_stream() {
    // An interval longer than the script (~20 s) never adapts; thresholds, weight and gentle
    // are stated as RED's. Every verdict must be RED's.
    let base = "limit = 40\nmin_th = 5\nmax_th = 15\nmax_p = 0.1\nweight = 0.02\nvariant = \"ns2\"\ngentle = true";
    let red = params(base).validate("queue", 10e6).unwrap();
    let ared = params(&format!("{base}\nadaptive = true\ninterval = \"1000s\"")).validate("queue", 10e6).unwrap();
    let (a, sa) = verdicts(red, 5);
    let (b, sb) = verdicts(ared, 5);
    assert!(sa.drops_early > 100, "{sa:?}");
    assert_eq!(a, b);
    assert_eq!(sa, sb);
    // The same script with adaptation on does diverge (the test can tell the difference).
    let adapting = params(&format!("{base}\nadaptive = true\ninterval = \"100ms\"")).validate("queue", 10e6).unwrap();
    let (c, _) = verdicts(adapting, 5);
    assert_ne!(a, c);
}
