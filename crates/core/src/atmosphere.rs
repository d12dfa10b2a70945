//! International Standard Atmosphere (ISO 2533 / ICAO Doc 7488), 0–20 km.
//!
//! Troposphere (geopotential altitude below 11 km): T = T₀ − L·H,
//! p = p₀ (T/T₀)^(g₀M/(R*L)). Tropopause (11–20 km): isothermal at 216.65 K,
//! p = p₁₁ exp(−g₀M(H − 11 km)/(R*T)). Density from the ideal gas law. Geopotential
//! altitude H = r·h/(r + h) with r = 6 356 766 m (the ISA Earth radius).

/// Sea-level standard pressure, Pa.
pub const P0_PA: f64 = 101_325.0;
/// Sea-level standard temperature, K.
pub const T0_K: f64 = 288.15;
/// Sea-level standard density, kg/m³ (the reference for rotor and drag data).
pub const RHO0_KG_M3: f64 = 1.225;
/// Standard gravity, m/s².
pub const G0_M_S2: f64 = 9.806_65;
/// Tropospheric lapse rate, K/m.
const LAPSE_K_M: f64 = 0.0065;
/// Specific gas constant of dry air, J/(kg·K) (R*/M with R* = 8.314 462 618, M = 0.028 964 4).
const R_AIR: f64 = 287.052_87;
/// 0 °C in kelvin.
pub const ZERO_CELSIUS_K: f64 = 273.15;
/// ISA Earth radius for geopotential altitude, m.
const R_EARTH_ISA_M: f64 = 6_356_766.0;
const H_TROPOPAUSE_M: f64 = 11_000.0;
const T_TROPOPAUSE_K: f64 = 216.65;

/// Air state at one altitude.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AirState {
    /// Static pressure, Pa.
    pub pressure_pa: f64,
    /// Static temperature, K.
    pub temperature_k: f64,
    /// Density, kg/m³.
    pub density_kg_m3: f64,
}

/// Geopotential altitude (m) of a geometric altitude above mean sea level (m).
pub fn geopotential_altitude_m(alt_amsl_m: f64) -> f64 {
    R_EARTH_ISA_M * alt_amsl_m / (R_EARTH_ISA_M + alt_amsl_m)
}

/// Density of dry air from the ideal-gas law, kg/m³, for a static pressure in
/// Pa and a temperature in K.
pub fn density_kg_m3(pressure_pa: f64, temperature_k: f64) -> f64 {
    pressure_pa / (R_AIR * temperature_k)
}

/// ISA air state at a geometric altitude above mean sea level (m).
///
/// Valid from −5 km to 20 km; above 20 km the isothermal layer is extended.
pub fn isa(alt_amsl_m: f64) -> AirState {
    let h = geopotential_altitude_m(alt_amsl_m);
    let exponent = G0_M_S2 / (R_AIR * LAPSE_K_M);
    let (t, p) = if h < H_TROPOPAUSE_M {
        let t = T0_K - LAPSE_K_M * h;
        (t, P0_PA * (t / T0_K).powf(exponent))
    } else {
        let p11 = P0_PA * (T_TROPOPAUSE_K / T0_K).powf(exponent);
        (
            T_TROPOPAUSE_K,
            p11 * (-G0_M_S2 * (h - H_TROPOPAUSE_M) / (R_AIR * T_TROPOPAUSE_K)).exp(),
        )
    };
    AirState {
        pressure_pa: p,
        temperature_k: t,
        density_kg_m3: density_kg_m3(p, t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_published_isa_table() {
        // ICAO standard atmosphere table values at geopotential altitudes,
        // converted to geometric altitude.
        let geometric = |hgp: f64| R_EARTH_ISA_M * hgp / (R_EARTH_ISA_M - hgp);
        let cases = [
            (0.0, 101_325.0, 288.15, 1.2250),
            (1000.0, 89_874.6, 281.65, 1.1117),
            (5000.0, 54_019.9, 255.65, 0.73612),
            (11_000.0, 22_632.1, 216.65, 0.36392),
            (15_000.0, 12_044.6, 216.65, 0.19367),
        ];
        for (hgp, p, t, rho) in cases {
            let a = isa(geometric(hgp));
            assert!(
                (a.pressure_pa - p).abs() < 1.0,
                "p at {hgp}: {}",
                a.pressure_pa
            );
            assert!((a.temperature_k - t).abs() < 1e-9);
            assert!(
                (a.density_kg_m3 - rho).abs() < 2e-4,
                "rho at {hgp}: {}",
                a.density_kg_m3
            );
        }
    }

    #[test]
    fn airsim_home_density() {
        // AirSim's default home at 122 m: 99 868 Pa, 1.2107 kg/m³ (airsim-core.md §1.5).
        let a = isa(122.0);
        assert!((a.pressure_pa - 99_868.0).abs() < 5.0);
        assert!((a.density_kg_m3 - 1.2107).abs() < 5e-4);
    }
}

/// Geometric altitude above mean sea level (m) at which the ISA has pressure
/// `pressure_pa` (the inverse of [`isa`], used for pressure altitude).
pub fn isa_altitude_from_pressure_m(pressure_pa: f64) -> f64 {
    let exponent = G0_M_S2 / (R_AIR * LAPSE_K_M);
    let p11 = P0_PA * (T_TROPOPAUSE_K / T0_K).powf(exponent);
    let h = if pressure_pa >= p11 {
        T0_K / LAPSE_K_M * (1.0 - (pressure_pa / P0_PA).powf(1.0 / exponent))
    } else {
        H_TROPOPAUSE_M - R_AIR * T_TROPOPAUSE_K / G0_M_S2 * (pressure_pa / p11).ln()
    };
    R_EARTH_ISA_M * h / (R_EARTH_ISA_M - h)
}

#[cfg(test)]
mod inverse_tests {
    use super::*;

    #[test]
    fn pressure_altitude_inverts_isa() {
        for alt in [-300.0, 0.0, 488.0, 1000.0, 10_999.0, 12_000.0, 19_000.0] {
            let back = isa_altitude_from_pressure_m(isa(alt).pressure_pa);
            assert!((back - alt).abs() < 1e-6, "{alt} -> {back}");
        }
    }
}

/// ISA values for a vehicle that moves little between ticks: exact ISA at the two
/// whole metres around the altitude, linearly interpolated between them. The
/// interpolation error over a 1 m cell is below 3e-9 relative (the ISA's second
/// derivative is ~1/(8 km)²), far below any physical effect, and the cell is
/// recomputed only when the vehicle leaves it, so a tick usually costs two
/// comparisons instead of a `powf`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IsaCache {
    cell_m: f64,
    lo: AirState,
    hi: AirState,
}

impl Default for IsaCache {
    fn default() -> Self {
        IsaCache {
            cell_m: f64::NAN,
            lo: isa(0.0),
            hi: isa(1.0),
        }
    }
}

impl IsaCache {
    /// Whether `alt_amsl_m` lies in the cell held, [bottom, bottom + 1 m).
    fn holds(&self, alt_amsl_m: f64) -> bool {
        self.cell_m <= alt_amsl_m && alt_amsl_m < self.cell_m + 1.0
    }

    /// The air state at `alt_amsl_m`.
    pub fn air(&mut self, alt_amsl_m: f64) -> AirState {
        // Within the cell its floor is the cell's (whole-metre) bottom: the
        // floor, a call into libm on the x86-64 baseline, is taken only on
        // leaving it.
        if !self.holds(alt_amsl_m) {
            let cell = alt_amsl_m.floor();
            self.cell_m = cell;
            self.lo = isa(cell);
            self.hi = isa(cell + 1.0);
        }
        let cell = self.cell_m;
        let f = alt_amsl_m - cell;
        let lerp = |a: f64, b: f64| a + (b - a) * f;
        AirState {
            pressure_pa: lerp(self.lo.pressure_pa, self.hi.pressure_pa),
            temperature_k: lerp(self.lo.temperature_k, self.hi.temperature_k),
            density_kg_m3: lerp(self.lo.density_kg_m3, self.hi.density_kg_m3),
        }
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    /// A cell is its metre, bottom in and top out; none is held at first.
    #[test]
    fn a_cell_holds_its_metre() {
        let mut c = IsaCache::default();
        assert!(!c.holds(0.0) && !c.holds(f64::NAN));
        c.air(12.5);
        assert_eq!(c.cell_m, 12.0);
        let held = [12.0, 12.25, 12.999_999_999];
        let not = [11.999_999_999, 13.0, 13.5, -12.5, 6.0, 24.0];
        assert!(held.iter().all(|&h| c.holds(h)), "{held:?}");
        assert!(not.iter().all(|&h| !c.holds(h)), "{not:?}");
        c.air(-3.5);
        assert_eq!(c.cell_m, -4.0);
        assert!(c.holds(-4.0) && c.holds(-3.01) && !c.holds(-3.0) && !c.holds(-4.01));
    }

    #[test]
    fn cache_matches_isa_closely() {
        let mut c = IsaCache::default();
        // Climbing through 7.5 km, then back and forth within and across
        // cells, and onto whole metres from either side.
        let climb = (0..20_000).map(|k| -50.0 + k as f64 * 0.3771);
        let wander = (0..2_000).map(|k| 100.0 + 0.7 * (k as f64 * 0.9).sin() * (k % 7) as f64);
        let whole = [5.0, 4.999_999, 5.0, 6.0, 5.000_001, 5.0, -3.0, -2.5, -3.0];
        for h in climb.chain(wander).chain(whole) {
            let (a, b) = (c.air(h), isa(h));
            for (got, want) in [
                (a.density_kg_m3, b.density_kg_m3),
                (a.pressure_pa, b.pressure_pa),
                (a.temperature_k, b.temperature_k),
            ] {
                let err = (got / want - 1.0).abs();
                assert!(err < 3e-9, "{h} m: {got} against {want}");
            }
        }
    }
}
