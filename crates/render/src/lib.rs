//! A geometric world for cameras and LiDARs, without a game engine.
//!
//! - [`scene`]: a ground plane and named boxes, cylinders and spheres, each
//!   with a segmentation id and a [`texture`], checked at load and held in
//!   a bounding-volume hierarchy (dimforge's parry3d) for ray casts against
//!   each [`primitive`]'s closed form.
//! - [`camera`]: a pinhole camera, one ray per pixel, bands of tiles in
//!   parallel: scene colour, planar and perspective depth, segmentation;
//!   each tile's rays cast as a [`bundle`] against the primitives its cone
//!   may meet.
//! - [`lidar`]: AirSim's spinning LiDAR, fired over the sim time its points
//!   take.
//! - [`palette`]: AirSim's segmentation colours; [`image`]: PNG encoding.
//!
//! Frames are the world's: NED metres from home; a camera's or LiDAR's
//! axes are x forward, y right, z down. Nothing here reads a clock or a
//! random source: the same scene and poses give the same pixels and points.

pub mod bundle;
pub mod camera;
pub mod image;
pub mod lidar;
pub mod palette;
pub mod primitive;
pub mod scene;
pub mod terrain;
pub mod texture;

pub use scene::{Scene, SceneSpec};

/// A scene that cannot be built: the key and what is wrong with it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SceneError {
    /// A value out of its range.
    #[error("{key}: {value} is outside {range}")]
    Range {
        /// The key, e.g. `objects[2].shape.box.size_m[0]`.
        key: String,
        /// The value given.
        value: String,
        /// The range allowed.
        range: String,
    },
    /// A name empty or too long.
    #[error("{key}: \"{name}\" must be 1 to 64 bytes")]
    Name {
        /// The key.
        key: String,
        /// The name given.
        name: String,
    },
    /// A file named in the scene that cannot be read.
    #[error("{key}: {message}")]
    File {
        /// The key naming the file.
        key: String,
        /// What is wrong, with the file's name (and line).
        message: String,
    },
    /// A name given twice.
    #[error("{key}: \"{name}\" names an earlier object too")]
    Duplicate {
        /// The key.
        key: String,
        /// The name.
        name: String,
    },
}
