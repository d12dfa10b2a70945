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
                let (i, j) = (floor(u * inv_size) as i64, floor(v * inv_size) as i64);
                // The squares' parity: i + j's, which is i ^ j's.
                colors[((i ^ j) & 1) as usize]
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
                let course = floor(v / height);
                let shift = if (course as i64) & 1 == 1 {
                    0.5 * width
                } else {
                    0.0
                };
                let along = u + shift;
                let brick = floor(along / width);
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

/// `x.floor()` without a call into libm (the x86-64 baseline has no
/// rounding instruction, and a noise texel takes six): the same value for
/// every `f32` but the sign of a zero. From 2²³ on, every `f32` is whole.
fn floor(x: f32) -> f32 {
    if x.abs() < 8_388_608.0 {
        let t = x as i32 as f32;
        if t > x {
            t - 1.0
        } else {
            t
        }
    } else {
        x
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
    // The top 24 bits: SplitMix64's last step (z ^= z >> 31) leaves them
    // as they are.
    (z >> 40) as f32 / (1u64 << 24) as f32
}

/// Value noise in [0, 1): the lattice's values blended with a smoothstep.
fn value_noise(seed: u64, x: f32, y: f32) -> f32 {
    let (x0, y0) = (floor(x), floor(y));
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

#[cfg(test)]
mod tests {
    use super::*;

    const A: Rgb = [255, 0, 51];
    const B: Rgb = [0, 51, 255];

    #[test]
    fn mix_goes_from_one_colour_to_the_other() {
        let (a, b) = ([0.2, 0.8, 0.5], [0.6, 0.4, 0.5]);
        assert_eq!(mix(a, b, 0.0), a);
        assert_eq!(mix(a, b, 1.0), b);
        let m = mix(a, b, 0.25);
        for (got, want) in m.iter().zip([0.3, 0.7, 0.5]) {
            assert!((got - want).abs() < 1e-6, "{m:?}");
        }
    }

    #[test]
    fn floor_is_libms_floor() {
        let mut x: u32 = 0x9e37_79b9;
        let edges = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            2.5,
            -2.5,
            8_388_607.5,
            -8_388_607.5,
            8_388_608.0,
            -8_388_608.0,
            8_388_609.0,
            -8_388_609.0,
            1e20,
            -1e20,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        // Every bit pattern class: a million draws over the whole line.
        let draws = (0..1_000_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            f32::from_bits(x)
        });
        for v in edges.into_iter().chain(draws).filter(|v| !v.is_nan()) {
            assert_eq!(floor(v), v.floor(), "{v}");
        }
        assert!(floor(f32::NAN).is_nan());
    }

    #[test]
    fn the_lattice_hash_is_splitmix64s_finaliser() {
        // SplitMix64's first output from state 0 is 0xE220A8397B1DCDAF:
        // the point (1, 0) of seed 0 adds the golden gamma once.
        assert_eq!(hash01(1, 0, 0), 0xE2_20A8 as f32 / (1u64 << 24) as f32);
        assert_eq!(hash01(0, 0, 0), 0.0);
        let h = hash01(-3, 7, 42);
        assert!((0.0..1.0).contains(&h));
        assert_ne!(hash01(-3, 7, 42), hash01(-3, 7, 43));
        assert_ne!(hash01(7, -3, 42), h);
    }

    #[test]
    fn value_noise_meets_the_lattice_and_blends_by_a_smoothstep() {
        let (a, b) = (hash01(2, 5, 9), hash01(3, 5, 9));
        let c = hash01(2, 6, 9);
        assert_eq!(value_noise(9, 2.0, 5.0), a);
        assert!((value_noise(9, 2.5, 5.0) - (a + b) / 2.0).abs() < 1e-6);
        // smoothstep(0.25) = 0.15625.
        assert!((value_noise(9, 2.25, 5.0) - (a + (b - a) * 0.15625)).abs() < 1e-6);
        assert!((value_noise(9, 2.0, 5.75) - (a + (c - a) * 0.84375)).abs() < 1e-6);
        // Inside a cell all four corners count: the mean at its centre.
        let d = hash01(3, 6, 9);
        assert!((value_noise(9, 2.5, 5.5) - (a + b + c + d) / 4.0).abs() < 1e-6);
        // Three octaves at a lattice point of all of them.
        let t = TextureSpec::Noise {
            seed: 7,
            scale_m: 0.5,
            colors: [A, B],
        }
        .build("t")
        .expect("noise");
        // Seed 7's octaves draw on seeds 7, 6 and 5.
        let n = 0.5 * hash01(3, 5, 7) + 0.3 * hash01(6, 10, 6) + 0.2 * hash01(12, 20, 5);
        let got = t.at(1.5, 2.5);
        // A + (B − A)·n, channel by channel.
        let want = [1.0 - n, 0.2 * n, 0.2 + 0.8 * n];
        for i in 0..3 {
            assert!((got[i] - want[i]).abs() < 1e-6, "{got:?} {want:?}");
        }
    }

    #[test]
    fn a_checker_alternates_on_both_sides_of_zero() {
        let t = TextureSpec::Checker {
            size_m: 0.5,
            colors: [A, B],
        }
        .build("t")
        .expect("checker");
        assert_eq!(t.at(0.1, 0.1), linear(A));
        assert_eq!(t.at(0.6, 0.1), linear(B));
        assert_eq!(t.at(0.6, 0.6), linear(A));
        assert_eq!(t.at(-0.1, 0.1), linear(B));
        assert_eq!(t.at(-0.1, -0.1), linear(A));
        let s = TextureSpec::Solid { color: B }.build("t").expect("solid");
        assert_eq!(s.at(3.0, -8.0), linear(B));
        assert_eq!(linear(B), [0.0, 0.2, 1.0]);
    }

    #[test]
    fn bricks_lie_in_a_running_bond_with_mortar_joints() {
        let t = TextureSpec::Brick {
            width_m: 0.4,
            height_m: 0.2,
            mortar_m: 0.02,
            colors: [[200, 100, 50], B],
        }
        .build("t")
        .expect("brick");
        let shade = |course: i64, brick: i64| {
            let k = 0.9 + 0.2 * hash01(course, brick, 0x9e37);
            linear([200, 100, 50]).map(|c| (c * k).min(1.0))
        };
        // Course 0 from u = 0; a joint at each brick's start and the
        // course's foot.
        assert_eq!(t.at(0.05, 0.05), shade(0, 0));
        assert_eq!(t.at(0.45, 0.05), shade(0, 1));
        assert_eq!(t.at(0.01, 0.05), linear(B));
        assert_eq!(t.at(0.05, 0.21), linear(B));
        // Course 1 is shifted by half a brick: no joint at u = 0.01.
        // Its joints are at u = 0.2, 0.6, …
        assert_eq!(t.at(0.01, 0.25), shade(1, 0));
        assert_eq!(t.at(0.19, 0.25), shade(1, 0));
        assert_eq!(t.at(0.21, 0.25), linear(B));
        assert_eq!(t.at(0.25, 0.25), shade(1, 1));
        // Below zero, course −1 is odd too.
        assert_eq!(t.at(0.01, -0.1), shade(-1, 0));
        // Each brick its own shade within ±10 %.
        for b in 0..20 {
            let s = shade(0, b)[0] / linear([200, 100, 50])[0];
            assert!((0.9..=1.1).contains(&s), "{s}");
        }
        assert_ne!(shade(0, 0), shade(0, 1));
    }

    #[test]
    fn sizes_out_of_range_are_refused_by_key() {
        let e = |spec: TextureSpec| {
            spec.build("objects[1].texture")
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            e(TextureSpec::Checker {
                size_m: 0.0,
                colors: [A, B]
            }),
            Err("objects[1].texture.checker.size_m: 0 is outside 0.001..=1000 m".into())
        );
        assert_eq!(
            e(TextureSpec::Noise {
                seed: 1,
                scale_m: 1000.5,
                colors: [A, B]
            }),
            Err("objects[1].texture.noise.scale_m: 1000.5 is outside 0.001..=1000 m".into())
        );
        assert!(e(TextureSpec::Checker {
            size_m: f64::NAN,
            colors: [A, B]
        })
        .is_err());
        assert!(e(TextureSpec::Checker {
            size_m: 0.001,
            colors: [A, B]
        })
        .is_ok());
        assert!(e(TextureSpec::Checker {
            size_m: 1000.0,
            colors: [A, B]
        })
        .is_ok());
        let brick = |w: f64, h: f64, m: f64| TextureSpec::Brick {
            width_m: w,
            height_m: h,
            mortar_m: m,
            colors: [A, B],
        };
        assert!(e(brick(0.4, 0.2, 0.099)).is_ok());
        assert!(e(brick(0.4, 0.2, 0.1)).is_err());
        assert!(e(brick(0.2, 0.4, 0.1)).is_err());
        assert!(e(brick(0.0, 0.2, 0.01))
            .expect_err("width")
            .contains("brick.width_m"));
        assert!(e(brick(0.4, 2000.0, 0.01))
            .expect_err("height")
            .contains("brick.height_m"));
        assert!(e(brick(0.4, 0.2, 0.0))
            .expect_err("mortar")
            .contains("brick.mortar_m"));
        // The defaults are within range.
        assert!(e(TextureSpec::ground()).is_ok() && e(TextureSpec::object()).is_ok());
    }
}
