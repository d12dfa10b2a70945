//! Images as files and as AirSim sends them: PNG (8-bit RGB, 8-bit grey,
//! 16-bit grey) written into a reused buffer.

use std::io::Write;

/// PNG's colour layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// 8-bit red, green, blue.
    Rgb8,
    /// 8-bit grey.
    Gray8,
    /// 16-bit grey, big-endian samples as PNG stores them.
    Gray16,
}

/// Encodes `pixels` (row-major; for `Gray16`, two big-endian bytes a
/// pixel) as a PNG appended to `out`.
///
/// # Errors
/// The encoder's error when `pixels` does not hold `width × height` pixels.
pub fn png(
    width: u32,
    height: u32,
    layout: Layout,
    pixels: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), png::EncodingError> {
    let mut e = png::Encoder::new(&mut *out, width, height);
    let (colour, depth) = match layout {
        Layout::Rgb8 => (png::ColorType::Rgb, png::BitDepth::Eight),
        Layout::Gray8 => (png::ColorType::Grayscale, png::BitDepth::Eight),
        Layout::Gray16 => (png::ColorType::Grayscale, png::BitDepth::Sixteen),
    };
    e.set_color(colour);
    e.set_depth(depth);
    e.set_compression(png::Compression::Fast);
    let mut w = e.write_header()?;
    w.write_image_data(pixels)?;
    w.finish()?;
    out.flush().ok();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> (png::OutputInfo, Vec<u8>) {
        let mut d = png::Decoder::new(std::io::Cursor::new(bytes));
        d.set_transformations(png::Transformations::IDENTITY);
        let mut r = d.read_info().expect("png");
        let mut buf = vec![0; r.output_buffer_size()];
        let info = r.next_frame(&mut buf).expect("frame");
        buf.truncate(info.buffer_size());
        (info, buf)
    }

    #[test]
    fn each_layout_decodes_to_its_pixels() {
        let rgb: Vec<u8> = (0..3 * 4 * 2).map(|i| (i * 10) as u8).collect();
        let mut out = vec![7];
        png(4, 2, Layout::Rgb8, &rgb, &mut out).expect("rgb");
        // Appended to what was there.
        assert_eq!(out[0], 7);
        let (info, px) = decode(&out[1..]);
        assert_eq!(
            (info.width, info.height, info.color_type),
            (4, 2, png::ColorType::Rgb)
        );
        assert_eq!(px, rgb);
        let grey = [0u8, 100, 200, 255];
        let mut out = Vec::new();
        png(2, 2, Layout::Gray8, &grey, &mut out).expect("grey");
        let (info, px) = decode(&out);
        assert_eq!(info.color_type, png::ColorType::Grayscale);
        assert_eq!(px, grey);
        // 16-bit: 1 234 mm and 65 535 mm, big-endian.
        let mm = [0x04, 0xd2, 0xff, 0xff];
        let mut out = Vec::new();
        png(2, 1, Layout::Gray16, &mm, &mut out).expect("grey16");
        let (info, px) = decode(&out);
        assert_eq!(info.bit_depth, png::BitDepth::Sixteen);
        assert_eq!(px, mm);
        // Too few pixels for the size: an error, not a panic.
        assert!(png(4, 4, Layout::Rgb8, &rgb, &mut Vec::new()).is_err());
    }
}
