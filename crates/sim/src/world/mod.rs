//! The environment vehicles move through.
//!
//! Owns gravity, the ISA atmosphere, wind (mean + Dryden turbulence), water
//! current, the flat ground/water surface at the home altitude, and zones. It
//! answers one question per vehicle per tick — "what is the environment here?" —
//! as an [`Environment`] value; it never touches vehicle state.
//!
//! Frames and units: local NED (m), velocities NED (m/s). The ground (and the
//! water surface) is the plane z = 0 through the home point. Altitudes for the
//! atmosphere are the home altitude minus z; the home altitude is above mean
//! sea level, which mavsitl takes as the ellipsoid (see [`mavsitl_core::geo`]).

pub use mavsitl_core::atmosphere;
pub mod gravity;
pub mod wind;
pub mod zones;

use nalgebra::Vector3;

pub use atmosphere::{AirState, IsaCache};
pub use gravity::GravityModel;
pub use wind::{CurrentSpec, Turbulence, TurbulenceSpec, WindSpec};
pub use zones::{ZoneEvent, ZoneShape, ZoneSpec, ZoneTransition, Zones};

use mavsitl_core::geo::LocalFrame;

/// Density of sea water, kg/m³.
pub const SEA_WATER_DENSITY_KG_M3: f64 = 1025.0;

/// The environment at one point and time, as a vehicle's physics sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Environment {
    /// Gravity, NED, m/s² (points down).
    pub gravity_ned_m_s2: Vector3<f64>,
    /// Air pressure, temperature and density at the vehicle.
    pub air: AirState,
    /// Air velocity over ground (mean + gust), NED, m/s.
    pub wind_ned_m_s: Vector3<f64>,
    /// Water velocity over ground, NED, m/s.
    pub current_ned_m_s: Vector3<f64>,
    /// Water density, kg/m³.
    pub water_density_kg_m3: f64,
    /// Ground friction coefficient override from a zone (None: the airframe's own).
    pub ground_friction: Option<f64>,
    /// Multiplier on drag (1 outside zones).
    pub drag_scale: f64,
    /// Whether GPS is denied here.
    pub gps_denied: bool,
    /// The ground's height under the vehicle as NED down, m: the scene's
    /// ground (a heightmap's surface, or its plane), else home's plane, 0.
    pub ground_down_m: f64,
}

/// The static description of the world a scenario builds.
#[derive(Debug, Clone)]
pub struct World {
    frame: LocalFrame,
    gravity: GravityModel,
    wind_ned_m_s: Vector3<f64>,
    current_ned_m_s: Vector3<f64>,
    turbulence: Option<TurbulenceSpec>,
    zones: Zones,
    scene: Option<std::sync::Arc<mavsitl_render::Scene>>,
}

impl World {
    /// A world around `frame`'s origin.
    pub fn new(
        frame: LocalFrame,
        gravity: GravityModel,
        wind: WindSpec,
        current: CurrentSpec,
        turbulence: Option<TurbulenceSpec>,
        zones: Vec<ZoneSpec>,
    ) -> Self {
        World {
            frame,
            gravity,
            wind_ned_m_s: wind.velocity_ned_m_s(),
            current_ned_m_s: current.velocity_ned_m_s(),
            turbulence,
            zones: Zones::new(zones),
            scene: None,
        }
    }

    /// The geometry cameras and LiDARs see (none: nothing to see).
    pub fn scene(&self) -> Option<&mavsitl_render::Scene> {
        self.scene.as_deref()
    }

    /// The ground's height as NED down (m) under (north, east), m: the
    /// scene's ground there, else home's plane (0).
    pub fn ground_down_m(&self, north_m: f64, east_m: f64) -> f64 {
        self.scene
            .as_deref()
            .and_then(|s| s.ground_down_at(north_m, east_m))
            .unwrap_or(0.0)
    }

    /// Sets the geometry cameras and LiDARs see.
    pub fn set_scene(&mut self, scene: mavsitl_render::Scene) {
        self.scene = Some(std::sync::Arc::new(scene));
    }

    /// The geometry, to change (AirSim's `simSetObjectPose`).
    pub fn scene_mut(&mut self) -> Option<&mut mavsitl_render::Scene> {
        self.scene.as_mut().map(std::sync::Arc::make_mut)
    }

    /// A calm world (constant gravity, no wind, no current, no zones) at `frame`.
    pub fn calm(frame: LocalFrame) -> Self {
        World::new(
            frame,
            GravityModel::Constant,
            WindSpec::default(),
            CurrentSpec::default(),
            None,
            Vec::new(),
        )
    }

    /// The local frame (home).
    pub fn frame(&self) -> &LocalFrame {
        &self.frame
    }

    /// Sets the mean wind outside zones (the air's velocity over ground),
    /// NED m/s; turbulence keeps the intensity it was given.
    pub fn set_wind_ned_m_s(&mut self, wind: Vector3<f64>) {
        if wind.iter().all(|v| v.is_finite()) {
            self.wind_ned_m_s = wind;
        }
    }

    /// The zones.
    pub fn zones(&self) -> &Zones {
        &self.zones
    }

    /// Turbulence settings, if enabled, with W₂₀ resolved (m/s).
    pub fn turbulence_w20_m_s(&self) -> Option<f64> {
        self.turbulence
            .map(|t| t.w20_m_s.unwrap_or_else(|| self.wind_ned_m_s.xy().norm()))
    }

    /// The mean wind at a point given the zones it is in, NED m/s.
    pub fn mean_wind_ned_m_s(&self, zone_mask: u64) -> Vector3<f64> {
        self.zones
            .active(zone_mask)
            .filter_map(|z| z.wind)
            .last()
            .map_or(self.wind_ned_m_s, |w| w.velocity_ned_m_s())
    }

    /// The environment at NED position `pos_ned_m`, for a vehicle inside the
    /// zones of `zone_mask`, with turbulence gust `gust_ned_m_s` added to the wind.
    pub fn environment(
        &self,
        pos_ned_m: &Vector3<f64>,
        zone_mask: u64,
        gust_ned_m_s: &Vector3<f64>,
    ) -> Environment {
        self.environment_cached(pos_ned_m, zone_mask, gust_ned_m_s, &mut IsaCache::default())
    }

    /// As [`World::environment`], with the vehicle's own atmosphere cache.
    pub fn environment_cached(
        &self,
        pos_ned_m: &Vector3<f64>,
        zone_mask: u64,
        gust_ned_m_s: &Vector3<f64>,
        air: &mut IsaCache,
    ) -> Environment {
        let home = self.frame.origin();
        let alt_m = home.alt_m - pos_ned_m.z;
        let g = self.gravity.magnitude_m_s2(home.lat_rad, alt_m);
        let mut env = Environment {
            gravity_ned_m_s2: Vector3::new(0.0, 0.0, g),
            air: air.air(alt_m),
            wind_ned_m_s: self.wind_ned_m_s,
            current_ned_m_s: self.current_ned_m_s,
            water_density_kg_m3: SEA_WATER_DENSITY_KG_M3,
            ground_friction: None,
            drag_scale: 1.0,
            gps_denied: false,
            ground_down_m: self.ground_down_m(pos_ned_m.x, pos_ned_m.y),
        };
        if zone_mask != 0 {
            for z in self.zones.active(zone_mask) {
                if let Some(w) = z.wind {
                    env.wind_ned_m_s = w.velocity_ned_m_s();
                }
                if let Some(c) = z.current {
                    env.current_ned_m_s = c.velocity_ned_m_s();
                }
                if let Some(mu) = z.ground_friction {
                    env.ground_friction = Some(mu);
                }
                if let Some(s) = z.drag_scale {
                    env.drag_scale = s;
                }
                if let Some(d) = z.gps_denied {
                    env.gps_denied = d;
                }
            }
        }
        env.wind_ned_m_s += gust_ned_m_s;
        env
    }

    /// The ground's friction coefficient a zone sets at `pos_ned_m` (the
    /// last zone listed that sets one, as for a vehicle's environment), or
    /// None outside every such zone.
    pub fn ground_friction_at(&self, pos_ned_m: &Vector3<f64>) -> Option<f64> {
        let mask = self.zones.membership(pos_ned_m);
        if mask == 0 {
            return None;
        }
        self.zones
            .active(mask)
            .filter_map(|z| z.ground_friction)
            .last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mavsitl_core::geo::GeoPoint;

    #[test]
    fn zone_overrides_and_restores() {
        let zone = ZoneSpec {
            name: "gust".into(),
            shape: ZoneShape::Box {
                min_ned_m: [10.0, -5.0, -50.0],
                max_ned_m: [20.0, 5.0, 0.0],
            },
            wind: Some(WindSpec {
                speed_m_s: 8.0,
                from_deg: 0.0,
                down_m_s: 0.0,
            }),
            current: None,
            ground_friction: Some(0.05),
            drag_scale: Some(2.0),
            gps_denied: Some(true),
        };
        let w = World::new(
            LocalFrame::new(GeoPoint::from_deg(47.0, 8.0, 400.0)),
            GravityModel::Constant,
            WindSpec {
                speed_m_s: 3.0,
                from_deg: 270.0,
                down_m_s: 0.0,
            },
            CurrentSpec::default(),
            None,
            vec![zone],
        );
        let zero = Vector3::zeros();
        let out = Vector3::new(0.0, 0.0, -10.0);
        let inside = Vector3::new(15.0, 0.0, -10.0);
        let e_out = w.environment(&out, w.zones().membership(&out), &zero);
        let e_in = w.environment(&inside, w.zones().membership(&inside), &zero);
        assert!((e_out.wind_ned_m_s - Vector3::new(0.0, 3.0, 0.0)).norm() < 1e-12);
        assert!((e_in.wind_ned_m_s - Vector3::new(-8.0, 0.0, 0.0)).norm() < 1e-12);
        assert_eq!(e_in.ground_friction, Some(0.05));
        assert!(e_in.gps_denied && !e_out.gps_denied);
        assert_eq!((e_in.drag_scale, e_out.drag_scale), (2.0, 1.0));
        // The atmosphere follows altitude: 10 m above a 400 m home.
        assert!((e_out.air.pressure_pa - atmosphere::isa(410.0).pressure_pa).abs() < 1e-9);
    }

    fn zone(name: &str, lo: [f64; 3], hi: [f64; 3]) -> ZoneSpec {
        ZoneSpec {
            name: name.into(),
            shape: ZoneShape::Box {
                min_ned_m: lo,
                max_ned_m: hi,
            },
            wind: None,
            current: None,
            ground_friction: None,
            drag_scale: None,
            gps_denied: None,
        }
    }

    /// Two overlapping zones: the later one in the scenario wins where both
    /// set a thing; a current, a gust, a set wind and the turbulence's
    /// intensity from the mean wind; WGS-84 gravity at the point's height.
    #[test]
    fn overlapping_zones_the_later_wins_and_the_gust_adds_to_the_wind() {
        let calm = |from_deg| WindSpec {
            speed_m_s: 4.0,
            from_deg,
            down_m_s: 0.0,
        };
        let mut a = zone("a", [0.0, 0.0, -2000.0], [20.0, 20.0, 0.0]);
        a.wind = Some(calm(0.0));
        a.current = Some(CurrentSpec {
            speed_m_s: 0.5,
            towards_deg: 90.0,
        });
        a.gps_denied = Some(true);
        let mut b = zone("b", [10.0, 0.0, -2000.0], [30.0, 20.0, 0.0]);
        b.wind = Some(calm(180.0));
        b.gps_denied = Some(false);
        let home = GeoPoint::from_deg(45.0, 8.0, 100.0);
        let mut w = World::new(
            LocalFrame::new(home),
            GravityModel::Wgs84,
            calm(90.0),
            CurrentSpec::default(),
            Some(TurbulenceSpec { w20_m_s: None }),
            vec![a, b],
        );
        let gust = Vector3::new(0.25, -0.5, 0.125);
        let both = Vector3::new(15.0, 5.0, -900.0);
        let mask = w.zones().membership(&both);
        assert_eq!(mask, 0b11);
        let e = w.environment(&both, mask, &gust);
        // b's wind from the south, blowing north, plus the gust.
        assert!((e.wind_ned_m_s - Vector3::new(4.25, -0.5, 0.125)).norm() < 1e-12);
        assert!((w.mean_wind_ned_m_s(mask) - Vector3::new(4.0, 0.0, 0.0)).norm() < 1e-12);
        assert!((e.current_ned_m_s - Vector3::new(0.0, 0.5, 0.0)).norm() < 1e-12);
        assert!(!e.gps_denied);
        assert!(w.environment(&both, 0b01, &gust).gps_denied);
        // 1 000 m above the ellipsoid at 45°.
        let g = GravityModel::Wgs84.magnitude_m_s2(home.lat_rad, 1000.0);
        assert_eq!(e.gravity_ned_m_s2, Vector3::new(0.0, 0.0, g));
        assert!((g - 9.803_11).abs() < 1e-4, "{g}");
        // Outside both, the mean wind (from the east, blowing west).
        assert!((w.mean_wind_ned_m_s(0) - Vector3::new(0.0, -4.0, 0.0)).norm() < 1e-12);
        assert_eq!(w.turbulence_w20_m_s(), Some(4.0));
        w.set_wind_ned_m_s(Vector3::new(3.0, 4.0, 0.0));
        assert_eq!(w.turbulence_w20_m_s(), Some(5.0));
        w.set_wind_ned_m_s(Vector3::new(f64::NAN, 0.0, 0.0));
        assert_eq!(
            w.environment(&Vector3::zeros(), 0, &Vector3::zeros())
                .wind_ned_m_s,
            Vector3::new(3.0, 4.0, 0.0)
        );
    }
}
