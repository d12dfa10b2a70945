//! MAVLink as the GCS link and the PX4 bridge take it in: datagrams split
//! into frames (CRC-checked, with and without signing), a TCP stream
//! reassembled, every frame decoded.

use mavsitl::wire;

/// Feeds one input.
pub fn run(data: &[u8]) {
    let mut n = 0usize;
    wire::frames(data, None, |raw| {
        n += 1;
        let _ = wire::decode(raw);
    });
    let signing = wire::SigningConfig::new([7; 32], 0, true, false);
    let check = wire::SigningData::from_config(signing);
    wire::frames(data, Some(&check), |raw| {
        let _ = wire::decode(raw);
    });
    // As a stream, in two reads split anywhere.
    let cut = data.first().map_or(0, |b| *b as usize % (data.len() + 1));
    let mut buf = data[..cut].to_vec();
    wire::stream_frames(&mut buf, |raw| {
        let _ = wire::decode(raw);
    });
    buf.extend_from_slice(&data[cut..]);
    wire::stream_frames(&mut buf, |raw| {
        let _ = wire::decode(raw);
    });
    let _ = n;
}
