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
