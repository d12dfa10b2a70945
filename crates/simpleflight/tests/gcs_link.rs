//! The GCS link gives telemetry only to senders of valid MAVLink (signed,
//! when signing is on), to a bounded number of them, and reads a bounded
//! number of datagrams per call: it is no reflector for spoofed sources and
//! a flood cannot hold the loop.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use mavlink::dialects::common::{
    MavAutopilot, MavMessage, MavModeFlag, MavState, MavType, HEARTBEAT_DATA,
};
use mavsitl_mavlink::wire::{Encoder, Outgoing, SigningConfig};
use mavsitl_simpleflight::gcs::link::{MAX_DATAGRAMS_PER_CALL, MAX_PEERS};
use mavsitl_simpleflight::gcs::{LinkConfig, UdpLink};

fn link(signing_key: Option<[u8; 32]>) -> (UdpLink, SocketAddr) {
    let link = UdpLink::bind(&LinkConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        targets: Vec::new(),
        system_id: 1,
        component_id: 1,
        signing_key,
    })
    .expect("bind");
    let addr = link.local_addr().expect("addr");
    (link, addr)
}

fn heartbeat(signing: Option<SigningConfig>) -> Vec<u8> {
    let mut enc = Encoder::new(255, 190, signing);
    let mut buf = Vec::new();
    enc.encode(
        &Outgoing::Msg(MavMessage::HEARTBEAT(HEARTBEAT_DATA {
            custom_mode: 0,
            mavtype: MavType::MAV_TYPE_GCS,
            autopilot: MavAutopilot::MAV_AUTOPILOT_INVALID,
            base_mode: MavModeFlag::empty(),
            system_status: MavState::MAV_STATE_ACTIVE,
            mavlink_version: 3,
        })),
        &mut buf,
    );
    buf
}

fn drain(link: &mut UdpLink) -> usize {
    std::thread::sleep(Duration::from_millis(50));
    let mut n = 0;
    link.receive(Duration::from_secs(1), 0, |_, _| n += 1);
    n
}

#[test]
fn only_a_sender_of_valid_mavlink_becomes_a_peer() {
    let (mut l, addr) = link(None);
    let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
    probe.send_to(&[0xFD], addr).unwrap();
    probe.send_to(b"hello, is anyone there", addr).unwrap();
    drain(&mut l);
    assert_eq!(l.peers().count(), 0, "garbage subscribed its sender");
    probe.send_to(&heartbeat(None), addr).unwrap();
    assert_eq!(drain(&mut l), 1);
    assert_eq!(l.peers().collect::<Vec<_>>(), [probe.local_addr().unwrap()]);
}

#[test]
fn with_signing_an_unsigned_frame_subscribes_nobody() {
    let key = [7u8; 32];
    let (mut l, addr) = link(Some(key));
    let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
    probe.send_to(&heartbeat(None), addr).unwrap();
    assert_eq!(drain(&mut l), 0);
    assert_eq!(l.peers().count(), 0, "an unsigned frame made a peer");
    let signed = heartbeat(Some(SigningConfig::new(key, 0, true, false)));
    probe.send_to(&signed, addr).unwrap();
    assert_eq!(drain(&mut l), 1);
    assert_eq!(l.peers().count(), 1);
}

#[test]
fn peers_are_bounded() {
    let (mut l, addr) = link(None);
    let senders: Vec<UdpSocket> = (0..MAX_PEERS + 8)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    for s in &senders {
        s.send_to(&heartbeat(None), addr).unwrap();
    }
    assert_eq!(drain(&mut l), MAX_PEERS + 8, "every frame is still handled");
    assert_eq!(l.peers().count(), MAX_PEERS);
    assert_eq!(l.stats().peers_refused, 8);
}

#[test]
fn a_flood_is_read_a_bounded_batch_per_call() {
    let (mut l, addr) = link(None);
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    // (As many as the socket's receive buffer keeps: small datagrams cost
    // the kernel about 1 KiB each.)
    let n = MAX_DATAGRAMS_PER_CALL + 10;
    for _ in 0..n {
        s.send_to(&heartbeat(None), addr).unwrap();
    }
    assert_eq!(drain(&mut l), MAX_DATAGRAMS_PER_CALL);
    assert!(drain(&mut l) <= 10, "the rest on the next call");
}
