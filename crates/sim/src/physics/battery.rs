//! A LiPo battery pack that drains with the electrical power the vehicle draws.
//!
//! The pack is `cells` LiPo cells in series with an open-circuit voltage that
//! follows a typical LiPo discharge curve over the state of charge, and one
//! internal resistance: terminal voltage = OCV(SoC)·cells − I·R. The load is the
//! electrical power of the propulsion (for rotors, shaft power over the motor
//! and ESC efficiency, see [`crate::physics::Multirotor::shaft_power_w`]; for
//! thrusters [`crate::physics::Boat::electrical_power_w`]) plus a constant
//! avionics current. Charge is integrated exactly per tick (no allocation, no RNG).

use serde::{Deserialize, Serialize};

use super::params::ParamError;

/// Open-circuit cell voltage (V) at state of charge 0, 0.1, …, 1.0: a typical
/// LiPo discharge curve at low C.
const LIPO_OCV_V: [f64; 11] = [
    3.27, 3.61, 3.69, 3.71, 3.73, 3.77, 3.80, 3.84, 3.92, 4.03, 4.20,
];

/// Battery parameters (a scenario vehicle's `battery` object).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BatteryParams {
    /// LiPo cells in series.
    pub cells: u32,
    /// Capacity, mAh.
    pub capacity_mah: f64,
    /// Pack internal resistance, Ω.
    pub internal_resistance_ohm: f64,
    /// Current drawn by everything but propulsion, A.
    pub avionics_current_a: f64,
    /// Motor + ESC efficiency of rotor propulsion (shaft power / electrical
    /// power), 0..1.
    pub propulsion_efficiency: f64,
    /// State of charge at start, 0..1.
    pub initial_charge: f64,
}

impl Default for BatteryParams {
    fn default() -> Self {
        BatteryParams {
            cells: 4,
            capacity_mah: 5000.0,
            internal_resistance_ohm: 0.02,
            avionics_current_a: 0.5,
            propulsion_efficiency: 0.7,
            initial_charge: 1.0,
        }
    }
}

impl BatteryParams {
    /// Checks ranges.
    ///
    /// # Errors
    /// The first field out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        let bad = |field: &'static str, reason: &str| {
            Err(ParamError {
                field: format!("battery.{field}"),
                problem: reason.to_string(),
            })
        };
        if !(1..=24).contains(&self.cells) {
            return bad("cells", "must be 1..24");
        }
        if !(self.capacity_mah.is_finite() && self.capacity_mah > 0.0) {
            return bad("capacity_mah", "must be positive");
        }
        if !(self.internal_resistance_ohm.is_finite() && self.internal_resistance_ohm >= 0.0) {
            return bad("internal_resistance_ohm", "must be ≥ 0");
        }
        if !(self.avionics_current_a.is_finite() && self.avionics_current_a >= 0.0) {
            return bad("avionics_current_a", "must be ≥ 0");
        }
        if !(self.propulsion_efficiency > 0.0 && self.propulsion_efficiency <= 1.0) {
            return bad("propulsion_efficiency", "must be in (0, 1]");
        }
        if !(0.0..=1.0).contains(&self.initial_charge) {
            return bad("initial_charge", "must be in 0..1");
        }
        Ok(())
    }
}

/// What the battery's power module reports.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BatteryState {
    /// Terminal voltage, V.
    pub voltage_v: f64,
    /// Current drawn, A.
    pub current_a: f64,
    /// Charge consumed since start, mAh.
    pub consumed_mah: f64,
    /// Energy consumed since start, J.
    pub consumed_j: f64,
    /// Remaining charge, 0..1.
    pub remaining: f64,
    /// Open-circuit voltage of one cell, V.
    pub cell_ocv_v: f64,
}

/// A battery pack.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Battery {
    params: BatteryParams,
    state: BatteryState,
    /// Capacity multiplier and voltage drop (faults).
    capacity_scale: f64,
    voltage_drop_v: f64,
    /// The state of charge a milliampere-hour is: 1 / (capacity · scale).
    soc_per_mah: f64,
    /// 1 / 2R, 1/Ω (0 without resistance).
    per_2r: f64,
}

/// Milliampere-hours in an ampere-second.
const MAH_PER_AS: f64 = 1.0 / 3.6;

/// 1 / `x` for a positive `x`, at most the largest finite value: a
/// subnormal resistance or capacity (which the checks accept as positive)
/// leaves 0 · inverse at 0, as 0 / x was, not NaN.
fn finite_inverse(x: f64) -> f64 {
    (1.0 / x).min(f64::MAX)
}

/// Open-circuit voltage of one cell at state of charge `soc` (clamped to 0..1), V.
pub fn lipo_cell_ocv_v(soc: f64) -> f64 {
    let x = soc.clamp(0.0, 1.0) * 10.0;
    // (x ≥ 0, so the cast's truncation is the floor, without a libm call.)
    let i = (x as usize).min(9);
    let f = x - i as f64;
    LIPO_OCV_V[i] + f * (LIPO_OCV_V[i + 1] - LIPO_OCV_V[i])
}

impl Battery {
    /// A pack with `params`, charged to `params.initial_charge`.
    pub fn new(params: BatteryParams) -> Self {
        let mut b = Battery {
            params,
            state: BatteryState::default(),
            capacity_scale: 1.0,
            voltage_drop_v: 0.0,
            soc_per_mah: finite_inverse(params.capacity_mah),
            per_2r: match params.internal_resistance_ohm {
                r if r > 0.0 => finite_inverse(2.0 * r),
                _ => 0.0,
            },
        };
        b.state.remaining = params.initial_charge.clamp(0.0, 1.0);
        b.settle(params.avionics_current_a);
        b
    }

    /// Parameters.
    pub fn params(&self) -> &BatteryParams {
        &self.params
    }

    /// The latest state.
    pub fn state(&self) -> &BatteryState {
        &self.state
    }

    /// Applies a fault: the pack holds `capacity_scale` (0, 1] of its capacity
    /// (the charge left shrinks with it, so the state of charge is continuous
    /// and it drains 1/scale times faster), and its terminal voltage is
    /// `voltage_drop_v` lower. (1, 0) is nominal.
    pub fn set_fault(&mut self, capacity_scale: f64, voltage_drop_v: f64) {
        self.capacity_scale = if capacity_scale.is_finite() {
            capacity_scale.clamp(1e-6, 1.0)
        } else {
            1.0
        };
        self.soc_per_mah = finite_inverse(self.params.capacity_mah * self.capacity_scale);
        self.voltage_drop_v = if voltage_drop_v.is_finite() {
            voltage_drop_v.max(0.0)
        } else {
            0.0
        };
    }

    /// Terminal voltage and current for the present charge and a load current.
    fn settle(&mut self, current_a: f64) {
        let p = &self.params;
        let ocv = lipo_cell_ocv_v(self.state.remaining);
        self.state.cell_ocv_v = ocv;
        self.state.current_a = current_a;
        self.state.voltage_v =
            (ocv * p.cells as f64 - current_a * p.internal_resistance_ohm).max(0.0);
    }

    /// Draws `electrical_power_w` for propulsion plus the avionics current for
    /// `dt_s` seconds.
    pub fn step(&mut self, electrical_power_w: f64, dt_s: f64) {
        let p = self.params;
        let electrical = if electrical_power_w.is_finite() {
            electrical_power_w.max(0.0)
        } else {
            0.0
        };
        // The tick's chain runs from the charge through the current back to
        // the charge: its divisions are multiplications by values kept.
        let cell_ocv = lipo_cell_ocv_v(self.state.remaining);
        let ocv_pack = cell_ocv * p.cells as f64;
        // I from P = (OCV − I·R)·I, the smaller root; limited to the pack's
        // maximum-power current OCV / 2R.
        let r = p.internal_resistance_ohm;
        let i_prop = if r > 0.0 {
            let disc = ocv_pack * ocv_pack - 4.0 * r * electrical;
            if disc > 0.0 {
                (ocv_pack - disc.sqrt()) * self.per_2r
            } else {
                ocv_pack * self.per_2r
            }
        } else if ocv_pack > 0.0 {
            electrical / ocv_pack
        } else {
            0.0
        };
        let current = i_prop + p.avionics_current_a;
        self.state.cell_ocv_v = cell_ocv;
        self.state.current_a = current;
        self.state.voltage_v = (ocv_pack - current * r - self.voltage_drop_v).max(0.0);
        self.state.consumed_j += self.state.voltage_v * current * dt_s;
        let used_mah = current * dt_s * MAH_PER_AS;
        self.state.consumed_mah += used_mah;
        self.state.remaining = (self.state.remaining - used_mah * self.soc_per_mah).max(0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ocv_curve_is_monotonic_and_spans_lipo_range() {
        assert!((lipo_cell_ocv_v(1.0) - 4.2).abs() < 1e-12);
        assert!((lipo_cell_ocv_v(0.0) - 3.27).abs() < 1e-12);
        let mut last = 0.0;
        for i in 0..=1000 {
            let v = lipo_cell_ocv_v(i as f64 / 1000.0);
            assert!(v >= last);
            last = v;
        }
    }

    #[test]
    fn charge_integrates_current_exactly() {
        // 10 A for 360 s = 1000 mAh.
        let p = BatteryParams {
            internal_resistance_ohm: 0.0,
            avionics_current_a: 10.0,
            ..BatteryParams::default()
        };
        let mut b = Battery::new(p);
        for _ in 0..360_000 {
            b.step(0.0, 0.001);
        }
        assert!((b.state().consumed_mah - 1000.0).abs() < 1e-6);
        assert!((b.state().remaining - 0.8).abs() < 1e-9);
    }

    #[test]
    fn power_balance_holds_with_internal_resistance() {
        let p = BatteryParams {
            avionics_current_a: 0.0,
            propulsion_efficiency: 1.0,
            ..BatteryParams::default()
        };
        let mut b = Battery::new(p);
        b.step(300.0, 0.001);
        let s = b.state();
        // Terminal power equals the load.
        assert!((s.voltage_v * s.current_a - 300.0).abs() < 1e-6);
        // Sag: V = OCV − I·R.
        let ocv = s.cell_ocv_v * 4.0;
        assert!((ocv - s.current_a * 0.02 - s.voltage_v).abs() < 1e-9);
    }

    /// Asked for more than the pack can give (P > OCV²/4R), it gives its
    /// most: the current OCV / 2R (and the avionics' on top), its terminal
    /// voltage OCV less that current through R.
    #[test]
    fn an_overload_draws_the_packs_maximum_power_current() {
        let p = BatteryParams {
            internal_resistance_ohm: 0.4,
            avionics_current_a: 0.25,
            ..BatteryParams::default()
        };
        let mut b = Battery::new(p);
        // 4 full cells: 16.8 V open, at most 16.8² / (4 · 0.4) = 176 W.
        b.step(500.0, 0.001);
        let s = *b.state();
        let ocv = 4.0 * lipo_cell_ocv_v(1.0);
        assert!(
            (s.current_a - (ocv / (2.0 * 0.4) + 0.25)).abs() < 1e-12,
            "{s:?}"
        );
        assert!(
            (s.voltage_v - (ocv - s.current_a * 0.4)).abs() < 1e-12,
            "{s:?}"
        );
    }

    /// A resistance or capacity so small its inverse overflows (the checks
    /// accept any positive value) leaves the state finite: at rest nothing
    /// is drawn and the charge stays; a real load still drains it.
    #[test]
    fn a_subnormal_resistance_or_capacity_keeps_the_state_finite() {
        for (r, cap) in [(1e-320, 5000.0), (0.02, 1e-320), (1e-320, 1e-320)] {
            let p = BatteryParams {
                internal_resistance_ohm: r,
                capacity_mah: cap,
                avionics_current_a: 0.0,
                ..BatteryParams::default()
            };
            let mut b = Battery::new(p);
            b.step(0.0, 0.001);
            let s = *b.state();
            assert_eq!(
                (s.current_a, s.remaining),
                (0.0, 1.0),
                "{r} Ω, {cap} mAh: {s:?}"
            );
            assert!(s.voltage_v.is_finite() && s.voltage_v > 16.0, "{s:?}");
            b.set_fault(0.5, 0.0);
            b.step(0.0, 0.001);
            assert_eq!(
                b.state().remaining,
                1.0,
                "{r} Ω, {cap} mAh, half the capacity"
            );
        }
        // A drawn current empties the tiny pack at once, without a NaN.
        let p = BatteryParams {
            capacity_mah: 1e-320,
            ..BatteryParams::default()
        };
        let mut b = Battery::new(p);
        b.step(100.0, 0.001);
        assert_eq!(b.state().remaining, 0.0);
        assert!(b.state().current_a > 0.5 && b.state().current_a.is_finite());
    }

    #[test]
    fn every_range_is_checked_at_its_ends_and_names_its_field() {
        type Set = fn(&mut BatteryParams, f64);
        let cases: [(&str, Set, &[f64], &[f64]); 6] = [
            (
                "cells",
                |p, v| p.cells = v as u32,
                &[1.0, 24.0],
                &[0.0, 25.0],
            ),
            (
                "capacity_mah",
                |p, v| p.capacity_mah = v,
                &[1e-3, 5000.0],
                &[0.0, -1.0, f64::NAN, f64::INFINITY],
            ),
            (
                "internal_resistance_ohm",
                |p, v| p.internal_resistance_ohm = v,
                &[0.0, 0.5],
                &[-1e-9, f64::NAN, f64::INFINITY],
            ),
            (
                "avionics_current_a",
                |p, v| p.avionics_current_a = v,
                &[0.0, 2.0],
                &[-1e-9, f64::NAN, f64::INFINITY],
            ),
            (
                "propulsion_efficiency",
                |p, v| p.propulsion_efficiency = v,
                &[1e-3, 1.0],
                &[0.0, 1.0 + 1e-9, f64::NAN],
            ),
            (
                "initial_charge",
                |p, v| p.initial_charge = v,
                &[0.0, 1.0],
                &[-1e-9, 1.0 + 1e-9, f64::NAN],
            ),
        ];
        assert_eq!(BatteryParams::default().validate(), Ok(()));
        let six_cells = BatteryParams {
            cells: 6,
            capacity_mah: 10_000.0,
            ..BatteryParams::default()
        };
        assert_eq!(Battery::new(six_cells).params(), &six_cells);
        // A new pack is settled at its avionics load: 6 cells at half
        // charge, 2 A through 0.05 Ω.
        let half = BatteryParams {
            initial_charge: 0.5,
            avionics_current_a: 2.0,
            internal_resistance_ohm: 0.05,
            ..six_cells
        };
        let s = *Battery::new(half).state();
        assert_eq!(s.cell_ocv_v, lipo_cell_ocv_v(0.5));
        assert_eq!(s.current_a, 2.0);
        assert!((s.voltage_v - (6.0 * lipo_cell_ocv_v(0.5) - 0.1)).abs() < 1e-12);
        for (field, set, good, bad) in cases {
            for &v in good {
                let mut p = BatteryParams::default();
                set(&mut p, v);
                assert_eq!(p.validate(), Ok(()), "{field} = {v}");
            }
            for &v in bad {
                let mut p = BatteryParams::default();
                set(&mut p, v);
                let e = p.validate().expect_err(field);
                assert_eq!(e.field, format!("battery.{field}"), "{field} = {v}");
            }
        }
    }
}
