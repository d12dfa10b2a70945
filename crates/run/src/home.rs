//! `--home LAT,LON,ALT[,HEADING]` and PX4's `PX4_HOME_LAT/LON/ALT`.

use mavsitl_sim::scenario::Home;

/// Parses `LAT,LON,ALT[,HEADING]` (degrees, degrees, metres AMSL, degrees).
pub fn parse_home(s: &str) -> Result<Home, String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if !(3..=4).contains(&parts.len()) {
        return Err(format!("expected LAT,LON,ALT[,HEADING], got '{s}'"));
    }
    let num = |i: usize, what: &str| -> Result<f64, String> {
        let text = parts.get(i).copied().unwrap_or("0");
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("{what} '{text}' is not a number"))
    };
    let home = Home {
        lat_deg: num(0, "latitude")?,
        lon_deg: num(1, "longitude")?,
        alt_m: num(2, "altitude")?,
        heading_deg: if parts.len() == 4 {
            num(3, "heading")?
        } else {
            0.0
        },
    };
    check(&home)?;
    Ok(home)
}

fn check(h: &Home) -> Result<(), String> {
    if !(-90.0..=90.0).contains(&h.lat_deg) {
        return Err(format!(
            "latitude {} is outside -90..=90",
            mavsitl_core::time::show(h.lat_deg)
        ));
    }
    if !(-180.0..=180.0).contains(&h.lon_deg) {
        return Err(format!(
            "longitude {} is outside -180..=180",
            mavsitl_core::time::show(h.lon_deg)
        ));
    }
    if let Some(why) = mavsitl_core::geo::home_alt_problem(h.alt_m) {
        return Err(why);
    }
    Ok(())
}

/// The home to use: `--home` if given, else the scenario's with any of
/// `PX4_HOME_LAT`, `PX4_HOME_LON`, `PX4_HOME_ALT` replacing its fields.
pub fn resolve(
    flag: Option<Home>,
    scenario: Home,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Home, String> {
    if let Some(h) = flag {
        return Ok(h);
    }
    let mut h = scenario;
    for (var, field) in [
        ("PX4_HOME_LAT", &mut h.lat_deg),
        ("PX4_HOME_LON", &mut h.lon_deg),
        ("PX4_HOME_ALT", &mut h.alt_m),
    ] {
        if let Some(text) = env(var) {
            *field = text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("{var}='{text}' is not a number"))?;
        }
    }
    check(&h)?;
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let h = parse_home("47.1, 8.5,500,90").unwrap();
        assert_eq!(
            (h.lat_deg, h.lon_deg, h.alt_m, h.heading_deg),
            (47.1, 8.5, 500.0, 90.0)
        );
        assert_eq!(parse_home("1,2,3").unwrap().heading_deg, 0.0);
        assert!(parse_home("1,2").is_err());
        assert!(parse_home("91,2,3").is_err());
        assert!(parse_home("x,2,3").unwrap_err().contains("latitude 'x'"));
        assert!(parse_home("1,2,NaN").is_err());
    }

    #[test]
    fn px4_env_overrides_scenario_but_not_flag() {
        let env = |k: &str| match k {
            "PX4_HOME_LAT" => Some("10.5".to_string()),
            "PX4_HOME_ALT" => Some("20".to_string()),
            _ => None,
        };
        let base = mavsitl_sim::scenario::DEFAULT_HOME;
        let h = resolve(None, base, env).unwrap();
        assert_eq!((h.lat_deg, h.lon_deg, h.alt_m), (10.5, base.lon_deg, 20.0));
        let flag = parse_home("1,2,3").unwrap();
        assert_eq!(resolve(Some(flag), base, env).unwrap(), flag);
        assert!(resolve(None, base, |_| Some("abc".into())).is_err());
    }
}
