//! Procedural textures: a surface's colour from two coordinates along it,
//! m. No image file is needed, and the patterns give a visual front end
//! corners and gradients to track: a checker, value noise (three octaves,
//! seeded) and bricks in a running bond.

use serde::{Deserialize, Serialize};

use crate::SceneError;

/// A colour, 8-bit sRGB.
pub type Rgb = [u8; 3];

/// A texture as written, e.g. `{ "checker": { "size_m": 1, "colors": [[200,200,200],[60,60,60]] } }`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TextureSpec {
    /// One colour.
    Solid {
        /// The colour.
        color: Rgb,
    },
    /// Squares of `size_m` alternating between two colours.
    Checker {
        /// A square's side, m.
        size_m: f64,
        /// The two colours.
        colors: [Rgb; 2],
    },
    /// Value noise of feature size `scale_m` blending two colours.
    Noise {
        /// The pattern's seed.
        seed: u64,
        /// The coarsest octave's cell, m.
        scale_m: f64,
        /// The two colours.
        colors: [Rgb; 2],
    },
    /// Bricks of `width_m` × `height_m` with joints `mortar_m` wide.
    Brick {
        /// A brick's length, m.
        width_m: f64,
        /// A course's height, m.
        height_m: f64,
        /// A joint's width, m (less than half the brick's height and width).
        mortar_m: f64,
        /// The brick's and the mortar's colours.
        colors: [Rgb; 2],
    },
}

impl TextureSpec {
    /// The ground's default: a grey checker of 1 m.
    pub fn ground() -> Self {
        TextureSpec::Checker {
            size_m: 1.0,
            colors: [[150, 150, 140], [90, 95, 85]],
        }
    }

    /// A primitive's default: a lighter checker of 0.5 m.
    pub fn object() -> Self {
        TextureSpec::Checker {
            size_m: 0.5,
            colors: [[210, 200, 180], [120, 110, 100]],
        }
    }

    /// Checks the sizes (1 mm to 1 km) and builds the texture; `key` names
    /// it in errors.
    pub fn build(&self, key: &str) -> Result<Texture, SceneError> {
        let size = |k: &str, v: f64| {
            if (1e-3..=1e3).contains(&v) {
                Ok(v as f32)
            } else {
                Err(SceneError::Range {
                    key: format!("{key}.{k}"),
                    value: v.to_string(),
                    range: "0.001..=1000 m".into(),
                })
            }
        };
        Ok(match *self {
            TextureSpec::Solid { color } => Texture::Solid(linear(color)),
            TextureSpec::Checker { size_m, colors } => Texture::Checker {
                inv_size: 1.0 / size("checker.size_m", size_m)?,
                colors: colors.map(linear),
            },
            TextureSpec::Noise {
                seed,
                scale_m,
                colors,
            } => Texture::Noise {
                seed,
                inv_scale: 1.0 / size("noise.scale_m", scale_m)?,
                colors: colors.map(linear),
            },
            TextureSpec::Brick {
                width_m,
                height_m,
                mortar_m,
                colors,
            } => {
                let (w, h) = (
                    size("brick.width_m", width_m)?,
                    size("brick.height_m", height_m)?,
                );
                let m = size("brick.mortar_m", mortar_m)?;
                if 2.0 * m >= w.min(h) {
                    return Err(SceneError::Range {
                        key: format!("{key}.brick.mortar_m"),
                        value: mortar_m.to_string(),
                        range: "less than half the brick's width and height".into(),
                    });
                }
                Texture::Brick {
                    width: w,
                    height: h,
                    mortar: m,
                    colors: colors.map(linear),
                }
            }
        })
    }
}

/// A colour as fractions 0–1 (linear in the 8-bit value).
fn linear(c: Rgb) -> [f32; 3] {
    c.map(|x| f32::from(x) / 255.0)
}

/// A built texture, colours as fractions 0–1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Texture {
    /// One colour.
    Solid([f32; 3]),
    /// A checker: 1 / the square's side, 1/m.
    Checker {
        /// 1 / side, 1/m.
        inv_size: f32,
        /// The two colours.
        colors: [[f32; 3]; 2],
    },
    /// Value noise.
    Noise {
        /// Seed.
        seed: u64,
        /// 1 / the coarsest cell, 1/m.
        inv_scale: f32,
        /// The two colours.
        colors: [[f32; 3]; 2],
    },
    /// Bricks.
    Brick {
        /// Length, m.
        width: f32,
        /// Course height, m.
        height: f32,
        /// Joint width, m.
        mortar: f32,
        /// Brick, mortar.
        colors: [[f32; 3]; 2],
    },
}

impl Texture {
    /// The colour at (u, v), m along the surface.
    pub fn at(&self, u: f32, v: f32) -> [f32; 3] {
        match *self {
            Texture::Solid(c) => c,
            Texture::Checker { inv_size, colors } => {
                let (i, j) = ((u * inv_size).floor() as i64, (v * inv_size).floor() as i64);
                colors[((i + j) & 1) as usize]
            }
            Texture::Noise {
                seed,
                inv_scale,
                colors,
            } => {
                let (x, y) = (u * inv_scale, v * inv_scale);
                let n = 0.5 * value_noise(seed, x, y)
                    + 0.3 * value_noise(seed ^ 1, 2.0 * x, 2.0 * y)
                    + 0.2 * value_noise(seed ^ 2, 4.0 * x, 4.0 * y);
                mix(colors[0], colors[1], n)
            }
            Texture::Brick {
                width,
                height,
                mortar,
                colors,
            } => {
                let course = (v / height).floor();
                let shift = if (course as i64) & 1 == 1 {
                    0.5 * width
                } else {
                    0.0
                };
                let along = u + shift;
                let brick = (along / width).floor();
                let (fu, fv) = (along - brick * width, v - course * height);
                if fu < mortar || fv < mortar {
                    colors[1]
                } else {
                    // Each brick a shade of its own, ±10 %.
                    let k = 0.9 + 0.2 * hash01(course as i64, brick as i64, 0x9e37);
                    colors[0].map(|c| (c * k).min(1.0))
                }
            }
        }
    }
}

fn mix(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

/// A lattice point's value in [0, 1): SplitMix64 of its coordinates and seed.
fn hash01(i: i64, j: i64, seed: u64) -> f32 {
    let mut z = seed
        .wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add((j as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 24) as f32
}

/// Value noise in [0, 1): the lattice's values blended with a smoothstep.
fn value_noise(seed: u64, x: f32, y: f32) -> f32 {
    let (x0, y0) = (x.floor(), y.floor());
    let (i, j) = (x0 as i64, y0 as i64);
    let s = |t: f32| t * t * (3.0 - 2.0 * t);
    let (fx, fy) = (s(x - x0), s(y - y0));
    let a = hash01(i, j, seed);
    let b = hash01(i + 1, j, seed);
    let c = hash01(i, j + 1, seed);
    let d = hash01(i + 1, j + 1, seed);
    let top = a + (b - a) * fx;
    let bottom = c + (d - c) * fx;
    top + (bottom - top) * fy
}
